package io.strata.chaos;

import io.strata.demo.JsonRest;
import org.opensearch.client.RestClient;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Samples every node's heap ({@code _nodes/stats/jvm}) and Strata's documents in flight ({@code ingest.in_progress} of
 * {@code _plugins/_strata/stats}) from a thread of its own while a test runs, e.g. while a large document is ingested.
 * Keeps the peak heap per node and every in-flight entry seen (bounded: {@link #MAX_SAMPLES}).
 */
public final class NodeSampler implements AutoCloseable {
    static final int MAX_SAMPLES = 100_000;

    /** One {@code in_progress} entry as seen at {@code atMillis} after the sampler started, on node {@code node}. */
    public record Seen(long atMillis, String node, Map<String, Object> entry) {
        public String id() {
            return (String) entry.get("id");
        }

        public String stage() {
            return (String) entry.get("stage");
        }

        public int get(String field) {
            return ((Number) entry.get(field)).intValue();
        }
    }

    private final RestClient client;
    private final long intervalMillis;
    private final long start = System.nanoTime();
    private final Map<String, Long> peakHeap = new ConcurrentHashMap<>();
    private final Map<String, Long> peakOld = new ConcurrentHashMap<>();
    /** Heap used minus the young generation's eden: what survived young collections (old + survivor), by node. */
    private final Map<String, Long> peakRetained = new ConcurrentHashMap<>();
    private final Map<String, Long> maxHeap = new ConcurrentHashMap<>();
    private final List<Seen> seen = Collections.synchronizedList(new ArrayList<>());
    private final List<String> errors = Collections.synchronizedList(new ArrayList<>());
    private final Thread thread;
    private volatile boolean running = true;
    private volatile int samples;

    public NodeSampler(RestClient client, long intervalMillis) {
        this.client = client;
        this.intervalMillis = intervalMillis;
        this.thread = new Thread(this::loop, "strata-node-sampler");
        thread.setDaemon(true);
        thread.start();
    }

    @SuppressWarnings("unchecked")
    private void loop() {
        while (running) {
            try {
                Map<String, Object> jvm = (Map<String, Object>) JsonRest.call(client, "GET", "/_nodes/stats/jvm", null).get("nodes");
                for (Object n : jvm.values()) {
                    Map<String, Object> node = (Map<String, Object>) n;
                    String name = (String) node.get("name");
                    Map<String, Object> mem = (Map<String, Object>) ((Map<String, Object>) node.get("jvm")).get("mem");
                    peakHeap.merge(name, ((Number) mem.get("heap_used_in_bytes")).longValue(), Math::max);
                    maxHeap.put(name, ((Number) mem.get("heap_max_in_bytes")).longValue());
                    Map<String, Object> pools = (Map<String, Object>) mem.get("pools");
                    if (pools != null && pools.get("old") instanceof Map<?, ?> old) {
                        peakOld.merge(name, ((Number) old.get("used_in_bytes")).longValue(), Math::max);
                    }
                    if (pools != null && pools.get("young") instanceof Map<?, ?> young) {
                        peakRetained.merge(name, ((Number) mem.get("heap_used_in_bytes")).longValue()
                            - ((Number) young.get("used_in_bytes")).longValue(), Math::max);
                    }
                }
                Map<String, Object> strata = (Map<String, Object>) JsonRest.call(client, "GET", "/_plugins/_strata/stats", null).get("nodes");
                long at = (System.nanoTime() - start) / 1_000_000;
                for (Object n : strata.values()) {
                    Map<String, Object> node = (Map<String, Object>) n;
                    for (Object e : (List<Object>) ((Map<String, Object>) node.get("ingest")).get("in_progress")) {
                        if (seen.size() < MAX_SAMPLES) {
                            seen.add(new Seen(at, (String) node.get("name"), (Map<String, Object>) e));
                        }
                    }
                }
                samples++;
            } catch (Exception e) {
                if (errors.size() < 100) {
                    errors.add(e.toString());
                }
            }
            try {
                Thread.sleep(intervalMillis);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    @Override
    public void close() throws InterruptedException {
        running = false;
        thread.interrupt();
        thread.join(10_000);
    }

    public int samples() {
        return samples;
    }

    /** Peak heap used per node name, in bytes. */
    public Map<String, Long> peakHeap() {
        return Map.copyOf(peakHeap);
    }

    /** Peak old-generation use per node name, in bytes (what survived young collections: long-lived data). */
    /** Peak of heap used outside eden (old + survivor) per node: garbage eden holds until a young collection is left out. */
    public Map<String, Long> peakRetained() {
        return Map.copyOf(peakRetained);
    }

    public Map<String, Long> peakOld() {
        return Map.copyOf(peakOld);
    }

    /** Heap size per node name, in bytes. */
    public Map<String, Long> maxHeap() {
        return Map.copyOf(maxHeap);
    }

    /** {@code System.nanoTime()} value {@code nanoTime} on the clock of {@link Seen#atMillis()}. */
    public long millisAt(long nanoTime) {
        return (nanoTime - start) / 1_000_000;
    }

    /** The in-flight entries seen for document {@code id}, in order. */
    public List<Seen> seen(String id) {
        synchronized (seen) {
            return seen.stream().filter(s -> id.equals(s.id())).toList();
        }
    }

    public List<String> errors() {
        return List.copyOf(errors);
    }
}
