package io.strata.eval;

import io.strata.demo.Connection;
import io.strata.demo.JsonRest;
import org.apache.hc.core5.util.Timeout;
import org.opensearch.client.RestClient;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * What a pipeline writes per parent on the eval datasets, through a real node's {@code POST _plugins/_strata/_chunk}
 * (the same chunker as ingest, token limit included, nothing embedded): per dataset and θ of the recursive strategy with
 * the default granularities, parents, vectors (parents + children), vectors per parent, children whose span repeats
 * their parent's or a coarser child's, and children of at most 3 words under a longer parent — each before (every child the
 * splitters cut: {@code children.keep_redundant}) and now.
 *
 * <pre>mvn -Pbench test-compile exec:java -Dexec.mainClass=io.strata.eval.ChunkCounts -Dexec.args="URL DATASET=θ,θ ..."</pre>
 * e.g. {@code http://127.0.0.1:9600 gutenqa-emma=200,300,500 squad2-dev-sample=200,300 covid-qa-sample=200,300}.
 */
public final class ChunkCounts {
    public static void main(String[] args) throws Exception {
        // a book's chapter on a loaded node takes longer than the client's default 30 s
        try (RestClient client = Connection.builder(Connection.url(args[0], "http://127.0.0.1:9600"))
            .setRequestConfigCallback(c -> c.setResponseTimeout(Timeout.ofMinutes(10))).build()) {
            System.out.println("| dataset | θ | parents | vectors before → now | vectors / parent before → now | saved | children "
                + "repeating a coarser span before → now | children ≤ 3 words under a longer parent before → now |");
            System.out.println("|---|---|---|---|---|---|---|---|");
            for (int a = 1; a < args.length; a++) {
                String[] kv = args[a].split("=", 2);
                EvalDataset d = EvalDataset.fromFolder(RetrievalEval.BUNDLED.resolve(kv[0]), null);
                for (String t : kv[1].split(",")) {
                    int theta = Integer.parseInt(t);
                    long[] b = counts(client, d, theta, true);
                    long[] c = counts(client, d, theta, false);
                    System.out.printf(Locale.ROOT, "| %s | %d | %d | %d → %d | %.2f → %.2f | %.1f %% | %d → %d | %d → %d |%n", d.name(),
                        theta, c[0], b[1], c[1], (double) b[1] / b[0], (double) c[1] / c[0], 100.0 * (b[1] - c[1]) / b[1], b[2], c[2],
                        b[3], c[3]);
                }
            }
        }
    }

    @SuppressWarnings("unchecked")
    static long[] counts(RestClient client, EvalDataset d, int theta, boolean keepRedundant) throws Exception {
        long parents = 0;
        long vectors = 0;
        long repeats = 0;
        long tiny = 0;
        for (EvalDataset.Document doc : d.documents()) {
            Map<String, Object> r = JsonRest.call(client, "POST", "/_plugins/_strata/_chunk", JsonRest.json(Map.of("text", doc.text(),
                "strategy", Map.of("type", "recursive", "max_words", theta), "children", Map.of("keep_redundant", keepRedundant))));
            for (Object o : (List<Object>) r.get("parents")) {
                Map<String, Object> p = (Map<String, Object>) o;
                parents++;
                vectors++;
                Set<List<Integer>> coarser = new HashSet<>();
                coarser.add(List.of(((Number) p.get("start")).intValue(), ((Number) p.get("end")).intValue()));
                int parentWords = ((Number) p.get("words")).intValue();
                List<Map<String, Object>> children = p.get("children") == null ? List.of() : (List<Map<String, Object>>) p.get("children");
                int level = 0;
                List<List<Integer>> levelSpans = new ArrayList<>();
                for (Map<String, Object> c : children) {
                    vectors++;
                    int l = ((Number) c.get("level")).intValue();
                    if (l != level) {
                        coarser.addAll(levelSpans);
                        levelSpans.clear();
                        level = l;
                    }
                    List<Integer> span = List.of(((Number) c.get("start")).intValue(), ((Number) c.get("end")).intValue());
                    if (coarser.contains(span)) {
                        repeats++;
                    }
                    levelSpans.add(span);
                    int words = ((Number) c.get("words")).intValue();
                    if (words <= 3 && parentWords > words) {
                        tiny++;
                    }
                }
            }
        }
        return new long[] { parents, vectors, repeats, tiny };
    }

    private ChunkCounts() {}
}
