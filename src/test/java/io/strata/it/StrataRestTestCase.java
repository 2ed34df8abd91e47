package io.strata.it;

import ai.djl.huggingface.tokenizers.HuggingFaceTokenizer;
import io.strata.chunking.TestTexts;
import org.opensearch.client.Request;
import org.opensearch.client.WarningsHandler;
import org.opensearch.client.RequestOptions;
import org.opensearch.client.Response;
import org.opensearch.client.ResponseException;
import org.opensearch.common.xcontent.XContentFactory;
import org.opensearch.core.common.bytes.BytesReference;
import org.opensearch.core.xcontent.XContentBuilder;
import org.opensearch.test.rest.OpenSearchRestTestCase;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Integration tests talk REST to the real cluster that {@code bin/strata-test} starts with
 * {@code bin/strata-node} (address in {@code tests.rest.cluster}), with JSON a user would write.
 */
public abstract class StrataRestTestCase extends OpenSearchRestTestCase {
    /**
     * A bundled model's tokenizer.json as the node reads it — never truncating or padding (newInstance would keep its
     * truncation at 512 tokens): the token-count oracle of the ITs.
     */
    protected static HuggingFaceTokenizer modelTokenizer(String model) throws IOException {
        return HuggingFaceTokenizer.builder()
            .optTokenizerPath(Path.of(System.getProperty("strata.models.dir", "target/models"), model, model + "-tokenizer.json"))
            .optTruncation(false)
            .optPadding(false)
            .build();
    }


    /**
     * Two answers to the same question, alike except for floating-point scores, which may differ in their last bits:
     * Lucene's vectorised cosine sums lanes in an order that differs before and after the JIT compiles it (a cold node's
     * first searches), so one vector's score can move by an ulp, and the fused scores and shares built on it a little more.
     * Maps and lists must match exactly in shape, keys, strings and integers; floats within {@code 1e-5} relative.
     */
    protected static void assertSameAnswer(String message, Object expected, Object actual) {
        if (expected instanceof Map<?, ?> e && actual instanceof Map<?, ?> a) {
            assertEquals(message + " keys", e.keySet(), a.keySet());
            for (Object key : e.keySet()) {
                assertSameAnswer(message + "." + key, e.get(key), a.get(key));
            }
        } else if (expected instanceof List<?> e && actual instanceof List<?> a) {
            assertEquals(message + " size: " + a, e.size(), a.size());
            for (int i = 0; i < e.size(); i++) {
                assertSameAnswer(message + "[" + i + "]", e.get(i), a.get(i));
            }
        } else if ((expected instanceof Float || expected instanceof Double) && (actual instanceof Float || actual instanceof Double)) {
            double x = ((Number) expected).doubleValue();
            assertEquals(message, x, ((Number) actual).doubleValue(), 1e-5 * Math.max(1, Math.abs(x)));
        } else {
            assertEquals(message, expected, actual);
        }
    }

    /** Performs a request with an optional JSON body and returns the parsed response. */
    protected static Map<String, Object> call(String method, String path, String body) throws IOException {
        Request request = new Request(method, path);
        if (body != null) {
            request.setJsonEntity(body);
        }
        Response response = client().performRequest(request);
        return entityAsMap(response);
    }

    /**
     * {@code POST <path>} for {@code _update}: OpenSearch warns, once per node, that updates of an index naming a default
     * or final pipeline run that pipeline (a chunk index names {@code _none}); the warning is expected.
     */
    protected static void update(String path, String body) throws IOException {
        Request request = new Request("POST", path);
        request.setJsonEntity(body);
        RequestOptions.Builder options = RequestOptions.DEFAULT.toBuilder();
        options.setWarningsHandler(WarningsHandler.PERMISSIVE);
        request.setOptions(options);
        client().performRequest(request);
    }

    protected static Map<String, Object> call(String method, String path) throws IOException {
        return call(method, path, null);
    }

    /** Performs a request that must fail; returns the error response. */
    protected static ResponseException callFailing(String method, String path, String body) {
        Request request = new Request(method, path);
        if (body != null) {
            request.setJsonEntity(body);
        }
        return expectThrows(ResponseException.class, () -> client().performRequest(request));
    }

    /**
     * A Markdown page whose 40-row table, chunked at θ 60, is split into pieces that each repeat the header row (stored
     * before the piece's own rows, while the header sits once in the source): row {@code i} reads {@code fruit<i> |
     * valley<i>}.
     */
    protected static String orchardTable() {
        StringBuilder md = new StringBuilder("# Orchard\n\nWhich fruit grows in which valley.\n\n| fruit | valley | note |\n|---|---|---|\n");
        for (int i = 0; i < 40; i++) {
            md.append("| fruit").append(i).append(" | valley").append(i).append(" | sweet and ripe in the summer of year ").append(i)
                .append(" |\n");
        }
        return md.append("\nThat is every fruit of the orchard.\n").toString();
    }

    protected static String json(Map<String, ?> map) {
        try {
            XContentBuilder builder = XContentFactory.jsonBuilder().map(map);
            return BytesReference.bytes(builder).utf8ToString();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    protected static void putPipeline(String name, String processorJson) throws IOException {
        call("PUT", "/_ingest/pipeline/" + name, "{\"processors\": [{\"multi_granular_chunking\": " + processorJson + "}]}");
    }

    /** Bulk-indexes {@code docs} (id → source) through {@code pipeline}; returns the response. */
    protected static Map<String, Object> bulk(String index, String pipeline, Map<String, Map<String, Object>> docs) throws IOException {
        StringBuilder body = new StringBuilder();
        for (var e : docs.entrySet()) {
            body.append(json(Map.of("index", Map.of("_index", index, "_id", e.getKey())))).append('\n');
            body.append(json(e.getValue())).append('\n');
        }
        Request request = new Request("POST", "/_bulk?pipeline=" + pipeline + "&refresh=true");
        request.setJsonEntity(body.toString());
        return entityAsMap(client().performRequest(request));
    }

    protected static void refresh(String index) throws IOException {
        call("POST", "/" + index + "/_refresh");
    }

    @SuppressWarnings("unchecked")
    protected static List<Map<String, Object>> chunksOf(String chunkIndex, String sourceId) throws IOException {
        refresh(chunkIndex);
        Map<String, Object> r = call("POST", "/" + chunkIndex + "/_search", """
            {"size": 1000, "_source": true, "query": {"term": {"source_id": "%s"}}, "sort": [{"ordinal": "asc"}]}
            """.formatted(sourceId));
        List<Map<String, Object>> out = new ArrayList<>();
        for (Object hit : (List<Object>) ((Map<String, Object>) r.get("hits")).get("hits")) {
            out.add((Map<String, Object>) ((Map<String, Object>) hit).get("_source"));
        }
        return out;
    }

    /**
     * The oracle of what a pipeline writes: what {@code _chunk} cuts from {@code text} with {@code strategy} and
     * {@code granularities} (null: the default), per parent its ordinal, text, offsets and children (level, text, offsets).
     */
    @SuppressWarnings("unchecked")
    protected static List<Object> cutByChunkApi(String text, Map<String, Object> strategy, List<Double> granularities)
        throws IOException {
        Map<String, Object> body = new java.util.LinkedHashMap<>(Map.of("text", text, "strategy", strategy));
        if (granularities != null) {
            body.put("granularities", granularities);
        }
        Map<String, Object> r = call("POST", "/_plugins/_strata/_chunk", json(body));
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

    /**
     * Every stored document of {@code source} has, in chunk index (or alias) {@code chunks}, exactly the chunks {@code _chunk}
     * cuts from its {@code field} with {@code strategy} and {@code granularities}, and {@code chunks} holds no others (no
     * chunks of deleted documents).
     */
    @SuppressWarnings("unchecked")
    protected static void assertChunksMatchChunkApi(String source, String field, String chunks, Map<String, Object> strategy,
                                                    List<Double> granularities) throws IOException {
        refresh(source);
        Map<String, Object> all = call("POST", "/" + source + "/_search", "{\"size\": 2000, \"query\": {\"match_all\": {}}}");
        List<Map<String, Object>> hits = (List<Map<String, Object>>) ((Map<String, Object>) all.get("hits")).get("hits");
        int parents = 0;
        for (Map<String, Object> hit : hits) {
            String text = (String) ((Map<String, Object>) hit.get("_source")).get(field);
            List<Object> expected = cutByChunkApi(text, strategy, granularities);
            parents += expected.size();
            assertEquals("chunks of " + hit.get("_id"), expected, chunkShape(chunksOf(chunks, (String) hit.get("_id"))));
        }
        assertEquals("no chunks of deleted documents", parents, count(chunks));
    }

    /** Chunk documents in the form of {@link #cutByChunkApi} (the parent's own level-0 vector entry left out). */
    @SuppressWarnings("unchecked")
    protected static List<Object> chunkShape(List<Map<String, Object>> chunks) {
        List<Object> out = new ArrayList<>();
        for (Map<String, Object> c : chunks) {
            List<Object> children = new ArrayList<>();
            for (Map<String, Object> child : (List<Map<String, Object>>) c.get("children")) {
                if (((Number) child.get("level")).intValue() == 0) {
                    continue; // the parent's own vector entry
                }
                children.add(List.of(child.get("level"), child.get("text"), child.get("start"), child.get("end")));
            }
            out.add(List.of(c.get("ordinal"), c.get("text"), c.get("start"), c.get("end"), children));
        }
        return out;
    }

    @SuppressWarnings("unchecked")
    protected static int count(String index) throws IOException {
        refresh(index);
        return ((Number) call("GET", "/" + index + "/_count").get("count")).intValue();
    }

    /** The bundled chapters of Emma, split into chapters: title → text. */
    protected static Map<String, String> emmaChapters() {
        String emma = TestTexts.emma();
        Map<String, String> chapters = new java.util.LinkedHashMap<>();
        String[] parts = emma.split("(?m)(?=^(?:VOLUME [IVX]+\\. )?CHAPTER [IVX]+$)");
        for (String part : parts) {
            String title = part.substring(0, part.indexOf('\n')).strip();
            chapters.put(title, part.substring(part.indexOf('\n')).strip());
        }
        return chapters;
    }
}
