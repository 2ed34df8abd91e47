package io.strata.chaos;

import org.opensearch.client.Request;
import org.opensearch.client.Response;
import org.opensearch.client.ResponseException;
import org.opensearch.client.RestClient;
import org.opensearch.common.xcontent.XContentHelper;
import org.opensearch.core.common.bytes.BytesArray;
import org.opensearch.core.xcontent.MediaTypeRegistry;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The checks after each hostile document ({@link HostileDocuments}), against a running cluster: the document goes to
 * {@code _chunk} and through a {@code multi_granular_chunking} pipeline with its {@code format}; each answer must be a 2xx, or a 4xx whose message names a limit, within {@link #MAX_MS}; after
 * each the cluster answers its health with every node; a stored document's chunk documents must equal {@code _chunk} of
 * its stored text (parents and children: text and offsets), and a refused one must have neither a stored source nor a
 * chunk document. Shared by {@code HostileDocumentsIT} and {@code bin/strata-chaos hostile}.
 */
public final class HostileChecks {
    /** The stated bound on every answer, on a 2-core node. */
    public static final long MAX_MS = 30_000;
    /** What a refusal names: the nesting setting, the processor's {@code max_chars}, {@code _chunk}'s text limit, XContent's. */
    public static final List<String> LIMITS = List.of("[plugins.strata.chunking.max_nesting_depth]", "[max_chars]",
        "the preview limit", "opensearch.xcontent", "nesting depth");
    /** {@code _chunk}'s text limit: a stored text above it has no oracle (scales above 1). */
    static final int PREVIEW_CHARS = 1_000_000;
    private static final String STRATEGY = "{\"type\": \"recursive\", \"max_words\": 300}";

    /** One request's answer: status, parsed body (null when not JSON), time taken. */
    public record Answer(int status, Map<String, Object> body, String raw, long ms) {
        public boolean ok() {
            return status >= 200 && status < 300;
        }

        public String error() {
            return raw.length() > 600 ? raw.substring(0, 600) + "…" : raw;
        }
    }

    /** What one document did: the two answers' statuses and times, and what went wrong (empty: nothing). */
    public record Outcome(HostileDocuments.Doc doc, int chunkStatus, long chunkMs, int pipelineStatus, long pipelineMs,
                          int chunkDocuments, List<String> problems) {
        @Override
        public String toString() {
            return String.format(Locale.ROOT, "%-28s %-8s %,10d chars  _chunk %d in %,6d ms  pipeline %d in %,6d ms  %4d chunk docs%s",
                doc.name(), doc.format(), doc.chars(), chunkStatus, chunkMs, pipelineStatus, pipelineMs, chunkDocuments,
                problems.isEmpty() ? "" : "  PROBLEMS: " + problems);
        }
    }

    private final RestClient client;
    private final String prefix;
    private final boolean embed;
    private int nodes;

    /**
     * @param prefix names this run's pipelines and indices ({@code <prefix>-<format>}, {@code <prefix>-<format>-chunks})
     * @param embed  whether the pipelines embed the chunks: without, the same chunk documents (a pipeline with
     *               {@code embed: false} still keeps every chunk within the default model's token limit, as {@code _chunk}
     *               does) at a fraction of the time, since 10^5 words are ~2,300 chunks to embed
     */
    public HostileChecks(RestClient client, String prefix, boolean embed) {
        this.client = client;
        this.prefix = prefix;
        this.embed = embed;
    }

    /** Creates one pipeline per format and notes how many nodes the cluster has. */
    public void setUp() throws IOException {
        for (String format : HostileDocuments.FORMATS) {
            Answer a = send("PUT", "/_ingest/pipeline/" + prefix + "-" + format, "{\"processors\": [{\"multi_granular_chunking\": "
                + "{\"field\": \"body\", \"target_index\": \"" + prefix + "-" + format + "-chunks\", \"format\": \"" + format
                + "\", \"strategy\": " + STRATEGY + (embed ? "" : ", \"embed\": false") + "}}]}");
            if (!a.ok()) {
                throw new IllegalStateException("pipeline for " + format + ": " + a.error());
            }
        }
        nodes = nodes();
    }

    /** Sends {@code doc} (as {@code id}) to {@code _chunk} and through its format's pipeline, and checks what came of it. */
    @SuppressWarnings("unchecked")
    public Outcome check(HostileDocuments.Doc doc, String id) throws IOException {
        List<String> problems = new ArrayList<>();
        String format = doc.format();
        Answer chunk = send("POST", "/_plugins/_strata/_chunk", chunkBody(doc.json(), format));
        judge("_chunk", chunk, problems);
        up("after _chunk", problems);
        String source = prefix + "-" + format;
        String target = source + "-chunks";
        Answer put = send("PUT", "/" + source + "/_doc/" + id + "?pipeline=" + source + "&refresh=true", "{\"body\": " + doc.json() + "}");
        judge("pipeline", put, problems);
        up("after the pipeline", problems);
        int chunkDocuments = 0;
        if (put.ok()) {
            Answer stored = send("GET", "/" + source + "/_doc/" + id, null);
            Object text = stored.ok() ? ((Map<String, Object>) stored.body().get("_source")).get("body") : null;
            if (!(text instanceof String s)) {
                problems.add("the stored document has no text: " + stored.error());
            } else {
                List<Object> actual = chunkShape(chunkDocuments(target, id));
                chunkDocuments = actual.size();
                String storedJson = HostileDocuments.jsonString(s);
                // the stored text is the one sent (to the character) for every document: its _chunk is the first answer
                Answer oracle = s.length() > PREVIEW_CHARS ? null : storedJson.equals(doc.json()) ? chunk
                    : send("POST", "/_plugins/_strata/_chunk", chunkBody(storedJson, format));
                if (oracle == null) {
                    if (chunkDocuments == 0) {
                        problems.add("stored without chunk documents"); // above _chunk's limit: no oracle, but chunks there must be
                    }
                } else if (!oracle.ok()) {
                    problems.add("stored, but _chunk of its stored text answers " + oracle.status() + ": " + oracle.error());
                } else {
                    List<Object> expected = chunkApiShape(oracle.body());
                    if (!expected.equals(actual)) {
                        problems.add(String.format(Locale.ROOT, "chunk documents differ from _chunk of the stored text: %d parents "
                            + "expected, %d stored%s", expected.size(), actual.size(), firstDifference(expected, actual)));
                    }
                }
            }
        } else {
            Answer stored = send("GET", "/" + source + "/_doc/" + id, null);
            if (stored.status() != 404) {
                problems.add("refused, yet GET of the source answers " + stored.status());
            }
            chunkDocuments = exists(target) ? chunkDocuments(target, id).size() : 0;
            if (chunkDocuments != 0) {
                problems.add("refused, yet " + chunkDocuments + " chunk documents exist");
            }
        }
        return new Outcome(doc, chunk.status(), chunk.ms(), put.status(), put.ms(), chunkDocuments, problems);
    }

    private static String chunkBody(String jsonText, String format) {
        return "{\"text\": " + jsonText + ", \"format\": \"" + format + "\", \"strategy\": " + STRATEGY + "}";
    }

    private static void judge(String via, Answer a, List<String> problems) {
        if (a.ms() > MAX_MS) {
            problems.add(String.format(Locale.ROOT, "%s took %,d ms, more than %,d", via, a.ms(), MAX_MS));
        }
        if (a.ok()) {
            return;
        }
        if (a.status() >= 400 && a.status() < 500 && LIMITS.stream().anyMatch(a.raw()::contains)) {
            return;
        }
        problems.add(via + " answered " + a.status() + " without naming a limit: " + a.error());
    }

    private void up(String when, List<String> problems) {
        try {
            int n = nodes();
            if (n != nodes) {
                problems.add(String.format(Locale.ROOT, "%s the cluster has %d nodes, not %d", when, n, nodes));
            }
        } catch (IOException e) {
            problems.add(when + " the cluster's health does not answer: " + e);
        }
    }

    private int nodes() throws IOException {
        Answer health = send("GET", "/_cluster/health?timeout=10s", null);
        return ((Number) health.body().get("number_of_nodes")).intValue();
    }

    private boolean exists(String index) throws IOException {
        return send("HEAD", "/" + index, null).status() == 200;
    }

    @SuppressWarnings("unchecked")
    private List<Map<String, Object>> chunkDocuments(String chunkIndex, String sourceId) throws IOException {
        send("POST", "/" + chunkIndex + "/_refresh", null);
        // the children's texts are compared: asked for, since a search that says nothing of _source leaves them out
        Answer r = send("POST", "/" + chunkIndex + "/_search", "{\"size\": 10000, \"_source\": {\"excludes\": [\"embedding\", "
            + "\"children.embedding\"]}, \"query\": {\"term\": {\"source_id\": "
            + HostileDocuments.jsonString(sourceId) + "}}, \"sort\": [{\"ordinal\": \"asc\"}]}");
        if (!r.ok()) {
            throw new IOException("search of " + chunkIndex + ": " + r.error());
        }
        List<Map<String, Object>> out = new ArrayList<>();
        for (Object hit : (List<Object>) ((Map<String, Object>) r.body().get("hits")).get("hits")) {
            out.add((Map<String, Object>) ((Map<String, Object>) hit).get("_source"));
        }
        return out;
    }

    /** {@code _chunk}'s parents as (ordinal, text, start, end, children as (level, text, start, end)). */
    @SuppressWarnings("unchecked")
    static List<Object> chunkApiShape(Map<String, Object> r) {
        List<Object> out = new ArrayList<>();
        int ordinal = 0;
        for (Map<String, Object> p : (List<Map<String, Object>>) r.get("parents")) {
            List<Object> children = new ArrayList<>();
            for (Map<String, Object> c : (List<Map<String, Object>>) p.get("children")) {
                children.add(List.of(c.get("level"), c.get("text"), c.get("start"), c.get("end")));
            }
            out.add(List.of(ordinal++, p.get("text"), p.get("start"), p.get("end"), children));
        }
        return out;
    }

    /** Chunk documents in the form of {@link #chunkApiShape} (the parent's own level-0 vector entry left out). */
    @SuppressWarnings("unchecked")
    static List<Object> chunkShape(List<Map<String, Object>> chunks) {
        List<Object> out = new ArrayList<>();
        for (Map<String, Object> c : chunks) {
            List<Object> children = new ArrayList<>();
            for (Map<String, Object> child : (List<Map<String, Object>>) c.get("children")) {
                if (((Number) child.get("level")).intValue() == 0) {
                    continue;
                }
                children.add(List.of(child.get("level"), child.get("text"), child.get("start"), child.get("end")));
            }
            out.add(List.of(c.get("ordinal"), c.get("text"), c.get("start"), c.get("end"), children));
        }
        return out;
    }

    private static String firstDifference(List<Object> expected, List<Object> actual) {
        for (int i = 0; i < Math.min(expected.size(), actual.size()); i++) {
            if (!expected.get(i).equals(actual.get(i))) {
                String e = String.valueOf(expected.get(i));
                String a = String.valueOf(actual.get(i));
                return String.format(Locale.ROOT, "; parent %d: expected %s, stored %s", i, e.substring(0, Math.min(300, e.length())),
                    a.substring(0, Math.min(300, a.length())));
            }
        }
        return "";
    }

    /** Any answer, 4xx and 5xx included, with its time. */
    public Answer send(String method, String path, String body) throws IOException {
        Request request = new Request(method, path);
        if (body != null) {
            request.setJsonEntity(body);
        }
        long start = System.nanoTime();
        Response response;
        try {
            response = client.performRequest(request);
        } catch (ResponseException e) {
            response = e.getResponse();
        }
        long ms = (System.nanoTime() - start) / 1_000_000;
        byte[] bytes = response.getEntity() == null ? new byte[0] : response.getEntity().getContent().readAllBytes();
        String raw = new String(bytes, java.nio.charset.StandardCharsets.UTF_8);
        Map<String, Object> parsed = null;
        if (bytes.length > 0) {
            try {
                parsed = XContentHelper.convertToMap(new BytesArray(bytes), true, MediaTypeRegistry.JSON).v2();
            } catch (RuntimeException notJson) {
                parsed = null;
            }
        }
        return new Answer(response.getStatusLine().getStatusCode(), parsed, raw, ms);
    }
}
