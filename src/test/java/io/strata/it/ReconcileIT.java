package io.strata.it;

import org.opensearch.client.ResponseException;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code POST _plugins/_strata/_reconcile} finds exactly the drift made on purpose on the real cluster — orphan, missing,
 * stale and duplicate chunks — fixes it, and leaves the chunks the pipeline would write.
 */
@SuppressWarnings("unchecked")
public class ReconcileIT extends StrataRestTestCase {
    private static final String SOURCE = "rec-src";
    private static final String CHUNKS = "rec-src-chunks";
    private static final String PATH = "/_plugins/_strata/_reconcile?index=" + SOURCE;

    private static String text(int doc, String variant) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < 6; i++) {
            b.append("Document ").append(doc).append(' ').append(variant).append(" sentence ").append(i)
                .append(" talks about Highbury, Hartfield and the weather in Surrey for a while. ");
        }
        return b.toString().strip();
    }

    public void testReconcile_findsTheDriftMadeOnPurpose_andFixesItToWhatThePipelineWrites() throws Exception {
        putPipeline("rec", "{\"field\": \"body\", \"target_index\": \"" + CHUNKS + "\", "
            + "\"strategy\": {\"type\": \"recursive\", \"max_words\": 30}, \"granularities\": [0.5]}");
        Map<String, Map<String, Object>> docs = new LinkedHashMap<>();
        for (int i = 1; i <= 8; i++) {
            docs.put("d" + i, Map.of("body", text(i, "first"), "title", "doc " + i));
        }
        Map<String, Object> bulk = bulk(SOURCE, "rec", docs);
        assertEquals(bulk.toString(), false, bulk.get("errors"));
        int parents = chunksOf(CHUNKS, "d1").size();
        assertTrue("several parents per document at θ = 30: " + parents, parents >= 3);

        Map<String, Object> clean = call("POST", PATH + "&dry_run=true");
        assertCounts(clean, 8, 0, 0, 0, 0, 0);
        assertEquals(List.of(CHUNKS), clean.get("chunk_indices"));

        // drift as a crash leaves it: each chunk keeps its version (the source's _seq_no) — a hand edit without
        // version_type=external_gte would raise it above the source's, which reconcile reports instead of overwriting
        // missing: one chunk of d1, every chunk of d2
        deleteKeepingVersion("d1:1");
        for (int i = 0; i < parents; i++) {
            deleteKeepingVersion("d2:" + i);
        }
        // orphans: chunks of a source document that does not exist
        for (int i = 0; i < 2; i++) {
            call("PUT", "/" + CHUNKS + "/_doc/ghost:" + i, json(Map.of("source_id", "ghost", "source_index", SOURCE, "ordinal", i,
                "text", "boo", "start", 0, "end", 3)));
        }
        // d3's text changed by a write that ran no pipeline but kept the summary: the bulk filter re-chunks it at once, so it
        // is in step; stale: a chunk of d4 cut from another text
        Map<String, Object> d3 = (Map<String, Object>) call("GET", "/" + SOURCE + "/_doc/d3").get("_source");
        Map<String, Object> edited = new LinkedHashMap<>(d3);
        edited.put("body", text(3, "second, much longer and rewritten") + " " + text(3, "appendix"));
        call("PUT", "/" + SOURCE + "/_doc/d3?pipeline=_none", json(edited));
        Map<String, Object> d4 = call("GET", "/" + CHUNKS + "/_doc/d4:0");
        Map<String, Object> d40 = (Map<String, Object>) d4.get("_source");
        Map<String, Object> crashed = new LinkedHashMap<>(d40);
        crashed.put("source_hash", "00000000000000000000000000000000");
        crashed.put("text", "a text that was never stored");
        call("PUT", "/" + CHUNKS + "/_doc/d4:0?version_type=external_gte&version=" + d4.get("_version"), json(crashed));
        // duplicate: an ordinal beyond d5's parents
        Map<String, Object> extra = new LinkedHashMap<>(d40);
        extra.put("source_id", "d5");
        extra.put("ordinal", parents + 3);
        call("PUT", "/" + CHUNKS + "/_doc/d5:" + (parents + 3), json(extra));
        // not processed by a pipeline: not checked, not touched
        call("PUT", "/" + SOURCE + "/_doc/plain?pipeline=_none", json(Map.of("body", "No chunks for me.")));

        Map<String, Object> dry = call("POST", PATH + "&dry_run=true");
        assertCounts(dry, 8, 2, 2, 1, 1, 0);
        assertEquals(true, dry.get("dry_run"));
        assertEquals("a dry run writes nothing", dry, withoutTook(call("POST", PATH + "&dry_run=true"), dry));

        Map<String, Object> fix = call("POST", PATH);
        assertCounts(fix, 8, 2, 2, 1, 1, 2 + 1 + 3);
        assertEquals(false, fix.get("dry_run"));
        assertEquals(List.of(), fix.get("failures"));

        assertCounts(call("POST", PATH + "&dry_run=true"), 8, 0, 0, 0, 0, 0);
        assertEquals(0, count(CHUNKS) - countWhere("source_id", "d"));

        // the chunks and summaries equal what the pipeline writes for the stored texts
        for (int i = 1; i <= 8; i++) {
            Map<String, Object> source = (Map<String, Object>) call("GET", "/" + SOURCE + "/_doc/d" + i).get("_source");
            Map<String, Object> simulated = simulate((String) source.get("body"));
            List<Map<String, Object>> expected = (List<Map<String, Object>>) simulated.get("chunks");
            List<Map<String, Object>> actual = chunksOf(CHUNKS, "d" + i);
            assertEquals("d" + i, shape(expected), shape(actual));
            Map<String, Object> summary = (Map<String, Object>) source.get("strata");
            assertEquals("d" + i, simulated.get("parents"), summary.get("parents"));
            assertEquals("d" + i, simulated.get("children"), summary.get("children"));
            for (Map<String, Object> chunk : actual) {
                assertEquals(summary.get("source_hash"), chunk.get("source_hash"));
                assertNotNull("rewritten chunks are embedded", chunk.get("embedding"));
            }
        }
        Map<String, Object> plain = (Map<String, Object>) call("GET", "/" + SOURCE + "/_doc/plain").get("_source");
        assertEquals(Map.of("body", "No chunks for me."), plain);
    }

    /**
     * A batched bulk runs its pipeline without naming it in the ingest metadata, and the summary used to name none; a write
     * without a pipeline then re-chunked the document with the first pipeline that agreed on field, strategy and target,
     * whatever its θ. The summary now names the pipeline that chunked it, and the re-chunking and {@code _reconcile} use it
     * (oracle: {@code _chunk} with that pipeline's options).
     */
    public void testABulkChunkedDocument_isRechunkedByItsOwnPipeline_notAnotherThatAgreesOnFieldAndTarget() throws Exception {
        String options = "\"field\": \"body\", \"target_index\": \"{{_index}}-chunks\", \"embed\": false, \"granularities\": [0.5], "
            + "\"strategy\": {\"type\": \"recursive\", \"max_words\": ";
        for (String other : List.of("rp-0", "rp-1", "rp-2", "rp-z")) { // other pipelines before and after it, by name
            putPipeline(other, "{" + options + "12}}");
        }
        putPipeline("rp-own", "{" + options + "30}}");
        Map<String, Map<String, Object>> docs = new LinkedHashMap<>();
        for (int i = 1; i <= 4; i++) {
            docs.put("d" + i, Map.of("body", text(i, "first")));
        }
        assertEquals(false, bulk("rp-src", "rp-own", docs).get("errors"));
        for (String id : docs.keySet()) {
            Map<String, Object> summary = (Map<String, Object>) ((Map<String, Object>) call("GET", "/rp-src/_doc/" + id).get("_source"))
                .get("strata");
            assertEquals(id + ": " + summary, "rp-own", summary.get("pipeline"));
        }
        String body = text(1, "second, much longer and rewritten") + " " + text(1, "appendix");
        Map<String, Object> edited = new LinkedHashMap<>((Map<String, Object>) call("GET", "/rp-src/_doc/d1").get("_source"));
        edited.put("body", body);
        call("PUT", "/rp-src/_doc/d1?pipeline=_none&refresh=true", json(edited)); // keeps the summary: re-chunked by the filter
        List<String> expected = new ArrayList<>();
        for (Object p : (List<Object>) call("POST", "/_plugins/_strata/_chunk", json(Map.of("text", body, "strategy",
            Map.of("type", "recursive", "max_words", 30), "granularities", List.of(0.5)))).get("parents")) {
            expected.add((String) ((Map<String, Object>) p).get("text"));
        }
        assertEquals(expected, chunksOf("rp-src-chunks", "d1").stream().map(c -> c.get("text")).toList());
        Map<String, Object> report = call("POST", "/_plugins/_strata/_reconcile?index=rp-src&dry_run=true");
        assertEquals(report.toString(), 0, report.get("stale"));
        assertEquals(report.toString(), 0, report.get("missing"));
    }

    /**
     * What a chunk writer that dies mid-sweep leaves ({@code ChunkCommit}): its delete of the id past its chunks done, the
     * older version's chunks beyond that id not. A later rewrite of the same count stops its sweep at that id, so the older
     * chunks stay; {@code _reconcile} finds them as duplicates (ordinals at or beyond the summary's {@code parents}) and
     * deletes them, leaving what {@code _chunk} cuts from the stored text.
     */
    public void testAWriterThatDiedMidSweep_leavesOlderChunksPastTheFirstId_whichReconcileDeletes() throws Exception {
        String strategy = "{\"type\": \"recursive\", \"max_words\": 12}";
        putPipeline("rc-crash", "{\"field\": \"body\", \"target_index\": \"rc-crash-chunks\", \"embed\": false, "
            + "\"granularities\": [0.5], \"strategy\": " + strategy + "}");
        StringBuilder longer = new StringBuilder();
        for (int i = 0; i < 8; i++) {
            longer.append("Sentence ").append(i).append(" of the first version walks from Hartfield to Highbury. ");
        }
        call("PUT", "/rc-crash/_doc/c?pipeline=rc-crash&refresh=true", json(Map.of("body", longer.toString().strip())));
        List<Map<String, Object>> older = chunksOf("rc-crash-chunks", "c");
        String shorter = "The second version is short. It walks to Randalls.";
        call("PUT", "/rc-crash/_doc/c?pipeline=rc-crash&refresh=true", json(Map.of("body", shorter)));
        int n = chunksOf("rc-crash-chunks", "c").size();
        assertTrue("older " + older.size() + ", newer " + n, older.size() >= n + 3);

        // the crash: ids n+1 … of the older version stay. They are put back at the rewrite's version, which its tombstones hold
        Object version = call("GET", "/rc-crash-chunks/_doc/c:0").get("_version");
        for (int i = n + 1; i < older.size(); i++) {
            call("PUT", "/rc-crash-chunks/_doc/c:" + i + "?version_type=external_gte&version=" + version, json(older.get(i)));
        }
        int left = older.size() - n - 1;
        // a later rewrite of the same count deletes id n (absent) and stops there
        String third = "The third version is short. It walks to Donwell.";
        call("PUT", "/rc-crash/_doc/c?pipeline=rc-crash&refresh=true", json(Map.of("body", third)));
        assertEquals(n + left, chunksOf("rc-crash-chunks", "c").size());

        Map<String, Object> dry = call("POST", "/_plugins/_strata/_reconcile?index=rc-crash&dry_run=true");
        assertEquals(dry.toString(), left, dry.get("duplicates"));
        Map<String, Object> fix = call("POST", "/_plugins/_strata/_reconcile?index=rc-crash");
        assertEquals(fix.toString(), left, fix.get("fixed"));
        List<String> expected = new ArrayList<>();
        for (Object p : (List<Object>) call("POST", "/_plugins/_strata/_chunk", json(Map.of("text", third, "strategy",
            Map.of("type", "recursive", "max_words", 12), "granularities", List.of(0.5)))).get("parents")) {
            expected.add((String) ((Map<String, Object>) p).get("text"));
        }
        assertEquals(expected, chunksOf("rc-crash-chunks", "c").stream().map(c -> c.get("text")).toList());
    }

    public void testReconcile_badIndex_answers4xxNamingIt() throws Exception {
        ResponseException e = callFailing("POST", "/_plugins/_strata/_reconcile", null);
        assertEquals(400, e.getResponse().getStatusLine().getStatusCode());
        assertTrue(e.getMessage(), e.getMessage().contains("[_reconcile] needs [index]"));

        e = callFailing("POST", "/_plugins/_strata/_reconcile?index=no-such-index", null);
        assertEquals(404, e.getResponse().getStatusLine().getStatusCode());
        assertTrue(e.getMessage(), e.getMessage().contains("no-such-index"));

        putPipeline("rec-bad", "{\"field\": \"body\", \"target_index\": \"rec-bad-chunks\", \"embed\": false}");
        call("PUT", "/rec-bad/_doc/1?pipeline=rec-bad&refresh=true", "{\"body\": \"Some text.\"}");
        e = callFailing("POST", "/_plugins/_strata/_reconcile?index=rec-bad-chunks", null);
        assertEquals(400, e.getResponse().getStatusLine().getStatusCode());
        assertTrue(e.getMessage(), e.getMessage().contains("[rec-bad-chunks] is a chunk index; reconcile its source index [rec-bad]"));

        // an alias names its indices, so that the caller can name the one to reconcile
        call("POST", "/_aliases", "{\"actions\": [{\"add\": {\"index\": \"rec-bad\", \"alias\": \"rec-alias\"}}]}");
        e = callFailing("POST", "/_plugins/_strata/_reconcile?index=rec-alias", null);
        assertEquals(400, e.getResponse().getStatusLine().getStatusCode());
        assertTrue(e.getMessage(), e.getMessage().contains("got [rec-alias], alias of [rec-bad]: reconcile each by its own name"));
        e = callFailing("POST", "/_plugins/_strata/_reconcile?index=rec-*", null);
        assertEquals(400, e.getResponse().getStatusLine().getStatusCode());
        assertTrue(e.getMessage(), e.getMessage().contains("must name one source index, got [rec-*]"));
    }

    /** Deletes a chunk with its own version, as Strata's versioned deletes do. */
    private static void deleteKeepingVersion(String chunkId) throws Exception {
        Object version = call("GET", "/" + CHUNKS + "/_doc/" + chunkId).get("_version");
        call("DELETE", "/" + CHUNKS + "/_doc/" + chunkId + "?version_type=external_gte&version=" + version);
    }

    private static void assertCounts(Map<String, Object> r, int checked, int orphans, int missing, int stale, int duplicates,
                                     int fixed) {
        String all = r.toString();
        assertEquals(all, SOURCE, r.get("source_index"));
        assertEquals(all, checked, r.get("checked"));
        assertEquals(all, orphans, r.get("orphans"));
        assertEquals(all, missing, r.get("missing"));
        assertEquals(all, stale, r.get("stale"));
        assertEquals(all, duplicates, r.get("duplicates"));
        assertEquals(all, fixed, r.get("fixed"));
    }

    private static Map<String, Object> withoutTook(Map<String, Object> r, Map<String, Object> like) {
        Map<String, Object> out = new LinkedHashMap<>(r);
        out.put("took_ms", like.get("took_ms"));
        return out;
    }

    private static int countWhere(String field, String prefix) throws Exception {
        Map<String, Object> r = call("POST", "/" + CHUNKS + "/_count", "{\"query\": {\"prefix\": {\"" + field + "\": \"" + prefix + "\"}}}");
        return ((Number) r.get("count")).intValue();
    }

    private static Map<String, Object> simulate(String body) throws Exception {
        Map<String, Object> r = call("POST", "/_ingest/pipeline/rec/_simulate",
            json(Map.of("docs", List.of(Map.of("_index", SOURCE, "_id", "x", "_source", Map.of("body", body))))));
        Map<String, Object> doc = (Map<String, Object>) ((Map<String, Object>) ((List<Object>) r.get("docs")).get(0)).get("doc");
        return (Map<String, Object>) ((Map<String, Object>) doc.get("_source")).get("strata");
    }

    /** What must match: ordinals, texts, offsets, and the children's levels, texts and offsets. */
    private static List<Object> shape(List<Map<String, Object>> chunks) {
        List<Object> out = new ArrayList<>();
        for (Map<String, Object> c : chunks) {
            List<Object> children = new ArrayList<>();
            for (Map<String, Object> child : (List<Map<String, Object>>) c.get("children")) {
                if ((Integer) child.get("level") == 0) {
                    continue; // the parent's own level-0 vector entry (format 2): not a chunk of the chunking
                }
                children.add(List.of(child.get("level"), child.get("ordinal"), child.get("text"), child.get("start"), child.get("end")));
            }
            out.add(List.of(c.get("ordinal"), c.get("text"), c.get("start"), c.get("end"), children));
        }
        return out;
    }
}
