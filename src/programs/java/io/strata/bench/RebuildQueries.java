package io.strata.bench;

import io.strata.demo.JsonRest;
import org.opensearch.client.RestClient;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * {@code multi_granular} search latency while a {@code _rebuild} runs, against the idle latency of the same searches in the
 * same run, on one node. The source index (paragraphs of <i>Emma</i>) is ingested once through a pipeline cutting at
 * 2θ; then, per round (one per {@code rps} value), the same {@code queries} searches ({@code query_text}: the opening words
 * of other paragraphs, k 10) run one after another through the chunk index's name with nothing else running (idle), then
 * the pipeline is changed to θ and {@code _rebuild?wait_for_completion=false&requests_per_second=<rps>} starts, and the
 * searches run again, in turn, until the task completes, each followed by a poll of {@code GET _tasks/<id>} at most
 * every 250 ms. Every search must answer hits. It prints, per round,
 * {@code queries idle: p50 X ms, p99 Y ms; during rebuild: p50 X ms, p99 Y ms; ratio p99 Z} and the rebuild's time;
 * the generation is deleted after each round.
 */
final class RebuildQueries {
    private static final String SOURCE = "rbq-source";
    private static final String CHUNKS = SOURCE + "-chunks";
    private static final String PIPELINE = "rebuild-bench-queries";
    private static final int WARMUP = 20;

    private final RestClient client;
    private final List<String> texts;
    private final List<String> questions = new ArrayList<>();
    private final int theta;
    private final int bulk;
    private final int queries;

    RebuildQueries(RestClient client, List<String> texts, List<String> paragraphs, int theta, int bulk, int queries) {
        this.client = client;
        this.texts = texts;
        this.theta = theta;
        this.bulk = bulk;
        this.queries = queries;
        // the opening words of paragraphs spread over the book: questions about what the index holds, none of them indexed verbatim
        for (int i = 0; i < queries; i++) {
            String[] words = paragraphs.get((int) ((long) i * paragraphs.size() / queries)).split(" ");
            questions.add(String.join(" ", Arrays.copyOfRange(words, 0, Math.min(12, words.length))));
        }
    }

    void run(String[] rates) throws Exception {
        JsonRest.call(client, "DELETE", "/" + SOURCE + "," + CHUNKS + "*?ignore_unavailable=true", null);
        pipeline(2 * theta);
        long start = System.nanoTime();
        RebuildBench.bulk(client, SOURCE, texts, bulk, PIPELINE);
        System.out.printf(Locale.ROOT, "%d documents (%d characters) ingested at theta %d in %.1f s; rebuilds at theta %d; %d queries%n",
            texts.size(), texts.stream().mapToInt(String::length).sum(), 2 * theta, (System.nanoTime() - start) / 1e9, theta, queries);
        for (int i = 0; i < WARMUP; i++) {
            search(questions.get(i % questions.size()));
        }
        for (String rate : rates) {
            pipeline(2 * theta); // the serving config again: the rebuild below changes it
            double[] idle = new double[queries];
            for (int i = 0; i < queries; i++) {
                idle[i] = search(questions.get(i));
            }
            pipeline(theta);
            long begin = System.nanoTime();
            String task = (String) JsonRest.call(client, "POST", "/_plugins/_strata/_rebuild?index=" + SOURCE + "&pipeline=" + PIPELINE
                + "&wait_for_completion=false&requests_per_second=" + rate, null).get("task");
            List<Double> during = new ArrayList<>();
            long lastPoll = 0;
            Map<String, Object> done = null;
            for (int i = 0; done == null; i++) {
                during.add(search(questions.get(i % questions.size())));
                if (System.nanoTime() - lastPoll > 250_000_000L) {
                    lastPoll = System.nanoTime();
                    Map<String, Object> t = JsonRest.call(client, "GET", "/_tasks/" + task, null);
                    done = Boolean.TRUE.equals(t.get("completed")) ? t : null;
                }
            }
            double seconds = (System.nanoTime() - begin) / 1e9;
            if (done.get("error") != null) {
                throw new IllegalStateException("rebuild failed: " + done.get("error"));
            }
            @SuppressWarnings("unchecked")
            Map<String, Object> report = (Map<String, Object>) done.get("response");
            double[] busy = during.stream().mapToDouble(Double::doubleValue).toArray();
            double idle99 = percentile(idle, 99), busy99 = percentile(busy, 99);
            System.out.printf(Locale.ROOT, "requests_per_second %s: queries idle: p50 %.1f ms, p99 %.1f ms; during rebuild: p50 %.1f ms, "
                    + "p99 %.1f ms; ratio p99 %.2f%n", rate, percentile(idle, 50), idle99, percentile(busy, 50), busy99, busy99 / idle99);
            System.out.printf(Locale.ROOT, "  rebuild: %s documents, %s parents written, %s texts embedded in %.1f s (%d searches during it)%n",
                report.get("documents"), report.get("parents_written"), report.get("texts_embedded"), seconds, busy.length);
            JsonRest.call(client, "DELETE", "/" + report.get("generation_index"), null);
        }
    }

    private void pipeline(int maxWords) throws Exception {
        JsonRest.call(client, "PUT", "/_ingest/pipeline/" + PIPELINE, "{\"processors\": [{\"multi_granular_chunking\": {\"field\": "
            + "\"text\", \"target_index\": \"{{_index}}-chunks\", \"strategy\": {\"type\": \"recursive\", \"max_words\": " + maxWords + "}}}]}");
    }

    /** One search through the chunk index's name; its wall time in milliseconds, as the client sees it. */
    @SuppressWarnings("unchecked")
    private double search(String question) throws Exception {
        long start = System.nanoTime();
        Map<String, Object> r = JsonRest.call(client, "POST", "/" + CHUNKS + "/_search", JsonRest.json(Map.of("query",
            Map.of("multi_granular", Map.of("query_text", question, "k", 10)))));
        double ms = (System.nanoTime() - start) / 1e6;
        if (((List<Object>) ((Map<String, Object>) r.get("hits")).get("hits")).isEmpty()) {
            throw new IllegalStateException("no hits for [" + question + "]: " + r);
        }
        return ms;
    }

    /** The nearest-rank percentile {@code p} of {@code values}. */
    static double percentile(double[] values, double p) {
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        int rank = (int) Math.ceil(p / 100 * sorted.length);
        return sorted[Math.max(0, rank - 1)];
    }
}
