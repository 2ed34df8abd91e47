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
 * The node running a {@code _rebuild} is killed (SIGKILL, {@code bin/strata-node kill}) after it built part of the
 * generation: the generation stays, listed as {@code interrupted}; a re-issue under another config is a 400 naming both; a
 * re-issue under the same config on a surviving node resumes it (same generation, the documents already complete skipped,
 * fewer texts embedded than the whole index has); then {@code _swap} and {@code _reconcile?dry_run=true} find no drift.
 * Oracle: {@code _chunk} of every stored text under the new config, against the chunks the swapped-in generation serves.
 *
 * <p>Needs the cluster's name ({@code strata.it.cluster.name}, which {@code bin/strata-test} passes) to kill and restart a
 * node, and at least 2 nodes; the victim is a node that is not the elected cluster manager, so the cluster keeps a quorum
 * (with 3 nodes, any 2 of them).
 */
@SuppressWarnings("unchecked")
public class RebuildKillIT extends StrataRestTestCase {
    private static final Map<String, Object> STRATEGY = Map.of("type", "recursive", "max_words", 20);
    private static final List<Double> GRANULARITIES = List.of(0.5);
    private static final int DOCS = 300;

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

    private static Map<String, Map<String, Object>> generationsOf(String source) throws IOException {
        Map<String, Map<String, Object>> out = new LinkedHashMap<>();
        for (Map<String, Object> g : (List<Map<String, Object>>) call("GET", "/_plugins/_strata/generations?index=" + source)
            .get("generations")) {
            out.put((String) g.get("index"), g);
        }
        return out;
    }

    /** The texts a full embedding of {@code cut} (one of {@link #cutByChunkApi}) embeds: each parent's and each child's. */
    private static int texts(List<Object> cut) {
        int n = 0;
        for (Object p : cut) {
            n += 1 + ((List<Object>) ((List<Object>) p).get(4)).size();
        }
        return n;
    }

    public void testNodeKilledMidRebuild_reIssueResumesTheSameGeneration_swapHasNoDrift() throws Exception {
        String cluster = System.getProperty("strata.it.cluster.name", "");
        assumeFalse("needs the cluster's name (strata.it.cluster.name) to kill a node", cluster.isBlank());
        Map<String, Object> nodes = (Map<String, Object>) call("GET", "/_nodes/http").get("nodes");
        assumeTrue("needs at least 2 nodes", nodes.size() >= 2);
        long started = System.nanoTime();

        String source = "rk-src";
        String chunks = source + "-chunks";
        putPipeline("rk", pipelineJson(chunks, 40, false)); // ingested without vectors: quicker
        call("PUT", "/" + source, "{\"settings\": {\"index.number_of_shards\": 2, \"index.number_of_replicas\": 1, "
            + "\"index.default_pipeline\": \"rk\"}}");
        for (int from = 0; from < DOCS; from += 100) {
            Map<String, Map<String, Object>> docs = new LinkedHashMap<>();
            for (int i = from; i < from + 100; i++) {
                docs.put("d" + i, Map.of("body", text(i)));
            }
            assertEquals(false, bulk(source, "rk", docs).get("errors"));
        }
        call("GET", "/_cluster/health/" + source + "?wait_for_status=green&timeout=60s");
        // θ changes, and vectors come in: the rebuild builds the new config, embedding what it writes
        putPipeline("rk", pipelineJson(chunks, 20, true));

        // the victim: a node that is not the elected cluster manager; its index in bin/strata-node is its HTTP port's offset
        String manager = (String) ((List<Map<String, Object>>) (List<?>) entityAsList(client().performRequest(
            new Request("GET", "/_cat/cluster_manager?format=json")))).get(0).get("id");
        int base = getClusterHosts().stream().mapToInt(HttpHost::getPort).min().orElseThrow();
        String victim = null;
        int victimPort = -1;
        String survivorId = null;
        for (Map.Entry<String, Object> n : nodes.entrySet()) {
            String address = (String) ((Map<String, Object>) ((Map<String, Object>) n.getValue()).get("http")).get("publish_address");
            int port = Integer.parseInt(address.substring(address.lastIndexOf(':') + 1));
            if (victim == null && !n.getKey().startsWith(manager)) {
                victim = n.getKey();
                victimPort = port;
            } else if (survivorId == null) {
                survivorId = n.getKey();
            }
        }
        assertNotNull(nodes.toString(), victim);
        int victimIndex = victimPort - base;
        boolean killed = false;
        try (RestClient onVictim = buildClient(restClientSettings(), new HttpHost[] { new HttpHost("http", "127.0.0.1", victimPort) })) {
            Map<String, Object> started1 = entityAsMap(onVictim.performRequest(new Request("POST",
                "/_plugins/_strata/_rebuild?index=" + source + "&requests_per_second=25&wait_for_completion=false")));
            String task = (String) started1.get("task");
            assertTrue(task + " runs on " + victim, task.startsWith(victim + ":"));
            long deadline = System.nanoTime() + 120_000_000_000L;
            Map<String, Object> status = statusOf(onVictim, task);
            while (done(status) < 100 && System.nanoTime() < deadline) {
                Thread.sleep(50);
                status = statusOf(onVictim, task);
            }
            int doneAtKill = done(status);
            assertTrue(status.toString(), doneAtKill >= 100 && doneAtKill < DOCS);
            String generation = (String) status.get("generation_index");
            assertEquals(chunks + "-g2", generation);

            // while it runs, a re-issue (on either node) starts nothing: a 409 naming the task
            ResponseException twice = callFailing("POST", "/_plugins/_strata/_rebuild?index=" + source, null);
            assertEquals(twice.getMessage(), 409, twice.getResponse().getStatusLine().getStatusCode());
            assertTrue(twice.getMessage(), twice.getMessage().contains("[" + task + "]"));

            node("kill", cluster, victimIndex);
            killed = true;
            call("GET", "/_cluster/health?wait_for_nodes=" + (nodes.size() - 1) + "&wait_for_status=yellow&timeout=60s");

            // the unfinished generation stays, listed as interrupted
            Map<String, Object> listed = generationsOf(source).get(generation);
            assertNotNull(generationsOf(source).toString(), listed);
            assertEquals(listed.toString(), "interrupted", listed.get("state"));

            // under another config: a 400 naming both configs and what to do
            putPipeline("rk", pipelineJson(chunks, 30, true));
            ResponseException other = callFailing("POST", "/_plugins/_strata/_rebuild?index=" + source, null);
            assertEquals(other.getMessage(), 400, other.getResponse().getStatusLine().getStatusCode());
            assertTrue(other.getMessage(), other.getMessage().contains("[" + generation + "]") && other.getMessage().contains("DELETE"));
            putPipeline("rk", pipelineJson(chunks, 20, true));

            // the same config again: it resumes the same generation, skipping the documents already complete
            Map<String, Object> report = call("POST", "/_plugins/_strata/_rebuild?index=" + source);
            assertEquals(report.toString(), generation, report.get("generation_index"));
            assertEquals(report.toString(), true, report.get("resumed"));
            int skipped = ((Number) report.get("documents_skipped")).intValue();
            assertTrue(report + " skipped at least the " + doneAtKill + " done before the kill", skipped >= doneAtKill && skipped < DOCS);
            assertEquals(report.toString(), DOCS, ((Number) report.get("documents")).intValue());
            assertEquals(report.toString(), "complete", generationsOf(source).get(generation).get("state"));

            Map<String, Object> swapped = call("POST", "/_plugins/_strata/_swap?index=" + source + "&generation=2");
            assertEquals(swapped.toString(), generation, swapped.get("serving"));
            Map<String, Object> reconcile = call("POST", "/_plugins/_strata/_reconcile?index=" + source + "&dry_run=true");
            for (String drift : List.of("missing", "stale", "duplicates", "orphans", "config_drift")) {
                assertEquals(drift + ": " + reconcile, 0, ((Number) reconcile.get(drift)).intValue());
            }

            // the oracle: every stored text's _chunk under the new config is what the name serves; the texts a full
            // rebuild embeds are more than the resumed one embedded and reused
            int parents = 0;
            int allTexts = 0;
            for (int i = 0; i < DOCS; i++) {
                List<Object> expected = cutByChunkApi(text(i), STRATEGY, GRANULARITIES);
                parents += expected.size();
                allTexts += texts(expected);
                assertEquals("chunks of d" + i, expected, chunkShape(chunksOf(chunks, "d" + i)));
            }
            assertEquals(parents, count(chunks));
            long resumedTexts = ((Number) report.get("texts_embedded")).longValue() + ((Number) report.get("vectors_reused")).longValue();
            assertTrue(report + " vs " + allTexts + " texts", resumedTexts < allTexts && ((Number) report.get("texts_embedded")).longValue() > 0);
            logger.info("rebuild kill/resume took {} s (the node's restart after): {} documents, {} done before the kill, {} skipped",
                (System.nanoTime() - started) / 1_000_000_000L, DOCS, doneAtKill, skipped);
        } finally {
            if (killed) { // the node back for the ITs after this one
                node("restart", cluster, victimIndex);
                call("GET", "/_cluster/health?wait_for_nodes=" + nodes.size() + "&wait_for_status=green&timeout=120s");
            }
        }
    }
}
