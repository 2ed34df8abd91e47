package io.strata.it;

import org.apache.lucene.index.VectorSimilarityFunction;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What the {@code multi_granular} contract says a query returns, computed in test code from the chunk documents of one
 * chunk index (fetched with their vectors) and from standard OpenSearch queries — never through {@code multi_granular}:
 * <ul>
 *   <li>dense: every parent that matches the restriction (a standard query, evaluated by a plain search), scored by the
 *   MAX of Lucene's own cosine score ({@link VectorSimilarityFunction#COSINE}, in float) over the parent's vector and its
 *   children's at the counted levels, best first;</li>
 *   <li>lexical: the ranking of the plain nested BM25 {@code dis_max} query over the parent's and the children's texts
 *   (tie breaker 0: the MAX) with the restriction as a filter;</li>
 *   <li>hybrid: each side's top {@code window}, then the fusion of docs/query.md ({@code min_max}: each side mapped onto
 *   [0, 1] over its window, 0.5 / 0.5), recomputed here.</li>
 * </ul>
 * Every method answers parent ids (= {@code _id}) with scores, best first.
 */
@SuppressWarnings("unchecked")
public final class QueryOracle {
    /** One parent chunk document as stored: its id, source fields and vectors with their levels. */
    public record Parent(String id, Map<String, Object> source, List<float[]> vectors, List<Integer> levels) {}

    public record Scored(String id, float score) {}

    private final String index;
    private final Map<String, Parent> parents = new LinkedHashMap<>();

    private QueryOracle(String index) {
        this.index = index;
    }

    /** Reads every parent of {@code index} (at most 10,000) with its vectors. */
    public static QueryOracle load(String index) throws IOException {
        QueryOracle oracle = new QueryOracle(index);
        Map<String, Object> r = StrataRestTestCase.call("POST", "/" + index + "/_search", "{\"size\": 10000, \"_source\": true, \"query\": {\"match_all\": {}}}");
        for (Object h : hits(r)) {
            Map<String, Object> hit = (Map<String, Object>) h;
            Map<String, Object> source = (Map<String, Object>) hit.get("_source");
            List<float[]> vectors = new ArrayList<>();
            List<Integer> levels = new ArrayList<>();
            vectors.add(floats((List<Number>) source.get("embedding")));
            levels.add(0);
            for (Map<String, Object> child : (List<Map<String, Object>>) source.get("children")) {
                int level = ((Number) child.get("level")).intValue();
                if (level > 0) { // level 0 repeats the parent's own vector (format 2)
                    vectors.add(floats((List<Number>) child.get("embedding")));
                    levels.add(level);
                }
            }
            oracle.parents.put((String) hit.get("_id"), new Parent((String) hit.get("_id"), source, vectors, levels));
        }
        return oracle;
    }

    /** An oracle of {@code index}'s lexical side only (no parents read: the index may hold no vectors). */
    public static QueryOracle lexicalOnly(String index) {
        return new QueryOracle(index);
    }

    public Map<String, Parent> parents() {
        return parents;
    }

    static List<Object> hits(Map<String, Object> response) {
        return (List<Object>) ((Map<String, Object>) response.get("hits")).get("hits");
    }

    public static float[] floats(List<Number> v) {
        float[] out = new float[v.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = v.get(i).floatValue();
        }
        return out;
    }

    /** The parents that match a standard query (JSON; null: all of them). */
    public Set<String> matching(String queryJson) throws IOException {
        if (queryJson == null) {
            return new HashSet<>(parents.keySet());
        }
        Map<String, Object> r = StrataRestTestCase.call("POST", "/" + index + "/_search", "{\"size\": 10000, \"_source\": false, \"query\": "
            + queryJson + "}");
        Set<String> out = new HashSet<>();
        for (Object h : hits(r)) {
            out.add((String) ((Map<String, Object>) h).get("_id"));
        }
        return out;
    }

    /** Dense: every allowed parent scored by its best vector at {@code levels} (null: all), best first (ties: id). */
    public List<Scored> dense(float[] query, Set<String> allowed, Set<Integer> levels) {
        List<Scored> out = new ArrayList<>();
        for (Parent p : parents.values()) {
            if (!allowed.contains(p.id())) {
                continue;
            }
            float best = Float.NEGATIVE_INFINITY;
            for (int i = 0; i < p.vectors().size(); i++) {
                if (levels == null || levels.contains(p.levels().get(i))) {
                    best = Math.max(best, VectorSimilarityFunction.COSINE.compare(query, p.vectors().get(i)));
                }
            }
            if (best != Float.NEGATIVE_INFINITY) {
                out.add(new Scored(p.id(), best));
            }
        }
        out.sort(BEST_FIRST);
        return out;
    }

    static final Comparator<Scored> BEST_FIRST = Comparator.comparing((Scored s) -> -s.score()).thenComparing(Scored::id);

    /**
     * Lexical: the plain OpenSearch query that defines the lexical MAX — dis_max (tie breaker 0) of BM25 on the parent's text
     * and a nested (score mode max) BM25 on the children's texts at levels 1..4 — with the restriction as a filter.
     */
    public List<Scored> lexical(String text, String restrictionJson, int size, boolean dfs) throws IOException {
        String quoted = StrataRestTestCase.json(Map.of("q", text));
        quoted = quoted.substring(quoted.indexOf(':') + 1, quoted.length() - 1);
        String max = "{\"dis_max\": {\"tie_breaker\": 0, \"queries\": [{\"match\": {\"text\": " + quoted + "}}, {\"nested\": {\"path\": "
            + "\"children\", \"score_mode\": \"max\", \"query\": {\"bool\": {\"must\": {\"match\": {\"children.text\": " + quoted + "}},"
            + " \"filter\": {\"terms\": {\"children.level\": [1, 2, 3, 4]}}}}}}]}}";
        String query = restrictionJson == null ? max : "{\"bool\": {\"must\": " + max + ", \"filter\": " + restrictionJson + "}}";
        Map<String, Object> r = StrataRestTestCase.call("POST", "/" + index + "/_search" + (dfs ? "?search_type=dfs_query_then_fetch" : ""),
            "{\"size\": " + size + ", \"_source\": false, \"query\": " + query + "}");
        List<Scored> out = new ArrayList<>();
        for (Object h : hits(r)) {
            Map<String, Object> hit = (Map<String, Object>) h;
            out.add(new Scored((String) hit.get("_id"), ((Number) hit.get("_score")).floatValue()));
        }
        return out;
    }

    /** The documented default fusion (min_max, dense weight 0.5) of two best-first windows: the k best, best first. */
    public static List<Scored> minMax(List<Scored> dense, List<Scored> lexical, int k) {
        Map<String, Double> fused = new LinkedHashMap<>();
        addMinMax(fused, dense, 0.5);
        addMinMax(fused, lexical, 0.5);
        List<Scored> out = new ArrayList<>();
        fused.forEach((id, s) -> out.add(new Scored(id, (float) (double) s)));
        out.sort(BEST_FIRST);
        return new ArrayList<>(out.subList(0, Math.min(k, out.size())));
    }

    private static void addMinMax(Map<String, Double> fused, List<Scored> side, double weight) {
        if (side.isEmpty()) {
            return;
        }
        float top = side.get(0).score();
        float floor = side.get(side.size() - 1).score();
        for (Scored s : side) {
            fused.merge(s.id(), weight * (top > floor ? (s.score() - floor) / (double) (top - floor) : 1.0), Double::sum);
        }
    }

    /** The first {@code k} of a best-first list. */
    public static List<Scored> top(List<Scored> ranked, int k) {
        return new ArrayList<>(ranked.subList(0, Math.min(k, ranked.size())));
    }
}
