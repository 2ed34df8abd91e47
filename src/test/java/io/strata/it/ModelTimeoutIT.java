package io.strata.it;

import org.opensearch.client.ResponseException;

import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A hanging ml-commons model (issue 7). The stand-in's test-only switch {@code standin.hang_models} makes the predict
 * action never answer for a model id, as a stuck remote connector would. With {@code plugins.strata.inference.remote_timeout}
 * lowered at runtime, each affected document must fail after the timeout, not hang the bulk, with 504 and a reason naming
 * the model id and the timeout; nothing is half-written; the failures are counted as model failures; and the same bulk
 * succeeds once the model answers again.
 */
@SuppressWarnings("unchecked")
public class ModelTimeoutIT extends StrataRestTestCase {
    private static final String MODEL_ID = "standin-embed";
    private static final String SRC = "timeout-src";
    private static final String CHUNKS = "timeout-chunks";

    private static void settings(String timeout, boolean hang) throws IOException {
        call("PUT", "/_cluster/settings", "{\"persistent\": {\"plugins.strata.inference.remote_timeout\": "
            + (timeout == null ? "null" : "\"" + timeout + "\"") + ", \"standin.hang_models\": "
            + (hang ? "[\"" + MODEL_ID + "\"]" : "null") + "}}");
    }

    private static List<Map<String, Object>> items(Map<String, Object> bulk) {
        return ((List<Map<String, Object>>) bulk.get("items")).stream().map(i -> (Map<String, Object>) i.get("index")).toList();
    }

    private static Map<String, Object> source(String id) throws IOException {
        return (Map<String, Object>) call("GET", "/" + SRC + "/_doc/" + id).get("_source");
    }

    public void testHangingModel_failsEachItemWith504AfterTheTimeout_writesNothing_andRecovers() throws Exception {
        putPipeline("timeout", "{\"field\": \"body\", \"target_index\": \"" + CHUNKS + "\", \"model_id\": \"" + MODEL_ID + "\", "
            + "\"strategy\": {\"type\": \"recursive\", \"max_words\": 80}}");
        String emma = String.join("\n\n", emmaChapters().values());
        // two bulks in a row: the REST client round-robins, so both nodes have used (and described) the model
        for (int i = 0; i < 2; i++) {
            Map<String, Object> doc = Map.of("body", emma.substring(3000 * i, 3000 * i + 1500));
            assertEquals(false, bulk(SRC, "timeout", Map.of("ok-" + i, doc)).get("errors"));
        }
        Map<String, Map<String, Object>> docs = new LinkedHashMap<>();
        for (int i = 0; i < 3; i++) {
            docs.put("hung-" + i, Map.of("body", emma.substring(8000 + 4000 * i, 8000 + 4000 * i + 1200 + 200 * i)));
        }
        int chunkCount = count(CHUNKS);

        Map<String, Long> before = ClusterStats.summed();
        settings("2s", true);
        try {
            long start = System.nanoTime();
            Map<String, Object> bulk = bulk(SRC, "timeout", docs);
            long tookMillis = (System.nanoTime() - start) / 1_000_000;
            logger.info("bulk of {} documents against a hanging model, remote_timeout 2s: answered in {} ms", docs.size(), tookMillis);
            assertTrue("waited for the timeout: " + tookMillis, tookMillis >= 2000);
            assertTrue("did not hang: " + tookMillis, tookMillis < 30_000);
            assertEquals(true, bulk.get("errors"));
            List<Map<String, Object>> items = items(bulk);
            assertEquals(docs.size(), items.size());
            for (Map<String, Object> item : items) {
                assertEquals(item.toString(), 504, item.get("status"));
                String reason = (String) ((Map<String, Object>) item.get("error")).get("reason");
                assertTrue(item.toString(), reason.contains("[model_id] [" + MODEL_ID + "] ml-commons did not answer within [2s]"));
                assertTrue(item.toString(), reason.contains("[plugins.strata.inference.remote_timeout]"));
            }
            for (String id : docs.keySet()) {
                ResponseException e = callFailing("GET", "/" + SRC + "/_doc/" + id, null);
                assertEquals(404, e.getResponse().getStatusLine().getStatusCode());
                assertEquals(id, List.of(), chunksOf(CHUNKS, id));
            }
            assertEquals(chunkCount, count(CHUNKS));
            Map<String, Long> after = ClusterStats.summed();
            assertEquals("one model failure per item", docs.size(), ClusterStats.delta(before, after, "ingest.failures.model"));
            assertEquals(0, ClusterStats.delta(before, after, "ingest.failures.other"));
            assertTrue("the timed-out calls count as errors of the model: " + after,
                ClusterStats.delta(before, after, "inference.models." + MODEL_ID + ".errors") >= docs.size());
        } finally {
            settings(null, false);
        }

        // the model answers again: the same bulk succeeds with exactly the chunks of each document
        Map<String, Object> retry = bulk(SRC, "timeout", docs);
        assertEquals(retry.toString(), false, retry.get("errors"));
        int parents = 0;
        for (String id : List.of("ok-0", "ok-1")) {
            parents += ((Number) ((Map<String, Object>) source(id).get("strata")).get("parents")).intValue();
        }
        for (String id : docs.keySet()) {
            Map<String, Object> source = source(id);
            assertEquals(docs.get(id).get("body"), source.get("body"));
            int n = ((Number) ((Map<String, Object>) source.get("strata")).get("parents")).intValue();
            List<Map<String, Object>> chunks = chunksOf(CHUNKS, id);
            assertEquals(id, n, chunks.size());
            for (Map<String, Object> c : chunks) {
                assertEquals(384, ((List<Object>) c.get("embedding")).size());
            }
            parents += n;
        }
        assertEquals(parents, count(CHUNKS));
    }

    public void testHangingRemoteLlm_failsTheModelGuidedStrategyWith504_andRecovers() throws Exception {
        String body = json(Map.of("text", "The cat sat. The cat ran away! Dogs bark", "strategy",
            Map.of("type", "logits_guided", "max_words", 300, "remainder_words", 0, "llm_model_id", "standin-llm")));
        call("PUT", "/_cluster/settings",
            "{\"persistent\": {\"plugins.strata.inference.remote_timeout\": \"1s\", \"standin.hang_models\": [\"standin-llm\"]}}");
        try {
            long start = System.nanoTime();
            ResponseException e = callFailing("POST", "/_plugins/_strata/_chunk", body);
            long tookMillis = (System.nanoTime() - start) / 1_000_000;
            assertEquals(e.getMessage(), 504, e.getResponse().getStatusLine().getStatusCode());
            assertTrue(e.getMessage(), e.getMessage().contains("[model_id] [standin-llm] ml-commons did not answer within [1s]"));
            assertTrue("waited for the timeout, did not hang: " + tookMillis, tookMillis >= 1000 && tookMillis < 30_000);
        } finally {
            call("PUT", "/_cluster/settings",
                "{\"persistent\": {\"plugins.strata.inference.remote_timeout\": null, \"standin.hang_models\": null}}");
        }
        List<Object> parents = (List<Object>) call("POST", "/_plugins/_strata/_chunk", body).get("parents");
        assertFalse(parents.isEmpty());
    }

    public void testRemoteTimeout_invalidValue_isRefusedWith400() {
        ResponseException e = callFailing("PUT", "/_cluster/settings",
            "{\"transient\": {\"plugins.strata.inference.remote_timeout\": \"10ms\"}}");
        assertEquals(400, e.getResponse().getStatusLine().getStatusCode());
        assertTrue(e.getMessage(), e.getMessage().contains("plugins.strata.inference.remote_timeout"));
    }
}
