package io.strata.it;

import org.opensearch.client.ResponseException;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Lifecycle failures of issue 25, as a user meets them: the text inside an object ({@code "field": "doc.body"}), an index
 * written and deleted through its write alias with {@code index.default_pipeline}, two pipelines whose templated
 * targets name the same chunk index; and (found by probing, 2026-11-27) a data stream created by its first write, pairs restored
 * from a snapshot (under their names, and renamed next to the live pair), a clone, strict or non-dynamic mappings and a
 * date-math index name.
 */
@SuppressWarnings("unchecked")
public class LifecycleRegressionIT extends StrataRestTestCase {

    private static String text(int doc) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < 5; i++) {
            b.append("Document ").append(doc).append(" sentence ").append(i)
                .append(" tells how Emma walked from Hartfield to Highbury in the rain. ");
        }
        return b.toString().strip();
    }

    /** A processor chunking {@code body} into {@code {{_index}}-chunks}, θ 20 words (what {@link #parentsOf} cuts), no vectors. */
    private static final String BODY_INTO_INDEX_CHUNKS = "{\"field\": \"body\", \"target_index\": \"{{_index}}-chunks\", "
        + "\"embed\": false, \"strategy\": {\"type\": \"recursive\", \"max_words\": 20}}";

    /** Index {@code index} with a pipeline of {@link #BODY_INTO_INDEX_CHUNKS} as its default, and documents a and b (texts 1, 2). */
    private static void pipedPair(String index) throws Exception {
        putPipeline(index + "-pipeline", BODY_INTO_INDEX_CHUNKS);
        call("PUT", "/" + index, "{\"settings\": {\"index.default_pipeline\": \"" + index + "-pipeline\"}}");
        call("PUT", "/" + index + "/_doc/a?refresh=true", json(Map.of("body", text(1))));
        call("PUT", "/" + index + "/_doc/b?refresh=true", json(Map.of("body", text(2))));
    }

    /** Snapshot {@code s1} of {@code index} and its chunk index, in a repository under the nodes' shared path.repo. */
    private static void snapshotPair(String repository, String index) throws Exception {
        call("PUT", "/_snapshot/" + repository, "{\"type\": \"fs\", \"settings\": {\"location\": \"" + repository + "\"}}");
        call("PUT", "/_snapshot/" + repository + "/s1?wait_for_completion=true",
            "{\"indices\": \"" + index + "," + index + "-chunks\", \"include_global_state\": false}");
    }

    /** Bulk-writes {@code n} documents with the text in {@code doc.body} through {@code pipeline}; the chunks written. */
    private static int writeObjects(String index, String pipeline, int n) throws Exception {
        StringBuilder body = new StringBuilder();
        for (int i = 1; i <= n; i++) {
            body.append(json(Map.of("index", Map.of("_index", index, "_id", "d" + i)))).append('\n');
            body.append(json(Map.of("doc", Map.of("body", text(i)), "title", "t" + i))).append('\n');
        }
        org.opensearch.client.Request bulk = new org.opensearch.client.Request("POST", "/_bulk?pipeline=" + pipeline + "&refresh=true");
        bulk.setJsonEntity(body.toString());
        assertEquals(false, entityAsMap(client().performRequest(bulk)).get("errors"));
        int chunks = count(index + "-chunks");
        assertTrue("chunks written: " + chunks, chunks >= n);
        return chunks;
    }

    /** {@code _reconcile} (dry run, then for real) finds and fixes nothing, and deletes no chunk. */
    private static void assertReconcileClean(String index, int chunks) throws Exception {
        Map<String, Object> dry = call("POST", "/_plugins/_strata/_reconcile?index=" + index + "&dry_run=true");
        for (String k : List.of("orphans", "missing", "stale", "duplicates")) {
            assertEquals(k + " in " + dry, 0, ((Number) dry.get(k)).intValue());
        }
        Map<String, Object> fix = call("POST", "/_plugins/_strata/_reconcile?index=" + index);
        assertEquals(fix.toString(), 0, ((Number) fix.get("fixed")).intValue());
        assertEquals("no chunk deleted", chunks, count(index + "-chunks"));
    }

    public void testReconcile_whenTheTextIsInsideAnObject_findsNothingToFix_andKeepsChunksAndSummaries() throws Exception {
        putPipeline("reg-obj", "{\"field\": \"doc.body\", \"target_index\": \"reg-obj-chunks\", \"embed\": false, "
            + "\"strategy\": {\"type\": \"recursive\", \"max_words\": 20}}");
        assertReconcileClean("reg-obj", writeObjects("reg-obj", "reg-obj", 5));
        Map<String, Object> d1 = (Map<String, Object>) call("GET", "/reg-obj/_doc/d1").get("_source");
        assertNotNull("the summary stays: " + d1, d1.get("strata"));
    }

    public void testDeleteThroughTheWriteAlias_withADefaultPipeline_removesTheChunks() throws Exception {
        putPipeline("reg-alias", "{\"field\": \"body\", \"target_index\": \"reg-alias-chunks\", \"embed\": false}");
        call("PUT", "/reg-alias-000001", """
            {"settings": {"index.default_pipeline": "reg-alias"},
             "aliases": {"reg-alias-w": {"is_write_index": true}}}""");
        call("PUT", "/reg-alias-w/_doc/a?refresh=true", json(Map.of("body", text(1))));
        call("PUT", "/reg-alias-w/_doc/b?refresh=true", json(Map.of("body", text(2))));
        assertFalse(chunksOf("reg-alias-chunks", "a").isEmpty());
        int ofB = chunksOf("reg-alias-chunks", "b").size();

        call("DELETE", "/reg-alias-w/_doc/a?refresh=true");
        assertEquals("chunks of a deleted document", List.of(), chunksOf("reg-alias-chunks", "a"));
        assertEquals(ofB, chunksOf("reg-alias-chunks", "b").size());

        // deleting the concrete index takes its chunk index with it
        call("DELETE", "/reg-alias-000001");
        assertFalse("the chunk index went with its source index", indexExists("reg-alias-chunks"));
    }

    /**
     * A bulk of several documents runs its pipeline batched, and OpenSearch then records no pipeline in the ingest metadata:
     * the summary names none. Another pipeline whose templated target gives the same chunk index must not be taken for it.
     */
    public void testReconcile_whenAnotherPipelinesTemplateNamesTheSameChunkIndex_usesTheOneThatChunkedTheDocuments() throws Exception {
        for (String other : List.of("lc-two", "reg-two-body", "two-a", "two-b")) {
            putPipeline(other, "{\"field\": \"body\", \"target_index\": \"{{_index}}-chunks\", \"embed\": false}");
        }
        putPipeline("reg-two-obj", "{\"field\": \"doc.body\", \"target_index\": \"{{_index}}-chunks\", \"embed\": false, "
            + "\"strategy\": {\"type\": \"recursive\", \"max_words\": 20}}");
        assertReconcileClean("reg-two", writeObjects("reg-two", "reg-two-obj", 4));
    }

    /**
     * Processors after the chunking one, as pipeline authors combine them (ingest-common's): a {@code rename} or {@code remove}
     * of the chunked field (to store the text once, in the chunks), a {@code script} rewriting it, one dropping the summary.
     * Such a document used to be stored with chunks of a text it no longer held: its next {@code _update} failed on the missing
     * field, and {@code _reconcile} counted it stale and deleted its chunks. It is refused before anything is written, only
     * that item of a bulk; a {@code drop} or {@code fail} after the chunking processor leaves no chunks, and a chunking
     * processor called through a {@code pipeline} processor keeps its document's chunks in step (rewritten, deleted).
     */
    public void testProcessorsAfterTheChunkingOne_thatChangeTheStoredText_areRefusedPerItem_beforeAnythingIsWritten() throws Exception {
        Map<String, String> after = new LinkedHashMap<>();
        after.put("rename", "{\"rename\": {\"field\": \"body\", \"target_field\": \"content\", \"if\": \"ctx.tag == 'x'\"}}");
        after.put("remove", "{\"remove\": {\"field\": \"body\", \"if\": \"ctx.tag == 'x'\"}}");
        after.put("script", "{\"script\": {\"source\": \"if (ctx.tag == 'x') { ctx.body = ctx.body.toLowerCase() }\"}}");
        after.put("summary", "{\"remove\": {\"field\": \"strata\", \"if\": \"ctx.tag == 'x'\"}}");
        for (var e : after.entrySet()) {
            String index = "reg-after-" + e.getKey();
            call("PUT", "/_ingest/pipeline/" + index, "{\"processors\": [{\"multi_granular_chunking\": " + BODY_INTO_INDEX_CHUNKS
                + "}, " + e.getValue() + "]}");
            call("PUT", "/" + index, "{\"settings\": {\"index.default_pipeline\": \"" + index + "\"}}");
            Map<String, Object> r = bulk(index, index, new LinkedHashMap<>(Map.of("changed", Map.of("body", text(1), "tag", "x"),
                "kept", Map.of("body", text(2), "tag", "y"))));
            Map<String, Map<String, Object>> items = new java.util.HashMap<>();
            for (Object item : (List<Object>) r.get("items")) {
                Map<String, Object> written = (Map<String, Object>) ((Map<String, Object>) item).get("index");
                items.put((String) written.get("_id"), written);
            }
            assertEquals(e.getKey() + ": " + items, 400, items.get("changed").get("status"));
            String reason = String.valueOf(((Map<String, Object>) items.get("changed").get("error")).get("reason"));
            assertTrue(reason, reason.contains("chunked field [body] of document [changed]")
                && reason.contains("a processor after it in the pipeline changed the document"));
            assertEquals(e.getKey(), 201, items.get("kept").get("status"));
            assertEquals(e.getKey() + ": only the kept document is stored", 1, count(index));
            assertEquals(e.getKey(), List.of(), chunkTexts(index + "-chunks", "changed"));
            assertEquals(e.getKey(), parentsOf(text(2)), chunkTexts(index + "-chunks", "kept"));
            assertReconcileClean(index, parentsOf(text(2)).size());
        }
        // a later processor changing the _id or the _index: the chunks were lost (matched to the stored item by both)
        for (String[] c : List.of(
            new String[] {"id", "{\"set\": {\"field\": \"_id\", \"value\": \"renamed\", \"if\": \"ctx.tag == 'x'\"}}",
                "changed its _id to [renamed]"},
            new String[] {"index", "{\"set\": {\"field\": \"_index\", \"value\": \"reg-after-moved\", \"if\": \"ctx.tag == 'x'\"}}",
                "changed its _index from [reg-after-index] to [reg-after-moved]"})) {
            String index = "reg-after-" + c[0];
            call("PUT", "/_ingest/pipeline/" + index, "{\"processors\": [{\"multi_granular_chunking\": " + BODY_INTO_INDEX_CHUNKS
                + "}, " + c[1] + "]}");
            Map<String, Object> r = bulk(index, index, new LinkedHashMap<>(Map.of("changed", Map.of("body", text(1), "tag", "x"),
                "kept", Map.of("body", text(2), "tag", "y"))));
            List<Map<String, Object>> items = ((List<Object>) r.get("items")).stream()
                .map(i -> (Map<String, Object>) ((Map<String, Object>) i).get("index")).toList();
            Map<String, Object> changed = items.stream().filter(i -> !"kept".equals(i.get("_id"))).findFirst().orElseThrow();
            assertEquals(c[0] + ": " + items, 400, changed.get("status"));
            String reason = String.valueOf(((Map<String, Object>) changed.get("error")).get("reason"));
            assertTrue(reason, reason.contains("chunked field [body] of document [changed]") && reason.contains(c[2]));
            assertEquals(c[0], 1, count(index));
            assertEquals(c[0], parentsOf(text(2)), chunkTexts(index + "-chunks", "kept"));
        }
        // _reconcile of an index nothing was ever written to (no mapping yet): nothing to check, not a 400
        call("PUT", "/reg-after-empty", "{}");
        assertEquals(0, ((Number) call("POST", "/_plugins/_strata/_reconcile?index=reg-after-empty&dry_run=true").get("checked")).intValue());
        // drop and fail after the chunking processor: the document is not stored, and neither are its chunks
        for (String stop : List.of("{\"drop\": {\"if\": \"ctx.tag == 'x'\"}}", "{\"fail\": {\"message\": \"no\", \"if\": \"ctx.tag == 'x'\"}}")) {
            String index = stop.contains("drop") ? "reg-after-drop" : "reg-after-fail";
            call("PUT", "/_ingest/pipeline/" + index, "{\"processors\": [{\"multi_granular_chunking\": " + BODY_INTO_INDEX_CHUNKS
                + "}, " + stop + "]}");
            bulk(index, index, new LinkedHashMap<>(Map.of("changed", Map.of("body", text(1), "tag", "x"),
                "kept", Map.of("body", text(2), "tag", "y"))));
            assertEquals(index, List.of(), chunkTexts(index + "-chunks", "changed"));
            assertEquals(index, parentsOf(text(2)), chunkTexts(index + "-chunks", "kept"));
        }
        // through a pipeline processor: written, rewritten and deleted in step
        putPipeline("reg-inner", BODY_INTO_INDEX_CHUNKS);
        call("PUT", "/_ingest/pipeline/reg-outer", "{\"processors\": [{\"set\": {\"field\": \"seen\", \"value\": true}}, "
            + "{\"pipeline\": {\"name\": \"reg-inner\"}}]}");
        call("PUT", "/reg-nested", "{\"settings\": {\"index.default_pipeline\": \"reg-outer\"}}");
        call("PUT", "/reg-nested/_doc/a?refresh=true", json(Map.of("body", text(1))));
        assertEquals(parentsOf(text(1)), chunkTexts("reg-nested-chunks", "a"));
        call("PUT", "/reg-nested/_doc/a?refresh=true", json(Map.of("body", text(3))));
        assertEquals(parentsOf(text(3)), chunkTexts("reg-nested-chunks", "a"));
        call("DELETE", "/reg-nested/_doc/a?refresh=true");
        assertEquals(List.of(), chunkTexts("reg-nested-chunks", "a"));
    }

    /**
     * An index template whose pattern matches the source indices and, through the natural {@code {{_index}}-chunks} name,
     * their chunk indices too ({@code regtpl-*}), with the chunking pipeline as default: the chunk index inherited it, every
     * chunk write ran the chunking processor on a chunk document and failed ("field [body] is missing"), so nothing could
     * be written. Chunk indices are now created with pipelines off and chunk writes skip a default pipeline; a final
     * pipeline on a chunk index (which no write can skip) is a 400 naming the setting.
     */
    public void testATemplateMatchingTheChunkIndexToo_withAChunkingDefaultPipeline_chunkWritesRunNoPipeline() throws Exception {
        putPipeline("regtpl", BODY_INTO_INDEX_CHUNKS);
        call("PUT", "/_index_template/regtpl", "{\"index_patterns\": [\"regtpl-*\"], \"template\": {\"settings\": "
            + "{\"index.default_pipeline\": \"regtpl\"}}}");
        call("PUT", "/regtpl-1/_doc/a?refresh=true", json(Map.of("body", text(1))));
        assertEquals(parentsOf(text(1)), chunkTexts("regtpl-1-chunks", "a"));
        Map<String, Object> settings = (Map<String, Object>) ((Map<String, Object>) ((Map<String, Object>) call("GET",
            "/regtpl-1-chunks/_settings").get("regtpl-1-chunks")).get("settings")).get("index");
        assertEquals("_none", settings.get("default_pipeline"));
        call("PUT", "/regtpl-1/_doc/a?refresh=true", json(Map.of("body", text(2))));
        assertEquals(parentsOf(text(2)), chunkTexts("regtpl-1-chunks", "a"));
        assertReconcileClean("regtpl-1", parentsOf(text(2)).size());
        // a chunk index made by hand before the first write: its default pipeline is skipped, a final one refused
        call("PUT", "/regtpl-2-chunks", "{\"settings\": {\"index.default_pipeline\": \"regtpl\"}}");
        call("PUT", "/regtpl-2/_doc/a?refresh=true", json(Map.of("body", text(1))));
        assertEquals(parentsOf(text(1)), chunkTexts("regtpl-2-chunks", "a"));
        call("PUT", "/regtpl-3-chunks", "{\"settings\": {\"index.final_pipeline\": \"regtpl\"}}");
        ResponseException e = callFailing("PUT", "/regtpl-3/_doc/a?refresh=true", json(Map.of("body", text(1))));
        assertEquals(400, e.getResponse().getStatusLine().getStatusCode());
        assertTrue(e.getMessage(), e.getMessage().contains("[target_index] [regtpl-3-chunks] has [index.final_pipeline] [regtpl]"));
        assertFalse("nothing written", indexExists("regtpl-3") && count("regtpl-3") > 0);
    }

    /**
     * A template that gives every matching index an alias ({@code regtal-*} → {@code regtal-all}) also gave it to the chunk
     * index it matched: plain searches of the alias returned chunk documents among the documents. Creating such a chunk index
     * is a 400 naming the alias and a name outside the pattern, with which searches of the alias see documents only.
     */
    public void testATemplateAliasOfTheSourceIndex_isNotGivenToItsChunkIndex() throws Exception {
        putPipeline("regtal", BODY_INTO_INDEX_CHUNKS);
        call("PUT", "/_index_template/regtal", "{\"index_patterns\": [\"regtal-*\"], \"template\": {\"settings\": "
            + "{\"index.default_pipeline\": \"regtal\"}, \"aliases\": {\"regtal-all\": {}}}}");
        ResponseException e = callFailing("PUT", "/regtal-1/_doc/a?refresh=true", json(Map.of("body", text(1))));
        assertEquals(400, e.getResponse().getStatusLine().getStatusCode());
        assertTrue(e.getMessage(), e.getMessage().contains("[target_index] [regtal-1-chunks] would get the aliases [regtal-all] of its "
            + "source index [regtal-1]"));
        assertFalse(indexExists("regtal-1-chunks"));
        putPipeline("regtal", BODY_INTO_INDEX_CHUNKS.replace("{{_index}}-chunks", "chunks-{{_index}}"));
        call("PUT", "/regtal-1/_doc/a?refresh=true", json(Map.of("body", text(1))));
        assertEquals(parentsOf(text(1)), chunkTexts("chunks-regtal-1", "a"));
        Map<String, Object> hits = (Map<String, Object>) call("POST", "/regtal-all/_search", "{\"query\": {\"match\": "
            + "{\"text\": \"Hartfield\"}}}").get("hits");
        assertEquals("no chunk document behind the alias", 0, ((Map<String, Object>) hits.get("total")).get("value"));
    }

    /** The parent texts {@code _chunk} cuts from {@code text} with recursive θ = 20 words (the pipelines' options here). */
    private static List<String> parentsOf(String text) throws Exception {
        List<String> out = new java.util.ArrayList<>();
        for (Object p : (List<Object>) call("POST", "/_plugins/_strata/_chunk", json(Map.of("text", text, "strategy",
            Map.of("type", "recursive", "max_words", 20)))).get("parents")) {
            out.add((String) ((Map<String, Object>) p).get("text"));
        }
        return out;
    }

    private static List<Object> chunkTexts(String chunkIndex, String sourceId) throws Exception {
        return chunksOf(chunkIndex, sourceId).stream().map(c -> c.get("text")).toList();
    }

    /**
     * A data stream created by its first write, with the natural {@code {{_index}}-chunks} target and a template pattern
     * ({@code regds-*}) that the stream's own name plus {@code -chunks} matches: the pipeline used to name the chunk index
     * after the stream, which the data-stream template refused to create as an index, so every first write failed (and with
     * a target the pattern did not match, an empty chunk index named after the stream was left serving nothing). Chunks go
     * beside the backing index the document lands in, from the first write on and across a rollover.
     */
    public void testADataStream_createdByItsFirstWrite_keepsChunksBesideEachBackingIndex() throws Exception {
        putPipeline("reg-ds", "{\"field\": \"message\", \"target_index\": \"{{_index}}-chunks\", \"embed\": false, "
            + "\"strategy\": {\"type\": \"recursive\", \"max_words\": 20}}");
        call("PUT", "/_index_template/reg-ds", """
            {"index_patterns": ["regds-*"], "data_stream": {}, "template": {"settings": {"index.default_pipeline": "reg-ds"}}}""");
        Map<String, Object> first = call("POST", "/regds-app/_doc?refresh=true",
            json(Map.of("@timestamp", "2026-11-27T00:00:00Z", "message", text(1))));
        assertEquals(".ds-regds-app-000001", first.get("_index"));
        String id1 = (String) first.get("_id");
        assertEquals(parentsOf(text(1)), chunkTexts(".ds-regds-app-000001-chunks", id1));
        assertFalse("no chunk index named after the stream", indexExists("regds-app-chunks"));

        call("POST", "/regds-app/_rollover");
        Map<String, Object> second = call("POST", "/regds-app/_doc?refresh=true",
            json(Map.of("@timestamp", "2026-11-27T00:01:00Z", "message", text(2))));
        assertEquals(".ds-regds-app-000002", second.get("_index"));
        String id2 = (String) second.get("_id");
        assertEquals(parentsOf(text(2)), chunkTexts(".ds-regds-app-000002-chunks", id2));
        assertEquals(List.of(), chunkTexts(".ds-regds-app-000001-chunks", id2));
        assertReconcileClean(".ds-regds-app-000001", parentsOf(text(1)).size());
        assertReconcileClean(".ds-regds-app-000002", parentsOf(text(2)).size());

        // a document of the stream is deleted through its backing index (OpenSearch has no delete by id on a stream)
        call("DELETE", "/.ds-regds-app-000001/_doc/" + id1 + "?refresh=true");
        assertEquals(List.of(), chunkTexts(".ds-regds-app-000001-chunks", id1));
        call("DELETE", "/_data_stream/regds-app");
        // the janitor deletes them once the stream's deletion is applied (a cluster-state listener, not the delete request)
        assertBusy(() -> {
            assertFalse("the chunk indices went with the backing indices", indexExists(".ds-regds-app-000001-chunks"));
            assertFalse(indexExists(".ds-regds-app-000002-chunks"));
        });
    }

    /**
     * A source index and its chunk index restored from a snapshot (a backup brought back, or a move to a new cluster): the
     * restore gives both new UUIDs, and the chunk index stayed registered to the old one, so every write was refused ("holds
     * the chunks of index [regsnap] ..., which no longer exists"), a delete left its chunks and {@code _reconcile} saw no
     * chunk index. The restored pair now works as the original did.
     */
    public void testASnapshotRestoredPair_keepsItsChunksInStep_forWritesDeletesAndReconcile() throws Exception {
        pipedPair("regsnap");
        snapshotPair("reg-repo", "regsnap");
        call("DELETE", "/regsnap");
        assertBusy(() -> assertFalse(indexExists("regsnap-chunks")));
        call("POST", "/_snapshot/reg-repo/s1/_restore?wait_for_completion=true", "{\"indices\": \"regsnap,regsnap-chunks\"}");
        call("GET", "/_cluster/health/regsnap,regsnap-chunks?wait_for_status=yellow&timeout=60s");
        assertEquals(parentsOf(text(1)), chunkTexts("regsnap-chunks", "a"));

        // oracle: after each step the chunk index holds _chunk's parents of the stored text, and nothing else
        call("PUT", "/regsnap/_doc/b?refresh=true", json(Map.of("body", text(3))));
        assertEquals(parentsOf(text(3)), chunkTexts("regsnap-chunks", "b"));
        call("DELETE", "/regsnap/_doc/a?refresh=true");
        assertEquals(List.of(), chunkTexts("regsnap-chunks", "a"));
        assertReconcileClean("regsnap", parentsOf(text(3)).size());
        // still one pair: deleting the restored source takes its chunk index with it
        call("DELETE", "/regsnap");
        assertBusy(() -> assertFalse(indexExists("regsnap-chunks")));
    }

    /**
     * A clone (as a shrink or a split) copies the original's documents with their summaries, which name the original's
     * chunk index: the clone had no chunks of its own, and {@code _reconcile} of the clone found nothing missing (it
     * probed the original's chunks), so deleting the original left the clone without chunks. Now {@code _reconcile} of the
     * clone counts those documents missing and writes their chunks into the clone's own chunk index, never touching the
     * original's.
     */
    public void testReconcileOfAClone_givesItItsOwnChunks_andLeavesTheOriginals() throws Exception {
        putPipeline("reg-clone", BODY_INTO_INDEX_CHUNKS);
        call("PUT", "/regcl", "{\"settings\": {\"index.default_pipeline\": \"reg-clone\", \"number_of_shards\": 1}}");
        for (int i = 1; i <= 3; i++) {
            call("PUT", "/regcl/_doc/d" + i + "?refresh=true", json(Map.of("body", text(i))));
        }
        int originals = count("regcl-chunks");
        call("PUT", "/regcl/_settings", "{\"index.blocks.write\": true}");
        call("POST", "/regcl/_clone/regcl2", "{\"settings\": {\"index.blocks.write\": false}}");
        call("GET", "/_cluster/health/regcl2?wait_for_status=yellow&timeout=60s");

        Map<String, Object> dry = call("POST", "/_plugins/_strata/_reconcile?index=regcl2&dry_run=true");
        assertEquals(dry.toString(), 3, ((Number) dry.get("missing")).intValue());
        Map<String, Object> fix = call("POST", "/_plugins/_strata/_reconcile?index=regcl2");
        assertEquals(fix.toString(), 3, ((Number) fix.get("fixed")).intValue());
        for (int i = 1; i <= 3; i++) {
            assertEquals(parentsOf(text(i)), chunkTexts("regcl2-chunks", "d" + i));
            assertEquals("the original's chunks stay", parentsOf(text(i)), chunkTexts("regcl-chunks", "d" + i));
        }
        assertEquals(originals, count("regcl-chunks"));
        assertReconcileClean("regcl2", originals);

        // the clone no longer leans on the original: delete it, and the clone keeps its chunks
        call("DELETE", "/regcl");
        assertBusy(() -> assertFalse(indexExists("regcl-chunks")));
        assertReconcileClean("regcl2", originals);
    }

    /**
     * Production mappings are often strict ({@code "dynamic": "strict"}) or not dynamic ({@code "dynamic": false}). Strict:
     * every write failed with OpenSearch's "dynamic introduction of [strata] ... is not allowed", which names neither Strata
     * nor the remedy; now a 400 that gives the mapping to add, and with it the index works. Not dynamic: the summary is kept
     * in {@code _source} but not indexed, and {@code _reconcile} looked for documents by an exists query on it, so it checked
     * none and reported nothing missing while chunks were gone.
     */
    public void testStrictAndNonDynamicMappings_writeWithTheSummaryMapped_andReconcileChecksEveryDocument() throws Exception {
        putPipeline("reg-map", BODY_INTO_INDEX_CHUNKS);
        call("PUT", "/regstrict", """
            {"settings": {"index.default_pipeline": "reg-map"},
             "mappings": {"dynamic": "strict", "properties": {"body": {"type": "text"}}}}""");
        ResponseException refused = callFailing("PUT", "/regstrict/_doc/a?refresh=true", json(Map.of("body", text(1))));
        assertEquals(400, refused.getResponse().getStatusLine().getStatusCode());
        assertTrue(refused.getMessage(),
            refused.getMessage().contains("has a strict mapping (\\\"dynamic\\\": \\\"strict\\\") without field [strata]"));
        assertEquals("nothing written", 0, count("regstrict"));
        call("PUT", "/regstrict/_mapping", "{\"properties\": {\"strata\": {\"type\": \"object\", \"enabled\": false}}}");

        call("PUT", "/regnodyn", """
            {"settings": {"index.default_pipeline": "reg-map"},
             "mappings": {"dynamic": false, "properties": {"body": {"type": "text"}}}}""");
        for (String index : List.of("regstrict", "regnodyn")) {
            call("PUT", "/" + index + "/_doc/a?refresh=true", json(Map.of("body", text(1))));
            call("PUT", "/" + index + "/_doc/b?refresh=true", json(Map.of("body", text(2))));
            assertEquals(parentsOf(text(1)), chunkTexts(index + "-chunks", "a"));
            // a chunk lost behind the pipeline's back: _reconcile must find the document and bring it back
            call("DELETE", "/" + index + "-chunks/_doc/a:0?refresh=true");
            Map<String, Object> dry = call("POST", "/_plugins/_strata/_reconcile?index=" + index + "&dry_run=true");
            assertEquals(dry.toString(), 2, ((Number) dry.get("checked")).intValue());
            assertEquals(dry.toString(), 1, ((Number) dry.get("missing")).intValue());
            call("POST", "/_plugins/_strata/_reconcile?index=" + index);
            assertEquals(parentsOf(text(1)), chunkTexts(index + "-chunks", "a"));
            assertReconcileClean(index, parentsOf(text(1)).size() + parentsOf(text(2)).size());
        }
    }

    /**
     * A write naming its index by date math ({@code <regdm-{now/d}>}) through a chunking pipeline: {@code {{_index}}} was the
     * unresolved expression, so the write failed with "Invalid index name [<regdm-{now/d}>-chunks]". The chunks now go
     * beside the index the write lands in, and an update and a delete through the same name follow them.
     */
    public void testADateMathIndexName_chunksBesideTheIndexItResolvesTo() throws Exception {
        putPipeline("reg-dm", BODY_INTO_INDEX_CHUNKS);
        String dateMath = java.net.URLEncoder.encode("<regdm-{now/d}>", java.nio.charset.StandardCharsets.UTF_8);
        Map<String, Object> written = call("PUT", "/" + dateMath + "/_doc/a?pipeline=reg-dm&refresh=true", json(Map.of("body", text(1))));
        String index = (String) written.get("_index");
        assertTrue(index, index.startsWith("regdm-"));
        assertEquals(parentsOf(text(1)), chunkTexts(index + "-chunks", "a"));
        call("PUT", "/" + dateMath + "/_doc/a?pipeline=reg-dm&refresh=true", json(Map.of("body", text(2))));
        assertEquals(parentsOf(text(2)), chunkTexts(index + "-chunks", "a"));
        call("DELETE", "/" + dateMath + "/_doc/a?refresh=true");
        assertEquals(List.of(), chunkTexts(index + "-chunks", "a"));
    }

    /**
     * A pair restored under new names next to the live pair (rename_pattern, the usual way to inspect a backup): the copy
     * of the chunk index carried the live source's registration, so a write to the live source deleted the copy's chunks,
     * and {@code _reconcile} of the live source counted the copy's chunks as its orphans. Each pair now keeps to itself.
     */
    public void testARenamedRestoreNextToTheLivePair_keepsEachPairToItself() throws Exception {
        pipedPair("regren");
        snapshotPair("reg-ren-repo", "regren");
        call("POST", "/_snapshot/reg-ren-repo/s1/_restore?wait_for_completion=true",
            "{\"indices\": \"regren,regren-chunks\", \"rename_pattern\": \"regren(.*)\", \"rename_replacement\": \"regcopy$1\"}");
        call("GET", "/_cluster/health/regcopy,regcopy-chunks?wait_for_status=yellow&timeout=60s");

        // oracle: each pair holds _chunk's parents of its own stored text
        call("PUT", "/regren/_doc/a?refresh=true", json(Map.of("body", text(3))));
        assertEquals(parentsOf(text(3)), chunkTexts("regren-chunks", "a"));
        assertEquals("the copy keeps its chunks", parentsOf(text(1)), chunkTexts("regcopy-chunks", "a"));
        call("PUT", "/regcopy/_doc/b?refresh=true", json(Map.of("body", text(4))));
        assertEquals(parentsOf(text(4)), chunkTexts("regcopy-chunks", "b"));
        assertEquals(parentsOf(text(2)), chunkTexts("regren-chunks", "b"));
        Map<String, Object> live = call("POST", "/_plugins/_strata/_reconcile?index=regren&dry_run=true");
        assertEquals(live.toString(), List.of("regren-chunks"), live.get("chunk_indices"));
        assertReconcileClean("regren", parentsOf(text(3)).size() + parentsOf(text(2)).size());
        assertReconcileClean("regcopy", parentsOf(text(1)).size() + parentsOf(text(4)).size());

        call("DELETE", "/regcopy");
        assertBusy(() -> assertFalse(indexExists("regcopy-chunks")));
        assertEquals(parentsOf(text(3)), chunkTexts("regren-chunks", "a"));
    }

    /** The ids of the parents a lexical {@code multi_granular} query for {@code words} finds in {@code chunkIndex}. */
    private static List<Object> lexicalHits(String chunkIndex, String words) throws Exception {
        Map<String, Object> r = call("POST", "/" + chunkIndex + "/_search",
            json(Map.of("query", Map.of("multi_granular", Map.of("match", words, "k", 10)))));
        return ((List<Object>) ((Map<String, Object>) r.get("hits")).get("hits")).stream().map(h -> ((Map<String, Object>) h).get("_id"))
            .toList();
    }

    /**
     * A chunk index made by hand, or by an index template, with its own analyzer on the text fields (a language's, for the
     * lexical side): the processor put its plain definitions over them, which failed every write on the mapping conflict
     * ("Cannot update parameter [analyzer]"), and a template's analyzer was silently overridden. Now the index's (or the
     * template's) definitions are kept where the type agrees, and the lexical side searches with them: under a
     * whitespace analyzer, which does not lowercase, "Emma" finds the parents and "emma" none.
     */
    public void testAChunkIndexWithItsOwnAnalyzer_byHandOrByTemplate_keepsIt() throws Exception {
        String whitespace = "{\"type\": \"text\", \"analyzer\": \"whitespace\"}";
        String textFields = "{\"properties\": {\"text\": " + whitespace + ", \"children\": {\"type\": \"nested\", "
            + "\"properties\": {\"text\": " + whitespace + "}}}}";
        call("PUT", "/reghand-chunks", "{\"settings\": {\"index.knn\": true}, \"mappings\": " + textFields + "}");
        call("PUT", "/_index_template/reg-analyzer", "{\"index_patterns\": [\"regtpl-chunks\"], \"template\": {\"mappings\": "
            + textFields + "}}");
        for (String index : List.of("reghand", "regtpl")) {
            pipedPair(index);
            assertEquals(parentsOf(text(1)), chunkTexts(index + "-chunks", "a"));
            Map<String, Object> props = (Map<String, Object>) ((Map<String, Object>) ((Map<String, Object>) call("GET",
                "/" + index + "-chunks/_mapping").get(index + "-chunks")).get("mappings")).get("properties");
            assertEquals(props.toString(), "whitespace", ((Map<String, Object>) props.get("text")).get("analyzer"));
            assertEquals(props.toString(), "whitespace", ((Map<String, Object>) ((Map<String, Object>) ((Map<String, Object>)
                props.get("children")).get("properties")).get("text")).get("analyzer"));
            assertEquals(index, count(index + "-chunks"), lexicalHits(index + "-chunks", "Emma").size()); // every parent names her
            assertEquals(index, List.of(), lexicalHits(index + "-chunks", "emma"));
        }
    }
}
