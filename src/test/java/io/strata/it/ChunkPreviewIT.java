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
            // a parent may have no child: one that would repeat it (also after a tail joined it) is not written
            for (Map<String, Object> c : children) {
                assertEquals(1, c.get("level"));
                // a child below a quarter of θ/2 joins a neighbour: at most that quarter more
                assertTrue(c.toString(), (Integer) c.get("words") < 60 * 1.25);
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
        // children, vectors, query_text, compare_embedding (the processor's errors for children)
        assertBad("{\"text\": \"Some text.\", \"children\": {\"embedding\": \"early\"}}",
            "[_chunk] [children.embedding] must be one of [separate, late], got [early]");
        assertBad("{\"text\": \"Some text.\", \"children\": {\"embedding\": \"late\"}, \"model\": \"bge-small-en-v15-q\"}",
            "[_chunk] [children.embedding] [late] cannot be used: ");
        assertBad("{\"text\": \"Some text.\", \"compare_embedding\": true, \"model\": \"bge-small-en-v15-q\"}",
            "[_chunk] [compare_embedding] compares [separate] with [late] children, and [late] cannot be used: ");
        assertBad("{\"text\": \"Some text.\", \"vectors\": \"yes\"}", "[_chunk] [vectors] must be true or false, got [yes]");
        assertBad("{\"text\": \"Some text.\", \"query_text\": \"\"}", "[_chunk] [query_text] must be a non-empty string");
        // (the response body escapes the quotes of the usage it quotes)
        assertBad("[\"not an object\"]", "\"[_chunk] needs a body: {\\\"text\\\": ");
        assertBad("{\"text\": ", "\"granularities\\\": [...]}; the body is not valid: ");
    }

    /**
     * The oracle for {@code compare_embedding}: the late vectors {@code _chunk} shows are those a {@code children: {"embedding":
     * "late"}} pipeline stores for the same text, the separate ones are {@code _embed} of each chunk's text (purpose passage),
     * bitwise; every score is {@code (1 + cos) / 2} against {@code _embed} of the query (purpose query), and each parent's best
     * chunk per mode is the highest of them.
     */
    public void testPreview_compareEmbedding_equalsALatePipelinesVectorsAndEmbed_andScoresEachChunkUnderBothModes() throws Exception {
        String text = emmaChapters().values().iterator().next();
        String question = "Who did Miss Taylor marry?";
        Map<String, Object> r = call("POST", PATH, json(Map.of("text", text, "strategy", Map.of("type", "recursive", "max_words", 150),
            "granularities", List.of(0.5, 0.25), "compare_embedding", true, "vectors", true, "query_text", question)));
        Map<String, Object> summary = (Map<String, Object>) r.get("embedding");
        assertEquals("e5-small-v2-q", summary.get("model"));
        assertEquals(List.of("separate", "late"), summary.get("modes"));
        assertEquals(question, summary.get("query_text"));
        List<Map<String, Object>> parents = (List<Map<String, Object>>) r.get("parents");

        putPipeline("preview-late", "{\"field\": \"body\", \"target_index\": \"preview-late-chunks\", \"strategy\": {\"type\": "
            + "\"recursive\", \"max_words\": 150}, \"granularities\": [0.5, 0.25], \"children\": {\"embedding\": \"late\"}}");
        call("PUT", "/preview-late-src/_doc/1?pipeline=preview-late&refresh=true", json(Map.of("body", text)));
        List<Map<String, Object>> stored = chunksOf("preview-late-chunks", "1");
        assertEquals(stored.size(), parents.size());

        List<String> texts = new java.util.ArrayList<>();
        for (Map<String, Object> p : parents) {
            texts.add((String) p.get("text"));
            ((List<Map<String, Object>>) p.get("children")).forEach(c -> texts.add((String) c.get("text")));
        }
        List<List<Number>> embedded = (List<List<Number>>) call("POST", "/_plugins/_strata/_embed",
            json(Map.of("texts", texts, "purpose", "passage"))).get("vectors");
        float[] query = floats(((List<List<Number>>) call("POST", "/_plugins/_strata/_embed",
            json(Map.of("texts", List.of(question), "purpose", "query"))).get("vectors")).get(0));

        int at = 0;
        int childrenCompared = 0;
        int bestDiffers = 0;
        double top = Double.NEGATIVE_INFINITY;
        for (int p = 0; p < parents.size(); p++) {
            Map<String, Object> parent = parents.get(p);
            assertEquals(stored.get(p).get("text"), parent.get("text"));
            List<Map<String, Object>> chunks = new java.util.ArrayList<>();
            chunks.add(parent);
            chunks.addAll((List<Map<String, Object>>) parent.get("children"));
            List<Map<String, Object>> storedChildren = ((List<Map<String, Object>>) stored.get(p).get("children")).stream()
                .filter(c -> !Integer.valueOf(0).equals(c.get("level"))).toList();
            assertEquals(chunks.size() - 1, storedChildren.size());
            Map<String, double[]> best = new java.util.HashMap<>(); // mode -> [index, score]
            for (int c = 0; c < chunks.size(); c++) {
                Map<String, Object> chunk = chunks.get(c);
                Map<String, Object> vectors = (Map<String, Object>) chunk.get("vectors");
                float[] separate = floats((List<Number>) vectors.get("separate"));
                float[] late = floats((List<Number>) vectors.get("late"));
                Object storedVector = c == 0 ? stored.get(p).get("embedding") : storedChildren.get(c - 1).get("embedding");
                if (c > 0) {
                    assertEquals(storedChildren.get(c - 1).get("start"), chunk.get("start"));
                    assertEquals(storedChildren.get(c - 1).get("end"), chunk.get("end"));
                }
                assertArrayEquals("parent " + p + " chunk " + c + ": late as the late pipeline stored it", floats((List<Number>) storedVector),
                    late, 0f);
                assertArrayEquals("parent " + p + " chunk " + c + ": separate as _embed of its text", floats(embedded.get(at++)), separate, 0f);
                if (c == 0) {
                    assertArrayEquals("the parent's vector is the same in both modes", separate, late, 0f);
                } else {
                    childrenCompared++;
                }
                assertEquals(cosine(separate, late), ((Number) chunk.get("separate_late_cosine")).doubleValue(), 1e-9);
                Map<String, Object> scores = (Map<String, Object>) chunk.get("scores");
                for (String mode : List.of("separate", "late")) {
                    double expected = (1 + cosine(mode.equals("late") ? late : separate, query)) / 2;
                    assertEquals(mode + " score of parent " + p + " chunk " + c, expected, ((Number) scores.get(mode)).doubleValue(), 1e-9);
                    double[] b = best.get(mode);
                    if (b == null || expected > b[1]) {
                        best.put(mode, new double[] { c, expected });
                    }
                }
            }
            Map<String, Object> shownBest = (Map<String, Object>) parent.get("best");
            for (String mode : List.of("separate", "late")) {
                Map<String, Object> chunk = chunks.get((int) best.get(mode)[0]);
                Map<String, Object> b = (Map<String, Object>) shownBest.get(mode);
                assertEquals(mode + " best of parent " + p, chunk == parent ? 0 : chunk.get("level"), b.get("level"));
                assertEquals(mode + " best of parent " + p, chunk.get("ordinal"), b.get("ordinal"));
                assertEquals(best.get(mode)[1], ((Number) b.get("score")).doubleValue(), 1e-9);
                top = Math.max(top, best.get(mode)[1]);
            }
            Map<String, Object> bs = (Map<String, Object>) shownBest.get("separate");
            Map<String, Object> bl = (Map<String, Object>) shownBest.get("late");
            bestDiffers += bs.get("level").equals(bl.get("level")) && bs.get("ordinal").equals(bl.get("ordinal")) ? 0 : 1;
        }
        assertEquals(texts.size(), at);
        assertTrue(childrenCompared > parents.size() * 2);
        Map<String, Object> textBest = (Map<String, Object>) summary.get("best");
        double late = ((Number) ((Map<String, Object>) textBest.get("late")).get("score")).doubleValue();
        double separate = ((Number) ((Map<String, Object>) textBest.get("separate")).get("score")).doubleValue();
        assertEquals(top, Math.max(late, separate), 1e-12);
        logger.info("compare_embedding: {} parents, best chunk differs between the modes in {}", parents.size(), bestDiffers);
    }

    public void testPreview_childrenLate_withoutCompare_showsTheLateModeOnly() throws Exception {
        Map<String, Object> r = call("POST", PATH, json(Map.of("text", "Emma Woodhouse, handsome, clever, and rich. She had lived nearly "
            + "twenty-one years in the world with very little to distress or vex her.", "strategy", Map.of("type", "recursive", "max_words", 20),
            "children", Map.of("embedding", "late"), "query_text", "Who is Emma?")));
        assertEquals(List.of("late"), ((Map<String, Object>) r.get("embedding")).get("modes"));
        Map<String, Object> parent = ((List<Map<String, Object>>) r.get("parents")).get(0);
        assertEquals(java.util.Set.of("late"), ((Map<String, Object>) parent.get("scores")).keySet());
        assertNull("no vectors unless asked", parent.get("vectors"));
        assertNull("no cosine without compare_embedding", parent.get("separate_late_cosine"));
        Map<String, Object> plain = call("POST", PATH, json(Map.of("text", "Some text.", "children", Map.of("embedding", "late"))));
        assertNull("children alone embeds nothing", plain.get("embedding"));
    }

    private static float[] floats(List<Number> v) {
        float[] out = new float[v.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = v.get(i).floatValue();
        }
        return out;
    }

    private static double cosine(float[] a, float[] b) {
        double dot = 0;
        double na = 0;
        double nb = 0;
        for (int i = 0; i < a.length; i++) {
            dot += (double) a[i] * b[i];
            na += (double) a[i] * a[i];
            nb += (double) b[i] * b[i];
        }
        return dot / Math.sqrt(na * nb);
    }

    /**
     * {@code children: {"keep_redundant": true}} (for comparison only) shows every child the splitters cut: at θ 200 on a
     * chapter of Emma some repeat their parent's span or are of three words or fewer; by default none.
     */
    public void testPreview_keepRedundant_showsTheChildrenThatAddNothing() throws Exception {
        String text = String.join("\n\n", emmaChapters().values());
        int[] now = redundantChildren(text, false);
        int[] kept = redundantChildren(text, true);
        assertEquals("by default no child repeats a coarser span", 0, now[0]);
        assertEquals("by default no child of <= 3 words under a longer parent", 0, now[1]);
        assertTrue("kept: children repeating a coarser span " + kept[0], kept[0] > 0);
        assertTrue("kept: children of <= 3 words " + kept[1], kept[1] > 0);
        assertTrue("kept: more children " + kept[2] + " than " + now[2], kept[2] > now[2]);
        assertBad("{\"text\": \"Some text.\", \"children\": {\"keep_redundant\": \"yes\"}}",
            "[_chunk] [children.keep_redundant] must be true or false, got [yes]");
    }

    /** Children repeating their parent's or a coarser child's span, children of at most 3 words under a longer parent, all. */
    private static int[] redundantChildren(String text, boolean keep) throws Exception {
        Map<String, Object> r = call("POST", PATH, json(Map.of("text", text, "strategy", Map.of("type", "recursive", "max_words", 200),
            "children", Map.of("keep_redundant", keep))));
        int repeats = 0;
        int tiny = 0;
        int all = 0;
        for (Map<String, Object> p : (List<Map<String, Object>>) r.get("parents")) {
            java.util.Set<List<Integer>> coarser = new java.util.HashSet<>(List.of(List.of((Integer) p.get("start"), (Integer) p.get("end"))));
            for (int level = 1; level <= 2; level++) {
                List<List<Integer>> spans = new java.util.ArrayList<>();
                for (Map<String, Object> c : (List<Map<String, Object>>) p.get("children")) {
                    if ((Integer) c.get("level") != level) {
                        continue;
                    }
                    all++;
                    List<Integer> span = List.of((Integer) c.get("start"), (Integer) c.get("end"));
                    repeats += coarser.contains(span) ? 1 : 0;
                    tiny += (Integer) c.get("words") <= 3 && (Integer) p.get("words") > (Integer) c.get("words") ? 1 : 0;
                    spans.add(span);
                }
                coarser.addAll(spans);
            }
        }
        return new int[] { repeats, tiny, all };
    }

    private static void assertBad(String body, String expected) {
        ResponseException e = callFailing("POST", PATH, body);
        assertEquals(e.getMessage(), 400, e.getResponse().getStatusLine().getStatusCode());
        assertTrue("expected [" + expected + "] in " + e.getMessage(), e.getMessage().contains(expected));
    }
}
