package io.strata.it;

import org.opensearch.client.ResponseException;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * Back-pressure on the real cluster (issue 7): with the admission limit {@code plugins.strata.inference.max_pending}
 * lowered at runtime to 1, concurrent bulk requests through a model-guided pipeline (logits-guided chunking on the
 * causal-LM fixture, then embedding) pile up on each node's inference pool. Documents beyond the limit must fail one by
 * one with 429 and a reason naming the setting (never a 5xx), leave neither a source document nor chunk documents,
 * and be counted; once the limit is restored, retrying exactly those items succeeds with exactly their chunks.
 */
@SuppressWarnings("unchecked")
public class BackPressureIT extends StrataRestTestCase {
    private static final String SRC = "bp-src";
    private static final String CHUNKS = "bp-chunks";
    private static final String PIPELINE = "bp";
    private static final int CLIENTS = 4;
    private static final int DOCS_PER_BULK = 4;
    private static final int PASSAGE = 1500;

    private static void setMaxPending(Integer limit) throws IOException {
        call("PUT", "/_cluster/settings", "{\"persistent\": {\"plugins.strata.inference.max_pending\": " + limit + "}}");
    }

    private static List<Map<String, Object>> items(Map<String, Object> bulk) {
        return ((List<Map<String, Object>>) bulk.get("items")).stream().map(i -> (Map<String, Object>) i.get("index")).toList();
    }

    private static Map<String, Object> source(String id) throws IOException {
        return (Map<String, Object>) call("GET", "/" + SRC + "/_doc/" + id).get("_source");
    }

    /** The source exists, and the chunk index holds exactly its parents, ordinals 0..n-1 once each, of its current text. */
    private static void assertExactlyItsChunks(String id, Map<String, Object> doc) throws IOException {
        Map<String, Object> source = source(id);
        assertEquals(id, doc.get("body"), source.get("body"));
        Map<String, Object> summary = (Map<String, Object>) source.get("strata");
        List<Map<String, Object>> chunks = chunksOf(CHUNKS, id);
        assertEquals(id, summary.get("parents"), chunks.size());
        for (int i = 0; i < chunks.size(); i++) {
            assertEquals(id, i, ((Number) chunks.get(i).get("ordinal")).intValue());
            assertEquals(id, summary.get("source_hash"), chunks.get(i).get("source_hash"));
        }
    }

    public void testOverAdmissionLimit_itemsGet429WriteNothing_andRetriesSucceed() throws Exception {
        putPipeline(PIPELINE, """
            {"field": "body", "target_index": "%s", "strategy": {"type": "logits_guided", "max_words": 120, "llm": "strata-tiny-gpt"}}"""
            .formatted(CHUNKS));
        // 17 distinct passages of the bundled Emma chapters (about 250 words each)
        String emma = String.join("\n\n", emmaChapters().values());
        int stride = (emma.length() - PASSAGE) / (CLIENTS * DOCS_PER_BULK);
        // warm-up with the default limit: the chunk index exists and the models are loaded on the node that took it
        Map<String, Map<String, Object>> warm = Map.of("warm", Map.of("body", emma.substring(0, PASSAGE)));
        assertEquals(false, bulk(SRC, PIPELINE, warm).get("errors"));

        List<Map<String, Map<String, Object>>> bulks = new ArrayList<>();
        Map<String, Map<String, Object>> all = new LinkedHashMap<>();
        for (int c = 0; c < CLIENTS; c++) {
            Map<String, Map<String, Object>> docs = new LinkedHashMap<>();
            for (int d = 0; d < DOCS_PER_BULK; d++) {
                int at = stride * (1 + c * DOCS_PER_BULK + d) - stride / 2;
                docs.put("c" + c + "-d" + d, Map.of("body", emma.substring(at, at + PASSAGE)));
            }
            bulks.add(docs);
            all.putAll(docs);
        }

        Map<String, Long> before = ClusterStats.summed();
        Map<String, Map<String, Object>> rejected = new LinkedHashMap<>();
        List<String> admitted = new ArrayList<>();
        setMaxPending(1);
        try {
            ExecutorService clients = Executors.newFixedThreadPool(CLIENTS);
            List<Future<Map<String, Object>>> answers = new ArrayList<>();
            try {
                for (Map<String, Map<String, Object>> docs : bulks) {
                    answers.add(clients.submit(() -> bulk(SRC, PIPELINE, docs)));
                }
                for (Future<Map<String, Object>> answer : answers) {
                    for (Map<String, Object> item : items(answer.get(5, TimeUnit.MINUTES))) {
                        String id = (String) item.get("_id");
                        int status = ((Number) item.get("status")).intValue();
                        if (status == 429) {
                            String reason = (String) ((Map<String, Object>) item.get("error")).get("reason");
                            assertTrue(item.toString(), reason.contains("inference rejected"));
                            assertTrue(item.toString(), reason.contains("[plugins.strata.inference.max_pending]"));
                            assertTrue(item.toString(), reason.contains("retry later"));
                            rejected.put(id, all.get(id));
                        } else {
                            assertEquals("every item is written or rejected with 429, never a 5xx: " + item, 201, status);
                            admitted.add(id);
                        }
                    }
                }
            } finally {
                clients.shutdownNow();
            }
            Map<String, Long> after = ClusterStats.summed();
            logger.info("max_pending 1, {} bulks x {} docs: {} written, {} rejected (429)", CLIENTS, DOCS_PER_BULK, admitted.size(),
                rejected.size());
            assertEquals(all.size(), admitted.size() + rejected.size());
            assertFalse("some items were rejected", rejected.isEmpty());
            assertFalse("the first task on a node is always admitted", admitted.isEmpty());
            assertEquals("each rejected item counted once", rejected.size(), ClusterStats.delta(before, after, "ingest.failures.rejected"));
            assertEquals(rejected.size(), ClusterStats.delta(before, after, "inference.queue.rejected"));
            assertEquals(0, ClusterStats.delta(before, after, "ingest.failures.model"));
            assertEquals(0, ClusterStats.delta(before, after, "ingest.failures.other"));
            assertEquals(admitted.size(), ClusterStats.delta(before, after, "ingest.documents"));
        } finally {
            setMaxPending(null);
        }

        // nothing of a rejected item was written; the admitted ones have exactly their chunks
        for (String id : rejected.keySet()) {
            ResponseException e = callFailing("GET", "/" + SRC + "/_doc/" + id, null);
            assertEquals(404, e.getResponse().getStatusLine().getStatusCode());
            assertEquals(id, List.of(), chunksOf(CHUNKS, id));
        }
        for (String id : admitted) {
            assertExactlyItsChunks(id, all.get(id));
        }

        // the client retries exactly the rejected items, now under the default limit: all are written
        Map<String, Object> retry = bulk(SRC, PIPELINE, rejected);
        assertEquals(retry.toString(), false, retry.get("errors"));
        for (String id : all.keySet()) {
            assertExactlyItsChunks(id, all.get(id));
        }
        int parents = 0;
        for (String id : new TreeSet<>(all.keySet())) {
            parents += ((Number) ((Map<String, Object>) source(id).get("strata")).get("parents")).intValue();
        }
        parents += ((Number) ((Map<String, Object>) source("warm").get("strata")).get("parents")).intValue();
        assertEquals("no orphan or duplicate chunk documents", parents, count(CHUNKS));
    }

    public void testQueryQueueTimeout_isDynamic_andAnInvalidValueIsRefusedWith400() throws Exception {
        ResponseException e = callFailing("PUT", "/_cluster/settings",
            "{\"transient\": {\"plugins.strata.inference.query_queue_timeout\": \"0ms\"}}");
        assertEquals(400, e.getResponse().getStatusLine().getStatusCode());
        assertTrue(e.getMessage(), e.getMessage().contains("plugins.strata.inference.query_queue_timeout"));
        try {
            call("PUT", "/_cluster/settings", "{\"transient\": {\"plugins.strata.inference.query_queue_timeout\": \"5s\"}}");
        } finally {
            call("PUT", "/_cluster/settings", "{\"transient\": {\"plugins.strata.inference.query_queue_timeout\": null}}");
        }
    }

    public void testMaxPending_invalidValue_isRefusedWith400() {
        ResponseException e = callFailing("PUT", "/_cluster/settings",
            "{\"transient\": {\"plugins.strata.inference.max_pending\": 0}}");
        assertEquals(400, e.getResponse().getStatusLine().getStatusCode());
        assertTrue(e.getMessage(), e.getMessage().contains("plugins.strata.inference.max_pending"));
    }
}
