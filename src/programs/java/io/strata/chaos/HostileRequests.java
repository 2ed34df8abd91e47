package io.strata.chaos;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;

/**
 * Hostile parameters of the requests beside the search, generated from a seed: the {@code multi_granular} query's
 * {@code rescore}, {@code _compare} bodies (questions lists of hostile sizes, spans, clusters, {@code k}, nested
 * {@code query} options), {@code _rebuild} parameters ({@code requests_per_second}, {@code pipeline},
 * {@code wait_for_completion}, odd index names) and texts whose parents reach the 32,768-token cap. Each {@link Case} says
 * what a correct node answers: a 2xx (the caller checks it against its oracle) or a 4xx whose error names {@code mentions}.
 */
public final class HostileRequests {
    /** One request part: {@code status} 200 or the 4xx expected, {@code mentions} what the error must name. */
    public record Case(String name, String value, int status, String mentions) {
        public Case {
            if (status != 200 && mentions == null) {
                throw new IllegalArgumentException("a refused case names what the error must mention");
            }
        }
    }

    private final Random random;

    public HostileRequests(long seed) {
        this.random = new Random(seed);
    }

    /** {@code rescore} values: every legal form (2xx) and values past the range or of the wrong type (400 naming it). */
    public List<Case> rescores() {
        List<Case> out = new ArrayList<>();
        out.add(new Case("true", "true", 200, null));
        out.add(new Case("false", "false", 200, null));
        out.add(new Case("{}", "{}", 200, null));
        out.add(new Case("factor 1", "{\"oversample_factor\": 1}", 200, null));
        out.add(new Case("factor 10", "{\"oversample_factor\": 10}", 200, null));
        double inside = 1 + 9 * random.nextDouble();
        out.add(new Case("factor " + inside, String.format(Locale.ROOT, "{\"oversample_factor\": %s}", inside), 200, null));
        for (String past : List.of("0", "0.999", "10.001", "11", "-1", "1e400", "\"NaN\"", "\"x\"", "null", "[3]", "{\"a\": 1}")) {
            out.add(new Case("factor " + past, "{\"oversample_factor\": " + past + "}", 400, "rescore"));
        }
        double far = 10 + random.nextDouble() * 1e6;
        out.add(new Case("factor " + far, String.format(Locale.ROOT, "{\"oversample_factor\": %s}", far), 400, "[rescore.oversample_factor]"));
        for (String odd : List.of("null", "\"true\"", "3", "[true]", "{\"oversample_factor\": 3, \"x\": 1}")) {
            out.add(new Case("rescore " + odd, odd, 400, "rescore"));
        }
        return out;
    }

    /** {@code n} questions on source ids {@code d0}..{@code d<docs-1>}, each of 1–4 words of {@code words}. */
    public List<String> questions(int n, int docs, String[] words) {
        List<String> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            StringBuilder q = new StringBuilder();
            for (int w = 1 + random.nextInt(4); w > 0; w--) {
                q.append(q.length() == 0 ? "" : " ").append(words[random.nextInt(words.length)]);
            }
            out.add(String.format(Locale.ROOT, "{\"question\": \"%s\", \"source_id\": \"d%d\"}", q, random.nextInt(docs)));
        }
        return out;
    }

    /** One question's fields besides its text and source id that a correct node refuses, naming the field. */
    public List<Case> badQuestionFields() {
        List<Case> out = new ArrayList<>();
        int start = random.nextInt(1_000);
        for (String span : List.of("[" + start + ", " + start + "]", "[" + (start + 1) + ", " + start + "]", "[-1, 3]", "[0]", "[0, 1, 2]",
            "\"0-1\"", "[0.5, 2]", "[0, 2147483648]", "[0, 1e300]", "[0, \"3\"]", "[null, 3]", "[0, 18446744073709551616]")) {
            out.add(new Case("span " + span, "\"span\": " + span, 400, "[questions[0].span]"));
        }
        for (String cluster : List.of("\"\"", "3", "[\"a\"]", "{\"a\": 1}")) {
            out.add(new Case("cluster " + cluster, "\"cluster\": " + cluster, 400, "[questions[0].cluster]"));
        }
        out.add(new Case("unknown key", "\"zz\": 1", 400, "[questions[0].zz]"));
        return out;
    }

    /** Legal spans and clusters of one question (2xx): the widest span, a cluster of 10^5 characters, one shared cluster. */
    public List<Case> goodQuestionFields() {
        int start = random.nextInt(100);
        return List.of(new Case("span [0, max int]", "\"span\": [0, 2147483647]", 200, null),
            new Case("span [" + start + ", " + (start + 1) + "]", "\"span\": [" + start + ", " + (start + 1) + "]", 200, null),
            new Case("cluster of 10^5 characters", "\"cluster\": \"" + "c".repeat(100_000) + "\"", 200, null),
            new Case("cluster null", "\"cluster\": null", 200, null));
    }

    /** Body {@code k} values: at the limits (2xx) and past them or mistyped (400 naming [k]). */
    public List<Case> compareKs() {
        List<Case> out = new ArrayList<>();
        out.add(new Case("k 1", "1", 200, null));
        out.add(new Case("k 10,000", "10000", 200, null));
        for (String k : List.of("0", "-1", "10001", "2147483647", "2147483648", "1e10", "1.5", "\"10\"", "[1]")) {
            out.add(new Case("k " + k, k, 400, "[k]"));
        }
        return out;
    }

    /** {@code query} option objects: legal ones (2xx) and ones the query refuses (400 naming {@code mentions}). */
    public List<Case> compareQueries() {
        List<Case> out = new ArrayList<>();
        out.add(new Case("rescore true", "{\"mode\": \"dense\", \"rescore\": true}", 200, null));
        out.add(new Case("evidence at its maxima", "{\"mode\": \"lexical\", \"evidence\": {\"chunks\": 20, \"sentences\": 10}}", 200, null));
        out.add(new Case("filter", "{\"mode\": \"lexical\", \"filter\": {\"bool\": {\"must\": [{\"match_all\": {}}]}}}", 200, null));
        out.add(new Case("rescore factor 11", "{\"rescore\": {\"oversample_factor\": 11}}", 400, "[rescore.oversample_factor]"));
        out.add(new Case("mode x", "{\"mode\": \"x\"}", 400, "[mode]"));
        out.add(new Case("k inside query", "{\"k\": 3}", 400, "[query.k]"));
        out.add(new Case("query_text inside query", "{\"query_text\": \"x\"}", 400, "[query.query_text]"));
        out.add(new Case("match inside query", "{\"match\": \"x\"}", 400, "[query.match]"));
        out.add(new Case("num_candidates 10,001", "{\"num_candidates\": 10001}", 400, "[num_candidates]"));
        out.add(new Case("fusion.window 10,001", "{\"fusion\": {\"window\": 10001}}", 400, "[fusion.window]"));
        out.add(new Case("evidence.chunks 21", "{\"evidence\": {\"chunks\": 21}}", 400, "[evidence.chunks]"));
        out.add(new Case("model path", "{\"model\": \"../../etc\"}", 400, "[model]"));
        out.add(new Case("unknown option", "{\"a\": {\"b\": {\"c\": 1}}}", 400, "unknown field [a]"));
        out.add(new Case("query a list", "[]", 400, "[query]"));
        return out;
    }

    /**
     * A {@code query} option object whose {@code filter} nests {@code bools} bools ({@code bool.filter} arrays) around a
     * {@code match_all}: {@code 3 × bools + 3} JSON levels below {@code query}.
     */
    public static String deepFilter(int bools) {
        return "{\"mode\": \"lexical\", \"filter\": " + "{\"bool\": {\"filter\": [".repeat(bools) + "{\"match_all\": {}}"
            + "]}}".repeat(bools) + "}";
    }

    /** JSON levels of {@link #deepFilter}'s object (the object itself is level 1). */
    public static int deepFilterDepth(int bools) {
        return 3 * bools + 3;
    }

    /** {@code requests_per_second} values of {@code _rebuild}: legal (2xx) and refused (400 naming it). */
    public List<Case> requestsPerSecond() {
        List<Case> out = new ArrayList<>();
        out.add(new Case("-1", "-1", 200, null));
        out.add(new Case("a positive rate", String.format(Locale.ROOT, "%s", 100 + random.nextInt(100_000)), 200, null));
        for (String bad : List.of("0", "-2", "NaN", "Infinity", "-Infinity", "1e40", "x", "", "0x10", "-0")) {
            out.add(new Case("rps [" + bad + "]", bad, 400, "[requests_per_second]"));
        }
        return out;
    }

    /**
     * Index names {@code _rebuild} must refuse with a 4xx naming {@code mentions}: none names one existing source index
     * (patterns, lists and {@code _all} are not resolved: a 404 naming the name as given).
     */
    public List<Case> oddIndexNames(String source, String chunkIndex) {
        String random8 = Long.toHexString(random.nextLong());
        String wildcard = source.substring(0, 3) + "*";
        return List.of(new Case("missing", "nope-" + random8, 404, "nope-" + random8),
            new Case("wildcard", wildcard, 404, "[" + wildcard + "]"),
            new Case("two indices", source + "," + chunkIndex, 404, "[" + source + "," + chunkIndex + "]"),
            new Case("_all", "_all", 404, "[_all]"),
            new Case("a chunk index", chunkIndex, 400, chunkIndex),
            new Case("uppercase", source.toUpperCase(Locale.ROOT), 404, source.toUpperCase(Locale.ROOT)),
            new Case("255+ characters", "a".repeat(300), 404, "aaaa"),
            new Case("date math", "<" + source + "-{now/d}>", 404, source),
            new Case("dot dot", "..", 404, "[..]"));
    }

    /**
     * A text of {@code words} words ending in full stops every 20–40 words: at ~1.3 tokens a word, 25,000 words give a parent
     * near 32,768 tokens.
     */
    public String longText(int words, String[] vocabulary) {
        StringBuilder out = new StringBuilder();
        int sentence = 20 + random.nextInt(20);
        for (int i = 0; i < words; i++) {
            out.append(i == 0 ? "" : " ").append(vocabulary[random.nextInt(vocabulary.length)]);
            if (--sentence == 0 || i == words - 1) {
                out.append('.');
                sentence = 20 + random.nextInt(20);
            }
        }
        return out.toString();
    }
}
