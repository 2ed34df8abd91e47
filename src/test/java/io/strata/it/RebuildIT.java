package io.strata.it;

import org.opensearch.client.Request;
import org.opensearch.client.ResponseException;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicReference;

/**
 * {@code _rebuild} builds a source index's chunks under a pipeline's current config into a new generation
 * ({@code <chunk index>-g<k>}) as a task. Oracle: {@code _chunk} of each stored source text under the pipeline's config,
 * against the chunk documents of the generation (brute force: every document, or every document of a template whose cut
 * {@code _chunk} gave), and the source documents as stored after the concurrent writes.
 */
@SuppressWarnings("unchecked")
public class RebuildIT extends StrataRestTestCase {
    private static final Map<String, Object> STRATEGY = Map.of("type", "recursive", "max_words", 20);
    private static final List<Double> GRANULARITIES = List.of(0.5);

    private static String pipelineJson(String target, int maxWords) {
        return "{\"field\": \"body\", \"target_index\": \"" + target + "\", \"embed\": false, "
            + "\"strategy\": {\"type\": \"recursive\", \"max_words\": " + maxWords + "}, \"granularities\": [0.5]}";
    }

    private static final String[] TEMPLATES = {
        "Document %d is about Highbury. It rained in Surrey that week. Mr Knightley walked to Hartfield twice, and Emma painted "
            + "a portrait of Harriet for the drawing room.",
        "Note %d. Frank Churchill wrote from Enscombe.",
        "Letter %d from Randalls: Mrs Weston sends her love. The ball at the Crown was a success, though the room was cold and the "
            + "supper was late. Miss Bates talked of Jane Fairfax, of her letters, of her health, and of the baked apples that Mr "
            + "Woodhouse would not eat. Everyone agreed that the evening had been a pleasant one." };

    private static String text(int i) {
        return TEMPLATES[i % TEMPLATES.length].formatted(i);
    }

    /** Indexes {@code docs} (id → source) without any pipeline, 500 a bulk. */
    private static void bulkPlain(String index, Map<String, Map<String, Object>> docs) throws IOException {
        List<Map.Entry<String, Map<String, Object>>> all = new ArrayList<>(docs.entrySet());
        for (int from = 0; from < all.size(); from += 500) {
            StringBuilder body = new StringBuilder();
            for (var e : all.subList(from, Math.min(all.size(), from + 500))) {
                body.append(json(Map.of("index", Map.of("_index", index, "_id", e.getKey())))).append('\n');
                body.append(json(e.getValue())).append('\n');
            }
            Map<String, Object> r = call("POST", "/_bulk?pipeline=_none", body.toString());
            assertEquals(false, r.get("errors"));
        }
        refresh(index);
    }

    private static String start(String query) throws IOException {
        Map<String, Object> started = call("POST", "/_plugins/_strata/_rebuild?" + query + "&wait_for_completion=false");
        assertEquals(started.toString(), 1, started.size());
        return (String) started.get("task");
    }

    private static Map<String, Object> awaitCompleted(String id) throws Exception {
        long deadline = System.nanoTime() + 600_000_000_000L;
        while (System.nanoTime() < deadline) {
            Map<String, Object> t = call("GET", "/_tasks/" + id);
            if (Boolean.TRUE.equals(t.get("completed"))) {
                return t;
            }
            Thread.sleep(200);
        }
        throw new AssertionError("task " + id + " did not complete: " + call("GET", "/_tasks/" + id));
    }

    private static Map<String, Object> statusOf(String id) throws IOException {
        return (Map<String, Object>) ((Map<String, Object>) call("GET", "/_tasks/" + id).get("task")).get("status");
    }

    private static int done(Map<String, Object> status) {
        return status == null || !(status.get("done") instanceof Number n) ? 0 : n.intValue();
    }

    private static int countQuery(String index, String query) throws IOException {
        refresh(index);
        return ((Number) call("POST", "/" + index + "/_count", "{\"query\": " + query + "}").get("count")).intValue();
    }

    private static boolean exists(String index) throws IOException {
        return client().performRequest(new Request("HEAD", "/" + index)).getStatusLine().getStatusCode() == 200;
    }

    public void testBackfill_ofTenThousandDocumentsThatNeverSawThePipeline_showsProgressAndMatchesTheChunkApi() throws Exception {
        String source = "rb-backfill";
        int docs = 10_000;
        Map<String, Map<String, Object>> all = new LinkedHashMap<>();
        for (int i = 0; i < docs; i++) {
            all.put("d" + i, Map.of("body", text(i)));
        }
        bulkPlain(source, all);
        putPipeline("rb-backfill", pipelineJson(source + "-chunks", 20));

        String id = start("index=" + source + "&pipeline=rb-backfill");
        Map<String, Object> status = statusOf(id);
        long deadline = System.nanoTime() + 120_000_000_000L;
        while (done(status) == 0 && System.nanoTime() < deadline) {
            Thread.sleep(20);
            status = statusOf(id);
        }
        assertEquals(status.toString(), docs, ((Number) status.get("total")).intValue());
        assertTrue(status.toString(), status.containsKey("documents_per_second") && status.containsKey("parents_written"));
        Map<String, Object> done = awaitCompleted(id);
        Map<String, Object> report = (Map<String, Object>) done.get("response");
        assertNotNull(done.toString(), report);
        String generation = source + "-chunks-g1";
        assertEquals(report.toString(), generation, report.get("generation_index"));
        assertEquals(report.toString(), docs, ((Number) report.get("documents")).intValue());

        // the oracle: each template's texts cut as _chunk cuts its first one (the numbers are one word each), every document
        int expected = 0;
        for (int t = 0; t < TEMPLATES.length; t++) {
            int parents = cutByChunkApi(text(t), STRATEGY, GRANULARITIES).size();
            int ofTemplate = (docs - t + TEMPLATES.length - 1) / TEMPLATES.length;
            expected += parents * ofTemplate;
        }
        assertEquals(expected, count(generation));
        assertEquals(report.toString(), expected, ((Number) report.get("parents_written")).intValue());
        assertEquals(docs, countQuery(generation, "{\"term\": {\"ordinal\": 0}}"));
        Random random = new Random(45);
        for (int k = 0; k < 60; k++) {
            int i = random.nextInt(docs);
            assertEquals("chunks of d" + i, cutByChunkApi(text(i), STRATEGY, GRANULARITIES), chunkShape(chunksOf(generation, "d" + i)));
        }
        assertFalse("the source is not rewritten", ((Map<String, Object>) call("GET", "/" + source + "/_doc/d1").get("_source"))
            .containsKey("strata"));
    }

    public void testRebuild_afterThetaChanged_withConcurrentWritesAndDeletes_equalsTheChunkApiOfEveryStoredText() throws Exception {
        String source = "rb-live";
        String chunks = source + "-chunks";
        putPipeline("rb-live", pipelineJson(chunks, 40));
        call("PUT", "/" + source, "{\"settings\": {\"index.number_of_shards\": 2, \"index.default_pipeline\": \"rb-live\"}}");
        Map<String, Map<String, Object>> docs = new LinkedHashMap<>();
        for (int i = 0; i < 400; i++) {
            docs.put("d" + i, Map.of("body", text(i)));
        }
        assertEquals(false, bulk(source, "rb-live", docs).get("errors"));
        int before = count(chunks);
        // θ changes: the rebuild builds the new config; the old chunk index keeps what it had
        putPipeline("rb-live", pipelineJson(chunks, 20));

        String id = start("index=" + source + "&requests_per_second=150");
        AtomicReference<Throwable> writerFailed = new AtomicReference<>();
        Thread writer = new Thread(() -> {
            try {
                Random random = new Random(7);
                for (int k = 0; k < 120; k++) {
                    int i = random.nextInt(460);
                    switch (k % 3) {
                        case 0 -> call("PUT", "/" + source + "/_doc/d" + i, json(Map.of("body", text(i + 1) + " Rewritten " + k + ".")));
                        case 1 -> {
                            try {
                                call("DELETE", "/" + source + "/_doc/d" + i);
                            } catch (ResponseException e) {
                                assertEquals(404, e.getResponse().getStatusLine().getStatusCode());
                            }
                        }
                        default -> call("PUT", "/" + source + "/_doc/n" + k, json(Map.of("body", text(k))));
                    }
                }
            } catch (Throwable e) {
                writerFailed.set(e);
            }
        });
        writer.start();
        writer.join();
        assertNull(writerFailed.get());
        Map<String, Object> done = awaitCompleted(id);
        Map<String, Object> report = (Map<String, Object>) done.get("response");
        assertNotNull(done.toString(), report);
        String generation = chunks + "-g2";
        assertEquals(report.toString(), generation, report.get("generation_index"));
        assertChunksMatchChunkApi(source, "body", generation, STRATEGY, GRANULARITIES);
        assertTrue(before > 0 && exists(chunks));

        // the listing: the chunk index of the name, serving, and the new generation with the config new writes record
        Map<String, Object> written = (Map<String, Object>) call("GET", "/" + source + "/_doc/n2").get("_source");
        Object config = ((Map<String, Object>) written.get("strata")).get("config");
        Map<String, Object> listed = call("GET", "/_plugins/_strata/generations?index=" + source);
        List<Map<String, Object>> generations = (List<Map<String, Object>>) listed.get("generations");
        assertEquals(listed.toString(), 2, generations.size());
        assertEquals(listed.toString(), chunks, generations.get(0).get("index"));
        assertEquals(listed.toString(), true, generations.get(0).get("serving"));
        assertEquals(listed.toString(), generation, generations.get(1).get("index"));
        assertEquals(listed.toString(), 2, generations.get(1).get("generation"));
        assertEquals(listed.toString(), false, generations.get(1).get("serving"));
        assertEquals(listed.toString(), config, generations.get(1).get("config"));
        assertEquals(listed.toString(), countQuery(source, "{\"match_all\": {}}"), ((Number) generations.get(1).get("documents")).intValue());
        assertEquals(listed.toString(), count(generation), ((Number) generations.get(1).get("parents")).intValue());

        // before any swap, the built generation compares with the serving chunk index on the caller's questions
        List<Map<String, Object>> questions = new ArrayList<>();
        for (String n : List.of("n2", "n5", "n8")) {
            String body = (String) ((Map<String, Object>) call("GET", "/" + source + "/_doc/" + n).get("_source")).get("body");
            questions.add(Map.of("question", String.join(" ", Arrays.asList(body.split(" ")).subList(0, 8)), "source_id", n));
        }
        Map<String, Object> compared = call("POST", "/_plugins/_strata/_compare",
            json(Map.of("a", chunks, "b", generation, "questions", questions, "k", 5)));
        assertEquals(compared.toString(), source, ((Map<String, Object>) compared.get("a")).get("source_index"));
        assertEquals(compared.toString(), source, ((Map<String, Object>) compared.get("b")).get("source_index"));
        assertEquals(compared.toString(), generation, ((Map<String, Object>) compared.get("b")).get("index"));
    }

    public void testCancel_deletesTheUnfinishedGeneration_andLeavesTheChunkIndexAsItWas() throws Exception {
        String source = "rb-cancel";
        String chunks = source + "-chunks";
        putPipeline("rb-cancel", pipelineJson(chunks, 20));
        Map<String, Map<String, Object>> docs = new LinkedHashMap<>();
        for (int i = 0; i < 600; i++) {
            docs.put("d" + i, Map.of("body", text(i)));
        }
        assertEquals(false, bulk(source, "rb-cancel", docs).get("errors"));
        int before = count(chunks);

        String id = start("index=" + source + "&pipeline=rb-cancel&requests_per_second=100");
        long deadline = System.nanoTime() + 60_000_000_000L;
        while (done(statusOf(id)) == 0 && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertTrue("the generation is being written", exists(chunks + "-g2"));
        call("POST", "/_tasks/" + id + "/_cancel");
        Map<String, Object> cancelled = awaitCompleted(id);
        Map<String, Object> error = (Map<String, Object>) cancelled.get("error");
        assertNotNull("a cancelled rebuild ends in an error: " + cancelled, error);
        assertEquals(cancelled.toString(), "task_cancelled_exception", error.get("type"));
        assertFalse("the unfinished generation is deleted", exists(chunks + "-g2"));
        assertEquals(before, count(chunks));
    }

    public void testBadInput_isA400NamingTheParameter() throws Exception {
        call("PUT", "/rb-bad", "{}");
        putPipeline("rb-bad", pipelineJson("rb-bad-chunks", 20));
        ResponseException rps = callFailing("POST", "/_plugins/_strata/_rebuild?index=rb-bad&pipeline=rb-bad&requests_per_second=0", null);
        assertEquals(400, rps.getResponse().getStatusLine().getStatusCode());
        assertTrue(rps.getMessage(), rps.getMessage().contains("[requests_per_second]"));
        ResponseException none = callFailing("POST", "/_plugins/_strata/_rebuild?index=rb-bad", null);
        assertEquals(400, none.getResponse().getStatusLine().getStatusCode());
        assertTrue(none.getMessage(), none.getMessage().contains("pipeline=<id>"));
        ResponseException unknown = callFailing("POST", "/_plugins/_strata/_rebuild?index=rb-bad&pipeline=nope", null);
        assertEquals(400, unknown.getResponse().getStatusLine().getStatusCode());
        assertTrue(unknown.getMessage(), unknown.getMessage().contains("[pipeline] [nope]"));
        assertFalse(exists("rb-bad-chunks-g1"));
    }
}
