package io.strata.it;

import org.opensearch.client.ResponseException;

import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The ml-commons model behind a pipeline goes away mid-ingest and comes back (issue 7). The outage is the test-only
 * switch of the ml-commons stand-in ({@code standin.down_models}, a dynamic cluster setting, so every node's predict
 * action sees it): while down, predict fails as ml-commons does for a model deployed on no node. Affected documents
 * must fail one by one with an error naming the model id, with nothing half-written (neither the source document nor
 * any chunk document), earlier chunks untouched, and the same bulk must succeed once the model is back.
 */
@SuppressWarnings("unchecked")
public class ModelOutageIT extends StrataRestTestCase {
    private static final String MODEL_ID = "standin-embed";
    private static final String SRC = "outage-src";
    private static final String CHUNKS = "outage-chunks";

    private static void setDown(boolean down) throws IOException {
        call("PUT", "/_cluster/settings", "{\"persistent\": {\"standin.down_models\": " + (down ? "[\"" + MODEL_ID + "\"]" : "null")
            + "}}");
    }

    /** {@code ingest.failures.model} summed over the nodes (counters are per node). */
    private static long modelFailures() throws IOException {
        Map<String, Object> r = call("GET", "/_plugins/_strata/stats");
        long sum = 0;
        for (Object node : ((Map<String, Object>) r.get("nodes")).values()) {
            Map<String, Object> failures = (Map<String, Object>) ((Map<String, Object>) ((Map<String, Object>) node).get("ingest"))
                .get("failures");
            sum += ((Number) failures.get("model")).longValue();
        }
        return sum;
    }

    private static Map<String, Map<String, Object>> docs(String prefix, List<String> texts) {
        Map<String, Map<String, Object>> docs = new LinkedHashMap<>();
        for (int i = 0; i < texts.size(); i++) {
            docs.put(prefix + i, Map.of("body", texts.get(i)));
        }
        return docs;
    }

    private static List<Map<String, Object>> items(Map<String, Object> bulk) {
        return ((List<Map<String, Object>>) bulk.get("items")).stream().map(i -> (Map<String, Object>) i.get("index")).toList();
    }

    private static void assertAllFailOnTheModel(Map<String, Object> bulk, int expected) {
        assertEquals(bulk.toString(), true, bulk.get("errors"));
        List<Map<String, Object>> items = items(bulk);
        assertEquals(expected, items.size());
        for (Map<String, Object> item : items) {
            // 503, not ml-commons' 400: the model is not serving right now, a client should back off and retry
            assertEquals(item.toString(), 503, item.get("status"));
            String reason = (String) ((Map<String, Object>) item.get("error")).get("reason");
            assertTrue(item.toString(), reason.contains("[model_id] [" + MODEL_ID + "] is not deployed in ml-commons"));
            assertTrue(item.toString(), reason.contains("Model not ready yet"));
        }
    }

    private static Map<String, Object> source(String id) throws IOException {
        return (Map<String, Object>) call("GET", "/" + SRC + "/_doc/" + id).get("_source");
    }

    public void testModelOutage_failsEachItemWritesNothing_andIngestRecovers() throws Exception {
        putPipeline("outage", "{\"field\": \"body\", \"target_index\": \"" + CHUNKS + "\", \"model_id\": \"" + MODEL_ID + "\", "
            + "\"strategy\": {\"type\": \"recursive\", \"max_words\": 80}}");
        // seven distinct passages of the bundled Emma chapters
        String emma = String.join("\n\n", emmaChapters().values());
        List<String> texts = java.util.stream.IntStream.range(0, 7).mapToObj(i -> emma.substring(i * 4000, i * 4000 + 1500 + 300 * i))
            .toList();
        Map<String, Map<String, Object>> before = docs("ok-", texts.subList(0, 3));
        Map<String, Map<String, Object>> during = docs("down-", texts.subList(3, 6));
        Map<String, Map<String, Object>> edited = Map.of("ok-0", Map.of("body", texts.get(6)));

        assertEquals(false, bulk(SRC, "outage", before).get("errors"));
        Map<String, List<Map<String, Object>>> chunksBefore = new LinkedHashMap<>();
        for (String id : before.keySet()) {
            chunksBefore.put(id, chunksOf(CHUNKS, id));
            assertFalse(id, chunksBefore.get(id).isEmpty());
        }
        int chunkCount = count(CHUNKS);
        long failuresBefore = modelFailures();

        setDown(true);
        try {
            // new documents: every item fails on the model; neither sources nor chunks are written
            assertAllFailOnTheModel(bulk(SRC, "outage", during), during.size());
            for (String id : during.keySet()) {
                ResponseException e = callFailing("GET", "/" + SRC + "/_doc/" + id, null);
                assertEquals(404, e.getResponse().getStatusLine().getStatusCode());
                assertEquals(id, List.of(), chunksOf(CHUNKS, id));
            }
            // an edit of an ingested document needs new vectors: it fails, and its source and chunks stay as they were
            assertAllFailOnTheModel(bulk(SRC, "outage", edited), 1);
            assertEquals(before.get("ok-0").get("body"), source("ok-0").get("body"));
            for (String id : before.keySet()) {
                assertEquals(id, chunksBefore.get(id), chunksOf(CHUNKS, id));
            }
            // the same text again needs no new vectors (all reused); it needs the model's description, cached per node
            // once the node has used the model: so it either succeeds without the model, or fails on it; either way the
            // chunks stay as they were
            Map<String, Object> same = bulk(SRC, "outage", Map.of("ok-1", before.get("ok-1")));
            int sameFailed = Boolean.TRUE.equals(same.get("errors")) ? 1 : 0;
            if (sameFailed == 1) {
                assertAllFailOnTheModel(same, 1);
            }
            logger.info("re-ingest of unchanged text while the model is down: {}", sameFailed == 1 ? "failed on the model" : "succeeded");
            assertEquals(chunksBefore.get("ok-1"), chunksOf(CHUNKS, "ok-1"));
            assertEquals(chunkCount, count(CHUNKS));
            assertEquals("one model failure per failed item", during.size() + edited.size() + sameFailed,
                modelFailures() - failuresBefore);
            failuresBefore += sameFailed;
        } finally {
            setDown(false);
        }

        // the model is back: the same requests succeed and their chunks appear
        assertEquals(false, bulk(SRC, "outage", during).get("errors"));
        for (String id : during.keySet()) {
            assertEquals(during.get(id).get("body"), source(id).get("body"));
            List<Map<String, Object>> chunks = chunksOf(CHUNKS, id);
            assertFalse(id, chunks.isEmpty());
            assertEquals(((Map<String, Object>) source(id).get("strata")).get("parents"), chunks.size());
            for (Map<String, Object> c : chunks) {
                assertEquals(384, ((List<Object>) c.get("embedding")).size());
            }
        }
        assertEquals(false, bulk(SRC, "outage", edited).get("errors"));
        assertEquals(edited.get("ok-0").get("body"), source("ok-0").get("body"));
        List<Map<String, Object>> reChunked = chunksOf(CHUNKS, "ok-0");
        assertEquals(((Map<String, Object>) source("ok-0").get("strata")).get("parents"), reChunked.size());
        assertNotEquals(chunksBefore.get("ok-0"), reChunked);
        assertEquals(modelFailures(), failuresBefore + during.size() + edited.size());
    }
}
