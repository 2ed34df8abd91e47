package io.strata.it;

import org.opensearch.client.Request;
import org.opensearch.client.ResponseException;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The chunk lifecycle with custom routing: a source document is (concrete index, shard, {@code _id}), and with custom
 * routing one {@code _id} can live on two shards at once. A write, update or delete acts on the chunks of the document it
 * touched only. Oracle: per stored source document — read back from the source with its routing — {@code _chunk} of its
 * stored text; nothing for a deleted one; the chunk documents grouped by ({@code source_id}, {@code source_routing}).
 * Written first against the code before the fix: a {@code not_found} delete with another routing deleted every chunk of
 * the 8 documents ("their chunks stay expected:<16> but was:<0>"), one {@code _id} on two shards shared one set of chunk
 * ids (the second shard's write a 409: "holds chunks of [rt-b][x] with a version above the document's _seq_no [0]"), and
 * in a routing-required index the second copy of an {@code _id} took the first's chunks ("expected:<[1@blue, 1@green,
 * 2@green]> but was:<[1@green, 2@green]>"). The node kill with custom routing is in {@code bin/strata-chaos lifecycle}.
 */
@SuppressWarnings("unchecked")
public class RoutingLifecycleIT extends StrataRestTestCase {
    private static final String CHUNKING = "\"embed\": false, \"strategy\": {\"type\": \"recursive\", \"max_words\": 20}, "
        + "\"granularities\": [0.5]";

    private final Map<String, List<Object>> cut = new HashMap<>();

    private static String text(String tag, int sentences) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < sentences; i++) {
            b.append("In version ").append(tag).append(" sentence ").append(i).append(" Emma walks from Hartfield to Highbury today. ");
        }
        return b.toString().strip();
    }

    private static void pipeline(String name, String target) throws IOException {
        putPipeline(name, "{\"field\": \"body\", \"target_index\": \"" + target + "\", " + CHUNKING + "}");
    }

    /** The shard a routing value sends documents of {@code index} to. */
    private static int shardOf(String index, String routing) throws IOException {
        Map<String, Object> r = call("GET", "/" + index + "/_search_shards?routing=" + routing);
        List<List<Map<String, Object>>> shards = (List<List<Map<String, Object>>>) r.get("shards");
        assertEquals(r.toString(), 1, shards.size());
        return ((Number) shards.get(0).get(0).get("shard")).intValue();
    }

    /** Two routing values that send documents of {@code index} to different shards. */
    private static String[] twoShards(String index) throws IOException {
        String first = "blue";
        int shard = shardOf(index, first);
        for (String other : List.of("green", "red", "amber", "violet", "teal", "ochre", "cyan", "umber")) {
            if (shardOf(index, other) != shard) {
                return new String[] { first, other };
            }
        }
        throw new AssertionError("no second shard");
    }

    private List<Object> cutOf(String text) throws IOException {
        List<Object> known = cut.get(text);
        if (known == null) {
            known = cutByChunkApi(text, Map.of("type", "recursive", "max_words", 20), List.of(0.5));
            cut.put(text, known);
        }
        return known;
    }

    /**
     * The oracle: every document of {@code source} (found by a search, read back with its routing) has exactly the
     * chunks {@code _chunk} cuts from its stored text, and the chunk index holds nothing else.
     */
    private void check(String when, String source, String chunkIndex) throws IOException {
        refresh(source);
        Map<String, List<Object>> expected = new TreeMap<>();
        Map<String, Object> docs = call("POST", "/" + source + "/_search", "{\"size\": 1000}");
        for (Object hit : (List<Object>) ((Map<String, Object>) docs.get("hits")).get("hits")) {
            Map<String, Object> h = (Map<String, Object>) hit;
            Map<String, Object> stored = (Map<String, Object>) h.get("_source");
            if (stored.get("body") instanceof String body) {
                expected.put(h.get("_id") + "@" + h.get("_routing"), cutOf(body));
            }
        }
        Map<String, List<Map<String, Object>>> actual = new TreeMap<>();
        if (indexExists(chunkIndex)) {
            refresh(chunkIndex);
            Map<String, Object> r = call("POST", "/" + chunkIndex + "/_search",
                "{\"size\": 10000, \"_source\": {\"excludes\": [\"embedding\", \"children.embedding\"]}, "
                    + "\"sort\": [{\"source_id\": \"asc\"}, {\"ordinal\": \"asc\"}]}"); // children's texts too
            for (Object hit : (List<Object>) ((Map<String, Object>) r.get("hits")).get("hits")) {
                Map<String, Object> chunk = (Map<String, Object>) ((Map<String, Object>) hit).get("_source");
                actual.computeIfAbsent(chunk.get("source_id") + "@" + chunk.get("source_routing"), k -> new ArrayList<>()).add(chunk);
            }
        }
        assertEquals(when + ": the documents with chunks in [" + chunkIndex + "]", expected.keySet(), actual.keySet());
        for (var e : expected.entrySet()) {
            assertEquals(when + ": the chunks of [" + e.getKey() + "]", e.getValue(), chunkShape(actual.get(e.getKey())));
        }
    }

    private static void assertReconcileClean(String index) throws IOException {
        for (String dry : List.of("&dry_run=true", "")) {
            Map<String, Object> r = call("POST", "/_plugins/_strata/_reconcile?index=" + index + dry);
            for (String k : List.of("orphans", "missing", "stale", "duplicates", "fixed")) {
                assertEquals(k + " in " + r, 0, ((Number) r.get(k)).intValue());
            }
            assertEquals(r.toString(), List.of(), r.get("failures"));
        }
    }


    private static String body(String text) {
        return json(Map.of("body", text));
    }

    public void testADeleteWithAnotherRouting_answeredNotFound_leavesTheDocumentsAndTheirChunks() throws Exception {
        pipeline("rt-a", "rt-a-chunks");
        call("PUT", "/rt-a", "{\"settings\": {\"number_of_shards\": 3, \"index.default_pipeline\": \"rt-a\"}}");
        String[] routings = twoShards("rt-a");
        for (int i = 0; i < 8; i++) {
            call("PUT", "/rt-a/_doc/d" + i + "?routing=" + routings[0], body(text("a" + i, 2)));
        }
        call("POST", "/rt-a/_refresh");
        int chunks = count("rt-a-chunks");
        assertEquals(16, chunks);
        check("written", "rt-a", "rt-a-chunks");
        for (int i = 0; i < 8; i++) {
            ResponseException e = callFailing("DELETE", "/rt-a/_doc/d" + i + "?routing=" + routings[1] + "&refresh=true", null);
            assertEquals(404, e.getResponse().getStatusLine().getStatusCode());
            assertTrue(e.getMessage(), e.getMessage().contains("\"result\":\"not_found\""));
        }
        assertEquals("every source document stays", 8, count("rt-a"));
        assertEquals("their chunks stay", chunks, count("rt-a-chunks"));
        check("after not_found deletes", "rt-a", "rt-a-chunks");
        assertReconcileClean("rt-a");
    }

    public void testOneIdOnTwoShards_eachHasItsOwnChunks_throughWritesUpdatesDeletesAndReconcile() throws Exception {
        pipeline("rt-b", "rt-b-chunks");
        call("PUT", "/rt-b", "{\"settings\": {\"number_of_shards\": 3, \"index.default_pipeline\": \"rt-b\"}}");
        String[] r = twoShards("rt-b");
        // the first shard's sequence numbers run ahead of the second's: versions of one _id from two shards must not mix
        for (int i = 0; i < 6; i++) {
            call("PUT", "/rt-b/_doc/x?routing=" + r[0], body(text("first " + i, 3)));
        }
        call("PUT", "/rt-b/_doc/x?routing=" + r[1] + "&refresh=true", body(text("second", 1)));
        call("PUT", "/rt-b/_doc/y?refresh=true", body(text("unrouted", 2)));
        check("one id on two shards", "rt-b", "rt-b-chunks");
        assertReconcileClean("rt-b");

        update("/rt-b/_update/x?routing=" + r[1] + "&refresh=true", json(Map.of("doc", Map.of("body", text("second new", 4)))));
        check("updated on the second shard", "rt-b", "rt-b-chunks");
        Request bulk = new Request("POST", "/_bulk?refresh=true");
        bulk.setJsonEntity(json(Map.of("index", Map.of("_index", "rt-b", "_id", "x", "routing", r[0]))) + "\n"
            + body(text("first bulk", 2)) + "\n");
        assertEquals(false, entityAsMap(client().performRequest(bulk)).get("errors"));
        check("rewritten on the first shard", "rt-b", "rt-b-chunks");
        assertReconcileClean("rt-b");

        call("DELETE", "/rt-b/_doc/x?routing=" + r[1] + "&refresh=true");
        check("deleted on the second shard", "rt-b", "rt-b-chunks");
        assertEquals(1, ((Number) call("GET", "/rt-b/_count?q=_id:x").get("count")).intValue());
        assertReconcileClean("rt-b");
    }

    /**
     * {@code strata_context} over one {@code _id} stored on two shards: two documents, so every passage quotes one of them
     * (oracle: each passage's text is a span of exactly one stored text, and both documents are quoted).
     */
    public void testStrataContext_oneIdOnTwoShards_quotesEachDocumentApart() throws Exception {
        pipeline("rt-ctx", "rt-ctx-chunks");
        call("PUT", "/rt-ctx", "{\"settings\": {\"number_of_shards\": 3, \"index.default_pipeline\": \"rt-ctx\"}}");
        String[] r = twoShards("rt-ctx");
        String first = text("blue copy", 4);
        String second = text("green copy", 4);
        call("PUT", "/rt-ctx/_doc/x?routing=" + r[0], body(first));
        call("PUT", "/rt-ctx/_doc/x?routing=" + r[1] + "&refresh=true", body(second));
        refresh("rt-ctx-chunks");
        call("PUT", "/_search/pipeline/rt-ctx-context", "{\"response_processors\": [{\"strata_context\": {\"budget\": 2048}}]}");
        Map<String, Object> response = call("POST", "/rt-ctx-chunks/_search?search_pipeline=rt-ctx-context",
            "{\"size\": 100, \"query\": {\"match_all\": {}}}");
        Map<String, Object> context = (Map<String, Object>) ((Map<String, Object>) response.get("ext")).get("strata_context");
        List<Map<String, Object>> passages = (List<Map<String, Object>>) context.get("passages");
        boolean[] quoted = new boolean[2];
        for (Map<String, Object> p : passages) {
            String text = (String) p.get("text");
            boolean inFirst = first.contains(text);
            boolean inSecond = second.contains(text);
            assertTrue("a span of exactly one document: " + p, inFirst ^ inSecond);
            quoted[inFirst ? 0 : 1] = true;
        }
        assertTrue("both documents quoted: " + passages, quoted[0] && quoted[1]);
    }

    public void testARoutingRequiredIndex_indexUpdateDeleteAndReconcile() throws Exception {
        pipeline("rt-c", "rt-c-chunks");
        call("PUT", "/rt-c", "{\"settings\": {\"number_of_shards\": 3, \"index.default_pipeline\": \"rt-c\"}, "
            + "\"mappings\": {\"_routing\": {\"required\": true}}}");
        String[] r = twoShards("rt-c");
        call("PUT", "/rt-c/_doc/1?routing=" + r[0], body(text("c1", 3)));
        call("PUT", "/rt-c/_doc/1?routing=" + r[1], body(text("c1 elsewhere", 2)));
        call("PUT", "/rt-c/_doc/2?routing=" + r[1] + "&refresh=true", body(text("c2", 1)));
        check("routing required", "rt-c", "rt-c-chunks");

        ResponseException unrouted = callFailing("PUT", "/rt-c/_doc/3", body(text("c3", 1)));
        assertEquals(400, unrouted.getResponse().getStatusLine().getStatusCode());
        update("/rt-c/_update/1?routing=" + r[0] + "&refresh=true", json(Map.of("doc", Map.of("body", text("c1 new", 1)))));
        check("routed update", "rt-c", "rt-c-chunks");
        assertReconcileClean("rt-c");

        call("DELETE", "/rt-c/_doc/1?routing=" + r[0] + "&refresh=true");
        check("routed delete", "rt-c", "rt-c-chunks");
        assertReconcileClean("rt-c");

        // chunks deleted by hand behind the pipeline's back: _reconcile rewrites them with their routing
        call("POST", "/rt-c-chunks/_delete_by_query?refresh=true", "{\"query\": {\"match_all\": {}}}");
        Map<String, Object> fixed = call("POST", "/_plugins/_strata/_reconcile?index=rt-c");
        assertEquals(fixed.toString(), 2, ((Number) fixed.get("missing")).intValue());
        check("reconciled", "rt-c", "rt-c-chunks");
        assertReconcileClean("rt-c");
    }
}
