package io.strata.bench;

import io.strata.demo.Connection;
import io.strata.demo.JsonRest;
import org.apache.hc.core5.util.Timeout;
import org.opensearch.client.RestClient;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * {@code _rebuild} throughput against pipeline ingest of the same documents, paired in one run on one node: each round
 * ingests the documents (paragraphs of <i>Emma</i>) through a {@code multi_granular_chunking} pipeline ({@code _bulk} of
 * {@code bulk} documents, one client) into a fresh index, and rebuilds a fresh index holding the same documents stored
 * without the pipeline (a backfill: {@code _rebuild?pipeline=}, synchronous), the order alternating between rounds. It
 * prints documents/s of both and their ratio (rebuild over ingest) per round, and the median ratio.
 *
 * <p>{@code granularities}: only the granularities change. Each round first ingests the documents untimed through a
 * pipeline cutting {@code from} (default {@code 0.5,0.25}), then, in alternating order, times the ingest of the same
 * documents into a fresh index through a pipeline cutting {@code to} (default {@code 0.5}) and the rebuild of the first
 * index under that pipeline ({@code _rebuild?pipeline=}), which reuses the stored vectors of unchanged texts; it prints both
 * rates, the ratio, the rebuild's {@code vectors_reused} and {@code texts_embedded}, and the median ratio (target ≥ 3).
 *
 * <p>{@code queries}: search latency while a rebuild runs ({@link RebuildQueries}).
 *
 * <pre>bin/strata-bench rebuild [URL] [docs=400] [theta=100] [bulk=50] [rounds=4] [embed=false]
 * bin/strata-bench rebuild granularities [from=0.5,0.25] [to=0.5] [URL] [docs=400] [theta=100] [bulk=50] [rounds=4]
 * bin/strata-bench rebuild queries [URL] [docs=400] [theta=100] [queries=200] [rps=-1,...] [bulk=50]</pre>
 */
public final class RebuildBench {
    public static void main(String[] args) throws Exception {
        String url = null;
        int docs = 400, theta = 100, bulk = 50, rounds = 4;
        boolean embed = true;
        boolean granularities = false, queries = false;
        int queryCount = 200;
        String from = "0.5,0.25", to = "0.5", rps = "-1";
        for (String a : args) {
            if (a.startsWith("http")) {
                url = a;
            } else if (a.startsWith("docs=")) {
                docs = Integer.parseInt(a.substring(5));
            } else if (a.startsWith("theta=")) {
                theta = Integer.parseInt(a.substring(6));
            } else if (a.startsWith("bulk=")) {
                bulk = Integer.parseInt(a.substring(5));
            } else if (a.startsWith("rounds=")) {
                rounds = Integer.parseInt(a.substring(7));
            } else if (a.equals("embed=false")) {
                embed = false;
            } else if (a.equals("granularities")) {
                granularities = true;
            } else if (a.equals("queries")) {
                queries = true;
            } else if (a.startsWith("queries=")) {
                queryCount = Integer.parseInt(a.substring(8));
            } else if (a.startsWith("rps=")) {
                rps = a.substring(4);
            } else if (a.startsWith("from=")) {
                from = a.substring(5);
            } else if (a.startsWith("to=")) {
                to = a.substring(3);
            } else {
                throw new IllegalArgumentException("unknown argument [" + a + "]; expected URL, granularities, queries, from=, to=, docs=, "
                    + "theta=, bulk=, rounds=, embed=false, queries=, rps=");
            }
        }
        String book = Files.readString(Path.of("src/test/resources/eval/datasets/gutenqa-emma/book.txt"));
        List<String> paragraphs = new ArrayList<>();
        for (String p : book.split("\\n\\s*\\n")) {
            String t = p.strip().replaceAll("\\s+", " ");
            if (t.split(" ").length >= 20) {
                paragraphs.add(t);
            }
        }
        List<String> texts = paragraphs.subList(0, Math.min(docs, paragraphs.size()));
        try (RestClient client = Connection.builder(Connection.url(url, "http://127.0.0.1:9800"))
            .setRequestConfigCallback(c -> c.setResponseTimeout(Timeout.ofHours(1))).build()) {
            if (granularities) {
                granularities(client, texts, theta, bulk, rounds, from, to);
                return;
            }
            if (queries) {
                new RebuildQueries(client, texts, paragraphs, theta, bulk, queryCount).run(rps.split(","));
                return;
            }
            JsonRest.call(client, "PUT", "/_ingest/pipeline/rebuild-bench", "{\"processors\": [{\"multi_granular_chunking\": "
                + "{\"field\": \"text\", \"target_index\": \"{{_index}}-chunks\", \"embed\": " + embed
                + ", \"strategy\": {\"type\": \"recursive\", \"max_words\": " + theta + "}}}]}");
            double[] ratios = new double[rounds];
            System.out.printf(Locale.ROOT, "%d documents (%d characters), theta %d, embed %s, bulk %d%n", texts.size(),
                texts.stream().mapToInt(String::length).sum(), theta, embed, bulk);
            for (int r = 0; r < rounds; r++) {
                String ingestIndex = "rbb-ingest-" + r;
                String rebuildIndex = "rbb-source-" + r;
                bulk(client, rebuildIndex, texts, bulk, "_none"); // stored without chunks: not timed
                double ingest, rebuild;
                if (r % 2 == 0) {
                    ingest = ingest(client, ingestIndex, texts, bulk);
                    rebuild = rebuild(client, rebuildIndex, texts.size());
                } else {
                    rebuild = rebuild(client, rebuildIndex, texts.size());
                    ingest = ingest(client, ingestIndex, texts, bulk);
                }
                ratios[r] = rebuild / ingest;
                System.out.printf(Locale.ROOT, "round %d: ingest %.1f docs/s, rebuild %.1f docs/s, ratio %.2f%n", r + 1, ingest,
                    rebuild, ratios[r]);
                JsonRest.call(client, "DELETE", "/" + ingestIndex + "," + ingestIndex + "-chunks," + rebuildIndex + ","
                    + rebuildIndex + "-chunks-g1?ignore_unavailable=true", null);
            }
            Arrays.sort(ratios);
            double median = rounds % 2 == 1 ? ratios[rounds / 2] : (ratios[rounds / 2 - 1] + ratios[rounds / 2]) / 2;
            System.out.printf(Locale.ROOT, "median ratio rebuild / ingest: %.2f (target >= 0.9)%n", median);
        }
    }

    private static double ingest(RestClient client, String index, List<String> texts, int bulk) throws Exception {
        return ingest(client, index, texts, bulk, "rebuild-bench");
    }

    private static double ingest(RestClient client, String index, List<String> texts, int bulk, String pipeline) throws Exception {
        long start = System.nanoTime();
        bulk(client, index, texts, bulk, pipeline);
        return texts.size() / ((System.nanoTime() - start) / 1e9);
    }

    private static String pipeline(int theta, String granularities) {
        return "{\"processors\": [{\"multi_granular_chunking\": {\"field\": \"text\", \"target_index\": \"{{_index}}-chunks\", "
            + "\"strategy\": {\"type\": \"recursive\", \"max_words\": " + theta + "}, \"granularities\": [" + granularities + "]}}]}";
    }

    /** Only the granularities changed: ingest under {@code to} vs a rebuild under {@code to} of an index ingested under {@code from}. */
    @SuppressWarnings("unchecked")
    private static void granularities(RestClient client, List<String> texts, int theta, int bulk, int rounds, String from, String to)
        throws Exception {
        JsonRest.call(client, "PUT", "/_ingest/pipeline/rebuild-bench-from", pipeline(theta, from));
        JsonRest.call(client, "PUT", "/_ingest/pipeline/rebuild-bench-to", pipeline(theta, to));
        System.out.printf(Locale.ROOT, "%d documents (%d characters), theta %d, granularities [%s] -> [%s], bulk %d%n", texts.size(),
            texts.stream().mapToInt(String::length).sum(), theta, from, to, bulk);
        double[] ratios = new double[rounds];
        for (int r = 0; r < rounds; r++) {
            String ingestIndex = "rbg-ingest-" + r;
            String rebuildIndex = "rbg-source-" + r;
            bulk(client, rebuildIndex, texts, bulk, "rebuild-bench-from"); // chunked under the old granularities: not timed
            double ingest;
            long start;
            Map<String, Object> report;
            double rebuild;
            if (r % 2 == 1) {
                ingest = ingest(client, ingestIndex, texts, bulk, "rebuild-bench-to");
            } else {
                ingest = Double.NaN;
            }
            start = System.nanoTime();
            report = JsonRest.call(client, "POST", "/_plugins/_strata/_rebuild?index=" + rebuildIndex + "&pipeline=rebuild-bench-to", null);
            rebuild = texts.size() / ((System.nanoTime() - start) / 1e9);
            if (((Number) report.get("documents")).intValue() < texts.size()) {
                throw new IllegalStateException("rebuild did fewer documents than stored: " + report);
            }
            if (r % 2 == 0) {
                ingest = ingest(client, ingestIndex, texts, bulk, "rebuild-bench-to");
            }
            ratios[r] = rebuild / ingest;
            System.out.printf(Locale.ROOT, "round %d: ingest %.1f docs/s, rebuild %.1f docs/s, ratio %.2f (vectors_reused %s, "
                + "texts_embedded %s)%n", r + 1, ingest, rebuild, ratios[r], report.get("vectors_reused"), report.get("texts_embedded"));
            JsonRest.call(client, "DELETE", "/" + ingestIndex + "," + ingestIndex + "-chunks," + rebuildIndex + "," + rebuildIndex
                + "-chunks," + rebuildIndex + "-chunks-g2?ignore_unavailable=true", null);
        }
        Arrays.sort(ratios);
        double median = rounds % 2 == 1 ? ratios[rounds / 2] : (ratios[rounds / 2 - 1] + ratios[rounds / 2]) / 2;
        System.out.printf(Locale.ROOT, "median ratio rebuild / ingest, only the granularities changed: %.2f (target >= 3)%n", median);
    }

    @SuppressWarnings("unchecked")
    private static double rebuild(RestClient client, String index, int docs) throws Exception {
        long start = System.nanoTime();
        Map<String, Object> report = JsonRest.call(client, "POST", "/_plugins/_strata/_rebuild?index=" + index
            + "&pipeline=rebuild-bench", null);
        double seconds = (System.nanoTime() - start) / 1e9;
        if (((Number) report.get("documents")).intValue() < docs) {
            throw new IllegalStateException("rebuild did fewer documents than stored: " + report);
        }
        return docs / seconds;
    }

    static void bulk(RestClient client, String index, List<String> texts, int bulk, String pipeline) throws Exception {
        for (int from = 0; from < texts.size(); from += bulk) {
            StringBuilder body = new StringBuilder();
            for (int i = from; i < Math.min(texts.size(), from + bulk); i++) {
                body.append(JsonRest.json(Map.of("index", Map.of("_index", index, "_id", "p" + i)))).append('\n');
                body.append(JsonRest.json(Map.of("text", texts.get(i)))).append('\n');
            }
            Map<String, Object> r = JsonRest.call(client, "POST", "/_bulk?pipeline=" + pipeline, body.toString());
            if (Boolean.TRUE.equals(r.get("errors"))) {
                throw new IllegalStateException("bulk into " + index + " failed: " + r);
            }
        }
        JsonRest.call(client, "POST", "/" + index + "/_refresh", null);
    }
}
