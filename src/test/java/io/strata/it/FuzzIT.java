package io.strata.it;

import org.opensearch.client.Request;
import org.opensearch.client.Response;
import org.opensearch.client.ResponseException;
import org.opensearch.common.xcontent.XContentFactory;
import org.opensearch.core.common.bytes.BytesReference;
import org.opensearch.core.xcontent.XContentBuilder;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Random and garbage input for every user-facing parser — processor configs, the {@code multi_granular} query and
 * {@code _chunk} preview bodies — answers 4xx (or 2xx when the input happens to be valid), never 5xx, and the node
 * stays up. Inputs come from the test framework's seeded randomness: {@code -Dtests.seed=…} replays a failure.
 * Each input is either a valid request mutated in one or two places (to reach deep parser branches) or free junk.
 */
public class FuzzIT extends StrataRestTestCase {
    private static final int CASES_PER_PARSER = 400;
    /** Cases for the smaller surfaces: {@code _embed} bodies and {@code _reconcile} parameters. */
    private static final int CASES_PER_ENDPOINT = 100;
    private static final String CHUNKS = "fuzz-chunks";

    private final List<String> serverErrors = new ArrayList<>();

    public void testGarbageInput_neverAnswers5xx() throws Exception {
        // a real chunk index with vectors for the query cases
        putPipeline("fuzz-setup", "{\"field\": \"body\", \"target_index\": \"" + CHUNKS + "\", "
            + "\"strategy\": {\"type\": \"recursive\", \"max_words\": 20}}");
        call("PUT", "/fuzz-src/_doc/1?pipeline=fuzz-setup&refresh=true",
            json(Map.of("body", "Emma Woodhouse, handsome, clever, and rich, with a comfortable home and happy disposition, "
                + "seemed to unite some of the best blessings of existence. She had lived nearly twenty-one years.")));
        refresh(CHUNKS);

        long start = System.nanoTime();
        int cases = 0;
        for (int i = 0; i < CASES_PER_PARSER; i++, cases++) {
            send("PUT", "/_ingest/pipeline/fuzz-x", pipelineBody());
        }
        for (int i = 0; i < CASES_PER_PARSER; i++, cases++) {
            send("POST", "/" + CHUNKS + "/_search", queryBody());
        }
        for (int i = 0; i < CASES_PER_PARSER; i++, cases++) {
            send("POST", "/_plugins/_strata/_chunk", previewBody());
        }
        for (int i = 0; i < CASES_PER_ENDPOINT; i++, cases++) {
            send("POST", "/_plugins/_strata/_embed", embedBody());
        }
        // the strata_context response processor: its config inline or as a named pipeline, its options per request in ext
        for (int i = 0; i < CASES_PER_PARSER; i++, cases++) {
            if (randomInt(3) == 0) {
                send("PUT", "/_search/pipeline/fuzz-ctx", "{\"response_processors\": [{\"strata_context\": "
                    + literal(contextConfig()) + "}]}");
            } else {
                send("POST", "/" + CHUNKS + "/_search", contextSearchBody());
            }
        }
        for (int i = 0; i < CASES_PER_ENDPOINT; i++, cases++) {
            String index = randomFrom("", "fuzz-src", CHUNKS, "no-such", "*", "fuzz-*", "_all", "a,b", "%20", "%E2%9C%93",
                randomAlphaOfLengthBetween(1, 300).toLowerCase(java.util.Locale.ROOT));
            String dryRun = randomFrom("true", "1", "yes", "maybe", "", "%00");
            send("POST", "/_plugins/_strata/_reconcile?index=" + index + "&dry_run=" + dryRun, randomBoolean() ? null : literal(junk(2)));
        }
        long tookMs = (System.nanoTime() - start) / 1_000_000;
        logger.info("fuzzed {} cases in {} ms, {} server errors", cases, tookMs, serverErrors.size());

        Map<String, Object> health = call("GET", "/_cluster/health");
        assertTrue("cluster health " + health.get("status"), List.of("green", "yellow").contains(health.get("status")));
        assertEquals(2, health.get("number_of_nodes"));
        assertTrue("5xx answers (" + serverErrors.size() + "):\n" + String.join("\n", serverErrors.subList(0, Math.min(20,
            serverErrors.size()))), serverErrors.isEmpty());
        call("DELETE", "/_ingest/pipeline/fuzz-*"); // fuzz-x exists only if the last case happened to be valid
        answer("DELETE", "/_search/pipeline/fuzz-ctx", null); // as fuzz-x: maybe never created (a 404 then)
    }

    /**
     * Sends one case and records a 5xx, or no answer at all. A case that got no answer is sent once more before it counts:
     * CI once ended here on "Connection is closed", and 300 seeds of this test (420,000 cases) saw it 10 times, each a
     * RequestNotExecutedException — the client's pool had leased a connection already closed and never sent the request
     * (40,000 such requests on one keep-alive connection from another client: the node closed none). An input that made
     * the node drop the connection would drop it again and is recorded with its body.
     */
    private void send(String method, String path, String body) {
        String answer = answer(method, path, body);
        if (answer != null && answer.startsWith("no answer")) {
            logger.warn("{} to {} {} {}: sending it again", answer, method, path, body);
            answer = answer(method, path, body);
        }
        if (answer != null) {
            serverErrors.add(answer + " " + method + " " + path + " " + body);
        }
    }

    /** Null for a 2xx–4xx answer; else what came back (the status and message, or "no answer" and the exception). */
    private static String answer(String method, String path, String body) {
        Request request = new Request(method, path);
        if (body != null) {
            request.setJsonEntity(body);
        }
        try {
            Response response = client().performRequest(request);
            int status = response.getStatusLine().getStatusCode();
            return status >= 500 || status < 200 ? String.valueOf(status) : null;
        } catch (ResponseException e) {
            int status = e.getResponse().getStatusLine().getStatusCode();
            return status >= 500 || status < 200 ? status + " (" + e.getMessage() + ")" : null;
        } catch (IOException e) {
            return "no answer (" + e + ")";
        }
    }

    // ---- bodies

    private String pipelineBody() {
        Map<String, Object> config = new LinkedHashMap<>();
        config.put("field", "body");
        config.put("target_index", "fuzz-target");
        config.put("strategy", validStrategy());
        config.put("granularities", List.of(0.5, 0.25));
        if (randomBoolean()) {
            config.put("copy_fields", List.of("title"));
        }
        if (randomBoolean()) {
            config.put("max_chars", randomIntBetween(1, 100_000));
        }
        config.put(randomFrom("embed", "ignore_missing"), randomBoolean());
        switch (randomInt(5)) {
            case 0 -> config.put("format", randomFrom("text", "markdown", "html"));
            case 1 -> config.put("children", Map.of("embedding", randomFrom("late", "separate")));
            case 2 -> config.put("context", Map.of("fields", List.of("title"), "lexical", randomBoolean()));
            default -> { }
        }
        Object processor = rarely() ? junk(3) : mutate(config, List.of("field", "target_index", "strategy", "granularities",
            "copy_fields", "ignore_missing", "max_chars", "model", "model_id", "embed", "format", "children", "context"));
        String inner = rarely() ? literal(junk(3)) : literal(processor);
        return switch (randomInt(9)) {
            // OpenSearch's own pipeline parser answers 500 (ClassCastException) to a non-object in "processors"
            // (e.g. {"processors": [1]}): upstream, outside Strata, so junk stays inside processor objects here
            case 0 -> "{\"processors\": [{\"multi_granular_chunking\": " + inner + ", " + literal(randomKey()) + ": "
                + literal(junk(2)) + "}]}";
            case 1 -> truncate("{\"processors\": [{\"multi_granular_chunking\": " + inner + "}]}");
            default -> "{\"processors\": [{\"multi_granular_chunking\": " + inner + "}]}";
        };
    }

    private String queryBody() {
        Map<String, Object> query = new LinkedHashMap<>();
        switch (randomInt(2)) {
            case 0 -> query.put("query_text", randomText());
            case 1 -> query.put("match", randomText());
            default -> query.put("vector", randomVector());
        }
        if (randomBoolean()) {
            query.put("k", randomIntBetween(1, 20));
        }
        if (randomBoolean()) {
            query.put("levels", randomBoolean() ? List.of(0, 1) : List.of(0));
        }
        if (randomBoolean()) {
            query.put("explain_child", randomBoolean());
        }
        if (rarely()) {
            query.put("filter", Map.of("term", Map.of("source_id", "1")));
        }
        if (randomBoolean()) {
            query.put("evidence", Map.of("chunks", randomIntBetween(0, 25), "sentences", randomIntBetween(0, 12)));
        }
        if (query.containsKey("query_text") && randomBoolean()) {
            query.put("mode", randomFrom("hybrid", "dense", "lexical"));
        }
        if (query.containsKey("query_text") && !"dense".equals(query.get("mode")) && !"lexical".equals(query.get("mode")) && randomBoolean()) {
            Map<String, Object> fusion = new LinkedHashMap<>();
            if (randomBoolean()) {
                fusion.put("method", randomFrom("min_max", "rrf"));
            }
            if (randomBoolean()) {
                fusion.put("dense_weight", randomDouble());
            }
            if (randomBoolean()) {
                fusion.put("window", randomIntBetween(20, 200));
            }
            query.put("fusion", fusion);
        }
        Object mg = rarely() ? junk(3) : mutate(query, List.of("query_text", "vector", "match", "k", "levels", "filter",
            "explain_child", "model", "model_id", "boost", "_name", "mode", "fusion", "evidence", "num_candidates"));
        String body = "{\"size\": " + randomIntBetween(0, 5) + ", \"query\": {\"multi_granular\": " + literal(mg) + "}}";
        return randomInt(9) == 0 ? truncate(body) : body;
    }

    /** Options of {@code strata_context}, valid ones mutated (or junk). */
    private Object contextOptions() {
        Map<String, Object> options = new LinkedHashMap<>();
        if (randomBoolean()) {
            options.put("budget", randomIntBetween(1, 2000));
        }
        if (randomBoolean()) {
            options.put("order", randomFrom("rank", "document"));
        }
        if (randomBoolean()) {
            options.put("separator", randomFrom("\n\n", " ", ""));
        }
        if (randomBoolean()) {
            options.put("neighbours", randomBoolean());
        }
        if (randomBoolean()) {
            options.put("seeds", randomFrom("chunk", "evidence"));
        }
        if (rarely()) {
            options.put("tokenizer", randomFrom("e5-small-v2-q", "bge-small-en-v15-q", "no-such"));
        }
        return rarely() ? junk(3) : mutate(options, List.of("budget", "order", "separator", "neighbours", "seeds", "tokenizer"));
    }

    /**
     * Options as a processor's config: an object. OpenSearch's search pipeline parser casts every processor's config to a
     * map before any factory sees it, so a non-object (e.g. {@code {"strata_context": "x"}}) is a 500 ClassCastException
     * upstream, outside Strata, for every processor type; junk stays inside the object here (in {@code ext} the options are
     * Strata's to parse, junk and all).
     */
    private Object contextConfig() {
        Object options = contextOptions();
        return options instanceof Map<?, ?> ? options
            : java.util.Collections.singletonMap(randomFrom("budget", "order", "seeds", randomKey()), options);
    }

    /** A search through {@code strata_context}: the options inline, or in {@code ext} beside an inline processor. */
    private String contextSearchBody() {
        String query = "{\"multi_granular\": {\"" + randomFrom("query_text", "match") + "\": " + literal(randomText())
            + ", \"k\": " + randomIntBetween(1, 5) + (randomBoolean() ? ", \"explain_child\": true" : "")
            + (randomBoolean() ? ", \"evidence\": {\"chunks\": 3, \"sentences\": " + randomIntBetween(0, 3) + "}" : "") + "}}";
        String size = "\"size\": " + randomIntBetween(0, 5) + (randomBoolean() ? ", \"from\": " + randomIntBetween(0, 3) : "");
        String body = randomBoolean()
            ? "{" + size + ", \"query\": " + query + ", \"search_pipeline\": {\"response_processors\": [{\"strata_context\": "
                + literal(contextConfig()) + "}]}}"
            : "{" + size + ", \"query\": " + query + ", \"search_pipeline\": {\"response_processors\": [{\"strata_context\": {}}]}, "
                + "\"ext\": {\"strata_context\": " + literal(contextOptions()) + "}}";
        return randomInt(9) == 0 ? truncate(body) : body;
    }

    private String previewBody() {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("text", randomText());
        body.put("strategy", validStrategy());
        body.put("granularities", randomBoolean() ? List.of(0.5) : List.of(0.5, 0.25));
        Object preview = rarely() ? junk(3) : mutate(body, List.of("text", "strategy", "granularities", "model", "model_id"));
        String json = literal(preview);
        return randomInt(9) == 0 ? truncate(json) : json;
    }

    private String embedBody() {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("texts", List.of(randomText()));
        body.put("purpose", randomFrom("query", "passage"));
        Object embed = rarely() ? junk(3) : mutate(body, List.of("texts", "purpose", "model", "model_id"));
        return literal(embed);
    }

    private Map<String, Object> validStrategy() {
        Map<String, Object> strategy = new LinkedHashMap<>();
        strategy.put("type", randomFrom("recursive", "sentence", "paragraph"));
        strategy.put("max_words", randomIntBetween(1, 400));
        return strategy;
    }

    // ---- mutation and junk

    /** One to three random edits of a valid object: replace, drop or add keys, also one level down. */
    private Object mutate(Map<String, Object> valid, List<String> knownKeys) {
        Map<String, Object> out = new LinkedHashMap<>(valid);
        int edits = randomIntBetween(1, 3);
        for (int i = 0; i < edits; i++) {
            switch (randomInt(4)) {
                case 0 -> out.put(randomFrom(knownKeys), junk(2));
                case 1 -> {
                    if (!out.isEmpty()) {
                        out.remove(randomFrom(new ArrayList<>(out.keySet())));
                    }
                }
                case 2 -> out.put(randomKey(), junk(2));
                case 3 -> {
                    // inside a nested object (the strategy): junk values, unknown keys, wrong types
                    Map<String, Object> nested = new LinkedHashMap<>(validStrategy());
                    nested.put(randomFrom("type", "max_words", "sentences", "threshold", randomKey()), junk(2));
                    out.put(randomFrom("strategy", "filter", randomFrom(knownKeys)), nested);
                }
                default -> out.put(randomFrom(knownKeys), null);
            }
        }
        return out;
    }

    /** A random JSON value; numbers are raw literals so they can be out of every Java range. */
    private Object junk(int depth) {
        int pick = randomInt(depth <= 0 ? 6 : 8);
        return switch (pick) {
            case 0 -> null;
            case 1 -> randomBoolean();
            case 2 -> new RawNumber(randomFrom("0", "-0", "-1", "1", "2147483648", "-2147483649", "9223372036854775808",
                "1e400", "-1e400", "1e-400", "3.5", "0.000001", "99999999999999999999999999999",
                Integer.toString(randomInt()), Long.toString(randomLong()), Double.toString(randomDouble() * 1e6)));
            case 3, 4 -> randomFrom("", "recursive", "sentence", "paragraph", "semantic", "body", "title", "_id", "NaN", "-1",
                "bge-small-en-v15-q", "../../etc/passwd", "..", "fuzz-chunks", "a".repeat(randomIntBetween(1, 5000)), randomText());
            case 5 -> randomBoolean() ? randomInt() : randomDouble();
            case 6 -> new RawNumber(Double.toString(randomDouble() * (randomBoolean() ? 1e300 : 1)));
            case 7 -> {
                List<Object> list = new ArrayList<>();
                for (int i = randomInt(4); i > 0; i--) {
                    list.add(junk(depth - 1));
                }
                yield list;
            }
            default -> {
                Map<String, Object> map = new LinkedHashMap<>();
                for (int i = randomInt(4); i > 0; i--) {
                    map.put(randomBoolean() ? randomKey() : randomFrom("type", "max_words", "query_text", "vector", "k", "levels",
                        "text", "strategy", "field"), junk(depth - 1));
                }
                yield map;
            }
        };
    }

    private String randomKey() {
        return randomFrom(randomAlphaOfLengthBetween(1, 12), randomRealisticUnicodeOfLengthBetween(1, 10), "", "_source", "a.b",
            "multi_granular", "\u0000", "\uD83D\uDE00");
    }

    private String randomText() {
        return switch (randomInt(4)) {
            case 0 -> randomRealisticUnicodeOfLengthBetween(1, 300);
            case 1 -> randomUnicodeOfLengthBetween(1, 200);
            case 2 -> " \n\t ";
            default -> String.join(". ", randomArray(1, 20, String[]::new, () -> randomAlphaOfLengthBetween(1, 12))) + ".";
        };
    }

    private Object randomVector() {
        int dims = randomFrom(0, 1, 3, 384, 385);
        List<Object> v = new ArrayList<>(dims);
        for (int i = 0; i < dims; i++) {
            v.add(rarely() ? junk(0) : (float) randomDouble());
        }
        return v;
    }

    private String truncate(String json) {
        return json.substring(0, randomIntBetween(0, json.length() - 1));
    }

    // ---- JSON with raw number literals

    private record RawNumber(String literal) {}

    private static String literal(Object value) {
        if (value instanceof RawNumber n) {
            return n.literal();
        }
        if (value instanceof Map<?, ?> map) {
            StringBuilder b = new StringBuilder("{");
            for (var e : map.entrySet()) {
                if (b.length() > 1) {
                    b.append(',');
                }
                b.append(string(String.valueOf(e.getKey()))).append(':').append(literal(e.getValue()));
            }
            return b.append('}').toString();
        }
        if (value instanceof List<?> list) {
            StringBuilder b = new StringBuilder("[");
            for (Object o : list) {
                if (b.length() > 1) {
                    b.append(',');
                }
                b.append(literal(o));
            }
            return b.append(']').toString();
        }
        if (value instanceof String s) {
            return string(s);
        }
        return String.valueOf(value);
    }

    private static String string(String s) {
        try {
            XContentBuilder b = XContentFactory.jsonBuilder().value(s);
            return new String(BytesReference.toBytes(BytesReference.bytes(b)), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
