package io.strata.it.secured;

import org.opensearch.client.Response;

import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code _swap} and {@code _rollback} run with the caller's permissions under the real security plugin: a caller who may run
 * them on the source but may not change the aliases of the chunk index's name gets a 403, and nothing changed (the name is
 * what it was, no kept copy, no block left on the source); a caller with those rights swaps and rolls back. Oracle: the
 * name's aliases and the source's settings, read as admin, and chunk 0 of each source document through the name.
 */
@SuppressWarnings("unchecked")
public class SecuredSwapIT extends SecuredRestTestCase {
    private static final String SOURCE = "sec-sw-src";
    private static final String CHUNKS = "sec-sw-chunks";
    private static final List<String> CLUSTER = List.of("indices:data/write/bulk", "indices:data/read/mget",
        "indices:data/read/msearch");
    private static final List<String> ON_SOURCE = List.of("read", "indices:admin/strata/swap", "indices:admin/strata/rollback",
        "indices:admin/refresh*", "indices:monitor/stats", "indices:admin/block/add*", "indices:admin/settings/update");
    private static final List<String> ON_CHUNKS = List.of("crud", "create_index", "indices:admin/refresh*",
        "indices:admin/mapping/put", "indices:admin/delete", "indices:admin/resize*", "indices:admin/block/add*",
        "indices:admin/settings/update", "indices:monitor/stats");

    private static String pipeline(int maxWords) {
        return "{\"field\": \"body\", \"target_index\": \"" + CHUNKS + "\", \"embed\": false, "
            + "\"strategy\": {\"type\": \"recursive\", \"max_words\": " + maxWords + "}}";
    }

    /** The concrete indices under the name, with their alias entry (empty for the concrete index itself). */
    private static Map<String, Object> underName() throws IOException {
        Map<String, Object> out = new LinkedHashMap<>();
        Map<String, Object> r = call("GET", "/" + CHUNKS + "/_alias");
        r.forEach((index, v) -> out.put(index, ((Map<String, Object>) v).get("aliases")));
        return out;
    }

    private static void assertNoBlock() throws IOException {
        Map<String, Object> settings = call("GET", "/" + SOURCE + "/_settings/index.blocks.write");
        Map<String, Object> ofSource = (Map<String, Object>) settings.get(SOURCE);
        assertTrue("no write block left: " + settings, ofSource == null || ((Map<String, Object>) ofSource.get("settings")).isEmpty());
    }

    private static int documentsUnderName() throws IOException {
        refresh(CHUNKS);
        return ((Number) call("POST", "/" + CHUNKS + "/_count", "{\"query\": {\"term\": {\"ordinal\": 0}}}").get("count")).intValue();
    }

    public void testSwapAndRollback_runAsTheCaller_aCallerWithoutAliasRightsChangesNothing() throws Exception {
        putPipeline("sec-sw", pipeline(30));
        call("PUT", "/" + SOURCE, "{\"settings\": {\"index.default_pipeline\": \"sec-sw\"}}");
        Map<String, Map<String, Object>> docs = new LinkedHashMap<>();
        for (int i = 0; i < 12; i++) {
            docs.put("d" + i, Map.of("body", "Document " + i + " tells how Emma walked from Hartfield to Highbury and talked with "
                + "Harriet about the weather, the vicar, the ball at the Crown and the letters from Enscombe."));
        }
        assertEquals(false, bulk(SOURCE, "sec-sw", docs).get("errors"));
        putPipeline("sec-sw", pipeline(10));
        Map<String, Object> built = call("POST", "/_plugins/_strata/_rebuild?index=" + SOURCE);
        assertEquals(built.toString(), CHUNKS + "-g2", built.get("generation_index"));
        Map<String, Object> before = underName();
        assertEquals(before.toString(), Map.of(CHUNKS, Map.of()), before);

        putRole("sec-sw-noalias", CLUSTER, List.of(indexPermission(List.of(SOURCE), ON_SOURCE),
            indexPermission(List.of(CHUNKS + "*"), ON_CHUNKS)));
        putUser("sec-sw-noalias", "sec-sw-noalias");
        Response refused = as("sec-sw-noalias", "POST", "/_plugins/_strata/_swap?index=" + SOURCE + "&generation=2", null);
        assertEquals(bodyOf(refused), 403, status(refused));
        assertEquals("the name is as it was", before, underName());
        assertFalse("no kept copy", exists("/" + CHUNKS + "-g1"));
        assertNoBlock();
        assertEquals(docs.size(), documentsUnderName());

        putRole("sec-sw-whole", CLUSTER, List.of(indexPermission(List.of(SOURCE), ON_SOURCE),
            indexPermission(List.of(CHUNKS + "*"), concat(ON_CHUNKS, "indices:admin/aliases*"))));
        putUser("sec-sw-whole", "sec-sw-whole");
        Response swapped = as("sec-sw-whole", "POST", "/_plugins/_strata/_swap?index=" + SOURCE + "&generation=2", null);
        assertEquals(bodyOf(swapped), 200, status(swapped));
        assertEquals(Map.of(CHUNKS + "-g2", Map.of(CHUNKS, Map.of("is_write_index", true))), underName());
        assertNoBlock();
        assertEquals(docs.size(), documentsUnderName());

        putPipeline("sec-sw", pipeline(30));
        Response noRollback = as("sec-sw-noalias", "POST", "/_plugins/_strata/_rollback?index=" + SOURCE, null);
        assertEquals(bodyOf(noRollback), 403, status(noRollback));
        assertEquals(Map.of(CHUNKS + "-g2", Map.of(CHUNKS, Map.of("is_write_index", true))), underName());
        assertNoBlock();
        Response rolledBack = as("sec-sw-whole", "POST", "/_plugins/_strata/_rollback?index=" + SOURCE, null);
        assertEquals(bodyOf(rolledBack), 200, status(rolledBack));
        assertEquals(Map.of(CHUNKS + "-g1", Map.of(CHUNKS, Map.of("is_write_index", true))), underName());
        assertNoBlock();
        assertEquals(docs.size(), documentsUnderName());
    }

    private static List<String> concat(List<String> a, String b) {
        List<String> out = new java.util.ArrayList<>(a);
        out.add(b);
        return out;
    }
}
