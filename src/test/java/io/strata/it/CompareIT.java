package io.strata.it;

import org.opensearch.client.ResponseException;
import org.opensearch.common.xcontent.XContentHelper;
import org.opensearch.common.xcontent.json.JsonXContent;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code POST _plugins/_strata/_compare} on two chunk indices of the same SQuAD documents, one cut at θ 300 and one at
 * θ 60 (the documented way to change chunking today: the source copied through a second pipeline), against an oracle
 * that runs each question's {@code multi_granular} search itself and scores the hits by hand.
 */
@SuppressWarnings("unchecked")
public class CompareIT extends StrataRestTestCase {
    private static final Path SQUAD = Path.of("src/test/resources/eval/datasets/squad2-dev-sample");
    private static final List<String> DOCS = List.of("Normans.txt", "Sky_(United_Kingdom).txt");
    private static final String A = "cmp-a-chunks";
    private static final String B = "cmp-b-chunks";
    private static final String PATH = "/_plugins/_strata/_compare";
    private static final int K = 10;
    private static boolean ingested;

    private static synchronized void ingest() throws IOException {
        if (ingested) {
            return;
        }
        putPipeline("cmp-300", "{\"field\": \"body\", \"target_index\": \"" + A + "\", \"strategy\": {\"type\": \"recursive\", "
            + "\"max_words\": 300}}");
        putPipeline("cmp-60", "{\"field\": \"body\", \"target_index\": \"" + B + "\", \"strategy\": {\"type\": \"recursive\", "
            + "\"max_words\": 60}}");
        Map<String, Map<String, Object>> docs = new LinkedHashMap<>();
        for (String doc : DOCS) {
            docs.put(doc, Map.of("body", Files.readString(SQUAD.resolve("docs").resolve(doc))));
        }
        assertEquals(false, bulk("cmp-src-300", "cmp-300", docs).get("errors"));
        assertEquals(false, bulk("cmp-src-60", "cmp-60", docs).get("errors"));
        refresh(A);
        refresh(B);
        ingested = true;
    }

    /** The chunk indices are built once for all tests of the class. */
    @Override
    protected boolean preserveIndicesUponCompletion() {
        return true;
    }

    /** The first 12 questions of each document; every third without its span (the whole document relevant). */
    private static List<Map<String, Object>> questions() throws IOException {
        List<Map<String, Object>> out = new ArrayList<>();
        Map<String, Integer> taken = new LinkedHashMap<>();
        for (String line : Files.readAllLines(SQUAD.resolve("questions.jsonl"))) {
            Map<String, Object> q = XContentHelper.convertToMap(JsonXContent.jsonXContent, line, false);
            String doc = (String) q.get("doc");
            if (!DOCS.contains(doc) || taken.merge(doc, 1, Integer::sum) > 12) {
                continue;
            }
            Map<String, Object> question = new LinkedHashMap<>();
            question.put("question", q.get("question"));
            question.put("source_id", doc);
            if (out.size() % 3 != 2) {
                question.put("span", List.of(q.get("answer_start"), q.get("answer_end")));
            }
            question.put("cluster", doc + "@" + q.get("paragraph_start"));
            out.add(question);
        }
        assertEquals(24, out.size());
        return out;
    }

    private static Map<String, Object> compare(String a, String b, List<Map<String, Object>> questions) throws IOException {
        return call("POST", PATH, json(Map.of("a", a, "b", b, "questions", questions, "k", K)));
    }

    /**
     * The oracle: question {@code q} searched on {@code index} as a user would (same query, k, and the one shard copy per
     * shard that {@code _compare} reads), scored by hand: the 1-based rank of the first hit from the expected document
     * whose [start, end) overlaps the span (any of its hits without one), 0 if none.
     */
    private static int oracleRank(String index, Map<String, Object> q) throws IOException {
        Map<String, Object> r = call("POST", "/" + index + "/_search?preference=strata-compare", json(Map.of("size", K,
            "_source", List.of("source_id", "start", "end"), "query", Map.of("multi_granular", Map.of("query_text", q.get("question"),
                "k", K)))));
        List<Map<String, Object>> hits = (List<Map<String, Object>>) ((Map<String, Object>) r.get("hits")).get("hits");
        for (int i = 0; i < hits.size(); i++) {
            Map<String, Object> source = (Map<String, Object>) hits.get(i).get("_source");
            boolean sameDoc = q.get("source_id").equals(source.get("source_id"));
            List<Integer> span = (List<Integer>) q.get("span");
            if (sameDoc && (span == null || ((Number) source.get("start")).intValue() < span.get(1)
                && span.get(0) < ((Number) source.get("end")).intValue())) {
                return i + 1;
            }
        }
        return 0;
    }

    public void testCompare_equalsTheOracleOnBothSides_andTheDifferenceLiesInItsInterval() throws IOException {
        ingest();
        List<Map<String, Object>> questions = questions();
        Map<String, Object> answer = compare(A, B, questions);
        double[] dcg1 = new double[2];
        double[] dcgK = new double[2];
        double[] recall = new double[2];
        List<Map<String, Object>> perQuestion = (List<Map<String, Object>>) answer.get("per_question");
        assertEquals(questions.size(), perQuestion.size());
        String[] indices = { A, B };
        String[] sides = { "a", "b" };
        for (int q = 0; q < questions.size(); q++) {
            for (int s = 0; s < 2; s++) {
                int rank = oracleRank(indices[s], questions.get(q));
                Map<String, Object> side = (Map<String, Object>) perQuestion.get(q).get(sides[s]);
                assertEquals("rank of question " + q + " on " + indices[s], rank, side.get("rank"));
                dcg1[s] += rank == 1 ? 100 : 0;
                dcgK[s] += rank > 0 ? 100 / (Math.log(rank + 1) / Math.log(2)) : 0;
                recall[s] += rank > 0 ? 100 : 0;
            }
        }
        for (int s = 0; s < 2; s++) {
            Map<String, Object> side = (Map<String, Object>) answer.get(sides[s]);
            assertEquals(indices[s], side.get("index"));
            assertEquals(dcg1[s] / questions.size(), ((Number) side.get("dcg@1")).doubleValue(), 1e-9);
            assertEquals(dcgK[s] / questions.size(), ((Number) side.get("dcg@k")).doubleValue(), 1e-9);
            assertEquals(recall[s] / questions.size(), ((Number) side.get("recall@k")).doubleValue(), 1e-9);
        }
        assertEquals("cmp-src-300", ((Map<String, Object>) answer.get("a")).get("source_index"));
        assertEquals("cmp-src-60", ((Map<String, Object>) answer.get("b")).get("source_index"));
        assertTrue("both sides find some answers: " + answer.get("a") + " " + answer.get("b"), dcg1[0] > 0 && dcg1[1] > 0);
        Map<String, Object> difference = (Map<String, Object>) answer.get("difference");
        double[] observed = { (dcg1[1] - dcg1[0]) / questions.size(), (dcgK[1] - dcgK[0]) / questions.size(),
            (recall[1] - recall[0]) / questions.size() };
        String[] metrics = { "dcg@1", "dcg@k", "recall@k" };
        for (int m = 0; m < metrics.length; m++) {
            Map<String, Object> d = (Map<String, Object>) difference.get(metrics[m]);
            double mean = ((Number) d.get("mean")).doubleValue();
            assertEquals(metrics[m], observed[m], mean, 1e-9);
            assertTrue(metrics[m] + " interval holds the observed difference: " + d,
                ((Number) d.get("low")).doubleValue() <= mean && mean <= ((Number) d.get("high")).doubleValue());
        }
        // 24 questions over their paragraphs
        assertEquals(questions.stream().map(q -> q.get("cluster")).distinct().count(), ((Number) answer.get("clusters")).longValue());
        assertSameAnswer("the same questions give the same answer", answer, compare(A, B, questions));
    }

    public void testCompare_ofAnIndexWithItself_hasAZeroDifferenceAndAPointInterval() throws IOException {
        ingest();
        Map<String, Object> answer = compare(A, A, questions());
        assertEquals(answer.get("a"), answer.get("b"));
        for (Object d : ((Map<String, Object>) answer.get("difference")).values()) {
            Map<String, Object> interval = (Map<String, Object>) d;
            assertEquals(interval.toString(), 0.0, ((Number) interval.get("mean")).doubleValue(), 0);
            assertEquals(interval.toString(), 0.0, ((Number) interval.get("low")).doubleValue(), 0);
            assertEquals(interval.toString(), 0.0, ((Number) interval.get("high")).doubleValue(), 0);
        }
    }

    public void testCompare_badBodies_are400sNamingTheField() throws IOException {
        ingest();
        List<Map<String, Object>> one = List.of(Map.of("question", "Who was the Norse leader?", "source_id", "Normans.txt"));
        assertBad(json(Map.of("b", B, "questions", one)), "[_compare] [a] required property is missing");
        assertBad(json(Map.of("a", A, "b", B, "questions", List.of())), "[_compare] [questions] must be a non-empty list");
        assertBad(json(Map.of("a", A, "b", B, "questions", List.of(Map.of("question", "Who?", "source_id", "Normans.txt",
            "span", List.of(9, 3))))), "[_compare] [questions[0].span] must be [start, end]");
        assertBad(json(Map.of("a", A, "b", B, "questions", List.of(Map.of("question", "Who?")))),
            "[_compare] [questions[0].source_id] required property is missing");
        assertBad(json(Map.of("a", A, "b", B, "questions", one, "query", Map.of("query_text", "x"))),
            "[_compare] [query.query_text] is set by each question");
        assertBad(json(Map.of("a", A, "b", B, "questions", one, "query", Map.of("mode", "sideways"))),
            "[_compare] [query] is not a valid [multi_granular] query");
        assertBad(json(Map.of("a", A, "b", B, "questions", one, "colour", "red")), "[_compare] unknown field [colour]");
        assertBad(json(Map.of("a", "cmp-src-300", "b", B, "questions", one)),
            "[_compare] [a] [cmp-src-300] is a source index: name one of its chunk indices [" + A + "]");
        assertBad(json(Map.of("a", A, "b", B, "questions", one, "k", 100_000)), "[_compare] [k] must be at most");
        call("PUT", "/_cluster/settings", "{\"transient\": {\"plugins.strata.compare.max_questions\": 2}}");
        try {
            assertBad(json(Map.of("a", A, "b", B, "questions", List.of(one.get(0), one.get(0), one.get(0)))),
                "[_compare] [questions] may hold at most [2] questions on this cluster ([plugins.strata.compare.max_questions]), got [3]");
        } finally {
            call("PUT", "/_cluster/settings", "{\"transient\": {\"plugins.strata.compare.max_questions\": null}}");
        }
    }

    private static void assertBad(String body, String expected) {
        ResponseException e = callFailing("POST", PATH, body);
        assertEquals(body, 400, e.getResponse().getStatusLine().getStatusCode());
        assertTrue("expected [" + expected + "] in " + e.getMessage(), e.getMessage().contains(expected));
    }
}
