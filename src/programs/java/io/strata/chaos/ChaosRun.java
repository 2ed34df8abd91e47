package io.strata.chaos;

import io.strata.demo.Connection;
import io.strata.demo.JsonRest;
import io.strata.demo.RunArgs;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Fault test on a real cluster ({@code bin/strata-chaos}, which starts a fresh 3-node cluster and stops it):
 * bulk-ingests generated documents through a {@code multi_granular_chunking} pipeline while one node is killed
 * with SIGKILL and restarted ({@code bin/strata-node kill|restart}), then races updates, deletes and re-ingest of
 * the same ids from concurrent threads while another node is killed and restarted, then checks — without the plugin's reconcile — that every source document
 * has exactly the chunk documents the {@code _chunk} preview gives for its stored text, and finally asks
 * {@code _reconcile?dry_run=true} for its own opinion (and fixes with it if anything drifted).
 *
 * <p>The client behaves like a real one ({@link ChaosClient}). {@link LifecycleChaosRun} is the run with aliases, rollover,
 * object fields, partial updates and concurrent writers.
 *
 * <p>Arguments ({@code key=value}): {@code name} (cluster, default chaos), {@code port} (first HTTP port: STRATA_URL's,
 * else 10500; a secured cluster's scheme, CA and credentials from the environment, see {@link Connection}), {@code nodes} (3), {@code docs} (10000), {@code batch} (200), {@code kills} (1, during ingest), {@code race_kills}
 * (1, during the race), {@code hot} (ids in the race,
 * 300), {@code race_ops} (per thread, 400), {@code seed}. Embeddings are off ({@code embed: false}): the test is
 * about keeping chunk documents in step with their sources, which does not depend on vectors, and the machine's
 * two cores are shared.
 */
public final class ChaosRun {
    static final String SOURCE = "chaos-source";
    static final String CHUNKS = "chaos-chunks";
    static final String PIPELINE = "chaos-chunking";
    static final int THETA = 40;
    static final String STRATEGY = "{\"type\": \"recursive\", \"max_words\": " + THETA + "}";
    static final String GRANULARITIES = "[0.5, 0.25]";
    static final String[] WORDS = ("river stone lantern harvest winter orchard copper meadow signal archive harbor pilot ledger "
        + "garden thunder silver canyon market bridge circuit vessel quarry marble falcon tavern beacon compass timber "
        + "glacier ember prairie saddle granite mirror velvet anchor basket candle pepper violet walnut cedar willow "
        + "the a of and to in was is it for on with as by that at from his her they which would could").split(" ");

    private final ChaosClient client;

    private ChaosRun(String name, List<String> nodes) {
        this.client = new ChaosClient(name, nodes);
    }

    public static void main(String[] args) throws Exception {
        RunArgs a = RunArgs.parse(args, "name", "port", "nodes", "docs", "batch", "kills", "race_kills", "hot", "race_ops", "seed");
        int docs = a.integer("docs", 10000);
        int batch = a.integer("batch", 200);
        int kills = a.integer("kills", 1);
        int hot = a.integer("hot", 300);
        int raceOps = a.integer("race_ops", 400);
        int raceKills = a.integer("race_kills", 1);
        int nodes = a.integer("nodes", 3);
        long seed = a.longValue("seed", System.nanoTime());
        ChaosRun run = new ChaosRun(a.string("name", "chaos"), Connection.nodes(a.string("port", null), 10500, nodes));
        try (ChaosClient ignored = run.client) {
            System.exit(run.run(docs, batch, kills, raceKills, Math.min(hot, docs), raceOps, seed) ? 0 : 1);
        }
    }

    private boolean run(int docs, int batch, int killCount, int raceKills, int hot, int raceOps, long seed) throws Exception {
        long t0 = System.nanoTime();
        System.out.printf(Locale.ROOT, "seed %d; %d nodes; %,d documents in batches of %d; %d kill(s); race on %d ids with %d kill(s)%n", seed,
            client.clients.size(), docs, batch, killCount, hot, raceKills);
        setup();

        // Phase 1: ingest with kill -9 + restart of a random node at a random moment.
        SplittableRandom random = new SplittableRandom(seed);
        int batches = (docs + batch - 1) / batch;
        AtomicInteger done = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(3);
        List<Future<?>> futures = new ArrayList<>();
        AtomicInteger nextBatch = new AtomicInteger();
        for (int t = 0; t < 2; t++) {
            futures.add(pool.submit(() -> {
                for (int b; (b = nextBatch.getAndIncrement()) < batches; ) {
                    StringBuilder body = new StringBuilder();
                    for (int d = b * batch; d < Math.min(docs, (b + 1) * batch); d++) {
                        indexLine(body, id(d), text(new SplittableRandom(seed * 31 + d)));
                    }
                    client.bulk("/" + SOURCE + "/_bulk", body.toString());
                    done.incrementAndGet();
                }
                return null;
            }));
        }
        List<String> killLog = Collections.synchronizedList(new ArrayList<>());
        int[] killAt = new int[killCount];
        int[] victims = new int[killCount];
        for (int k = 0; k < killCount; k++) {
            killAt[k] = batches * (k * 2 + 1) / (killCount * 2 + 1) + random.nextInt(Math.max(1, batches / (killCount * 4 + 2)));
            victims[k] = random.nextInt(client.clients.size());
        }
        futures.add(pool.submit(() -> {
            for (int k = 0; k < killCount; k++) {
                while (done.get() < killAt[k] && done.get() < batches) {
                    Thread.sleep(50);
                }
                double back = client.killAndRestart(victims[k], random);
                killLog.add(String.format(Locale.ROOT, "killed node-%d after %d of %d batches; back in %.1f s", victims[k], killAt[k], batches,
                    back));
            }
            return null;
        }));
        for (Future<?> f : futures) {
            f.get();
        }
        double ingestSecs = secs(t0);
        killLog.forEach(System.out::println);
        System.out.printf(Locale.ROOT, "phase 1: %,d documents acknowledged in %.1f s (%.0f docs/s)%n", docs, ingestSecs, docs / ingestSecs);
        waitGreen();
        long t1 = System.nanoTime();
        Drift afterKill = verify(docs, 0);
        System.out.printf(Locale.ROOT, "check after phase 1 (%.1f s): %s%n", secs(t1), afterKill);

        // Phase 2: updates, deletes and re-ingest of the same hot ids from 4 threads (2 bulk, 2 single requests).
        long t2 = System.nanoTime();
        List<Future<?>> race = new ArrayList<>();
        AtomicLong raceDeletes = new AtomicLong();
        AtomicLong raceWrites = new AtomicLong();
        AtomicLong raceDone = new AtomicLong();
        for (int t = 0; t < 4; t++) {
            int thread = t;
            race.add(pool.submit(() -> {
                SplittableRandom r = new SplittableRandom(seed + 1000 + thread);
                if (thread < 2) {
                    for (int op = 0; op < raceOps; op += 20) {
                        StringBuilder body = new StringBuilder();
                        for (int j = 0; j < 20; j++) {
                            String id = id(r.nextInt(hot));
                            if (r.nextInt(4) == 0) {
                                body.append("{\"delete\": {\"_id\": \"").append(id).append("\"}}\n");
                                raceDeletes.incrementAndGet();
                            } else {
                                indexLine(body, id, text(r));
                                raceWrites.incrementAndGet();
                            }
                        }
                        client.bulk("/" + SOURCE + "/_bulk", body.toString());
                        raceDone.addAndGet(20);
                    }
                } else {
                    for (int op = 0; op < raceOps; op++) {
                        String id = id(r.nextInt(hot));
                        if (r.nextInt(4) == 0) {
                            client.single("DELETE", "/" + SOURCE + "/_doc/" + id, null);
                            raceDeletes.incrementAndGet();
                        } else {
                            client.single("PUT", "/" + SOURCE + "/_doc/" + id, JsonRest.json(Map.of("body", text(r))));
                            raceWrites.incrementAndGet();
                        }
                        raceDone.incrementAndGet();
                    }
                }
                return null;
            }));
        }
        // kill -9 a random node while the race runs (between 1/4 and 3/4 of its operations), then restart it
        List<String> raceKillLog = Collections.synchronizedList(new ArrayList<>());
        long raceTotal = 4L * raceOps;
        Future<?> raceKiller = raceKills == 0 ? null : Executors.newSingleThreadExecutor().submit(() -> {
            for (int k = 0; k < raceKills; k++) {
                long at = raceTotal * (2L * k + 1) / (2L * raceKills + 2) + random.nextLong(Math.max(1, raceTotal / (4L * raceKills)));
                while (raceDone.get() < at && race.stream().anyMatch(f -> !f.isDone())) {
                    Thread.sleep(20);
                }
                if (race.stream().allMatch(Future::isDone)) {
                    break;
                }
                int victim = random.nextInt(client.clients.size());
                double back = client.killAndRestart(victim, random);
                raceKillLog.add(String.format(Locale.ROOT, "race: killed node-%d after %d of %d operations; back in %.1f s", victim, at,
                    raceTotal, back));
            }
            return null;
        });
        for (Future<?> f : race) {
            f.get();
        }
        if (raceKiller != null) {
            raceKiller.get();
        }
        pool.shutdown();
        raceKillLog.forEach(System.out::println);
        waitGreen();
        System.out.printf(Locale.ROOT, "phase 2: %,d writes and %,d deletes on %d ids from 4 threads in %.1f s%n", raceWrites.get(), raceDeletes.get(),
            hot, secs(t2));

        // Phase 3: independent check, then the plugin's reconcile.
        long t3 = System.nanoTime();
        Drift drift = verify(docs, hot);
        System.out.printf(Locale.ROOT, "check (independent of _reconcile, %.1f s): %s%n", secs(t3), drift);
        Map<String, Object> dry = client.call("POST", "/_plugins/_strata/_reconcile?index=" + SOURCE + "&dry_run=true", null);
        System.out.println("_reconcile dry_run: " + dry);
        boolean reconcileNeeded = !drift.clean() || reconciled(dry) > 0;
        Drift after = drift;
        if (reconcileNeeded) {
            Map<String, Object> fix = client.call("POST", "/_plugins/_strata/_reconcile?index=" + SOURCE, null);
            System.out.println("_reconcile: " + fix);
            after = verify(docs, hot);
            System.out.println("check after _reconcile: " + after);
            System.out.println("_reconcile dry_run after: " + client.call("POST", "/_plugins/_strata/_reconcile?index=" + SOURCE + "&dry_run=true", null));
        }
        System.out.println();
        System.out.printf(Locale.ROOT, "documents %,d | kills %d | %s%n", docs, client.kills.get(), client.retries());
        System.out.printf(Locale.ROOT, "after kill (phase 1): orphans %d | missing %d | duplicates %d | stale %d | summary %d | lost %d%n",
            afterKill.orphans, afterKill.missing, afterKill.duplicates, afterKill.stale, afterKill.summaryMismatch, afterKill.lost);
        System.out.printf(Locale.ROOT, "final (after race): orphans %d | missing %d | duplicates %d | stale %d | lost sources %d | errors %d | elapsed %.1f s"
            + " | reconcile needed: %s%n", drift.orphans, drift.missing, drift.duplicates, drift.stale, drift.lost, client.errors.get(), secs(t0),
            reconcileNeeded ? "yes" : "no");
        if (!client.errorSamples.isEmpty()) {
            System.out.println("error samples: " + client.errorSamples.subList(0, Math.min(5, client.errorSamples.size())));
        }
        return after.clean() && client.errors.get() == 0; // drift that _reconcile fixed is reported above, not a failure
    }

    private static long reconciled(Map<String, Object> r) {
        long n = 0;
        for (String k : List.of("orphans", "missing", "stale", "duplicates")) {
            n += ((Number) r.getOrDefault(k, 0)).longValue();
        }
        return n;
    }

    private void setup() throws IOException {
        client.call("PUT", "/" + CHUNKS, "{\"settings\": {\"number_of_shards\": 3, \"number_of_replicas\": 1}}");
        client.call("PUT", "/_ingest/pipeline/" + PIPELINE, "{\"processors\": [{\"multi_granular_chunking\": {\"field\": \"body\", \"target_index\": \""
            + CHUNKS + "\", \"strategy\": " + STRATEGY + ", \"granularities\": " + GRANULARITIES + ", \"embed\": false}}]}");
        client.call("PUT", "/" + SOURCE, "{\"settings\": {\"number_of_shards\": 3, \"number_of_replicas\": 1, \"index.default_pipeline\": \""
            + PIPELINE + "\"}, \"mappings\": {\"properties\": {\"body\": {\"type\": \"text\"}}}}");
        waitGreen();
    }

    private void waitGreen() throws IOException {
        client.call("GET", "/_cluster/health/" + SOURCE + "," + CHUNKS + "?wait_for_status=green&timeout=120s", null);
    }

    static String id(int d) {
        return "doc-" + d;
    }

    /** A few sentences, sometimes in paragraphs: 1 to ~8 parents at θ = 40 words. */
    static String text(SplittableRandom r) {
        StringBuilder sb = new StringBuilder();
        int sentences = 1 + r.nextInt(r.nextInt(4) == 0 ? 30 : 8);
        for (int s = 0; s < sentences; s++) {
            if (s > 0) {
                sb.append(r.nextInt(5) == 0 ? "\n\n" : " ");
            }
            int words = 3 + r.nextInt(r.nextInt(10) == 0 ? 60 : 18);
            for (int w = 0; w < words; w++) {
                String word = WORDS[r.nextInt(WORDS.length)];
                sb.append(w == 0 ? Character.toUpperCase(word.charAt(0)) + word.substring(1) : " " + word);
            }
            sb.append('.');
        }
        return sb.toString();
    }

    static void indexLine(StringBuilder body, String id, String text) throws IOException {
        body.append("{\"index\": {\"_id\": \"").append(id).append("\"}}\n").append(JsonRest.json(Map.of("body", text))).append('\n');
    }

    // ---- verification --------------------------------------------------------------------------------------

    static final class Drift {
        long sources;
        long chunks;
        long orphans;
        long missing;
        long duplicates;
        long stale;
        long summaryMismatch;
        long lost;
        final Set<String> affected = ConcurrentHashMap.newKeySet();

        boolean clean() {
            return orphans + missing + duplicates + stale + summaryMismatch + lost == 0;
        }

        @Override
        public String toString() {
            return String.format(Locale.ROOT, "%,d sources, %,d chunk documents: orphans %d, missing %d, duplicates %d, stale %d,"
                + " summary mismatches %d, lost sources %d (sources affected: %d%s)", sources, chunks, orphans, missing, duplicates, stale,
                summaryMismatch, lost, affected.size(), affected.isEmpty() ? "" : ", e.g. " + affected.stream().limit(5).toList());
        }
    }

    @SuppressWarnings("unchecked")
    private Drift verify(int docs, int hot) throws Exception {
        client.call("POST", "/" + SOURCE + "," + CHUNKS + "/_refresh", null);
        Drift drift = new Drift();
        Map<String, String> texts = new HashMap<>();
        Map<String, Integer> summaryParents = new HashMap<>();
        for (Map<String, Object> h : client.scrollAll(SOURCE, "{\"size\": 1000, \"sort\": [\"_doc\"]}")) {
            Map<String, Object> src = (Map<String, Object>) h.get("_source");
            texts.put((String) h.get("_id"), (String) src.get("body"));
            Map<String, Object> summary = (Map<String, Object>) src.get("strata");
            summaryParents.put((String) h.get("_id"), summary == null ? -1 : ((Number) summary.get("parents")).intValue());
        }
        drift.sources = texts.size();
        for (int d = hot; d < docs; d++) {
            if (!texts.containsKey(id(d))) {
                drift.lost++; // acknowledged in phase 1, never deleted
                drift.affected.add(id(d));
            }
        }
        // source id -> ordinal -> chunk document sources
        Map<String, Map<Integer, List<Map<String, Object>>>> chunks = new HashMap<>();
        for (Map<String, Object> h : client.scrollAll(CHUNKS, "{\"size\": 1000, \"sort\": [\"_doc\"], \"_source\": {\"excludes\": [\"embedding\","
            + " \"children.embedding\"]}}")) {
            Map<String, Object> src = (Map<String, Object>) h.get("_source");
            drift.chunks++;
            String sid = (String) src.get("source_id");
            int ordinal = ((Number) src.get("ordinal")).intValue();
            if (!h.get("_id").equals(sid + ":" + ordinal)) {
                drift.duplicates++; // a chunk under another id than its (source, ordinal): a second copy
                drift.affected.add(sid);
            }
            chunks.computeIfAbsent(sid, k -> new HashMap<>()).computeIfAbsent(ordinal, k -> new ArrayList<>()).add(src);
        }
        for (Map.Entry<String, Map<Integer, List<Map<String, Object>>>> e : chunks.entrySet()) {
            if (!texts.containsKey(e.getKey())) {
                drift.orphans += e.getValue().values().stream().mapToInt(List::size).sum();
                drift.affected.add(e.getKey());
            }
        }
        // Expected chunks of every stored text, from the _chunk preview with the pipeline's strategy, 3 threads.
        ExecutorService pool = Executors.newFixedThreadPool(3);
        AtomicLong missing = new AtomicLong();
        AtomicLong duplicates = new AtomicLong();
        AtomicLong stale = new AtomicLong();
        AtomicLong summaryMismatch = new AtomicLong();
        List<Future<?>> futures = new ArrayList<>();
        for (Map.Entry<String, String> e : texts.entrySet()) {
            futures.add(pool.submit(() -> {
                Map<String, Object> preview = client.call("POST", "/_plugins/_strata/_chunk", JsonRest.json(map("text", e.getValue(), "strategy",
                    map("type", "recursive", "max_words", THETA), "granularities", List.of(0.5, 0.25))));
                List<Map<String, Object>> parents = (List<Map<String, Object>>) preview.get("parents");
                Map<Integer, List<Map<String, Object>>> have = chunks.getOrDefault(e.getKey(), Map.of());
                boolean bad = false;
                for (Map<String, Object> p : parents) {
                    int ordinal = ((Number) p.get("ordinal")).intValue();
                    List<Map<String, Object>> copies = have.get(ordinal);
                    if (copies == null) {
                        missing.incrementAndGet();
                        bad = true;
                    } else if (!signature(copies.get(0)).equals(signature(p))) {
                        stale.incrementAndGet();
                        bad = true;
                    }
                }
                for (int ordinal : have.keySet()) {
                    if (ordinal < 0 || ordinal >= parents.size()) {
                        duplicates.addAndGet(have.get(ordinal).size());
                        bad = true;
                    }
                }
                if (summaryParents.get(e.getKey()) != parents.size()) {
                    summaryMismatch.incrementAndGet();
                    bad = true;
                }
                if (bad) {
                    drift.affected.add(e.getKey());
                }
                return null;
            }));
        }
        for (Future<?> f : futures) {
            f.get();
        }
        pool.shutdown();
        drift.missing = missing.get();
        drift.duplicates += duplicates.get();
        drift.stale = stale.get();
        drift.summaryMismatch = summaryMismatch.get();
        return drift;
    }

    /** What must match between a chunk document and a preview parent: offsets, text, and every child's. */
    @SuppressWarnings("unchecked")
    static String signature(Map<String, Object> parent) {
        StringBuilder sb = new StringBuilder();
        sb.append(parent.get("start")).append('-').append(parent.get("end")).append(':').append(parent.get("text"));
        for (Map<String, Object> c : (List<Map<String, Object>>) parent.getOrDefault("children", List.of())) {
            if (c.get("level") instanceof Number level && level.intValue() == 0) {
                continue; // a chunk document's own level-0 vector entry (format 2); previews have none
            }
            sb.append("|").append(c.get("level")).append('/').append(c.get("ordinal")).append('/').append(c.get("start")).append('-')
                .append(c.get("end")).append(':').append(c.get("text"));
        }
        return sb.toString();
    }

    static double secs(long startNanos) {
        return (System.nanoTime() - startNanos) / 1e9;
    }

    static Map<String, Object> map(Object... kv) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put((String) kv[i], kv[i + 1]);
        }
        return m;
    }
}
