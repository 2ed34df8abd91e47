package io.strata.it;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * What a refresh made searchable in a source index is searchable as chunks at once: the "index, refresh, search" an
 * application (and every test suite) runs, and the refresh that {@code _update_by_query}, {@code _delete_by_query} and
 * {@code _reindex} send at their end with {@code refresh=true}; and {@code _reconcile}'s fixes are searchable when it
 * answers. Both indices refresh only when asked ({@code refresh_interval: -1}, as bulk loads set it; no replica, which its
 * recovery would refresh), so nothing here passes by the chunk index's own timer. Oracle: the same words matched on the
 * source index name the documents whose parents the {@code multi_granular} query must return.
 */
@SuppressWarnings("unchecked")
public class RefreshVisibilityIT extends StrataRestTestCase {
    private static final int DOCS = 12;

    private static String text(int doc) {
        return "Document tok" + doc + " tells how Emma walked from Hartfield to Highbury in the rain on a long afternoon. "
            + "She met Mr Knightley on the way, and tok" + doc + " ends with their talk of the harvest and the weather.";
    }

    /** {@code index} with a pipeline chunking {@code body} into {@code index-chunks} (θ 20 words, no vectors) as its default; both refresh only when asked. */
    private static void chunkedIndex(String index) throws Exception {
        call("PUT", "/_index_template/" + index + "-manual", "{\"index_patterns\": [\"" + index + "\", \"" + index + "-chunks\"], "
            + "\"template\": {\"settings\": {\"index.refresh_interval\": \"-1\", \"index.number_of_replicas\": 0}}}");
        putPipeline(index + "-pipeline", "{\"field\": \"body\", \"target_index\": \"{{_index}}-chunks\", \"embed\": false, "
            + "\"strategy\": {\"type\": \"recursive\", \"max_words\": 20}}");
        call("PUT", "/" + index, "{\"settings\": {\"index.default_pipeline\": \"" + index + "-pipeline\"}}");
    }

    /** Bulk-writes documents d1 … d{@link #DOCS} into {@code index} without a refresh. */
    private static void writeWithoutRefresh(String index) throws Exception {
        StringBuilder body = new StringBuilder();
        for (int i = 1; i <= DOCS; i++) {
            body.append(json(Map.of("index", Map.of("_index", index, "_id", "d" + i)))).append('\n');
            body.append(json(Map.of("body", text(i)))).append('\n');
        }
        org.opensearch.client.Request bulk = new org.opensearch.client.Request("POST", "/_bulk");
        bulk.setJsonEntity(body.toString());
        assertEquals(false, entityAsMap(client().performRequest(bulk)).get("errors"));
    }

    /** The ids of the source documents a {@code match} on {@code words} finds in {@code index} (what is searchable there now). */
    private static Set<String> sourceMatches(String index, String words) throws Exception {
        Map<String, Object> r = call("POST", "/" + index + "/_search",
            json(Map.of("size", 100, "_source", false, "query", Map.of("match", Map.of("body", words)))));
        Set<String> out = new TreeSet<>();
        for (Object hit : (List<Object>) ((Map<String, Object>) r.get("hits")).get("hits")) {
            out.add((String) ((Map<String, Object>) hit).get("_id"));
        }
        return out;
    }

    /** The source ids of the parents a lexical {@code multi_granular} query for {@code words} returns from {@code chunkIndex}. */
    private static Set<String> parentSources(String chunkIndex, String words) throws Exception {
        Map<String, Object> r = call("POST", "/" + chunkIndex + "/_search", json(Map.of("size", 1000, "_source", List.of("source_id"),
            "query", Map.of("multi_granular", Map.of("match", words, "k", 1000)))));
        Set<String> out = new TreeSet<>();
        for (Object hit : (List<Object>) ((Map<String, Object>) r.get("hits")).get("hits")) {
            out.add((String) ((Map<String, Object>) ((Map<String, Object>) hit).get("_source")).get("source_id"));
        }
        return out;
    }

    private static void assertSameDocuments(String index, String words, int expected) throws Exception {
        Set<String> oracle = sourceMatches(index, words);
        assertEquals("the source index's own answer for [" + words + "]: " + oracle, expected, oracle.size());
        assertEquals("parents for [" + words + "]", oracle, parentSources(index + "-chunks", words));
    }

    private static String ids(int from, int to) {
        StringBuilder b = new StringBuilder();
        for (int i = from; i <= to; i++) {
            b.append(b.isEmpty() ? "" : ", ").append("\"d").append(i).append('"');
        }
        return "[" + b + "]";
    }

    public void testARefreshOfTheSourceIndex_makesItsChunksSearchable() throws Exception {
        chunkedIndex("rv-src");
        writeWithoutRefresh("rv-src");
        call("POST", "/rv-src/_refresh");
        assertSameDocuments("rv-src", "Highbury", DOCS);
        assertSameDocuments("rv-src", "tok3", 1);
    }

    public void testUpdateAndDeleteByQuery_withRefresh_showTheirChunkChangesAtOnce() throws Exception {
        chunkedIndex("rv-byq");
        writeWithoutRefresh("rv-byq");
        call("POST", "/rv-byq/_refresh");
        Map<String, Object> updated = call("POST", "/rv-byq/_update_by_query?refresh=true", "{\"query\": {\"terms\": {\"_id\": "
            + ids(1, 4) + "}}, \"script\": {\"source\": \"ctx._source.body = ctx._source.body + ' A zeppelin crossed the sky.'\"}}");
        assertEquals(updated.toString(), 4, ((Number) updated.get("updated")).intValue());
        assertSameDocuments("rv-byq", "zeppelin", 4);
        Map<String, Object> deleted = call("POST", "/rv-byq/_delete_by_query?refresh=true",
            "{\"query\": {\"terms\": {\"_id\": " + ids(1, 6) + "}}}");
        assertEquals(deleted.toString(), 6, ((Number) deleted.get("deleted")).intValue());
        assertSameDocuments("rv-byq", "Highbury", DOCS - 6);
        assertSameDocuments("rv-byq", "zeppelin", 0);
    }

    public void testReindexWithRefresh_intoAChunkedIndex_makesItsChunksSearchable() throws Exception {
        StringBuilder body = new StringBuilder();
        for (int i = 1; i <= DOCS; i++) {
            body.append(json(Map.of("index", Map.of("_index", "rv-plain", "_id", "d" + i)))).append('\n');
            body.append(json(Map.of("body", text(i)))).append('\n');
        }
        org.opensearch.client.Request bulk = new org.opensearch.client.Request("POST", "/_bulk?refresh=true");
        bulk.setJsonEntity(body.toString());
        assertEquals(false, entityAsMap(client().performRequest(bulk)).get("errors"));
        chunkedIndex("rv-dest");
        Map<String, Object> r = call("POST", "/_reindex?refresh=true", "{\"source\": {\"index\": \"rv-plain\"}, \"dest\": {\"index\": \"rv-dest\"}}");
        assertEquals(r.toString(), DOCS, ((Number) r.get("created")).intValue());
        assertSameDocuments("rv-dest", "Highbury", DOCS);
    }

    public void testReconcile_fixesMissingChunks_searchableWhenItAnswers() throws Exception {
        chunkedIndex("rv-rec");
        writeWithoutRefresh("rv-rec");
        call("POST", "/rv-rec,rv-rec-chunks/_refresh"); // both named: this test is about _reconcile alone
        // chunks lost behind the node's back
        Map<String, Object> lost = call("POST", "/rv-rec-chunks/_delete_by_query?refresh=true",
            "{\"query\": {\"terms\": {\"source_id\": " + ids(1, 3) + "}}}");
        assertTrue(lost.toString(), ((Number) lost.get("deleted")).intValue() >= 3);
        assertEquals(Set.of("d4", "d5", "d6", "d7", "d8", "d9", "d10", "d11", "d12"), parentSources("rv-rec-chunks", "Highbury"));
        Map<String, Object> report = call("POST", "/_plugins/_strata/_reconcile?index=rv-rec");
        assertTrue(report.toString(), ((Number) report.get("fixed")).intValue() >= 3);
        assertSameDocuments("rv-rec", "Highbury", DOCS);
    }
}
