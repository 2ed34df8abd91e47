package io.strata.it;

import ai.djl.huggingface.tokenizers.HuggingFaceTokenizer;
import org.opensearch.client.ResponseException;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Parents larger than the embedding model's window (issue 46): LlamaIndex's hierarchy of 2,048 / 512 / 128 tokens on a
 * real node. Oracles computed here: the model's own tokenizer.json (sizes), the source chapters (offsets, coverage), the
 * stored chunk documents' vectors (a brute-force MAX against the query vector from {@code _embed}).
 */
@SuppressWarnings("unchecked")
public class LargeParentsIT extends StrataRestTestCase {
    private static final String MODEL = "e5-small-v2-q";
    private static final String QUESTION = "How did Mr. Woodhouse feel about Miss Taylor's marriage?";
    private static final String PIPELINE = """
        {"field": "body", "target_index": "big-chunks", "strategy": {"type": "recursive", "max_tokens": 2048},
         "granularities": [0.25, 0.0625]}""";
    private static HuggingFaceTokenizer tokenizer;
    private static List<String> chapters;

    @Override
    protected boolean preserveIndicesUponCompletion() {
        return true;
    }

    private static synchronized void ingest() throws Exception {
        if (chapters == null) {
            putPipeline("big", PIPELINE);
            List<String> all = new ArrayList<>(emmaChapters().values());
            for (int i = 0; i < all.size(); i++) { // one bulk per chapter: each well inside the client's time-out
                assertEquals(false, bulk("big-src", "big", Map.of("ch" + i, Map.of("body", all.get(i)))).get("errors"));
            }
            refresh("big-chunks");
            tokenizer = modelTokenizer(MODEL);
            chapters = all;
        }
        call("PUT", "/_search/pipeline/big-ctx", """
            {"response_processors": [{"strata_context": {"budget": 512}}]}""");
    }

    /** Tokens e5 is fed for a chunk: its prefix, text and special tokens, not truncated. */
    private static int fed(String text) {
        return tokenizer.encode("passage: " + text).getIds().length;
    }

    private static int alone(String text) {
        return tokenizer.encode(text, false, false).getIds().length;
    }

    private static List<Map<String, Object>> allChunks() throws Exception {
        Map<String, Object> r = call("POST", "/big-chunks/_search", "{\"size\": 1000, \"_source\": true, \"query\": {\"match_all\": {}}}");
        List<Map<String, Object>> out = new ArrayList<>();
        for (Object h : (List<Object>) ((Map<String, Object>) r.get("hits")).get("hits")) {
            Map<String, Object> hit = (Map<String, Object>) h;
            Map<String, Object> source = new LinkedHashMap<>((Map<String, Object>) hit.get("_source"));
            source.put("_id", hit.get("_id"));
            out.add(source);
        }
        return out;
    }

    private static List<Map<String, Object>> children(Map<String, Object> chunk) {
        return (List<Map<String, Object>>) chunk.get("children");
    }

    public void testLlamaIndexHierarchy_parentsAboveTheWindowAreStoredWholeWithoutAVector_childrenFitAndCoverThem() throws Exception {
        ingest();
        int whole = 0;
        int largest = 0;
        for (Map<String, Object> chunk : allChunks()) {
            String body = chapters.get(Integer.parseInt(((String) chunk.get("source_id")).substring(2)));
            String text = (String) chunk.get("text");
            int start = (Integer) chunk.get("start");
            int end = (Integer) chunk.get("end");
            assertEquals(body.substring(start, end), text);
            assertTrue(alone(text) + " tokens", alone(text) <= 2048);
            largest = Math.max(largest, alone(text));
            boolean ownVector = chunk.get("embedding") != null;
            assertEquals("a parent has its own vector exactly when the model reads it whole: " + fed(text) + " tokens",
                fed(text) <= 512, ownVector);
            assertEquals("the level-0 entry goes with the parent's own vector", ownVector,
                children(chunk).stream().anyMatch(c -> ((Number) c.get("level")).intValue() == 0));
            boolean[] covered = new boolean[end - start];
            for (Map<String, Object> child : children(chunk)) {
                if (child.get("text") == null) {
                    continue; // the level-0 entry: the parent's vector only
                }
                String childText = (String) child.get("text");
                int cs = (Integer) child.get("start");
                int ce = (Integer) child.get("end");
                assertEquals(body.substring(cs, ce), childText);
                assertTrue(cs >= start && ce <= end);
                assertTrue("child of " + fed(childText) + " tokens", fed(childText) <= 512);
                assertEquals(384, ((List<?>) child.get("embedding")).size());
                for (int i = cs; i < ce; i++) {
                    covered[i - start] = true;
                }
            }
            if (!ownVector) {
                whole++;
                for (int i = start; i < end; i++) {
                    assertTrue("character " + i + " of " + chunk.get("_id") + " is in no child",
                        covered[i - start] || Character.isWhitespace(body.charAt(i)));
                }
            }
        }
        assertTrue("parents kept whole above the window: " + whole, whole >= 3);
        assertTrue("parents of the hierarchy's size: " + largest, largest > 1500);
    }

    public void testDenseQuery_ranksLargeParentsByTheirBestChild_exactlyAsABruteForceMaxOverTheStoredVectors() throws Exception {
        ingest();
        Map<String, Object> e = call("POST", "/_plugins/_strata/_embed", json(Map.of("texts", List.of(QUESTION), "purpose", "query")));
        List<Number> q = (List<Number>) ((List<Object>) e.get("vectors")).get(0);
        Map<String, Double> exact = new LinkedHashMap<>();
        for (Map<String, Object> chunk : allChunks()) {
            double best = chunk.get("embedding") == null ? -1 : score(q, (List<Number>) chunk.get("embedding"));
            for (Map<String, Object> child : children(chunk)) {
                best = Math.max(best, score(q, (List<Number>) child.get("embedding")));
            }
            exact.put((String) chunk.get("_id"), best);
        }
        List<Map.Entry<String, Double>> expected = new ArrayList<>(exact.entrySet());
        expected.sort(Map.Entry.<String, Double>comparingByValue(Comparator.reverseOrder()));
        Map<String, Object> r = call("POST", "/big-chunks/_search", json(Map.of("size", 5, "query", Map.of("multi_granular",
            Map.of("query_text", QUESTION, "mode", "dense", "k", 5, "num_candidates", 1000, "explain_child", true)))));
        List<Map<String, Object>> hits = (List<Map<String, Object>>) ((Map<String, Object>) r.get("hits")).get("hits");
        assertEquals(5, hits.size());
        for (int i = 0; i < hits.size(); i++) {
            String id = (String) hits.get(i).get("_id");
            double got = ((Number) hits.get(i).get("_score")).doubleValue();
            assertEquals("rank " + i, expected.get(i).getValue(), got, 1e-4);
            assertEquals("score of " + id, exact.get(id), got, 1e-4);
            Map<String, Object> best = (Map<String, Object>) ((List<Object>) ((Map<String, Object>) hits.get(i).get("fields"))
                .get("strata_best_child")).get(0);
            Map<String, Object> source = (Map<String, Object>) hits.get(i).get("_source");
            if (source.get("embedding") == null) {
                assertTrue("a parent without a vector is scored by a child", ((Number) best.get("level")).intValue() > 0);
            }
        }
        assertTrue("the best parents include one kept whole above the window",
            hits.stream().anyMatch(h -> ((Map<String, Object>) h.get("_source")).get("embedding") == null));
    }

    private static double score(List<Number> q, List<Number> v) {
        double dot = 0;
        for (int i = 0; i < q.size(); i++) {
            dot += q.get(i).doubleValue() * v.get(i).doubleValue();
        }
        return (1 + dot) / 2; // unit vectors: Lucene's cosine score
    }

    public void testContext_packsPassagesInsideLargeParents_quotingTheSourceWithinTheBudget() throws Exception {
        ingest();
        Map<String, Object> r = call("POST", "/big-chunks/_search?search_pipeline=big-ctx", json(Map.of("size", 3,
            "_source", Map.of("excludes", List.of("embedding", "children.embedding")),
            "query", Map.of("multi_granular", Map.of("query_text", QUESTION, "k", 3, "explain_child", true)),
            "ext", Map.of("strata_context", Map.of("neighbours", false)))));
        List<Map<String, Object>> hits = (List<Map<String, Object>>) ((Map<String, Object>) r.get("hits")).get("hits");
        Map<String, Object> context = (Map<String, Object>) ((Map<String, Object>) r.get("ext")).get("strata_context");
        int tokens = (Integer) context.get("tokens");
        assertTrue(tokens + " tokens", tokens <= 512 && tokens > 256);
        assertEquals(tokens, alone((String) context.get("text")));
        List<Map<String, Object>> passages = (List<Map<String, Object>>) context.get("passages");
        assertFalse(passages.isEmpty());
        for (Map<String, Object> p : passages) {
            String body = chapters.get(Integer.parseInt(((String) p.get("source_id")).substring(2)));
            assertEquals(body.substring((Integer) p.get("start"), (Integer) p.get("end")), p.get("text"));
        }
        // the best hit's passage grows from its matched child inside its parent, which is far larger than the budget
        Map<String, Object> top = (Map<String, Object>) hits.get(0).get("_source");
        Map<String, Object> first = passages.get(0);
        assertTrue(((List<?>) first.get("hits")).contains(hits.get(0).get("_id")));
        assertTrue("the parent alone is above the budget: " + alone((String) top.get("text")), alone((String) top.get("text")) > 512);
        assertTrue((Integer) first.get("start") >= (Integer) top.get("start") && (Integer) first.get("end") <= (Integer) top.get("end"));
        Map<String, Object> matched = (Map<String, Object>) ((List<Object>) ((Map<String, Object>) hits.get(0).get("fields"))
            .get("strata_best_child")).get(0);
        assertTrue("the passage holds the matched child " + matched.get("start") + "-" + matched.get("end"),
            (Integer) first.get("start") <= (Integer) matched.get("start") && (Integer) matched.get("end") <= (Integer) first.get("end"));
        assertTrue("and grew past it", (Integer) first.get("end") - (Integer) first.get("start")
            > (Integer) matched.get("end") - (Integer) matched.get("start"));
    }

    public void testChunkPreview_showsParentsKeptWhole_andParentsMaxTokensAtTheWindowCutsThemAsBefore() throws Exception {
        ingest();
        String text = chapters.get(0);
        Map<String, Object> r = call("POST", "/_plugins/_strata/_chunk", json(Map.of("text", text,
            "strategy", Map.of("type", "recursive", "max_tokens", 2048), "granularities", List.of(0.25, 0.0625))));
        Map<String, Object> t = (Map<String, Object>) r.get("tokens");
        assertEquals(8192, t.get("max_parent_tokens"));
        assertEquals(0, t.get("truncated"));
        List<Map<String, Object>> parents = (List<Map<String, Object>>) r.get("parents");
        int whole = 0;
        int children = 0;
        for (Map<String, Object> p : parents) {
            assertEquals(fed((String) p.get("text")), p.get("tokens"));
            boolean above = fed((String) p.get("text")) > 512;
            assertEquals(above ? Boolean.FALSE : null, p.get("embedded"));
            assertNull(p.get("truncated"));
            whole += above ? 1 : 0;
            for (Map<String, Object> c : (List<Map<String, Object>>) p.get("children")) {
                assertTrue(fed((String) c.get("text")) <= 512);
                children++;
            }
        }
        assertTrue(whole >= 1);
        // what the pipeline stored for the same text: the same parents and children
        assertEquals(cutShape(parents), storedShape("ch0"));
        // limit_splits counts real cuts only: the 512-token children (517 as embedded) cut in two, no parent
        int splits = (Integer) t.get("limit_splits");
        assertTrue(splits + " cuts for " + children + " children", splits > 0 && splits < children);
        // the old behaviour: parents cut to the window, every one embedded
        Map<String, Object> old = call("POST", "/_plugins/_strata/_chunk", json(Map.of("text", text,
            "strategy", Map.of("type", "recursive", "max_tokens", 2048), "granularities", List.of(0.25, 0.0625),
            "parents", Map.of("max_tokens", 512))));
        List<Map<String, Object>> oldParents = (List<Map<String, Object>>) old.get("parents");
        assertTrue(oldParents.size() > parents.size());
        for (Map<String, Object> p : oldParents) {
            assertNull(p.get("embedded"));
            assertTrue(fed((String) p.get("text")) <= 512);
        }
    }

    private static List<Object> cutShape(List<Map<String, Object>> parents) {
        List<Object> out = new ArrayList<>();
        for (Map<String, Object> p : parents) {
            List<Object> cs = new ArrayList<>();
            for (Map<String, Object> c : (List<Map<String, Object>>) p.get("children")) {
                cs.add(List.of(c.get("level"), c.get("start"), c.get("end")));
            }
            out.add(List.of(p.get("start"), p.get("end"), cs));
        }
        return out;
    }

    private static List<Object> storedShape(String sourceId) throws Exception {
        List<Object> out = new ArrayList<>();
        for (Map<String, Object> p : chunksOf("big-chunks", sourceId)) {
            List<Object> cs = new ArrayList<>();
            for (Map<String, Object> c : children(p)) {
                if (((Number) c.get("level")).intValue() > 0) {
                    cs.add(List.of(c.get("level"), c.get("start"), c.get("end")));
                }
            }
            out.add(List.of(p.get("start"), p.get("end"), cs));
        }
        return out;
    }

    public void testParentsMaxTokens_outOfRange_isA400NamingTheFieldAndTheRange() throws Exception {
        ResponseException e = callFailing("PUT", "/_ingest/pipeline/big-bad", """
            {"processors": [{"multi_granular_chunking": {"field": "body", "target_index": "x", "parents": {"max_tokens": 0}}}]}""");
        assertEquals(400, e.getResponse().getStatusLine().getStatusCode());
        assertTrue(e.getMessage(), e.getMessage().contains("[parents.max_tokens] must be an integer in [1, 32768], got [0]"));
        e = callFailing("POST", "/_plugins/_strata/_chunk", """
            {"text": "a b c", "parents": {"max_words": 100}}""");
        assertEquals(400, e.getResponse().getStatusLine().getStatusCode());
        assertTrue(e.getMessage(), e.getMessage().contains("[parents.max_words] is not an option of [parents]; supported: [max_tokens, vector]"));
        e = callFailing("POST", "/_plugins/_strata/_chunk", """
            {"text": "a b c", "strategy": {"type": "recursive", "max_tokens": 40000}}""");
        assertEquals(400, e.getResponse().getStatusLine().getStatusCode());
        assertTrue(e.getMessage(), e.getMessage().contains("[strategy.max_tokens] must be an integer in [1, 32768], got [40000]"));
    }
}
