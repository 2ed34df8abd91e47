package io.strata.it;

import io.strata.chaos.HostileQueries;
import org.opensearch.client.ResponseException;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Hostile queries on a real node (the adversarial suite's query part): {@code multi_granular} and {@code strata_context}
 * parameters at and past their maxima, hundreds of clauses around the query, {@code bool} nesting to OpenSearch's own limit
 * and past it, {@code strata_context} over the most hits it reads. After each: the node is up, and the answer is a 2xx
 * equal to the oracle (a plain OpenSearch query over the chunk documents, {@link QueryOracle}; the source texts) or a 4xx
 * naming the limit, within a stated time. The bodies come from {@link HostileQueries}, seeded, so a longer run can feed
 * more seeds.
 */
@SuppressWarnings("unchecked")
public class HostileQueriesIT extends StrataRestTestCase {
    private static final long SEED = 44;
    /** Source documents: 3 parents each at θ 20 (55 words), 2,400 parents in all. */
    private static final int DOCS = 800;
    private static Map<String, String> bodies;

    @Override
    protected boolean preserveIndicesUponCompletion() {
        return true;
    }

    @Override
    protected boolean preserveClusterSettings() {
        return true; // each test resets what it set, in finally
    }

    private static synchronized void ingest() throws IOException {
        if (bodies != null) {
            return;
        }
        HostileQueries gen = new HostileQueries(SEED);
        putPipeline("hostile", """
            {"field": "body", "target_index": "hostile-chunks", "embed": false, "strategy": {"type": "recursive", "max_words": 20},
             "copy_fields": ["tag"]}""");
        Map<String, String> all = new LinkedHashMap<>();
        for (int from = 0; from < DOCS; from += 400) {
            Map<String, Map<String, Object>> docs = new LinkedHashMap<>();
            for (int i = from; i < from + 400; i++) {
                String body = gen.body(55);
                all.put("d" + i, body);
                docs.put("d" + i, Map.of("body", body, "tag", i % 700));
            }
            assertEquals(false, bulk("hostile", "hostile", docs).get("errors"));
        }
        refresh("hostile-chunks");
        assertEquals(3 * DOCS, count("hostile-chunks"));
        bodies = all;
    }

    private static void contextPipeline() throws IOException {
        // every test: the framework's wipe between tests may remove search pipelines
        call("PUT", "/_search/pipeline/hostile-ctx", """
            {"response_processors": [{"strata_context": {"seeds": "chunk"}}]}""");
    }

    /** The node is up and serves: checked after each hostile request. */
    private static void nodeIsUp() throws IOException {
        Map<String, Object> health = call("GET", "/_cluster/health");
        assertNotEquals("red", health.get("status"));
        assertEquals(3 * DOCS, count("hostile-chunks"));
    }

    private record Answer(int status, Map<String, Object> body, String error, long millis) {}

    private static Answer search(String path, String body) throws IOException {
        long t0 = System.nanoTime();
        try {
            Map<String, Object> r = call("POST", path, body);
            return new Answer(200, r, null, (System.nanoTime() - t0) / 1_000_000);
        } catch (ResponseException e) {
            String error = new String(e.getResponse().getEntity().getContent().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            return new Answer(e.getResponse().getStatusLine().getStatusCode(), null, error, (System.nanoTime() - t0) / 1_000_000);
        }
    }

    /** A 400 whose error holds {@code mentions}, within {@code maxMillis}; then the node is up. */
    private static void refused(String what, String path, String body, String mentions, long maxMillis) throws IOException {
        Answer a = search(path, body);
        assertEquals(what + ": " + a.error(), 400, a.status());
        assertTrue(what + " names the limit [" + mentions + "]: " + a.error(), a.error().contains(mentions));
        assertTrue(what + " took " + a.millis() + " ms", a.millis() <= maxMillis);
        nodeIsUp();
    }

    /** A 2xx within {@code maxMillis}; then the node is up. */
    private static Map<String, Object> answered(String what, String path, String body, long maxMillis) throws IOException {
        Answer a = search(path, body);
        assertEquals(what + ": " + a.error(), 200, a.status());
        assertTrue(what + " took " + a.millis() + " ms", a.millis() <= maxMillis);
        nodeIsUp();
        return a.body();
    }

    private static List<Map<String, Object>> hits(Map<String, Object> r) {
        return (List<Map<String, Object>>) ((Map<String, Object>) r.get("hits")).get("hits");
    }

    private static Set<String> ids(Map<String, Object> r) {
        Set<String> out = new HashSet<>();
        hits(r).forEach(h -> out.add((String) h.get("_id")));
        return out;
    }

    private static Set<String> ids(List<QueryOracle.Scored> ranked) {
        Set<String> out = new HashSet<>();
        ranked.forEach(s -> out.add(s.id()));
        return out;
    }

    private static void setting(String key, Object value) throws IOException {
        call("PUT", "/_cluster/settings", "{\"persistent\": {\"" + key + "\": " + (value == null ? "null" : value) + "}}");
    }

    public void testParameters_atTheirMaxima_answerTheOracle_andPastThem_areRefusedNamingTheLimit() throws Exception {
        ingest();
        HostileQueries gen = new HostileQueries(SEED + 1);
        QueryOracle oracle = QueryOracle.lexicalOnly("hostile-chunks");
        String text = gen.text();
        // k and size at their maximum (index.max_result_window): every parent the text matches, as the plain query finds them
        Map<String, Object> all = answered("k 10,000", "/hostile-chunks/_search",
            HostileQueries.search(HostileQueries.lexical(text, 10_000, null), 10_000, null, null), 20_000);
        assertEquals(ids(oracle.lexical(text, null, 10_000, false)), ids(all));
        refused("k 10,001", "/hostile-chunks/_search", HostileQueries.search(HostileQueries.lexical(text, 10_001, null), 10, null, null),
            "[k] must be in [1, 10000]", 5_000);
        // from + size at the result window: the k parents end before it; past it: OpenSearch's own limit
        Map<String, Object> far = answered("from 9,990", "/hostile-chunks/_search",
            HostileQueries.search(HostileQueries.lexical(text, 10_000, null), 10, 9_990, null), 20_000);
        assertEquals(List.of(), hits(far));
        refused("from 10,000", "/hostile-chunks/_search", HostileQueries.search(HostileQueries.lexical(text, 10, null), 1, 10_000, null),
            "index.max_result_window", 5_000);
        refused("size 10,001", "/hostile-chunks/_search", HostileQueries.search(HostileQueries.lexical(text, 10, null), 10_001, null, null),
            "index.max_result_window", 5_000);
        // evidence at its maxima over 200 parents; past them
        Map<String, Object> evidence = answered("evidence 20/10", "/hostile-chunks/_search", HostileQueries.search(
            HostileQueries.lexical(text, 200, "\"evidence\": {\"chunks\": 20, \"sentences\": 10}"), 200, null, null), 20_000);
        assertEquals(ids(QueryOracle.top(oracle.lexical(text, null, 10_000, false), 200)).size(), hits(evidence).size());
        refused("evidence.chunks 21", "/hostile-chunks/_search", HostileQueries.search(
            HostileQueries.lexical(text, 10, "\"evidence\": {\"chunks\": 21}"), 10, null, null), "[evidence.chunks] must be in [1, 20]", 5_000);
        refused("evidence.sentences 11", "/hostile-chunks/_search", HostileQueries.search(
            HostileQueries.lexical(text, 10, "\"evidence\": {\"sentences\": 11}"), 10, null, null), "[evidence.sentences] must be in [0, 10]",
            5_000);
        // candidates: the dense side's; their bounds are checked before the text is embedded or any index read
        refused("num_candidates 10,001", "/hostile-chunks/_search", HostileQueries.search(
            HostileQueries.hybrid(text, 10, "\"num_candidates\": 10001"), 10, null, null), "[num_candidates] must be in [k, 10000]", 5_000);
        refused("fusion.window 10,001", "/hostile-chunks/_search", HostileQueries.search(
            HostileQueries.hybrid(text, 10, "\"fusion\": {\"window\": 10001}"), 10, null, null), "[fusion.window] must be in [1, 10000]",
            5_000);
        // an operator's lower limits (documented node settings), named in the 400
        try {
            setting("plugins.strata.query.max_k", 50);
            setting("plugins.strata.query.max_candidates", 100);
            answered("k 50 under max_k 50", "/hostile-chunks/_search", HostileQueries.search(HostileQueries.lexical(text, 50, null), 50,
                null, null), 10_000);
            refused("k 51 under max_k 50", "/hostile-chunks/_search", HostileQueries.search(HostileQueries.lexical(text, 51, null), 10,
                null, null), "[plugins.strata.query.max_k]", 5_000);
            refused("num_candidates 101", "/hostile-chunks/_search", HostileQueries.search(
                HostileQueries.hybrid(text, 10, "\"num_candidates\": 101"), 10, null, null), "[plugins.strata.query.max_candidates]", 5_000);
            refused("fusion.window 101", "/hostile-chunks/_search", HostileQueries.search(
                HostileQueries.hybrid(text, 10, "\"fusion\": {\"window\": 101}"), 10, null, null), "[plugins.strata.query.max_candidates]",
                5_000);
        } finally {
            setting("plugins.strata.query.max_k", null);
            setting("plugins.strata.query.max_candidates", null);
        }
    }

    public void testStrataContext_overTheMostHitsItReads_quotesEveryHitsParent_andOneMoreIsRefused() throws Exception {
        ingest();
        contextPipeline();
        String query = HostileQueries.lexical(HostileQueries.COMMON_QUERY, 2_000, null);
        // the case: 2,000 hits, budget 100,000 (10.1 s before; the packer alone was O(n² log n))
        Map<String, Object> r = answered("2,000 hits", "/hostile-chunks/_search?search_pipeline=hostile-ctx",
            HostileQueries.search(query, 2_000, null, "{\"budget\": 100000}"), 20_000);
        assertEquals(2_000, hits(r).size());
        Map<String, Object> ctx = (Map<String, Object>) ((Map<String, Object>) r.get("ext")).get("strata_context");
        assertTrue((Integer) ctx.get("tokens") <= 100_000);
        Set<String> cited = new HashSet<>();
        for (Map<String, Object> p : (List<Map<String, Object>>) ctx.get("passages")) {
            String source = bodies.get((String) p.get("source_id"));
            assertEquals(squash(source.substring((Integer) p.get("start"), (Integer) p.get("end"))), squash((String) p.get("text")));
            cited.addAll((List<String>) p.get("hits"));
        }
        // the text of all 2,400 parents is far below the budget: every hit is quoted
        assertEquals(ids(r), cited);
        refused("2,001 hits", "/hostile-chunks/_search?search_pipeline=hostile-ctx",
            HostileQueries.search(HostileQueries.lexical(HostileQueries.COMMON_QUERY, 2_001, null), 2_001, null, "{\"budget\": 512}"),
            "[plugins.strata.context.max_hits]", 10_000);
        refused("budget 100,001", "/hostile-chunks/_search?search_pipeline=hostile-ctx",
            HostileQueries.search(query, 10, null, "{\"budget\": 100001}"), "[budget] must be an integer in [1, 100000]", 5_000);
        try {
            setting("plugins.strata.context.max_budget", 1000);
            setting("plugins.strata.context.max_hits", 100);
            refused("budget 1,001 under max_budget 1,000", "/hostile-chunks/_search?search_pipeline=hostile-ctx",
                HostileQueries.search(query, 10, null, "{\"budget\": 1001}"), "[plugins.strata.context.max_budget]", 5_000);
            refused("101 hits under max_hits 100", "/hostile-chunks/_search?search_pipeline=hostile-ctx",
                HostileQueries.search(query, 101, null, "{\"budget\": 1000}"), "[plugins.strata.context.max_hits]", 5_000);
        } finally {
            setting("plugins.strata.context.max_budget", null);
            setting("plugins.strata.context.max_hits", null);
        }
    }

    private static String squash(String s) {
        return s.strip().replaceAll("\\s+", " ");
    }

    public void testOneIdInTwoChunkIndices_eachHitIsQuotedFromItsOwnParent_andTheLookupStaysInTheResultWindow() throws Exception {
        // two chunk indices holding the same source ids (kb-*-chunks, or a rollover alias on {{_index}}-chunks): the lookup
        // asked for the distinct ids with size = their count, so half the parents fell outside it and their hits left the
        // context without a word; with neighbours, 3 × hits could pass max_result_window and fail the whole search
        ingest();
        HostileQueries gen = new HostileQueries(SEED + 2);
        Map<String, Map<String, String>> texts = new HashMap<>();
        for (String kb : List.of("kb-a", "kb-b")) {
            putPipeline(kb, String.format(Locale.ROOT, """
                {"field": "body", "target_index": "%s-chunks", "embed": false, "strategy": {"type": "recursive", "max_words": 20}}""", kb));
            Map<String, Map<String, Object>> docs = new LinkedHashMap<>();
            Map<String, String> own = new HashMap<>();
            for (int i = 0; i < 40; i++) {
                String body = gen.body(55);
                own.put("d" + i, body);
                docs.put("d" + i, Map.of("body", body));
            }
            texts.put(kb + "-chunks", own);
            assertEquals(false, bulk(kb, kb, docs).get("errors"));
            refresh(kb + "-chunks");
        }
        contextPipeline();
        // kb-*-chunks: 240 parents under 160 distinct ids (with neighbours); then kb-a-chunks alone with a result window of
        // 130: its 120 hits name 160 parents
        for (String searched : List.of("kb-*-chunks", "kb-a-chunks")) {
            int k = searched.contains("*") ? 240 : 120;
            if (!searched.contains("*")) {
                call("PUT", "/kb-a-chunks/_settings", "{\"index.max_result_window\": 130}");
            }
            Map<String, Object> r = answered(searched, "/" + searched + "/_search?search_pipeline=hostile-ctx",
                HostileQueries.search(HostileQueries.lexical(HostileQueries.COMMON_QUERY, k, null), k, null, "{\"budget\": 100000}"), 20_000);
            assertTrue(hits(r).size() > k - 10);
            Map<String, Object> ctx = (Map<String, Object>) ((Map<String, Object>) r.get("ext")).get("strata_context");
            List<Map<String, Object>> passages = (List<Map<String, Object>>) ctx.get("passages");
            for (Map<String, Object> p : passages) {
                String source = texts.get((String) p.get("index")).get((String) p.get("source_id"));
                assertEquals(squash(source.substring((Integer) p.get("start"), (Integer) p.get("end"))), squash((String) p.get("text")));
            }
            // the oracle: each hit's own parent (its index, its source document, its span), quoted by a passage citing it
            for (Map<String, Object> hit : hits(r)) {
                String index = (String) hit.get("_index");
                String id = (String) hit.get("_id");
                Map<String, Object> s = (Map<String, Object>) hit.get("_source");
                boolean quoted = passages.stream().anyMatch(p -> index.equals(p.get("index")) && s.get("source_id").equals(p.get("source_id"))
                    && (Integer) p.get("start") <= (Integer) s.get("start") && (Integer) p.get("end") >= (Integer) s.get("end")
                    && ((List<String>) p.get("hits")).contains(id));
                assertTrue(searched + ": hit " + index + "/" + id + " is not quoted from its own parent", quoted);
            }
        }
    }

    public void testHundredsOfClausesAroundTheQuery_answerTheOracle_uptoOpenSearchsClauseLimit() throws Exception {
        ingest();
        HostileQueries gen = new HostileQueries(SEED + 3);
        QueryOracle oracle = QueryOracle.lexicalOnly("hostile-chunks");
        String text = gen.text();
        List<Integer> tags = gen.tags(500, 700);
        String around = gen.manyClauses(HostileQueries.lexical(text, 10_000, null), "tag", tags, 500);
        Map<String, Object> r = answered("500 should + 500 must_not", "/hostile-chunks/_search",
            HostileQueries.search(around, 10_000, null, null), 20_000);
        StringBuilder terms = new StringBuilder();
        tags.forEach(t -> terms.append(terms.length() == 0 ? "" : ", ").append(t));
        assertEquals(ids(oracle.lexical(text, "{\"terms\": {\"tag\": [" + terms + "]}}", 10_000, false)), ids(r));
        assertFalse(ids(r).isEmpty());
        // past indices.query.bool.max_clause_count (1,024): OpenSearch refuses the same clauses around a plain query too
        List<Integer> many = new ArrayList<>();
        for (int i = 0; i < 1_100; i++) {
            many.add(i);
        }
        refused("1,100 should", "/hostile-chunks/_search", HostileQueries.search(gen.manyClauses(HostileQueries.lexical(text, 10, null),
            "tag", many, 0), 10, null, null), "indices.query.bool.max_clause_count", 10_000);
    }

    /**
     * Deep {@code bool} nesting around the query answers as the bare query. Not to OpenSearch's own limit: its parser accepts
     * 1,000 levels of JSON (332 bools of this shape; 333 is a 400, x_content_parse_exception), but OpenSearch 3.4 parses a
     * search body on the network thread, recursively, and a plain {@code match} under 332 bools overflowed that thread's stack
     * on this suite's node — a fatal error, the node exits (tried by hand: StackOverflowError in Jackson's
     * JsonReadContext under ObjectParser.parseArray, no Strata frame) — and past the limit the parser recurses as deep before
     * it refuses. So the suite goes to 100 bools (JSON depth 303), a third of the depth that killed the node; Strata's own walk of
     * the tree (Restrictions) is no deeper than OpenSearch's parse of it.
     */
    public void testDeepBoolNesting_answersAsTheBareQuery() throws Exception {
        ingest();
        HostileQueries gen = new HostileQueries(SEED + 4);
        String text = gen.text();
        Map<String, Object> bare = answered("bare", "/hostile-chunks/_search",
            HostileQueries.search(HostileQueries.lexical(text, 50, null), 50, null, null), 10_000);
        int depth = 100;
        assertTrue(HostileQueries.jsonDepth(depth) < 1_000 / 3);
        for (int round = 0; round < 3; round++) {
            Map<String, Object> deep = answered(depth + " bools", "/hostile-chunks/_search",
                HostileQueries.search(gen.nested(HostileQueries.lexical(text, 50, null), depth), 50, null, null), 20_000);
            assertEquals(ids(bare), ids(deep));
        }
    }
}
