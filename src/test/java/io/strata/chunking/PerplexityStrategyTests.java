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
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

public class PerplexityStrategyTests {
    private static final SentenceSegmenter SEGMENTER = SentenceSegmenter.english();

    private static ScriptedCausalLm lm(double... ppl) {
        ScriptedCausalLm lm = new ScriptedCausalLm();
        for (int i = 0; i < ppl.length; i++) {
            lm.ppl.put(i + 1, ppl[i]);
        }
        return lm;
    }

    @Test
    public void testSegment_cutsAfterEachLocalMinimumAboveThreshold() {
        // minima: S3 (min(2, 2.5) - 1 = 1) and S5 (min(2.5, 2.2) - 2 = 0.2)
        double[] ppl = { 3, 2, 1, 2.5, 2.0, 2.2, 3 };
        TextIndex index = new TextIndex(sentences(7, 4), SEGMENTER);
        ScriptedCausalLm model = lm(ppl);
        Segmentation seg = new PerplexityStrategy(model, 0, 0, false, 300).segment(index);
        assertEquals(List.of(range(1, 3, 4), range(4, 5, 4), range(6, 7, 4)), texts(index, seg.parents()));
        // one pass over the whole text; the scripted NaN of the first token is skipped, so S1 reads exactly 3
        assertEquals(List.of(index.text()), model.logProbTexts);
        Segmentation.Evidence evidence = seg.evidence().get(0);
        assertEquals(PerplexityStrategy.SIGNAL, evidence.signal());
        assertArrayEquals(ppl, evidence.values(), 1e-12);
        assertEquals(0, evidence.threshold(), 0);
        assertEquals(sentence(1, 4).length(), evidence.positions()[0]);
        assertEquals(index.length(), evidence.positions()[6]);

        // θ = 0.5 keeps S3 (1 > 0.5) and drops S5 (0.2)
        List<Span> strict = new PerplexityStrategy(lm(ppl), 0.5, 0, false, 300).split(index);
        assertEquals(List.of(range(1, 3, 4), range(4, 7, 4)), texts(index, strict));
    }

    @Test
    public void testSegment_plateauAfterADrop_isAMinimumButAFlatStretchIsNot() {
        // eq. 3 second clause: S2 (3 - 1 > 0 and PPL(S3) = PPL(S2)); S3 (1 - 1 = 0) is not
        TextIndex index = new TextIndex(sentences(4, 4), SEGMENTER);
        List<Span> parents = new PerplexityStrategy(lm(3, 1, 1, 3), 0, 0, false, 300).split(index);
        assertEquals(List.of(range(1, 2, 4), range(3, 4, 4)), texts(index, parents));

        List<Span> flat = new PerplexityStrategy(lm(2, 2, 2, 2), 0, 0, false, 300).split(index);
        assertEquals(List.of(index.text()), texts(index, flat));
    }

    @Test
    public void testMinima_followEquationThree() {
        assertArrayEquals(new int[] { 2, 4 }, PerplexityStrategy.minima(new double[] { 3, 2, 1, 2.5, 2.0, 2.2, 3 }, 0));
        assertArrayEquals(new int[] { 2 }, PerplexityStrategy.minima(new double[] { 3, 2, 1, 2.5, 2.0, 2.2, 3 }, 0.25));
        assertArrayEquals(new int[] {}, PerplexityStrategy.minima(new double[] { 1, 2, 3 }, 0)); // ends are never minima
        assertArrayEquals(new int[] {}, PerplexityStrategy.minima(new double[] { 3, Double.NaN, 3, 1, Double.NaN }, 0));
    }

    @Test
    public void testSegment_dynamicMerging_combinesMetaChunksUpToMergeWords() {
        // minima at S2, S4, S6: meta-chunks of 8, 8, 8, 4 words
        double[] ppl = { 3, 1, 3, 1, 3, 1, 3 };
        TextIndex index = new TextIndex(sentences(7, 4), SEGMENTER);
        assertEquals(List.of(range(1, 2, 4), range(3, 4, 4), range(5, 6, 4), range(7, 7, 4)),
            texts(index, new PerplexityStrategy(lm(ppl), 0, 0, false, 300).split(index)));
        // 8 + 8 = 16 fits, + 8 does not
        assertEquals(List.of(range(1, 4, 4), range(5, 7, 4)),
            texts(index, new PerplexityStrategy(lm(ppl), 0, 16, false, 300).split(index)));
        // a target equal to one meta-chunk merges nothing
        assertEquals(4, new PerplexityStrategy(lm(ppl), 0, 8, false, 300).split(index).size());
    }

    @Test
    public void testSegment_overlapVariant_givesEachClosingMinimumToBothNeighbours() {
        double[] ppl = { 3, 1, 3, 1, 3, 1, 3 };
        TextIndex index = new TextIndex(sentences(7, 4), SEGMENTER);
        List<Span> parents = new PerplexityStrategy(lm(ppl), 0, 0, true, 12).split(index);
        assertEquals(List.of(range(1, 2, 4), range(2, 4, 4), range(4, 6, 4), range(6, 7, 4)), texts(index, parents));
        ScriptedCausalLm.assertValidParents(index, parents, 12, true);

        // θ = 10: sharing S2 or S4 would make 12 words, so those overlaps are dropped; S6 + S7 (8 words) still fits
        List<Span> tight = new PerplexityStrategy(lm(ppl), 0, 0, true, 10).split(index);
        assertEquals(List.of(range(1, 2, 4), range(3, 4, 4), range(5, 6, 4), range(6, 7, 4)), texts(index, tight));
        ScriptedCausalLm.assertValidParents(index, tight, 10, true);
    }

    @Test
    public void testSegment_overlapWithMerging_sharesOnlyTheMinimaThatStillCloseAChunk() {
        double[] ppl = { 3, 1, 3, 1, 3, 1, 3 };
        TextIndex index = new TextIndex(sentences(7, 4), SEGMENTER);
        List<Span> parents = new PerplexityStrategy(lm(ppl), 0, 16, true, 20).split(index);
        assertEquals(List.of(range(1, 4, 4), range(4, 7, 4)), texts(index, parents));
    }

    @Test
    public void testSegment_withoutMinima_boundsTheWholeTextByTheta() {
        TextIndex index = new TextIndex(sentences(10, 4) + "\n\n" + sentence(11, 45), SEGMENTER);
        List<Span> parents = new PerplexityStrategy(lm(), 0, 20, false, 20).split(index);
        ScriptedCausalLm.assertValidParents(index, parents, 20, false);
        assertTrue(parents.size() >= 5);
        // one meta-chunk of 85 words, cut by the recursive splitter at sentences: S1..S5 first
        assertEquals(range(1, 5, 4), parents.get(0).of(index.text()));
    }

    @Test
    public void testSegment_withFewSentences_skipsTheModel() {
        ScriptedCausalLm model = lm(1, 2);
        TextIndex index = new TextIndex(sentences(2, 4), SEGMENTER);
        assertEquals(List.of(index.text()), texts(index, new PerplexityStrategy(model, 0, 0, false, 300).split(index)));
        assertEquals(List.of(), new PerplexityStrategy(model, 0, 0, false, 300).split(new TextIndex(" ", SEGMENTER)));
        assertEquals(0, model.logProbTexts.size());
    }

    @Test
    public void testParse_readsOptionsAndDefaults() {
        ScriptedCausalLm lm = new ScriptedCausalLm();
        PerplexityStrategy s = (PerplexityStrategy) ChunkingConfig.parseStrategy("strategy",
            Map.of("type", "perplexity", "llm", "tiny", "max_words", 200), lm.models());
        assertEquals(0, s.threshold(), 0);
        assertEquals(200, s.mergeWords());
        assertEquals(false, s.overlap());
        assertTrue(s.usesModels());
        s = (PerplexityStrategy) ChunkingConfig.parseStrategy("strategy",
            Map.of("type", "perplexity", "llm", "tiny", "threshold", 0.5, "merge_words", 0, "overlap", true), lm.models());
        assertEquals(0.5, s.threshold(), 0);
        assertEquals(0, s.mergeWords());
        assertTrue(s.overlap());
    }

    @Test
    public void testParse_invalidOptions_nameTheField() {
        ScriptedCausalLm lm = new ScriptedCausalLm();
        ConfigException e = assertThrows(ConfigException.class,
            () -> ChunkingConfig.parseStrategy("strategy", Map.of("type", "perplexity"), lm.models()));
        assertEquals("strategy.llm", e.field());

        Map<String, Object> bad = new HashMap<>();
        bad.put("threshold", -0.1);
        bad.put("merge_words", 301);
        bad.put("overlap", "yes");
        bad.put("window", 3);
        for (var entry : bad.entrySet()) {
            Map<String, Object> config = new HashMap<>(Map.of("type", "perplexity", "llm", "tiny"));
            config.put(entry.getKey(), entry.getValue());
            e = assertThrows(ConfigException.class, () -> ChunkingConfig.parseStrategy("strategy", config, lm.models()));
            assertEquals("strategy." + entry.getKey(), e.field());
        }
        e = assertThrows(ConfigException.class, () -> ChunkingConfig.parseStrategy("strategy",
            Map.of("type", "perplexity", "llm", "tiny", "threshold", 101), lm.models()));
        assertEquals("[strategy.threshold] must be a number in [0.0, 100.0], got [101]", e.getMessage());
    }
}
