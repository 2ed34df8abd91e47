package io.strata.chaos;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;

/**
 * The query half of {@code bin/strata-chaos hostile}: per seed, search bodies from {@link HostileQueries} — parameters at and
 * past their maxima, hundreds of clauses, nested {@code bool}s (at most {@link #MAX_BOOLS}: OpenSearch's own parser overflows
 * its network thread's stack near 330, see {@code HostileQueriesIT}), {@code strata_context} at its limits — against one
 * chunk index of {@link #DOCS} documents. Each answer must be a 2xx or a 4xx naming the limit, within
 * {@link HostileChecks#MAX_MS}, with the cluster up after it; the oracle of a 2xx is the same query without what was
 * wrapped around it (a nested query answers the bare query's parents; clauses around it answer the bare query restricted by
 * a plain {@code terms} filter), and no answer holds more than {@code k} parents.
 */
final class HostileQueryChecks {
    static final int DOCS = 400;
    static final int MAX_BOOLS = 100;
    private static final String INDEX = "hostile-q";
    private static final String CHUNKS = INDEX + "-chunks";
    private static final String SEARCH = "/" + CHUNKS + "/_search";

    private final HostileChecks client;

    HostileQueryChecks(HostileChecks client) {
        this.client = client;
    }

    /** A chunk index of {@link #DOCS} documents of 55 words, 3 parents each at θ 20, each with a {@code tag}. */
    void setUp(long seed) throws IOException {
        expectOk("pipeline", client.send("PUT", "/_ingest/pipeline/" + INDEX, """
            {"processors": [{"multi_granular_chunking": {"field": "body", "target_index": "hostile-q-chunks", "embed": false,
             "strategy": {"type": "recursive", "max_words": 20}, "copy_fields": ["tag"]}}]}"""));
        expectOk("context pipeline", client.send("PUT", "/_search/pipeline/" + INDEX + "-ctx",
            "{\"response_processors\": [{\"strata_context\": {\"seeds\": \"chunk\"}}]}"));
        HostileQueries gen = new HostileQueries(seed);
        StringBuilder bulk = new StringBuilder();
        for (int i = 0; i < DOCS; i++) {
            bulk.append("{\"index\": {\"_id\": \"q").append(i).append("\"}}\n{\"body\": \"").append(gen.body(55))
                .append("\", \"tag\": ").append(i % 300).append("}\n");
        }
        HostileChecks.Answer a = client.send("POST", "/" + INDEX + "/_bulk?pipeline=" + INDEX + "&refresh=true", bulk.toString());
        if (!a.ok() || Boolean.TRUE.equals(a.body().get("errors"))) {
            throw new IOException("bulk of the query corpus: " + a.error());
        }
        client.send("POST", "/" + CHUNKS + "/_refresh", null);
    }

    /** One seed's cases; returns what went wrong (empty: nothing), and prints a line per case. */
    List<String> run(long seed) throws IOException {
        HostileQueries gen = new HostileQueries(seed);
        Random random = new Random(seed);
        List<String> problems = new ArrayList<>();
        String text = gen.text();
        int k = 1 + random.nextInt(500);
        Map<String, Object> bare = expect(problems, "bare k " + k, HostileQueries.search(HostileQueries.lexical(text, k, null), k, null, null),
            200, null, k);
        Set<String> bareIds = ids(bare);

        int depth = 1 + random.nextInt(MAX_BOOLS);
        Map<String, Object> deep = expect(problems, depth + " nested bools", HostileQueries.search(
            gen.nested(HostileQueries.lexical(text, k, null), depth), k, null, null), 200, null, k);
        if (deep != null && bare != null && !ids(deep).equals(bareIds)) {
            problems.add(depth + " nested bools: other parents than the bare query");
        }

        List<Integer> tags = gen.tags(1 + random.nextInt(1_000), 300);
        int mustNots = random.nextInt(1_024 - tags.size());
        Map<String, Object> around = expect(problems, tags.size() + " should + " + mustNots + " must_not", HostileQueries.search(
            gen.manyClauses(HostileQueries.lexical(text, k, null), "tag", tags, mustNots), k, null, null), 200, null, k);
        StringBuilder terms = new StringBuilder();
        tags.forEach(t -> terms.append(terms.length() == 0 ? "" : ", ").append(t));
        Map<String, Object> filtered = expect(problems, "oracle: terms filter", HostileQueries.search(HostileQueries.lexical(text, k,
            "\"filter\": {\"terms\": {\"tag\": [" + terms + "]}}"), k, null, null), 200, null, k);
        if (around != null && filtered != null && !ids(around).equals(ids(filtered))) {
            problems.add("clauses around the query: other parents than its filter alone");
        }

        // parameters past their maxima: a 400 naming the parameter
        expect(problems, "k 10,001", HostileQueries.search(HostileQueries.lexical(text, 10_001, null), 10, null, null), 400, "[k]", 0);
        expect(problems, "evidence.chunks 21", HostileQueries.search(HostileQueries.lexical(text, 10, "\"evidence\": {\"chunks\": 21}"),
            10, null, null), 400, "[evidence.chunks]", 0);
        expect(problems, "fusion.window 10,001", HostileQueries.search(HostileQueries.hybrid(text, 10, "\"fusion\": {\"window\": 10001}"),
            10, null, null), 400, "[fusion.window]", 0);
        // the corpus has fewer parents than the default max_hits: past a lowered one, then back to the default
        int maxHits = 50 + random.nextInt(200);
        client.send("PUT", "/_cluster/settings", "{\"transient\": {\"plugins.strata.context.max_hits\": " + maxHits + "}}");
        try {
            expect(problems, "strata_context over max_hits + 1", context(HostileQueries.search(HostileQueries.lexical(
                HostileQueries.COMMON_QUERY, maxHits + 1, null), maxHits + 1, null, "{\"budget\": 512}")), 400,
                "[plugins.strata.context.max_hits]", 0);
        } finally {
            client.send("PUT", "/_cluster/settings", "{\"transient\": {\"plugins.strata.context.max_hits\": null}}");
        }
        expect(problems, "budget 100,001", context(HostileQueries.search(HostileQueries.lexical(text, 10, null), 10, null,
            "{\"budget\": 100001}")), 400, "[budget]", 0);
        // strata_context at its maxima: every hit of the most it reads, the largest budget
        int hits = 500 + random.nextInt(DOCS * 3 - 500);
        expect(problems, "strata_context over " + hits + " hits", context(HostileQueries.search(
            HostileQueries.lexical(HostileQueries.COMMON_QUERY, hits, null), hits, null, "{\"budget\": 100000}")), 200, null, hits);
        return problems;
    }

    private static String context(String body) {
        return "ctx:" + body;
    }

    private Map<String, Object> expect(List<String> problems, String what, String body, int status, String mentions, int k)
        throws IOException {
        String path = SEARCH;
        if (body.startsWith("ctx:")) {
            path = SEARCH + "?search_pipeline=" + INDEX + "-ctx";
            body = body.substring(4);
        }
        HostileChecks.Answer a = client.send("POST", path, body);
        List<String> own = new ArrayList<>();
        if (a.ms() > HostileChecks.MAX_MS) {
            own.add(String.format(Locale.ROOT, "took %,d ms", a.ms()));
        }
        if (a.status() != status) {
            own.add("answered " + a.status() + " (expected " + status + "): " + a.error());
        } else if (mentions != null && !a.raw().contains(mentions)) {
            own.add("does not name " + mentions + ": " + a.error());
        } else if (a.ok() && ids(a.body()).size() > k) {
            own.add("more than k = " + k + " parents");
        }
        String health = upOrWhy();
        if (health != null) {
            own.add(health);
        }
        System.out.printf(Locale.ROOT, "  query %-40s %d in %,6d ms%s%n", what, a.status(), a.ms(), own.isEmpty() ? "" : "  PROBLEMS: " + own);
        own.forEach(p -> problems.add(what + ": " + p));
        return a.ok() && own.isEmpty() ? a.body() : null;
    }

    private String upOrWhy() {
        try {
            HostileChecks.Answer h = client.send("GET", "/_cluster/health?timeout=10s", null);
            return h.ok() && !"red".equals(h.body().get("status")) ? null : "cluster health: " + h.error();
        } catch (IOException e) {
            return "cluster health does not answer: " + e;
        }
    }

    @SuppressWarnings("unchecked")
    private static Set<String> ids(Map<String, Object> r) {
        Set<String> out = new TreeSet<>();
        if (r == null) {
            return out;
        }
        for (Object hit : (List<Object>) ((Map<String, Object>) r.get("hits")).get("hits")) {
            out.add((String) ((Map<String, Object>) hit).get("_id"));
        }
        return out;
    }

    private static void expectOk(String what, HostileChecks.Answer a) throws IOException {
        if (!a.ok()) {
            throw new IOException(what + ": " + a.error());
        }
    }
}
