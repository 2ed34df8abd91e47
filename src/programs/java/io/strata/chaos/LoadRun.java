package io.strata.chaos;

import io.strata.demo.Connection;
import io.strata.demo.RunArgs;
import org.apache.hc.core5.http.ContentType;
import org.apache.hc.core5.http.io.entity.StringEntity;
import org.apache.hc.core5.util.Timeout;
import org.opensearch.client.Request;
import org.opensearch.client.Response;
import org.opensearch.client.ResponseException;
import org.opensearch.client.RestClient;
import org.opensearch.common.xcontent.XContentHelper;
import org.opensearch.core.common.bytes.BytesArray;
import org.opensearch.core.xcontent.MediaTypeRegistry;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Bounded load test ({@code bin/strata-chaos load}) in two phases on the same loopback cluster with the same query clients,
 * after a warm-up of {@code warmup_seconds} of the same queries (not reported: fresh JVMs compile their hot paths then):
 * <ol>
 *   <li><b>idle</b>: {@code clients} threads run {@code multi_granular} with {@code query_text} for {@code idle_seconds},
 *       nothing else running;</li>
 *   <li><b>ingest</b>: the same queries while {@code ingest_threads} bulk-ingest generated documents through a pipeline that
 *       embeds with the bundled model, for {@code seconds}.</li>
 * </ol>
 * Per phase: query latency p50/p95/p99/max, queries/s, errors by status (429 counted apart; the ingest client retries its
 * 429 items), every node's heap and the Strata inference queues sampled every 5 s; for the ingest phase, documents/s and
 * texts embedded/s (from {@code ingest.vectors_embedded} of {@code _plugins/_strata/stats}, summed over the nodes).
 *
 * <p>Queries arrive at a fixed rate {@code qps} over the whole cluster (open loop: query {@code n} is due at
 * {@code n / qps} s; a free client takes the next due query, and its latency counts from when it was due, so time spent
 * waiting for a client is latency too). The query load is then the same in both phases and on any code, and what changes
 * is only how long each query takes. {@code qps=0} runs closed loop instead (every client sends its next query as soon as
 * the previous one answered), the form of earlier runs; the load then depends on the latency being measured.
 *
 * <p>Arguments ({@code key=value}): {@code port} (first HTTP port: STRATA_URL's, else 10500), {@code nodes} (3),
 * {@code warmup_seconds} (20), {@code idle_seconds} (45), {@code seconds} (90, the ingest phase), {@code clients} (20), {@code qps} (2),
 * {@code ingest_threads} (2), {@code batch} (10), {@code seed}. A secured cluster's scheme, CA and credentials come from
 * the environment ({@link Connection}).
 */
public final class LoadRun {
    static final String SOURCE = "load-source";
    static final String CHUNKS = "load-chunks";
    static final String[] QUERIES = { "copper lantern by the river", "winter harvest in the orchard", "a falcon over the canyon",
        "market bridge at the harbor", "candle and velvet in the tavern", "granite quarry and marble", "signal from the beacon",
        "willow and cedar near the meadow" };

    private final List<RestClient> clients = new ArrayList<>();
    private final AtomicInteger next = new AtomicInteger();

    private LoadRun(List<String> nodes) {
        for (String node : nodes) {
            clients.add(Connection.builder(node)
                .setRequestConfigCallback(c -> c.setConnectTimeout(Timeout.ofSeconds(3)).setResponseTimeout(Timeout.ofSeconds(120)))
                .build());
        }
    }

    public static void main(String[] args) throws Exception {
        RunArgs a = RunArgs.parse(args, "port", "nodes", "warmup_seconds", "idle_seconds", "seconds", "clients", "qps", "ingest_threads",
            "batch", "seed");
        int warmupSeconds = a.integer("warmup_seconds", 20);
        int idleSeconds = a.integer("idle_seconds", 45);
        int seconds = a.integer("seconds", 90);
        int queryClients = a.integer("clients", 20);
        double qps = a.decimal("qps", 2);
        if (warmupSeconds < 0 || warmupSeconds > 900 || idleSeconds < 5 || idleSeconds > 900 || seconds < 5 || seconds > 900 || queryClients < 1 || queryClients > 64
            || qps < 0 || qps > 1000) {
            throw new IllegalArgumentException("warmup_seconds in [0, 900], idle_seconds and seconds in [5, 900], clients in [1, 64], "
                + "qps in [0, 1000] (0: closed loop)");
        }
        LoadRun run = new LoadRun(Connection.nodes(a.string("port", null), 10500, a.integer("nodes", 3)));
        try {
            System.exit(run.run(warmupSeconds, idleSeconds, seconds, queryClients, qps, a.integer("ingest_threads", 2), a.integer("batch", 10),
                a.longValue("seed", 11)) ? 0 : 1);
        } finally {
            for (RestClient c : run.clients) {
                c.close();
            }
        }
    }

    private Map<String, Object> call(String method, String path, String body) throws IOException {
        Request request = new Request(method, path);
        if (body != null) {
            request.setEntity(new StringEntity(body, ContentType.create(path.contains("_bulk") ? "application/x-ndjson" : "application/json")));
        }
        Response r = clients.get(Math.floorMod(next.getAndIncrement(), clients.size())).performRequest(request);
        return XContentHelper.convertToMap(new BytesArray(r.getEntity().getContent().readAllBytes()), true, MediaTypeRegistry.JSON).v2();
    }

    /** What one phase measured. */
    private static final class Phase {
        final String name;
        final List<Long> latencies = Collections.synchronizedList(new ArrayList<>());
        final Map<String, AtomicLong> statuses = new ConcurrentHashMap<>();
        final List<String> samples = Collections.synchronizedList(new ArrayList<>());
        final AtomicLong ingested = new AtomicLong();
        final AtomicLong throttled = new AtomicLong();
        final AtomicLong unsent = new AtomicLong();
        long maxHeap;
        long texts;
        double elapsedSeconds;
        /** From the phase's start until the last ingest thread stopped (its last bulk answered). */
        volatile double ingestSeconds;

        Phase(String name) {
            this.name = name;
        }

        void count(String what) {
            statuses.computeIfAbsent(what, k -> new AtomicLong()).incrementAndGet();
        }

        long errors() {
            return statuses.entrySet().stream().filter(e -> !e.getKey().endsWith("_429")).mapToLong(e -> e.getValue().get()).sum();
        }
    }

    private boolean run(int warmupSeconds, int idleSeconds, int seconds, int queryClients, double qps, int ingestThreads, int batch, long seed)
        throws Exception {
        call("PUT", "/_ingest/pipeline/load-chunking", "{\"processors\": [{\"multi_granular_chunking\": {\"field\": \"body\", \"target_index\": \""
            + CHUNKS + "\", \"strategy\": {\"type\": \"recursive\", \"max_words\": 100}}}]}");
        call("PUT", "/" + CHUNKS, "{\"settings\": {\"number_of_shards\": 3, \"number_of_replicas\": 0, \"index.knn\": true}}");
        call("PUT", "/" + SOURCE, "{\"settings\": {\"number_of_shards\": 3, \"number_of_replicas\": 0, \"index.default_pipeline\": \"load-chunking\"}}");
        // A first batch so the queries have something to find before the clock starts; then a few queries through every
        // node, so each has loaded the model before the idle phase is timed.
        StringBuilder warm = new StringBuilder();
        for (int d = 0; d < 50; d++) {
            ChaosRun.indexLine(warm, "warm-" + d, ChaosRun.text(new SplittableRandom(seed + d)));
        }
        Map<String, Object> warmed = call("POST", "/" + SOURCE + "/_bulk?refresh=true", warm.toString());
        if (Boolean.TRUE.equals(warmed.get("errors"))) {
            throw new IllegalStateException("the warm-up bulk failed: " + warmed.get("items").toString().substring(0, 500));
        }
        for (int i = 0; i < 3 * clients.size(); i++) {
            call("POST", "/" + CHUNKS + "/_search", query(QUERIES[i % QUERIES.length]));
        }
        System.out.printf(Locale.ROOT, "load: %d query clients (multi_granular, query_text), %s; warm-up %d s (not reported), idle phase "
            + "%d s, then ingest phase %d s with %d ingest threads (bulks of %d, embeddings with the bundled model); %d nodes%n",
            queryClients, qps > 0 ? String.format(Locale.ROOT, "open loop at %.1f queries/s", qps) : "closed loop", warmupSeconds,
            idleSeconds, seconds, ingestThreads, batch, clients.size());

        // the same queries first, unreported: fresh JVMs compile the search and embedding paths during the first seconds
        if (warmupSeconds > 0) {
            phase("warm-up", warmupSeconds, queryClients, qps, 0, batch, seed, new AtomicInteger());
        }
        Phase idle = phase("idle", idleSeconds, queryClients, qps, 0, batch, seed, new AtomicInteger());
        Phase ingest = phase("ingest", seconds, queryClients, qps, ingestThreads, batch, seed, new AtomicInteger());

        System.out.println();
        for (Phase p : List.of(idle, ingest)) {
            System.out.println("samples, " + p.name + " phase:");
            p.samples.forEach(s -> System.out.println("  " + s));
        }
        System.out.println();
        double ratio = Double.NaN;
        for (Phase p : List.of(idle, ingest)) {
            long[] lat = p.latencies.stream().mapToLong(Long::longValue).sorted().toArray();
            // the phase lasts until its last query answered: a query due before the end is waited for
            System.out.printf(Locale.ROOT, "%-6s queries: %,d ok in %.1f s (%.1f/s), p50 %.1f ms, p95 %.1f ms, p99 %.1f ms, max %.1f ms; "
                    + "query 429s %d, not sent in time %d%n", p.name, lat.length, p.elapsedSeconds, lat.length / p.elapsedSeconds,
                pct(lat, 50), pct(lat, 95), pct(lat, 99), lat.length == 0 ? Double.NaN : lat[lat.length - 1] / 1e6,
                p.statuses.getOrDefault("query_429", new AtomicLong()).get(), p.unsent.get());
            if (p == ingest) {
                long[] idleLat = idle.latencies.stream().mapToLong(Long::longValue).sorted().toArray();
                ratio = pct(lat, 99) / pct(idleLat, 99);
                System.out.printf(Locale.ROOT, "ingest: %,d documents acknowledged in %.1f s = %.2f docs/s; %,d texts embedded = %.1f texts/s; "
                        + "%,d item 429s (back-pressure, retried)%n", p.ingested.get(), p.ingestSeconds, p.ingested.get() / p.ingestSeconds,
                    p.texts, p.texts / p.ingestSeconds, p.throttled.get());
            }
            System.out.printf(Locale.ROOT, "%-6s errors (non-429): %d; by kind: %s; max heap used on any node: %d MB%n", p.name, p.errors(),
                new TreeMap<>(p.statuses), p.maxHeap >> 20);
        }
        System.out.printf(Locale.ROOT, "query p99 under ingest / idle: %.2f%n", ratio);
        System.out.println("_plugins/_strata/stats inference: " + inferenceSummary());
        return idle.errors() + ingest.errors() == 0;
    }

    private static String query(String text) {
        return "{\"size\": 10, \"query\": {\"multi_granular\": {\"query_text\": \"" + text + "\", \"k\": 10}}}";
    }

    /** One phase: queries for {@code seconds} and, with {@code ingestThreads > 0}, ingest beside them. */
    @SuppressWarnings("unchecked")
    private Phase phase(String name, int seconds, int queryClients, double qps, int ingestThreads, int batch, long seed, AtomicInteger docId)
        throws Exception {
        Phase phase = new Phase(name);
        long textsBefore = summedStat("vectors_embedded");
        long start = System.nanoTime();
        long end = start + seconds * 1_000_000_000L;
        AtomicLong arrivals = new AtomicLong();
        ExecutorService pool = Executors.newFixedThreadPool(queryClients + ingestThreads + 1);
        List<Future<?>> futures = new ArrayList<>();
        for (int t = 0; t < ingestThreads; t++) {
            futures.add(pool.submit(() -> {
                while (System.nanoTime() < end) {
                    int first = docId.getAndAdd(batch);
                    List<String> items = new ArrayList<>();
                    for (int d = first; d < first + batch; d++) {
                        StringBuilder sb = new StringBuilder();
                        ChaosRun.indexLine(sb, "doc-" + d, ChaosRun.text(new SplittableRandom(seed * 31 + d)));
                        items.add(sb.toString());
                    }
                    while (!items.isEmpty() && System.nanoTime() < end) {
                        List<String> retry = new ArrayList<>();
                        try {
                            Map<String, Object> r = call("POST", "/" + SOURCE + "/_bulk", String.join("", items));
                            List<Map<String, Object>> answers = (List<Map<String, Object>>) r.get("items");
                            for (int i = 0; i < answers.size(); i++) {
                                Map<String, Object> item = (Map<String, Object>) answers.get(i).get("index");
                                int status = ((Number) item.get("status")).intValue();
                                if (status < 300) {
                                    phase.ingested.incrementAndGet();
                                } else if (status == 429) {
                                    phase.throttled.incrementAndGet();
                                    phase.count("ingest_item_429");
                                    retry.add(items.get(i));
                                } else {
                                    phase.count("ingest_item_" + status);
                                }
                            }
                        } catch (ResponseException e) {
                            phase.count("ingest_bulk_" + e.getResponse().getStatusLine().getStatusCode());
                        } catch (IOException e) {
                            phase.count("ingest_io_" + e.getClass().getSimpleName());
                        }
                        if (!retry.isEmpty()) {
                            Thread.sleep(200);
                        }
                        items = retry;
                    }
                }
                double took = (System.nanoTime() - start) / 1e9;
                synchronized (phase) {
                    phase.ingestSeconds = Math.max(phase.ingestSeconds, took);
                }
                return null;
            }));
        }
        long intervalNanos = qps > 0 ? (long) (1e9 / qps) : 0;
        for (int t = 0; t < queryClients; t++) {
            int client = t;
            futures.add(pool.submit(() -> {
                SplittableRandom r = new SplittableRandom(seed + 100 + client);
                while (true) {
                    long due;
                    if (intervalNanos > 0) {
                        due = start + arrivals.getAndIncrement() * intervalNanos;
                        if (due >= end) {
                            break;
                        }
                        long wait = due - System.nanoTime();
                        if (wait > 0) {
                            TimeUnit.NANOSECONDS.sleep(wait);
                        }
                    } else {
                        due = System.nanoTime();
                        if (due >= end) {
                            break;
                        }
                    }
                    if (System.nanoTime() >= end) {
                        phase.unsent.incrementAndGet(); // due in time, but no client was free before the phase ended
                        continue;
                    }
                    try {
                        call("POST", "/" + CHUNKS + "/_search", query(QUERIES[r.nextInt(QUERIES.length)]));
                        phase.latencies.add(System.nanoTime() - due);
                    } catch (ResponseException e) {
                        phase.count("query_" + e.getResponse().getStatusLine().getStatusCode());
                    } catch (IOException e) {
                        phase.count("query_io_" + e.getClass().getSimpleName());
                    }
                }
                return null;
            }));
        }
        futures.add(pool.submit(() -> {
            while (System.nanoTime() < end) {
                phase.samples.add(sample(phase, start));
                Thread.sleep(5000);
            }
            return null;
        }));
        for (Future<?> f : futures) {
            f.get();
        }
        pool.shutdown();
        phase.elapsedSeconds = (System.nanoTime() - start) / 1e9;
        phase.texts = summedStat("vectors_embedded") - textsBefore;
        return phase;
    }

    /** Every node's heap and Strata inference queues (the query lane where the node has one), on one line. */
    @SuppressWarnings("unchecked")
    private String sample(Phase phase, long start) throws IOException {
        Map<String, Object> nodes = (Map<String, Object>) call("GET", "/_nodes/stats/jvm", null).get("nodes");
        Map<String, Object> strata = (Map<String, Object>) call("GET", "/_plugins/_strata/stats", null).get("nodes");
        StringBuilder line = new StringBuilder(String.format(Locale.ROOT, "t=%3.0fs", (System.nanoTime() - start) / 1e9));
        for (Map.Entry<String, Object> n : new TreeMap<>(nodes).entrySet()) {
            Map<String, Object> node = (Map<String, Object>) n.getValue();
            Map<String, Object> mem = (Map<String, Object>) ((Map<String, Object>) node.get("jvm")).get("mem");
            long used = ((Number) mem.get("heap_used_in_bytes")).longValue();
            phase.maxHeap = Math.max(phase.maxHeap, used);
            Map<String, Object> s = (Map<String, Object>) strata.get(n.getKey());
            Map<String, Object> inference = s == null ? Map.of() : (Map<String, Object>) s.get("inference");
            Map<String, Object> queue = (Map<String, Object>) inference.getOrDefault("queue", Map.of());
            Object lane = inference.get("query_lane");
            line.append(String.format(Locale.ROOT, " | %s heap %4d/%d MB q %s/%s rej %s", node.get("name"), used >> 20,
                ((Number) mem.get("heap_max_in_bytes")).longValue() >> 20, queue.get("size"), queue.get("active"), queue.get("rejected")));
            if (lane instanceof Map<?, ?> l) {
                line.append(String.format(Locale.ROOT, " query lane %s/%s rej %s timed out %s", l.get("size"), l.get("active"),
                    l.get("rejected"), l.get("timed_out")));
            }
        }
        return line.toString();
    }

    /** An {@code ingest} counter of {@code _plugins/_strata/stats}, summed over the nodes. */
    @SuppressWarnings("unchecked")
    private long summedStat(String ingestField) throws IOException {
        long sum = 0;
        for (Object n : ((Map<String, Object>) call("GET", "/_plugins/_strata/stats", null).get("nodes")).values()) {
            sum += ((Number) ((Map<String, Object>) ((Map<String, Object>) n).get("ingest")).get(ingestField)).longValue();
        }
        return sum;
    }

    @SuppressWarnings("unchecked")
    private String inferenceSummary() throws IOException {
        Map<String, Object> nodes = (Map<String, Object>) call("GET", "/_plugins/_strata/stats", null).get("nodes");
        List<String> out = new ArrayList<>();
        for (Object n : nodes.values()) {
            Map<String, Object> node = (Map<String, Object>) n;
            Map<String, Object> ingest = (Map<String, Object>) node.get("ingest");
            Map<String, Object> inference = (Map<String, Object>) node.get("inference");
            out.add(node.get("name") + ": queue " + inference.get("queue") + (inference.containsKey("query_lane")
                ? ", query lane " + inference.get("query_lane") : "") + ", failures " + ingest.get("failures") + ", docs "
                + ingest.get("documents"));
        }
        Collections.sort(out);
        return String.join("; ", out);
    }

    static double pct(long[] sorted, double p) {
        if (sorted.length == 0) {
            return Double.NaN;
        }
        return sorted[Math.min(sorted.length - 1, (int) Math.ceil(p / 100 * sorted.length) - 1)] / 1e6;
    }
}
