package io.strata.it;

import io.strata.it.QueryOracle.Scored;
import org.opensearch.client.Request;
import org.opensearch.client.ResponseException;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code multi_granular} composed with OpenSearch the way applications compose queries, checked against {@link QueryOracle}
 * (brute force over the chunk documents and standard OpenSearch queries) on a 1-shard and a 3-shard chunk index of the
 * same small corpus (Emma's first three chapters in twelve source documents, ~80-word parents).
 *
 * <p>The matrix ({@link #testMatrix_everyModeWrapperAndFeature_returnsWhatTheOracleReturns_onOneAndThreeShards}): the three
 * modes × the wrappers below × the request features below, every cell its own request, on both indices:
 * <ul>
 *   <li>wrappers: bare; {@code bool} with {@code filter}; with {@code must_not}; with required {@code should}
 *   ({@code minimum_should_match: 1}: a restriction, and +1 to the score of the constant-score integer terms); the query in
 *   {@code should} beside a {@code filter} (the restriction is the filter; parents that only match the filter are hits with
 *   score 0); two {@code multi_granular} in {@code should} (each planned with the filter; scores add up);
 *   {@code constant_score} (boost 2); {@code function_score} (weight 3, multiply); {@code dis_max} with a term query (the
 *   union, MAX of the scores).</li>
 *   <li>features: from/size; {@code search_after} (two pages against one sorted request); point-in-time (sub-searches and
 *   lookup on the PIT); a terms aggregation; {@code track_total_hits: true} (every cell also checks the total);
 *   {@code _source} filtering; {@code highlight} with a {@code highlight_query} (the planned lookup carries no terms of
 *   its own, like {@code knn}); {@code collapse} on {@code source_id}; top-level {@code min_score}; {@code timeout}.</li>
 * </ul>
 * Every cell's expectation is the oracle's k parents for the mode under the wrapper's restriction, then the wrapper's
 * scoring, then the feature (which applies after the top k). The dense oracle is exact; the query matches it because the
 * tests ask for {@code num_candidates: 10000}, more than the vectors of this index, so HNSW visits the whole graph (with
 * the default candidates the dense side is approximate). Lexical scores are per-shard BM25 (no dfs), as in a plain search;
 * the hybrid lexical side uses global statistics (dfs), also in the oracle.
 *
 * <p>Combinations that cannot be planned get a 400 naming them ({@link #testUnsupportedCombinations_get400NamingThem}); a
 * sub-search that fails on a shard fails the query instead of fusing a partial side; a point-in-time hides a document
 * written after it from both the planning and the lookup; the two failures of issue 25 have their own tests.
 */
@SuppressWarnings("unchecked")
public class QueryConformanceIT extends StrataRestTestCase {
    private static final String QUESTION = "Why does Mr. Woodhouse feel fortunate for thinking of Hannah?";
    private static final String OTHER = "Miss Taylor wedding and Mr. Weston";
    private static final int K = 4;
    private static final int WINDOW = 20;
    private static final List<String> INDICES = List.of("qc1-chunks", "qc3-chunks");
    private static final List<String> MODES = List.of("dense", "lexical", "hybrid");
    private static boolean ingested;
    private static float[] questionVector;

    @Override
    protected boolean preserveIndicesUponCompletion() {
        return true; // ingested once for every test of this class (the corpus is only read); later classes wipe it
    }

    private static void ingestOnce() throws Exception {
        if (ingested) {
            return;
        }
        for (String index : INDICES) {
            String name = index.substring(0, 3);
            call("DELETE", "/" + name + "-src," + index + "?ignore_unavailable=true");
            call("PUT", "/" + index, "{\"settings\": {\"number_of_shards\": " + (index.startsWith("qc1") ? 1 : 3)
                + ", \"number_of_replicas\": 0, \"index.knn\": true}}");
            putPipeline(name, "{\"field\": \"body\", \"target_index\": \"" + index + "\", \"strategy\": {\"type\": \"recursive\","
                + " \"max_words\": 80}, \"copy_fields\": [\"chapter\", \"topic\"]}");
            Map<String, Map<String, Object>> docs = new LinkedHashMap<>();
            int chapter = 0;
            for (String body : emmaChapters().values()) {
                chapter++;
                String[] paragraphs = body.split("\n\\s*\n");
                int parts = 4;
                for (int part = 0; part < parts; part++) {
                    StringBuilder text = new StringBuilder();
                    for (int p = part; p < paragraphs.length; p += parts) {
                        text.append(paragraphs[p].strip()).append("\n\n");
                    }
                    docs.put("c" + chapter + "p" + part, Map.of("chapter", chapter, "topic", part % 2 == 0 ? "a" : "b",
                        "body", text.toString().strip()));
                }
            }
            for (Map.Entry<String, Map<String, Object>> doc : docs.entrySet()) { // one bulk each: every request well within its time-out
                Map<String, Object> r = bulk(name + "-src", name, Map.of(doc.getKey(), doc.getValue()));
                assertEquals(String.valueOf(r), false, r.get("errors"));
            }
            refresh(index);
        }
        Map<String, Object> r = call("POST", "/_plugins/_strata/_embed", json(Map.of("texts", List.of(QUESTION), "purpose", "query")));
        questionVector = QueryOracle.floats((List<Number>) ((List<Object>) r.get("vectors")).get(0));
        ingested = true;
    }

    static String quote(String s) {
        String j = json(Map.of("q", s));
        return j.substring(j.indexOf(':') + 1, j.length() - 1);
    }

    /** The multi_granular query of a mode, with exact dense candidates (see the class comment). */
    private static String mg(String mode) {
        return switch (mode) {
            case "dense" -> "{\"multi_granular\": {\"query_text\": " + quote(QUESTION) + ", \"mode\": \"dense\", \"k\": " + K
                + ", \"num_candidates\": 10000}}";
            case "lexical" -> "{\"multi_granular\": {\"query_text\": " + quote(QUESTION) + ", \"mode\": \"lexical\", \"k\": " + K + "}}";
            default -> "{\"multi_granular\": {\"query_text\": " + quote(QUESTION) + ", \"k\": " + K + ", \"num_candidates\": 10000,"
                + " \"fusion\": {\"window\": " + WINDOW + "}}}";
        };
    }

    /** The oracle's k parents of a mode under a restriction (JSON of a standard query; null: none). */
    private static List<Scored> planned(QueryOracle oracle, String mode, String restriction) throws IOException {
        return switch (mode) {
            case "dense" -> QueryOracle.top(oracle.dense(questionVector, oracle.matching(restriction), null), K);
            case "lexical" -> oracle.lexical(QUESTION, restriction, K, false);
            default -> QueryOracle.minMax(QueryOracle.top(oracle.dense(questionVector, oracle.matching(restriction), null), WINDOW),
                oracle.lexical(QUESTION, restriction, WINDOW, true), K);
        };
    }

    /** A query around {@code multi_granular}: how it wraps it, its restriction, and what it makes of the planned parents. */
    private record Wrapper(String name, Function<String, String> wrap, String restriction, Expectation expect) {}

    @FunctionalInterface
    private interface Expectation {
        /** Every hit of the request (id → score) from the planned parents of the mode. */
        Map<String, Float> hits(QueryOracle oracle, String mode, List<Scored> planned) throws IOException;
    }

    private static Map<String, Float> asMap(List<Scored> planned) {
        Map<String, Float> out = new LinkedHashMap<>();
        planned.forEach(s -> out.put(s.id(), s.score()));
        return out;
    }

    private static final String TOPIC_A = "{\"term\": {\"topic\": \"a\"}}";

    private static List<Wrapper> wrappers() {
        List<Wrapper> w = new ArrayList<>();
        w.add(new Wrapper("bare", q -> q, null, (o, m, p) -> asMap(p)));
        w.add(new Wrapper("bool filter", q -> "{\"bool\": {\"must\": " + q + ", \"filter\": {\"term\": {\"topic\": \"b\"}}}}",
            "{\"term\": {\"topic\": \"b\"}}", (o, m, p) -> asMap(p)));
        w.add(new Wrapper("bool must_not", q -> "{\"bool\": {\"must\": " + q + ", \"must_not\": {\"term\": {\"chapter\": 1}}}}",
            "{\"bool\": {\"must_not\": {\"term\": {\"chapter\": 1}}}}", (o, m, p) -> asMap(p)));
        w.add(new Wrapper("bool required should", q -> "{\"bool\": {\"must\": " + q + ", \"should\": [{\"term\": {\"chapter\": 2}},"
            + " {\"term\": {\"chapter\": 3}}], \"minimum_should_match\": 1}}",
            "{\"bool\": {\"should\": [{\"term\": {\"chapter\": 2}}, {\"term\": {\"chapter\": 3}}], \"minimum_should_match\": 1}}",
            (o, m, p) -> {
                Map<String, Float> out = new LinkedHashMap<>();
                p.forEach(s -> out.put(s.id(), s.score() + 1f)); // one integer term matches: a constant score of 1
                return out;
            }));
        w.add(new Wrapper("in should beside a filter", q -> "{\"bool\": {\"should\": [" + q + "], \"filter\": " + TOPIC_A + "}}", TOPIC_A,
            (o, m, p) -> {
                Map<String, Float> out = new LinkedHashMap<>();
                for (String id : o.matching(TOPIC_A)) {
                    out.put(id, 0f); // the should clause is optional here: the filter alone matches, with score 0
                }
                out.putAll(asMap(p));
                return out;
            }));
        w.add(new Wrapper("two multi_granular in should", q -> "{\"bool\": {\"should\": [" + q + ", {\"multi_granular\": {\"match\": "
            + quote(OTHER) + ", \"k\": " + K + "}}], \"filter\": " + TOPIC_A + ", \"minimum_should_match\": 1}}", TOPIC_A,
            (o, m, p) -> {
                Map<String, Float> out = asMap(p);
                for (Scored s : o.lexical(OTHER, TOPIC_A, K, false)) {
                    out.merge(s.id(), s.score(), Float::sum);
                }
                return out;
            }));
        w.add(new Wrapper("constant_score", q -> "{\"constant_score\": {\"filter\": " + q + ", \"boost\": 2}}", null, (o, m, p) -> {
            Map<String, Float> out = new LinkedHashMap<>();
            p.forEach(s -> out.put(s.id(), 2f));
            return out;
        }));
        w.add(new Wrapper("function_score", q -> "{\"function_score\": {\"query\": " + q + ", \"functions\": [{\"weight\": 3}],"
            + " \"boost_mode\": \"multiply\"}}", null, (o, m, p) -> {
                Map<String, Float> out = new LinkedHashMap<>();
                p.forEach(s -> out.put(s.id(), s.score() * 3f));
                return out;
            }));
        w.add(new Wrapper("dis_max", q -> "{\"dis_max\": {\"queries\": [" + q + ", {\"term\": {\"chapter\": 3}}]}}", null, (o, m, p) -> {
            Map<String, Float> out = new LinkedHashMap<>();
            for (String id : o.matching("{\"term\": {\"chapter\": 3}}")) {
                out.put(id, 1f);
            }
            p.forEach(s -> out.merge(s.id(), s.score(), Math::max));
            return out;
        }));
        return w;
    }

    private static List<Map<String, Object>> hits(Map<String, Object> response) {
        return (List<Map<String, Object>>) ((Map<String, Object>) response.get("hits")).get("hits");
    }

    private static long total(Map<String, Object> response) {
        return ((Number) ((Map<String, Object>) ((Map<String, Object>) response.get("hits")).get("total")).get("value")).longValue();
    }

    private static float score(Map<String, Object> hit) {
        return ((Number) hit.get("_score")).floatValue();
    }

    private static void assertClose(String label, float expected, float actual) {
        assertEquals(label, expected, actual, 2e-5f * Math.max(1f, Math.abs(expected)));
    }

    /** Expected hits, best first (ties by id: only the scores are compared rank by rank). */
    private static List<Scored> sorted(Map<String, Float> expected) {
        List<Scored> out = new ArrayList<>();
        expected.forEach((id, s) -> out.add(new Scored(id, s)));
        out.sort(QueryOracle.BEST_FIRST);
        return out;
    }

    /** The page [from, from + size) of the expected hits: same count, each hit's own expected score, the scores rank by rank. */
    private static void assertPage(String label, Map<String, Float> expected, List<Map<String, Object>> hits, int from, int size) {
        List<Scored> ranked = sorted(expected);
        assertEquals(label + ": hits " + ids(hits) + " expected " + ranked, Math.max(0, Math.min(size, ranked.size() - from)), hits.size());
        for (int i = 0; i < hits.size(); i++) {
            String id = (String) hits.get(i).get("_id");
            assertTrue(label + ": unexpected hit " + id + " at " + (from + i) + "; expected " + ranked, expected.containsKey(id));
            assertClose(label + ": score of " + id, expected.get(id), score(hits.get(i)));
            assertClose(label + ": score at rank " + (from + i), ranked.get(from + i).score(), score(hits.get(i)));
        }
    }

    private static List<String> ids(List<Map<String, Object>> hits) {
        return hits.stream().map(h -> (String) h.get("_id")).toList();
    }

    private static Map<String, Object> search(String path, String body) throws IOException {
        return call("POST", path, body);
    }

    public void testMatrix_everyModeWrapperAndFeature_returnsWhatTheOracleReturns_onOneAndThreeShards() throws Exception {
        ingestOnce();
        for (String index : INDICES) {
            QueryOracle oracle = QueryOracle.load(index);
            assertTrue(index + ": parents " + oracle.parents().size(), oracle.parents().size() > 60);
            String pit = (String) call("POST", "/" + index + "/_search/point_in_time?keep_alive=5m").get("pit_id");
            try {
                for (String mode : MODES) {
                    Map<String, List<Scored>> plans = new HashMap<>();
                    for (Wrapper w : wrappers()) {
                        String label = index + " " + mode + " " + w.name();
                        List<Scored> planned = plans.containsKey(w.restriction()) ? plans.get(w.restriction())
                            : planned(oracle, mode, w.restriction());
                        plans.put(w.restriction(), planned);
                        assertEquals(label + ": the oracle finds k parents", K, planned.size());
                        Map<String, Float> expected = w.expect().hits(oracle, mode, planned);
                        checkFeatures(label, index, oracle, pit, w.wrap().apply(mg(mode)), expected);
                    }
                }
            } finally {
                call("DELETE", "/_search/point_in_time", "{\"pit_id\": [" + quote(pit) + "]}");
            }
        }
    }

    /** One request per feature; each against the expected hits. */
    private static void checkFeatures(String label, String index, QueryOracle oracle, String pit, String query,
                                      Map<String, Float> expected) throws IOException {
        String path = "/" + index + "/_search";
        int n = expected.size();
        // plain, with track_total_hits
        Map<String, Object> r = search(path, "{\"size\": 100, \"track_total_hits\": true, \"query\": " + query + "}");
        assertEquals(label + " total", n, total(r));
        assertEquals(label + " relation", "eq", ((Map<String, Object>) ((Map<String, Object>) r.get("hits")).get("total")).get("relation"));
        assertPage(label, expected, hits(r), 0, 100);
        // from/size
        assertPage(label + " from/size", expected, hits(search(path, "{\"from\": 1, \"size\": 2, \"query\": " + query + "}")), 1, 2);
        // search_after: two pages equal one sorted request, which is the oracle's
        String sort = "\"sort\": [{\"_score\": \"desc\"}, {\"source_id\": \"asc\"}, {\"ordinal\": \"asc\"}]";
        List<Map<String, Object>> all = hits(search(path, "{\"size\": 100, " + sort + ", \"query\": " + query + "}"));
        assertPage(label + " sorted", expected, all, 0, 100);
        List<Map<String, Object>> first = hits(search(path, "{\"size\": 2, " + sort + ", \"query\": " + query + "}"));
        List<Object> after = (List<Object>) first.get(first.size() - 1).get("sort");
        List<Map<String, Object>> second = hits(search(path, "{\"size\": 100, " + sort + ", \"search_after\": " + json(Map.of("a", after))
            .replaceFirst("^\\{\"a\":", "").replaceFirst("}$", "") + ", \"query\": " + query + "}"));
        List<String> paged = new ArrayList<>(ids(first));
        paged.addAll(ids(second));
        assertEquals(label + " search_after", ids(all), paged);
        // point in time: the same (nothing was written since it was opened)
        Map<String, Object> withPit = search("/_search", "{\"size\": 100, \"pit\": {\"id\": " + quote(pit) + ", \"keep_alive\": \"5m\"},"
            + " \"query\": " + query + "}");
        assertPage(label + " pit", expected, hits(withPit), 0, 100);
        // aggregations over exactly the expected hits
        Map<String, Object> aggs = search(path, "{\"size\": 0, \"query\": " + query + ", \"aggs\": {\"ch\": {\"terms\": {\"field\":"
            + " \"chapter\"}}}}");
        Map<Integer, Integer> buckets = new TreeMap<>();
        for (Object b : (List<Object>) ((Map<String, Object>) ((Map<String, Object>) aggs.get("aggregations")).get("ch")).get("buckets")) {
            buckets.put(((Number) ((Map<String, Object>) b).get("key")).intValue(), ((Number) ((Map<String, Object>) b).get("doc_count"))
                .intValue());
        }
        Map<Integer, Integer> expectedBuckets = new TreeMap<>();
        for (String id : expected.keySet()) {
            expectedBuckets.merge(((Number) oracle.parents().get(id).source().get("chapter")).intValue(), 1, Integer::sum);
        }
        assertEquals(label + " aggregations", expectedBuckets, buckets);
        // _source filtering
        List<Map<String, Object>> filtered = hits(search(path, "{\"size\": 100, \"_source\": [\"chapter\"], \"query\": " + query + "}"));
        assertPage(label + " _source", expected, filtered, 0, 100);
        for (Map<String, Object> hit : filtered) {
            assertEquals(label + " _source", Set.of("chapter"), ((Map<String, Object>) hit.get("_source")).keySet());
        }
        // highlight with a highlight_query: every hit whose text holds the word, and only those
        List<Map<String, Object>> highlighted = hits(search(path, "{\"size\": 100, \"query\": " + query + ", \"highlight\": {\"fields\":"
            + " {\"text\": {\"highlight_query\": {\"match\": {\"text\": \"Hannah\"}}}}}}"));
        assertPage(label + " highlight", expected, highlighted, 0, 100);
        for (Map<String, Object> hit : highlighted) {
            String text = (String) oracle.parents().get((String) hit.get("_id")).source().get("text");
            // a word of its own, as the standard tokenizer cuts it (Hannah's is one token)
            boolean has = text.toLowerCase(Locale.ROOT).matches("(?s).*(?<![\\p{L}\\p{N}'\u2019])hannah(?![\\p{L}\\p{N}'\u2019]).*");
            Map<String, Object> hl = (Map<String, Object>) hit.get("highlight");
            assertEquals(label + " highlight of " + hit.get("_id"), has, hl != null && String.valueOf(hl.get("text")).contains("<em>Hannah</em>"));
        }
        // collapse on source_id: the best parent of each source document, among exactly the expected hits
        Map<String, Float> best = new HashMap<>();
        for (Map.Entry<String, Float> e : expected.entrySet()) {
            best.merge((String) oracle.parents().get(e.getKey()).source().get("source_id"), e.getValue(), Math::max);
        }
        Map<String, Object> collapsed = search(path, "{\"size\": 100, \"query\": " + query + ", \"collapse\": {\"field\": \"source_id\"}}");
        List<Map<String, Object>> groups = hits(collapsed);
        assertEquals(label + " collapse groups", best.size(), groups.size());
        for (Map<String, Object> hit : groups) {
            String source = (String) oracle.parents().get((String) hit.get("_id")).source().get("source_id");
            assertClose(label + " collapse " + source, best.get(source), score(hit));
        }
        // min_score: what scores at least the second-best expected score
        List<Scored> ranked = sorted(expected);
        if (ranked.size() > 2 && ranked.get(1).score() > ranked.get(2).score()) {
            float min = (ranked.get(1).score() + ranked.get(2).score()) / 2;
            Map<String, Float> above = new LinkedHashMap<>();
            expected.forEach((id, s) -> {
                if (s >= min) {
                    above.put(id, s);
                }
            });
            assertPage(label + " min_score", above, hits(search(path, "{\"size\": 100, \"min_score\": " + min + ", \"query\": " + query
                + "}")), 0, 100);
        }
        // timeout: passed on, not reached
        Map<String, Object> timed = search(path, "{\"size\": 100, \"timeout\": \"30s\", \"query\": " + query + "}");
        assertEquals(label + " timed_out", false, timed.get("timed_out"));
        assertPage(label + " timeout", expected, hits(timed), 0, 100);
    }

    /** {@code _count}, {@code _explain} and {@code _validate} plan the query on their coordinator too. */
    public void testCountExplainAndValidate_seeTheSameKParents() throws Exception {
        ingestOnce();
        String index = "qc3-chunks";
        for (String mode : MODES) {
            String query = "{\"bool\": {\"must\": " + mg(mode) + ", \"filter\": {\"term\": {\"topic\": \"b\"}}}}";
            List<Map<String, Object>> hits = hits(search("/" + index + "/_search", "{\"size\": 100, \"query\": " + query + "}"));
            assertEquals(mode, K, hits.size());
            assertEquals(mode, K, ((Number) call("POST", "/" + index + "/_count", "{\"query\": " + query + "}").get("count")).intValue());
            Map<String, Object> in = call("POST", "/" + index + "/_explain/" + hits.get(0).get("_id"), "{\"query\": " + query + "}");
            assertEquals(mode + ": " + in, true, in.get("matched"));
            assertEquals(mode, score(hits.get(0)), ((Number) ((Map<String, Object>) in.get("explanation")).get("value")).floatValue(),
                2e-5f * Math.max(1f, score(hits.get(0))));
            String outsider = QueryOracle.load(index).matching("{\"term\": {\"topic\": \"b\"}}").stream()
                .filter(id -> hits.stream().noneMatch(h -> id.equals(h.get("_id")))).findFirst().orElseThrow();
            assertEquals(mode, false, call("POST", "/" + index + "/_explain/" + outsider, "{\"query\": " + query + "}").get("matched"));
            assertEquals(mode, true, call("POST", "/" + index + "/_validate/query", "{\"query\": " + query + "}").get("valid"));
        }
    }

    /**
     * {@code highlight} without a {@code highlight_query}: where a lexical side ran (hybrid, lexical) it marks in every hit
     * what a {@code match} of the same text marks there, bare and under a bool filter, on one shard and three; the dense mode
     * has no words to mark (as {@code knn}). Before, every mode answered without any highlight.
     */
    public void testHighlight_withoutAHighlightQuery_marksTheLexicalSidesWords_asAMatchOfTheTextDoes() throws Exception {
        ingestOnce();
        Set<String> questionWords = new HashSet<>(Arrays.asList(QUESTION.toLowerCase(Locale.ROOT).split("[^\\p{L}]+")));
        for (String index : INDICES) {
            String path = "/" + index + "/_search";
            for (String mode : MODES) {
                for (String query : List.of(mg(mode), "{\"bool\": {\"must\": " + mg(mode) + ", \"filter\": {\"term\": {\"topic\": \"b\"}}}}")) {
                    String label = index + " " + mode + " " + query;
                    List<Map<String, Object>> implicit = hits(search(path, "{\"size\": 100, \"query\": " + query
                        + ", \"highlight\": {\"fields\": {\"text\": {}}}}"));
                    List<Map<String, Object>> explicit = hits(search(path, "{\"size\": 100, \"query\": " + query
                        + ", \"highlight\": {\"fields\": {\"text\": {\"highlight_query\": {\"match\": {\"text\": " + quote(QUESTION) + "}}}}}}"));
                    assertEquals(label, K, implicit.size());
                    assertEquals(label, ids(explicit), ids(implicit));
                    int marked = 0;
                    for (int i = 0; i < implicit.size(); i++) {
                        Object highlight = implicit.get(i).get("highlight");
                        if (mode.equals("dense")) {
                            assertNull(label + " " + implicit.get(i).get("_id"), highlight);
                            continue;
                        }
                        assertEquals(label + " " + implicit.get(i).get("_id"), explicit.get(i).get("highlight"), highlight);
                        if (highlight != null) {
                            marked++;
                            Matcher em = Pattern.compile("<em>([^<]+)</em>").matcher(String.valueOf(highlight));
                            while (em.find()) {
                                assertTrue(label + ": marked " + em.group(1), questionWords.contains(em.group(1).toLowerCase(Locale.ROOT)));
                            }
                        }
                    }
                    if (!mode.equals("dense")) {
                        assertTrue(label + ": no hit marked", marked > 0);
                    }
                }
            }
        }
    }

    /** Issue 25, first row: a pure-negative restriction around the dense mode. */
    public void testDenseMode_underBoolMustNot_returnsKParents_notNone() throws Exception {
        ingestOnce();
        for (String index : INDICES) {
            QueryOracle oracle = QueryOracle.load(index);
            Map<String, Object> r = search("/" + index + "/_search", "{\"query\": {\"bool\": {\"must\": {\"multi_granular\": {\"query_text\": "
                + quote(QUESTION) + ", \"mode\": \"dense\", \"k\": 3}}, \"must_not\": {\"term\": {\"topic\": \"nope\"}}}}}");
            List<Map<String, Object>> hits = hits(r);
            assertEquals(index + ": " + hits, 3, hits.size());
            // the default candidates search HNSW approximately: every hit has its exact score, the best is the exact best
            List<Scored> exact = oracle.dense(questionVector, oracle.matching(null), null);
            Map<String, Float> all = asMap(exact);
            for (Map<String, Object> hit : hits) {
                assertClose(index + " " + hit.get("_id"), all.get((String) hit.get("_id")), score(hit));
            }
            assertEquals(exact.get(0).id(), hits.get(0).get("_id"));
        }
    }

    /** Issue 25, second row: a tenant-style filter around the default hybrid mode counts before the top k. */
    public void testHybridMode_underBoolFilter_returnsTheParentsOfTheSameFilterInside() throws Exception {
        ingestOnce();
        for (String index : INDICES) {
            String mgText = "\"query_text\": " + quote(QUESTION) + ", \"k\": 3";
            List<Map<String, Object>> outer = hits(search("/" + index + "/_search", "{\"query\": {\"bool\": {\"must\": {\"multi_granular\": {"
                + mgText + "}}, \"filter\": {\"term\": {\"chapter\": 3}}}}}"));
            List<Map<String, Object>> inner = hits(search("/" + index + "/_search", "{\"query\": {\"multi_granular\": {" + mgText
                + ", \"filter\": {\"term\": {\"chapter\": 3}}}}}"));
            assertEquals(index + ": " + outer, 3, outer.size());
            assertEquals(index, ids(inner), ids(outer));
            for (int i = 0; i < 3; i++) {
                assertSameAnswer(index + " #" + i, score(inner.get(i)), score(outer.get(i)));
            }
        }
    }

    public void testUnsupportedCombinations_get400NamingThem() throws Exception {
        ingestOnce();
        String index = "qc3-chunks";
        for (String mode : MODES) {
            String q = mg(mode);
            Map<String, String> cases = new LinkedHashMap<>();
            cases.put("{\"query\": {\"bool\": {\"must_not\": " + q + "}}}", "[must_not]");
            cases.put("{\"query\": {\"boosting\": {\"positive\": {\"match_all\": {}}, \"negative\": " + q + ", \"negative_boost\": 0.5}}}",
                "[negative] query of [boosting]");
            cases.put("{\"query\": {\"bool\": {\"should\": [" + q + ", {\"term\": {\"chapter\": 1}}], \"minimum_should_match\": 2}}}",
                "[minimum_should_match]");
            cases.put("{\"query\": {\"bool\": {\"must\": [" + q + ", {\"multi_granular\": {\"match\": \"Hannah\"}}]}}}",
                "two [multi_granular] queries among the required clauses");
            cases.put("{\"query\": {\"nested\": {\"path\": \"children\", \"query\": " + q + "}}}", "inside [nested]");
            cases.put("{\"query\": {\"match_all\": {}}, \"post_filter\": " + q + "}", "in the search's [query] only");
            cases.put("{\"size\": 0, \"aggs\": {\"f\": {\"filter\": " + q + "}}}", "in the search's [query] only");
            for (Map.Entry<String, String> c : cases.entrySet()) {
                ResponseException e = callFailing("POST", "/" + index + "/_search", c.getKey());
                assertEquals(mode + " " + c.getKey() + ": " + e.getMessage(), 400, e.getResponse().getStatusLine().getStatusCode());
                assertTrue(mode + ": expected [" + c.getValue() + "] in " + e.getMessage(), e.getMessage().contains(c.getValue()));
                assertTrue(mode + ": names the query: " + e.getMessage(), e.getMessage().contains("[multi_granular]"));
            }
        }
    }

    public void testPointInTime_hidesAParentWrittenAfterIt_fromThePlanningAndTheLookup() throws Exception {
        ingestOnce();
        String index = "qc3-chunks";
        QueryOracle oracle = QueryOracle.load(index);
        // (not the lexical mode: its per-shard BM25 statistics change with the copy, so the copy need not tie there)
        for (String mode : List.of("dense", "hybrid")) {
            String body = "{\"size\": 10, \"query\": " + mg(mode) + "}";
            List<Map<String, Object>> before = hits(search("/" + index + "/_search", body));
            String pit = (String) call("POST", "/" + index + "/_search/point_in_time?keep_alive=2m").get("pit_id");
            // a copy of the mode's best parent, written after the PIT: it ties with the best on every side, so without the
            // PIT it is among the top k
            Map<String, Object> copy = new LinkedHashMap<>(oracle.parents().get((String) before.get(0).get("_id")).source());
            copy.put("source_id", "zz-copy");
            call("PUT", "/" + index + "/_doc/zz-copy:0?refresh=true", json(copy));
            try {
                List<String> now = ids(hits(search("/" + index + "/_search", body)));
                assertTrue(mode + ": without the PIT the copy is found: " + now, now.contains("zz-copy:0"));
                List<Map<String, Object>> atPit = hits(search("/_search", "{\"size\": 10, \"pit\": {\"id\": " + quote(pit)
                    + ", \"keep_alive\": \"2m\"}, \"query\": " + mg(mode) + "}"));
                assertEquals(mode + ": the PIT hides the copy from the planning and the lookup", ids(before), ids(atPit));
                for (int i = 0; i < before.size(); i++) {
                    // up to float rounding: a merge between the two searches can change which of two equal chunks is found
                    assertSameAnswer(mode + " #" + i, score(before.get(i)), score(atPit.get(i)));
                }
                if (mode.equals("dense")) {
                    assertPage("dense at the PIT", asMap(QueryOracle.top(oracle.dense(questionVector, oracle.matching(null), null), K)),
                        atPit, 0, K);
                }
            } finally {
                call("DELETE", "/" + index + "/_doc/zz-copy:0?refresh=true");
                call("DELETE", "/_search/point_in_time", "{\"pit_id\": [" + quote(pit) + "]}");
            }
        }
    }

    public void testSubSearch_failingOnOneShard_failsTheQuery_insteadOfUsingAPartialSide() throws Exception {
        ingestOnce();
        String index = "qc3-chunks";
        // a filter that throws on exactly one parent (so on one shard of three): the best lexical one, so that the lexical
        // side, which tests the filter only on parents that share a word with the question, reaches it too
        QueryOracle oracle = QueryOracle.load(index);
        String victim = oracle.lexical(QUESTION, null, 1, false).get(0).id();
        Map<String, Object> source = oracle.parents().get(victim).source();
        String script = "{\"script\": {\"script\": {\"lang\": \"painless\", \"params\": {\"s\": " + quote((String) source.get("source_id"))
            + ", \"o\": " + source.get("ordinal") + "}, \"source\": \"doc['source_id'].value != params.s || doc['ordinal'].value != params.o"
            + " || 1 / (doc['ordinal'].value - params.o) > 0\"}}}";
        for (String mode : MODES) {
            String q = "{\"multi_granular\": {\"query_text\": " + quote(QUESTION) + ", \"k\": " + K + (mode.equals("hybrid") ? ""
                : ", \"mode\": \"" + mode + "\"") + ", \"filter\": " + script + "}}";
            ResponseException e = callFailing("POST", "/" + index + "/_search", "{\"query\": " + q + "}");
            assertTrue(mode + ": " + e.getMessage(), e.getMessage().contains("[multi_granular]"));
            assertTrue(mode + ": " + e.getMessage(), e.getMessage().contains("no partial result"));
        }
    }

    /**
     * The sub-searches are child tasks of the user's search, so a cancel of the search reaches them. A slow filter (a
     * script looping on every parent, evaluated only in the dense sub-search's pre-filter) keeps the sub-search running long
     * enough to be seen in the tasks API.
     */
    @SuppressWarnings("BusyWait")
    public void testSubSearches_areChildTasksOfTheUsersSearch_andACancelReachesThem() throws Exception {
        ingestOnce();
        String slow = "{\"script\": {\"script\": {\"lang\": \"painless\", \"source\": \"long s = 0; for (int i = 0; i < 999000; ++i)"
            + " { s += Integer.toString(i).length(); } return s > 0;\"}}}";
        // three shards: the dense side is planned by a sub-search (one shard runs the graph search in the request itself)
        Request request = new Request("POST", "/qc3-chunks/_search");
        request.setJsonEntity("{\"query\": {\"multi_granular\": {\"vector\": " + java.util.Arrays.toString(questionVector)
            + ", \"k\": 3, \"filter\": " + slow + "}}}");
        java.util.concurrent.CompletableFuture<Object> outcome = new java.util.concurrent.CompletableFuture<>();
        client().performRequestAsync(request, new org.opensearch.client.ResponseListener() {
            @Override
            public void onSuccess(org.opensearch.client.Response response) {
                outcome.complete(response);
            }

            @Override
            public void onFailure(Exception e) {
                outcome.complete(e);
            }
        });
        String parent = null;
        String child = null;
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(30);
        while (child == null && !outcome.isDone() && System.nanoTime() < deadline) {
            Map<String, Object> tasks = call("GET", "/_tasks?actions=indices:data/read/search&detailed=true");
            Map<String, Map<String, Object>> byId = new HashMap<>();
            for (Object node : ((Map<String, Object>) tasks.get("nodes")).values()) {
                for (Map.Entry<String, Object> t : ((Map<String, Object>) ((Map<String, Object>) node).get("tasks")).entrySet()) {
                    byId.put(t.getKey(), (Map<String, Object>) t.getValue());
                }
            }
            for (Map.Entry<String, Map<String, Object>> t : byId.entrySet()) {
                Object p = t.getValue().get("parent_task_id");
                if (p != null && byId.containsKey((String) p) && String.valueOf(byId.get((String) p).get("description")).contains("qc3-chunks")) {
                    parent = (String) p;
                    child = t.getKey();
                }
            }
            Thread.sleep(5);
        }
        assertNotNull("a search task with a search task of the user's request as its parent (done: " + outcome.isDone() + ")", child);
        call("POST", "/_tasks/" + parent + "/_cancel");
        Object result = outcome.get(60, java.util.concurrent.TimeUnit.SECONDS);
        assertTrue("the cancelled search fails: " + result, result instanceof ResponseException);
        assertTrue(String.valueOf(result), String.valueOf(result).contains("cancel"));
    }

    private static long queryTotal(String index) throws IOException {
        Map<String, Object> stats = call("GET", "/" + index + "/_stats/search");
        Map<String, Object> all = (Map<String, Object>) ((Map<String, Object>) stats.get("_all")).get("primaries");
        return ((Number) ((Map<String, Object>) all.get("search")).get("query_total")).longValue();
    }

    /**
     * On one shard a dense query that nothing restricts runs its graph search in the request itself (one shard search, no
     * sub-search), with the same parents and scores as the planned form (a filter that keeps everything forces planning).
     */
    public void testOneShard_anUnrestrictedDenseQuery_runsInTheRequest_withThePlannedParentsAndScores() throws Exception {
        ingestOnce();
        String mg = "{\"multi_granular\": {\"vector\": " + java.util.Arrays.toString(questionVector) + ", \"k\": 4}}";
        long before = queryTotal("qc1-chunks");
        List<Map<String, Object>> direct = hits(search("/qc1-chunks/_search", "{\"query\": " + mg + "}"));
        long directQueries = queryTotal("qc1-chunks") - before;
        before = queryTotal("qc1-chunks");
        List<Map<String, Object>> planned = hits(search("/qc1-chunks/_search",
            "{\"query\": {\"bool\": {\"must\": " + mg + ", \"filter\": {\"match_all\": {}}}}}"));
        long plannedQueries = queryTotal("qc1-chunks") - before;
        assertEquals(ids(planned), ids(direct));
        for (int i = 0; i < direct.size(); i++) {
            assertSameAnswer("#" + i, score(planned.get(i)), score(direct.get(i)));
        }
        assertEquals(4, direct.size());
        assertEquals("one shard search for the direct form", 1, directQueries);
        assertEquals("the planned form: its sub-search, then the request", 2, plannedQueries);
    }

    /**
     * On one shard a hybrid query that nothing restricts fuses its windows in the request itself: its lexical sub-search, then
     * the request (the planned form adds a dense sub-search), with the planned parents, scores and explanations, whatever
     * the fusion, window, levels, k and the query's own filter.
     */
    public void testOneShard_anUnrestrictedHybridQuery_fusesInTheRequest_withThePlannedParentsScoresAndExplanations() throws Exception {
        ingestOnce();
        List<String> variants = List.of("", ", \"fusion\": {\"method\": \"rrf\", \"dense_weight\": 0.3}", ", \"fusion\": {\"window\": 5}",
            ", \"levels\": [1, 2]", ", \"k\": 10", ", \"filter\": {\"term\": {\"topic\": \"a\"}}", ", \"num_candidates\": 10000");
        for (String variant : variants) {
            String mg = "{\"multi_granular\": {\"query_text\": " + quote(QUESTION) + (variant.contains("\"k\"") ? "" : ", \"k\": 4")
                + variant + "}}";
            long before = queryTotal("qc1-chunks");
            Map<String, Object> directAnswer = search("/qc1-chunks/_search", "{\"explain\": true, \"query\": " + mg + "}");
            long directQueries = queryTotal("qc1-chunks") - before;
            before = queryTotal("qc1-chunks");
            Map<String, Object> plannedAnswer = search("/qc1-chunks/_search",
                "{\"explain\": true, \"query\": {\"bool\": {\"must\": " + mg + ", \"filter\": {\"match_all\": {}}}}}");
            long plannedQueries = queryTotal("qc1-chunks") - before;
            List<Map<String, Object>> direct = hits(directAnswer);
            List<Map<String, Object>> planned = hits(plannedAnswer);
            assertEquals(variant, ids(planned), ids(direct));
            assertFalse(variant, direct.isEmpty());
            for (int i = 0; i < direct.size(); i++) {
                assertSameAnswer(variant + " #" + i, score(planned.get(i)), score(direct.get(i)));
                assertEquals(variant + " #" + i + ": both sides explained", 2, sides(direct.get(i)).size());
                assertSameAnswer(variant + " #" + i, sides(planned.get(i)), sides(direct.get(i)));
            }
            assertEquals(variant + ": the lexical sub-search, then the request", 2, directQueries);
            assertEquals(variant + ": the planned form: two sub-searches, then the request", 3, plannedQueries);
        }
    }

    /**
     * What a hit's explanation says of each side of the fusion: the side, its raw score (null outside its window) and what
     * it added (the planned form's match_all filter adds a clause of its own, not listed).
     */
    private static List<Object> sides(Map<String, Object> hit) {
        List<Object> out = new ArrayList<>();
        collectSides((Map<String, Object>) hit.get("_explanation"), out);
        return out;
    }

    private static void collectSides(Map<String, Object> explanation, List<Object> out) {
        Matcher side = Pattern.compile("^(dense|lexical) side: (?:the parent's best chunk's (?:k-NN score|BM25) (\\S+)|the parent is "
            + "not in its window)$").matcher(String.valueOf(explanation.get("description")));
        if (side.matches()) {
            Map<String, Object> s = new HashMap<>();
            s.put("side", side.group(1));
            s.put("raw", side.group(2) == null ? null : Double.parseDouble(side.group(2)));
            s.put("added", ((Number) explanation.get("value")).doubleValue());
            out.add(s);
        }
        for (Object d : (List<Object>) explanation.getOrDefault("details", List.of())) {
            collectSides((Map<String, Object>) d, out);
        }
    }

    public void testVector_ofZerosOrNonFinite_is400NamingTheVector() throws Exception {
        ingestOnce();
        float[] zeros = new float[questionVector.length];
        for (String vector : List.of(java.util.Arrays.toString(zeros), "[1e39" + ", 0".repeat(questionVector.length - 1) + "]")) {
            ResponseException e = callFailing("POST", "/qc1-chunks/_search", "{\"query\": {\"multi_granular\": {\"vector\": " + vector + "}}}");
            assertEquals(e.getMessage(), 400, e.getResponse().getStatusLine().getStatusCode());
            assertTrue(e.getMessage(), e.getMessage().contains("[multi_granular]") && e.getMessage().contains("[vector]"));
        }
    }
}
