package io.strata.it;

import org.opensearch.client.ResponseException;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** The {@code multi_granular} query on the real cluster, checked against a brute-force MAX over all chunks. */
@SuppressWarnings("unchecked")
public class MultiGranularQueryIT extends StrataRestTestCase {
    private static final String QUESTION = "Why does Mr. Woodhouse feel fortunate for thinking of Hannah?";

    /** Emma's chapters, small parents (many per chapter), into a 2-shard chunk index. */
    private void ingest() throws Exception {
        call("PUT", "/q-chunks", "{\"settings\": {\"number_of_shards\": 2, \"number_of_replicas\": 0, \"index.knn\": true}}");
        putPipeline("q", "{\"field\": \"body\", \"target_index\": \"q-chunks\", \"strategy\": {\"type\": \"recursive\", \"max_words\": 80},"
            + " \"copy_fields\": [\"chapter\"]}");
        Map<String, Map<String, Object>> docs = new LinkedHashMap<>();
        int n = 0;
        for (String body : emmaChapters().values()) {
            n++;
            docs.put("ch" + n, Map.of("chapter", n, "body", body));
        }
        assertEquals(false, bulk("q-src", "q", docs).get("errors"));
        refresh("q-chunks");
    }

    private static float[] queryVector(String text) throws Exception {
        Map<String, Object> r = call("POST", "/_plugins/_strata/_embed", json(Map.of("texts", List.of(text), "purpose", "query")));
        List<Number> v = (List<Number>) ((List<Object>) r.get("vectors")).get(0);
        float[] out = new float[v.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = v.get(i).floatValue();
        }
        return out;
    }

    private static double score(float[] q, List<Number> v) {
        double dot = 0;
        for (int i = 0; i < q.length; i++) {
            dot += q[i] * v.get(i).doubleValue();
        }
        return (1 + dot) / 2; // unit vectors: Lucene's cosine score
    }

    /** Every parent's exact score: the MAX over itself and its children at {@code levels}. */
    private static Map<String, Double> bruteForce(float[] q, Set<Integer> levels) throws Exception {
        return bruteForce("q-chunks", q, levels);
    }

    private static Map<String, Double> bruteForce(String index, float[] q, Set<Integer> levels) throws Exception {
        Map<String, Object> r = call("POST", "/" + index + "/_search", "{\"size\": 1000, \"_source\": true, \"query\": {\"match_all\": {}}}");
        Map<String, Double> out = new LinkedHashMap<>();
        for (Object h : (List<Object>) ((Map<String, Object>) r.get("hits")).get("hits")) {
            Map<String, Object> hit = (Map<String, Object>) h;
            Map<String, Object> source = (Map<String, Object>) hit.get("_source");
            // a parent above the model's window has no vector of its own: its children score it
            double best = levels.contains(0) && source.get("embedding") != null ? score(q, (List<Number>) source.get("embedding")) : -1;
            for (Map<String, Object> child : (List<Map<String, Object>>) source.get("children")) {
                if (levels.contains((Integer) child.get("level"))) {
                    best = Math.max(best, score(q, (List<Number>) child.get("embedding")));
                }
            }
            out.put((String) hit.get("_id"), best);
        }
        return out;
    }

    private static List<Map<String, Object>> search(String queryJson, int size) throws Exception {
        return search("q-chunks", queryJson, size);
    }

    private static List<Map<String, Object>> search(String index, String queryJson, int size) throws Exception {
        Map<String, Object> r = call("POST", "/" + index + "/_search", "{\"size\": " + size + ", \"query\": " + queryJson + "}");
        return (List<Map<String, Object>>) ((Map<String, Object>) r.get("hits")).get("hits");
    }

    private static void assertMatchesBruteForce(List<Map<String, Object>> hits, Map<String, Double> exact, int k) {
        List<Map.Entry<String, Double>> expected = new ArrayList<>(exact.entrySet());
        expected.sort(Map.Entry.<String, Double>comparingByValue(Comparator.reverseOrder()));
        assertEquals(k, hits.size());
        Set<String> ids = new HashSet<>();
        for (int i = 0; i < k; i++) {
            String id = (String) hits.get(i).get("_id");
            assertTrue("parents are returned once: " + id, ids.add(id));
            double got = ((Number) hits.get(i).get("_score")).doubleValue();
            assertEquals("rank " + i, expected.get(i).getValue(), got, 1e-4);
            assertEquals("score of " + id, exact.get(id), got, 1e-4);
        }
    }

    public void testDenseMode_ranksParentsByTheirBestChild_exactlyAsBruteForce_acrossTwoShards() throws Exception {
        ingest();
        Map<String, Double> exact = bruteForce(queryVector(QUESTION), Set.of(0, 1, 2));
        assertTrue("many parents", exact.size() > 40);
        List<Map<String, Object>> hits = search("{\"multi_granular\": {\"query_text\": \"" + QUESTION + "\", \"mode\": \"dense\","
            + " \"k\": 10}}", 10);
        assertMatchesBruteForce(hits, exact, 10);
    }

    public void testNumCandidates_widensTheGraphSearch_andKIsTheParentsOfTheWholeRequest() throws Exception {
        ingest();
        Map<String, Double> exact = bruteForce(queryVector(QUESTION), Set.of(0, 1, 2));
        Map<String, Object> r = call("POST", "/q-chunks/_search", "{\"size\": 50, \"track_total_hits\": true, \"query\": "
            + "{\"multi_granular\": {\"query_text\": \"" + QUESTION + "\", \"mode\": \"dense\", \"k\": 3, \"num_candidates\": 60}}}");
        List<Map<String, Object>> hits = (List<Map<String, Object>>) ((Map<String, Object>) r.get("hits")).get("hits");
        int shards = ((Number) ((Map<String, Object>) r.get("_shards")).get("successful")).intValue();
        assertEquals("two shards", 2, shards);
        // 60 candidates per shard were searched; k = 3 parents in all (not per shard), the global best
        assertEquals(3, ((Number) ((Map<String, Object>) ((Map<String, Object>) r.get("hits")).get("total")).get("value")).intValue());
        assertMatchesBruteForce(hits, exact, 3);
    }

    public void testVectorAndLevels_countOnlyTheChosenGranularities() throws Exception {
        ingest();
        float[] q = queryVector("Miss Taylor's wedding and Mr. Weston");
        String vector = java.util.Arrays.toString(q);
        for (Set<Integer> levels : List.of(Set.of(0), Set.of(2), Set.of(1, 2), Set.of(0, 1, 2))) {
            List<Map<String, Object>> hits = search("{\"multi_granular\": {\"vector\": " + vector + ", \"k\": 5, \"levels\": "
                + levels + ", \"explain_child\": true}}", 5);
            assertMatchesBruteForce(hits, bruteForce(q, levels), 5);
            for (Map<String, Object> hit : hits) {
                Map<String, Object> best = (Map<String, Object>) ((List<Object>) ((Map<String, Object>) hit.get("fields"))
                    .get("strata_best_child")).get(0);
                assertTrue(levels + " " + best.get("level"), levels.contains((Integer) best.get("level")));
                // found from the shard's vectors with Lucene's own similarity: the score is _score, bit for bit
                assertEquals(((Number) hit.get("_score")).floatValue(), ((Number) best.get("score")).floatValue(), 0f);
            }
        }
    }

    public void testFormatOneIndex_withoutLevelZeroEntries_stillCountsTheParentItself() throws Exception {
        ingest();
        // a chunk index as format 1 wrote it: _meta.strata.format 1, no level-0 entry among the children
        Map<String, Object> mapping = new LinkedHashMap<>((Map<String, Object>) ((Map<String, Object>) call("GET", "/q-chunks/_mapping")
            .get("q-chunks")).get("mappings"));
        Map<String, Object> strata = new LinkedHashMap<>((Map<String, Object>) ((Map<String, Object>) mapping.get("_meta")).get("strata"));
        strata.put("format", 1);
        mapping.put("_meta", Map.of("strata", strata));
        call("PUT", "/q1-chunks", json(Map.of("settings", Map.of("number_of_shards", 2, "number_of_replicas", 0, "index.knn", true),
            "mappings", mapping)));
        StringBuilder bulk = new StringBuilder();
        Map<String, Object> all = call("POST", "/q-chunks/_search", "{\"size\": 1000, \"_source\": true, \"query\": {\"match_all\": {}}}");
        for (Object h : (List<Object>) ((Map<String, Object>) all.get("hits")).get("hits")) {
            Map<String, Object> hit = (Map<String, Object>) h;
            Map<String, Object> source = new LinkedHashMap<>((Map<String, Object>) hit.get("_source"));
            List<Map<String, Object>> children = new ArrayList<>((List<Map<String, Object>>) source.get("children"));
            assertTrue("format 2 wrote a level-0 entry", children.removeIf(c -> (Integer) c.get("level") == 0));
            source.put("children", children);
            bulk.append(json(Map.of("index", Map.of("_index", "q1-chunks", "_id", hit.get("_id"))))).append('\n');
            bulk.append(json(source)).append('\n');
        }
        assertEquals(false, call("POST", "/_bulk?refresh=true", bulk.toString()).get("errors"));
        float[] q = queryVector("Miss Taylor's wedding and Mr. Weston");
        String vector = java.util.Arrays.toString(q);
        // what is checked is the MAX over the levels of a format-1 document, not the graph's recall: a graph search as wide
        // as the index (num_candidates 1000) makes the approximate search exact here (with the default 2k candidates a
        // freshly bulk-built two-shard graph once missed the 5th parent by 0.001)
        for (Set<Integer> levels : List.of(Set.of(0, 1, 2), Set.of(0, 2), Set.of(1, 2))) {
            List<Map<String, Object>> hits = search("q1-chunks", "{\"multi_granular\": {\"vector\": " + vector + ", \"k\": 5,"
                + " \"num_candidates\": 1000, \"levels\": " + levels + "}}", 5);
            assertMatchesBruteForce(hits, bruteForce("q1-chunks", q, levels), 5);
        }
        // no levels: every level counts
        assertMatchesBruteForce(search("q1-chunks", "{\"multi_granular\": {\"vector\": " + vector + ", \"k\": 5, "
            + "\"num_candidates\": 1000}}", 5), bruteForce("q1-chunks", q, Set.of(0, 1, 2)), 5);
    }

    /**
     * {@code indices_boost} over two chunk indices multiplies the scores of the k parents the query chose, as a scoring
     * wrapper ({@code function_score}) does: oracle, the same search without it, its hits re-scored and re-ordered.
     */
    public void testIndicesBoost_multipliesTheScoresOfTheKChosenParents_likeAScoringWrapper() throws Exception {
        ingest();
        Map<String, Object> mappings = (Map<String, Object>) ((Map<String, Object>) call("GET", "/q-chunks/_mapping").get("q-chunks"))
            .get("mappings");
        call("PUT", "/q2-chunks", json(Map.of("settings", Map.of("number_of_shards", 1, "index.knn", true), "mappings", mappings)));
        call("POST", "/_reindex?refresh=true", "{\"source\": {\"index\": \"q-chunks\", \"query\": {\"terms\": {\"chapter\": [1, 2, 3]}}}, "
            + "\"dest\": {\"index\": \"q2-chunks\"}}");
        for (String mode : List.of("dense", "lexical", "hybrid")) {
            String query = "\"query\": {\"multi_granular\": {\"query_text\": \"" + QUESTION + "\", \"mode\": \"" + mode + "\", \"k\": 10}}";
            Map<String, Object> plain = call("POST", "/q-chunks,q2-chunks/_search", "{\"size\": 10, " + query + "}");
            Map<String, Object> boosted = call("POST", "/q-chunks,q2-chunks/_search", "{\"size\": 10, "
                + "\"indices_boost\": [{\"q2-chunks\": 2.5}], " + query + "}");
            List<List<Object>> expected = new ArrayList<>();
            for (Object h : (List<Object>) ((Map<String, Object>) plain.get("hits")).get("hits")) {
                Map<String, Object> hit = (Map<String, Object>) h;
                double boost = "q2-chunks".equals(hit.get("_index")) ? 2.5 : 1;
                expected.add(List.of(hit.get("_index"), hit.get("_id"), ((Number) hit.get("_score")).doubleValue() * boost));
            }
            assertTrue(mode + ": both indices among the k", expected.stream().map(e -> e.get(0)).distinct().count() == 2);
            expected.sort(Comparator.comparing(e -> -(Double) e.get(2)));
            List<Map<String, Object>> got = (List<Map<String, Object>>) ((Map<String, Object>) boosted.get("hits")).get("hits");
            assertEquals(mode, expected.size(), got.size());
            for (int i = 0; i < got.size(); i++) {
                assertEquals(mode + " rank " + i, expected.get(i).subList(0, 2), List.of(got.get(i).get("_index"), got.get(i).get("_id")));
                assertEquals(mode + " rank " + i, (Double) expected.get(i).get(2), ((Number) got.get(i).get("_score")).doubleValue(), 1e-4);
            }
        }
    }

    /**
     * Applications keep their searches as stored search templates and fill in the question: {@code _search/template} and
     * {@code _msearch/template} answer as the same search sent directly, in every mode (ids, scores, the matched chunk).
     */
    public void testThroughSearchTemplates_answersAsTheSameSearchSentDirectly() throws Exception {
        ingest();
        call("PUT", "/_scripts/strata-ask", """
            {"script": {"lang": "mustache", "source": {"size": "{{k}}", "query": {"multi_granular": {"query_text": "{{question}}",
              "mode": "{{mode}}", "k": "{{k}}", "explain_child": true}}}}}""");
        for (String mode : List.of("dense", "lexical", "hybrid")) {
            Map<String, Object> direct = call("POST", "/q-chunks/_search", json(Map.of("size", 5, "query", Map.of("multi_granular",
                Map.of("query_text", QUESTION, "mode", mode, "k", 5, "explain_child", true)))));
            Map<String, Object> params = Map.of("question", QUESTION, "mode", mode, "k", 5);
            Map<String, Object> templated = call("POST", "/q-chunks/_search/template", json(Map.of("id", "strata-ask", "params", params)));
            Map<String, Object> multi = (Map<String, Object>) ((List<Object>) call("POST", "/_msearch/template",
                "{\"index\": \"q-chunks\"}\n" + json(Map.of("id", "strata-ask", "params", params)) + "\n").get("responses")).get(0);
            List<Object> expected = hitsOf(direct);
            assertEquals(mode, 5, expected.size());
            assertSameAnswer(mode + " template", expected, hitsOf(templated));
            assertSameAnswer(mode + " msearch template", expected, hitsOf(multi));
        }
    }

    /** Each hit's index, id, score and matched chunk. */
    private static List<Object> hitsOf(Map<String, Object> response) {
        List<Object> out = new ArrayList<>();
        for (Object h : (List<Object>) ((Map<String, Object>) response.get("hits")).get("hits")) {
            Map<String, Object> hit = (Map<String, Object>) h;
            out.add(List.of(hit.get("_index"), hit.get("_id"), hit.get("_score"), ((Map<String, Object>) hit.get("fields"))
                .get("strata_best_child")));
        }
        return out;
    }

    /**
     * A cluster that refuses expensive queries ({@code search.allow_expensive_queries: false}) runs no nested query, which
     * the lexical side is: hybrid and lexical requests are a 400 saying so and naming the dense mode, which answers as
     * with the setting on. (The lexical side's shards used to refuse it one by one, after the question was embedded.)
     */
    public void testWithoutExpensiveQueries_textModesAreA400NamingTheDenseMode_whichAnswersAsBefore() throws Exception {
        ingest();
        String dense = "{\"multi_granular\": {\"query_text\": \"" + QUESTION + "\", \"mode\": \"dense\", \"k\": 5}}";
        List<Object> before = search(dense, 5).stream().map(h -> List.of(h.get("_id"), h.get("_score"))).map(Object.class::cast).toList();
        call("PUT", "/_cluster/settings", "{\"transient\": {\"search.allow_expensive_queries\": false}}");
        try {
            for (String mode : List.of("hybrid", "lexical")) {
                assertBadQuery("q-chunks", "{\"multi_granular\": {\"query_text\": \"" + QUESTION + "\", \"mode\": \"" + mode + "\"}}",
                    "[multi_granular] [mode: " + mode + "] scores the children through a nested query, which OpenSearch does not run "
                        + "while [search.allow_expensive_queries] is false; use [mode: dense]");
            }
            assertSameAnswer("dense", before, search(dense, 5).stream().map(h -> List.of(h.get("_id"), h.get("_score")))
                .map(Object.class::cast).toList());
        } finally {
            call("PUT", "/_cluster/settings", "{\"transient\": {\"search.allow_expensive_queries\": null}}");
        }
    }

    public void testFilter_excludingMostParents_stillReturnsKMatchingParentsExactly() throws Exception {
        ingest();
        float[] q = queryVector(QUESTION);
        String vector = java.util.Arrays.toString(q);
        Map<String, Double> exact = bruteForce(q, Set.of(0, 1, 2));
        Map<String, Object> chapter3 = call("POST", "/q-chunks/_search", "{\"size\": 1000, \"_source\": false,"
            + " \"query\": {\"term\": {\"chapter\": 3}}}");
        Set<String> inChapter = new HashSet<>();
        for (Object h : (List<Object>) ((Map<String, Object>) chapter3.get("hits")).get("hits")) {
            inChapter.add((String) ((Map<String, Object>) h).get("_id"));
        }
        assertTrue("a small part of the index", inChapter.size() >= 5 && inChapter.size() * 2 < exact.size());
        exact.keySet().retainAll(inChapter);
        List<Map<String, Object>> hits = search("{\"multi_granular\": {\"vector\": " + vector + ", \"k\": 5,"
            + " \"filter\": {\"term\": {\"chapter\": 3}}}}", 5);
        assertMatchesBruteForce(hits, exact, 5);
    }

    public void testExplainChild_returnsTheChunkThatScoredWithItsExactOffsets() throws Exception {
        ingest();
        List<Map<String, Object>> hits = search("{\"multi_granular\": {\"query_text\": \"" + QUESTION + "\", \"mode\": \"dense\","
            + " \"explain_child\": true}}", 3);
        Map<String, String> bodies = new LinkedHashMap<>();
        int n = 0;
        for (String body : emmaChapters().values()) {
            bodies.put("ch" + (++n), body);
        }
        for (Map<String, Object> hit : hits) {
            Map<String, Object> best = (Map<String, Object>) ((List<Object>) ((Map<String, Object>) hit.get("fields"))
                .get("strata_best_child")).get(0);
            String body = bodies.get(((Map<String, Object>) hit.get("_source")).get("source_id"));
            assertEquals(body.substring((Integer) best.get("start"), (Integer) best.get("end")), best.get("text"));
            assertEquals(((Number) hit.get("_score")).floatValue(), ((Number) best.get("score")).floatValue(), 0f);
        }
    }

    public void testFilter_onACopiedField_keepsOnlyMatchingParents() throws Exception {
        ingest();
        List<Map<String, Object>> hits = search("{\"multi_granular\": {\"query_text\": \"" + QUESTION + "\", \"k\": 5,"
            + " \"filter\": {\"term\": {\"chapter\": 2}}}}", 5);
        assertEquals(5, hits.size());
        for (Map<String, Object> hit : hits) {
            assertEquals(2, ((Map<String, Object>) hit.get("_source")).get("chapter"));
        }
    }

    public void testMatch_lexicalModeScoresParentsByTheBestChildToo() throws Exception {
        ingest();
        List<Map<String, Object>> hits = search("{\"multi_granular\": {\"match\": \"Hannah servant\", \"explain_child\": true}}", 3);
        assertFalse(hits.isEmpty());
        for (Map<String, Object> hit : hits) {
            Map<String, Object> best = (Map<String, Object>) ((List<Object>) ((Map<String, Object>) hit.get("fields"))
                .get("strata_best_child")).get(0);
            assertEquals("lexical", best.get("side"));
            assertEquals(((Number) hit.get("_score")).floatValue(), ((Number) best.get("score")).floatValue(), 0f);
            String text = ((String) best.get("text")).toLowerCase(java.util.Locale.ROOT);
            assertTrue(text, text.contains("hannah") || text.contains("servant"));
        }
    }

    private static void assertBadQuery(String index, String queryJson, String expected) {
        ResponseException e = callFailing("POST", "/" + index + "/_search", "{\"query\": " + queryJson + "}");
        assertEquals(e.getMessage(), 400, e.getResponse().getStatusLine().getStatusCode());
        assertTrue("expected [" + expected + "] in " + e.getMessage(), e.getMessage().contains(expected));
    }

    public void testBadQueries_get400WithTheFieldAndWhatIsAllowed() throws Exception {
        ingest();
        call("PUT", "/plain", "{}");
        assertBadQuery("q-chunks", "{\"multi_granular\": {\"query_text\": \"x\", \"colour\": 1}}", "unknown field [colour]");
        assertBadQuery("q-chunks", "{\"multi_granular\": {\"query_text\": \"x\", \"vector\": [1]}}",
            "not allowed together: [query_text, vector]");
        assertBadQuery("q-chunks", "{\"multi_granular\": {\"k\": 3}}", "needs exactly one of [query_text], [vector] and [match]");
        assertBadQuery("q-chunks", "{\"multi_granular\": {\"query_text\": \"x\", \"k\": 0}}", "[k] must be in [1, 10000]");
        assertBadQuery("q-chunks", "{\"multi_granular\": {\"query_text\": \"x\", \"levels\": [7]}}", "[levels] must be distinct levels");
        assertBadQuery("q-chunks", "{\"multi_granular\": {\"query_text\": \"x\", \"model\": \"nope\"}}", "unknown model [nope]");
        assertBadQuery("q-chunks", "{\"multi_granular\": {\"vector\": [1, 2, 3]}}",
            "the query vector has 3 dimensions but index [q-chunks] holds vectors of 384");
        assertBadQuery("plain", "{\"multi_granular\": {\"query_text\": \"x\"}}", "index [plain] is not a Strata chunk index");
        // every mode, also when the source index comes with its chunk index (`q*`, `docs*`): the lexical side used to fail
        // deep in its nested query ("failed to find nested object under path [children]")
        for (String q : List.of("{\"query_text\": \"x\", \"mode\": \"lexical\"}", "{\"match\": \"x\"}",
            "{\"query_text\": \"x\", \"mode\": \"dense\"}")) {
            assertBadQuery("plain", "{\"multi_granular\": " + q + "}", "index [plain] is not a Strata chunk index");
            assertBadQuery("q-chunks,plain", "{\"multi_granular\": " + q + "}", "index [plain] is not a Strata chunk index");
        }
        assertBadQuery("plain", "{\"multi_granular\": {\"vector\": [1, 2]}}", "index [plain] is not a Strata chunk index");
        // the source index, searched by mistake (or beside its chunk index, as `q-*` would name both): the error names where its chunks are
        assertBadQuery("q-src", "{\"multi_granular\": {\"match\": \"x\"}}", "index [q-src] is not a Strata chunk index");
        assertBadQuery("q-src", "{\"multi_granular\": {\"match\": \"x\"}}", "search its chunk index [q-chunks]");
        assertBadQuery("q-chunks,q-src", "{\"multi_granular\": {\"query_text\": \"x\"}}", "search its chunk index [q-chunks]");
        assertBadQuery("q-chunks", "{\"multi_granular\": {\"vector\": [1, 2], \"model\": \"bge-small-en-v15-q\"}}",
            "[model] and [model_id] go with [query_text] only");
    }
}
