package io.strata.chaos;

import io.strata.demo.Connection;
import io.strata.demo.JsonRest;
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
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Bounded load test ({@code bin/strata-chaos load}): bulk ingest with embeddings (the bundled model) while
 * {@code clients} query threads run {@code multi_granular} with {@code query_text}, for {@code seconds}, on the
 * loopback cluster {@code bin/strata-chaos} starts. Reports ingest docs/s, query p50/p99, errors by status (429 is
 * back-pressure, counted apart and retried by the ingest client), and every node's heap sampled every 5 s from
 * {@code _nodes/stats}, with the Strata inference queue's size and rejections from {@code _plugins/_strata/stats}.
 *
 * <p>Arguments ({@code key=value}): {@code port} (first HTTP port: STRATA_URL's, else 10500), {@code nodes} (3),
 * {@code seconds} (120), {@code clients} (20), {@code ingest_threads} (2), {@code batch} (50), {@code seed}. A secured
 * cluster's scheme, CA and credentials come from the environment ({@link Connection}).
 */
public final class LoadRun {
    static final String SOURCE = "load-source";
    static final String CHUNKS = "load-chunks";
    static final String[] QUERIES = { "copper lantern by the river", "winter harvest in the orchard", "a falcon over the canyon",
        "market bridge at the harbor", "candle and velvet in the tavern", "granite quarry and marble", "signal from the beacon",
        "willow and cedar near the meadow" };

    private final List<RestClient> clients = new ArrayList<>();
    private final AtomicInteger next = new AtomicInteger();
    private final Map<String, AtomicLong> statuses = new ConcurrentHashMap<>();

    private LoadRun(List<String> nodes) {
        for (String node : nodes) {
            clients.add(Connection.builder(node)
                .setRequestConfigCallback(c -> c.setConnectTimeout(Timeout.ofSeconds(3)).setResponseTimeout(Timeout.ofSeconds(120)))
                .build());
        }
    }

    public static void main(String[] args) throws Exception {
        RunArgs a = RunArgs.parse(args, "port", "nodes", "seconds", "clients", "ingest_threads", "batch", "seed");
        int seconds = a.integer("seconds", 120);
        int queryClients = a.integer("clients", 20);
        if (seconds < 5 || seconds > 900 || queryClients < 1 || queryClients > 64) {
            throw new IllegalArgumentException("seconds in [5, 900], clients in [1, 64]");
        }
        LoadRun run = new LoadRun(Connection.nodes(a.string("port", null), 10500, a.integer("nodes", 3)));
        try {
            System.exit(run.run(seconds, queryClients, a.integer("ingest_threads", 2),
                a.integer("batch", 50), a.longValue("seed", 11)) ? 0 : 1);
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

    private void count(String what) {
        statuses.computeIfAbsent(what, k -> new AtomicLong()).incrementAndGet();
    }

    @SuppressWarnings("unchecked")
    private boolean run(int seconds, int queryClients, int ingestThreads, int batch, long seed) throws Exception {
        call("PUT", "/_ingest/pipeline/load-chunking", "{\"processors\": [{\"multi_granular_chunking\": {\"field\": \"body\", \"target_index\": \""
            + CHUNKS + "\", \"strategy\": {\"type\": \"recursive\", \"max_words\": 100}}}]}");
        call("PUT", "/" + CHUNKS, "{\"settings\": {\"number_of_shards\": 3, \"number_of_replicas\": 0, \"index.knn\": true}}");
        call("PUT", "/" + SOURCE, "{\"settings\": {\"number_of_shards\": 3, \"number_of_replicas\": 0, \"index.default_pipeline\": \"load-chunking\"}}");
        // A first batch so the query clients have something (and the model is loaded) before the clock starts.
        StringBuilder warm = new StringBuilder();
        for (int d = 0; d < 50; d++) {
            ChaosRun.indexLine(warm, "warm-" + d, ChaosRun.text(new SplittableRandom(seed + d)));
        }
        Map<String, Object> warmed = call("POST", "/" + SOURCE + "/_bulk?refresh=true", warm.toString());
        if (Boolean.TRUE.equals(warmed.get("errors"))) {
            throw new IllegalStateException("the warm-up bulk failed: " + warmed.get("items").toString().substring(0, 500));
        }
        System.out.printf(Locale.ROOT, "load: %d s, %d query clients (multi_granular, query_text), %d ingest threads (bulks of %d, embeddings"
            + " with the bundled model), %d nodes%n", seconds, queryClients, ingestThreads, batch, clients.size());

        long end = System.nanoTime() + seconds * 1_000_000_000L;
        AtomicLong ingested = new AtomicLong();
        AtomicLong throttled = new AtomicLong();
        AtomicInteger docId = new AtomicInteger();
        List<Long> latencies = Collections.synchronizedList(new ArrayList<>());
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
                                    ingested.incrementAndGet();
                                } else if (status == 429) {
                                    throttled.incrementAndGet();
                                    count("ingest_item_429");
                                    retry.add(items.get(i));
                                } else {
                                    count("ingest_item_" + status);
                                }
                            }
                        } catch (ResponseException e) {
                            count("ingest_bulk_" + e.getResponse().getStatusLine().getStatusCode());
                        } catch (IOException e) {
                            count("ingest_io_" + e.getClass().getSimpleName());
                        }
                        if (!retry.isEmpty()) {
                            Thread.sleep(200);
                        }
                        items = retry;
                    }
                }
                return null;
            }));
        }
        for (int t = 0; t < queryClients; t++) {
            int client = t;
            futures.add(pool.submit(() -> {
                SplittableRandom r = new SplittableRandom(seed + 100 + client);
                while (System.nanoTime() < end) {
                    String q = QUERIES[r.nextInt(QUERIES.length)];
                    long t0 = System.nanoTime();
                    try {
                        call("POST", "/" + CHUNKS + "/_search", "{\"size\": 10, \"query\": {\"multi_granular\": {\"query_text\": \"" + q
                            + "\", \"k\": 10}}}");
                        latencies.add(System.nanoTime() - t0);
                    } catch (ResponseException e) {
                        count("query_" + e.getResponse().getStatusLine().getStatusCode());
                    } catch (IOException e) {
                        count("query_io_" + e.getClass().getSimpleName());
                    }
                }
                return null;
            }));
        }
        List<String> heapLines = Collections.synchronizedList(new ArrayList<>());
        long[] maxHeap = new long[1];
        futures.add(pool.submit(() -> {
            long start = System.nanoTime();
            while (System.nanoTime() < end) {
                Map<String, Object> nodes = (Map<String, Object>) call("GET", "/_nodes/stats/jvm", null).get("nodes");
                Map<String, Object> strata = (Map<String, Object>) call("GET", "/_plugins/_strata/stats", null).get("nodes");
                StringBuilder line = new StringBuilder(String.format(Locale.ROOT, "t=%3.0fs", (System.nanoTime() - start) / 1e9));
                for (Map.Entry<String, Object> n : new java.util.TreeMap<>(nodes).entrySet()) {
                    Map<String, Object> node = (Map<String, Object>) n.getValue();
                    Map<String, Object> mem = (Map<String, Object>) ((Map<String, Object>) node.get("jvm")).get("mem");
                    long used = ((Number) mem.get("heap_used_in_bytes")).longValue();
                    maxHeap[0] = Math.max(maxHeap[0], used);
                    Map<String, Object> s = (Map<String, Object>) strata.get(n.getKey());
                    Map<String, Object> queue = s == null ? Map.of() : (Map<String, Object>) ((Map<String, Object>) s.get("inference")).get("queue");
                    line.append(String.format(Locale.ROOT, " | %s heap %4d/%d MB q %s rej %s", node.get("name"), used >> 20,
                        ((Number) mem.get("heap_max_in_bytes")).longValue() >> 20, queue.get("size"), queue.get("rejected")));
                }
                heapLines.add(line.toString());
                Thread.sleep(5000);
            }
            return null;
        }));
        for (Future<?> f : futures) {
            f.get();
        }
        pool.shutdown();
        heapLines.forEach(System.out::println);
        long[] lat = latencies.stream().mapToLong(Long::longValue).sorted().toArray();
        long errors = statuses.entrySet().stream().filter(e -> !e.getKey().endsWith("_429")).mapToLong(e -> e.getValue().get()).sum();
        System.out.println();
        System.out.printf(Locale.ROOT, "ingest: %,d documents acknowledged in %d s = %.1f docs/s; %,d item 429s (back-pressure, retried)%n",
            ingested.get(), seconds, ingested.get() / (double) seconds, throttled.get());
        System.out.printf(Locale.ROOT, "queries: %,d ok, p50 %.1f ms, p99 %.1f ms, %.1f queries/s%n", lat.length, pct(lat, 50), pct(lat, 99),
            lat.length / (double) seconds);
        System.out.printf(Locale.ROOT, "errors (non-429): %d; by kind: %s; max heap used on any node: %d MB%n", errors, statuses, maxHeap[0] >> 20);
        System.out.println("_plugins/_strata/stats inference: " + inferenceSummary());
        return errors == 0;
    }

    @SuppressWarnings("unchecked")
    private String inferenceSummary() throws IOException {
        Map<String, Object> nodes = (Map<String, Object>) call("GET", "/_plugins/_strata/stats", null).get("nodes");
        List<String> out = new ArrayList<>();
        for (Object n : nodes.values()) {
            Map<String, Object> node = (Map<String, Object>) n;
            Map<String, Object> ingest = (Map<String, Object>) node.get("ingest");
            out.add(node.get("name") + ": queue " + ((Map<String, Object>) node.get("inference")).get("queue") + ", failures " + ingest.get("failures")
                + ", docs " + ingest.get("documents"));
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
