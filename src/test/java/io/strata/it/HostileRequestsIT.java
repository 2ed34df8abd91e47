package io.strata.it;

import io.strata.chaos.HostileRequests;
import io.strata.chaos.HostileRequests.Case;
import org.opensearch.client.Request;
import org.opensearch.client.ResponseException;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The adversarial suite's requests beside the search ({@link HostileRequests}, seeded): the {@code multi_granular} query's
 * {@code rescore} in every form and past its range, {@code _compare} bodies (questions lists at and past the limit, spans,
 * clusters, {@code k}, nested {@code query} options), {@code _rebuild} parameters and odd index names, and a parent at the
 * 32,768-token cap. After each: the cluster is up with both nodes, the answer is a 2xx equal to the oracle (brute force
 * over the chunk documents' vectors; plain searches; {@code _chunk} of the stored text) or a 4xx naming the field, and a
 * refused request wrote nothing.
 */
@SuppressWarnings("unchecked")
public class HostileRequestsIT extends StrataRestTestCase {
    private static final long SEED = 44;
    private static final String[] WORDS = {"emma", "harriet", "knightley", "weston", "woodhouse", "marriage", "letter", "ball",
        "hartfield", "randalls", "taylor", "father", "friend", "happy", "evening", "the", "a", "of"};
    private static final int DOCS = 30;
    private static final long MAX_MS = 30_000;
    private static boolean ingested;

    @Override
    protected boolean preserveIndicesUponCompletion() {
        return true;
    }

    @Override
    protected boolean preserveClusterSettings() {
        return true; // each test resets what it set, in finally
    }

    /** {@code hreq}: 30 documents of 55 words, 3 parents each at θ 20, embedded (floats): 90 parents with vectors. */
    private static synchronized void ingest() throws IOException {
        if (ingested) {
            return;
        }
        putPipeline("hreq", """
            {"field": "body", "target_index": "hreq-chunks", "strategy": {"type": "recursive", "max_words": 20}}""");
        HostileRequests gen = new HostileRequests(SEED);
        Map<String, Map<String, Object>> docs = new LinkedHashMap<>();
        for (int i = 0; i < DOCS; i++) {
            docs.put("d" + i, Map.of("body", gen.longText(55, WORDS)));
        }
        assertEquals(false, bulk("hreq", "hreq", docs).get("errors"));
        refresh("hreq-chunks");
        assertEquals(3 * DOCS, count("hreq-chunks"));
        ingested = true;
    }

    private record Answer(int status, Map<String, Object> body, String error, long millis) {}

    private static Answer send(String method, String path, String body) throws IOException {
        long t0 = System.nanoTime();
        Request request = new Request(method, path);
        if (body != null) {
            request.setJsonEntity(body);
        }
        try {
            Map<String, Object> r = entityAsMap(client().performRequest(request));
            return new Answer(200, r, null, (System.nanoTime() - t0) / 1_000_000);
        } catch (ResponseException e) {
            String error = new String(e.getResponse().getEntity().getContent().readAllBytes(), StandardCharsets.UTF_8);
            return new Answer(e.getResponse().getStatusLine().getStatusCode(), null, error, (System.nanoTime() - t0) / 1_000_000);
        }
    }

    /** The cluster answers with both nodes, not red. */
    private static void clusterIsUp(String after) throws IOException {
        Map<String, Object> health = call("GET", "/_cluster/health?timeout=10s");
        assertEquals(after + ": nodes", 2, ((Number) health.get("number_of_nodes")).intValue());
        assertNotEquals(after, "red", health.get("status"));
    }

    /** The answer is what {@code c} says (status, and a refusal names {@code c.mentions()}) in time; then the cluster is up. */
    private static Answer expect(String what, Case c, String method, String path, String body, List<String> problems) throws IOException {
        Answer a = send(method, path, body);
        if (a.status() != c.status()) {
            problems.add(what + " [" + c.name() + "]: answered " + a.status() + " (expected " + c.status() + "): " + a.error());
        } else if (c.mentions() != null && !a.error().contains(c.mentions())) {
            problems.add(what + " [" + c.name() + "]: does not name " + c.mentions() + ": " + a.error());
        } else if (a.millis() > MAX_MS) {
            problems.add(what + " [" + c.name() + "]: took " + a.millis() + " ms");
        }
        clusterIsUp(what + " [" + c.name() + "]");
        return a;
    }

    private static List<Map<String, Object>> hits(Map<String, Object> r) {
        return (List<Map<String, Object>>) ((Map<String, Object>) r.get("hits")).get("hits");
    }

    private static String vectorJson(float[] v) {
        StringBuilder out = new StringBuilder("[");
        for (int i = 0; i < v.length; i++) {
            out.append(i == 0 ? "" : ", ").append(v[i]);
        }
        return out.append(']').toString();
    }

    /**
     * Deep {@code query} options in a {@code _compare}: the comparison parses them with the node's query parser, recursively,
     * on a generic thread. On the code before the limit, 300 nested bools (903 JSON levels, inside XContent's 1,000) overflowed
     * that thread's stack and the node exited (StackOverflowError under AbstractQueryBuilder.parseInnerQueryBuilder, the
     * OpenSearchUncaughtExceptionHandler's "fatal error in thread [opensearch[node-0][generic][T#5]], exiting").
     */
    public void testCompare_queryOptionsNestedPastTheLimit_areRefusedNamingIt_andTheNodeStaysUp() throws Exception {
        ingest();
        String questions = String.join(", ", new HostileRequests(SEED + 1).questions(2, DOCS, WORDS));
        List<String> problems = new ArrayList<>();
        for (int bools : List.of(300, 40)) {
            expect("_compare", new Case(bools + " nested bools", null, 400, "[plugins.strata.compare.max_query_depth]"), "POST",
                "/_plugins/_strata/_compare", "{\"a\": \"hreq-chunks\", \"b\": \"hreq-chunks\", \"questions\": [" + questions
                    + "], \"query\": " + HostileRequests.deepFilter(bools) + "}", problems);
        }
        // at the default limit (100 levels): answered, as the same filter on a plain search
        int bools = (100 - 3) / 3;
        assertTrue(HostileRequests.deepFilterDepth(bools) <= 100);
        Answer a = expect("_compare", new Case(bools + " nested bools", null, 200, null), "POST", "/_plugins/_strata/_compare",
            "{\"a\": \"hreq-chunks\", \"b\": \"hreq-chunks\", \"questions\": [" + questions + "], \"query\": "
                + HostileRequests.deepFilter(bools) + "}", problems);
        assertTrue(String.join("\n", problems), problems.isEmpty());
        assertEquals(2, ((Number) a.body().get("questions")).intValue());
        // an operator's lower limit is named the same way
        try {
            call("PUT", "/_cluster/settings", "{\"transient\": {\"plugins.strata.compare.max_query_depth\": 5}}");
            expect("_compare", new Case("2 nested bools under max_query_depth 5", null, 400, "[plugins.strata.compare.max_query_depth]"),
                "POST", "/_plugins/_strata/_compare", "{\"a\": \"hreq-chunks\", \"b\": \"hreq-chunks\", \"questions\": [" + questions
                    + "], \"query\": " + HostileRequests.deepFilter(2) + "}", problems);
        } finally {
            call("PUT", "/_cluster/settings", "{\"transient\": {\"plugins.strata.compare.max_query_depth\": null}}");
        }
        assertTrue(String.join("\n", problems), problems.isEmpty());
    }

    /**
     * {@code rescore} in every form on a float chunk index, with candidates covering every parent: the hits are the brute-force
     * top k (each parent scored by the exact MAX over its own and its children's vectors); out of range or mistyped, a 400
     * naming it.
     */
    public void testRescore_everyFormAnswersTheBruteForceTopK_andBadValuesAreRefusedNamingIt() throws Exception {
        ingest();
        QueryOracle oracle = QueryOracle.load("hreq-chunks");
        Map<String, Object> embedded = call("POST", "/_plugins/_strata/_embed",
            "{\"texts\": [\"Emma wrote a letter to Harriet\"], \"purpose\": \"query\"}");
        float[] query = QueryOracle.floats(((List<List<Number>>) embedded.get("vectors")).get(0));
        int k = 10;
        Set<String> expected = new HashSet<>();
        QueryOracle.top(oracle.dense(query, oracle.parents().keySet(), null), k).forEach(s -> expected.add(s.id()));
        List<String> problems = new ArrayList<>();
        for (Case c : new HostileRequests(SEED + 2).rescores()) {
            String body = String.format(Locale.ROOT, "{\"size\": %d, \"_source\": false, \"query\": {\"multi_granular\": {\"vector\": %s, "
                + "\"k\": %d, \"num_candidates\": 100, \"rescore\": %s}}}", k, vectorJson(query), k, c.value());
            Answer a = expect("rescore", c, "POST", "/hreq-chunks/_search", body, problems);
            if (c.status() == 200 && a.status() == 200) {
                Set<String> got = new HashSet<>();
                hits(a.body()).forEach(h -> got.add((String) h.get("_id")));
                if (!got.equals(expected)) {
                    problems.add("rescore [" + c.name() + "]: " + got + " is not the brute-force top " + k + " " + expected);
                }
            }
        }
        // the graph candidates (num_candidates × factor) past plugins.strata.query.max_candidates: named before any search
        expect("rescore", new Case("factor 10 × 1,001 candidates", null, 400, "[plugins.strata.query.max_candidates]"), "POST",
            "/hreq-chunks/_search", "{\"query\": {\"multi_granular\": {\"vector\": " + vectorJson(query) + ", \"k\": 10, "
                + "\"num_candidates\": 1001, \"rescore\": {\"oversample_factor\": 10}}}}", problems);
        // not with the lexical side alone
        expect("rescore", new Case("with match", null, 400, "[rescore]"), "POST", "/hreq-chunks/_search",
            "{\"query\": {\"multi_granular\": {\"match\": \"emma\", \"rescore\": true}}}", problems);
        assertTrue(String.join("\n", problems), problems.isEmpty());
    }

    /**
     * {@code _compare} bodies: questions lists at and past a lowered {@code max_questions}, hostile spans and clusters,
     * {@code k} at and past its limits, {@code query} options the query refuses. A 2xx compares a chunk index with itself:
     * both sides rank alike, every difference is 0, and the rank of a lexical question is that of the first parent of its
     * source document in the same plain {@code multi_granular} search.
     */
    public void testCompare_hostileBodies_answerTheOracle_orAreRefusedNamingTheField() throws Exception {
        ingest();
        HostileRequests gen = new HostileRequests(SEED + 3);
        List<String> problems = new ArrayList<>();
        String path = "/_plugins/_strata/_compare";
        String sides = "\"a\": \"hreq-chunks\", \"b\": \"hreq-chunks\"";
        try {
            call("PUT", "/_cluster/settings", "{\"transient\": {\"plugins.strata.compare.max_questions\": 40}}");
            List<String> forty = gen.questions(40, DOCS, WORDS);
            Answer all = expect("_compare", new Case("40 questions at max_questions 40", null, 200, null), "POST", path,
                "{" + sides + ", \"k\": 5, \"query\": {\"mode\": \"lexical\"}, \"questions\": [" + String.join(", ", forty) + "]}", problems);
            if (all.status() == 200) {
                checkAgainstPlainSearches(all.body(), 5, problems);
            }
            List<String> more = new ArrayList<>(forty);
            more.add(forty.get(0));
            expect("_compare", new Case("41 questions", null, 400, "[plugins.strata.compare.max_questions]"), "POST", path,
                "{" + sides + ", \"questions\": [" + String.join(", ", more) + "]}", problems);
        } finally {
            call("PUT", "/_cluster/settings", "{\"transient\": {\"plugins.strata.compare.max_questions\": null}}");
        }
        String one = "{\"question\": \"emma letter\", \"source_id\": \"d1\", ";
        for (Case c : gen.badQuestionFields()) {
            expect("_compare question", c, "POST", path, "{" + sides + ", \"questions\": [" + one + c.value() + "}]}", problems);
        }
        for (Case c : gen.goodQuestionFields()) {
            Answer a = expect("_compare question", c, "POST", path, "{" + sides + ", \"query\": {\"mode\": \"lexical\"}, \"questions\": ["
                + one + c.value() + "}]}", problems);
            if (a.status() == 200) {
                checkAgainstPlainSearches(a.body(), 10, problems);
            }
        }
        for (Case c : gen.compareKs()) {
            Answer a = expect("_compare k", c, "POST", path, "{" + sides + ", \"k\": " + c.value() + ", \"query\": {\"mode\": \"lexical\"}, "
                + "\"questions\": [" + String.join(", ", gen.questions(3, DOCS, WORDS)) + "]}", problems);
            if (a.status() == 200) {
                checkAgainstPlainSearches(a.body(), Integer.parseInt(c.value()), problems);
            }
        }
        for (Case c : gen.compareQueries()) {
            expect("_compare query", c, "POST", path, "{" + sides + ", \"query\": " + c.value() + ", \"questions\": ["
                + String.join(", ", gen.questions(2, DOCS, WORDS)) + "]}", problems);
        }
        assertTrue(String.join("\n", problems), problems.isEmpty());
    }

    /** A comparison of one index with itself, each lexical question's rank checked against a plain search. */
    private static void checkAgainstPlainSearches(Map<String, Object> report, int k, List<String> problems) throws IOException {
        for (Map.Entry<String, Object> e : ((Map<String, Object>) report.get("difference")).entrySet()) {
            double mean = ((Number) ((Map<String, Object>) e.getValue()).get("mean")).doubleValue();
            if (mean != 0) {
                problems.add("_compare of an index with itself: difference of " + e.getKey() + " is " + mean);
            }
        }
        for (Map<String, Object> q : (List<Map<String, Object>>) report.get("per_question")) {
            // the plain search past k (within the result window): parents tied with the first relevant one may fall either side
            // of the k-th place
            int past = Math.min(k + 50, 10_000);
            Map<String, Object> r = call("POST", "/hreq-chunks/_search", String.format(Locale.ROOT, "{\"size\": %d, \"_source\": "
                + "[\"source_id\", \"start\", \"end\"], \"query\": {\"multi_granular\": {\"match\": %s, \"k\": %d}}}", past,
                io.strata.chaos.HostileDocuments.jsonString((String) q.get("question")), past));
            List<Integer> span = (List<Integer>) q.get("span");
            List<Map<String, Object>> hits = hits(r);
            int first = -1;
            for (int i = 0; i < hits.size() && first < 0; i++) {
                Map<String, Object> s = (Map<String, Object>) hits.get(i).get("_source");
                boolean relevant = q.get("source_id").equals(s.get("source_id")) && (span == null
                    || Math.max((Integer) s.get("start"), span.get(0)) < Math.min((Integer) s.get("end"), span.get(1)));
                first = relevant ? i : -1;
            }
            Set<Integer> allowed = new HashSet<>();
            if (first < 0) {
                allowed.add(0);
            } else {
                Object score = hits.get(first).get("_score");
                int lo = first;
                int hi = first;
                while (lo > 0 && score.equals(hits.get(lo - 1).get("_score"))) {
                    lo--;
                }
                while (hi + 1 < hits.size() && score.equals(hits.get(hi + 1).get("_score"))) {
                    hi++;
                }
                for (int rank = lo + 1; rank <= Math.min(hi + 1, k); rank++) {
                    allowed.add(rank);
                }
                if (hi >= k || lo >= k) {
                    allowed.add(0);
                }
            }
            for (String side : List.of("a", "b")) {
                int got = ((Number) ((Map<String, Object>) q.get(side)).get("rank")).intValue();
                if (!allowed.contains(got)) {
                    problems.add("_compare [" + q.get("question") + "] side " + side + ": rank " + got + ", the plain search's " + allowed);
                }
            }
        }
    }

    /**
     * {@code _rebuild} parameters: {@code requests_per_second} at and past its range, odd index names, a missing pipeline.
     * A refused rebuild creates no generation; an accepted one builds a generation holding exactly the chunk documents of
     * the serving chunk index (same config).
     */
    public void testRebuild_hostileParameters_areRefusedNamingThem_andNothingIsHalfWritten() throws Exception {
        ingest();
        HostileRequests gen = new HostileRequests(SEED + 4);
        List<String> problems = new ArrayList<>();
        String path = "/_plugins/_strata/_rebuild?index=";
        Set<String> before = indices();
        for (Case c : gen.requestsPerSecond()) {
            if (c.status() != 200) {
                expect("_rebuild", c, "POST", path + "hreq&pipeline=hreq&requests_per_second=" + c.value(), null, problems);
            }
        }
        for (Case c : gen.oddIndexNames("hreq", "hreq-chunks")) {
            expect("_rebuild", c, "POST", path + java.net.URLEncoder.encode(c.value(), StandardCharsets.UTF_8) + "&pipeline=hreq", null,
                problems);
        }
        expect("_rebuild", new Case("missing pipeline", null, 400, "[pipeline]"), "POST", path + "hreq&pipeline=nope", null, problems);
        expect("_rebuild", new Case("wait_for_completion=maybe", null, 400, "[_rebuild] [wait_for_completion] must be true or false"), "POST",
            path + "hreq&pipeline=hreq&wait_for_completion=maybe", null, problems);
        assertEquals("a refused _rebuild wrote an index", before, indices());
        // accepted at the generated rate: the generation holds the serving chunk index's chunk documents
        Case rate = gen.requestsPerSecond().get(1);
        Answer a = expect("_rebuild", rate, "POST", path + "hreq&pipeline=hreq&requests_per_second=" + rate.value(), null, problems);
        assertTrue(String.join("\n", problems), problems.isEmpty());
        String generation = (String) a.body().get("generation_index");
        Set<String> created = indices();
        created.removeAll(before);
        assertEquals("one generation: " + a.body(), 1, created.size());
        String built = created.iterator().next();
        if (generation != null) {
            assertEquals(built, generation);
        }
        refresh(built);
        assertEquals(chunkTexts("hreq-chunks"), chunkTexts(built));
    }

    /**
     * A very low {@code requests_per_second} (legal: any positive rate): after its first page the build waits 30 documents /
     * 0.001 a second = 8 hours. A cancel must still end it within seconds and delete the unfinished generation, and the
     * source may be rebuilt again. On the code before, the wait was one scheduled sleep that a cancel did not reach: the task
     * kept running, the generation stayed half-written, and every later rebuild of the source was a 409.
     */
    public void testRebuild_atAVeryLowRate_isCancelledWithinSeconds_andItsGenerationDeleted() throws Exception {
        ingest();
        Set<String> before = indices();
        Map<String, Object> started = call("POST", "/_plugins/_strata/_rebuild?index=hreq&pipeline=hreq&requests_per_second=0.001"
            + "&wait_for_completion=false");
        String id = (String) started.get("task");
        Set<String> created = new java.util.TreeSet<>();
        for (long deadline = System.nanoTime() + 120_000_000_000L; created.isEmpty() && System.nanoTime() < deadline; ) {
            Thread.sleep(200);
            created = indices();
            created.removeAll(before);
        }
        assertEquals("the generation is being written", 1, created.size());
        Thread.sleep(2_000); // into the throttle's wait after the first page
        call("POST", "/_tasks/" + id + "/_cancel");
        Map<String, Object> task = completed(id);
        assertEquals("the cancelled rebuild ended within 30 s: " + task, true, task.get("completed"));
        assertEquals(task.toString(), "task_cancelled_exception", ((Map<String, Object>) task.get("error")).get("type"));
        assertEquals("the unfinished generation is deleted", before, indices());
        Map<String, Object> again = call("POST", "/_plugins/_strata/_rebuild?index=hreq&pipeline=hreq&requests_per_second=-1"
            + "&wait_for_completion=false");
        assertNotNull(again.get("task"));
        call("POST", "/_tasks/" + again.get("task") + "/_cancel");
        // ended before the next test, whose own _rebuild of hreq would find it running (409)
        assertEquals(true, completed((String) again.get("task")).get("completed"));
    }

    /** The task's record once it has completed, or its last record after 30 s. */
    private static Map<String, Object> completed(String id) throws Exception {
        Map<String, Object> task = null;
        for (long deadline = System.nanoTime() + 30_000_000_000L; System.nanoTime() < deadline; ) {
            task = call("GET", "/_tasks/" + id);
            if (Boolean.TRUE.equals(task.get("completed"))) {
                break;
            }
            Thread.sleep(200);
        }
        return task;
    }

    private static Set<String> indices() throws IOException {
        Set<String> out = new java.util.TreeSet<>();
        Request request = new Request("GET", "/_cat/indices/hreq*?h=index&expand_wildcards=all");
        for (String line : new String(client().performRequest(request).getEntity().getContent().readAllBytes(), StandardCharsets.UTF_8)
            .split("\n")) {
            if (!line.isBlank()) {
                out.add(line.strip());
            }
        }
        return out;
    }

    /** Every chunk document's id, source id, span and text. */
    private static Set<String> chunkTexts(String index) throws IOException {
        Set<String> out = new java.util.TreeSet<>();
        Map<String, Object> r = call("POST", "/" + index + "/_search", "{\"size\": 10000, \"_source\": [\"source_id\", \"start\", \"end\", "
            + "\"text\"], \"query\": {\"match_all\": {}}}");
        for (Map<String, Object> h : hits(r)) {
            out.add(h.get("_id") + " " + h.get("_source"));
        }
        return out;
    }

    /**
     * A parent at the 32,768-token cap: θ ({@code strategy.max_tokens}) and {@code parents.max_tokens} at their maximum, a
     * document of ~32,000 model tokens. The pipeline writes exactly the parents {@code _chunk} cuts from the stored text, each
     * within the cap; one more than the cap, on either, is a 400 naming the field, and writes nothing.
     */
    public void testParentsAtTheTokenCap_writeWhatChunkCuts_andPastTheCapAreRefused() throws Exception {
        HostileRequests gen = new HostileRequests(SEED + 5);
        String text = gen.longText(25_000, WORDS);
        String config = "\"field\": \"body\", \"target_index\": \"hreq-cap-chunks\", \"embed\": false, \"granularities\": [0.5, 0.25], "
            + "\"strategy\": {\"type\": \"recursive\", \"max_tokens\": %d}, \"parents\": {\"max_tokens\": %d}";
        List<String> problems = new ArrayList<>();
        expect("pipeline", new Case("strategy.max_tokens 32,769", null, 400, "[strategy.max_tokens]"), "PUT", "/_ingest/pipeline/hreq-cap",
            "{\"processors\": [{\"multi_granular_chunking\": {" + String.format(Locale.ROOT, config, 32_769, 32_768) + "}}]}", problems);
        expect("pipeline", new Case("parents.max_tokens 32,769", null, 400, "[parents.max_tokens]"), "PUT", "/_ingest/pipeline/hreq-cap",
            "{\"processors\": [{\"multi_granular_chunking\": {" + String.format(Locale.ROOT, config, 32_768, 32_769) + "}}]}", problems);
        assertTrue(String.join("\n", problems), problems.isEmpty());
        putPipeline("hreq-cap", "{" + String.format(Locale.ROOT, config, 32_768, 32_768) + "}");
        Answer indexed = send("PUT", "/hreq-cap/_doc/big?pipeline=hreq-cap&refresh=true", "{\"body\": " + io.strata.chaos.HostileDocuments.jsonString(text) + "}");
        assertEquals(indexed.error(), 200, indexed.status());
        clusterIsUp("a 32,000-token document");
        refresh("hreq-cap-chunks");
        Map<String, Object> preview = call("POST", "/_plugins/_strata/_chunk", "{\"text\": " + io.strata.chaos.HostileDocuments.jsonString(text) + ", "
            + String.format(Locale.ROOT, "\"strategy\": {\"type\": \"recursive\", \"max_tokens\": %d}, \"parents\": {\"max_tokens\": %d}, "
            + "\"granularities\": [0.5, 0.25]}", 32_768, 32_768));
        List<String> expected = new ArrayList<>();
        for (Map<String, Object> p : (List<Map<String, Object>>) preview.get("parents")) {
            assertTrue("parent of " + p.get("tokens") + " tokens", ((Number) p.get("tokens")).intValue() <= 32_768);
            expected.add(p.get("start") + "-" + p.get("end"));
        }
        Map<String, Object> r = call("POST", "/hreq-cap-chunks/_search", "{\"size\": 100, \"_source\": [\"start\", \"end\"], "
            + "\"sort\": [{\"start\": \"asc\"}], \"query\": {\"match_all\": {}}}");
        List<String> got = new ArrayList<>();
        hits(r).forEach(h -> got.add(((Map<String, Object>) h.get("_source")).get("start") + "-"
            + ((Map<String, Object>) h.get("_source")).get("end")));
        assertEquals(expected, got);
        assertTrue("a parent near the cap: " + expected, expected.size() <= 2);
    }
}
