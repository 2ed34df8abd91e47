package io.strata.it;

import org.opensearch.client.ResponseException;

import java.util.List;
import java.util.Map;

/**
 * Late-chunked children ({@code children: {"embedding": "late"}}) on the real node: the same chapter through a separate-mode
 * and a late-mode pipeline; parents' vectors equal, children's unit length and different; a {@code multi_granular} query
 * over the late chunks returns parents; stored vectors are never reused across the modes.
 */
@SuppressWarnings("unchecked")
public class LateChunkingIT extends StrataRestTestCase {

    private static double dot(List<Number> a, List<Number> b) {
        double s = 0;
        for (int i = 0; i < a.size(); i++) {
            s += a.get(i).doubleValue() * b.get(i).doubleValue();
        }
        return s;
    }

    /**
     * θ 500 (parents above e5's 512 tokens have no vector of their own in either mode, their children are pooled from windows;
     * LateChunkingEmbedderTests covers the late windows).
     */
    private static String pipeline(String target, String embedding) {
        return "{\"field\": \"body\", \"target_index\": \"" + target + "\", \"strategy\": {\"type\": \"recursive\", \"max_words\": 500}"
            + (embedding == null ? "" : ", \"children\": {\"embedding\": \"" + embedding + "\"}") + "}";
    }

    private static String chapter() {
        return emmaChapters().values().iterator().next();
    }

    private static List<Number> childVector(Map<String, Object> chunk, int i) {
        return (List<Number>) ((List<Map<String, Object>>) chunk.get("children")).get(i).get("embedding");
    }

    public void testLate_parentVectorsEqualSeparateOnes_childVectorsUnitLengthAndDifferent_queryReturnsParents() throws Exception {
        putPipeline("sep", pipeline("sep-chunks", null));
        putPipeline("late", pipeline("late-chunks", "late"));
        call("PUT", "/sep-src/_doc/1?pipeline=sep&refresh=true", json(Map.of("body", chapter())));
        call("PUT", "/late-src/_doc/1?pipeline=late&refresh=true", json(Map.of("body", chapter())));
        List<Map<String, Object>> separate = chunksOf("sep-chunks", "1");
        List<Map<String, Object>> late = chunksOf("late-chunks", "1");
        assertEquals(separate.size(), late.size());
        assertTrue(late.size() >= 2);
        int children = 0;
        for (int p = 0; p < late.size(); p++) {
            Map<String, Object> s = separate.get(p);
            Map<String, Object> l = late.get(p);
            assertEquals(s.get("text"), l.get("text"));
            assertEquals("the parent's vector: the same pass, pooled as before", s.get("embedding"), l.get("embedding"));
            List<Map<String, Object>> lateChildren = (List<Map<String, Object>>) l.get("children");
            assertEquals(((List<?>) s.get("children")).size(), lateChildren.size());
            Map<Object, Long> perLevel = lateChildren.stream().collect(java.util.stream.Collectors.groupingBy(c -> c.get("level"),
                java.util.stream.Collectors.counting()));
            for (int c = 1; c < lateChildren.size(); c++) {
                List<Number> v = childVector(l, c);
                assertEquals(384, v.size());
                assertEquals(1.0, Math.sqrt(dot(v, v)), 1e-3);
                double cos = dot(v, childVector(s, c));
                assertTrue("child " + c + " of parent " + p + ": cos " + cos, cos > 0.5);
                // a level with one child holds the whole parent: pooled from the same tokens, it may equal the separate vector
                if (perLevel.get(lateChildren.get(c).get("level")) > 1) {
                    assertTrue("child " + c + " of parent " + p + " sees its parent: cos " + cos, cos < 0.9999);
                    children++;
                }
            }
        }
        assertTrue(children > late.size() * 2);

        Map<String, Object> r = call("POST", "/late-chunks/_search", json(Map.of("size", 3,
            "query", Map.of("multi_granular", Map.of("query_text", "Who did Miss Taylor marry?", "k", 3)))));
        List<Map<String, Object>> hits = (List<Map<String, Object>>) ((Map<String, Object>) r.get("hits")).get("hits");
        assertFalse(hits.isEmpty());
        for (Map<String, Object> hit : hits) {
            Map<String, Object> source = (Map<String, Object>) hit.get("_source");
            assertEquals("1", source.get("source_id"));
            assertTrue(((String) hit.get("_id")).startsWith("1:"));
        }
    }

    public void testStoredVectors_areNotReusedAcrossModes() throws Exception {
        putPipeline("mode-sep", pipeline("mode-chunks", null));
        putPipeline("mode-late", pipeline("mode-chunks", "late"));
        putPipeline("ref-sep", pipeline("ref-chunks", null));
        call("PUT", "/ref-src/_doc/1?pipeline=ref-sep&refresh=true", json(Map.of("body", chapter())));
        call("PUT", "/mode-src/_doc/1?pipeline=mode-late&refresh=true", json(Map.of("body", chapter())));
        List<Map<String, Object>> late = chunksOf("mode-chunks", "1");
        // the same text again, now separate: the late children must not be kept
        call("PUT", "/mode-src/_doc/1?pipeline=mode-sep&refresh=true", json(Map.of("body", chapter())));
        List<Map<String, Object>> separate = chunksOf("mode-chunks", "1");
        List<Map<String, Object>> reference = chunksOf("ref-chunks", "1");
        for (int p = 0; p < separate.size(); p++) {
            assertEquals(reference.get(p).get("children"), separate.get(p).get("children"));
            assertNotEquals(late.get(p).get("children"), separate.get(p).get("children"));
        }
    }

    public void testLate_withAClsModel_isA400NamingTheField() {
        ResponseException e = callFailing("PUT", "/_ingest/pipeline/late-bge", "{\"processors\": [{\"multi_granular_chunking\": "
            + "{\"field\": \"body\", \"target_index\": \"x\", \"model\": \"bge-small-en-v15-q\", \"children\": {\"embedding\": \"late\"}}}]}");
        assertEquals(400, e.getResponse().getStatusLine().getStatusCode());
        assertTrue(e.getMessage(), e.getMessage().contains("children.embedding") && e.getMessage().contains("pooling: cls"));
        ResponseException bad = callFailing("PUT", "/_ingest/pipeline/late-bad", "{\"processors\": [{\"multi_granular_chunking\": "
            + "{\"field\": \"body\", \"target_index\": \"x\", \"children\": {\"embedding\": \"sometimes\"}}}]}");
        assertEquals(400, bad.getResponse().getStatusLine().getStatusCode());
        assertTrue(bad.getMessage(), bad.getMessage().contains("[separate, late]"));
    }
}
