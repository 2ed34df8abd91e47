package io.strata.it;

import org.opensearch.client.ResponseException;

import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Deleting a whole source index: its registered chunk index goes with it (in the caller's delete request, or the
 * cluster manager's janitor; {@code plugins.strata.chunk_index.delete_with_source}), an index whose {@code _meta} merely
 * names the source does not, a source index deleted and re-created at once keeps the chunks written for the new one, and
 * with the janitor off {@code _reconcile?index=<deleted source>} reports and removes the orphans.
 */
@SuppressWarnings("unchecked")
public class SourceIndexDeleteIT extends StrataRestTestCase {

    private static String text(int doc, String variant) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < 5; i++) {
            b.append("Document ").append(doc).append(' ').append(variant).append(", sentence ").append(i)
                .append(", is about Mr. Knightley riding to Donwell Abbey in the rain. ");
        }
        return b.toString().strip();
    }

    private static Map<String, Map<String, Object>> docs(int from, int to, String variant) {
        Map<String, Map<String, Object>> docs = new LinkedHashMap<>();
        for (int i = from; i <= to; i++) {
            docs.put("d" + i, Map.of("body", text(i, variant)));
        }
        return docs;
    }

    private static void pipeline(String name, String chunks) throws IOException {
        putPipeline(name, "{\"field\": \"body\", \"target_index\": \"" + chunks + "\", \"embed\": false, "
            + "\"strategy\": {\"type\": \"recursive\", \"max_words\": 25}}");
    }

    private static String uuidOf(String index) throws IOException {
        Map<String, Object> settings = (Map<String, Object>) ((Map<String, Object>) call("GET", "/" + index + "/_settings").get(index))
            .get("settings");
        return (String) ((Map<String, Object>) settings.get("index")).get("uuid");
    }

    /** The source index UUID Strata's registry records for a chunk index (its index metadata, not its mapping). */
    private static Object recordedUuid(String chunks) throws IOException {
        Map<String, Object> indices = (Map<String, Object>) ((Map<String, Object>) call("GET", "/_cluster/state/metadata/" + chunks)
            .get("metadata")).get("indices");
        Object strata = ((Map<String, Object>) indices.get(chunks)).get("strata");
        return strata == null ? null : ((Map<String, Object>) strata).get("source_index_uuid");
    }

    /** The janitor's work is a cluster-state update: wait until the cluster manager has none queued. */
    private static void waitForPendingTasks() throws Exception {
        assertBusy(() -> assertEquals(List.of(), call("GET", "/_cluster/pending_tasks").get("tasks")), 30, TimeUnit.SECONDS);
    }

    /** Every stored source document has exactly its chunks, cut from its stored text. */
    private static void assertChunksMatchSources(String source, String chunks) throws IOException {
        refresh(source);
        Map<String, Object> r = call("POST", "/" + source + "/_search", "{\"size\": 100}");
        int expected = 0;
        for (Object hit : (List<Object>) ((Map<String, Object>) r.get("hits")).get("hits")) {
            Map<String, Object> h = (Map<String, Object>) hit;
            Map<String, Object> summary = (Map<String, Object>) ((Map<String, Object>) h.get("_source")).get("strata");
            List<Map<String, Object>> stored = chunksOf(chunks, (String) h.get("_id"));
            assertEquals(h.get("_id") + ": " + stored, summary.get("parents"), stored.size());
            for (Map<String, Object> c : stored) {
                assertEquals(summary.get("source_hash"), c.get("source_hash"));
            }
            expected += stored.size();
        }
        assertTrue("some chunks", expected > 0);
    }

    public void testDeleteSourceIndex_deletesItsChunkIndex() throws Exception {
        pipeline("sid-a", "sid-a-chunks");
        assertEquals(false, bulk("sid-a-src", "sid-a", docs(1, 5, "v1")).get("errors"));
        assertTrue(count("sid-a-chunks") >= 10);
        // registered to its concrete source index before its first chunk was written
        assertEquals(uuidOf("sid-a-src"), recordedUuid("sid-a-chunks"));

        call("DELETE", "/sid-a-src");
        assertBusy(() -> assertFalse("the chunk index went with its source", indexExists("sid-a-chunks")), 30, TimeUnit.SECONDS);
        ResponseException e = callFailing("POST", "/_plugins/_strata/_reconcile?index=sid-a-src", null);
        assertEquals("nothing left to reconcile", 404, e.getResponse().getStatusLine().getStatusCode());
    }

    public void testDeleteAndRecreate_atOnce_keepsTheNewChunks() throws Exception {
        pipeline("sid-b", "sid-b-chunks");
        for (int round = 0; round < 4; round++) {
            Map<String, Object> first = bulk("sid-b-src", "sid-b", docs(1, 6, "round " + round + " old"));
            assertEquals(first.toString(), false, first.get("errors"));
            assertEquals(uuidOf("sid-b-src"), recordedUuid("sid-b-chunks"));

            call("DELETE", "/sid-b-src");
            if (round % 2 == 1) {
                call("PUT", "/sid-b-src"); // re-created explicitly, else by the bulk
            }
            Map<String, Object> again = bulk("sid-b-src", "sid-b", docs(1, 3, "round " + round + " new"));
            assertEquals(again.toString(), false, again.get("errors"));
            assertChunksMatchSources("sid-b-src", "sid-b-chunks");
            waitForPendingTasks();
            // whichever came first on the cluster manager, the new chunks are intact
            assertTrue("round " + round, indexExists("sid-b-chunks"));
            assertChunksMatchSources("sid-b-src", "sid-b-chunks");

            // chunks of the deleted documents d4..d6 are either gone with the old chunk index or orphans reconcile removes
            Map<String, Object> dry = call("POST", "/_plugins/_strata/_reconcile?index=sid-b-src&dry_run=true");
            assertEquals(dry.toString(), 0, dry.get("missing"));
            assertEquals(dry.toString(), 0, dry.get("stale"));
            call("POST", "/_plugins/_strata/_reconcile?index=sid-b-src");
            Map<String, Object> clean = call("POST", "/_plugins/_strata/_reconcile?index=sid-b-src&dry_run=true");
            assertEquals(clean.toString(), 0, clean.get("orphans"));
            assertEquals(clean.toString(), 3, clean.get("checked"));
            assertChunksMatchSources("sid-b-src", "sid-b-chunks");
        }
    }

    /**
     * A mapping's {@code _meta} is the user's to write: an index whose {@code _meta.strata} names a source index (and its
     * UUID) is not that source's chunk index, and deleting the source leaves it alone. Only Strata's own registry (written
     * by the node after the caller's chunk writes) ties a chunk index to its source.
     */
    public void testDeleteSourceIndex_leavesAnIndexWhoseMetaMerelyNamesIt() throws Exception {
        pipeline("sid-e", "sid-e-chunks");
        assertEquals(false, bulk("sid-e-src", "sid-e", docs(1, 2, "v1")).get("errors"));
        String uuid = uuidOf("sid-e-src");
        call("PUT", "/sid-e-bystander", json(Map.of("mappings", Map.of("_meta", Map.of("strata",
            Map.of("format", 2, "source_index", "sid-e-src", "source_index_uuid", uuid))))));
        call("PUT", "/sid-e-bystander/_doc/1?refresh=true", "{\"note\": \"not a chunk\"}");

        call("DELETE", "/sid-e-src");
        waitForPendingTasks();
        assertFalse("the registered chunk index went with its source", indexExists("sid-e-chunks"));
        assertTrue("an index whose _meta names the source is not deleted", indexExists("sid-e-bystander"));
        assertEquals(1, count("sid-e-bystander"));
    }

    public void testReconcile_ofADeletedSourceIndex_withTheJanitorOff_reportsAndRemovesEveryChunk() throws Exception {
        call("PUT", "/_cluster/settings", "{\"persistent\": {\"plugins.strata.chunk_index.delete_with_source\": false}}");
        try {
            pipeline("sid-c", "sid-c-chunks");
            pipeline("sid-d", "sid-d-chunks");
            assertEquals(false, bulk("sid-c-src", "sid-c", docs(1, 4, "v1")).get("errors"));
            assertEquals(false, bulk("sid-d-src", "sid-d", docs(1, 4, "v1")).get("errors"));
            int chunksC = count("sid-c-chunks");
            int chunksD = count("sid-d-chunks");
            // a document put into sid-d's chunk index by hand
            call("PUT", "/sid-d-chunks/_doc/mine?refresh=true",
                json(Map.of("source_index", "elsewhere", "source_id", "x", "text", "kept")));

            call("DELETE", "/sid-c-src");
            call("DELETE", "/sid-d-src");
            waitForPendingTasks();
            assertTrue("off: the chunk index stays", indexExists("sid-c-chunks"));

            Map<String, Object> dry = call("POST", "/_plugins/_strata/_reconcile?index=sid-c-src&dry_run=true");
            assertEquals(dry.toString(), true, dry.get("source_deleted"));
            assertEquals(dry.toString(), List.of("sid-c-chunks"), dry.get("chunk_indices"));
            assertEquals(dry.toString(), chunksC, dry.get("orphans"));
            assertEquals(dry.toString(), 0, dry.get("fixed"));
            assertEquals(chunksC, count("sid-c-chunks"));

            Map<String, Object> fix = call("POST", "/_plugins/_strata/_reconcile?index=sid-c-src");
            assertEquals(fix.toString(), chunksC, fix.get("orphans"));
            assertEquals(fix.toString(), chunksC, fix.get("fixed"));
            assertEquals(fix.toString(), List.of("sid-c-chunks"), fix.get("deleted_indices"));
            assertFalse(indexExists("sid-c-chunks"));
            assertEquals(404, callFailing("POST", "/_plugins/_strata/_reconcile?index=sid-c-src", null).getResponse()
                .getStatusLine().getStatusCode());

            // a chunk index serves one source index (the registry's record): everything in it goes with that source,
            // a document put there by hand too
            Map<String, Object> fixD = call("POST", "/_plugins/_strata/_reconcile?index=sid-d-src");
            assertEquals(fixD.toString(), chunksD + 1, fixD.get("orphans"));
            assertEquals(fixD.toString(), chunksD + 1, fixD.get("fixed"));
            assertEquals(fixD.toString(), List.of("sid-d-chunks"), fixD.get("deleted_indices"));
            assertFalse(indexExists("sid-d-chunks"));
        } finally {
            call("PUT", "/_cluster/settings", "{\"persistent\": {\"plugins.strata.chunk_index.delete_with_source\": null}}");
        }
    }
}
