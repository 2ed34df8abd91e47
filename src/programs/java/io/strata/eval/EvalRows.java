package io.strata.eval;

import org.opensearch.common.xcontent.XContentHelper;
import org.opensearch.common.xcontent.json.JsonXContent;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The rows of {@code bin/strata-eval}: what a rows file ({@code src/test/resources/eval/rows.json}) declares, validated
 * once. A row is an ingest (strategy with {@code "$theta"}, child granularities, embedding model) plus a
 * {@code multi_granular} query body in which {@code "$question"} stands for the question, and the row it is compared
 * against ({@code baseline}). New query modes are new rows: a JSON-only change.
 *
 * <pre>
 * {"baseline": "Dense MG",
 *  "rows": [{"name": "Dense MG", "strategy": {"type": "recursive", "max_words": "$theta"}, "granularities": [0.5, 0.25],
 *            "query": {"query_text": "$question"}},
 *           {"name": "Lexical MG", "strategy": …, "query": {"match": "$question"}}]}
 * </pre>
 */
public final class EvalRows {
    public static final String THETA = "$theta";
    public static final String QUESTION = "$question";
    static final Set<String> ROW_KEYS = Set.of("name", "strategy", "granularities", "model", "processor", "query", "thetas", "baseline",
        "source_index", "_comment");
    /** Processor keys a row sets through its own keys, not through {@code processor}. */
    static final Set<String> OWN_PROCESSOR_KEYS = Set.of("field", "target_index", "strategy", "granularities", "model", "model_id");
    static final Set<String> FILE_KEYS = Set.of("rows", "baseline", "_comment");

    /**
     * One row. {@code granularities} null = the processor's default; {@code model} null = the node's default model;
     * {@code processor} = further {@code multi_granular_chunking} options (e.g. {@code {"children": {"embedding": "late"}}}),
     * empty when none; {@code thetas} null = the dataset's θ values; {@code baseline} is always a row of the same list (itself for the
     * baseline row); {@code sourceIndex} = the body the source index is created with (settings and mappings, e.g. the text
     * field's analyzer, which its chunk index takes), empty for OpenSearch's defaults.
     */
    public record Row(String name, Map<String, Object> strategy, List<Object> granularities, String model, Map<String, Object> processor,
                      Map<String, Object> query, List<Integer> thetas, String baseline, Map<String, Object> sourceIndex) {

        /** The row's θ values on a dataset run at {@code datasetThetas}: its own list filtered by them, else the dataset's. */
        public List<Integer> thetasOn(List<Integer> datasetThetas) {
            if (thetas == null) {
                return datasetThetas;
            }
            List<Integer> common = thetas.stream().filter(datasetThetas::contains).toList();
            // a θ-independent strategy (e.g. sentences) lists one θ of its own: keep it rather than drop the row
            return common.isEmpty() ? List.of(thetas.get(0)) : common;
        }

        /** The processor's strategy at θ: every {@code "$theta"} value becomes θ. */
        public Map<String, Object> strategyAt(int theta) {
            Map<String, Object> out = new LinkedHashMap<>();
            strategy.forEach((k, v) -> out.put(k, THETA.equals(v) ? theta : v));
            return out;
        }

        /**
         * The {@code multi_granular} body for one question: {@code "$question"} replaced inside every string (so
         * {@code "query: $question"} works for models that want a prefix), {@code k} added when the row has none.
         */
        public Map<String, Object> queryFor(String question, int k) {
            @SuppressWarnings("unchecked")
            Map<String, Object> body = (Map<String, Object>) substitute(query, question);
            body.putIfAbsent("k", k);
            return body;
        }
    }

    private EvalRows() {}

    /**
     * Parses a rows file. {@code only}: comma-separated substrings of row names to keep (null: all); the baselines
     * of kept rows are kept too, so every row still gets its difference. {@code baselineOverride} (null: none) replaces
     * every row's baseline.
     */
    @SuppressWarnings("unchecked")
    public static List<Row> parse(String json, String source, String only, String baselineOverride) {
        Map<String, Object> root = XContentHelper.convertToMap(JsonXContent.jsonXContent, json, true);
        checkKeys(root.keySet(), FILE_KEYS, "[" + source + "]");
        if (!(root.get("rows") instanceof List<?> list) || list.isEmpty()) {
            throw new IllegalArgumentException("[" + source + "] needs [rows]: a non-empty list of row objects");
        }
        String fileBaseline = string(root.get("baseline"), "[" + source + "] [baseline]");
        List<Row> all = new ArrayList<>();
        Set<String> names = new LinkedHashSet<>();
        for (Object o : list) {
            if (!(o instanceof Map<?, ?>)) {
                throw new IllegalArgumentException("[" + source + "] [rows] must hold objects, got [" + o + "]");
            }
            Row row = row((Map<String, Object>) o, source, fileBaseline);
            if (!names.add(row.name())) {
                throw new IllegalArgumentException("[" + source + "] row name [" + row.name() + "] appears twice; names must be unique");
            }
            all.add(row);
        }
        String defaultBaseline = all.get(0).name(); // no baseline anywhere: the first row
        List<Row> resolved = new ArrayList<>();
        for (Row r : all) {
            String baseline = baselineOverride != null ? baselineOverride : r.baseline() != null ? r.baseline() : defaultBaseline;
            if (!names.contains(baseline)) {
                throw new IllegalArgumentException(String.format(Locale.ROOT, "[%s] %s [%s] is not a row; rows: %s", source,
                    baselineOverride != null ? "[--baseline]" : "row [" + r.name() + "]: [baseline]", baseline, names));
            }
            resolved.add(new Row(r.name(), r.strategy(), r.granularities(), r.model(), r.processor(), r.query(), r.thetas(), baseline,
                r.sourceIndex()));
        }
        return select(resolved, only, source);
    }

    /** The rows whose names contain one of the {@code only} substrings, and their baselines, in file order. */
    static List<Row> select(List<Row> rows, String only, String source) {
        if (only == null) {
            return rows;
        }
        List<String> wanted = Arrays.stream(only.split(",")).map(String::strip).filter(s -> !s.isEmpty()).toList();
        Set<String> keep = new LinkedHashSet<>();
        for (Row r : rows) {
            if (wanted.stream().anyMatch(r.name()::contains)) {
                keep.add(r.name());
            }
        }
        if (keep.isEmpty()) {
            throw new IllegalArgumentException(String.format(Locale.ROOT, "[--only] %s matches no row of [%s]; rows: %s", wanted, source,
                rows.stream().map(Row::name).toList()));
        }
        // baselines of kept rows, and theirs (a chain is short; a set ends a cycle)
        boolean grown = true;
        while (grown) {
            grown = false;
            for (Row r : rows) {
                if (keep.contains(r.name()) && keep.add(r.baseline())) {
                    grown = true;
                }
            }
        }
        return rows.stream().filter(r -> keep.contains(r.name())).toList();
    }

    @SuppressWarnings("unchecked")
    private static Row row(Map<String, Object> r, String source, String fileBaseline) {
        Object nameValue = r.get("name");
        if (!(nameValue instanceof String name) || name.isBlank()) {
            throw new IllegalArgumentException("[" + source + "] every row needs a [name] (a non-empty string), got [" + nameValue + "]");
        }
        String where = "[" + source + "] row [" + name + "]";
        checkKeys(r.keySet(), ROW_KEYS, where);
        if (!(r.get("strategy") instanceof Map<?, ?> strategy) || !(strategy.get("type") instanceof String)) {
            throw new IllegalArgumentException(where + ": [strategy] must be a strategy object with a [type], got [" + r.get("strategy") + "]");
        }
        List<Object> granularities = null;
        if (r.containsKey("granularities")) {
            if (!(r.get("granularities") instanceof List<?> g)) {
                throw new IllegalArgumentException(where + ": [granularities] must be a list of fractions of θ, e.g. [0.5, 0.25], got ["
                    + r.get("granularities") + "]");
            }
            granularities = (List<Object>) g;
        }
        Map<String, Object> query = Map.of("query_text", QUESTION);
        if (r.containsKey("query")) {
            if (!(r.get("query") instanceof Map<?, ?> q) || q.isEmpty()) {
                throw new IllegalArgumentException(where + ": [query] must be a multi_granular body object, e.g. {\"match\": \""
                    + QUESTION + "\"}, got [" + r.get("query") + "]");
            }
            query = (Map<String, Object>) q;
            if (!mentions(query, QUESTION)) {
                throw new IllegalArgumentException(where + ": [query] must use \"" + QUESTION + "\" where the question goes, got " + query);
            }
        }
        List<Integer> thetas = null;
        if (r.containsKey("thetas")) {
            if (!(r.get("thetas") instanceof List<?> t) || t.isEmpty() || t.stream().anyMatch(x -> !(x instanceof Integer i) || i < 1)) {
                throw new IllegalArgumentException(where + ": [thetas] must be a non-empty list of positive integers, got [" + r.get("thetas")
                    + "]");
            }
            thetas = ((List<Object>) t).stream().map(x -> (Integer) x).toList();
        }
        Map<String, Object> processor = Map.of();
        if (r.containsKey("processor")) {
            if (!(r.get("processor") instanceof Map<?, ?> p)) {
                throw new IllegalArgumentException(where + ": [processor] must be an object of multi_granular_chunking options, e.g. "
                    + "{\"children\": {\"embedding\": \"late\"}}, got [" + r.get("processor") + "]");
            }
            for (Object key : p.keySet()) {
                if (OWN_PROCESSOR_KEYS.contains(key)) {
                    throw new IllegalArgumentException(where + ": [processor] must not set [" + key + "]: the row's own keys and the eval set "
                        + OWN_PROCESSOR_KEYS.stream().sorted().toList());
                }
            }
            processor = (Map<String, Object>) p;
        }
        Map<String, Object> sourceIndex = Map.of();
        if (r.containsKey("source_index")) {
            if (!(r.get("source_index") instanceof Map<?, ?> body) || body.isEmpty()) {
                throw new IllegalArgumentException(where + ": [source_index] must be a create-index body, e.g. {\"mappings\": "
                    + "{\"properties\": {\"body\": {\"type\": \"text\", \"analyzer\": \"english\"}}}}, got [" + r.get("source_index") + "]");
            }
            sourceIndex = (Map<String, Object>) body;
        }
        String baseline = string(r.get("baseline"), where + ": [baseline]");
        return new Row(name, (Map<String, Object>) strategy, granularities, string(r.get("model"), where + ": [model]"), processor, query,
            thetas, baseline != null ? baseline : fileBaseline, sourceIndex);
    }

    private static void checkKeys(Set<String> keys, Set<String> allowed, String where) {
        for (String key : keys) {
            if (!allowed.contains(key)) {
                throw new IllegalArgumentException(String.format(Locale.ROOT, "%s: unknown key [%s]; supported: %s%s", where, key,
                    allowed.stream().sorted().toList(), key.equals("levels") ? " (query levels go inside [query])" : ""));
            }
        }
    }

    private static String string(Object value, String what) {
        if (value != null && !(value instanceof String s && !s.isBlank())) {
            throw new IllegalArgumentException(what + " must be a non-empty string, got [" + value + "]");
        }
        return (String) value;
    }

    private static boolean mentions(Object value, String token) {
        if (value instanceof String s) {
            return s.contains(token);
        }
        if (value instanceof Map<?, ?> m) {
            return m.values().stream().anyMatch(v -> mentions(v, token));
        }
        if (value instanceof List<?> l) {
            return l.stream().anyMatch(v -> mentions(v, token));
        }
        return false;
    }

    /** A deep copy of {@code value} with {@link #QUESTION} replaced by {@code question} inside every string. */
    static Object substitute(Object value, String question) {
        if (value instanceof String s) {
            return s.replace(QUESTION, question);
        }
        if (value instanceof Map<?, ?> m) {
            Map<String, Object> out = new LinkedHashMap<>();
            m.forEach((k, v) -> out.put((String) k, substitute(v, question)));
            return out;
        }
        if (value instanceof List<?> l) {
            List<Object> out = new ArrayList<>(l.size());
            l.forEach(v -> out.add(substitute(v, question)));
            return out;
        }
        return value;
    }
}
