package io.strata.it.secured;

import org.opensearch.client.Response;

import java.io.IOException;
import java.util.List;
import java.util.Map;

/**
 * {@code _reconcile?wait_for_completion=false} runs with the caller's permissions under the real security plugin, as the
 * synchronous form does: the task of a caller who may read but not write the chunk index fixes nothing and its stored
 * report lists every fix refused with 403; the task of a caller who may write it fixes the drift. Oracle: the drift made
 * by hand (one deleted chunk, one orphan), the chunks counted as admin before and after.
 */
@SuppressWarnings("unchecked")
public class SecuredReconcileTaskIT extends SecuredRestTestCase {
    private static final String SOURCE = "sec-rt-src";
    private static final String CHUNKS = "sec-rt-chunks";
    private static final String PATH = "/_plugins/_strata/_reconcile?index=" + SOURCE + "&wait_for_completion=false";

    private static String text(int i) {
        return ("Document " + i + " tells how Emma walked from Hartfield to Highbury and talked with Harriet about the weather. ")
            .repeat(6).strip();
    }

    /** Starts a reconcile task as {@code user} and waits (as admin) for its stored result. */
    private static Map<String, Object> runAs(String user) throws Exception {
        Response started = as(user, "POST", PATH, null);
        assertEquals(bodyOf(started), 200, status(started));
        String task = (String) entityAsMap(started).get("task");
        long deadline = System.nanoTime() + 120_000_000_000L;
        while (System.nanoTime() < deadline) {
            Map<String, Object> t = call("GET", "/_tasks/" + task);
            if (Boolean.TRUE.equals(t.get("completed"))) {
                return t;
            }
            Thread.sleep(200);
        }
        throw new AssertionError("task " + task + " did not complete");
    }

    private static int chunkCount() throws IOException {
        return count(CHUNKS);
    }

    public void testReconcileTask_runsWithTheCallersPermissions() throws Exception {
        putPipeline("sec-rt", "{\"field\": \"body\", \"target_index\": \"" + CHUNKS + "\", \"embed\": false, "
            + "\"strategy\": {\"type\": \"recursive\", \"max_words\": 30}}");
        assertEquals(false, bulk(SOURCE, "sec-rt", Map.of("a", Map.of("body", text(1)), "b", Map.of("body", text(2)))).get("errors"));
        int whole = chunkCount();
        int chunksOfA = chunksOf(CHUNKS, "a").size();
        call("DELETE", "/" + CHUNKS + "/_doc/a:0?refresh=true");
        call("PUT", "/" + CHUNKS + "/_doc/ghost:0?refresh=true", json(Map.of("source_id", "ghost", "source_index", SOURCE,
            "ordinal", 0, "text", "boo", "start", 0, "end", 3)));
        List<String> reconcile = List.of("read", "indices:admin/strata/reconcile", "indices:admin/refresh");
        List<String> cluster = List.of("cluster:monitor/task/get");
        putRole("sec-rt-reader", cluster, List.of(indexPermission(List.of(SOURCE), reconcile),
            indexPermission(List.of(CHUNKS), List.of("read", "indices:admin/refresh"))));
        putUser("sec-rt-reader", "sec-rt-reader");
        putRole("sec-rt-owner", cluster, List.of(indexPermission(List.of(SOURCE), reconcile),
            indexPermission(List.of(CHUNKS), List.of("crud", "indices:admin/refresh"))));
        putUser("sec-rt-owner", "sec-rt-owner");

        // a caller who may not write the chunk index: the task finds the drift, every fix is refused, nothing is written
        Map<String, Object> refused = (Map<String, Object>) runAs("sec-rt-reader").get("response");
        assertNotNull(refused);
        assertEquals(refused.toString(), 0, refused.get("fixed"));
        assertEquals(refused.toString(), 1, refused.get("missing"));
        assertEquals(refused.toString(), 1, refused.get("orphans"));
        List<Map<String, Object>> failures = (List<Map<String, Object>>) refused.get("failures");
        assertEquals(refused.toString(), 2, failures.size());
        for (Map<String, Object> f : failures) {
            assertEquals(f.toString(), 403, f.get("status"));
            assertTrue(f.toString(), String.valueOf(f.get("reason")).contains("no permissions for"));
        }
        assertEquals("nothing written as the system", chunksOfA - 1, chunksOf(CHUNKS, "a").size());
        assertEquals("nothing deleted as the system", 1, chunksOf(CHUNKS, "ghost").size());

        // a caller who may write it: the task fixes both
        Map<String, Object> fixed = (Map<String, Object>) runAs("sec-rt-owner").get("response");
        assertEquals(fixed.toString(), 2, fixed.get("fixed"));
        assertEquals(whole, chunkCount());
        assertEquals(List.of(), chunksOf(CHUNKS, "ghost"));
        assertEquals(chunksOfA, chunksOf(CHUNKS, "a").size());
    }
}
