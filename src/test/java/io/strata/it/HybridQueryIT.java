package io.strata.it;

import org.opensearch.client.ResponseException;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The hybrid mode of {@code multi_granular} (the default of {@code query_text}) on the real cluster: the dense and the
 * lexical multi-granular MAX fused into one ranking of parents, the same whatever the shard count, checked against the
 * fusion of the two single-side modes computed here by hand.
 */
@SuppressWarnings("unchecked")
public class HybridQueryIT extends StrataRestTestCase {
    private static final List<String> QUESTIONS = List.of("Why does Mr. Woodhouse feel fortunate for thinking of Hannah?",
        "Who taught Emma after her mother died?", "What did Mr. Knightley say about the match between Mr. Weston and Miss Taylor?");

    /** Emma's chapters through one pipeline into a chunk index with {@code shards} shards. */
    private static Map<String, String> ingest(String name, int shards) throws Exception {
        call("PUT", "/" + name + "-chunks", "{\"settings\": {\"number_of_shards\": " + shards + ", \"number_of_replicas\": 0,"
            + " \"index.knn\": true}}");
        putPipeline(name, "{\"field\": \"body\", \"target_index\": \"" + name + "-chunks\", \"strategy\": {\"type\": \"recursive\","
            + " \"max_words\": 80}, \"copy_fields\": [\"chapter\"]}");
        Map<String, Map<String, Object>> docs = new LinkedHashMap<>();
        Map<String, String> bodies = new HashMap<>();
        int n = 0;
        for (String body : emmaChapters().values()) {
            n++;
            docs.put("ch" + n, Map.of("chapter", n, "body", body));
            bodies.put("ch" + n, body);
        }
        assertEquals(false, bulk(name + "-src", name, docs).get("errors"));
        refresh(name + "-chunks");
        return bodies;
    }

    private static Map<String, Object> searchResponse(String index, String query, int size, String params) throws Exception {
        return call("POST", "/" + index + "/_search" + params, "{\"size\": " + size + ", \"query\": " + query + "}");
    }

    private static List<Map<String, Object>> hits(Map<String, Object> response) {
        return (List<Map<String, Object>>) ((Map<String, Object>) response.get("hits")).get("hits");
    }

    private static List<Map<String, Object>> search(String index, String query, int size) throws Exception {
        return hits(searchResponse(index, query, size, ""));
    }

    private static String quote(String s) {
        return json(Map.of("q", s)).substring(5).replaceFirst("}$", "");
    }

    private static Map<String, Object> best(Map<String, Object> hit) {
        return (Map<String, Object>) ((List<Object>) ((Map<String, Object>) hit.get("fields")).get("strata_best_child")).get(0);
    }

    private static List<String> ids(List<Map<String, Object>> hits) {
        return hits.stream().map(h -> (String) h.get("_id")).toList();
    }

    private static List<Float> scores(List<Map<String, Object>> hits) {
        return hits.stream().map(h -> ((Number) h.get("_score")).floatValue()).toList();
    }

    /** min_max fusion of two best-first side lists, as documented: each side onto [0, 1] over its window, weighted. */
    private static List<Map.Entry<String, Double>> minMax(List<Map<String, Object>> dense, List<Map<String, Object>> lexical, double w) {
        Map<String, Double> fused = new HashMap<>();
        addMinMax(fused, dense, w);
        addMinMax(fused, lexical, 1 - w);
        List<Map.Entry<String, Double>> out = new ArrayList<>(fused.entrySet());
        out.sort(Map.Entry.<String, Double>comparingByValue(Comparator.reverseOrder()).thenComparing(Map.Entry.comparingByKey()));
        return out;
    }

    private static void addMinMax(Map<String, Double> fused, List<Map<String, Object>> side, double weight) {
        double top = ((Number) side.get(0).get("_score")).doubleValue();
        double floor = ((Number) side.get(side.size() - 1).get("_score")).doubleValue();
        for (Map<String, Object> hit : side) {
            double s = ((Number) hit.get("_score")).doubleValue();
            fused.merge((String) hit.get("_id"), weight * (s - floor) / (top - floor), Double::sum);
        }
    }

    public void testHybrid_oneShardAndThreeShards_returnTheSameParentsWithTheSameScores() throws Exception {
        ingest("h1", 1);
        ingest("h3", 3);
        for (String question : QUESTIONS) {
            String query = "{\"multi_granular\": {\"query_text\": " + quote(question) + ", \"k\": 10}}";
            List<Map<String, Object>> one = search("h1-chunks", query, 10);
            Map<String, Object> threeResponse = searchResponse("h3-chunks", query, 10, "");
            assertEquals(3, ((Number) ((Map<String, Object>) threeResponse.get("_shards")).get("successful")).intValue());
            List<Map<String, Object>> three = hits(threeResponse);
            assertEquals(10, one.size());
            assertEquals(question, ids(one), ids(three));
            // equal to float rounding: Lucene sums a BM25 query's term scores in an order it picks per segment, so the
            // same document's lexical score can differ by a few ulps between layouts (seen once: 6e-7 on 0.81)
            List<Float> s1 = scores(one);
            List<Float> s3 = scores(three);
            for (int i = 0; i < s1.size(); i++) {
                assertEquals(question + " #" + i, s1.get(i), s3.get(i), 1e-5f);
            }
            // a lexical-only search without dfs differs between the two layouts: the hybrid's BM25 is global by construction
        }
    }

    public void testHybrid_isTheMinMaxFusionOfTheDenseAndTheLexicalMode_window100_equalWeights() throws Exception {
        ingest("hf", 2);
        for (String question : QUESTIONS) {
            List<Map<String, Object>> dense = search("hf-chunks", "{\"multi_granular\": {\"query_text\": " + quote(question)
                + ", \"mode\": \"dense\", \"k\": 100}}", 100);
            List<Map<String, Object>> lexical = hits(searchResponse("hf-chunks", "{\"multi_granular\": {\"query_text\": " + quote(question)
                + ", \"mode\": \"lexical\", \"k\": 100}}", 100, "?search_type=dfs_query_then_fetch"));
            assertEquals(100, dense.size());
            assertTrue("parents sharing a word with the question: " + lexical.size(), lexical.size() >= 10);
            List<Map.Entry<String, Double>> expected = minMax(dense, lexical, 0.5);
            List<Map<String, Object>> hybrid = search("hf-chunks", "{\"multi_granular\": {\"query_text\": " + quote(question)
                + ", \"k\": 10}}", 10);
            assertEquals(10, hybrid.size());
            for (int i = 0; i < 10; i++) {
                assertEquals(question + " rank " + i, expected.get(i).getValue(), ((Number) hybrid.get(i).get("_score")).doubleValue(), 1e-5);
            }
            // the explicit default and the named defaults are the same query
            assertEquals(ids(hybrid), ids(search("hf-chunks", "{\"multi_granular\": {\"query_text\": " + quote(question) + ", \"k\": 10,"
                + " \"mode\": \"hybrid\", \"fusion\": {\"method\": \"min_max\", \"dense_weight\": 0.5, \"window\": 100}}}", 10)));
        }
    }

    /**
     * {@code num_candidates} in the hybrid mode is the dense window's beam, at least the window: the shard's profile names
     * the graph search's candidates, and the hits are the fusion of the dense mode asked for the window at that beam.
     */
    public void testHybrid_numCandidates_isTheDenseWindowsBeam_atLeastTheWindow() throws Exception {
        ingest("hn", 1);
        String question = QUESTIONS.get(1);
        String hybrid = "{\"multi_granular\": {\"query_text\": " + quote(question) + ", \"k\": 10";
        Map<String, Integer> beams = new LinkedHashMap<>();
        beams.put("", 200); // unset: twice the window
        beams.put(", \"num_candidates\": 120", 120);
        beams.put(", \"num_candidates\": 50", 100); // under the window: the window
        beams.put(", \"num_candidates\": 300", 300);
        for (Map.Entry<String, Integer> beam : beams.entrySet()) {
            Map<String, Object> profiled = call("POST", "/hn-chunks/_search", "{\"size\": 10, \"profile\": true, \"query\": "
                + hybrid + beam.getKey() + "}}}");
            List<String> described = new ArrayList<>();
            for (Object shard : (List<Object>) ((Map<String, Object>) profiled.get("profile")).get("shards")) {
                for (Object search : (List<Object>) ((Map<String, Object>) shard).get("searches")) {
                    descriptions((List<Object>) ((Map<String, Object>) search).get("query"), described);
                }
            }
            String graphSearch = described.stream().filter(d -> d.contains("multi_granular(k=100, candidates=")).findFirst()
                .orElseThrow(() -> new AssertionError(beam.getKey() + ": no dense window in the profile: " + described));
            assertTrue(beam.getKey() + ": " + graphSearch, graphSearch.contains("multi_granular(k=100, candidates=" + beam.getValue() + ","));
        }
        List<Map<String, Object>> dense = search("hn-chunks", "{\"multi_granular\": {\"query_text\": " + quote(question)
            + ", \"mode\": \"dense\", \"k\": 100, \"num_candidates\": 120}}", 100);
        List<Map<String, Object>> lexical = search("hn-chunks", "{\"multi_granular\": {\"query_text\": " + quote(question)
            + ", \"mode\": \"lexical\", \"k\": 100}}", 100);
        List<Map.Entry<String, Double>> expected = minMax(dense, lexical, 0.5);
        List<Map<String, Object>> fused = search("hn-chunks", hybrid + ", \"num_candidates\": 120}}", 10);
        assertEquals(10, fused.size());
        for (int i = 0; i < 10; i++) {
            assertEquals("rank " + i, expected.get(i).getValue(), ((Number) fused.get(i).get("_score")).doubleValue(), 1e-5);
        }
    }

    private static void descriptions(List<Object> profiled, List<String> out) {
        for (Object node : profiled == null ? List.of() : profiled) {
            out.add(String.valueOf(((Map<String, Object>) node).get("description")));
            descriptions((List<Object>) ((Map<String, Object>) node).get("children"), out);
        }
    }

    /**
     * On one shard the hybrid query fuses on the shard, explained too: its {@code explain_child} and {@code evidence} (each
     * side's chunks and scores, the sentences) are those the planned path gives for the same index (a {@code bool} filter
     * plans it), whatever the fusion. (The planned form's filter runs the graph search filtered, whose scores can differ by
     * an ulp: {@link #assertSameAnswer}.)
     */
    public void testExplainChildAndEvidence_fusedOnTheShard_areThoseOfThePlannedPath() throws Exception {
        ingest("hx", 1);
        for (String fusion : List.of("", ", \"fusion\": {\"method\": \"rrf\"}")) {
            for (String explain : List.of(", \"explain_child\": true", ", \"explain_child\": true, \"evidence\": {\"chunks\": 3, \"sentences\": 2}",
                ", \"evidence\": {\"chunks\": 2, \"sentences\": 0}")) {
                for (String question : QUESTIONS) {
                    String mg = "{\"multi_granular\": {\"query_text\": " + quote(question) + ", \"k\": 10" + fusion + explain + "}}";
                    String planned = "{\"bool\": {\"must\": [" + mg + "], \"filter\": [{\"exists\": {\"field\": \"text\"}}]}}";
                    Map<String, Object> direct = call("POST", "/hx-chunks/_search", "{\"size\": 10, \"profile\": true, \"query\": " + mg + "}");
                    Map<String, Object> viaPlan = call("POST", "/hx-chunks/_search", "{\"size\": 10, \"profile\": true, \"query\": " + planned + "}");
                    assertTrue("fused on the shard", json((Map<String, Object>) direct.get("profile")).contains("strata_hybrid_shard"));
                    assertFalse("planned", json((Map<String, Object>) viaPlan.get("profile")).contains("strata_hybrid_shard"));
                    List<Map<String, Object>> a = hits(direct);
                    List<Map<String, Object>> b = hits(viaPlan);
                    String what = question + fusion + explain;
                    assertEquals(what, ids(b), ids(a));
                    for (int i = 0; i < a.size(); i++) {
                        assertSameAnswer(what + " #" + i, b.get(i).get("_score"), a.get(i).get("_score"));
                        assertSameAnswer(what + " #" + i, ((Map<String, Object>) b.get(i).get("fields")), ((Map<String, Object>) a.get(i).get("fields")));
                        assertNotNull(what + " #" + i, ((Map<String, Object>) a.get(i).get("fields")).get(explain.contains("explain_child")
                            ? "strata_best_child" : "strata_evidence"));
                    }
                }
            }
        }
    }

    /** At its largest (every parent of the index, evidence at its maxima) the shard's explained form is the planned one's. */
    public void testExplainedOnTheShard_atEveryParentAndTheEvidenceMaxima_isThePlannedForm_andTheNodeStaysUp() throws Exception {
        ingest("hxl", 1);
        String mg = "{\"multi_granular\": {\"query_text\": " + quote(QUESTIONS.get(2)) + ", \"k\": 5000, \"explain_child\": true,"
            + " \"evidence\": {\"chunks\": 20, \"sentences\": 10}}}";
        String planned = "{\"bool\": {\"must\": [" + mg + "], \"filter\": [{\"exists\": {\"field\": \"text\"}}]}}";
        List<Map<String, Object>> direct = search("hxl-chunks", mg, 5000);
        List<Map<String, Object>> viaPlan = search("hxl-chunks", planned, 5000);
        assertTrue("more hits than the default window: " + direct.size(), direct.size() > 100);
        assertEquals(ids(viaPlan), ids(direct));
        for (int i = 0; i < direct.size(); i++) {
            assertSameAnswer("#" + i, viaPlan.get(i).get("_score"), direct.get(i).get("_score"));
            assertSameAnswer("#" + i, viaPlan.get(i).get("fields"), direct.get(i).get("fields"));
        }
        assertNotEquals("the node answers, its shards assigned", "red", call("GET", "/_cluster/health", null).get("status"));
    }

    public void testHybrid_rrfAndWeights_areTheDocumentedFormulas() throws Exception {
        ingest("hr", 2);
        String question = QUESTIONS.get(0);
        List<Map<String, Object>> dense = search("hr-chunks", "{\"multi_granular\": {\"query_text\": " + quote(question)
            + ", \"mode\": \"dense\", \"k\": 30}}", 30);
        List<Map<String, Object>> lexical = hits(searchResponse("hr-chunks", "{\"multi_granular\": {\"query_text\": " + quote(question)
            + ", \"mode\": \"lexical\", \"k\": 30}}", 30, "?search_type=dfs_query_then_fetch"));
        Map<String, Double> rrf = new HashMap<>();
        for (int r = 0; r < dense.size(); r++) {
            rrf.merge((String) dense.get(r).get("_id"), 0.3 / (10 + r + 1), Double::sum);
        }
        for (int r = 0; r < lexical.size(); r++) {
            rrf.merge((String) lexical.get(r).get("_id"), 0.7 / (10 + r + 1), Double::sum);
        }
        List<Map.Entry<String, Double>> expected = new ArrayList<>(rrf.entrySet());
        expected.sort(Map.Entry.<String, Double>comparingByValue(Comparator.reverseOrder()).thenComparing(Map.Entry.comparingByKey()));
        List<Map<String, Object>> hybrid = search("hr-chunks", "{\"multi_granular\": {\"query_text\": " + quote(question) + ", \"k\": 5,"
            + " \"fusion\": {\"method\": \"rrf\", \"dense_weight\": 0.3, \"rank_constant\": 10, \"window\": 30}}}", 5);
        for (int i = 0; i < 5; i++) {
            assertEquals("rank " + i, expected.get(i).getValue(), ((Number) hybrid.get(i).get("_score")).doubleValue(), 1e-6);
        }
        // dense_weight 1 is the dense ranking, 0 the lexical one
        List<Map<String, Object>> allDense = search("hr-chunks", "{\"multi_granular\": {\"query_text\": " + quote(question) + ", \"k\": 5,"
            + " \"fusion\": {\"dense_weight\": 1}}}", 5);
        assertEquals(ids(dense).subList(0, 5), ids(allDense));
        List<Map<String, Object>> allLexical = search("hr-chunks", "{\"multi_granular\": {\"query_text\": " + quote(question) + ", \"k\": 5,"
            + " \"fusion\": {\"dense_weight\": 0}}}", 5);
        assertEquals(ids(lexical).subList(0, 5), ids(allLexical));
    }

    /**
     * {@code explain} breaks a hybrid hit's score into what each side added, with each side's raw score: the oracle is the
     * dense and the lexical modes searched apart (the raw scores) and the documented min_max fusion over them (what each adds).
     */
    public void testExplain_ofAHybridHit_givesEachSidesRawScoreAndWhatItAdded_asTheModesApartGiveThem() throws Exception {
        ingest("hx", 2);
        String question = QUESTIONS.get(0);
        List<Map<String, Object>> dense = search("hx-chunks", "{\"multi_granular\": {\"query_text\": " + quote(question)
            + ", \"mode\": \"dense\", \"k\": 100}}", 100);
        List<Map<String, Object>> lexical = hits(searchResponse("hx-chunks", "{\"multi_granular\": {\"query_text\": " + quote(question)
            + ", \"mode\": \"lexical\", \"k\": 100}}", 100, "?search_type=dfs_query_then_fetch"));
        Map<String, Double> denseAdds = new HashMap<>();
        addMinMax(denseAdds, dense, 0.5);
        Map<String, Double> lexicalAdds = new HashMap<>();
        addMinMax(lexicalAdds, lexical, 0.5);
        Map<String, Object> response = call("POST", "/hx-chunks/_search", "{\"size\": 10, \"explain\": true, \"query\": "
            + "{\"multi_granular\": {\"query_text\": " + quote(question) + ", \"k\": 10}}}");
        Set<Integer> sidesFound = new java.util.HashSet<>();
        for (Map<String, Object> hit : hits(response)) {
            String id = (String) hit.get("_id");
            Map<String, Object> ours = explanationOf((Map<String, Object>) hit.get("_explanation"), "multi_granular hybrid");
            assertNotNull(id + ": " + hit.get("_explanation"), ours);
            assertSameAnswer(id, ((Number) hit.get("_score")).doubleValue(), ((Number) ours.get("value")).doubleValue());
            List<Map<String, Object>> sides = (List<Map<String, Object>>) ours.get("details");
            assertEquals(id + ": " + sides, 2, sides.size());
            checkSide(id, sides.get(0), "dense side: the parent's best chunk's k-NN score ", dense, denseAdds);
            checkSide(id, sides.get(1), "lexical side: the parent's best chunk's BM25 ", lexical, lexicalAdds);
            sidesFound.add((denseAdds.containsKey(id) ? 1 : 0) + (lexicalAdds.containsKey(id) ? 2 : 0));
        }
        assertTrue("a parent found by both sides: " + sidesFound, sidesFound.contains(3));
        // the _explain API says the same of one hit
        Map<String, Object> first = hits(response).get(0);
        Map<String, Object> one = call("POST", "/hx-chunks/_explain/" + first.get("_id"), "{\"query\": {\"multi_granular\": "
            + "{\"query_text\": " + quote(question) + ", \"k\": 10}}}");
        assertSameAnswer("_explain", explanationOf((Map<String, Object>) first.get("_explanation"), "multi_granular hybrid"),
            explanationOf((Map<String, Object>) one.get("explanation"), "multi_granular hybrid"));
    }

    private static void checkSide(String id, Map<String, Object> side, String prefix, List<Map<String, Object>> modeHits,
                                  Map<String, Double> adds) {
        Map<String, Object> apart = modeHits.stream().filter(h -> id.equals(h.get("_id"))).findFirst().orElse(null);
        String description = (String) side.get("description");
        if (apart == null) {
            assertEquals(id + ": " + side, 0.0, ((Number) side.get("value")).doubleValue(), 0.0);
            assertTrue(id + ": " + description, description.endsWith("side: the parent is not in its window"));
            return;
        }
        assertTrue(id + ": " + description, description.startsWith(prefix));
        assertSameAnswer(id + " raw", ((Number) apart.get("_score")).doubleValue(),
            Double.parseDouble(description.substring(prefix.length())));
        assertSameAnswer(id + " added", adds.get(id), ((Number) side.get("value")).doubleValue());
    }

    /** The node of an explanation tree whose description starts with {@code prefix}, or null. */
    private static Map<String, Object> explanationOf(Map<String, Object> node, String prefix) {
        if (((String) node.get("description")).startsWith(prefix)) {
            return node;
        }
        for (Object d : (List<Object>) node.getOrDefault("details", List.of())) {
            Map<String, Object> found = explanationOf((Map<String, Object>) d, prefix);
            if (found != null) {
                return found;
            }
        }
        return null;
    }

    public void testExplainChild_namesTheSideAndTheChunkOfEachSide_withExactOffsets() throws Exception {
        Map<String, String> bodies = ingest("he", 2);
        Set<String> sides = new java.util.HashSet<>();
        for (String question : QUESTIONS) {
            List<Map<String, Object>> hits = search("he-chunks", "{\"multi_granular\": {\"query_text\": " + quote(question)
                + ", \"k\": 10, \"explain_child\": true}}", 10);
            for (Map<String, Object> hit : hits) {
                Map<String, Object> best = best(hit);
                String body = bodies.get(((Map<String, Object>) hit.get("_source")).get("source_id"));
                assertEquals(body.substring((Integer) best.get("start"), (Integer) best.get("end")), best.get("text"));
                assertEquals(((Number) hit.get("_score")).doubleValue(), ((Number) best.get("score")).doubleValue(), 1e-6);
                String side = (String) best.get("side");
                sides.add(side);
                Map<String, Object> dense = (Map<String, Object>) best.get("dense");
                Map<String, Object> lexical = (Map<String, Object>) best.get("lexical");
                Map<String, Object> winner = "dense".equals(side) ? dense : lexical;
                assertNotNull(side + " " + best, winner);
                assertEquals(winner.get("level"), best.get("level"));
                assertEquals(winner.get("start"), best.get("start"));
                double denseShare = ((Number) dense.get("share")).doubleValue();
                double lexicalShare = lexical == null ? 0 : ((Number) lexical.get("share")).doubleValue();
                assertEquals("the shares add up to the fused score", ((Number) best.get("score")).doubleValue(),
                    denseShare + lexicalShare, 1e-5);
                assertEquals("the side that added more", denseShare >= lexicalShare ? "dense" : "lexical", side);
                if (lexical != null) {
                    Set<String> words = new java.util.HashSet<>(java.util.Arrays.asList(body.substring((Integer) lexical.get("start"),
                        (Integer) lexical.get("end")).toLowerCase(java.util.Locale.ROOT).split("\\W+")));
                    assertTrue("the lexical chunk shares a word with the question: " + words,
                        java.util.Arrays.stream(question.toLowerCase(java.util.Locale.ROOT).split("\\W+")).anyMatch(words::contains));
                }
            }
        }
        assertEquals("both sides win somewhere", Set.of("dense", "lexical"), sides);
    }

    public void testFilterAndLevels_applyToBothSides() throws Exception {
        ingest("hl", 2);
        String question = QUESTIONS.get(1);
        List<Map<String, Object>> hits = search("hl-chunks", "{\"multi_granular\": {\"query_text\": " + quote(question) + ", \"k\": 8,"
            + " \"levels\": [0], \"filter\": {\"term\": {\"chapter\": 2}}, \"explain_child\": true}}", 8);
        assertEquals(8, hits.size());
        for (Map<String, Object> hit : hits) {
            assertEquals(2, ((Map<String, Object>) hit.get("_source")).get("chapter"));
            Map<String, Object> best = best(hit);
            assertEquals(0, best.get("level"));
            assertEquals(0, ((Map<String, Object>) best.get("dense")).get("level"));
            if (best.get("lexical") != null) {
                assertEquals(0, ((Map<String, Object>) best.get("lexical")).get("level"));
            }
        }
        // the same as fusing the two sides, each with the filter and the levels
        List<Map<String, Object>> dense = search("hl-chunks", "{\"multi_granular\": {\"query_text\": " + quote(question)
            + ", \"mode\": \"dense\", \"k\": 100, \"levels\": [0], \"filter\": {\"term\": {\"chapter\": 2}}}}", 100);
        List<Map<String, Object>> lexical = hits(searchResponse("hl-chunks", "{\"multi_granular\": {\"query_text\": " + quote(question)
            + ", \"mode\": \"lexical\", \"k\": 100, \"levels\": [0], \"filter\": {\"term\": {\"chapter\": 2}}}}", 100,
            "?search_type=dfs_query_then_fetch"));
        List<Map.Entry<String, Double>> expected = minMax(dense, lexical, 0.5);
        assertEquals(expected.subList(0, 8).stream().map(Map.Entry::getKey).toList(), ids(hits));
    }

    /**
     * With every child level counted (the default) the lexical side leaves its children.level filter out, which holds for
     * every child with a text: the same parents with the same scores as with the filter, which naming the levels this
     * index holds ([0, 1, 2] of its 4 possible child levels) keeps — in the lexical and the hybrid mode, on 1 and 3 shards.
     */
    public void testEveryLevelCounted_withoutTheLevelFilter_givesTheParentsAndScoresOfTheFilteredForm_oneAndThreeShards()
        throws Exception {
        ingest("hl1", 1);
        ingest("hl3", 3);
        for (String index : List.of("hl1-chunks", "hl3-chunks")) {
            for (String question : QUESTIONS) {
                for (String mode : List.of("lexical", "hybrid")) {
                    String query = "{\"multi_granular\": {\"query_text\": " + quote(question) + ", \"mode\": \"" + mode + "\", \"k\": 20";
                    List<Map<String, Object>> unfiltered = search(index, query + "}}", 20);
                    List<Map<String, Object>> filtered = search(index, query + ", \"levels\": [0, 1, 2]}}", 20);
                    assertEquals(index + " " + mode + " " + question, 20, unfiltered.size());
                    assertEquals(index + " " + mode + " " + question, ids(filtered), ids(unfiltered));
                    assertSameAnswer(index + " " + mode + " " + question, scores(filtered), scores(unfiltered));
                }
            }
        }
    }

    public void testEachSide_canBeAskedForAlone() throws Exception {
        ingest("hs", 2);
        String question = QUESTIONS.get(0);
        Map<String, Object> r = call("POST", "/_plugins/_strata/_embed", json(Map.of("texts", List.of(question), "purpose", "query")));
        String vector = ((List<Object>) r.get("vectors")).get(0).toString();
        List<Map<String, Object>> dense = search("hs-chunks", "{\"multi_granular\": {\"query_text\": " + quote(question)
            + ", \"mode\": \"dense\", \"k\": 5}}", 5);
        List<Map<String, Object>> byVector = search("hs-chunks", "{\"multi_granular\": {\"vector\": " + vector + ", \"k\": 5}}", 5);
        assertEquals(ids(byVector), ids(dense));
        assertSameAnswer("dense", scores(byVector), scores(dense));
        List<Map<String, Object>> lexical = search("hs-chunks", "{\"multi_granular\": {\"query_text\": " + quote(question)
            + ", \"mode\": \"lexical\", \"k\": 5}}", 5);
        List<Map<String, Object>> byMatch = search("hs-chunks", "{\"multi_granular\": {\"match\": " + quote(question) + "}}", 5);
        assertEquals(ids(byMatch), ids(lexical));
        assertSameAnswer("lexical", scores(byMatch), scores(lexical));
    }

    public void testQueryText_onAChunkIndexWithoutVectors_isLexical_andHybridThereIsA400() throws Exception {
        call("PUT", "/hn-chunks", "{\"settings\": {\"number_of_shards\": 1, \"number_of_replicas\": 0}}");
        putPipeline("hn", "{\"field\": \"body\", \"target_index\": \"hn-chunks\", \"strategy\": {\"type\": \"recursive\","
            + " \"max_words\": 80}, \"embed\": false}");
        Map<String, Map<String, Object>> docs = new LinkedHashMap<>();
        int n = 0;
        for (String body : emmaChapters().values()) {
            docs.put("ch" + (++n), Map.of("body", body));
        }
        assertEquals(false, bulk("hn-src", "hn", docs).get("errors"));
        refresh("hn-chunks");
        String question = QUESTIONS.get(0);
        List<Map<String, Object>> text = search("hn-chunks", "{\"multi_granular\": {\"query_text\": " + quote(question) + "}}", 5);
        List<Map<String, Object>> match = search("hn-chunks", "{\"multi_granular\": {\"match\": " + quote(question) + "}}", 5);
        assertEquals(5, text.size());
        assertEquals(ids(match), ids(text));
        ResponseException e = callFailing("POST", "/hn-chunks/_search", "{\"query\": {\"multi_granular\": {\"query_text\": "
            + quote(question) + ", \"mode\": \"hybrid\"}}}");
        assertEquals(400, e.getResponse().getStatusLine().getStatusCode());
        assertTrue(e.getMessage(), e.getMessage().contains("chunk index [hn-chunks] holds no vectors"));
    }

    /** FuzzIT found a 500 here: a long text made the lexical side's BM25 query larger than Lucene takes. */
    public void testATextTooLongForTheLexicalSide_is400NamingTheLimit_andTheDenseModeStillAnswers() throws Exception {
        ingest("ht", 1);
        // distinct terms: Lucene merges a term's repeats into one clause
        Set<String> words = new java.util.LinkedHashSet<>();
        for (String w : String.join(" ", emmaChapters().values()).toLowerCase(java.util.Locale.ROOT).split("[^a-z]+")) {
            if (words.size() < 300 && !w.isBlank()) {
                words.add(w);
            }
        }
        String longText = String.join(" ", words); // 300 terms × 4 fields > 1024 clauses
        String shorter = String.join(" ", new ArrayList<>(words).subList(0, 100));
        for (String query : List.of("{\"query_text\": " + quote(longText) + "}", "{\"match\": " + quote(longText) + "}",
            "{\"query_text\": " + quote(longText) + ", \"mode\": \"lexical\", \"explain_child\": true}")) {
            ResponseException e = callFailing("POST", "/ht-chunks/_search", "{\"query\": {\"multi_granular\": " + query + "}}");
            assertEquals(400, e.getResponse().getStatusLine().getStatusCode());
            // as applications call it: inside a bool, with a filter beside it
            e = callFailing("POST", "/ht-chunks/_search", "{\"query\": {\"bool\": {\"must\": [{\"multi_granular\": " + query
                + "}], \"filter\": [{\"exists\": {\"field\": \"text\"}}]}}}");
            assertEquals(400, e.getResponse().getStatusLine().getStatusCode());
            assertTrue(e.getMessage(), e.getMessage().contains("has too many terms for its [lexical] search"));
            assertTrue(e.getMessage(), e.getMessage().contains("[indices.query.bool.max_clause_count]"));
        }
        assertEquals(5, search("ht-chunks", "{\"multi_granular\": {\"query_text\": " + quote(longText) + ", \"mode\": \"dense\", "
            + "\"k\": 5}}", 5).size());
        assertEquals(5, search("ht-chunks", "{\"multi_granular\": {\"query_text\": " + quote(shorter) + ", \"k\": 5}}", 5).size());
    }

    public void testBadParameters_get400NamingTheField() throws Exception {
        ingest("hb", 1);
        Map<String, String> cases = new LinkedHashMap<>();
        cases.put("{\"query_text\": \"x\", \"mode\": \"sparse\"}", "[mode] must be one of [hybrid, dense, lexical], got [sparse]");
        cases.put("{\"vector\": [1, 2], \"mode\": \"hybrid\"}", "[vector] is the dense mode");
        cases.put("{\"match\": \"x\", \"fusion\": {\"window\": 10}}", "[fusion] goes with the hybrid mode");
        cases.put("{\"query_text\": \"x\", \"fusion\": {\"dense_weight\": 2}}", "[fusion.dense_weight] must be in [0, 1], got [2.0]");
        cases.put("{\"query_text\": \"x\", \"fusion\": {\"method\": \"sum\"}}", "[fusion.method] must be one of [min_max, rrf]");
        cases.put("{\"query_text\": \"x\", \"k\": 50, \"fusion\": {\"window\": 20}}", "[fusion.window] must be at least [k] = 50");
        cases.put("{\"query_text\": \"x\", \"fusion\": {\"colour\": 1}}", "unknown field [colour]");
        for (Map.Entry<String, String> c : cases.entrySet()) {
            ResponseException e = callFailing("POST", "/hb-chunks/_search", "{\"query\": {\"multi_granular\": " + c.getKey() + "}}");
            assertEquals(c.getKey(), 400, e.getResponse().getStatusLine().getStatusCode());
            assertTrue("expected [" + c.getValue() + "] in " + e.getMessage(), e.getMessage().contains(c.getValue()));
        }
    }
}
