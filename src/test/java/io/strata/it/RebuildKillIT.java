package io.strata.it;

import org.apache.hc.core5.http.HttpHost;
import org.opensearch.client.Request;
import org.opensearch.client.ResponseException;
import org.opensearch.client.RestClient;

import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The node running two {@code _rebuild}s is killed (SIGKILL, {@code bin/strata-node kill}) after each built part of its
 * generation. Source A: nobody re-issues anything; its rebuild's persistent task moves to a surviving node, which resumes the
 * build by itself (same generation, the documents already complete skipped, fewer texts embedded than the whole index has)
 * until it is {@code complete}. Source B: its pipeline moved to another config before the kill, so its automatic resume is
 * refused (the 400 a re-issue gets) and the generation stays, listed as {@code interrupted}; the caller's re-issue under the
 * other config is that 400, and under the same config resumes it. Then {@code _swap} and {@code _reconcile?dry_run=true}
 * find no drift in either. Oracle: {@code _chunk} of every stored text under the new config, against the chunks the
 * swapped-in generation serves.
 *
 * <p>Needs the cluster's name ({@code strata.it.cluster.name}, which {@code bin/strata-test} passes) to kill and restart a
 * node, and at least 2 nodes; the victim is a node that is not the elected cluster manager, so the cluster keeps a quorum
 * (with 3 nodes, any 2 of them).
 */
@SuppressWarnings("unchecked")
public class RebuildKillIT extends StrataRestTestCase {
    private static final Map<String, Object> STRATEGY = Map.of("type", "recursive", "max_words", 20);
    private static final List<Double> GRANULARITIES = List.of(0.5);
    private static final int DOCS = 200;
    /** Documents each build has done when the node is killed. */
    private static final int AT_KILL = 60;

    /** At θ {@code maxWords}; {@code embed}: with the bundled model's vectors. */
    private static String pipelineJson(String target, int maxWords, boolean embed) {
        return "{\"field\": \"body\", \"target_index\": \"" + target + "\", \"embed\": " + embed + ", "
            + "\"strategy\": {\"type\": \"recursive\", \"max_words\": " + maxWords + "}, \"granularities\": [0.5]}";
    }

    private static final String[] TEMPLATES = {
        "Document %d is about Highbury. It rained in Surrey that week. Mr Knightley walked to Hartfield twice, and Emma painted "
            + "a portrait of Harriet for the drawing room.",
        "Note %d. Frank Churchill wrote from Enscombe.",
        "Letter %d from Randalls: Mrs Weston sends her love. The ball at the Crown was a success, though the room was cold and the "
            + "supper was late. Miss Bates talked of Jane Fairfax, of her letters, of her health, and of the baked apples that Mr "
            + "Woodhouse would not eat. Everyone agreed that the evening had been a pleasant one." };

    private static String text(int i) {
        return TEMPLATES[i % TEMPLATES.length].formatted(i);
    }

    private static void node(String verb, String cluster, int i) throws Exception {
        Process p = new ProcessBuilder("bin/strata-node", verb, "--name", cluster, "--node", Integer.toString(i)).inheritIO().start();
        assertTrue("bin/strata-node " + verb + " did not end", p.waitFor(480, TimeUnit.SECONDS));
        assertEquals("bin/strata-node " + verb + " --node " + i, 0, p.exitValue());
    }

    private static Map<String, Object> statusOf(RestClient client, String id) throws IOException {
        Map<String, Object> t = entityAsMap(client.performRequest(new Request("GET", "/_tasks/" + id)));
        return (Map<String, Object>) ((Map<String, Object>) t.get("task")).get("status");
    }

    private static int done(Map<String, Object> status) {
        return status == null || !(status.get("done") instanceof Number n) ? 0 : n.intValue();
    }

    public static Map<String, Map<String, Object>> generationsOf(String source) throws IOException {
        Map<String, Map<String, Object>> out = new LinkedHashMap<>();
        for (Map<String, Object> g : (List<Map<String, Object>>) call("GET", "/_plugins/_strata/generations?index=" + source)
            .get("generations")) {
            out.put((String) g.get("index"), g);
        }
        return out;
    }

    /** The ids of the cluster's persistent tasks. */
    public static List<String> persistentTasks() throws IOException {
        Map<String, Object> metadata = (Map<String, Object>) call("GET", "/_cluster/state/metadata").get("metadata");
        Map<String, Object> tasks = (Map<String, Object>) metadata.get("persistent_tasks");
        return tasks == null ? List.of() : ((List<Map<String, Object>>) tasks.get("tasks")).stream().map(t -> (String) t.get("id")).toList();
    }

    /** A node to kill: not the elected cluster manager; its index in bin/strata-node is its HTTP port's offset. */
    public record Victim(String id, int port, int index) {}

    @SuppressWarnings("unchecked")
    public static Victim victim(Map<String, Object> nodes, List<HttpHost> hosts) throws IOException {
        String manager = (String) ((List<Map<String, Object>>) (List<?>) entityAsList(client().performRequest(
            new Request("GET", "/_cat/cluster_manager?format=json")))).get(0).get("id");
        int base = hosts.stream().mapToInt(HttpHost::getPort).min().orElseThrow();
        for (Map.Entry<String, Object> n : nodes.entrySet()) {
            String address = (String) ((Map<String, Object>) ((Map<String, Object>) n.getValue()).get("http")).get("publish_address");
            if (!n.getKey().startsWith(manager)) {
                int port = Integer.parseInt(address.substring(address.lastIndexOf(':') + 1));
                return new Victim(n.getKey(), port, port - base);
            }
        }
        throw new AssertionError("no node but the cluster manager: " + nodes);
    }

    public static String uuidOf(String index) throws IOException {
        Map<String, Object> settings = (Map<String, Object>) ((Map<String, Object>) call("GET", "/" + index + "/_settings")
            .get(index)).get("settings");
        return (String) ((Map<String, Object>) settings.get("index")).get("uuid");
    }

    /**
     * The report of the rebuild of {@code source} that resumed {@code generation} without a caller: its task, found through
     * {@code GET generations} while it runs, then its stored result; waits at most 90 s.
     */
    public static Map<String, Object> automaticResume(String source, String generation) throws Exception {
        long deadline = System.nanoTime() + 90_000_000_000L;
        String task = null;
        while (task == null && System.nanoTime() < deadline) {
            Map<String, Object> listed = call("GET", "/_plugins/_strata/generations?index=" + source);
            if (listed.get("rebuild") instanceof Map<?, ?> rebuild && generation.equals(rebuild.get("generation_index"))) {
                task = (String) rebuild.get("task");
            } else {
                // from the same answer: a second GET could already list the generation as the running rebuild (not among generations)
                Map<String, Object> listedGeneration = null;
                for (Map<String, Object> g : (List<Map<String, Object>>) listed.get("generations")) {
                    listedGeneration = generation.equals(g.get("index")) ? g : listedGeneration;
                }
                assertNotNull(listed.toString(), listedGeneration);
                assertNotEquals("resumed before it was seen: " + listed, "complete", listedGeneration.get("state"));
                Thread.sleep(100);
            }
        }
        assertNotNull("no rebuild of [" + source + "] resumed [" + generation + "] within 90 s after the kill: "
            + generationsOf(source), task);
        Map<String, Object> result = call("GET", "/_tasks/" + task + "?wait_for_completion=true&timeout=90s");
        assertEquals(result.toString(), true, result.get("completed"));
        assertNull(result.toString(), result.get("error"));
        return (Map<String, Object>) result.get("response");
    }

    private static void source(String source, String pipeline, String chunks) throws IOException {
        putPipeline(pipeline, pipelineJson(chunks, 40, false)); // ingested without vectors: quicker
        call("PUT", "/" + source, "{\"settings\": {\"index.number_of_shards\": 2, \"index.number_of_replicas\": 1, "
            + "\"index.default_pipeline\": \"" + pipeline + "\"}}");
        for (int from = 0; from < DOCS; from += 100) {
            Map<String, Map<String, Object>> docs = new LinkedHashMap<>();
            for (int i = from; i < from + 100; i++) {
                docs.put("d" + i, Map.of("body", text(i)));
            }
            assertEquals(false, bulk(source, pipeline, docs).get("errors"));
        }
        call("GET", "/_cluster/health/" + source + "?wait_for_status=green&timeout=60s");
        // θ changes, and vectors come in: the rebuild builds the new config, embedding what it writes
        putPipeline(pipeline, pipelineJson(chunks, 20, true));
    }

    /** The swap, no drift, and the oracle: every stored text's {@code _chunk} under the new config is what the name serves. */
    private static void swapAndCheck(String source, String chunks, String generation, Map<String, Object> report) throws IOException {
        assertEquals(report.toString(), "complete", generationsOf(source).get(generation).get("state"));
        Map<String, Object> swapped = call("POST", "/_plugins/_strata/_swap?index=" + source + "&generation=2");
        assertEquals(swapped.toString(), generation, swapped.get("serving"));
        Map<String, Object> reconcile = call("POST", "/_plugins/_strata/_reconcile?index=" + source + "&dry_run=true");
        for (String drift : List.of("missing", "stale", "duplicates", "orphans", "config_drift")) {
            assertEquals(drift + ": " + reconcile, 0, ((Number) reconcile.get(drift)).intValue());
        }
        int parents = 0;
        int allTexts = 0;
        for (int i = 0; i < DOCS; i++) {
            List<Object> expected = cutByChunkApi(text(i), STRATEGY, GRANULARITIES);
            parents += expected.size();
            for (Object p : expected) {
                allTexts += 1 + ((List<Object>) ((List<Object>) p).get(4)).size(); // the parent's text and each child's
            }
            assertEquals("chunks of " + source + "/d" + i, expected, chunkShape(chunksOf(chunks, "d" + i)));
        }
        assertEquals(parents, count(chunks));
        // the resumed build embedded and reused fewer texts than a full build of the index would embed
        long texts = ((Number) report.get("texts_embedded")).longValue() + ((Number) report.get("vectors_reused")).longValue();
        assertTrue(report + " vs " + allTexts + " texts", texts < allTexts && ((Number) report.get("texts_embedded")).longValue() > 0);
    }

    private static void assertResumed(Map<String, Object> report, String generation, int doneAtKill) {
        assertEquals(report.toString(), generation, report.get("generation_index"));
        assertEquals(report.toString(), true, report.get("resumed"));
        int skipped = ((Number) report.get("documents_skipped")).intValue();
        assertTrue(report + " skipped at least the " + doneAtKill + " done before the kill", skipped >= doneAtKill && skipped < DOCS);
        assertEquals(report.toString(), DOCS, ((Number) report.get("documents")).intValue());
    }

    public void testNodeKilledMidRebuild_resumesByItself_orOnReIssueWhenItsConfigMoved_swapHasNoDrift() throws Exception {
        String cluster = System.getProperty("strata.it.cluster.name", "");
        assumeFalse("needs the cluster's name (strata.it.cluster.name) to kill a node", cluster.isBlank());
        Map<String, Object> nodes = (Map<String, Object>) call("GET", "/_nodes/http").get("nodes");
        assumeTrue("needs at least 2 nodes", nodes.size() >= 2);
        long started = System.nanoTime();

        String a = "rk-a";
        String b = "rk-b";
        String chunksA = a + "-chunks";
        String chunksB = b + "-chunks";
        source(a, a, chunksA);
        source(b, b, chunksB);
        String uuidB = uuidOf(b);

        Victim v = victim(nodes, getClusterHosts());
        String victim = v.id();
        int victimPort = v.port();
        int victimIndex = v.index();
        boolean killed = false;
        try (RestClient onVictim = buildClient(restClientSettings(), new HttpHost[] { new HttpHost("http", "127.0.0.1", victimPort) })) {
            Map<String, String> tasks = new LinkedHashMap<>();
            for (String source : List.of(a, b)) {
                String task = (String) entityAsMap(onVictim.performRequest(new Request("POST",
                    "/_plugins/_strata/_rebuild?index=" + source + "&requests_per_second=25&wait_for_completion=false"))).get("task");
                assertTrue(task + " runs on " + victim, task.startsWith(victim + ":"));
                tasks.put(source, task);
            }
            long deadline = System.nanoTime() + 120_000_000_000L;
            Map<String, Object> statusA = statusOf(onVictim, tasks.get(a));
            Map<String, Object> statusB = statusOf(onVictim, tasks.get(b));
            while ((done(statusA) < AT_KILL || done(statusB) < AT_KILL) && System.nanoTime() < deadline) {
                Thread.sleep(50);
                statusA = statusOf(onVictim, tasks.get(a));
                statusB = statusOf(onVictim, tasks.get(b));
            }
            String generationA = (String) statusA.get("generation_index");
            String generationB = (String) statusB.get("generation_index");
            assertEquals(chunksA + "-g2", generationA);
            assertEquals(chunksB + "-g2", generationB);

            // while it runs, a re-issue (on either node) starts nothing: a 409 naming the task
            ResponseException twice = callFailing("POST", "/_plugins/_strata/_rebuild?index=" + a, null);
            assertEquals(twice.getMessage(), 409, twice.getResponse().getStatusLine().getStatusCode());
            assertTrue(twice.getMessage(), twice.getMessage().contains("[" + tasks.get(a) + "]"));
            // B's pipeline moves to another config; its live build keeps the config it started with
            putPipeline(b, pipelineJson(chunksB, 30, true));

            int doneAtKillA = done(statusOf(onVictim, tasks.get(a)));
            int doneAtKillB = done(statusOf(onVictim, tasks.get(b)));
            node("kill", cluster, victimIndex);
            killed = true;
            assertTrue(doneAtKillA + " / " + doneAtKillB, doneAtKillA < DOCS && doneAtKillB < DOCS);
            call("GET", "/_cluster/health?wait_for_nodes=" + (nodes.size() - 1) + "&timeout=60s");

            // A: nobody re-issues; the surviving node resumes it, skipping what was complete
            Map<String, Object> reportA = automaticResume(a, generationA);
            assertResumed(reportA, generationA, doneAtKillA);

            // B: its automatic resume is refused (another config now): it ends, and the generation stays, interrupted
            long until = System.nanoTime() + 90_000_000_000L;
            while (persistentTasks().contains("strata-rebuild-" + uuidB) && System.nanoTime() < until) {
                Thread.sleep(200);
            }
            assertFalse("the automatic resume of " + b + " still registered: " + persistentTasks(),
                persistentTasks().contains("strata-rebuild-" + uuidB));
            Map<String, Object> listed = generationsOf(b).get(generationB);
            assertNotNull(generationsOf(b).toString(), listed);
            assertEquals(listed.toString(), "interrupted", listed.get("state"));
            // the caller's re-issue under the other config: the 400 naming it and what to do
            ResponseException other = callFailing("POST", "/_plugins/_strata/_rebuild?index=" + b, null);
            assertEquals(other.getMessage(), 400, other.getResponse().getStatusLine().getStatusCode());
            assertTrue(other.getMessage(), other.getMessage().contains("[" + generationB + "]") && other.getMessage().contains("DELETE"));
            // under the same config again, the re-issue resumes the same generation
            putPipeline(b, pipelineJson(chunksB, 20, true));
            Map<String, Object> reportB = call("POST", "/_plugins/_strata/_rebuild?index=" + b);
            assertResumed(reportB, generationB, doneAtKillB);
            assertFalse("a finished build leaves no persistent task: " + persistentTasks(),
                persistentTasks().stream().anyMatch(id -> id.startsWith("strata-rebuild-")));

            swapAndCheck(a, chunksA, generationA, reportA);
            swapAndCheck(b, chunksB, generationB, reportB);
            logger.info("rebuild kill/resume took {} s (the node's restart after): {} documents each, {} / {} done before the kill, "
                + "{} / {} skipped", (System.nanoTime() - started) / 1_000_000_000L, DOCS, doneAtKillA, doneAtKillB,
                reportA.get("documents_skipped"), reportB.get("documents_skipped"));
        } finally {
            if (killed) { // the node back for the ITs after this one
                node("restart", cluster, victimIndex);
                call("GET", "/_cluster/health?wait_for_nodes=" + nodes.size() + "&wait_for_status=green&timeout=120s");
            }
        }
    }
}
