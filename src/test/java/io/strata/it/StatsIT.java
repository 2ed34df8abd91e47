package io.strata.it;

import io.strata.chunking.TestTexts;
import org.opensearch.client.ResponseException;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * {@code GET _plugins/_strata/stats} on the real cluster. Counters are per node and since start, and the REST client
 * round-robins over the nodes, so every check compares sums over all nodes before and after.
 */
@SuppressWarnings("unchecked")
public class StatsIT extends StrataRestTestCase {
    private static final String MODEL = "inference.models.e5-small-v2-q.";

    /** Every counter summed over the nodes, by dotted path ({@code ingest.failures.bad_input}); booleans count as 0/1. */
    private static Map<String, Long> summed() throws Exception {
        Map<String, Object> r = call("GET", "/_plugins/_strata/stats");
        Map<String, Object> header = (Map<String, Object>) r.get("_nodes");
        assertEquals("every node answered: " + r, header.get("total"), header.get("successful"));
        Map<String, Long> sums = new TreeMap<>();
        for (Object node : ((Map<String, Object>) r.get("nodes")).values()) {
            add(sums, "", (Map<String, Object>) node);
        }
        return sums;
    }

    private static void add(Map<String, Long> sums, String prefix, Map<String, Object> values) {
        for (Map.Entry<String, Object> e : values.entrySet()) {
            String key = prefix + e.getKey();
            if (e.getValue() instanceof Map<?, ?> m) {
                add(sums, key + ".", (Map<String, Object>) m);
            } else if (e.getValue() instanceof Number n) {
                sums.merge(key, n.longValue(), Long::sum);
            } else if (e.getValue() instanceof Boolean b) {
                sums.merge(key, b ? 1L : 0L, Long::sum);
            }
        }
    }

    /** Tasks completed by thread pool {@code pool}, summed over the nodes. */
    private static long tasksCompleted(String pool) throws Exception {
        long sum = 0;
        for (Object node : ((Map<String, Object>) call("GET", "/_nodes/stats/thread_pool").get("nodes")).values()) {
            Map<String, Object> stats = (Map<String, Object>) ((Map<String, Object>) ((Map<String, Object>) node).get("thread_pool")).get(pool);
            assertNotNull("no thread pool [" + pool + "]", stats);
            sum += ((Number) stats.get("completed")).longValue();
        }
        return sum;
    }

    private static long delta(Map<String, Long> before, Map<String, Long> after, String key) {
        return after.getOrDefault(key, 0L) - before.getOrDefault(key, 0L);
    }

    private static int summary(String index, String id, String field) throws Exception {
        Map<String, Object> source = (Map<String, Object>) call("GET", "/" + index + "/_doc/" + id).get("_source");
        return ((Number) ((Map<String, Object>) source.get("strata")).get(field)).intValue();
    }

    public void testResponse_hasEveryNodeWithItsSections_andFiltersByNode() throws Exception {
        Map<String, Object> r = call("GET", "/_plugins/_strata/stats");
        assertNotNull(r.get("cluster_name"));
        Map<String, Object> nodes = (Map<String, Object>) r.get("nodes");
        assertEquals(((Map<String, Object>) r.get("_nodes")).get("total"), nodes.size());
        assertTrue("the IT cluster has 2 nodes: " + nodes.keySet(), nodes.size() >= 2);
        String id = nodes.keySet().iterator().next();
        Map<String, Object> node = (Map<String, Object>) nodes.get(id);
        assertNotNull(node.get("name"));
        Map<String, Object> ingest = (Map<String, Object>) node.get("ingest");
        for (String field : List.of("documents", "parents", "children", "chunk_documents_written", "chunk_documents_deleted",
            "vectors_embedded", "vectors_reused", "limit_splits")) {
            assertTrue(field + " in " + ingest, ingest.get(field) instanceof Number);
        }
        assertEquals(Set.of("bad_input", "rejected", "model", "write", "other"), ((Map<String, Object>) ingest.get("failures")).keySet());
        Map<String, Object> queue = (Map<String, Object>) ((Map<String, Object>) node.get("inference")).get("queue");
        assertEquals(Set.of("size", "active", "rejected"), queue.keySet());
        Map<String, Object> lane = (Map<String, Object>) ((Map<String, Object>) node.get("inference")).get("query_lane");
        assertEquals(Set.of("size", "active", "rejected", "timed_out"), lane.keySet());
        assertEquals(Set.of("multi_granular", "embedded_queries"), ((Map<String, Object>) node.get("query")).keySet());

        for (String path : List.of("/_plugins/_strata/" + id + "/stats", "/_plugins/_strata/stats?nodes=" + id)) {
            Map<String, Object> one = call("GET", path);
            assertEquals(path, List.of(id), List.copyOf(((Map<String, Object>) one.get("nodes")).keySet()));
            assertEquals(path, 1, ((Map<String, Object>) one.get("_nodes")).get("total"));
        }
        String name = (String) node.get("name");
        assertEquals(List.of(id), List.copyOf(((Map<String, Object>) call("GET", "/_plugins/_strata/" + name + "/stats").get("nodes"))
            .keySet()));
    }

    public void testIngestQueryReingestAndDelete_areCounted() throws Exception {
        putPipeline("stats", "{\"field\": \"body\", \"target_index\": \"stats-chunks\", \"strategy\": {\"type\": \"recursive\", "
            + "\"max_words\": 80}}");
        List<String> chapters = List.copyOf(emmaChapters().values());
        Map<String, Map<String, Object>> docs = new LinkedHashMap<>();
        docs.put("a", Map.of("body", chapters.get(0).substring(0, 3000)));
        docs.put("b", Map.of("body", chapters.get(1).substring(0, 2000)));

        Map<String, Long> before = summed();
        assertEquals(false, bulk("stats-src", "stats", docs).get("errors"));
        long queryLaneBefore = tasksCompleted("strata_inference_query");
        Map<String, Object> search = call("POST", "/stats-chunks/_search", "{\"size\": 3, \"query\": {\"multi_granular\": "
            + "{\"query_text\": \"Who is Miss Taylor?\", \"k\": 3}}}");
        assertEquals(3, ((List<Object>) ((Map<String, Object>) search.get("hits")).get("hits")).size());
        // the query's text was embedded on the query lane, not behind ingest work on strata_inference
        assertBusy(() -> assertEquals(queryLaneBefore + 1, tasksCompleted("strata_inference_query")));
        Map<String, Long> after = summed();

        int parentsA = summary("stats-src", "a", "parents");
        int parents = parentsA + summary("stats-src", "b", "parents");
        int childrenA = summary("stats-src", "a", "children");
        int children = childrenA + summary("stats-src", "b", "children");
        assertTrue(parents > 2 && children > parents);
        assertEquals(2, delta(before, after, "ingest.documents"));
        assertEquals(parents, delta(before, after, "ingest.parents"));
        assertEquals(children, delta(before, after, "ingest.children"));
        assertEquals(parents, delta(before, after, "ingest.chunk_documents_written"));
        assertEquals(0, delta(before, after, "ingest.chunk_documents_deleted"));
        assertEquals(parents + children, delta(before, after, "ingest.vectors_embedded"));
        assertEquals(0, delta(before, after, "ingest.vectors_reused"));
        assertEquals("one call per document and one for the query", 3, delta(before, after, MODEL + "calls"));
        assertEquals(parents + children + 1, delta(before, after, MODEL + "texts"));
        assertEquals(0, delta(before, after, MODEL + "errors"));
        assertTrue("loaded on a node: " + after, after.get(MODEL + "loaded") >= 1);
        assertEquals(1, delta(before, after, "query.multi_granular"));
        assertEquals(1, delta(before, after, "query.embedded_queries"));
        for (String reason : List.of("bad_input", "rejected", "model", "write", "other")) {
            assertEquals(reason, 0, delta(before, after, "ingest.failures." + reason));
        }

        // the same text again: every vector is reused, the model is not called, the chunks are rewritten
        before = after;
        call("PUT", "/stats-src/_doc/a?pipeline=stats&refresh=true", json(docs.get("a")));
        after = summed();
        assertEquals(1, delta(before, after, "ingest.documents"));
        assertEquals(parentsA + childrenA, delta(before, after, "ingest.vectors_reused"));
        assertEquals(0, delta(before, after, "ingest.vectors_embedded"));
        assertEquals(0, delta(before, after, MODEL + "calls"));
        assertEquals(parentsA, delta(before, after, "ingest.chunk_documents_written"));

        // deleting a source document deletes its chunks
        before = after;
        call("DELETE", "/stats-src/_doc/b?refresh=true");
        after = summed();
        assertEquals(parents - parentsA, delta(before, after, "ingest.chunk_documents_deleted"));
    }

    public void testBadDocument_isCountedAsBadInput() throws Exception {
        putPipeline("stats-bad", "{\"field\": \"body\", \"target_index\": \"bad-chunks\"}");
        Map<String, Long> before = summed();
        ResponseException e = callFailing("PUT", "/bad-src/_doc/1?pipeline=stats-bad", "{\"body\": 42}");
        assertEquals(400, e.getResponse().getStatusLine().getStatusCode());
        Map<String, Long> after = summed();
        assertEquals(1, delta(before, after, "ingest.failures.bad_input"));
        assertEquals(0, delta(before, after, "ingest.failures.other"));
        assertEquals(0, delta(before, after, "ingest.documents"));
    }

    public void testParentAboveTheModelsTokenLimit_isCutToFit_andNothingIsTruncated() throws Exception {
        putPipeline("stats-long", "{\"field\": \"body\", \"target_index\": \"long-chunks\", \"strategy\": {\"type\": \"recursive\", "
            + "\"max_words\": 2000}, \"granularities\": []}");
        String text = String.join(" ", Arrays.copyOf(TestTexts.emma().split("\\s+"), 1200)); // ~1,600 tokens: one parent at θ 2000
        Map<String, Long> before = summed();
        call("PUT", "/long-src/_doc/1?pipeline=stats-long&refresh=true", json(Map.of("body", text)));
        Map<String, Long> after = summed();
        // issue 21: the model takes 512 tokens, so the parent is cut (at sentences) before it is embedded
        int parents = summary("long-src", "1", "parents");
        assertTrue("parents: " + parents, parents >= 4);
        assertEquals(parents - 1, delta(before, after, "ingest.limit_splits"));
        assertEquals(0, delta(before, after, MODEL + "truncated"));
        assertEquals(parents, delta(before, after, MODEL + "texts"));
    }

    public void testTextAboveTheModelsTokenLimit_isCountedAsTruncated() throws Exception {
        // _embed embeds what it is given: a text above the limit is truncated, and counted
        String text = String.join(" ", Arrays.copyOf(TestTexts.emma().split("\\s+"), 1200));
        Map<String, Long> before = summed();
        call("POST", "/_plugins/_strata/_embed", json(Map.of("texts", List.of(text, "a short one"), "purpose", "passage")));
        Map<String, Long> after = summed();
        assertEquals(1, delta(before, after, MODEL + "truncated"));
        assertEquals(2, delta(before, after, MODEL + "texts"));
    }
}
