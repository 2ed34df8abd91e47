package io.strata.it.secured;

import io.strata.it.RebuildKillIT;
import org.apache.hc.core5.http.HttpHost;
import org.opensearch.client.Request;
import org.opensearch.client.RequestOptions;
import org.opensearch.client.RestClient;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The automatic resume of a {@code _rebuild} whose node was killed runs with the roles its caller had, never the node's, on
 * the real security plugin. Two users each rebuild a source on the node that is then killed (SIGKILL). User A's role is
 * intact: the surviving node resumes A's build by itself and it equals the oracle ({@code _chunk} of every stored text
 * under the new config, after {@code _swap}; {@code _reconcile?dry_run} finds nothing). User B's role lost
 * {@code indices:admin/strata/rebuild} on the source while the build ran (the live build never asks for it again): the
 * automatic resume is refused, its persistent task ends, the generation stays {@code interrupted} with nothing more
 * written (as the node it would have been allowed); once the role has it back, B's re-issue resumes it.
 *
 * <p>Needs the secured cluster's name ({@code strata.it.cluster.name}) and at least 2 nodes.
 */
@SuppressWarnings("unchecked")
public class SecuredRebuildResumeIT extends SecuredRestTestCase {
    private static final int DOCS = 150;
    private static final int AT_KILL = 40;
    private static final Map<String, Object> STRATEGY = Map.of("type", "recursive", "max_words", 20);
    private static final List<String> CLUSTER = List.of("indices:data/write/bulk", "indices:data/read/mget",
        "indices:data/read/msearch");
    private static final List<String> READ_SOURCE = List.of("read", "indices:admin/refresh*", "indices:monitor/stats");
    private static final List<String> ON_GENERATIONS = List.of("crud", "create_index", "indices:admin/refresh*",
        "indices:admin/mapping/put", "indices:admin/delete");

    private static String pipelineJson(String target, int maxWords) {
        return "{\"field\": \"body\", \"target_index\": \"" + target + "\", \"embed\": false, "
            + "\"strategy\": {\"type\": \"recursive\", \"max_words\": " + maxWords + "}, \"granularities\": [0.5]}";
    }

    private static String text(int i) {
        return "Letter " + i + " from Randalls: Mrs Weston sends her love. The ball at the Crown was a success, though the room was "
            + "cold. Miss Bates talked of Jane Fairfax, of her letters, and of the baked apples that Mr Woodhouse would not eat.";
    }

    /**
     * The user (and role) of {@code source}: {@code source}, with or without the right to run {@code _rebuild} on it, and its
     * chunk indices. Not named as the index: the demo configuration's {@code own_index} role gives every user all rights on
     * the index of the user's own name.
     */
    private static String userOf(String source) {
        return source + "-user";
    }

    /** Role {@link #userOf} {@code source} on {@code source} (with or without the right to run {@code _rebuild}) and its chunk indices. */
    private static void putRebuilder(String source, boolean mayRebuild) throws IOException {
        List<String> onSource = new java.util.ArrayList<>(READ_SOURCE);
        if (mayRebuild) {
            onSource.add("indices:admin/strata/rebuild");
        }
        putRole(userOf(source), CLUSTER, List.of(indexPermission(List.of(source), onSource),
            indexPermission(List.of(source + "-chunks*"), ON_GENERATIONS)));
    }

    private static int done(RestClient client, String task) throws IOException {
        Map<String, Object> t = entityAsMap(client.performRequest(new Request("GET", "/_tasks/" + task)));
        Map<String, Object> status = (Map<String, Object>) ((Map<String, Object>) t.get("task")).get("status");
        return status == null || !(status.get("done") instanceof Number n) ? 0 : n.intValue();
    }

    private static void node(String verb, String cluster, int i) throws Exception {
        Process p = new ProcessBuilder("bin/strata-node", verb, "--name", cluster, "--node", Integer.toString(i)).inheritIO().start();
        assertTrue("bin/strata-node " + verb + " did not end", p.waitFor(480, TimeUnit.SECONDS));
        assertEquals("bin/strata-node " + verb + " --node " + i, 0, p.exitValue());
    }

    public void testKilledRebuild_resumesWithTheCallersRoles_refusedWhenTheyNoLongerAllowIt() throws Exception {
        String cluster = System.getProperty("strata.it.cluster.name", "");
        assumeFalse("needs the cluster's name (strata.it.cluster.name) to kill a node", cluster.isBlank());
        Map<String, Object> nodes = (Map<String, Object>) call("GET", "/_nodes/http").get("nodes");
        assumeTrue("needs at least 2 nodes", nodes.size() >= 2);

        List<String> sources = List.of("sec-rr-a", "sec-rr-b");
        for (String source : sources) {
            putPipeline(source, pipelineJson(source + "-chunks", 40));
            call("PUT", "/" + source, "{\"settings\": {\"index.number_of_shards\": 2, \"index.number_of_replicas\": 1, "
                + "\"index.default_pipeline\": \"" + source + "\"}}");
            Map<String, Map<String, Object>> docs = new LinkedHashMap<>();
            for (int i = 0; i < DOCS; i++) {
                docs.put("d" + i, Map.of("body", text(i)));
            }
            assertEquals(false, bulk(source, source, docs).get("errors"));
            call("GET", "/_cluster/health/" + source + "?wait_for_status=green&timeout=60s");
            putPipeline(source, pipelineJson(source + "-chunks", 20));
            putRebuilder(source, true);
            putUser(userOf(source), userOf(source));
        }
        String a = sources.get(0);
        String b = sources.get(1);
        String uuidB = RebuildKillIT.uuidOf(b);

        RebuildKillIT.Victim v = RebuildKillIT.victim(nodes, getClusterHosts());
        String victim = v.id();
        int victimPort = v.port();
        int victimIndex = v.index();
        boolean killed = false;
        try (RestClient onVictim = buildClient(restClientSettings(), new HttpHost[] { new HttpHost("https", "127.0.0.1", victimPort) })) {
            Map<String, String> tasks = new LinkedHashMap<>();
            for (String source : sources) { // each as its own user, on the victim
                Request rebuild = new Request("POST", "/_plugins/_strata/_rebuild?index=" + source
                    + "&requests_per_second=20&wait_for_completion=false");
                rebuild.setOptions(RequestOptions.DEFAULT.toBuilder().addHeader("Authorization", "Basic " + Base64.getEncoder()
                    .encodeToString((userOf(source) + ":" + USER_PASSWORD).getBytes(StandardCharsets.UTF_8))));
                String task = (String) entityAsMap(onVictim.performRequest(rebuild)).get("task");
                assertTrue(task + " runs on " + victim, task.startsWith(victim + ":"));
                tasks.put(source, task);
            }
            long deadline = System.nanoTime() + 120_000_000_000L;
            while ((done(onVictim, tasks.get(a)) < AT_KILL || done(onVictim, tasks.get(b)) < AT_KILL) && System.nanoTime() < deadline) {
                Thread.sleep(50);
            }
            // B's role no longer allows _rebuild of its source; the live build goes on (it does not ask again)
            putRebuilder(b, false);
            int doneAtKillA = done(onVictim, tasks.get(a));
            int doneAtKillB = done(onVictim, tasks.get(b));
            node("kill", cluster, victimIndex);
            killed = true;
            assertTrue(doneAtKillA + " / " + doneAtKillB, doneAtKillA < DOCS && doneAtKillB < DOCS);
            call("GET", "/_cluster/health?wait_for_nodes=" + (nodes.size() - 1) + "&timeout=60s");

            // A: resumed by itself, with A's roles, complete
            String generationA = a + "-chunks-g2";
            Map<String, Object> reportA = RebuildKillIT.automaticResume(a, generationA);
            assertEquals(reportA.toString(), true, reportA.get("resumed"));
            int skipped = ((Number) reportA.get("documents_skipped")).intValue();
            assertTrue(reportA + " skipped at least " + doneAtKillA, skipped >= doneAtKillA && skipped < DOCS);
            assertEquals(reportA.toString(), DOCS, ((Number) reportA.get("documents")).intValue());

            // B: refused with B's roles (the node's would have let it run): the task ends, the generation stays interrupted
            String generationB = b + "-chunks-g2";
            long until = System.nanoTime() + 90_000_000_000L;
            while (RebuildKillIT.persistentTasks().contains("strata-rebuild-" + uuidB) && System.nanoTime() < until) {
                Thread.sleep(200);
            }
            assertFalse(RebuildKillIT.persistentTasks().toString(), RebuildKillIT.persistentTasks().contains("strata-rebuild-" + uuidB));
            refresh(generationB);
            int chunksAfterRefusal = count(generationB);
            assertEquals(RebuildKillIT.generationsOf(b).toString(), "interrupted", RebuildKillIT.generationsOf(b).get(generationB).get("state"));
            Thread.sleep(2000);
            refresh(generationB);
            assertEquals("nothing written after the refusal", chunksAfterRefusal, count(generationB));
            assertEquals("interrupted", RebuildKillIT.generationsOf(b).get(generationB).get("state"));

            // the role has it back: B's re-issue resumes the same generation
            putRebuilder(b, true);
            var reissued = as(userOf(b), "POST", "/_plugins/_strata/_rebuild?index=" + b, null);
            assertEquals(bodyOf(reissued), 200, status(reissued));
            Map<String, Object> reportB = entityAsMap(reissued);
            assertEquals(reportB.toString(), generationB, reportB.get("generation_index"));
            assertTrue(reportB.toString(), ((Number) reportB.get("documents_skipped")).intValue() >= doneAtKillB);

            for (String source : sources) { // the oracle, for both
                Map<String, Object> swapped = call("POST", "/_plugins/_strata/_swap?index=" + source + "&generation=2");
                assertEquals(swapped.toString(), source + "-chunks-g2", swapped.get("serving"));
                Map<String, Object> reconcile = call("POST", "/_plugins/_strata/_reconcile?index=" + source + "&dry_run=true");
                for (String drift : List.of("missing", "stale", "duplicates", "orphans", "config_drift")) {
                    assertEquals(drift + ": " + reconcile, 0, ((Number) reconcile.get(drift)).intValue());
                }
                for (int i = 0; i < DOCS; i++) {
                    assertEquals(source + "/d" + i, cutByChunkApi(text(i), STRATEGY, List.of(0.5)),
                        chunkShape(chunksOf(source + "-chunks", "d" + i)));
                }
            }
        } finally {
            if (killed) {
                node("restart", cluster, victimIndex);
                call("GET", "/_cluster/health?wait_for_nodes=" + nodes.size() + "&wait_for_status=green&timeout=120s");
            }
        }
    }
}
