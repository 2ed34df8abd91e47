package io.strata.chunking;

import org.junit.Test;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static io.strata.chunking.ScriptedCausalLm.sentence;
import static io.strata.chunking.ScriptedCausalLm.range;
import static io.strata.chunking.ScriptedCausalLm.sentences;
import static io.strata.chunking.ScriptedCausalLm.texts;
import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

public class MarginSamplingStrategyTests {
    private static final SentenceSegmenter SEGMENTER = SentenceSegmenter.english();

    /** P("1") for S2..S6: margins 0.4, 0.2, 0.6, 0.3, -0.4. */
    private static ScriptedCausalLm adaptive() {
        ScriptedCausalLm lm = new ScriptedCausalLm();
        lm.split.put(2, 0.7);
        lm.split.put(3, 0.6);
        lm.split.put(4, 0.8);
        lm.split.put(5, 0.65);
        lm.split.put(6, 0.3);
        return lm;
    }

    @Test
    public void testSegment_comparesEachMarginWithTheMeanOfEarlierMargins() {
        TextIndex index = new TextIndex(sentences(6, 4), SEGMENTER);
        Segmentation seg = new MarginSamplingStrategy(adaptive(), false, 0, 300).segment(index);
        // S2: 0.4 > 0 split; S3: 0.2 ≤ 0.4 merge (a fixed threshold of 0 would split); S4: 0.6 > 0.3 split;
        // S5: 0.3 ≤ 0.4 merge; S6: -0.4 ≤ 0.375 merge
        assertEquals(List.of(range(1, 1, 4), range(2, 3, 4), range(4, 6, 4)), texts(index, seg.parents()));
        Segmentation.Evidence margins = seg.evidence().get(0);
        Segmentation.Evidence thresholds = seg.evidence().get(1);
        assertEquals(MarginSamplingStrategy.SIGNAL, margins.signal());
        assertEquals(MarginSamplingStrategy.THRESHOLD_SIGNAL, thresholds.signal());
        // the answers' mass is halved by the scripted model: normalising over "1"/"2" recovers 2P - 1
        assertArrayEquals(new double[] { 0.4, 0.2, 0.6, 0.3, -0.4 }, margins.values(), 1e-9);
        assertArrayEquals(new double[] { 0, 0.4, 0.3, 0.4, 0.375 }, thresholds.values(), 1e-9);
        assertEquals(sentence(1, 4).length(), margins.positions()[0]);
        assertArrayEquals(margins.positions(), thresholds.positions());
    }

    @Test
    public void testSegment_asksWithTheTable5PromptVerbatim() {
        ScriptedCausalLm lm = adaptive();
        TextIndex index = new TextIndex(sentences(3, 4), SEGMENTER);
        new MarginSamplingStrategy(lm, false, 0, 300).split(index);
        assertEquals("This is a text chunking task. You are a text analysis expert. Please choose one of the following two "
            + "options based on the logical structure and semantic content of the provided sentence:\n\n"
            + "1. Split S1 w w end. S2 w w end. into S1 w w end. and S2 w w end. two parts;\n"
            + "2. Keep S1 w w end. S2 w w end. unsplit in its original form;\n\nPlease answer 1 or 2.", lm.prompts.get(0));
        // sentence context: S3 is judged against S2 alone
        assertTrue(lm.prompts.get(1), lm.prompts.get(1).contains("into S2 w w end. and S3 w w end. two parts;"));
    }

    @Test
    public void testSegment_chunkContext_judgesTheNextSentenceAgainstTheWholeCurrentChunk() {
        ScriptedCausalLm lm = adaptive();
        TextIndex index = new TextIndex(sentences(6, 4), SEGMENTER);
        List<Span> parents = new MarginSamplingStrategy(lm, true, 0, 300).split(index);
        assertEquals(List.of(range(1, 1, 4), range(2, 3, 4), range(4, 6, 4)), texts(index, parents));
        // S6 is asked after S4, S5 were merged
        assertTrue(lm.prompts.get(4), lm.prompts.get(4).contains("into " + range(4, 5, 4) + " and " + sentence(6, 4) + " two parts;"));
    }

    @Test
    public void testSegment_wouldExceedTheta_cutsWithoutAskingTheModel() {
        ScriptedCausalLm lm = new ScriptedCausalLm();
        for (int i = 1; i <= 7; i++) {
            lm.split.put(i, 0.1); // always keep together
        }
        TextIndex index = new TextIndex(sentences(7, 4), SEGMENTER);
        Segmentation seg = new MarginSamplingStrategy(lm, false, 0, 10).segment(index);
        assertEquals(List.of(range(1, 2, 4), range(3, 4, 4), range(5, 6, 4), range(7, 7, 4)), texts(index, seg.parents()));
        assertEquals(3, lm.prompts.size()); // S2, S4, S6; S3, S5, S7 are forced
        assertEquals(3, seg.evidence().get(0).values().length);
        ScriptedCausalLm.assertValidParents(index, seg.parents(), 10, false);

        TextIndex longSentence = new TextIndex(sentence(1, 5) + " " + sentence(2, 33) + " " + sentence(3, 4), SEGMENTER);
        ScriptedCausalLm.assertValidParents(longSentence, new MarginSamplingStrategy(lm, true, 10, 10).split(longSentence), 10, false);
    }

    @Test
    public void testSegment_dynamicMerging_combinesDecidedChunksUpToMergeWords() {
        TextIndex index = new TextIndex(sentences(6, 4), SEGMENTER);
        // decided chunks of 4, 8, 12 words; 4 + 8 fits 20, + 12 does not
        assertEquals(List.of(range(1, 3, 4), range(4, 6, 4)),
            texts(index, new MarginSamplingStrategy(adaptive(), false, 20, 20).split(index)));
    }

    @Test
    public void testSegment_thresholdWindow_isZeroUntilNMarginsThenTheMeanOfTheLastN_asTheAuthorsCodeRunsIt() {
        TextIndex index = new TextIndex(sentences(6, 4), SEGMENTER);
        Segmentation seg = new MarginSamplingStrategy(adaptive(), false, 0, 300, 2, false).segment(index);
        // margins 0.4, 0.2, 0.6, 0.3, -0.4; thresholds 0, 0 (fewer than 2), then the mean of the last two
        assertArrayEquals(new double[] { 0, 0, 0.3, 0.4, 0.45 }, seg.evidence().get(1).values(), 1e-9);
        assertEquals(List.of(range(1, 1, 4), range(2, 2, 4), range(3, 3, 4), range(4, 6, 4)), texts(index, seg.parents()));
    }

    @Test
    public void testSegment_rawMargins_useTheProbabilitiesOverTheWholeVocabulary_asEq1Writes() {
        TextIndex index = new TextIndex(sentences(6, 4), SEGMENTER);
        Segmentation seg = new MarginSamplingStrategy(adaptive(), false, 0, 300, 0, true).segment(index);
        // the scripted model gives "1" and "2" half their mass: raw margins are half the normalised ones
        assertArrayEquals(new double[] { 0.2, 0.1, 0.3, 0.15, -0.2 }, seg.evidence().get(0).values(), 1e-9);
        assertEquals(List.of(range(1, 1, 4), range(2, 3, 4), range(4, 6, 4)), texts(index, seg.parents()));
        assertEquals(0.2, MarginSamplingStrategy.rawMargin(Math.log(0.3), Math.log(0.1)), 1e-12);
        assertEquals(-0.1, MarginSamplingStrategy.rawMargin(Double.NEGATIVE_INFINITY, Math.log(0.1)), 1e-12);
    }

    @Test
    public void testMargin_isTheNormalisedProbabilityDifference() {
        assertEquals(0.5, MarginSamplingStrategy.margin(Math.log(0.3), Math.log(0.1)), 1e-12);
        assertEquals(-0.5, MarginSamplingStrategy.margin(Math.log(0.01), Math.log(0.03)), 1e-12);
        assertEquals(1, MarginSamplingStrategy.margin(-3, Double.NEGATIVE_INFINITY), 0);
        assertEquals(0, MarginSamplingStrategy.margin(Double.NEGATIVE_INFINITY, Double.NEGATIVE_INFINITY), 0);
    }

    @Test
    public void testParse_readsOptionsAndDefaults() {
        ScriptedCausalLm lm = new ScriptedCausalLm();
        MarginSamplingStrategy s = (MarginSamplingStrategy) ChunkingConfig.parseStrategy("strategy",
            Map.of("type", "margin_sampling", "llm", "tiny"), lm.models());
        assertEquals(false, s.chunkContext());
        assertEquals(300, s.mergeWords());
        assertTrue(s.usesModels());
        // as the authors run it: the mean of the last five margins, probabilities over the whole vocabulary
        assertEquals(5, s.thresholdWindow());
        assertTrue(s.rawMargins());
        s = (MarginSamplingStrategy) ChunkingConfig.parseStrategy("strategy",
            Map.of("type", "margin_sampling", "llm", "tiny", "context", "chunk", "merge_words", 0), lm.models());
        assertTrue(s.chunkContext());
        assertEquals(0, s.mergeWords());
        s = (MarginSamplingStrategy) ChunkingConfig.parseStrategy("strategy",
            Map.of("type", "margin_sampling", "llm", "tiny", "threshold_window", 0, "margin", "normalised"), lm.models());
        assertEquals(0, s.thresholdWindow());
        assertFalse(s.rawMargins());
    }

    @Test
    public void testParse_invalidOptions_nameTheField() {
        ScriptedCausalLm lm = new ScriptedCausalLm();
        ConfigException e = assertThrows(ConfigException.class,
            () -> ChunkingConfig.parseStrategy("strategy", Map.of("type", "margin_sampling"), lm.models()));
        assertEquals("strategy.llm", e.field());

        Map<String, Object> bad = new HashMap<>();
        bad.put("context", "document");
        bad.put("merge_words", -1);
        bad.put("threshold", 0.5); // the threshold is adaptive, not configurable
        bad.put("threshold_window", -1);
        bad.put("margin", "softmax");
        for (var entry : bad.entrySet()) {
            Map<String, Object> config = new HashMap<>(Map.of("type", "margin_sampling", "llm", "tiny"));
            config.put(entry.getKey(), entry.getValue());
            e = assertThrows(ConfigException.class, () -> ChunkingConfig.parseStrategy("strategy", config, lm.models()));
            assertEquals("strategy." + entry.getKey(), e.field());
        }
        e = assertThrows(ConfigException.class, () -> ChunkingConfig.parseStrategy("strategy",
            Map.of("type", "margin_sampling", "llm", "tiny", "context", "document"), lm.models()));
        assertEquals("[strategy.context] must be one of [sentence, chunk], got [document]", e.getMessage());
    }
}
