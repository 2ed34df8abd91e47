package io.strata.it.secured;

import org.opensearch.client.Response;

import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Chunk writes, deletes and repairs carry the caller's permissions under the real security plugin. A role that may write
 * the source index but not the chunk index gets every bulk item refused with 403 naming the chunk index, and neither the
 * source document nor a chunk is written — along every path that leaves the write thread before the chunks are written
 * (embedding on the inference pool, a model-guided strategy, a causal LM, an ml-commons model over the transport layer):
 * a chunk write that ran in another context (stashed, a model layer's, the system's) would get through. The same for
 * deleting source documents and for {@code _reconcile}.
 */
@SuppressWarnings("unchecked")
public class SecuredIngestIT extends SecuredRestTestCase {
    /** Writing documents through a pipeline: bulk and ml-commons' predict (pipelines with a model_id call it as the caller). */
    private static final List<String> WRITER_CLUSTER = List.of("indices:data/write/bulk", "cluster:admin/opensearch/ml/predict");
    private static final List<String> WRITE = List.of("crud", "create_index", "indices:admin/mapping/put");

    private static String text(String variant) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < 8; i++) {
            b.append("In the ").append(variant).append(" version, sentence ").append(i)
                .append(" tells how Emma walked from Hartfield to Highbury and talked with Harriet about the weather. ");
            if (i % 3 == 2) {
                b.append("\n\n");
            }
        }
        return b.toString().strip();
    }

    private static Map<String, Object> bulkAs(String user, String index, String pipeline, Map<String, String> bodies) throws IOException {
        StringBuilder body = new StringBuilder();
        for (var e : bodies.entrySet()) {
            body.append(json(Map.of("index", Map.of("_index", index, "_id", e.getKey())))).append('\n');
            body.append(json(Map.of("body", e.getValue()))).append('\n');
        }
        Response response = as(user, "POST", "/_bulk?pipeline=" + pipeline + "&refresh=true", body.toString());
        assertEquals(bodyOf(response), 200, status(response));
        return entityAsMap(response);
    }

    /** Every item failed with 403, and its reason names {@code index}. */
    private static void assertDenied(Map<String, Object> bulk, String index) {
        assertEquals(bulk.toString(), true, bulk.get("errors"));
        for (Object item : (List<Object>) bulk.get("items")) {
            Map<String, Object> result = (Map<String, Object>) ((Map<String, Object>) item).get("index");
            assertEquals(item.toString(), 403, result.get("status"));
            String reason = String.valueOf(((Map<String, Object>) result.get("error")).get("reason"));
            assertTrue(item.toString(), reason.contains("[" + index + "]"));
            assertTrue(item.toString(), reason.contains("no permissions for"));
        }
    }

    /** What must not change when a write is refused: each chunk's ordinal, text and source hash. */
    private static List<Object> shape(List<Map<String, Object>> chunks) {
        return chunks.stream().map(c -> (Object) List.of(c.get("ordinal"), c.get("text"), String.valueOf(c.get("source_hash")))).toList();
    }

    public void testIngest_aRoleWithoutTheChunkIndex_isRefusedOnEveryPath_andOneWithItWrites() throws Exception {
        Map<String, String> pipelines = new LinkedHashMap<>();
        pipelines.put("sec-embedded", "\"strategy\": {\"type\": \"recursive\", \"max_words\": 30}"); // embeds on strata_inference
        pipelines.put("sec-semantic", "\"strategy\": {\"type\": \"semantic\", \"max_words\": 40}"); // chunks and embeds there
        pipelines.put("sec-lm", "\"strategy\": {\"type\": \"logits_guided\", \"max_words\": 40, \"llm\": \"strata-tiny-gpt\"}, "
            + "\"embed\": false"); // a causal LM forward pass per window
        pipelines.put("sec-remote", "\"strategy\": {\"type\": \"recursive\", \"max_words\": 30}, \"model_id\": \"standin-embed\"");
        for (var p : pipelines.entrySet()) {
            String source = p.getKey() + "-src";
            String chunks = p.getKey() + "-chunks";
            putPipeline(p.getKey(), "{\"field\": \"body\", \"target_index\": \"" + chunks + "\", " + p.getValue() + "}");
            putRole(p.getKey() + "-source-only", WRITER_CLUSTER, List.of(indexPermission(List.of(source), WRITE)));
            putRole(p.getKey() + "-both", WRITER_CLUSTER, List.of(indexPermission(List.of(source, chunks), WRITE)));
            putUser(p.getKey() + "-source-writer", p.getKey() + "-source-only");
            putUser(p.getKey() + "-writer", p.getKey() + "-both");

            // the chunk index does not exist yet: the caller may not create it either
            assertDenied(bulkAs(p.getKey() + "-source-writer", source, p.getKey(), Map.of("a", text("first"))), chunks);
            assertFalse(p.getKey() + ": no chunk index", exists("/" + chunks));
            assertFalse(p.getKey() + ": no source document", exists("/" + source + "/_doc/a"));

            // a role on both indices writes
            Map<String, Object> allowed = bulkAs(p.getKey() + "-writer", source, p.getKey(), Map.of("a", text("first")));
            assertEquals(p.getKey() + ": " + allowed, false, allowed.get("errors"));
            List<Map<String, Object>> before = chunksOf(chunks, "a");
            assertTrue(p.getKey() + ": " + before.size() + " chunks", before.size() >= 2);

            // the chunk index exists: a new document and a re-ingest of "a" are refused at the chunk write
            assertDenied(bulkAs(p.getKey() + "-source-writer", source, p.getKey(), Map.of("a", text("second"), "b", text("third"))),
                chunks);
            assertFalse(p.getKey() + ": b not stored", exists("/" + source + "/_doc/b"));
            assertEquals(p.getKey() + ": no chunks of b", List.of(), chunksOf(chunks, "b"));
            assertEquals(p.getKey() + ": the chunks of a are those of its stored text", shape(before), shape(chunksOf(chunks, "a")));
            Map<String, Object> stored = (Map<String, Object>) call("GET", "/" + source + "/_doc/a").get("_source");
            assertEquals(text("first"), stored.get("body"));
        }
    }

    /**
     * The other half of the contract: a caller who may write the chunk index but not the source index gets 403 for the
     * source, and no chunk is written either — chunks are written only after their source write succeeded.
     */
    public void testIngest_aRoleWithTheChunkIndexButNotTheSource_writesNoChunk() throws Exception {
        String source = "sec-order-src";
        String chunks = "sec-order-chunks";
        putPipeline("sec-order", "{\"field\": \"body\", \"target_index\": \"" + chunks + "\", \"embed\": false, "
            + "\"strategy\": {\"type\": \"recursive\", \"max_words\": 30}}");
        call("PUT", "/" + source);
        putRole("sec-order-chunks-only", WRITER_CLUSTER, List.of(indexPermission(List.of(chunks), WRITE)));
        putUser("sec-order-writer", "sec-order-chunks-only");

        Map<String, Object> bulk = bulkAs("sec-order-writer", source, "sec-order", Map.of("a", text("first"), "b", text("second")));
        for (Object item : (List<Object>) bulk.get("items")) {
            Map<String, Object> result = (Map<String, Object>) ((Map<String, Object>) item).get("index");
            assertEquals(item.toString(), 403, result.get("status"));
            assertTrue(item.toString(), String.valueOf(result.get("error")).contains("no permissions for"));
        }
        assertFalse("no source document", exists("/" + source + "/_doc/a"));
        assertEquals("no chunk of a text never stored", List.of(), chunksOf(chunks, "a"));
        assertEquals(List.of(), chunksOf(chunks, "b"));
    }

    public void testDeleteAndReconcile_runWithTheCallersPermissions() throws Exception {
        String source = "sec-del-src";
        String chunks = "sec-del-chunks";
        putPipeline("sec-del", "{\"field\": \"body\", \"target_index\": \"" + chunks + "\", \"embed\": false, "
            + "\"strategy\": {\"type\": \"recursive\", \"max_words\": 30}}");
        assertEquals(false, bulk(source, "sec-del", Map.of("a", Map.of("body", text("first")), "b", Map.of("body", text("second"))))
            .get("errors"));
        int chunksOfA = chunksOf(chunks, "a").size();
        int chunksOfB = chunksOf(chunks, "b").size();
        assertTrue(chunksOfA >= 2);
        List<String> reconcile = List.of("crud", "indices:admin/strata/reconcile", "indices:admin/refresh");
        // may delete source documents and reconcile, may only read (and refresh) the chunk index
        putRole("sec-del-reader", WRITER_CLUSTER, List.of(indexPermission(List.of(source), reconcile),
            indexPermission(List.of(chunks), List.of("read", "indices:admin/refresh"))));
        putUser("sec-del-reader", "sec-del-reader");
        // may not even read the chunk index
        putRole("sec-del-blind", WRITER_CLUSTER, List.of(indexPermission(List.of(source), reconcile)));
        putUser("sec-del-blind", "sec-del-blind");
        putRole("sec-del-owner", WRITER_CLUSTER, List.of(indexPermission(List.of(source), reconcile),
            indexPermission(List.of(chunks), List.of("crud", "indices:admin/refresh"))));
        putUser("sec-del-owner", "sec-del-owner");

        // the source document is deleted (the caller may), its chunks may not be: no silent success, the answer says so
        Response delete = as("sec-del-reader", "DELETE", "/" + source + "/_doc/a?refresh=true", null);
        assertEquals(bodyOf(delete), 403, status(delete));
        String error = entityAsMap(delete).toString();
        assertTrue(error, error.contains("[" + source + "][a] was deleted, but deleting its chunks from [" + chunks + "] failed"));
        assertTrue(error, error.contains("no permissions for"));
        assertFalse(exists("/" + source + "/_doc/a"));
        assertEquals("the chunks remain", chunksOfA, chunksOf(chunks, "a").size());

        // the same in a bulk: that item fails
        Response bulkDelete = as("sec-del-reader", "POST", "/_bulk?refresh=true",
            json(Map.of("delete", Map.of("_index", source, "_id", "b"))) + "\n");
        Map<String, Object> item = (Map<String, Object>) ((Map<String, Object>) ((List<Object>) entityAsMap(bulkDelete).get("items"))
            .get(0)).get("delete");
        assertEquals(item.toString(), 403, item.get("status"));
        assertEquals(chunksOfB, chunksOf(chunks, "b").size());

        // a document whose chunk is missing, for the rewrite path of _reconcile
        assertEquals(false, bulk(source, "sec-del", Map.of("c", Map.of("body", text("third")))).get("errors"));
        call("DELETE", "/" + chunks + "/_doc/c:0?refresh=true");
        String path = "/_plugins/_strata/_reconcile?index=" + source;
        Response dryAsReader = as("sec-del-reader", "POST", path + "&dry_run=true", null);
        assertEquals(bodyOf(dryAsReader), 200, status(dryAsReader));
        Map<String, Object> dry = entityAsMap(dryAsReader);
        assertEquals(dry.toString(), chunksOfA + chunksOfB, dry.get("orphans"));
        assertEquals(dry.toString(), 1, dry.get("missing"));

        // _reconcile by a caller who may not write the chunk index: every fix refused with 403, nothing written as the system
        Response refused = as("sec-del-reader", "POST", path, null);
        Map<String, Object> report = entityAsMap(refused);
        assertEquals(report.toString(), 403, status(refused));
        assertEquals(report.toString(), 0, report.get("fixed"));
        List<Map<String, Object>> failures = (List<Map<String, Object>>) report.get("failures");
        assertEquals(report.toString(), chunksOfA + chunksOfB + 1, failures.size());
        for (Map<String, Object> f : failures) {
            assertEquals(f.toString(), 403, f.get("status"));
            // a refused chunk delete is reported on the chunk; the refused rewrite of c on its source, naming the chunk index
            String reason = String.valueOf(f.get("reason"));
            assertTrue(f.toString(), chunks.equals(f.get("index")) || reason.contains("[" + chunks + "]"));
            assertTrue(f.toString(), reason.contains("no permissions for"));
        }
        Map<String, Object> unchanged = call("POST", path + "&dry_run=true");
        assertEquals(unchanged.toString(), dry.get("orphans"), unchanged.get("orphans"));
        assertEquals(unchanged.toString(), dry.get("missing"), unchanged.get("missing"));

        // reads go through the caller's permissions too
        assertEquals(403, status(as("sec-del-blind", "POST", path + "&dry_run=true", null)));

        // a caller who may write the chunk index fixes it
        Response fixedResponse = as("sec-del-owner", "POST", path, null);
        Map<String, Object> fixed = entityAsMap(fixedResponse);
        assertEquals(fixed.toString(), chunksOfA + chunksOfB + 1, fixed.get("fixed"));
        assertEquals(List.of(), chunksOf(chunks, "a"));
        assertEquals(List.of(), chunksOf(chunks, "b"));
        assertFalse(chunksOf(chunks, "c").isEmpty());
    }

    /**
     * {@code _reconcile} compares the whole source index with its chunks; run by a caller whose view of the source index
     * document- or field-level security restricts, it took what was hidden for gone: the chunks of documents hidden by DLS
     * were deleted as orphans. Such a caller gets a 403 before anything is read or written. Oracle: as admin, every document
     * keeps its text, its summary and its chunks; and an unrestricted caller's run finds nothing to fix.
     */
    public void testReconcile_byACallerWithDocumentOrFieldLevelSecurityOnTheSource_deletesNothingItCannotSee() throws Exception {
        String source = "sec-rdls-src";
        String chunks = "sec-rdls-chunks";
        putPipeline("sec-rdls", "{\"field\": \"body\", \"target_index\": \"" + chunks + "\", \"embed\": false, "
            + "\"strategy\": {\"type\": \"recursive\", \"max_words\": 30}}");
        Map<String, Map<String, Object>> docs = new LinkedHashMap<>();
        docs.put("a", Map.of("body", text("first"), "tenant", "acme"));
        docs.put("b", Map.of("body", text("second"), "tenant", "beta"));
        docs.put("c", Map.of("body", text("third"), "tenant", "acme"));
        assertEquals(false, bulk(source, "sec-rdls", docs).get("errors"));
        Map<String, Integer> before = new LinkedHashMap<>();
        for (String id : docs.keySet()) {
            before.put(id, chunksOf(chunks, id).size());
        }
        List<String> reconcile = List.of("crud", "indices:admin/strata/reconcile", "indices:admin/refresh*");
        putRole("sec-rdls-tenant", WRITER_CLUSTER, List.of(Map.of("index_patterns", List.of(source), "allowed_actions", reconcile,
            "dls", "{\"term\": {\"tenant\": \"acme\"}}"), indexPermission(List.of(chunks), List.of("crud", "indices:admin/refresh*"))));
        putUser("sec-rdls-tenant", "sec-rdls-tenant");
        putRole("sec-rdls-fls", WRITER_CLUSTER, List.of(Map.of("index_patterns", List.of(source), "allowed_actions", reconcile,
            "fls", List.of("~body")), indexPermission(List.of(chunks), List.of("crud", "indices:admin/refresh*"))));
        putUser("sec-rdls-fls", "sec-rdls-fls");

        for (String user : List.of("sec-rdls-tenant", "sec-rdls-fls")) {
            for (String dry : List.of("&dry_run=true", "")) {
                // it used to answer 8 orphans (the hidden document's chunks) and delete them
                Response r = as(user, "POST", "/_plugins/_strata/_reconcile?index=" + source + dry, null);
                assertEquals(user + dry + ": " + bodyOf(r), 403, status(r));
                assertTrue(bodyOf(r), bodyOf(r).contains("document-level security, field-level security or field masking restricts "
                    + "your view of [" + source + "]"));
                assertTrue(bodyOf(r), bodyOf(r).contains("nothing was read or changed"));
            }
            for (var doc : docs.entrySet()) {
                assertEquals(user + ": chunks of " + doc.getKey(), before.get(doc.getKey()).intValue(), chunksOf(chunks, doc.getKey()).size());
                Map<String, Object> stored = (Map<String, Object>) call("GET", "/" + source + "/_doc/" + doc.getKey()).get("_source");
                assertEquals(user + ": text of " + doc.getKey(), doc.getValue().get("body"), stored.get("body"));
                assertNotNull(user + ": summary of " + doc.getKey(), stored.get("strata"));
            }
        }
        putRole("sec-rdls-whole", WRITER_CLUSTER, List.of(indexPermission(List.of(source), reconcile),
            indexPermission(List.of(chunks), List.of("crud", "indices:admin/refresh*"))));
        putUser("sec-rdls-whole", "sec-rdls-whole");
        Response whole = as("sec-rdls-whole", "POST", "/_plugins/_strata/_reconcile?index=" + source, null);
        assertEquals(bodyOf(whole), 200, status(whole));
        Map<String, Object> report = entityAsMap(whole);
        for (String k : List.of("orphans", "missing", "stale", "duplicates", "fixed")) {
            assertEquals(k + " in " + report, 0, ((Number) report.get(k)).intValue());
        }
        assertEquals(report.toString(), 3, ((Number) report.get("checked")).intValue());
    }
}
