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

public class LogitsGuidedStrategyTests {
    private static final SentenceSegmenter SEGMENTER = SentenceSegmenter.english();

    /** Ten sentences of 4 words, θ = 20: windows of five sentences; EOS peaks after S3, S6 and S9. */
    private static ScriptedCausalLm peaks() {
        ScriptedCausalLm lm = new ScriptedCausalLm();
        lm.eos.put(3, 0.9);
        lm.eos.put(6, 0.8);
        lm.eos.put(9, 0.7);
        lm.eos.put(5, 0.5);
        return lm;
    }

    @Test
    public void testSegment_cutsAtEosArgmaxAndCarriesTheRemainderIntoTheNextWindow() {
        ScriptedCausalLm lm = peaks();
        TextIndex index = new TextIndex(sentences(10, 4), SEGMENTER);
        Segmentation seg = new LogitsGuidedStrategy(lm, "ρ", 0, 20).segment(index);

        assertEquals(List.of(range(1, 3, 4), range(4, 6, 4), range(7, 9, 4), range(10, 10, 4)), texts(index, seg.parents()));
        // window 2 starts with the remainder S4, S5 and is topped up to θ = 20 words (S4..S8)
        assertEquals(List.of(range(1, 5, 4), range(4, 8, 4), range(7, 10, 4)), lm.eosWindows);
        assertEquals(List.of("ρ", "ρ", "ρ"), lm.eosPrompts);
        // one evidence per forward pass, at absolute sentence ends, argmax so no threshold
        assertEquals(3, seg.evidence().size());
        Segmentation.Evidence second = seg.evidence().get(1);
        assertEquals(LogitsGuidedStrategy.SIGNAL, second.signal());
        assertEquals(index.text().indexOf("S4") + sentence(4, 4).length(), second.positions()[0]);
        assertArrayEquals(new double[] { 0.1, 0.5, 0.8, 0.1, 0.1 }, second.values(), 0);
        assertTrue(Double.isNaN(second.threshold()));
        ScriptedCausalLm.assertValidParents(index, seg.parents(), 20, false);
        assertEquals(seg.parents(), new LogitsGuidedStrategy(peaks(), "ρ", 0, 20).split(index));
    }

    @Test
    public void testSegment_whenTailIsBelowRemainderThreshold_keepsItWholeWithoutAForwardPass() {
        ScriptedCausalLm lm = peaks();
        TextIndex index = new TextIndex(sentences(10, 4), SEGMENTER);
        // the tail window S7..S10 has 16 words < 17: it is the last parent, S9's EOS peak is never read
        List<Span> parents = new LogitsGuidedStrategy(lm, "ρ", 17, 20).split(index);
        assertEquals(List.of(range(1, 3, 4), range(4, 6, 4), range(7, 10, 4)), texts(index, parents));
        assertEquals(2, lm.eosWindows.size());

        ScriptedCausalLm atThreshold = peaks();
        new LogitsGuidedStrategy(atThreshold, "ρ", 16, 20).split(index); // 16 is not below 16: scored
        assertEquals(3, atThreshold.eosWindows.size());
    }

    @Test
    public void testSegment_whenEosPeaksAtWindowEnd_takesTheWholeWindow() {
        ScriptedCausalLm lm = new ScriptedCausalLm();
        lm.eos.put(5, 0.9);
        lm.eos.put(7, 0.9);
        TextIndex index = new TextIndex(sentences(7, 4), SEGMENTER);
        List<Span> parents = new LogitsGuidedStrategy(lm, "ρ", 0, 20).split(index);
        assertEquals(List.of(range(1, 5, 4), range(6, 7, 4)), texts(index, parents));
    }

    /** A remote model that lists only its top alternatives: p(EOS) unknown (below 0.05) except where scripted. */
    private static ScriptedCausalLm topListsOnly(Map<Integer, Double> known) {
        ScriptedCausalLm lm = new ScriptedCausalLm();
        for (int id = 1; id <= 10; id++) {
            lm.eos.put(id, known.getOrDefault(id, CausalLm.unknownBelow(0.05)));
        }
        return lm;
    }

    @Test
    public void testSegment_whenTheModelCannotGiveEosInAWindow_failsNamingIt_insteadOfCuttingAfterTheFirstSentence() {
        TextIndex index = new TextIndex(sentences(10, 4), SEGMENTER);
        ScriptedCausalLm lm = topListsOnly(Map.of());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> new LogitsGuidedStrategy(lm, "ρ", 0, 20).split(index));
        assertTrue(e.getMessage(), e.getMessage().contains("[" + lm.name() + "]") && e.getMessage().contains("end-of-sequence"));
        // a known value below an unknown one's bound cannot be the argmax either
        ScriptedCausalLm low = topListsOnly(Map.of(3, 0.04));
        assertThrows(IllegalArgumentException.class, () -> new LogitsGuidedStrategy(low, "ρ", 0, 20).split(index));
    }

    @Test
    public void testSegment_unknownEosBelowTheBestKnownValue_stillCutsAtTheArgmax_andShowsUnknownAsNaN() {
        TextIndex index = new TextIndex(sentences(10, 4), SEGMENTER);
        ScriptedCausalLm lm = topListsOnly(Map.of(3, 0.9, 6, 0.8, 9, 0.7, 10, 0.2));
        Segmentation seg = new LogitsGuidedStrategy(lm, "ρ", 0, 20).segment(index);
        assertEquals(List.of(range(1, 3, 4), range(4, 6, 4), range(7, 9, 4), range(10, 10, 4)), texts(index, seg.parents()));
        double[] first = seg.evidence().get(0).values();
        assertEquals(0.9, first[2], 0);
        assertTrue(Double.isNaN(first[0]) && Double.isNaN(first[4]));
    }

    @Test
    public void testSegment_onTies_cutsAtTheEarliestSentence() {
        ScriptedCausalLm lm = new ScriptedCausalLm(); // 0.1 everywhere
        TextIndex index = new TextIndex(sentences(3, 4), SEGMENTER);
        List<Span> parents = new LogitsGuidedStrategy(lm, "ρ", 0, 20).split(index);
        assertEquals(List.of(range(1, 1, 4), range(2, 2, 4), range(3, 3, 4)), texts(index, parents));
    }

    @Test
    public void testSegment_sentenceLongerThanTheta_isCutIntoWindowsAndNoWindowExceedsTheta() {
        ScriptedCausalLm lm = peaks();
        String text = sentence(1, 5) + " " + sentence(2, 50) + " " + sentence(3, 7) + "\n\n" + sentence(4, 12);
        TextIndex index = new TextIndex(text, SEGMENTER);
        List<Span> parents = new LogitsGuidedStrategy(lm, "ρ", 0, 20).split(index);
        ScriptedCausalLm.assertValidParents(index, parents, 20, false);
        for (String window : lm.eosWindows) {
            assertTrue(window, new TextIndex(window, SEGMENTER).totalWords() <= 20);
        }
        assertTrue(parents.size() >= 4);
    }

    @Test
    public void testSegment_longText_scoresOneWindowPerParentAndStaysValid() {
        ScriptedCausalLm lm = new ScriptedCausalLm();
        for (int i = 1; i <= 3000; i += 7) {
            lm.eos.put(i, 0.9);
        }
        TextIndex index = new TextIndex(sentences(3000, 6), SEGMENTER);
        List<Span> parents = new LogitsGuidedStrategy(lm, LogitsGuidedStrategy.DEFAULT_PROMPT, 75, 300).split(index);
        ScriptedCausalLm.assertValidParents(index, parents, 300, false);
        // θ = 300 holds 50 sentences, so every window sees seven peaks and takes the first (every 7th sentence)
        assertEquals(range(1, 1, 6), parents.get(0).of(index.text()));
        assertEquals(range(2, 8, 6), parents.get(1).of(index.text()));
        assertTrue(lm.eosWindows.size() <= parents.size());
    }

    @Test
    public void testSegment_emptyOrBlankText_hasNoParentsAndNoModelCalls() {
        ScriptedCausalLm lm = new ScriptedCausalLm();
        assertEquals(List.of(), new LogitsGuidedStrategy(lm, "ρ", 0, 20).split(new TextIndex("  \n ", SEGMENTER)));
        assertEquals(0, lm.eosWindows.size());
    }

    @Test
    public void testParse_readsOptionsAndDefaults() {
        ScriptedCausalLm lm = new ScriptedCausalLm();
        LogitsGuidedStrategy s = (LogitsGuidedStrategy) ChunkingConfig.parseStrategy("strategy",
            Map.of("type", "logits_guided", "llm", "tiny"), lm.models());
        assertEquals(300, s.maxWords());
        assertEquals(75, s.remainderWords());
        assertEquals(LogitsGuidedStrategy.DEFAULT_PROMPT, s.prompt());
        assertTrue(s.usesModels());
        s = (LogitsGuidedStrategy) ChunkingConfig.parseStrategy("strategy",
            Map.of("type", "logits_guided", "llm_model_id", "abc", "max_words", 200, "remainder_words", 10, "prompt", "Go on:"),
            lm.models());
        assertEquals(200, s.maxWords());
        assertEquals(10, s.remainderWords());
        assertEquals("Go on:", s.prompt());
    }

    @Test
    public void testParse_invalidOptions_nameTheField() {
        ScriptedCausalLm lm = new ScriptedCausalLm();
        ConfigException e = assertThrows(ConfigException.class,
            () -> ChunkingConfig.parseStrategy("strategy", Map.of("type", "logits_guided"), lm.models()));
        assertEquals("strategy.llm", e.field());
        assertTrue(e.getMessage(), e.getMessage().contains("[strategy.llm_model_id]"));

        Map<String, Object> bad = new HashMap<>();
        bad.put("remainder_words", 301);
        bad.put("prompt", " ");
        bad.put("temperature", 1);
        for (var entry : bad.entrySet()) {
            Map<String, Object> config = new HashMap<>(Map.of("type", "logits_guided", "llm", "tiny"));
            config.put(entry.getKey(), entry.getValue());
            e = assertThrows(ConfigException.class, () -> ChunkingConfig.parseStrategy("strategy", config, lm.models()));
            assertEquals("strategy." + entry.getKey(), e.field());
        }
        e = assertThrows(ConfigException.class, () -> ChunkingConfig.parseStrategy("strategy",
            Map.of("type", "logits_guided", "llm", "tiny", "temperature", 1), lm.models()));
        assertTrue(e.getMessage(), e.getMessage().contains("supported: [llm, llm_model_id, max_tokens, max_words, prompt, remainder_words, type]"));
        e = assertThrows(ConfigException.class, () -> ChunkingConfig.parseStrategy("strategy",
            Map.of("type", "logits_guided", "llm", "tiny", "llm_model_id", "x"), lm.models()));
        assertEquals("strategy.llm", e.field());
    }
}
