package io.strata.chaos;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;

/**
 * Hostile search bodies around {@code multi_granular} and {@code strata_context}, generated from a seed: parameters at and
 * past their maxima, hundreds of clauses around the query, deep {@code bool} nesting. {@code HostileQueriesIT} runs one seed
 * against a real node; a longer run feeds more seeds. Each {@link Case} says what a correct node answers: a 2xx (whose hits
 * the caller compares with its oracle) or a 4xx whose error names the limit, within {@code maxMillis}.
 */
public final class HostileQueries {
    /**
     * One request: {@code status} 200 or the 4xx expected, {@code mentions} a text the error must hold (the limit's name),
     * {@code k} the parents a 2xx may hold at most.
     */
    public record Case(String name, String body, String pipeline, int status, String mentions, int k, long maxMillis) {
        public Case {
            if (status != 200 && mentions == null) {
                throw new IllegalArgumentException("a refused case names what the error must mention");
            }
        }
    }

    /** Words of the test texts: every generated query text matches some parents. */
    private static final String[] WORDS = {"emma", "harriet", "knightley", "weston", "woodhouse", "marriage", "letter", "ball",
        "hartfield", "randalls", "taylor", "father", "friend", "happy", "evening"};

    private final Random random;

    public HostileQueries(long seed) {
        this.random = new Random(seed);
    }

    /** A document body of {@code n} words of the test texts and common short words, ending with a full stop. */
    public String body(int n) {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < n; i++) {
            out.append(i == 0 ? "" : " ").append(random.nextInt(3) == 0 ? COMMON[random.nextInt(COMMON.length)]
                : WORDS[random.nextInt(WORDS.length)]);
        }
        return out.append('.').toString();
    }

    /** Words nearly every body holds: a query of them matches nearly every parent. */
    public static final String COMMON_QUERY = "the a of and to";
    private static final String[] COMMON = COMMON_QUERY.split(" ");

    /** A query text of 1–4 words of the test texts. */
    public String text() {
        StringBuilder out = new StringBuilder();
        for (int i = 1 + random.nextInt(4); i > 0; i--) {
            out.append(out.length() == 0 ? "" : " ").append(WORDS[random.nextInt(WORDS.length)]);
        }
        return out.toString();
    }

    /** {@code {"multi_granular": {"match": text, "k": k, <extra>}}}. */
    public static String lexical(String text, int k, String extra) {
        return String.format(Locale.ROOT, "{\"multi_granular\": {\"match\": \"%s\", \"k\": %d%s}}", text, k,
            extra == null ? "" : ", " + extra);
    }

    /** {@code {"multi_granular": {"query_text": text, "k": k, <extra>}}}: hybrid on a chunk index with vectors. */
    public static String hybrid(String text, int k, String extra) {
        return String.format(Locale.ROOT, "{\"multi_granular\": {\"query_text\": \"%s\", \"k\": %d%s}}", text, k,
            extra == null ? "" : ", " + extra);
    }

    /** A search body: {@code query}, {@code size}, optional {@code from} and {@code ext.strata_context}. */
    public static String search(String query, int size, Integer from, String contextExt) {
        return String.format(Locale.ROOT, "{\"size\": %d%s, \"_source\": [\"source_id\", \"tag\", \"start\", \"end\"], \"query\": %s%s}", size,
            from == null ? "" : ", \"from\": " + from, query, contextExt == null ? "" : ", \"ext\": {\"strata_context\": " + contextExt + "}");
    }

    /** {@code n} distinct tags in {@code [0, tags)}, shuffled. */
    public List<Integer> tags(int n, int tags) {
        List<Integer> all = new ArrayList<>();
        for (int i = 0; i < tags; i++) {
            all.add(i);
        }
        java.util.Collections.shuffle(all, random);
        return all.subList(0, Math.min(n, tags));
    }

    /**
     * {@code query} in the {@code must} of a bool whose {@code filter} is a bool of {@code shoulds} term clauses on
     * {@code field} (one must match: the restriction the planner copies into its sub-searches), plus {@code mustNots}
     * clauses on values never indexed.
     */
    public String manyClauses(String query, String field, List<Integer> values, int mustNots) {
        StringBuilder shoulds = new StringBuilder();
        for (int v : values) {
            shoulds.append(shoulds.length() == 0 ? "" : ", ").append("{\"term\": {\"").append(field).append("\": ").append(v).append("}}");
        }
        StringBuilder nots = new StringBuilder();
        for (int i = 0; i < mustNots; i++) {
            nots.append(nots.length() == 0 ? "" : ", ").append("{\"term\": {\"").append(field).append("\": ")
                .append(-1 - random.nextInt(1_000_000)).append("}}");
        }
        return "{\"bool\": {\"must\": [" + query + "], \"filter\": [{\"bool\": {\"should\": [" + shoulds + "]}}]"
            + (mustNots > 0 ? ", \"must_not\": [" + nots + "]" : "") + "}}";
    }

    /**
     * {@code query} inside {@code depth} nested bools, each level a random wrapper that lets the planner through ({@code must}
     * or {@code filter} of a bool, {@code constant_score}), with a match-all filter beside it at each bool.
     */
    public String nested(String query, int depth) {
        String inner = query;
        for (int i = 0; i < depth; i++) {
            inner = switch (random.nextInt(3)) {
                case 0 -> "{\"bool\": {\"must\": [" + inner + "], \"filter\": [{\"match_all\": {}}]}}";
                case 1 -> "{\"bool\": {\"filter\": [" + inner + "]}}";
                default -> "{\"bool\": {\"must\": [" + inner + "]}}";
            };
        }
        return inner;
    }

    /**
     * The JSON nesting of a {@link #search} body whose query is {@link #nested} at {@code depth} bools around a
     * {@code multi_granular}: objects and arrays the parser reads (each bool adds an object, its clause object and an array).
     */
    public static int jsonDepth(int depth) {
        return 3 * depth + 3;
    }
}
