package io.strata.it.secured;

import org.opensearch.client.Response;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Hostile security setups: roles whose view of the source or the chunk index is restricted in every way the security
 * plugin knows — field-level security as an include list and as an exclude list, field masking, document-level security
 * on either index — and a source index whose documents require a routing. {@code _reconcile} compares the whole of both
 * indices, so under any of them it is a 403 before anything is read, and nothing changes: both indices are compared as
 * admin, document by document (source, sequence number, version), before and after. Searches under DLS return k permitted
 * parents (oracle: the chunk documents the role's query selects, counted as admin); ingest through the pipeline works as
 * for any writer.
 */
@SuppressWarnings("unchecked")
public class SecuredAdversarialIT extends SecuredRestTestCase {
    private static final String SOURCE = "sec-adv-src";
    private static final String CHUNKS = "sec-adv-chunks";
    private static final List<String> CLUSTER = List.of("indices:data/write/bulk", "indices:data/read/mget",
        "indices:data/read/msearch");
    private static final List<String> RECONCILE = List.of("crud", "indices:admin/strata/reconcile", "indices:admin/refresh*");
    private static final List<String> CHUNK_WRITE = List.of("crud", "indices:admin/refresh*");

    private static String text(String tenant, int doc) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < 8; i++) {
            b.append("Note ").append(doc).append(", line ").append(i).append(": the ").append(tenant)
                .append(" household walked to Randalls and spoke of the weather and of Mr. Knightley. ");
        }
        return b.toString().strip();
    }

    private static Map<String, Map<String, Object>> docs() {
        Map<String, Map<String, Object>> docs = new LinkedHashMap<>();
        for (int d = 0; d < 6; d++) {
            String tenant = d % 2 == 0 ? "red" : "blue";
            docs.put("d" + d, Map.of("body", text(tenant, d), "title", "Note " + d, "tenant", tenant, "secret", "s3cret-" + d));
        }
        return docs;
    }

    /** Every document of {@code index} as admin reads it: id → [_source, _seq_no, _primary_term, _version, _routing]. */
    private static Map<String, List<Object>> snapshot(String index) throws IOException {
        refresh(index);
        Map<String, Object> r = call("POST", "/" + index + "/_search?seq_no_primary_term=true&version=true",
            "{\"size\": 1000, \"sort\": [{\"_id\": \"asc\"}], \"query\": {\"match_all\": {}}}");
        Map<String, List<Object>> out = new LinkedHashMap<>();
        for (Object h : (List<Object>) ((Map<String, Object>) r.get("hits")).get("hits")) {
            Map<String, Object> hit = (Map<String, Object>) h;
            List<Object> state = new ArrayList<>();
            state.add(hit.get("_source"));
            state.add(hit.get("_seq_no"));
            state.add(hit.get("_primary_term"));
            state.add(hit.get("_version"));
            state.add(hit.get("_routing"));
            out.put((String) hit.get("_id"), state);
        }
        return out;
    }

    @SafeVarargs
    private static Map<String, Object> role(Map<String, Object>... indexPermissions) {
        return Map.of("cluster_permissions", CLUSTER, "index_permissions", List.of(indexPermissions));
    }

    /**
     * Under each restriction, on either index, {@code _reconcile} (dry run or not) is a 403 that names it, and both indices
     * are as they were. On the old code the FLS include list on the source (hiding the {@code strata} summaries) passed
     * the count check and took every chunk for an orphan (dry run: 47 orphans, the whole chunk index); masking and an
     * exclude list pass a count check too, and a run rewrote sources from what the caller read.
     */
    public void testReconcile_underAnyFieldOrDocumentRestrictionOnEitherIndex_is403AndChangesNothing() throws Exception {
        putPipeline("sec-adv", "{\"field\": \"body\", \"target_index\": \"" + CHUNKS + "\", \"embed\": false, "
            + "\"copy_fields\": [\"tenant\"], \"strategy\": {\"type\": \"recursive\", \"max_words\": 30}}");
        assertEquals(false, bulk(SOURCE, "sec-adv", docs()).get("errors"));
        // drift an unrestricted run repairs (the chunk rewritten, the summary kept): so "nothing changed" means something
        call("DELETE", "/" + CHUNKS + "/_doc/d3:0?refresh=true");
        Map<String, Map<String, Object>> onSource = new LinkedHashMap<>();
        onSource.put("fls-include", Map.of("fls", List.of("body", "title", "tenant")));
        onSource.put("fls-exclude", Map.of("fls", List.of("~secret")));
        onSource.put("masked", Map.of("masked_fields", List.of("title")));
        onSource.put("dls", Map.of("dls", "{\"term\": {\"tenant\": \"red\"}}"));
        Map<String, Map<String, Object>> onChunks = new LinkedHashMap<>();
        onChunks.put("chunks-dls", Map.of("dls", "{\"term\": {\"tenant\": \"red\"}}"));
        onChunks.put("chunks-fls", Map.of("fls", List.of("~tenant")));
        onChunks.put("chunks-masked", Map.of("masked_fields", List.of("text")));
        Map<String, Map<String, Object>> roles = new LinkedHashMap<>();
        for (var e : onSource.entrySet()) {
            roles.put("sec-adv-" + e.getKey(), role(restricted(SOURCE, e.getValue(), RECONCILE),
                indexPermission(List.of(CHUNKS), CHUNK_WRITE)));
        }
        for (var e : onChunks.entrySet()) {
            roles.put("sec-adv-" + e.getKey(), role(indexPermission(List.of(SOURCE), RECONCILE),
                restricted(CHUNKS, e.getValue(), CHUNK_WRITE)));
        }
        roles.put("sec-adv-whole", role(indexPermission(List.of(SOURCE), RECONCILE), indexPermission(List.of(CHUNKS), CHUNK_WRITE)));
        putRolesAndUsers(roles);
        List<String> users = roles.keySet().stream().filter(u -> !u.equals("sec-adv-whole")).toList();
        Map<String, List<Object>> sourceBefore = snapshot(SOURCE);
        Map<String, List<Object>> chunksBefore = snapshot(CHUNKS);
        assertEquals(6, sourceBefore.size());
        for (String user : users) {
            // a dry run too where the old code's check let one through (and one on the chunk index); every other a real run
            List<String> runs = user.endsWith("fls-include") || user.endsWith("chunks-dls") ? List.of("&dry_run=true", "") : List.of("");
            for (String dry : runs) {
                long started = System.nanoTime();
                Response r = as(user, "POST", "/_plugins/_strata/_reconcile?index=" + SOURCE + dry, null);
                String body = bodyOf(r);
                assertEquals(user + dry + ": " + body, 403, status(r));
                assertTrue(user + dry + ": " + body, body.contains("[_reconcile]"));
                assertTrue(user + dry + ": " + body, body.contains("nothing was read or changed"));
                assertTrue(user + dry + " took " + (System.nanoTime() - started) / 1_000_000 + " ms",
                    System.nanoTime() - started < 10_000_000_000L);
            }
        }
        // once for all runs: a change is not undone by a later refused run
        assertEquals("the source index", sourceBefore, snapshot(SOURCE));
        assertEquals("the chunk index", chunksBefore, snapshot(CHUNKS));
        // ingest through the pipeline under an exclude list and under masking: the document is stored as sent, its chunks are
        // those _chunk cuts from it; an update under either is refused by the security plugin, the document unchanged
        Map<String, String> writers = Map.of("w1", "sec-adv-fls-exclude", "w2", "sec-adv-masked");
        for (var w : writers.entrySet()) {
            Map<String, Object> doc = Map.of("body", text("red", 9), "title", "Written by " + w.getValue(), "tenant", "red",
                "secret", "kept-" + w.getKey());
            Response written = as(w.getValue(), "PUT", "/" + SOURCE + "/_doc/" + w.getKey() + "?pipeline=sec-adv&refresh=true", json(doc));
            assertEquals(bodyOf(written), 201, status(written));
            Response update = as(w.getValue(), "POST", "/" + SOURCE + "/_update/" + w.getKey(), "{\"doc\": {\"title\": \"changed\"}}");
            // the plugin's refusal (answered with status 500 by opensearch-security 3.4.0.0)
            assertTrue(bodyOf(update), bodyOf(update).contains("Update is not supported when FLS or DLS or Fieldmasking is activated"));
            Map<String, Object> stored = (Map<String, Object>) call("GET", "/" + SOURCE + "/_doc/" + w.getKey()).get("_source");
            for (String field : doc.keySet()) {
                assertEquals(w.getKey() + "." + field, doc.get(field), stored.get(field));
            }
            assertEquals(cutByChunkApi((String) doc.get("body"), Map.of("type", "recursive", "max_words", 30), null).size(),
                chunksOf(CHUNKS, w.getKey()).size());
        }
        // the drift is real: an unrestricted caller repairs it, and only it
        Response whole = as("sec-adv-whole", "POST", "/_plugins/_strata/_reconcile?index=" + SOURCE, null);
        assertEquals(bodyOf(whole), 200, status(whole));
        Map<String, Object> report = entityAsMap(whole);
        assertEquals(report.toString(), 1, ((Number) report.get("missing")).intValue());
        assertEquals(report.toString(), 0, ((Number) report.get("orphans")).intValue());
        Map<String, List<Object>> sourceAfter = snapshot(SOURCE);
        for (var e : sourceBefore.entrySet()) {
            // every hidden or masked field kept as written
            Map<String, Object> stored = (Map<String, Object>) sourceAfter.get(e.getKey()).get(0);
            Map<String, Object> written = docs().get(e.getKey());
            for (String field : List.of("body", "title", "tenant", "secret")) {
                assertEquals(e.getKey() + "." + field, written.get(field), stored.get(field));
            }
        }
        assertFalse(chunksOf(CHUNKS, "d3").isEmpty());
    }

    /**
     * A source index whose documents require a routing: ingest as a writer with DLS on the source, then {@code _reconcile}
     * is a 403 for that writer and changes nothing; an unrestricted dry run finds nothing to fix.
     */
    public void testRoutingRequiredSource_ingestUnderDls_andReconcileRefusedWithoutChange() throws Exception {
        String source = "sec-adv-routed";
        String chunks = "sec-adv-routed-chunks";
        call("PUT", "/" + source, "{\"settings\": {\"number_of_shards\": 2}, \"mappings\": {\"_routing\": {\"required\": true}, "
            + "\"properties\": {\"body\": {\"type\": \"text\"}, \"tenant\": {\"type\": \"keyword\"}}}}");
        putPipeline("sec-adv-routed", "{\"field\": \"body\", \"target_index\": \"" + chunks + "\", \"embed\": false, "
            + "\"copy_fields\": [\"tenant\"], \"strategy\": {\"type\": \"recursive\", \"max_words\": 30}}");
        putRole("sec-adv-routed-red", CLUSTER, List.of(
            restricted(source, Map.of("dls", "{\"term\": {\"tenant\": \"red\"}}"), List.of("crud", "indices:admin/strata/reconcile",
                "indices:admin/refresh*")),
            indexPermission(List.of(chunks), List.of("crud", "create_index", "indices:admin/mapping/put", "indices:admin/refresh*"))));
        putUser("sec-adv-routed-red", "sec-adv-routed-red");
        StringBuilder bulk = new StringBuilder();
        for (int d = 0; d < 4; d++) {
            String tenant = d % 2 == 0 ? "red" : "blue";
            bulk.append(json(Map.of("index", Map.of("_index", source, "_id", "r" + d, "routing", tenant)))).append('\n');
            bulk.append(json(Map.of("body", text(tenant, d), "tenant", tenant))).append('\n');
        }
        Response written = as("sec-adv-routed-red", "POST", "/_bulk?pipeline=sec-adv-routed&refresh=true", bulk.toString());
        assertEquals(bodyOf(written), 200, status(written));
        assertEquals(bodyOf(written), false, entityAsMap(written).get("errors"));
        // oracle: each document's chunks are those _chunk cuts from its stored text
        for (int d = 0; d < 4; d++) {
            String tenant = d % 2 == 0 ? "red" : "blue";
            Map<String, Object> stored = (Map<String, Object>) call("GET", "/" + source + "/_doc/r" + d + "?routing=" + tenant)
                .get("_source");
            int expected = cutByChunkApi((String) stored.get("body"), Map.of("type", "recursive", "max_words", 30), List.of(0.5, 0.25))
                .size();
            assertEquals("chunks of r" + d, expected, chunksOf(chunks, "r" + d).size());
        }
        Map<String, List<Object>> sourceBefore = snapshot(source);
        Map<String, List<Object>> chunksBefore = snapshot(chunks);
        for (String dry : List.of("&dry_run=true", "")) {
            Response r = as("sec-adv-routed-red", "POST", "/_plugins/_strata/_reconcile?index=" + source + dry, null);
            assertEquals(bodyOf(r), 403, status(r));
        }
        assertEquals(sourceBefore, snapshot(source));
        assertEquals(chunksBefore, snapshot(chunks));
    }

    /**
     * Search under DLS on a one-shard chunk index: k permitted parents (the shard's own top k, which DLS filters after the
     * graph search, would leave fewer). Oracle: the parents the role may read, counted as admin with the role's query.
     */
    public void testDenseSearch_underDlsOnAOneShardChunkIndex_returnsKPermittedParents() throws Exception {
        String source = "sec-adv-q";
        String chunks = "sec-adv-q-chunks";
        putPipeline("sec-adv-q", "{\"field\": \"body\", \"target_index\": \"" + chunks + "\", \"copy_fields\": [\"tenant\"], "
            + "\"strategy\": {\"type\": \"recursive\", \"max_words\": 30}}");
        Map<String, Map<String, Object>> docs = new LinkedHashMap<>();
        for (int d = 0; d < 4; d++) {
            // blue matches the question best; the red user may read red only
            String tenant = d < 2 ? "blue" : "red";
            docs.put("q" + d, Map.of("body", text(tenant, d) + (tenant.equals("blue") ? " Strawberries at Donwell Abbey." : ""),
                "tenant", tenant));
        }
        assertEquals(false, bulk(source, "sec-adv-q", docs).get("errors"));
        assertEquals("one shard: the shortcut's case", "1",
            ((Map<String, Object>) ((Map<String, Object>) ((Map<String, Object>) call("GET", "/" + chunks + "/_settings")
                .get(chunks)).get("settings")).get("index")).get("number_of_shards"));
        putRole("sec-adv-q-red", List.of(), List.of(restricted(chunks, Map.of("dls", "{\"term\": {\"tenant\": \"red\"}}"),
            List.of("read"))));
        putUser("sec-adv-q-red", "sec-adv-q-red");
        int permitted = ((Number) call("POST", "/" + chunks + "/_count", "{\"query\": {\"term\": {\"tenant\": \"red\"}}}")
            .get("count")).intValue();
        int k = 3;
        assertTrue("permitted parents " + permitted, permitted >= k);
        Response r = as("sec-adv-q-red", "POST", "/" + chunks + "/_search", "{\"size\": " + k + ", \"query\": {\"multi_granular\": "
            + "{\"query_text\": \"strawberries at Donwell Abbey\", \"k\": " + k + ", \"mode\": \"dense\"}}}");
        assertEquals(bodyOf(r), 200, status(r));
        List<Map<String, Object>> hits = (List<Map<String, Object>>) ((Map<String, Object>) entityAsMap(r).get("hits")).get("hits");
        assertEquals(hits.toString(), k, hits.size());
        for (Map<String, Object> hit : hits) {
            assertEquals(hit.toString(), "red", ((Map<String, Object>) hit.get("_source")).get("tenant"));
        }
    }
}
