package io.strata.chaos;

import io.strata.demo.Connection;
import io.strata.demo.RunArgs;
import io.strata.demo.JsonRest;
import org.apache.hc.core5.util.Timeout;
import org.opensearch.client.RestClient;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * A very large document with embeddings ({@code bin/strata-chaos bigdoc}): one {@code mb}-MB text (a book repeated with
 * numbered parts) goes through a {@code multi_granular_chunking} pipeline with the bundled model on a 1-node cluster, while
 * a small document is sent every {@code small_every} seconds and timed. Samples heap ({@code _nodes/stats/jvm}) and the
 * document's progress ({@code _plugins/_strata/stats} {@code ingest.in_progress}) every 500 ms and prints the document's
 * size, parents/children, seconds per stage, texts/s, peak heap and old generation, and the small documents' latencies.
 *
 * Then the same text is sent again: every vector is reused from the stored chunks (read 64 at a time), none embedded,
 * and every chunk document is rewritten, vectors included — the write path at full size, timed and heap-sampled.
 *
 * <p>Arguments ({@code key=value}): {@code port} (STRATA_URL's, else 10500; a secured node's scheme, CA and credentials
 * from the environment, see {@link Connection}), {@code mb} (5), {@code book}
 * ({@code src/test/resources/eval/datasets/gutenqa-emma/book.txt}), {@code embed} (true), {@code small_every} (10), {@code granularities}
 * (the processor's option as JSON, e.g. {@code []} for parents only; default: the processor's default [0.5, 0.25]).
 */
public final class BigDocRun {
    private BigDocRun() {}

    @SuppressWarnings("unchecked")
    public static void main(String[] args) throws Exception {
        RunArgs a = RunArgs.parse(args, "port", "mb", "book", "embed", "small_every", "granularities");
        String url = Connection.nodes(a.string("port", null), 10500, 1).get(0);
        double mb = a.decimal("mb", 5);
        boolean embed = a.bool("embed", true);
        int smallEvery = a.integer("small_every", 10);
        String granularities = a.has("granularities") ? ", \"granularities\": " + a.string("granularities", null) : "";
        if (mb <= 0 || mb > 9.5 || smallEvery < 1) {
            throw new IllegalArgumentException("mb in (0, 9.5] (max_chars is 10M characters), small_every >= 1");
        }
        String source = Files.readString(Path.of(a.string("book", "src/test/resources/eval/datasets/gutenqa-emma/book.txt")));
        int chars = (int) (mb * (1 << 20));
        StringBuilder sb = new StringBuilder(chars + source.length());
        for (int part = 1; sb.length() < chars; part++) {
            sb.append("PART ").append(part).append("\n\n").append(source).append("\n\n");
        }
        String text = sb.substring(0, chars).strip();
        List<String> paragraphs = List.of(source.split("\n\\s*\n")).stream().filter(p -> p.length() > 400).limit(200).toList();

        try (RestClient client = Connection.builder(url)
            .setRequestConfigCallback(c -> c.setConnectTimeout(Timeout.ofSeconds(5)).setResponseTimeout(Timeout.ofMinutes(60))).build()) {
            JsonRest.call(client, "PUT", "/_ingest/pipeline/bigdoc", "{\"processors\": [{\"multi_granular_chunking\": {\"field\": "
                + "\"body\", \"target_index\": \"bigdoc-chunks\"" + granularities + (embed ? "" : ", \"embed\": false") + "}}]}");
            JsonRest.call(client, "PUT", "/bigdoc-src/_doc/warm?pipeline=bigdoc", JsonRest.json(Map.of("body", paragraphs.get(0))));
            System.out.printf(Locale.ROOT, "bigdoc: %,d characters (%.2f MB of %s, repeated), embed=%s, default strategy (recursive, "
                + "max_words 300), granularities %s, a small document every %d s%n", text.length(), text.length() / 1048576.0,
                a.string("book", "src/test/resources/eval/datasets/gutenqa-emma/book.txt"), embed, a.string("granularities", "[0.5, 0.25]"),
                smallEvery);

            ExecutorService pool = Executors.newFixedThreadPool(2);
            List<Double> smallSeconds = Collections.synchronizedList(new ArrayList<>());
            try (NodeSampler sampler = new NodeSampler(client, 500)) {
                long t0 = System.nanoTime();
                Future<?> big = pool.submit(() -> JsonRest.call(client, "PUT", "/bigdoc-src/_doc/book?pipeline=bigdoc",
                    JsonRest.json(Map.of("body", text))));
                Future<?> smalls = pool.submit(() -> {
                    for (int i = 1; !big.isDone(); i++) {
                        Thread.sleep(smallEvery * 1000L);
                        if (big.isDone()) {
                            break;
                        }
                        long s0 = System.nanoTime();
                        JsonRest.call(client, "PUT", "/bigdoc-src/_doc/small-" + i + "?pipeline=bigdoc",
                            JsonRest.json(Map.of("body", paragraphs.get(i % paragraphs.size()))));
                        smallSeconds.add((System.nanoTime() - s0) / 1e9);
                    }
                    return null;
                });
                long lastPrint = 0;
                while (!big.isDone()) {
                    Thread.sleep(1000);
                    List<NodeSampler.Seen> seen = sampler.seen("book");
                    if (!seen.isEmpty() && seen.get(seen.size() - 1).atMillis() - lastPrint >= 15_000) {
                        NodeSampler.Seen s = seen.get(seen.size() - 1);
                        lastPrint = s.atMillis();
                        System.out.printf(Locale.ROOT, "  t=%5.1fs %-9s texts %,6d/%,d embedded (%,d reused), chunk documents %,d/%,d written; "
                            + "peak heap so far %s MB%n", s.atMillis() / 1000.0, s.stage(), s.get("texts_embedded"), s.get("texts"),
                            s.get("texts_reused"), s.get("chunk_documents_written"), s.get("chunk_documents"), mb(sampler.peakHeap()));
                    }
                }
                big.get();
                double seconds = (System.nanoTime() - t0) / 1e9;
                smalls.get(120, TimeUnit.SECONDS);
                Thread.sleep(600);
                sampler.close();

                Map<String, Object> summary = (Map<String, Object>) ((Map<String, Object>) JsonRest.call(client, "GET",
                    "/bigdoc-src/_doc/book", null).get("_source")).get("strata");
                int parents = ((Number) summary.get("parents")).intValue();
                int children = ((Number) summary.get("children")).intValue();
                JsonRest.call(client, "POST", "/bigdoc-chunks/_refresh", null);
                long stored = ((Number) JsonRest.call(client, "POST", "/bigdoc-chunks/_count", "{\"query\": {\"term\": {\"source_id\": "
                    + "\"book\"}}}").get("count")).longValue();
                List<NodeSampler.Seen> seen = sampler.seen("book");
                double embedStart = firstAt(seen, "embedding");
                double writeStart = firstAt(seen, "writing");
                System.out.printf(Locale.ROOT, "document: %,d characters, %,d parents + %,d children = %,d texts; %,d chunk documents stored "
                    + "(%s)%n", text.length(), parents, children, parents + children, stored, stored == parents ? "= parents" : "MISMATCH");
                System.out.printf(Locale.ROOT, "time: %.1f s in all; stages first seen at: embedding %.1f s, writing %.1f s (progress "
                    + "samples: %d)%n", seconds, embedStart, writeStart, seen.size());
                if (embed) {
                    System.out.printf(Locale.ROOT, "throughput: %.1f texts/s embedding stage, %.1f texts/s end to end%n",
                        (parents + children) / Math.max(0.001, writeStart - embedStart), (parents + children) / seconds);
                }
                System.out.printf(Locale.ROOT, "heap: peak used %s MB, peak old generation %s MB, of %s MB%n", mb(sampler.peakHeap()),
                    mb(sampler.peakOld()), mb(sampler.maxHeap()));
                List<Double> sorted = smallSeconds.stream().sorted().toList();
                System.out.printf(Locale.ROOT, "small documents meanwhile: %d, latency p50 %.2f s, max %.2f s%n", sorted.size(),
                    sorted.isEmpty() ? Double.NaN : sorted.get(sorted.size() / 2), sorted.isEmpty() ? Double.NaN : sorted.get(sorted.size() - 1));
                if (stored != parents) {
                    System.exit(1);
                }
                if (embed) {
                    try (NodeSampler again = new NodeSampler(client, 500)) {
                        long r0 = System.nanoTime();
                        JsonRest.call(client, "PUT", "/bigdoc-src/_doc/book?pipeline=bigdoc", JsonRest.json(Map.of("body", text)));
                        double again0 = (System.nanoTime() - r0) / 1e9;
                        Thread.sleep(600);
                        again.close();
                        Map<String, Object> ingest = (Map<String, Object>) ((Map<String, Object>) ((Map<String, Object>) JsonRest.call(client,
                            "GET", "/_plugins/_strata/stats", null).get("nodes")).values().iterator().next()).get("ingest");
                        System.out.printf(Locale.ROOT, "re-ingest of the same text: %.1f s; vectors reused since start %s, embedded %s; heap: "
                            + "peak used %s MB, peak old generation %s MB%n", again0, ingest.get("vectors_reused"), ingest.get("vectors_embedded"),
                            mb(again.peakHeap()), mb(again.peakOld()));
                    }
                }
            } finally {
                pool.shutdownNow();
            }
        }
    }

    private static double firstAt(List<NodeSampler.Seen> seen, String stage) {
        return seen.stream().filter(s -> s.stage().equals(stage)).mapToLong(NodeSampler.Seen::atMillis).min().orElse(-1) / 1000.0;
    }

    private static Map<String, Long> mb(Map<String, Long> bytes) {
        Map<String, Long> out = new java.util.TreeMap<>();
        bytes.forEach((k, v) -> out.put(k, v >> 20));
        return out;
    }
}
