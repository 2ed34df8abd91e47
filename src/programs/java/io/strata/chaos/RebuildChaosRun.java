package io.strata.chaos;

import io.strata.demo.Connection;
import io.strata.demo.JsonRest;
import io.strata.demo.RunArgs;

import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The rebuild-with-kill run ({@code bin/strata-chaos rebuild-kill}, a fresh 3-node cluster): {@code docs} documents ingested
 * through a chunking pipeline at θ {@value ChaosRun#THETA}; θ changes to {@value #NEW_THETA}; {@code _rebuild} runs as a task
 * throttled to {@code rps} documents a second while 2 writers index, rewrite and delete documents ({@value #OPS} each, also while a rebuild
 * starts: its check of the caller's view must not take their writes for a restriction); once a third of the
 * documents are done, the node running the task is killed with SIGKILL and restarted; nobody re-issues the rebuild: another node
 * resumes it by itself (the same generation, documents skipped), the writers stop, {@code _swap} serves the generation. Then an independent
 * check: every stored text's chunks in the served generation are the {@code _chunk} preview's under the new θ, and nothing
 * else is there; and {@code _reconcile?dry_run=true} finds nothing and no config drift.
 *
 * <p>Arguments ({@code key=value}): {@code name} (cluster, default chaos), {@code port}, {@code nodes} (3), {@code docs}
 * (2000), {@code rps} (150), {@code seed}. No vectors ({@code embed: false}): where chunks go does not depend on them.
 */
public final class RebuildChaosRun {
    static final String SOURCE = "rbk";
    static final String CHUNKS = SOURCE + "-chunks";
    static final String PIPELINE = "rbk-chunking";
    static final int NEW_THETA = 25;
    /** Writes per writer. */
    static final int OPS = 250;

    private final ChaosClient client;

    private RebuildChaosRun(ChaosClient client) {
        this.client = client;
    }

    public static void main(String[] args) throws Exception {
        RunArgs a = RunArgs.parse(args, "name", "port", "nodes", "docs", "rps", "seed");
        int nodes = a.integer("nodes", 3);
        long seed = a.longValue("seed", System.nanoTime());
        try (ChaosClient client = new ChaosClient(a.string("name", "chaos"), Connection.nodes(a.string("port", null), 10500, nodes))) {
            boolean ok = new RebuildChaosRun(client).run(a.integer("docs", 2000), a.integer("rps", 150), seed);
            System.exit(ok ? 0 : 1);
        }
    }

    private static String pipeline(int theta) {
        return "{\"processors\": [{\"multi_granular_chunking\": {\"field\": \"body\", \"target_index\": \"" + CHUNKS + "\", "
            + "\"embed\": false, \"strategy\": {\"type\": \"recursive\", \"max_words\": " + theta + "}, \"granularities\": "
            + ChaosRun.GRANULARITIES + "}}]}";
    }

    @SuppressWarnings("unchecked")
    private boolean run(int docs, int rps, long seed) throws Exception {
        long t0 = System.nanoTime();
        SplittableRandom random = new SplittableRandom(seed);
        System.out.printf(Locale.ROOT, "seed %d; %d nodes; %d documents; rebuild θ %d → %d at %d documents/s, 2 writers, the task's node "
            + "killed%n", seed, client.clients.size(), docs, ChaosRun.THETA, NEW_THETA, rps);
        client.call("PUT", "/_ingest/pipeline/" + PIPELINE, pipeline(ChaosRun.THETA));
        client.call("PUT", "/" + SOURCE, "{\"settings\": {\"number_of_shards\": 3, \"number_of_replicas\": 1, "
            + "\"index.default_pipeline\": \"" + PIPELINE + "\"}}");
        for (int from = 0; from < docs; from += 200) {
            StringBuilder body = new StringBuilder();
            for (int i = from; i < Math.min(docs, from + 200); i++) {
                body.append("{\"index\": {\"_id\": \"d").append(i).append("\"}}\n")
                    .append(JsonRest.json(Map.of("body", ChaosRun.text(random)))).append('\n');
            }
            client.bulk("/" + SOURCE + "/_bulk", body.toString());
        }
        client.call("GET", "/_cluster/health/" + SOURCE + "?wait_for_status=green&timeout=120s", null);
        client.call("PUT", "/_ingest/pipeline/" + PIPELINE, pipeline(NEW_THETA));
        System.out.printf(Locale.ROOT, "ingested in %.1f s%n", ChaosRun.secs(t0));

        // writers: index, rewrite and delete ids (some new) until the resumed rebuild ends, through each rebuild's start
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong writes = new AtomicLong();
        ExecutorService pool = Executors.newFixedThreadPool(2, r -> { // daemons: a failure ends the run instead of waiting on them
            Thread t = new Thread(r);
            t.setDaemon(true);
            return t;
        });
        List<Future<?>> writers = List.of(writer(pool, stop, writes, docs, random.split()),
            writer(pool, stop, writes, docs, random.split()));

        long r0 = System.nanoTime();
        String task = (String) client.call("POST", "/_plugins/_strata/_rebuild?index=" + SOURCE + "&requests_per_second=" + rps
            + "&wait_for_completion=false", null).get("task");
        Map<String, Object> status = awaitDone(task, docs / 3);
        int victim = nodeIndex(task.substring(0, task.indexOf(':')));
        long doneAtKill = done(status);
        System.out.printf(Locale.ROOT, "task %s on node-%d: %d of %d documents done at %.1f s; killing node-%d%n", task, victim, doneAtKill,
            ((Number) status.get("total")).longValue(), ChaosRun.secs(r0), victim);
        // nobody re-issues: another node resumes the build by itself; its task is seen while it runs, from before the kill
        AtomicReference<String> resumedTask = new AtomicReference<>();
        Thread watch = new Thread(() -> watchResume(resumedTask), "resume-watch");
        watch.start();
        long r1 = System.nanoTime();
        double back = client.killAndRestart(victim, random);
        System.out.printf(Locale.ROOT, "node-%d back in %.1f s; generations: %s%n", victim, back,
            client.call("GET", "/_plugins/_strata/generations?index=" + SOURCE, null).get("generations"));
        watch.join(300_000);
        if (resumedTask.get() == null) {
            watch.interrupt();
            throw new IllegalStateException("no automatic resume of the rebuild within 300 s of the kill");
        }
        Map<String, Object> resumed = awaitResponse(resumedTask.get());
        System.out.printf(Locale.ROOT, "automatic resume %s ended %.1f s after the kill: %s%n", resumedTask.get(), ChaosRun.secs(r1),
            resumed);
        stop.set(true);
        for (Future<?> w : writers) {
            w.get();
        }
        pool.shutdown();
        Map<String, Object> swapped = client.call("POST", "/_plugins/_strata/_swap?index=" + SOURCE + "&generation="
            + resumed.get("generation"), null);
        System.out.println("swap: " + swapped);

        ChaosRun.Drift drift = verify();
        System.out.println("check (independent of _reconcile): " + drift);
        Map<String, Object> dry = client.call("POST", "/_plugins/_strata/_reconcile?index=" + SOURCE + "&dry_run=true", null);
        System.out.println("_reconcile dry_run: " + dry);
        long found = 0;
        for (String k : List.of("orphans", "missing", "stale", "duplicates", "config_drift")) {
            found += ((Number) dry.getOrDefault(k, 0)).longValue();
        }
        boolean resumedSame = Boolean.TRUE.equals(resumed.get("resumed")) && resumed.get("generation_index") != null
            && resumed.get("generation_index").equals(swapped.get("serving"));
        long skipped = ((Number) resumed.getOrDefault("documents_skipped", 0)).longValue();
        System.out.println();
        System.out.printf(Locale.ROOT, "rebuild-kill: resumed %s, documents %s, skipped %d (done at kill %d) | writes %d | kills %d | "
                + "drift: orphans %d, missing %d, duplicates %d, stale %d | _reconcile found %d | errors %d | %s | elapsed %.1f s%n",
            resumedSame, resumed.get("documents"), skipped, doneAtKill, writes.get(), client.kills.get(), drift.orphans, drift.missing,
            drift.duplicates, drift.stale, found, client.errors.get(), client.retries(), ChaosRun.secs(t0));
        return resumedSame && skipped > 0 && drift.orphans + drift.missing + drift.duplicates + drift.stale == 0 && found == 0
            && client.errors.get() == 0;
    }

    /** Polls {@code GET generations} until it names a running rebuild that resumed a generation: sets its task id. */
    private void watchResume(AtomicReference<String> task) {
        while (task.get() == null && !Thread.currentThread().isInterrupted()) {
            try {
                Map<String, Object> listed = client.call("GET", "/_plugins/_strata/generations?index=" + SOURCE, null);
                if (listed.get("rebuild") instanceof Map<?, ?> r && Boolean.TRUE.equals(r.get("resumed"))) {
                    task.set((String) r.get("task"));
                    return;
                }
                Thread.sleep(100);
            } catch (InterruptedException e) {
                return;
            } catch (java.io.IOException e) {
                // every node refused for a while (the kill): poll again
            }
        }
    }

    /** The task's status once {@code n} documents are done; fails when it ended first or after 300 s. */
    @SuppressWarnings("unchecked")
    private Map<String, Object> awaitDone(String task, long n) throws Exception {
        long deadline = System.nanoTime() + 300_000_000_000L;
        while (true) {
            Map<String, Object> t = client.call("GET", "/_tasks/" + task, null);
            Map<String, Object> status = (Map<String, Object>) ((Map<String, Object>) t.get("task")).get("status");
            if (done(status) >= n) {
                return status;
            }
            if (Boolean.TRUE.equals(t.get("completed")) || System.nanoTime() > deadline) {
                throw new IllegalStateException("rebuild task " + task + " did not reach " + n + " documents: " + t);
            }
            Thread.sleep(100);
        }
    }

    /** The report of a completed rebuild task; fails on its error. */
    @SuppressWarnings("unchecked")
    private Map<String, Object> awaitResponse(String task) throws Exception {
        while (true) {
            Map<String, Object> t = client.call("GET", "/_tasks/" + task, null);
            if (Boolean.TRUE.equals(t.get("completed"))) {
                if (t.get("response") instanceof Map<?, ?> r) {
                    return (Map<String, Object>) r;
                }
                throw new IllegalStateException("rebuild task " + task + " failed: " + t);
            }
            Thread.sleep(200);
        }
    }

    private static long done(Map<String, Object> status) {
        return status != null && status.get("done") instanceof Number n ? n.longValue() : 0;
    }

    /** The index of node {@code nodeId} as {@code bin/strata-node} numbers it: the offset of its HTTP port from node-0's. */
    @SuppressWarnings("unchecked")
    private int nodeIndex(String nodeId) throws Exception {
        Map<String, Object> nodes = (Map<String, Object>) client.call("GET", "/_nodes/http", null).get("nodes");
        int min = Integer.MAX_VALUE;
        int port = -1;
        for (Map.Entry<String, Object> n : nodes.entrySet()) {
            String address = (String) ((Map<String, Object>) ((Map<String, Object>) n.getValue()).get("http")).get("publish_address");
            int p = Integer.parseInt(address.substring(address.lastIndexOf(':') + 1));
            min = Math.min(min, p);
            if (n.getKey().equals(nodeId)) {
                port = p;
            }
        }
        if (port < 0) {
            throw new IllegalStateException("no node [" + nodeId + "] in " + nodes.keySet());
        }
        return port - min;
    }

    private Future<?> writer(ExecutorService pool, AtomicBoolean stop, AtomicLong writes, int docs,
                             SplittableRandom r) {
        return pool.submit(() -> {
            // bounded: a source written faster than the rebuild catches up never lets its passes end
            for (int op = 0; op < OPS && !stop.get(); ) {
                String id = "d" + r.nextInt(docs + docs / 10);
                if (r.nextInt(4) == 0) {
                    client.single("DELETE", "/" + SOURCE + "/_doc/" + id, null);
                } else {
                    client.single("PUT", "/" + SOURCE + "/_doc/" + id, JsonRest.json(Map.of("body", ChaosRun.text(r))));
                }
                writes.incrementAndGet();
                op++;
                Thread.sleep(20);
            }
            return null;
        });
    }

    /** The served generation against the {@code _chunk} preview of every stored text under the new θ. */
    @SuppressWarnings("unchecked")
    private ChaosRun.Drift verify() throws Exception {
        client.call("POST", "/" + SOURCE + "," + CHUNKS + "/_refresh", null);
        ChaosRun.Drift drift = new ChaosRun.Drift();
        Map<String, String> texts = new HashMap<>();
        for (Map<String, Object> h : client.scrollAll(SOURCE, "{\"size\": 1000, \"sort\": [\"_doc\"]}")) {
            texts.put((String) h.get("_id"), (String) ((Map<String, Object>) h.get("_source")).get("body"));
        }
        drift.sources = texts.size();
        Map<String, Map<Integer, Map<String, Object>>> chunks = new HashMap<>();
        for (Map<String, Object> h : client.scrollAll(CHUNKS, "{\"size\": 1000, \"sort\": [\"_doc\"]}")) {
            Map<String, Object> src = (Map<String, Object>) h.get("_source");
            drift.chunks++;
            String sid = (String) src.get("source_id");
            if (chunks.computeIfAbsent(sid, k -> new HashMap<>()).put(((Number) src.get("ordinal")).intValue(), src) != null) {
                drift.duplicates++;
            }
        }
        for (var e : chunks.entrySet()) {
            if (!texts.containsKey(e.getKey())) {
                drift.orphans += e.getValue().size();
                drift.affected.add(e.getKey());
            }
        }
        for (var e : texts.entrySet()) {
            Map<String, Object> preview = client.call("POST", "/_plugins/_strata/_chunk", JsonRest.json(ChaosRun.map("text", e.getValue(),
                "strategy", ChaosRun.map("type", "recursive", "max_words", NEW_THETA), "granularities", List.of(0.5, 0.25))));
            List<Map<String, Object>> parents = (List<Map<String, Object>>) preview.get("parents");
            Map<Integer, Map<String, Object>> have = chunks.getOrDefault(e.getKey(), Map.of());
            long before = drift.missing + drift.stale + drift.duplicates;
            for (Map<String, Object> p : parents) {
                Map<String, Object> chunk = have.get(((Number) p.get("ordinal")).intValue());
                if (chunk == null) {
                    drift.missing++;
                } else if (!ChaosRun.signature(chunk).equals(ChaosRun.signature(p))) {
                    drift.stale++;
                }
            }
            drift.duplicates += have.keySet().stream().filter(o -> o >= parents.size()).count();
            if (drift.missing + drift.stale + drift.duplicates > before) {
                drift.affected.add(e.getKey());
            }
        }
        return drift;
    }
}
