package io.strata.it.secured;

import org.opensearch.client.Response;

import java.util.List;
import java.util.Map;

/**
 * Deleting a source index deletes its chunk index, under the real security plugin: in one request with the caller's
 * permissions, so it cannot be used to delete an index the caller may not — a role that may delete the source index but
 * not its chunk index gets a 403 naming the chunk index and both remain; one that may delete both deletes both. The chunk
 * index's registration to its source is the node's own bookkeeping, done for a user who may change no mapping. Chunk writes
 * after bulk requests run as the caller (see {@link SecuredIngestIT}).
 */
public class SecuredLifecycleIT extends SecuredRestTestCase {

    private static void ingest(String name) throws Exception {
        putPipeline(name, "{\"field\": \"body\", \"target_index\": \"" + name + "-chunks\", \"embed\": false}");
        assertEquals(false, bulk(name + "-src", name, Map.of("a", Map.of("body", "Emma Woodhouse, handsome, clever, and rich."),
            "b", Map.of("body", "Mr. Knightley was a sensible man about seven or eight-and-thirty."))).get("errors"));
        assertTrue(exists("/" + name + "-chunks"));
        // the chunk index is registered to this incarnation of its source index before its chunks are written
        assertEquals(uuidOf(name + "-src"), registeredSourceUuid(name + "-chunks"));
    }

    /** The source index UUID Strata's registry records for a chunk index (its index metadata; read as admin). */
    @SuppressWarnings("unchecked")
    private static Object registeredSourceUuid(String chunks) throws Exception {
        Map<String, Object> indices = (Map<String, Object>) ((Map<String, Object>) call("GET", "/_cluster/state/metadata/" + chunks)
            .get("metadata")).get("indices");
        Object strata = ((Map<String, Object>) indices.get(chunks)).get("strata");
        return strata == null ? null : ((Map<String, Object>) strata).get("source_index_uuid");
    }

    @SuppressWarnings("unchecked")
    private static String uuidOf(String index) throws Exception {
        return (String) ((Map<String, Object>) ((Map<String, Object>) ((Map<String, Object>) call("GET", "/" + index + "/_settings")
            .get(index)).get("settings")).get("index")).get("uuid");
    }

    public void testDeletingASourceIndex_withoutPermissionOnItsChunkIndex_is403AndDeletesNothing() throws Exception {
        ingest("sec-life-a");
        putRole("sec-life-source-admin", List.of(), List.of(indexPermission(List.of("sec-life-a-src"), List.of("indices_all"))));
        putUser("sec-life-source-admin", "sec-life-source-admin");

        Response refused = as("sec-life-source-admin", "DELETE", "/sec-life-a-src", null);
        String body = bodyOf(refused);
        assertEquals(body, 403, status(refused));
        assertTrue(body, body.contains("deleting source index [sec-life-a-src] also deletes its chunk index [sec-life-a-chunks]"));
        assertTrue("the source index remains", exists("/sec-life-a-src"));
        assertTrue("the chunk index remains", exists("/sec-life-a-chunks"));
        assertEquals(2, count("sec-life-a-src"));
    }

    public void testDeletingASourceIndex_withPermissionOnBoth_deletesBoth() throws Exception {
        ingest("sec-life-b");
        putRole("sec-life-owner", List.of(), List.of(indexPermission(List.of("sec-life-b-src", "sec-life-b-chunks"),
            List.of("indices_all"))));
        putUser("sec-life-owner", "sec-life-owner");

        Response deleted = as("sec-life-owner", "DELETE", "/sec-life-b-src", null);
        assertEquals(bodyOf(deleted), 200, status(deleted));
        assertFalse(exists("/sec-life-b-src"));
        assertFalse("deleted in the same request, not later", exists("/sec-life-b-chunks"));
    }

    public void testTheRegistration_runsAsThePlugin_forAUserWhoMayNotChangeAnyMapping() throws Exception {
        // the user may create indices and write documents, nothing more: the registration of the chunk index to its
        // source index is the plugin's own bookkeeping (an internal action of the node), and it is what lets a later
        // delete of that source find its chunk index
        putPipeline("sec-life-c", "{\"field\": \"body\", \"target_index\": \"sec-life-c-chunks\", \"embed\": false}");
        putRole("sec-life-writer", List.of("indices:data/write/bulk"), List.of(indexPermission(List.of("sec-life-c-src", "sec-life-c-chunks"),
            List.of("crud", "create_index"))));
        putUser("sec-life-writer", "sec-life-writer");
        Response written = as("sec-life-writer", "POST", "/_bulk?pipeline=sec-life-c&refresh=true",
            json(Map.of("index", Map.of("_index", "sec-life-c-src", "_id", "a"))) + "\n"
                + json(Map.of("body", "Emma Woodhouse, handsome, clever, and rich.")) + "\n");
        String body = bodyOf(written);
        assertEquals(body, 200, status(written));
        assertFalse(body, body.contains("\"errors\":true"));
        assertEquals(uuidOf("sec-life-c-src"), registeredSourceUuid("sec-life-c-chunks"));
        call("DELETE", "/sec-life-c-src");
        assertFalse(exists("/sec-life-c-chunks"));
    }

    /** The chunk documents a search of {@code chunks} sees now (no refresh of its own). */
    private static int visible(String chunks) throws Exception {
        return ((Number) call("GET", "/" + chunks + "/_count").get("count")).intValue();
    }

    /**
     * A refresh of a source index also refreshes its chunk index — as the caller: a role that may refresh the source
     * but not the chunk index gets its refresh (200) and the chunks stay unrefreshed; one that may refresh both makes
     * them searchable.
     */
    public void testARefreshOfTheSourceIndex_refreshesItsChunkIndex_withTheCallersPermissions() throws Exception {
        // refreshed only when asked: no timer, and no replica (a replica's recovery after the writes refreshes it)
        call("PUT", "/_index_template/sec-life-r", "{\"index_patterns\": [\"sec-life-r-*\"], "
            + "\"template\": {\"settings\": {\"index.refresh_interval\": \"-1\", \"index.number_of_replicas\": 0}}}");
        putPipeline("sec-life-r", "{\"field\": \"body\", \"target_index\": \"sec-life-r-chunks\", \"embed\": false}");
        Map<String, Object> written = call("POST", "/_bulk?pipeline=sec-life-r",
            json(Map.of("index", Map.of("_index", "sec-life-r-src", "_id", "a"))) + "\n"
                + json(Map.of("body", "Emma Woodhouse, handsome, clever, and rich.")) + "\n"
                + json(Map.of("index", Map.of("_index", "sec-life-r-src", "_id", "b"))) + "\n"
                + json(Map.of("body", "Mr. Knightley was a sensible man about seven or eight-and-thirty.")) + "\n");
        assertEquals(written.toString(), false, written.get("errors"));
        putRole("sec-life-r-source", List.of(), List.of(indexPermission(List.of("sec-life-r-src"), List.of("indices:admin/refresh*"))));
        putRole("sec-life-r-both", List.of(), List.of(indexPermission(List.of("sec-life-r-src", "sec-life-r-chunks"),
            List.of("indices:admin/refresh*"))));
        putUser("sec-life-r-source", "sec-life-r-source");
        putUser("sec-life-r-both", "sec-life-r-both");

        Response sourceOnly = as("sec-life-r-source", "POST", "/sec-life-r-src/_refresh", null);
        assertEquals(bodyOf(sourceOnly), 200, status(sourceOnly));
        assertEquals(2, visible("sec-life-r-src"));
        assertEquals("not refreshed by a caller who may not", 0, visible("sec-life-r-chunks"));

        Response both = as("sec-life-r-both", "POST", "/sec-life-r-src/_refresh", null);
        assertEquals(bodyOf(both), 200, status(both));
        int seen = visible("sec-life-r-chunks");
        assertTrue("chunks searchable: " + seen, seen >= 2);
        assertEquals("every chunk written", count("sec-life-r-chunks"), seen);
    }
}
