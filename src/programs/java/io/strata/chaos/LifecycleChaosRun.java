package io.strata.chaos;

import io.strata.demo.Connection;
import io.strata.demo.JsonRest;
import io.strata.demo.RunArgs;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The lifecycle chaos run ({@code bin/strata-chaos lifecycle}, a fresh 3-node cluster): documents with their text in an
 * object field ({@code doc.body}) written through a write alias whose indices have a default pipeline with
 * {@code "target_index": "{{_index}}-chunks"}; 4 writers on the same hot ids at once (2 with bulks, 2 with single
 * requests) index, update partially ({@code _update} with {@code doc_as_upsert}), update by script and delete, while the
 * alias is rolled over to a new write index and a node is killed with SIGKILL and restarted. Every id has a custom
 * routing of its own ({@code routing}: one of 7 values, by id), and some deletes name another routing (answered
 * {@code not_found}: the document stored with its own routing and its chunks stay). Then, without
 * {@code _reconcile}, an independent check: every concrete index's chunk index holds exactly the chunks the {@code _chunk}
 * preview gives for each stored text (nothing orphaned, missing, stale or beyond the count) and each summary's count
 * agrees; finally {@code _reconcile} on every concrete index, dry run then real, must find and fix nothing.
 *
 * <p>Arguments ({@code key=value}): {@code name} (cluster, default chaos), {@code port}, {@code nodes} (3), {@code hot}
 * (ids, 200), {@code ops} (per writer, 600), {@code kills} (1), {@code seed}. No vectors ({@code embed: false}): where
 * chunks go does not depend on them.
 */
public final class LifecycleChaosRun {
    static final String ALIAS = "life";
    static final String PIPELINE = "life-chunking";

    private final ChaosClient client;

    private LifecycleChaosRun(ChaosClient client) {
        this.client = client;
    }

    public static void main(String[] args) throws Exception {
        RunArgs a = RunArgs.parse(args, "name", "port", "nodes", "hot", "ops", "kills", "seed");
        int nodes = a.integer("nodes", 3);
        long seed = a.longValue("seed", System.nanoTime());
        try (ChaosClient client = new ChaosClient(a.string("name", "chaos"), Connection.nodes(a.string("port", null), 10500, nodes))) {
            boolean ok = new LifecycleChaosRun(client).run(a.integer("hot", 200), a.integer("ops", 600), a.integer("kills", 1), seed);
            System.exit(ok ? 0 : 1);
        }
    }

    /** The custom routing of document {@code id}: 7 values over 3 shards, so most ids land off their home shard. */
    static String routingOf(String id) {
        return "route-" + Math.floorMod(id.hashCode(), 7);
    }

    /** Another routing than {@code id}'s own (a delete naming it finds nothing, or another document of the same id). */
    static String otherRouting(String id) {
        return "route-" + Math.floorMod(id.hashCode() + 1, 7);
    }

    private boolean run(int hot, int ops, int killCount, long seed) throws Exception {
        long t0 = System.nanoTime();
        System.out.printf(Locale.ROOT, "seed %d; %d nodes; 4 writers x %d operations on %d ids through alias [%s]; a rollover; %d kill(s)%n",
            seed, client.clients.size(), ops, hot, ALIAS, killCount);
        client.call("PUT", "/_ingest/pipeline/" + PIPELINE, "{\"processors\": [{\"multi_granular_chunking\": {\"field\": \"doc.body\", "
            + "\"target_index\": \"{{_index}}-chunks\", \"strategy\": " + ChaosRun.STRATEGY + ", \"granularities\": "
            + ChaosRun.GRANULARITIES + ", \"embed\": false}}]}");
        client.call("PUT", "/" + ALIAS + "-000001", "{\"settings\": " + settings() + ", \"aliases\": {\"" + ALIAS
            + "\": {\"is_write_index\": true}}}");
        client.call("GET", "/_cluster/health/" + ALIAS + "-*?wait_for_status=green&timeout=120s", null);

        SplittableRandom random = new SplittableRandom(seed);
        AtomicLong done = new AtomicLong();
        long total = 4L * ops;
        ExecutorService pool = Executors.newFixedThreadPool(5);
        List<Future<?>> writers = new ArrayList<>();
        Map<String, AtomicLong> counts = new TreeMap<>();
        for (String k : List.of("index", "partial", "script", "delete")) {
            counts.put(k, new AtomicLong());
        }
        for (int t = 0; t < 4; t++) {
            int thread = t;
            writers.add(pool.submit(() -> {
                SplittableRandom r = new SplittableRandom(seed + 1000 + thread);
                if (thread < 2) {
                    for (int op = 0; op < ops; op += 10) {
                        StringBuilder body = new StringBuilder();
                        for (int j = 0; j < 10; j++) {
                            bulkItem(body, "doc-" + r.nextInt(hot), r, counts);
                        }
                        client.bulk("/" + ALIAS + "/_bulk", body.toString());
                        done.addAndGet(10);
                    }
                } else {
                    for (int op = 0; op < ops; op++) {
                        single("doc-" + r.nextInt(hot), r, counts);
                        done.incrementAndGet();
                    }
                }
                return null;
            }));
        }
        // a rollover at a third of the operations, kills spread over the rest
        List<String> log = new ArrayList<>();
        Future<?> events = pool.submit(() -> {
            waitFor(done, total / 3, writers);
            client.call("POST", "/" + ALIAS + "/_rollover", "{\"settings\": " + settings() + "}");
            log.add("rolled over after " + done.get() + " of " + total + " operations");
            for (int k = 0; k < killCount; k++) {
                waitFor(done, total / 3 + total * (k + 1) / (3L * (killCount + 1)), writers);
                if (writers.stream().allMatch(Future::isDone)) {
                    break;
                }
                int victim = random.nextInt(client.clients.size());
                double back = client.killAndRestart(victim, random);
                log.add(String.format(Locale.ROOT, "killed node-%d after %d of %d operations; back in %.1f s", victim, done.get(), total,
                    back));
            }
            return null;
        });
        for (Future<?> f : writers) {
            f.get();
        }
        events.get();
        pool.shutdown();
        log.forEach(System.out::println);
        double secs = ChaosRun.secs(t0);
        System.out.printf(Locale.ROOT, "writes: %s in %.1f s%n", counts, secs);
        client.call("GET", "/_cluster/health/" + ALIAS + "-*?wait_for_status=green&timeout=120s", null);

        List<String> indices = new ArrayList<>();
        for (Object index : client.call("GET", "/_alias/" + ALIAS, null).keySet()) { // the rolled-over indices, not their chunk indices
            indices.add((String) index);
        }
        indices.sort(null);
        long t1 = System.nanoTime();
        ChaosRun.Drift total1 = new ChaosRun.Drift();
        for (String index : indices) {
            ChaosRun.Drift d = verify(index);
            System.out.printf(Locale.ROOT, "check [%s] (independent of _reconcile): %s%n", index, d);
            add(total1, d);
        }
        System.out.printf(Locale.ROOT, "check took %.1f s%n", ChaosRun.secs(t1));
        long fixedByReconcile = 0;
        long foundByReconcile = 0;
        for (String index : indices) {
            Map<String, Object> dry = client.call("POST", "/_plugins/_strata/_reconcile?index=" + index + "&dry_run=true", null);
            Map<String, Object> fix = client.call("POST", "/_plugins/_strata/_reconcile?index=" + index, null);
            System.out.println("_reconcile dry_run [" + index + "]: " + dry);
            System.out.println("_reconcile [" + index + "]: " + fix);
            foundByReconcile += found(dry);
            fixedByReconcile += ((Number) fix.get("fixed")).longValue() + ((List<?>) fix.get("failures")).size();
        }
        System.out.println();
        System.out.printf(Locale.ROOT, "indices %s | kills %d | %s%n", indices, client.kills.get(), client.retries());
        System.out.printf(Locale.ROOT, "drift without _reconcile: orphans %d | missing %d | duplicates %d | stale %d | summary %d"
                + " | _reconcile found %d, fixed %d | errors %d | elapsed %.1f s%n", total1.orphans, total1.missing, total1.duplicates,
            total1.stale, total1.summaryMismatch, foundByReconcile, fixedByReconcile, client.errors.get(), ChaosRun.secs(t0));
        if (!client.errorSamples.isEmpty()) {
            System.out.println("error samples: " + client.errorSamples.subList(0, Math.min(5, client.errorSamples.size())));
        }
        return total1.clean() && foundByReconcile == 0 && fixedByReconcile == 0 && client.errors.get() == 0;
    }

    private static String settings() {
        return "{\"number_of_shards\": 3, \"number_of_replicas\": 1, \"index.default_pipeline\": \"" + PIPELINE + "\"}";
    }

    private static void waitFor(AtomicLong done, long at, List<Future<?>> writers) throws InterruptedException {
        while (done.get() < at && writers.stream().anyMatch(f -> !f.isDone())) {
            Thread.sleep(20);
        }
    }

    private static long found(Map<String, Object> r) {
        long n = 0;
        for (String k : List.of("orphans", "missing", "stale", "duplicates")) {
            n += ((Number) r.getOrDefault(k, 0)).longValue();
        }
        return n;
    }

    private static void add(ChaosRun.Drift total, ChaosRun.Drift d) {
        total.orphans += d.orphans;
        total.missing += d.missing;
        total.duplicates += d.duplicates;
        total.stale += d.stale;
        total.summaryMismatch += d.summaryMismatch;
    }

    private static String doc(String text) throws java.io.IOException {
        return JsonRest.json(Map.of("doc", Map.of("body", text), "title", "t"));
    }

    /** One bulk item: index, partial update (upsert), scripted append, or delete. */
    private static void bulkItem(StringBuilder body, String id, SplittableRandom r, Map<String, AtomicLong> counts) throws Exception {
        int kind = r.nextInt(8);
        String routing = "\", \"routing\": \"" + routingOf(id);
        if (kind < 3) {
            body.append("{\"index\": {\"_id\": \"").append(id).append(routing).append("\"}}\n").append(doc(ChaosRun.text(r))).append('\n');
            counts.get("index").incrementAndGet();
        } else if (kind < 5) {
            body.append("{\"update\": {\"_id\": \"").append(id).append(routing).append("\", \"retry_on_conflict\": 3}}\n").append(JsonRest.json(Map.of("doc",
                Map.of("doc", Map.of("body", ChaosRun.text(r))), "doc_as_upsert", true))).append('\n');
            counts.get("partial").incrementAndGet();
        } else if (kind < 6) {
            body.append("{\"update\": {\"_id\": \"").append(id).append(routing).append("\", \"retry_on_conflict\": 3}}\n").append(JsonRest.json(Map.of("script", Map.of("source",
                "ctx._source.doc.body = ctx._source.doc.body + ' ' + params.s", "params", Map.of("s", ChaosRun.text(r))),
                "upsert", Map.of("doc", Map.of("body", ChaosRun.text(r)))))).append('\n');
            counts.get("script").incrementAndGet();
        } else {
            // one delete in four names another routing: not_found, nothing of the document stored with its own changes
            String named = r.nextInt(4) == 0 ? otherRouting(id) : routingOf(id);
            body.append("{\"delete\": {\"_id\": \"").append(id).append("\", \"routing\": \"").append(named).append("\"}}\n");
            counts.get("delete").incrementAndGet();
        }
    }

    /** One single request of the same kinds, through the alias. */
    private void single(String id, SplittableRandom r, Map<String, AtomicLong> counts) throws Exception {
        int kind = r.nextInt(8);
        if (kind < 3) {
            client.single("PUT", "/" + ALIAS + "/_doc/" + id + "?routing=" + routingOf(id), doc(ChaosRun.text(r)));
            counts.get("index").incrementAndGet();
        } else if (kind < 6) {
            client.single("POST", "/" + ALIAS + "/_update/" + id + "?retry_on_conflict=3&routing=" + routingOf(id), JsonRest.json(Map.of("doc",
                Map.of("doc", Map.of("body", ChaosRun.text(r))), "doc_as_upsert", true)));
            counts.get("partial").incrementAndGet();
        } else {
            client.single("DELETE", "/" + ALIAS + "/_doc/" + id + "?routing=" + (r.nextInt(4) == 0 ? otherRouting(id) : routingOf(id)), null);
            counts.get("delete").incrementAndGet();
        }
    }

    /** The independent check of one concrete index against its chunk index, from the _chunk preview of each stored text. */
    @SuppressWarnings("unchecked")
    private ChaosRun.Drift verify(String index) throws Exception {
        String chunkIndex = index + "-chunks";
        client.call("POST", "/" + index + "," + chunkIndex + "/_refresh", null);
        ChaosRun.Drift drift = new ChaosRun.Drift();
        Map<String, String> texts = new HashMap<>();
        Map<String, Integer> summaryParents = new HashMap<>();
        Map<String, Object> seqNos = new HashMap<>();
        for (Map<String, Object> h : client.scrollAll(index, "{\"size\": 1000, \"sort\": [\"_doc\"], \"seq_no_primary_term\": true}")) {
            Map<String, Object> src = (Map<String, Object>) h.get("_source");
            seqNos.put((String) h.get("_id"), h.get("_seq_no"));
            texts.put((String) h.get("_id"), (String) ((Map<String, Object>) src.get("doc")).get("body"));
            Map<String, Object> summary = (Map<String, Object>) src.get("strata");
            summaryParents.put((String) h.get("_id"), summary == null ? -1 : ((Number) summary.get("parents")).intValue());
        }
        drift.sources = texts.size();
        Map<String, Map<Integer, Map<String, Object>>> chunks = new HashMap<>();
        Map<String, Long> versions = new HashMap<>();
        for (Map<String, Object> h : client.scrollAll(chunkIndex, "{\"size\": 1000, \"sort\": [\"_doc\"], \"version\": true}")) {
            Map<String, Object> src = (Map<String, Object>) h.get("_source");
            versions.put((String) h.get("_id"), ((Number) h.get("_version")).longValue());
            drift.chunks++;
            String sid = (String) src.get("source_id");
            int ordinal = ((Number) src.get("ordinal")).intValue();
            // <id>:<ordinal>, with @<shard> after it for a document off the shard its _id alone routes to
            String id = (String) h.get("_id");
            boolean ours = id.equals(sid + ":" + ordinal) || id.matches(java.util.regex.Pattern.quote(sid + ":" + ordinal) + "@\\d+");
            if (!ours || !index.equals(src.get("source_index")) || !routingOf(sid).equals(src.get("source_routing"))) {
                drift.duplicates++;
                drift.affected.add(sid);
            }
            chunks.computeIfAbsent(sid, k -> new HashMap<>()).put(ordinal, src);
        }
        for (var e : chunks.entrySet()) {
            if (!texts.containsKey(e.getKey())) {
                drift.orphans += e.getValue().size();
                drift.affected.add(e.getKey());
            }
        }
        for (var e : texts.entrySet()) {
            Map<String, Object> preview = client.call("POST", "/_plugins/_strata/_chunk", JsonRest.json(ChaosRun.map("text", e.getValue(),
                "strategy", ChaosRun.map("type", "recursive", "max_words", ChaosRun.THETA), "granularities", List.of(0.5, 0.25))));
            List<Map<String, Object>> parents = (List<Map<String, Object>>) preview.get("parents");
            Map<Integer, Map<String, Object>> have = chunks.getOrDefault(e.getKey(), Map.of());
            boolean bad = false;
            for (Map<String, Object> p : parents) {
                Map<String, Object> chunk = have.get(((Number) p.get("ordinal")).intValue());
                if (chunk == null) {
                    drift.missing++;
                    bad = true;
                } else if (!ChaosRun.signature(chunk).equals(ChaosRun.signature(p))) {
                    drift.stale++;
                    bad = true;
                }
            }
            for (int ordinal : have.keySet()) {
                if (ordinal >= parents.size()) {
                    drift.duplicates++;
                    bad = true;
                }
            }
            if (summaryParents.get(e.getKey()) != parents.size()) {
                drift.summaryMismatch++;
                bad = true;
            }
            if (bad) {
                drift.affected.add(e.getKey());
                if (drift.affected.size() <= 5) { // what a post-mortem needs: the source's _seq_no, each chunk's version (2 × _seq_no)
                    Map<Integer, Long> found = new TreeMap<>();
                    have.keySet().forEach(o -> found.put(o, versions.entrySet().stream()
                        .filter(v -> v.getKey().startsWith(e.getKey() + ":" + o)).map(Map.Entry::getValue).findFirst().orElse(null)));
                    System.out.printf(Locale.ROOT, "  [%s][%s] _seq_no %s, %d parents expected, summary %d; chunk ordinal=version: %s%n",
                        index, e.getKey(), seqNos.get(e.getKey()), parents.size(), summaryParents.get(e.getKey()), found);
                    client.history.getOrDefault(e.getKey(), List.of()).forEach(h -> System.out.println("      " + h));
                }
            }
        }
        return drift;
    }
}
