package io.strata.it;

import org.opensearch.client.ResponseException;

import java.util.List;
import java.util.Map;

/** {@code POST _plugins/_strata/_chunk} shows what a pipeline would write, with exact offsets, and writes nothing. */
@SuppressWarnings("unchecked")
public class ChunkPreviewIT extends StrataRestTestCase {
    private static final String PATH = "/_plugins/_strata/_chunk";

    public void testPreview_recursive_returnsParentsAndChildrenWithExactOffsets() throws Exception {
        String text = emmaChapters().values().iterator().next();
        Map<String, Object> r = call("POST", PATH, json(Map.of("text", text,
            "strategy", Map.of("type", "recursive", "max_words", 120), "granularities", List.of(0.5))));
        assertEquals("recursive", r.get("strategy"));
        assertEquals(120, r.get("max_words"));
        List<Map<String, Object>> parents = (List<Map<String, Object>>) r.get("parents");
        assertTrue("a chapter gives several parents at θ = 120", parents.size() > 3);
        int previousEnd = 0;
        for (Map<String, Object> p : parents) {
            int start = (Integer) p.get("start");
            int end = (Integer) p.get("end");
            assertEquals(text.substring(start, end), p.get("text"));
            assertTrue("parents are ordered and disjoint", start >= previousEnd);
            assertTrue("parents respect θ", (Integer) p.get("words") <= 120);
            previousEnd = end;
            List<Map<String, Object>> children = (List<Map<String, Object>>) p.get("children");
            assertFalse(children.isEmpty());
            for (Map<String, Object> c : children) {
                assertEquals(1, c.get("level"));
                assertTrue((Integer) c.get("words") <= 60);
                assertEquals(text.substring((Integer) c.get("start"), (Integer) c.get("end")), c.get("text"));
            }
        }
        assertEquals("rule-based strategies have no model evidence", List.of(), r.get("evidence"));
    }

    /**
     * Chunking up to a million characters is CPU work: it runs on the node's {@code analyze} pool (as {@code _analyze} does),
     * not on the HTTP thread that received the request. Each node's pool counts the preview it ran.
     */
    public void testPreview_runsOnTheAnalyzePool_notOnTheNetworkThread() throws Exception {
        long before = analyzeTasksCompleted();
        call("POST", PATH, json(Map.of("text", emmaChapters().values().iterator().next(), "strategy", Map.of("type", "recursive"))));
        assertBusy(() -> assertEquals("the preview ran as one analyze-pool task", before + 1, analyzeTasksCompleted()));
    }

    /** The {@code analyze} thread pool's completed tasks, summed over the nodes. */
    private static long analyzeTasksCompleted() throws Exception {
        long sum = 0;
        for (Object node : ((Map<String, Object>) call("GET", "/_nodes/stats/thread_pool").get("nodes")).values()) {
            Map<String, Object> pools = (Map<String, Object>) ((Map<String, Object>) node).get("thread_pool");
            sum += ((Number) ((Map<String, Object>) pools.get("analyze")).get("completed")).longValue();
        }
        return sum;
    }

    public void testPreview_badInput_gets400NamingTheField() {
        assertBad("{\"strategy\": {\"type\": \"recursive\"}}", "[_chunk] [text] must be a non-empty string");
        assertBad("{\"text\": \"Some text.\", \"colour\": 1}", "[_chunk] unknown field [colour]");
        assertBad("{\"text\": \"Some text.\", \"strategy\": {\"type\": \"magic\"}}", "unknown strategy [magic]");
        assertBad("{\"text\": \"Some text.\", \"strategy\": {\"type\": \"recursive\", \"max_words\": 0}}",
            "[strategy.max_words] must be an integer in [1, 8192]");
        assertBad("{\"text\": \"Some text.\", \"granularities\": [0.2, 0.4]}", "strictly decreasing");
        assertBad("{\"text\": \"Some text.\", \"strategy\": null}", "[strategy] must be an object");
        assertBad("{\"text\": \"Some text.\", \"model\": \"no-such-model\"}", "unknown model [no-such-model]");
        // (the response body escapes the quotes of the usage it quotes)
        assertBad("[\"not an object\"]", "\"[_chunk] needs a body: {\\\"text\\\": ");
        assertBad("{\"text\": ", "\"granularities\\\": [...]}; the body is not valid: ");
    }

    private static void assertBad(String body, String expected) {
        ResponseException e = callFailing("POST", PATH, body);
        assertEquals(e.getMessage(), 400, e.getResponse().getStatusLine().getStatusCode());
        assertTrue("expected [" + expected + "] in " + e.getMessage(), e.getMessage().contains(expected));
    }
}
