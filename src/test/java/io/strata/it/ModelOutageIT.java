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

    /**
     * A pipeline whose author handles failures ({@code on_failure} storing the reason, or {@code ignore_failure}) meets a
     * model outage: the documents are stored without chunks, as the handler asked — a document written again loses the
     * chunks of its older text, and an index whose every write failed has none registered — and once the model answers
     * again {@code _reconcile} counts them as missing and cuts their chunks. They used to be stored without a summary,
     * which {@code _reconcile} follows, so it reported nothing missing and they stayed unretrievable.
     */
    public void testAModelOutageHandledByOnFailure_leavesDocumentsThatReconcileChunksOnceTheModelAnswers() throws Exception {
        Map<String, Object> strategy = Map.of("type", "recursive", "max_words", 80);
        String processor = "{\"field\": \"body\", \"target_index\": \"{{_index}}-chunks\", \"model_id\": \"" + MODEL_ID
            + "\", \"strategy\": " + json(strategy);
        call("PUT", "/_ingest/pipeline/handled", "{\"processors\": [{\"multi_granular_chunking\": " + processor + "}}], "
            + "\"on_failure\": [{\"set\": {\"field\": \"chunk_error\", \"value\": \"{{ _ingest.on_failure_message }}\"}}]}");
        call("PUT", "/_ingest/pipeline/ignored", "{\"processors\": [{\"multi_granular_chunking\": " + processor
            + ", \"ignore_failure\": true}}]}");
        String emma = String.join("\n\n", emmaChapters().values());
        // index → id → text; "handled-fresh" gets its first document during the outage
        Map<String, Map<String, String>> texts = Map.of("handled-src", new LinkedHashMap<>(), "handled-fresh", new LinkedHashMap<>());
        Map<String, String> src = texts.get("handled-src");
        for (int i = 0; i < 2; i++) {
            src.put("kept-" + i, emma.substring(3000 * i, 3000 * i + 1500));
            Map<String, Object> r = bulk("handled-src", "handled", Map.of("kept-" + i, Map.of("body", src.get("kept-" + i))));
            assertEquals(r.toString(), false, r.get("errors"));
        }
        assertFalse(chunksOf("handled-src-chunks", "kept-0").isEmpty());
        src.put("kept-0", emma.substring(9000, 10400)); // written again, with another text, during the outage
        src.put("new-0", emma.substring(12000, 13300));
        src.put("new-1", emma.substring(15000, 16100));
        texts.get("handled-fresh").put("fresh-0", emma.substring(18000, 19200));

        setDown(true);
        try {
            Map<String, Object> handled = bulk("handled-src", "handled", Map.of("kept-0", Map.of("body", src.get("kept-0")),
                "new-0", Map.of("body", src.get("new-0"))));
            assertEquals("the handler stored them: " + handled, false, handled.get("errors"));
            Map<String, Object> ignored = bulk("handled-src", "ignored", Map.of("new-1", Map.of("body", src.get("new-1"))));
            assertEquals(ignored.toString(), false, ignored.get("errors"));
            Map<String, Object> fresh = bulk("handled-fresh", "handled", Map.of("fresh-0",
                Map.of("body", texts.get("handled-fresh").get("fresh-0"))));
            assertEquals(fresh.toString(), false, fresh.get("errors"));
        } finally {
            setDown(false);
        }
        for (var index : texts.entrySet()) {
            for (String id : index.getValue().keySet()) {
                if (id.equals("kept-1")) {
                    continue;
                }
                Map<String, Object> stored = (Map<String, Object>) call("GET", "/" + index.getKey() + "/_doc/" + id).get("_source");
                assertEquals(index.getValue().get(id), stored.get("body"));
                Map<String, Object> summary = (Map<String, Object>) stored.get("strata");
                assertNotNull("a summary that says the chunking failed: " + stored, summary);
                assertTrue(summary.toString(), String.valueOf(summary.get("failure")).contains("[model_id] [" + MODEL_ID + "] is not deployed in ml-commons"));
                assertEquals(0, summary.get("parents"));
                if (indexExists(index.getKey() + "-chunks")) {
                    assertEquals(id + ": no chunks, not those of its older text", List.of(), chunksOf(index.getKey() + "-chunks", id));
                }
                if (!id.equals("new-1")) {
                    // what the handler recorded: OpenSearch gives it the root cause's message
                    assertTrue(stored.toString(), String.valueOf(stored.get("chunk_error")).contains("Model not ready yet"));
                }
            }
        }

        for (var index : texts.entrySet()) {
            String name = index.getKey();
            int expectMissing = name.equals("handled-src") ? 3 : 1;
            Map<String, Object> dry = call("POST", "/_plugins/_strata/_reconcile?index=" + name + "&dry_run=true");
            assertEquals("every document the outage left without chunks: " + dry, expectMissing, ((Number) dry.get("missing")).intValue());
            assertEquals(dry.toString(), 0, ((Number) dry.get("orphans")).intValue() + ((Number) dry.get("stale")).intValue()
                + ((Number) dry.get("duplicates")).intValue());
            Map<String, Object> fixed = call("POST", "/_plugins/_strata/_reconcile?index=" + name);
            assertEquals(fixed.toString(), List.of(), fixed.get("failures"));
            assertEquals(fixed.toString(), expectMissing, ((Number) fixed.get("fixed")).intValue());

            int parents = 0;
            for (var e : index.getValue().entrySet()) {
                Map<String, Object> stored = (Map<String, Object>) call("GET", "/" + name + "/_doc/" + e.getKey()).get("_source");
                Map<String, Object> summary = (Map<String, Object>) stored.get("strata");
                assertNull(summary.toString(), summary.get("failure"));
                List<Map<String, Object>> written = chunksOf(name + "-chunks", e.getKey());
                assertEquals(e.getKey(), cutByChunkApi(e.getValue(), strategy, null), chunkShape(written));
                assertEquals(summary.toString(), written.size(), ((Number) summary.get("parents")).intValue());
                for (Map<String, Object> c : written) {
                    assertEquals(384, ((List<Object>) c.get("embedding")).size());
                }
                parents += written.size();
            }
            assertEquals(parents, count(name + "-chunks"));
            Map<String, Object> again = call("POST", "/_plugins/_strata/_reconcile?index=" + name + "&dry_run=true");
            for (String k : List.of("orphans", "missing", "stale", "duplicates")) {
                assertEquals(k + " in " + again, 0, ((Number) again.get(k)).intValue());
            }
        }
    }
}
