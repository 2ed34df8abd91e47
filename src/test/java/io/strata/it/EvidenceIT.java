package io.strata.it;

import ai.djl.huggingface.tokenizers.HuggingFaceTokenizer;
import org.opensearch.client.ResponseException;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * {@code multi_granular}'s {@code evidence} packs on the real cluster, against oracles computed here: each side's top
 * chunks of a parent by brute force (dense: the cosine of the query's vector, from {@code _embed}, with every chunk vector
 * of the parent's chunk document; lexical: OpenSearch's own BM25 of each child and of the parent, one search per parent,
 * with the index-wide statistics of dfs), the scores normalised by the sides' windows (the single-side modes at k = 100),
 * and the sentences at their offsets in the source text. Also as applications call it: inside a {@code bool} with a
 * filter, through an alias, paged; and {@code strata_context} seeded from the evidence chunks.
 */
@SuppressWarnings("unchecked")
public class EvidenceIT extends StrataRestTestCase {
    private static final List<String> QUESTIONS = List.of("Why does Mr. Woodhouse feel fortunate for thinking of Hannah?",
        "Who taught Emma after her mother died?");

    private static Map<String, String> ingest(String name) throws Exception {
        call("PUT", "/" + name + "-chunks", "{\"settings\": {\"number_of_shards\": 2, \"number_of_replicas\": 0, \"index.knn\": true}}");
        putPipeline(name, "{\"field\": \"body\", \"target_index\": \"" + name + "-chunks\", \"strategy\": {\"type\": \"recursive\","
            + " \"max_words\": 80}, \"copy_fields\": [\"chapter\"]}");
        Map<String, String> bodies = new HashMap<>();
        int n = 0;
        Map<String, Map<String, Object>> docs = new LinkedHashMap<>();
        for (String body : emmaChapters().values()) {
            n++;
            docs.put("ch" + n, Map.of("chapter", n, "body", body));
            bodies.put("ch" + n, body);
            if (docs.size() == 4) { // small bulks: one request stays well inside the client's time-out under load
                assertEquals(false, bulk(name + "-src", name, docs).get("errors"));
                docs.clear();
            }
        }
        if (!docs.isEmpty()) {
            assertEquals(false, bulk(name + "-src", name, docs).get("errors"));
        }
        refresh(name + "-chunks");
        return bodies;
    }

    private static String quote(String s) {
        return json(Map.of("q", s)).substring(5).replaceFirst("}$", "");
    }

    private static List<Map<String, Object>> hits(Map<String, Object> response) {
        return (List<Map<String, Object>>) ((Map<String, Object>) response.get("hits")).get("hits");
    }

    private static List<Map<String, Object>> search(String path, String body) throws Exception {
        return hits(call("POST", path, body));
    }

    private static Map<String, Object> evidence(Map<String, Object> hit) {
        return (Map<String, Object>) ((List<Object>) ((Map<String, Object>) hit.get("fields")).get("strata_evidence")).get(0);
    }

    private static double cosine(List<Number> a, List<Number> b) {
        double dot = 0;
        double na = 0;
        double nb = 0;
        for (int i = 0; i < a.size(); i++) {
            double x = a.get(i).doubleValue();
            double y = b.get(i).doubleValue();
            dot += x * y;
            na += x * x;
            nb += y * y;
        }
        return dot / Math.sqrt(na * nb);
    }

    /** The window bounds {top, last} of one side: its single-side mode at k = 100, as the hybrid's side runs it. */
    private static double[] bounds(String index, String question, String mode) throws Exception {
        List<Map<String, Object>> side = search("/" + index + "/_search?search_type=dfs_query_then_fetch", "{\"size\": 100, \"query\":"
            + " {\"multi_granular\": {\"query_text\": " + quote(question) + ", \"mode\": \"" + mode + "\", \"k\": 100}}}");
        return new double[] {((Number) side.get(0).get("_score")).doubleValue(),
            ((Number) side.get(side.size() - 1).get("_score")).doubleValue()};
    }

    private static double normalised(double raw, double[] bounds) {
        return Math.max(0, Math.min(1, (raw - bounds[0 + 1]) / (bounds[0] - bounds[1])));
    }

    /** Brute force: every chunk of the parent scored (1 + cos) / 2 against the query vector, best first: {level, ordinal, score}. */
    private static List<double[]> denseOracle(Map<String, Object> chunkDoc, List<Number> query) {
        List<double[]> all = new ArrayList<>();
        for (Object c : (List<Object>) chunkDoc.get("children")) {
            Map<String, Object> child = (Map<String, Object>) c;
            int level = ((Number) child.get("level")).intValue();
            int ordinal = level == 0 ? 0 : ((Number) child.get("ordinal")).intValue();
            all.add(new double[] {level, ordinal, (1 + cosine(query, (List<Number>) child.get("embedding"))) / 2});
        }
        all.sort((a, b) -> Double.compare(b[2], a[2]));
        return all;
    }

    /** OpenSearch's own BM25 (dfs) of the parent's text and of each of its children's, as the lexical side's MAX lists them. */
    private static List<double[]> lexicalOracle(String index, String id, String question, int n) throws Exception {
        String path = "/" + index + "/_search?search_type=dfs_query_then_fetch";
        List<Map<String, Object>> parent = search(path, "{\"query\": {\"bool\": {\"filter\": {\"ids\": {\"values\": [\"" + id + "\"]}},"
            + " \"must\": {\"match\": {\"text\": " + quote(question) + "}}}}}");
        List<Map<String, Object>> nested = search(path, "{\"_source\": false, \"query\": {\"bool\": {\"filter\": {\"ids\": {\"values\": [\""
            + id + "\"]}}, \"must\": {\"nested\": {\"path\": \"children\", \"score_mode\": \"max\", \"query\": {\"bool\": {\"must\":"
            + " {\"match\": {\"children.text\": " + quote(question) + "}}, \"filter\": {\"terms\": {\"children.level\": [1, 2]}}}},"
            + " \"inner_hits\": {\"size\": 50, \"_source\": [\"children.level\", \"children.ordinal\"]}}}}}}");
        List<double[]> children = new ArrayList<>();
        if (!nested.isEmpty()) {
            Map<String, Object> inner = (Map<String, Object>) ((Map<String, Object>) nested.get(0).get("inner_hits")).get("children");
            for (Map<String, Object> h : hits(inner)) {
                Map<String, Object> src = (Map<String, Object>) h.get("_source");
                children.add(new double[] {((Number) src.get("level")).doubleValue(), ((Number) src.get("ordinal")).doubleValue(),
                    ((Number) h.get("_score")).doubleValue()});
            }
        }
        List<double[]> out = new ArrayList<>();
        double parentScore = parent.isEmpty() ? Double.NaN : ((Number) parent.get(0).get("_score")).doubleValue();
        if (!Double.isNaN(parentScore) && (children.isEmpty() || parentScore > children.get(0)[2])) {
            out.add(new double[] {0, 0, parentScore});
        }
        for (double[] c : children) {
            if (out.size() < n) {
                out.add(c);
            }
        }
        return out;
    }

    /** {@code expected} as {level, ordinal, score}; a level-0 chunk (the parent) is described with the parent's own ordinal. */
    private static void assertChunks(String label, List<double[]> expected, List<Map<String, Object>> actual, double[] bounds,
                                     String body, int parentOrdinal, int n, double tolerance) {
        assertEquals(label + " count", Math.min(n, expected.size()), actual.size());
        for (int i = 0; i < actual.size(); i++) {
            Map<String, Object> c = actual.get(i);
            String at = label + " #" + i + " " + c;
            assertEquals(at, (int) expected.get(i)[0], ((Number) c.get("level")).intValue());
            assertEquals(at, expected.get(i)[0] == 0 ? parentOrdinal : (int) expected.get(i)[1], ((Number) c.get("ordinal")).intValue());
            double score = ((Number) c.get("score")).doubleValue();
            assertEquals(at, expected.get(i)[2], score, tolerance);
            assertEquals(at, body.substring((Integer) c.get("start"), (Integer) c.get("end")), c.get("text"));
            if (bounds != null) {
                assertEquals(at, normalised(score, bounds), ((Number) c.get("normalized")).doubleValue(), 1e-4);
            } else {
                assertNull(at, c.get("normalized"));
            }
        }
    }

    private static void assertSentences(String question, Map<String, Object> pack, Map<String, Object> parent, String body, int n) {
        List<Map<String, Object>> sentences = (List<Map<String, Object>>) pack.get("sentences");
        assertTrue(sentences.size() <= n);
        Set<String> words = new HashSet<>(Arrays.asList(question.toLowerCase(Locale.ROOT).split("\\W+")));
        double previous = Double.MAX_VALUE;
        for (Map<String, Object> s : sentences) {
            int start = (Integer) s.get("start");
            int end = (Integer) s.get("end");
            assertTrue(s + " inside its parent", start >= (Integer) parent.get("start") && end <= (Integer) parent.get("end"));
            assertEquals(body.substring(start, end), s.get("text"));
            assertTrue(s + " holds a word of the question",
                Arrays.stream(((String) s.get("text")).toLowerCase(Locale.ROOT).split("\\W+")).anyMatch(words::contains));
            double score = ((Number) s.get("score")).doubleValue();
            assertTrue("best first", score <= previous);
            previous = score;
        }
    }

    public void testEvidence_eachSidesTopChunks_areTheBruteForceOnes_withWindowNormalisedScores_andSentencesAtSourceOffsets()
        throws Exception {
        Map<String, String> bodies = ingest("ev");
        for (String question : QUESTIONS) {
            List<Number> vector = (List<Number>) ((List<Object>) call("POST", "/_plugins/_strata/_embed",
                json(Map.of("texts", List.of(question), "purpose", "query"))).get("vectors")).get(0);
            double[] denseBounds = bounds("ev-chunks", question, "dense");
            double[] lexicalBounds = bounds("ev-chunks", question, "lexical");
            for (String mode : List.of("hybrid", "dense", "lexical")) {
                List<Map<String, Object>> hits = search("/ev-chunks/_search?search_type=dfs_query_then_fetch", "{\"size\": 5, \"query\": {\"multi_granular\": {\"query_text\": "
                    + quote(question) + ", \"mode\": \"" + mode + "\", \"k\": 5, \"evidence\": {\"chunks\": 3, \"sentences\": 2}}}}");
                assertEquals(5, hits.size());
                for (Map<String, Object> hit : hits) {
                    String label = question + " " + mode + " " + hit.get("_id");
                    Map<String, Object> source = (Map<String, Object>) hit.get("_source");
                    String body = bodies.get(source.get("source_id"));
                    Map<String, Object> pack = evidence(hit);
                    Map<String, Object> chunkDoc = (Map<String, Object>) call("GET", "/ev-chunks/_doc/" + hit.get("_id")).get("_source");
                    List<Map<String, Object>> dense = (List<Map<String, Object>>) pack.get("dense");
                    List<Map<String, Object>> lexical = (List<Map<String, Object>>) pack.get("lexical");
                    boolean hybrid = mode.equals("hybrid");
                    int ordinal = ((Number) source.get("ordinal")).intValue();
                    if (mode.equals("lexical")) {
                        assertEquals(label, List.of(), dense);
                    } else {
                        // 1e-5: the graph search's scores and a double-precision cosine agree to float rounding
                        assertChunks(label + " dense", denseOracle(chunkDoc, vector), dense, hybrid ? denseBounds : null, body, ordinal, 3,
                            1e-5);
                    }
                    if (mode.equals("dense")) {
                        assertEquals(label, List.of(), lexical);
                    } else {
                        assertChunks(label + " lexical", lexicalOracle("ev-chunks", (String) hit.get("_id"), question, 3), lexical,
                            hybrid ? lexicalBounds : null, body, ordinal, 3, 1e-4);
                    }
                    assertSentences(question, pack, source, body, 2);
                }
            }
        }
    }

    public void testEvidence_insideABoolFilter_throughAnAlias_paged_isTheParentsOwnPack() throws Exception {
        ingest("eb");
        call("POST", "/_aliases", "{\"actions\": [{\"add\": {\"index\": \"eb-chunks\", \"alias\": \"eb-odd\", \"filter\": {\"terms\":"
            + " {\"chapter\": [1, 3, 5, 7, 9, 11, 13, 15]}}}}]}");
        String question = QUESTIONS.get(1);
        String mg = "{\"multi_granular\": {\"query_text\": " + quote(question) + ", \"k\": 10, \"evidence\": {\"chunks\": 2, \"sentences\": 1}}}";
        Map<String, Map<String, Object>> alone = new HashMap<>();
        for (Map<String, Object> hit : search("/eb-chunks/_search", "{\"size\": 10, \"query\": " + mg + "}")) {
            alone.put((String) hit.get("_id"), evidence(hit));
        }
        List<Map<String, Object>> paged = search("/eb-odd/_search", "{\"from\": 2, \"size\": 3, \"query\": {\"bool\": {\"must\": " + mg
            + ", \"filter\": {\"range\": {\"chapter\": {\"lte\": 9}}}}}}");
        assertFalse(paged.isEmpty());
        for (Map<String, Object> hit : paged) {
            int chapter = ((Number) ((Map<String, Object>) hit.get("_source")).get("chapter")).intValue();
            assertTrue("alias and bool filters hold: " + chapter, chapter % 2 == 1 && chapter <= 9);
            Map<String, Object> pack = evidence(hit);
            // the sentences and the lexical side's chunks are the parent's whatever the request; the dense chunks too, with
            // scores of the same vectors (the normalisation differs: this request's windows are the filtered ones)
            assertEquals(((Map<String, Object>) alone.getOrDefault(hit.get("_id"), pack)).get("sentences").toString()
                .replaceAll("score=[^,}]*", ""), pack.get("sentences").toString().replaceAll("score=[^,}]*", ""));
            List<Map<String, Object>> dense = (List<Map<String, Object>>) pack.get("dense");
            assertEquals(2, dense.size());
            if (alone.containsKey(hit.get("_id"))) {
                List<Map<String, Object>> d0 = (List<Map<String, Object>>) alone.get(hit.get("_id")).get("dense");
                assertEquals(d0.get(0).get("start"), dense.get(0).get("start"));
                assertEquals(d0.get(1).get("end"), dense.get(1).get("end"));
            }
        }
    }

    /**
     * {@code stored_fields: ["_none_"]} (hits without {@code _id}, as applications ask when they want only fields) in every
     * mode: each hit's {@code explain_child} and evidence are those of the same hit in the same request with its metadata
     * (the oracle), not a 500; {@code strata_context}, which quotes parents by their ids, is a 400 naming the option.
     */
    public void testExplainAndEvidence_ofHitsWithoutTheirIds_areThoseOfTheSameRequestWithThem() throws Exception {
        ingest("en");
        for (String mode : List.of("hybrid", "dense", "lexical")) {
            String mg = "{\"multi_granular\": {\"query_text\": " + quote(QUESTIONS.get(0)) + ", \"mode\": \"" + mode + "\", \"k\": 6,"
                + " \"explain_child\": true, \"evidence\": {\"chunks\": 2, \"sentences\": 2}}}";
            List<Map<String, Object>> with = search("/en-chunks/_search", "{\"size\": 6, \"query\": " + mg + "}");
            List<Map<String, Object>> without = search("/en-chunks/_search", "{\"size\": 6, \"stored_fields\": [\"_none_\"], \"query\": "
                + mg + "}");
            assertEquals(mode, 6, with.size());
            assertEquals(mode, with.size(), without.size());
            for (int i = 0; i < with.size(); i++) {
                assertNull(mode + " no _id asked for", without.get(i).get("_id"));
                assertSameAnswer(mode + " hit " + i, with.get(i).get("_score"), without.get(i).get("_score"));
                assertSameAnswer(mode + " hit " + i, ((Map<String, Object>) with.get(i).get("fields")).get("strata_best_child"),
                    ((Map<String, Object>) without.get(i).get("fields")).get("strata_best_child"));
                assertSameAnswer(mode + " hit " + i, evidence(with.get(i)), evidence(without.get(i)));
            }
        }
        ResponseException e = callFailing("POST", "/en-chunks/_search", "{\"stored_fields\": [\"_none_\"], \"query\": {\"multi_granular\":"
            + " {\"query_text\": " + quote(QUESTIONS.get(0)) + "}}, \"search_pipeline\": {\"response_processors\": [{\"strata_context\":"
            + " {\"budget\": 128}}]}}");
        assertEquals(400, e.getResponse().getStatusLine().getStatusCode());
        assertTrue(e.getMessage(), e.getMessage().contains("[strata_context] needs the hits' [_id], which [stored_fields] [_none_] leaves out"));
    }

    /**
     * {@code seeds: evidence}: a best hit whose matched chunk does not fit the budget starts from the first of its evidence
     * chunks (by normalised score) inside that chunk that fits, counted with the model's own tokenizer here, else from its
     * matched chunk cut to the budget; {@code seeds: chunk} skips it.
     */
    public void testStrataContext_withEvidenceSeeds_startsTheBestHitFromTheBestFinerChunkOfItsMatchThatFits() throws Exception {
        Map<String, String> bodies = ingest("es");
        HuggingFaceTokenizer tokenizer = modelTokenizer("e5-small-v2-q");
        call("PUT", "/_search/pipeline/es-context", "{\"response_processors\": [{\"strata_context\": {\"seeds\": \"evidence\"}}]}");
        int checked = 0;
        for (String question : List.of(QUESTIONS.get(0), QUESTIONS.get(1), "What did Mr. Knightley say about the match between "
            + "Mr. Weston and Miss Taylor?", "Who is Harriet Smith?")) {
            String mg = "{\"multi_granular\": {\"query_text\": " + quote(question) + ", \"k\": 5, \"explain_child\": true, \"evidence\":"
                + " {\"chunks\": 3, \"sentences\": 0}}}";
            List<Map<String, Object>> hits = search("/es-chunks/_search", "{\"size\": 5, \"query\": " + mg + "}");
            Map<String, Object> top = hits.get(0);
            String body = bodies.get(((Map<String, Object>) top.get("_source")).get("source_id"));
            Map<String, Object> best = (Map<String, Object>) ((List<Object>) ((Map<String, Object>) top.get("fields"))
                .get("strata_best_child")).get(0);
            List<Map<String, Object>> alternatives = new ArrayList<>();
            alternatives.addAll((List<Map<String, Object>>) evidence(top).get("dense"));
            alternatives.addAll((List<Map<String, Object>>) evidence(top).get("lexical"));
            alternatives.sort((a, b) -> Double.compare(((Number) b.get("normalized")).doubleValue(), ((Number) a.get("normalized")).doubleValue()));
            int matchedTokens = tokens(tokenizer, body.substring((Integer) best.get("start"), (Integer) best.get("end")));
            int smallest = alternatives.stream().mapToInt(a -> tokens(tokenizer, (String) a.get("text"))).min().orElseThrow();
            if (smallest >= matchedTokens) {
                continue; // no finer chunk to fall back on for this question
            }
            int budget = (smallest + matchedTokens) / 2; // the matched chunk does not fit, some evidence chunk does
            // the best hit takes only a finer chunk inside its matched one; without such a chunk that fits, its match cut
            int from = (Integer) best.get("start");
            int to = (Integer) best.get("end");
            Map<String, Object> expected = alternatives.stream().filter(a -> tokens(tokenizer, (String) a.get("text")) <= budget
                && (Integer) a.get("start") >= from && (Integer) a.get("end") <= to).findFirst().orElse(null);
            Map<String, Object> r = call("POST", "/es-chunks/_search?search_pipeline=es-context", "{\"size\": 5, \"query\": " + mg
                + ", \"ext\": {\"strata_context\": {\"budget\": " + budget + "}}}");
            Map<String, Object> ctx = (Map<String, Object>) ((Map<String, Object>) r.get("ext")).get("strata_context");
            Map<String, Object> first = ((List<Map<String, Object>>) ctx.get("passages")).get(0);
            assertTrue(question + ": the first passage cites the best hit: " + first.get("hits"), ((List<Object>) first.get("hits"))
                .contains(top.get("_id")));
            if (expected == null) {
                assertEquals(question + " at " + budget + ": the match cut", from, first.get("start"));
                assertEquals(question, true, first.get("truncated"));
            } else {
                assertTrue(question + " at " + budget + ": " + first.get("start") + "–" + first.get("end") + " holds " + expected.get("start")
                    + "–" + expected.get("end"), (Integer) first.get("start") <= (Integer) expected.get("start")
                    && (Integer) expected.get("end") <= (Integer) first.get("end"));
            }
            assertTrue(((Number) ctx.get("tokens")).intValue() <= budget);
            // seeds: chunk cuts the best hit's matched chunk at that budget
            Map<String, Object> plain = (Map<String, Object>) ((Map<String, Object>) call("POST", "/es-chunks/_search?search_pipeline=es-context",
                "{\"size\": 5, \"query\": " + mg + ", \"ext\": {\"strata_context\": {\"budget\": " + budget + ", \"seeds\": \"chunk\"}}}")
                .get("ext")).get("strata_context");
            assertTrue(((Number) plain.get("tokens")).intValue() <= budget);
            checked++;
        }
        assertTrue("at least one question had a finer evidence chunk than its matched one", checked > 0);
    }

    private static int tokens(HuggingFaceTokenizer tokenizer, String text) {
        return tokenizer.encode(text, false, false).getIds().length;
    }

    public void testEvidence_badValues_are400sNamingTheField() throws Exception {
        ingest("ex");
        Map<String, String> cases = new LinkedHashMap<>();
        cases.put("{\"query_text\": \"x\", \"evidence\": {\"chunks\": 0}}", "[evidence.chunks] must be in [1, 20], got [0]");
        cases.put("{\"query_text\": \"x\", \"evidence\": {\"sentences\": -1}}", "[evidence.sentences] must be in [0, 10], got [-1]");
        cases.put("{\"query_text\": \"x\", \"evidence\": {\"passages\": 2}}", "allowed: [chunks]");
        for (Map.Entry<String, String> c : cases.entrySet()) {
            ResponseException e = callFailing("POST", "/ex-chunks/_search", "{\"query\": {\"multi_granular\": " + c.getKey() + "}}");
            assertEquals(c.getKey(), 400, e.getResponse().getStatusLine().getStatusCode());
            assertTrue("expected [" + c.getValue() + "] in " + e.getMessage(), e.getMessage().contains(c.getValue()));
        }
        ResponseException e = callFailing("POST", "/ex-chunks/_search?search_pipeline=_none", "{\"query\": {\"match_all\": {}}, \"ext\":"
            + " {\"strata_context\": {\"seeds\": \"words\"}}}");
        assertEquals(400, e.getResponse().getStatusLine().getStatusCode());
    }
}
