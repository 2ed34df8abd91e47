package io.strata.it;

import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * {@code _reconcile?wait_for_completion=false} runs as a task: it answers {@code {"task": id}} at once, {@code GET _tasks}
 * shows its progress against the source index's document count, a cancel stops it part-way (what it fixed stays fixed,
 * the rest is still reported missing), and a run to the end leaves its report in the task's result. Oracle: the documents
 * written, and the chunk 0 documents counted in the chunk index (one per source document with chunks).
 */
@SuppressWarnings("unchecked")
public class ReconcileTaskIT extends StrataRestTestCase {
    private static final String SOURCE = "rt-src";
    private static final String CHUNKS = "rt-src-chunks";
    private static final int DOCS = 1000;

    private static int chunked() throws IOException {
        refresh(CHUNKS);
        return ((Number) call("POST", "/" + CHUNKS + "/_count", "{\"query\": {\"term\": {\"ordinal\": 0}}}").get("count")).intValue();
    }

    private static Map<String, Object> task(String id) throws IOException {
        return call("GET", "/_tasks/" + id);
    }

    private static Map<String, Object> awaitCompleted(String id) throws Exception {
        long deadline = System.nanoTime() + 120_000_000_000L;
        while (System.nanoTime() < deadline) {
            Map<String, Object> t = task(id);
            if (Boolean.TRUE.equals(t.get("completed"))) {
                return t;
            }
            Thread.sleep(200);
        }
        throw new AssertionError("task " + id + " did not complete: " + task(id));
    }

    private static String start() throws IOException {
        Map<String, Object> started = call("POST", "/_plugins/_strata/_reconcile?index=" + SOURCE + "&wait_for_completion=false");
        assertEquals(started.toString(), 1, started.size());
        return (String) started.get("task");
    }

    public void testReconcileAsATask_showsProgress_isCancelledPartWay_andStoresItsReport() throws Exception {
        putPipeline("rt", "{\"field\": \"body\", \"target_index\": \"" + CHUNKS + "\", \"embed\": false, "
            + "\"strategy\": {\"type\": \"recursive\", \"max_words\": 20}, \"granularities\": [0.5]}");
        for (int from = 0; from < DOCS; from += 250) {
            Map<String, Map<String, Object>> docs = new LinkedHashMap<>();
            for (int i = from; i < from + 250; i++) {
                docs.put("d" + i, Map.of("body", "Document " + i + " is about Highbury. It rained in Surrey that week. "
                    + "Mr Knightley walked to Hartfield twice, and Emma painted a portrait of Harriet for the drawing room."));
            }
            assertEquals(false, bulk(SOURCE, "rt", docs).get("errors"));
        }
        assertEquals(DOCS, chunked());
        // every document's chunks gone at once: each is missing, and each fix is a document's rewrite
        call("DELETE", "/" + CHUNKS);

        String id = start();
        Map<String, Object> status = null;
        long deadline = System.nanoTime() + 60_000_000_000L;
        while (System.nanoTime() < deadline) {
            Map<String, Object> t = task(id);
            assertEquals("still running: " + t, false, t.get("completed"));
            status = (Map<String, Object>) ((Map<String, Object>) t.get("task")).get("status");
            if (((Number) status.get("fixed")).intValue() > 0) {
                break;
            }
            Thread.sleep(50);
        }
        assertEquals(status.toString(), DOCS, ((Number) status.get("total")).intValue());
        assertEquals(status.toString(), "source documents", status.get("phase"));
        assertTrue(status.toString(), ((Number) status.get("seen")).intValue() > 0);
        assertTrue(status.toString(), status.containsKey("documents_per_second"));
        assertTrue(((Map<String, Object>) task(id).get("task")).get("cancellable").equals(true));

        call("POST", "/_tasks/" + id + "/_cancel");
        Map<String, Object> cancelled = awaitCompleted(id);
        Map<String, Object> error = (Map<String, Object>) cancelled.get("error");
        assertNotNull("a cancelled run ends in an error: " + cancelled, error);
        assertEquals(cancelled.toString(), "task_cancelled_exception", error.get("type"));
        int fixed = chunked();
        assertTrue("cancelled part-way: " + fixed + " of " + DOCS + " documents fixed", fixed > 0 && fixed < DOCS);
        Map<String, Object> dry = call("POST", "/_plugins/_strata/_reconcile?index=" + SOURCE + "&dry_run=true");
        assertEquals(dry.toString(), DOCS - fixed, ((Number) dry.get("missing")).intValue());

        String second = start();
        Map<String, Object> done = awaitCompleted(second);
        Map<String, Object> report = (Map<String, Object>) done.get("response");
        assertNotNull("the report is the task's result: " + done, report);
        assertEquals(report.toString(), DOCS - fixed, ((Number) report.get("missing")).intValue());
        assertEquals(report.toString(), DOCS - fixed, ((Number) report.get("fixed")).intValue());
        assertEquals(DOCS, chunked());
        Map<String, Object> clean = call("POST", "/_plugins/_strata/_reconcile?index=" + SOURCE + "&dry_run=true");
        assertEquals(clean.toString(), 0, ((Number) clean.get("missing")).intValue());
    }
}
