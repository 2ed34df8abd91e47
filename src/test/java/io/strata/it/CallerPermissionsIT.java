package io.strata.it;

import org.opensearch.client.Request;
import org.opensearch.client.RequestOptions;
import org.opensearch.client.Response;
import org.opensearch.client.ResponseException;

import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Chunk writes carry the caller's permissions. The cluster's test-only stand-in plugin (test-plugins/ml-standin,
 * {@code StandinSecurityFilter}) acts as the security plugin: a request header {@code standin-deny-write: <index>} makes
 * every write to that index (bulk shard, index, delete, create index, put mapping) fail with 403, and
 * {@code standin-deny-read} every read. The header lives in the caller's thread context only: a chunk write that ran in
 * another context (stashed, a model layer's, the system's) would not carry it and would get through — so each test
 * asserts both the 403 and that nothing was written, along the paths that hop threads (embedding on the inference pool,
 * model-guided chunking, an ml-commons model over the transport layer, the delete after a source delete, {@code _reconcile}).
 */
@SuppressWarnings("unchecked")
public class CallerPermissionsIT extends StrataRestTestCase {
    private static final String DENY_WRITE = "standin-deny-write";
    private static final String DENY_READ = "standin-deny-read";

    private static String text(String variant) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < 8; i++) {
            b.append("In the ").append(variant).append(" version, sentence ").append(i)
                .append(" tells how Emma walked from Hartfield to Highbury and talked with Harriet about the weather. ");
            if (i % 3 == 2) {
                b.append("\n\n");
            }
        }
        return b.toString().strip();
    }

    /** A request with the stand-in's permission headers; answers the response whatever its status. */
    private static Response perform(String method, String path, String body, String header, String deniedIndex) throws IOException {
        Request request = new Request(method, path);
        if (body != null) {
            request.setJsonEntity(body);
        }
        if (header != null) {
            request.setOptions(RequestOptions.DEFAULT.toBuilder().addHeader(header, deniedIndex));
        }
        try {
            return client().performRequest(request);
        } catch (ResponseException e) {
            return e.getResponse();
        }
    }

    private static Map<String, Object> bulkAs(String header, String deniedIndex, String index, String pipeline,
                                              Map<String, String> bodies) throws IOException {
        StringBuilder body = new StringBuilder();
        for (var e : bodies.entrySet()) {
            body.append(json(Map.of("index", Map.of("_index", index, "_id", e.getKey())))).append('\n');
            body.append(json(Map.of("body", e.getValue()))).append('\n');
        }
        Response response = perform("POST", "/_bulk?pipeline=" + pipeline + "&refresh=true", body.toString(), header, deniedIndex);
        assertEquals(200, response.getStatusLine().getStatusCode());
        return entityAsMap(response);
    }

    private static boolean exists(String path) throws IOException {
        return perform("HEAD", path, null, null, null).getStatusLine().getStatusCode() == 200;
    }

    /** Every item failed with 403, and its reason names {@code index}. */
    private static void assertDenied(Map<String, Object> bulk, String index) {
        assertEquals(bulk.toString(), true, bulk.get("errors"));
        for (Object item : (List<Object>) bulk.get("items")) {
            Map<String, Object> result = (Map<String, Object>) ((Map<String, Object>) item).get("index");
            assertEquals(item.toString(), 403, result.get("status"));
            String reason = String.valueOf(((Map<String, Object>) result.get("error")).get("reason"));
            assertTrue(item.toString(), reason.contains("[" + index + "]"));
        }
    }

    /** What must not change when a write is refused: each chunk's ordinal, text and source hash. */
    private static List<Object> shape(List<Map<String, Object>> chunks) {
        return chunks.stream().map(c -> (Object) List.of(c.get("ordinal"), c.get("text"), String.valueOf(c.get("source_hash")))).toList();
    }

    public void testIngest_whenTheCallerMayNotWriteTheChunkIndex_eachItemFails403AndNothingIsWritten() throws Exception {
        // one pipeline per path that leaves the write thread before the chunks are written
        Map<String, String> pipelines = new LinkedHashMap<>();
        pipelines.put("perm-embedded", "\"strategy\": {\"type\": \"recursive\", \"max_words\": 30}"); // embeds on strata_inference
        pipelines.put("perm-semantic", "\"strategy\": {\"type\": \"semantic\", \"max_words\": 40}"); // chunks and embeds there
        pipelines.put("perm-lm", "\"strategy\": {\"type\": \"logits_guided\", \"max_words\": 40, \"llm\": \"strata-tiny-gpt\"}, "
            + "\"embed\": false"); // a causal LM forward pass per window
        pipelines.put("perm-remote", "\"strategy\": {\"type\": \"recursive\", \"max_words\": 30}, \"model_id\": \"standin-bge\"");
        for (var p : pipelines.entrySet()) {
            String source = p.getKey() + "-src";
            String chunks = p.getKey() + "-chunks";
            putPipeline(p.getKey(), "{\"field\": \"body\", \"target_index\": \"" + chunks + "\", " + p.getValue() + "}");

            // the chunk index does not exist yet: the caller may not create it either
            assertDenied(bulkAs(DENY_WRITE, chunks, source, p.getKey(), Map.of("a", text("first"))), chunks);
            assertFalse(p.getKey() + ": no chunk index", exists("/" + chunks));
            assertFalse(p.getKey() + ": no source document", exists("/" + source + "/_doc/a"));

            // the same bulk without the header is written
            Map<String, Object> allowed = bulkAs(null, null, source, p.getKey(), Map.of("a", text("first")));
            assertEquals(p.getKey() + ": " + allowed, false, allowed.get("errors"));
            List<Map<String, Object>> before = chunksOf(chunks, "a");
            assertTrue(p.getKey() + ": " + before.size() + " chunks", before.size() >= 2);

            // the chunk index exists: a new document and a re-ingest of "a" are refused at the chunk write
            assertDenied(bulkAs(DENY_WRITE, chunks, source, p.getKey(), Map.of("a", text("second"), "b", text("third"))), chunks);
            assertFalse(p.getKey() + ": b not stored", exists("/" + source + "/_doc/b"));
            assertEquals(p.getKey() + ": no chunks of b", List.of(), chunksOf(chunks, "b"));
            assertEquals(p.getKey() + ": the chunks of a are those of its stored text", shape(before), shape(chunksOf(chunks, "a")));
            Map<String, Object> stored = (Map<String, Object>) call("GET", "/" + source + "/_doc/a").get("_source");
            assertEquals(text("first"), stored.get("body"));

            // a header naming another index changes nothing
            Map<String, Object> other = bulkAs(DENY_WRITE, "some-other-index", source, p.getKey(), Map.of("b", text("third")));
            assertEquals(p.getKey() + ": " + other, false, other.get("errors"));
            assertFalse(chunksOf(chunks, "b").isEmpty());
        }
    }

    public void testDelete_whenTheCallerMayNotDeleteChunks_answers403AndReconcileRunsWithTheCallersPermissions() throws Exception {
        String source = "perm-del-src";
        String chunks = "perm-del-chunks";
        putPipeline("perm-del", "{\"field\": \"body\", \"target_index\": \"" + chunks + "\", \"embed\": false, "
            + "\"strategy\": {\"type\": \"recursive\", \"max_words\": 30}}");
        assertEquals(false, bulkAs(null, null, source, "perm-del", Map.of("a", text("first"), "b", text("second"))).get("errors"));
        int chunksOfA = chunksOf(chunks, "a").size();
        int chunksOfB = chunksOf(chunks, "b").size();
        assertTrue(chunksOfA >= 2);

        // the source document is deleted (the caller may), its chunks may not be: no silent success, the item says so
        Response delete = perform("DELETE", "/" + source + "/_doc/a?refresh=true", null, DENY_WRITE, chunks);
        assertEquals(403, delete.getStatusLine().getStatusCode());
        String error = entityAsMap(delete).toString();
        assertTrue(error, error.contains("[" + source + "][a] was deleted, but deleting its chunks from [" + chunks + "] failed"));
        assertTrue(error, error.contains("no permissions for [indices:data/write/bulk[s]] on index [" + chunks + "]"));
        assertFalse(exists("/" + source + "/_doc/a"));
        assertEquals("the chunks remain", chunksOfA, chunksOf(chunks, "a").size());

        // the same in a bulk: that item fails, the others are unaffected
        Response bulkDelete = perform("POST", "/_bulk?refresh=true", json(Map.of("delete", Map.of("_index", source, "_id", "b"))) + "\n",
            DENY_WRITE, chunks);
        Map<String, Object> item = (Map<String, Object>) ((Map<String, Object>) ((List<Object>) entityAsMap(bulkDelete).get("items"))
            .get(0)).get("delete");
        assertEquals(item.toString(), 403, item.get("status"));
        assertEquals(chunksOfB, chunksOf(chunks, "b").size());

        // a document whose chunk is missing, for the rewrite path of _reconcile
        assertEquals(false, bulkAs(null, null, source, "perm-del", Map.of("c", text("third"))).get("errors"));
        call("DELETE", "/" + chunks + "/_doc/c:0?refresh=true");
        String path = "/_plugins/_strata/_reconcile?index=" + source;
        Map<String, Object> dry = call("POST", path + "&dry_run=true");
        assertEquals(dry.toString(), chunksOfA + chunksOfB, dry.get("orphans"));
        assertEquals(dry.toString(), 1, dry.get("missing"));

        // _reconcile under the restriction: every fix is refused with 403, nothing is written as the system
        Response refused = perform("POST", path, null, DENY_WRITE, chunks);
        Map<String, Object> report = entityAsMap(refused);
        assertEquals(report.toString(), 403, refused.getStatusLine().getStatusCode());
        assertEquals(report.toString(), 0, report.get("fixed"));
        List<Map<String, Object>> failures = (List<Map<String, Object>>) report.get("failures");
        assertEquals(report.toString(), chunksOfA + chunksOfB + 1, failures.size());
        for (Map<String, Object> f : failures) {
            assertEquals(f.toString(), 403, f.get("status"));
            assertTrue(f.toString(), String.valueOf(f.get("reason")).contains(chunks));
        }
        assertEquals("nothing changed", dry, withTook(call("POST", path + "&dry_run=true"), dry));

        // reads go through the caller's permissions too
        Response unreadable = perform("POST", path + "&dry_run=true", null, DENY_READ, chunks);
        assertEquals(403, unreadable.getStatusLine().getStatusCode());

        // a caller who may write fixes it
        Map<String, Object> fixed = call("POST", path);
        assertEquals(fixed.toString(), chunksOfA + chunksOfB + 1, fixed.get("fixed"));
        assertEquals(List.of(), chunksOf(chunks, "a"));
        assertEquals(List.of(), chunksOf(chunks, "b"));
        assertFalse(chunksOf(chunks, "c").isEmpty());
        Map<String, Object> clean = call("POST", path + "&dry_run=true");
        assertEquals(clean.toString(), 0, clean.get("orphans"));
        assertEquals(clean.toString(), 0, clean.get("missing"));
    }

    private static Map<String, Object> withTook(Map<String, Object> r, Map<String, Object> like) {
        Map<String, Object> out = new LinkedHashMap<>(r);
        out.put("took_ms", like.get("took_ms"));
        return out;
    }
}
