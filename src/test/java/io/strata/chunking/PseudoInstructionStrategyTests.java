package io.strata.chunking;

import org.junit.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

public class PseudoInstructionStrategyTests {
    private static final SentenceSegmenter SEGMENTER = SentenceSegmenter.english();

    /** Records prompts and answers with a fixed summary. */
    static final class ScriptedGenerator implements TextGenerator {
        final List<String> prompts = new ArrayList<>();
        final List<Integer> maxTokens = new ArrayList<>();
        private final String answer;

        ScriptedGenerator(String answer) {
            this.answer = answer;
        }

        @Override
        public String name() {
            return "scripted-llm";
        }

        @Override
        public synchronized String generate(String prompt, int maxTokens) {
            prompts.add(prompt);
            this.maxTokens.add(maxTokens);
            return answer;
        }
    }

    /**
     * Exact similarities to the summary [s] = e1: [x] → 1, [y] → 0, [h] = (1,1,1,1) → 1/2 (norm 2, exact in floating point).
     */
    private static final Map<String, float[]> EXACT = Map.of(
        "s", new float[] { 1, 0, 0, 0 },
        "x", new float[] { 1, 0, 0, 0 },
        "y", new float[] { 0, 1, 0, 0 },
        "h", new float[] { 1, 1, 1, 1 });

    /** Two topics a, b and c halfway between them. */
    private static final Map<String, float[]> TOPICS = Map.of(
        "a", new float[] { 1, 0 },
        "b", new float[] { 0, 1 },
        "c", new float[] { 1, 1 });

    private static TextIndex index(String text) {
        return new TextIndex(text, SEGMENTER);
    }

    private static List<String> texts(String text, List<Span> parents) {
        return parents.stream().map(p -> p.of(text)).toList();
    }

    private static PseudoInstructionStrategy summary(Embedder embedder, TextGenerator generator, int theta) {
        return new PseudoInstructionStrategy(embedder, generator, 256, 3000, theta);
    }

    @Test
    public void testSplit_groupsMaximalRunsOnEachSideOfTheMeanSimilarity() {
        // r = [1, 1, 0, 0, 1, 0], τ = 1/2: C_rel runs {0,1}, {4}; C_irr runs {2,3}, {5} (eq. 2-4)
        String text = "One [x] here. Two [x] here. Three [y] there. Four [y] there. Five [x] again. Six [y] last.";
        Segmentation s = summary(new ScriptedEmbedder(EXACT), new ScriptedGenerator("The [s] summary."), 300).segment(index(text));
        assertEquals(List.of("One [x] here. Two [x] here.", "Three [y] there. Four [y] there.", "Five [x] again.", "Six [y] last."),
            texts(text, s.parents()));
        Segmentation.Evidence e = s.evidence().get(0);
        assertEquals("similarity_to_summary", e.signal());
        assertArrayEquals(new double[] { 1, 1, 0, 0, 1, 0 }, e.values(), 1e-9);
        assertEquals(0.5, e.threshold(), 1e-9);
        assertEquals(text.indexOf(" Two"), e.positions()[0]);
        assertEquals(text.length(), e.positions()[5]);
    }

    @Test
    public void testSplit_similarityEqualToTau_countsAsRelevant() {
        // r = [1, 1/2, 0], τ = 1/2 exactly: eq. 2 has r ≥ τ, so the middle sentence joins the first
        String text = "Alpha [x] a. Beta [h] b. Gamma [y] c.";
        List<Span> parents = summary(new ScriptedEmbedder(EXACT), new ScriptedGenerator("[s]"), 300).split(index(text));
        assertEquals(List.of("Alpha [x] a. Beta [h] b.", "Gamma [y] c."), texts(text, parents));
    }

    @Test
    public void testSplit_meanVariantWithoutLlm_comparesWithTheMeanSentenceEmbedding() {
        // mean of a, a, c, b, b points along c: r = [.707, .707, 1, .707, .707], τ = .766 → only c is relevant
        String text = "Apples [a] grow. Apples [a] fall. Both [c] matter. Boats [b] sail. Boats [b] sink.";
        ScriptedEmbedder embedder = new ScriptedEmbedder(TOPICS);
        PseudoInstructionStrategy mean = new PseudoInstructionStrategy(embedder, null, 256, 3000, 300);
        assertEquals("mean", mean.variant());
        Segmentation s = mean.segment(index(text));
        assertEquals(List.of("Apples [a] grow. Apples [a] fall.", "Both [c] matter.", "Boats [b] sail. Boats [b] sink."),
            texts(text, s.parents()));
        Segmentation.Evidence e = s.evidence().get(0);
        assertEquals("similarity_to_mean", e.signal());
        double h = Math.sqrt(0.5);
        assertArrayEquals(new double[] { h, h, 1, h, h }, e.values(), 1e-6);
        assertEquals((4 * h + 1) / 5, e.threshold(), 1e-6);
        assertEquals(List.of(Embedder.Purpose.PASSAGE), embedder.purposes); // one batch, sentences only
    }

    @Test
    public void testSplit_thresholdSigmas_movesTauToMuPlusKSigma() {
        // r = [1, 1, 0, 0, 1, 0]: μ = 1/2, σ = 1/2 (population); k = +0.5 → τ = 0.75: only r = 1 is relevant (as at μ);
        // k = −1.5 → τ = −0.25: every sentence is relevant, one parent (the paper's "degrades into no chunking", §6.2)
        String text = "One [x] here. Two [x] here. Three [y] there. Four [y] there. Five [x] again. Six [y] last.";
        for (double k : new double[] { 0.5, -1.5 }) {
            Segmentation s = new PseudoInstructionStrategy(new ScriptedEmbedder(EXACT), new ScriptedGenerator("The [s] summary."), 256,
                3000, 300, null, k).segment(index(text));
            assertEquals(0.5 + k * 0.5, s.evidence().get(0).threshold(), 1e-9);
            assertEquals(k > 0 ? 4 : 1, s.parents().size());
        }
    }

    @Test
    public void testSplit_sentVariant_comparesWithOneSentenceOfTheDocument_chosenByItsText() {
        String text = "Apples [a] grow. Apples [a] fall. Both [c] matter. Boats [b] sail. Boats [b] sink.";
        ScriptedEmbedder embedder = new ScriptedEmbedder(TOPICS);
        PseudoInstructionStrategy sent = new PseudoInstructionStrategy(embedder, null, 256, 3000, 300, "sent", 0);
        Segmentation s = sent.segment(index(text));
        Segmentation.Evidence e = s.evidence().get(0);
        assertEquals("similarity_to_sent", e.signal());
        int chosen = Math.floorMod(text.hashCode(), 5);
        assertEquals("the chosen sentence is its own instruction", 1, e.values()[chosen], 1e-6);
        assertEquals(s.parents(), sent.split(index(text))); // the same sentence every time
        assertThrows(IllegalArgumentException.class,
            () -> new PseudoInstructionStrategy(embedder, new ScriptedGenerator("x"), 256, 3000, 300, "sent", 0));
    }

    @Test
    public void testSplit_summaryVariant_groupsByTheSummaryNotTheMean() {
        // the same text with a summary about topic a: r = [1, 1, .707, 0, 0], τ = .541 → c joins the a sentences
        String text = "Apples [a] grow. Apples [a] fall. Both [c] matter. Boats [b] sail. Boats [b] sink.";
        ScriptedEmbedder embedder = new ScriptedEmbedder(TOPICS);
        ScriptedGenerator llm = new ScriptedGenerator("  A text about apples [a].\n");
        PseudoInstructionStrategy pic = summary(embedder, llm, 300);
        assertEquals("summary", pic.variant());
        Segmentation s = pic.segment(index(text));
        assertEquals(List.of("Apples [a] grow. Apples [a] fall. Both [c] matter.", "Boats [b] sail. Boats [b] sink."),
            texts(text, s.parents()));
        assertEquals("similarity_to_summary", s.evidence().get(0).signal());
        // the summary is embedded first, stripped, by the same φ as the sentences (eq. 1): as a passage
        assertEquals(List.of("A text about apples [a]."), embedder.calls.get(0));
        assertEquals(List.of(Embedder.Purpose.PASSAGE, Embedder.Purpose.PASSAGE), embedder.purposes);
    }

    @Test
    public void testSplit_summaryPrompt_isTable7Verbatim() {
        String text = "Apples [a] grow. Boats [b] sail.";
        ScriptedGenerator llm = new ScriptedGenerator("[a]");
        new PseudoInstructionStrategy(new ScriptedEmbedder(TOPICS), llm, 100, 3000, 300).split(index(text));
        assertEquals(List.of("Read this passage:\nApples [a] grow. Boats [b] sail.\nWrite a summary for this passage. Your summary "
            + "should be concise and informative. Give the summary directly, without any other text."), llm.prompts);
        assertEquals(List.of(100), llm.maxTokens);
    }

    @Test
    public void testSplit_longDocument_givesTheLlmOnlyItsFirstWords() {
        String text = "Apples [a] grow here. Boats [b] sail there. Both [c] matter much.";
        ScriptedGenerator llm = new ScriptedGenerator("[a]");
        new PseudoInstructionStrategy(new ScriptedEmbedder(TOPICS), llm, 256, 5, 300).split(index(text));
        assertTrue(llm.prompts.get(0), llm.prompts.get(0).startsWith("Read this passage:\nApples [a] grow here. Boats\nWrite"));
    }

    @Test
    public void testSegment_blankSummary_fallsBackToTheMeanForThatDocument() {
        String text = "Apples [a] grow. Apples [a] fall. Both [c] matter. Boats [b] sail. Boats [b] sink.";
        Segmentation s = summary(new ScriptedEmbedder(TOPICS), new ScriptedGenerator(" \n"), 300).segment(index(text));
        assertEquals("similarity_to_mean", s.evidence().get(0).signal());
        assertEquals(3, s.parents().size());
    }

    @Test
    public void testSplit_runAboveTheta_isSplitFurtherWithExactCoverage() {
        StringBuilder sb = new StringBuilder("\n");
        for (int i = 0; i < 25; i++) {
            sb.append("Sentence [a] number ").append(i).append(" is on apples.\n");
        }
        sb.append("\n");
        for (int i = 0; i < 5; i++) {
            sb.append("Sentence [b] number ").append(i).append(" is on boats. ");
        }
        String text = sb.toString();
        TextIndex index = index(text);
        int theta = 20;
        List<Span> parents = new PseudoInstructionStrategy(new ScriptedEmbedder(TOPICS), null, 256, 3000, theta).split(index);
        SpanAssertions.assertCoversWithinTheta(index, parents, theta);
        // 7-word sentences, at most two per parent: 25 a-sentences → 13 parents, 5 b-sentences → 3
        assertEquals(13 + 3, parents.size());
        for (Span p : parents) {
            assertTrue(p.of(text), p.of(text).contains("[a]") != p.of(text).contains("[b]"));
        }
    }

    @Test
    public void testSegment_oneSentenceOrNone_needsNoModel() {
        ScriptedEmbedder embedder = new ScriptedEmbedder(TOPICS);
        ScriptedGenerator llm = new ScriptedGenerator("[a]");
        PseudoInstructionStrategy pic = summary(embedder, llm, 300);
        assertEquals(List.of(new Span(0, 12)), pic.split(index("Only [a] one")));
        assertEquals(List.of(), pic.split(index("")));
        assertEquals(List.of(), embedder.calls);
        assertEquals(List.of(), llm.prompts);
    }

    @Test
    public void testStrategy_usesModelsAndNamesItsVariant() {
        PseudoInstructionStrategy mean = new PseudoInstructionStrategy(new ScriptedEmbedder(TOPICS), null, 256, 3000, 300);
        assertTrue(mean.usesModels());
        assertEquals("pseudo_instruction", mean.type());
        assertNull(mean.generator());
        assertEquals("similarity_to_mean", PseudoInstructionStrategy.signal(mean.variant()));
    }
}
