package io.strata.it;

import org.opensearch.client.ResponseException;

import java.util.List;
import java.util.Map;

/**
 * The model-guided strategies on the real node, with real models: the bundled bge-small (semantic, pseudo-instruction),
 * the shipped BertChunker head, the causal-LM test fixture {@code strata-tiny-gpt} (which {@code bin/strata-test} copies
 * into every node's {@code config/strata/models/}) and the ml-commons stand-in's remote LLM {@code standin-llm}.
 */
@SuppressWarnings("unchecked")
public class ModelGuidedStrategiesIT extends StrataRestTestCase {
    private static final String PREVIEW = "/_plugins/_strata/_chunk";
    private static final String FIXTURE = "strata-tiny-gpt";

    private static Map<String, Object> preview(String text, Map<String, Object> strategy) throws Exception {
        return call("POST", PREVIEW, json(Map.of("text", text, "strategy", strategy, "granularities", List.of(0.5))));
    }

    /** Parents tile the text in order with exact offsets, within θ; returns them. */
    private static List<Map<String, Object>> assertParents(String text, Map<String, Object> r, int theta) {
        List<Map<String, Object>> parents = (List<Map<String, Object>>) r.get("parents");
        assertFalse(parents.isEmpty());
        int previousStart = -1;
        for (Map<String, Object> p : parents) {
            int start = (Integer) p.get("start");
            int end = (Integer) p.get("end");
            assertEquals(text.substring(start, end), p.get("text"));
            assertTrue("ordered parents", start > previousStart);
            assertTrue("θ = " + theta + " holds: " + p.get("words"), (Integer) p.get("words") <= theta);
            previousStart = start;
        }
        return parents;
    }

    private static Map<String, Object> evidence(Map<String, Object> r, String signal) {
        for (Map<String, Object> e : (List<Map<String, Object>>) r.get("evidence")) {
            if (signal.equals(e.get("signal"))) {
                List<Number> positions = (List<Number>) e.get("positions");
                List<Number> values = (List<Number>) e.get("values");
                assertEquals(positions.size(), values.size());
                assertFalse(values.isEmpty());
                return e;
            }
        }
        throw new AssertionError("no [" + signal + "] evidence in " + r.get("evidence"));
    }

    public void testLogitsGuided_withTheFixture_cutsWhereItsEosProbabilityPeaks() throws Exception {
        String text = firstChapter(2500);
        Map<String, Object> r = preview(text, Map.of("type", "logits_guided", "max_words", 120, "llm", FIXTURE));
        assertEquals("logits_guided", r.get("strategy"));
        List<Map<String, Object>> parents = assertParents(text, r, 120);
        assertTrue(parents.size() >= 2);
        // eq. 1: every window is cut after the sentence with the highest p(EOS), so each cut is a window's argmax
        for (Map<String, Object> e : (List<Map<String, Object>>) r.get("evidence")) {
            List<Number> positions = (List<Number>) e.get("positions");
            List<Number> values = (List<Number>) e.get("values");
            int best = 0;
            for (int i = 1; i < values.size(); i++) {
                if (values.get(i).doubleValue() > values.get(best).doubleValue()) {
                    best = i;
                }
                assertTrue(values.get(i).doubleValue() >= 0 && values.get(i).doubleValue() <= 1);
            }
            int cut = positions.get(best).intValue();
            assertTrue("a parent ends at the argmax " + cut, parents.stream().anyMatch(p -> (Integer) p.get("end") == cut));
        }
    }

    public void testCausalLmCalls_areCountedInTheNodeStats() throws Exception {
        long before = modelCalls(FIXTURE);
        Map<String, Object> r = preview(firstChapter(1500), Map.of("type", "logits_guided", "max_words", 60, "llm", FIXTURE));
        int windows = ((List<Object>) r.get("evidence")).size();
        assertTrue(windows > 0);
        assertEquals("one forward pass per window", before + windows, modelCalls(FIXTURE));
    }

    /** Calls of {@code model} summed over the nodes (each node counts what it ran). */
    private static long modelCalls(String model) throws Exception {
        long calls = 0;
        for (Object node : ((Map<String, Object>) call("GET", "/_plugins/_strata/stats").get("nodes")).values()) {
            Map<String, Object> models = (Map<String, Object>) ((Map<String, Object>) ((Map<String, Object>) node).get("inference")).get("models");
            Map<String, Object> m = (Map<String, Object>) models.get(model);
            calls += m == null ? 0 : ((Number) m.get("calls")).longValue();
        }
        return calls;
    }

    public void testPerplexityAndMarginSampling_withTheFixture_returnTheirSignals() throws Exception {
        String text = firstChapter(2000);
        Map<String, Object> perplexity = preview(text, Map.of("type", "perplexity", "max_words", 100, "llm", FIXTURE));
        assertParents(text, perplexity, 100);
        Map<String, Object> ppl = evidence(perplexity, "perplexity");
        assertTrue(((List<Number>) ppl.get("values")).stream().allMatch(v -> v.doubleValue() > 0));

        Map<String, Object> margin = preview(text, Map.of("type", "margin_sampling", "max_words", 100, "llm", FIXTURE));
        assertParents(text, margin, 100);
        Map<String, Object> m = evidence(margin, "margin");
        assertTrue(((List<Number>) m.get("values")).stream().allMatch(v -> v.doubleValue() >= -1 && v.doubleValue() <= 1));
    }

    public void testSemantic_withTheBundledModel_breaksBetweenTopics() throws Exception {
        String bees = "Honey bees live in colonies ruled by a single queen. Worker bees gather nectar and pollen from flowers. "
            + "The hive stores honey in wax combs for the winter. Bees dance to tell each other where the flowers are. ";
        String tax = "The quarterly tax return must be filed before the deadline. Late filings incur a penalty on the amount due. "
            + "Deductions reduce the taxable income of the company. The auditor checks the ledger against the bank statements.";
        String text = bees + tax;
        Map<String, Object> r = preview(text, Map.of("type", "semantic", "buffer_size", 0, "breakpoint_threshold_type", "percentile",
            "breakpoint_threshold_amount", 90));
        List<Map<String, Object>> parents = assertParents(text, r, 300);
        assertEquals("one breakpoint, where the topic changes: " + parents, 2, parents.size());
        assertEquals(bees.strip(), parents.get(0).get("text"));
        Map<String, Object> distance = evidence(r, "distance");
        assertTrue(((Number) distance.get("threshold")).doubleValue() > 0);
    }

    public void testPseudoInstruction_meanWithoutAnLlm_andSummaryWithOne_recordTheirVariant() throws Exception {
        String text = firstChapter(2000);
        putPipeline("pic", """
            {"field": "body", "target_index": "pic-chunks", "strategy": {"type": "pseudo_instruction", "max_words": 200}}""");
        assertEquals(false, bulk("pic-src", "pic", Map.of("d", Map.of("body", text))).get("errors"));
        List<Map<String, Object>> chunks = chunksOf("pic-chunks", "d");
        assertFalse(chunks.isEmpty());
        assertTrue(chunks.stream().allMatch(c -> "pseudo_instruction/mean".equals(c.get("strategy"))));

        Map<String, Object> summary = preview(text, Map.of("type", "pseudo_instruction", "max_words", 200, "llm_model_id", "standin-llm"));
        assertEquals("pseudo_instruction/summary", summary.get("strategy"));
        assertParents(text, summary, 200);
        evidence(summary, "similarity_to_summary");
    }

    public void testBoundaryClassifier_withTheShippedHead_previewsAndIngests() throws Exception {
        String text = firstChapter(3000);
        Map<String, Object> r = preview(text, Map.of("type", "boundary_classifier", "max_words", 150));
        assertParents(text, r, 150);
        assertFalse(((List<Object>) r.get("evidence")).isEmpty());

        putPipeline("bert", """
            {"field": "body", "target_index": "bert-chunks", "strategy": {"type": "boundary_classifier", "max_words": 150}}""");
        Map<String, Object> bulk = bulk("bert-src", "bert", Map.of("c1", Map.of("body", text)));
        assertEquals(false, bulk.get("errors"));
        List<Map<String, Object>> chunks = chunksOf("bert-chunks", "c1");
        assertEquals(((List<Object>) r.get("parents")).size(), chunks.size());
        assertEquals("boundary_classifier", chunks.get(0).get("strategy"));
        assertNotNull("chunks are embedded", chunks.get(0).get("embedding"));
    }

    public void testLogitsGuided_throughAPipeline_writesChunksTheQueryFinds() throws Exception {
        putPipeline("lgmgc", """
            {"field": "body", "target_index": "lgmgc-chunks", "strategy": {"type": "logits_guided", "max_words": 120, "llm": "%s"}}"""
            .formatted(FIXTURE));
        String text = firstChapter(4000);
        assertEquals(false, bulk("lgmgc-src", "lgmgc", Map.of("ch1", Map.of("body", text))).get("errors"));
        List<Map<String, Object>> chunks = chunksOf("lgmgc-chunks", "ch1");
        assertTrue(chunks.size() >= 2);
        for (Map<String, Object> c : chunks) {
            assertEquals("logits_guided", c.get("strategy"));
            assertEquals(text.substring((Integer) c.get("start"), (Integer) c.get("end")), c.get("text"));
        }
        Map<String, Object> hits = (Map<String, Object>) call("POST", "/lgmgc-chunks/_search", """
            {"size": 3, "query": {"multi_granular": {"query_text": "Emma Woodhouse, handsome, clever, and rich", "k": 3}}}""")
            .get("hits");
        List<Map<String, Object>> top = (List<Map<String, Object>>) hits.get("hits");
        assertEquals("ch1:0", top.get(0).get("_id"));
    }

    public void testRemoteLlm_fromMlCommons_drivesLogitsGuidedChunking() throws Exception {
        // the stand-in's remote LLM: p(EOS) = 0.6 after ". ! ?", else 0.01 (see test-plugins/ml-standin StandinLlm)
        String text = "The cat sat. The cat ran away! Dogs bark";
        Map<String, Object> r = preview(text, Map.of("type", "logits_guided", "max_words", 300, "remainder_words", 0,
            "llm_model_id", "standin-llm"));
        List<Map<String, Object>> parents = assertParents(text, r, 300);
        assertEquals("The cat sat.", parents.get(0).get("text"));
        Map<String, Object> eos = evidence(r, "eos_probability");
        assertEquals(List.of(12, 30, 40), eos.get("positions"));
        List<Number> values = (List<Number>) eos.get("values");
        assertEquals(0.6, values.get(0).doubleValue(), 1e-6);
        assertEquals(0.6, values.get(1).doubleValue(), 1e-6);
        assertEquals(0.01, values.get(2).doubleValue(), 1e-6);

        ResponseException e = callFailing("POST", PREVIEW, json(Map.of("text", text,
            "strategy", Map.of("type", "perplexity", "llm_model_id", "nope"))));
        assertEquals(404, e.getResponse().getStatusLine().getStatusCode());
        assertTrue(e.getMessage(), e.getMessage().contains("[model_id] [nope] unknown model"));
        e = callFailing("POST", PREVIEW, json(Map.of("text", text,
            "strategy", Map.of("type", "perplexity", "llm_model_id", "standin-llm-text-only"))));
        assertEquals(400, e.getResponse().getStatusLine().getStatusCode());
        assertTrue(e.getMessage(), e.getMessage().contains("is not an LLM Strata can use"));
    }

    /**
     * Meta-Chunking's perplexity through a remote model with a 64-token context: the text (over 400 tokens) is scored in
     * windows of {@code llm_max_tokens}, and, since the stand-in's log-probabilities depend only on whether a word was seen
     * before (every word here is new but ".", which every window's context holds), the per-sentence perplexities equal
     * those of the same model served without a context limit. Without the option the 2048-token default does not fit the
     * server, which refuses: the preview fails naming the model instead of scoring less than the text.
     */
    public void testRemoteLlm_withAShortContext_scoresLongTextsInWindowsOfLlmMaxTokens() throws Exception {
        StringBuilder b = new StringBuilder();
        for (int s = 0; s < 60; s++) {
            b.append(s == 0 ? "" : " ").append(String.format(java.util.Locale.ROOT, "Word%da word%db word%dc word%dd word%de word%df.", s, s, s, s, s, s));
        }
        String text = b.toString();
        Map<String, Object> windowed = preview(text, Map.of("type", "perplexity", "max_words", 100, "llm_model_id", "standin-llm-ctx64",
            "llm_max_tokens", 64));
        assertParents(text, windowed, 100);
        Map<String, Object> unbounded = preview(text, Map.of("type", "perplexity", "max_words", 100, "llm_model_id", "standin-llm"));
        assertEquals(evidence(unbounded, "perplexity"), evidence(windowed, "perplexity"));
        assertEquals(unbounded.get("parents"), windowed.get("parents"));

        ResponseException e = callFailing("POST", PREVIEW, json(Map.of("text", text, "strategy", Map.of("type", "perplexity",
            "llm_model_id", "standin-llm-ctx64"))));
        assertEquals(e.getMessage(), 400, e.getResponse().getStatusLine().getStatusCode());
        assertTrue(e.getMessage(), e.getMessage().contains("standin-llm-ctx64") && e.getMessage().contains("maximum context length is 64"));
    }

    /**
     * A server whose top alternatives never list the end-of-sequence token cannot tell where a window should end: the
     * preview fails naming the model, instead of cutting one-sentence parents (p(EOS) read as 0 everywhere).
     */
    public void testRemoteLlm_whoseTopLogProbsNeverListEos_failsNamingTheModel_insteadOfOneSentenceParents() throws Exception {
        String text = "The cat sat on the mat. The cat ran away from the dog! Dogs bark at night. Birds sing in the morning.";
        ResponseException e = callFailing("POST", PREVIEW, json(Map.of("text", text, "strategy", Map.of("type", "logits_guided",
            "max_words", 300, "remainder_words", 0, "llm_model_id", "standin-llm-no-eos"))));
        assertEquals(e.getMessage(), 400, e.getResponse().getStatusLine().getStatusCode());
        assertTrue(e.getMessage(), e.getMessage().contains("[standin-llm-no-eos]") && e.getMessage().contains("end-of-sequence"));
    }

    public void testBadStrategyConfigs_get400NamingTheField() {
        assertBadPipeline("{\"type\": \"logits_guided\"}", "[strategy.llm]", "needs a causal language model");
        assertBadPipeline("{\"type\": \"perplexity\", \"llm\": \"bge-small-en-v15-q\"}", "[strategy.llm]",
            "is an embedding model, not a causal language model", FIXTURE);
        assertBadPipeline("{\"type\": \"margin_sampling\", \"llm\": \"no-such-lm\"}", "[strategy.llm]", "unknown model [no-such-lm]");
        assertBadPipeline("{\"type\": \"perplexity\", \"llm\": \"" + FIXTURE + "\", \"threshold\": -1}", "[strategy.threshold]");
        assertBadPipeline("{\"type\": \"logits_guided\", \"llm\": \"" + FIXTURE + "\", \"llm_model_id\": \"x\"}", "cannot be combined");
        assertBadPipeline("{\"type\": \"boundary_classifier\", \"threshold\": 2}", "[strategy.threshold]");
        assertBadPipeline("{\"type\": \"boundary_classifier\", \"model\": \"no-such-head\"}", "[strategy.model]", "unknown model [no-such-head]");
        assertBadPipeline("{\"type\": \"logits_guided\", \"llm\": \"" + FIXTURE + "\", \"temperature\": 1}", "unknown option [temperature]");
    }

    private static void assertBadPipeline(String strategyJson, String... expected) {
        ResponseException e = callFailing("PUT", "/_ingest/pipeline/bad-strategy",
            "{\"processors\": [{\"multi_granular_chunking\": {\"field\": \"body\", \"target_index\": \"c\", \"strategy\": "
                + strategyJson + "}}]}");
        assertEquals(e.getMessage(), 400, e.getResponse().getStatusLine().getStatusCode());
        for (String fragment : expected) {
            assertTrue("expected [" + fragment + "] in " + e.getMessage(), e.getMessage().contains(fragment));
        }
    }

    /** The start of Emma's first chapter, cut at a paragraph end near {@code chars}. */
    private static String firstChapter(int chars) {
        String chapter = emmaChapters().values().iterator().next();
        int cut = chapter.indexOf("\n\n", chars);
        return cut < 0 ? chapter : chapter.substring(0, cut);
    }
}
