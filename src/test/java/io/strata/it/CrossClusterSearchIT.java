package io.strata.it;

import org.opensearch.client.ResponseException;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Cross-cluster search, the way applications spread over clusters call it ({@code cluster:index}), on the test cluster
 * registered as a remote cluster of itself: OpenSearch then runs the full remote path (the request forwarded whole over
 * the transport layer to the "remote" cluster's coordinator, hits named {@code alias:index}). Oracle: the same search of
 * the local name — a remote cluster's parents and scores are the ones that cluster ranks.
 */
public class CrossClusterSearchIT extends StrataRestTestCase {
    private static final String REMOTE = "strata_self";
    private static final String CHUNKS = "ccs-docs-chunks";
    private static final String QUESTION = "how did Mr. Woodhouse feel about Miss Taylor's marriage?";
    private static boolean ingested;

    @Override
    protected boolean preserveIndicesUponCompletion() {
        return true;
    }

    /** Chapters ingested once; the remote registered for every test (the framework wipes cluster settings between tests). */
    @SuppressWarnings("unchecked")
    private static synchronized void setUpClusters() throws Exception {
        if (!ingested) {
            putPipeline("ccs", """
                {"field": "body", "target_index": "ccs-docs-chunks", "strategy": {"type": "recursive", "max_words": 120}}""");
            call("PUT", "/ccs-docs", "{\"settings\": {\"number_of_shards\": 2}}");
            List<String> texts = new ArrayList<>(emmaChapters().values()).subList(0, 3);
            for (int i = 0; i < texts.size(); i++) {
                assertEquals(false, bulk("ccs-docs", "ccs", Map.of("ch" + i, Map.of("body", texts.get(i)))).get("errors"));
            }
            refresh(CHUNKS);
            ingested = true;
        }
        Map<String, Object> nodes = (Map<String, Object>) call("GET", "/_nodes/transport").get("nodes");
        String address = (String) ((Map<String, Object>) ((Map<String, Object>) nodes.values().iterator().next()).get("transport"))
            .get("publish_address");
        call("PUT", "/_cluster/settings", json(Map.of("persistent", Map.of("cluster.remote." + REMOTE + ".seeds", List.of(address)))));
        assertBusy(() -> assertEquals(true, ((Map<String, Object>) call("GET", "/_remote/info").get(REMOTE)).get("connected")));
    }

    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> hits(Map<String, Object> response) {
        return (List<Map<String, Object>>) ((Map<String, Object>) response.get("hits")).get("hits");
    }

    private static List<List<Object>> idsAndScores(Map<String, Object> response) {
        return hits(response).stream().map(h -> List.of(h.get("_id"), h.get("_score"))).toList();
    }

    public void testASearchOfOneRemoteCluster_isPlannedByThatCluster_withTheParentsAndScoresItGivesLocally() throws Exception {
        setUpClusters();
        for (String body : List.of(
            "{\"size\": 10, \"query\": {\"multi_granular\": {\"query_text\": \"" + QUESTION + "\", \"k\": 10}}}",
            "{\"size\": 10, \"query\": {\"multi_granular\": {\"query_text\": \"" + QUESTION + "\", \"k\": 10, \"mode\": \"dense\"}}}",
            "{\"size\": 10, \"query\": {\"multi_granular\": {\"match\": \"Miss Taylor wedding\", \"k\": 10}}}",
            "{\"size\": 10, \"query\": {\"bool\": {\"must\": [{\"multi_granular\": {\"query_text\": \"" + QUESTION + "\", \"k\": 5}}], "
                + "\"filter\": [{\"term\": {\"source_id\": \"ch1\"}}]}}}",
            "{\"size\": 4, \"from\": 3, \"query\": {\"multi_granular\": {\"query_text\": \"" + QUESTION + "\", \"k\": 10, "
                + "\"explain_child\": true}}}")) {
            Map<String, Object> local = call("POST", "/" + CHUNKS + "/_search", body);
            Map<String, Object> remote = call("POST", "/" + REMOTE + ":" + CHUNKS + "/_search", body);
            assertFalse(body, hits(local).isEmpty());
            assertSameAnswer(body, idsAndScores(local), idsAndScores(remote));
            for (Map<String, Object> hit : hits(remote)) {
                assertEquals(REMOTE + ":" + CHUNKS, hit.get("_index"));
            }
            if (body.contains("explain_child")) {
                assertEquals(hits(local).stream().map(h -> h.get("fields")).toList(), hits(remote).stream().map(h -> h.get("fields")).toList());
            }
        }
    }

    public void testSeveralClusters_orARemoteSearchNotForwardedWhole_areA400ThatSaysWhy() throws Exception {
        setUpClusters();
        String body = "{\"query\": {\"multi_granular\": {\"query_text\": \"" + QUESTION + "\", \"k\": 5}}}";
        ResponseException mixed = callFailing("POST", "/" + CHUNKS + "," + REMOTE + ":" + CHUNKS + "/_search", body);
        assertEquals(400, mixed.getResponse().getStatusLine().getStatusCode());
        assertTrue(mixed.getMessage(), mixed.getMessage().contains("one cluster at a time")
            && mixed.getMessage().contains("the local cluster and remote cluster [" + REMOTE + "]"));
        for (String params : List.of("ccs_minimize_roundtrips=false", "search_type=dfs_query_then_fetch")) {
            ResponseException e = callFailing("POST", "/" + REMOTE + ":" + CHUNKS + "/_search?" + params, body);
            assertEquals(params, 400, e.getResponse().getStatusLine().getStatusCode());
            assertTrue(e.getMessage(), e.getMessage().contains("remote cluster [" + REMOTE + "] is planned by that cluster")
                && e.getMessage().contains(params));
        }
    }

    @SuppressWarnings("unchecked")
    public void testStrataContextOverARemoteClustersHits_quotesThatClustersIndex_withTheTokenizerNamed() throws Exception {
        setUpClusters();
        call("PUT", "/_search/pipeline/ccs-ctx", "{\"response_processors\": [{\"strata_context\": {\"budget\": 256}}]}");
        String body = "{\"size\": 5, \"query\": {\"multi_granular\": {\"query_text\": \"" + QUESTION + "\", \"k\": 5, "
            + "\"explain_child\": true}}, \"ext\": {\"strata_context\": {\"tokenizer\": \"e5-small-v2-q\"}}}";
        Map<String, Object> local = call("POST", "/" + CHUNKS + "/_search?search_pipeline=ccs-ctx", body);
        Map<String, Object> remote = call("POST", "/" + REMOTE + ":" + CHUNKS + "/_search?search_pipeline=ccs-ctx", body);
        Map<String, Object> localContext = (Map<String, Object>) ((Map<String, Object>) local.get("ext")).get("strata_context");
        Map<String, Object> remoteContext = (Map<String, Object>) ((Map<String, Object>) remote.get("ext")).get("strata_context");
        List<Map<String, Object>> passages = (List<Map<String, Object>>) remoteContext.get("passages");
        assertFalse(passages.isEmpty());
        assertEquals(localContext.get("text"), remoteContext.get("text"));
        assertEquals(localContext.get("tokens"), remoteContext.get("tokens"));
        for (Map<String, Object> p : passages) {
            assertEquals(REMOTE + ":" + CHUNKS, p.get("index"));
        }
        // this node cannot read the remote chunk index's model: the tokenizer has to be named, not guessed from a local index
        ResponseException e = callFailing("POST", "/" + REMOTE + ":" + CHUNKS + "/_search?search_pipeline=ccs-ctx",
            body.replace(", \"ext\": {\"strata_context\": {\"tokenizer\": \"e5-small-v2-q\"}}", ""));
        assertEquals(400, e.getResponse().getStatusLine().getStatusCode());
        assertTrue(e.getMessage(), e.getMessage().contains("remote cluster [" + REMOTE + "]") && e.getMessage().contains("[tokenizer]"));
    }
}
