package io.strata.chunking;

import org.junit.Test;

import java.util.List;
import java.util.Map;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

public class ChunkingConfigTests {

    @Test
    public void testParseStrategy_withoutConfig_isRecursiveWith300Words() {
        ChunkingStrategy s = ChunkingConfig.parseStrategy("strategy", null);
        assertEquals("recursive", s.type());
        assertEquals(300, s.maxWords());
    }

    @Test
    public void testParseStrategy_readsEachType() {
        assertEquals(200, ChunkingConfig.parseStrategy("strategy", Map.of("type", "recursive", "max_words", 200)).maxWords());
        SentenceStrategy sentence = (SentenceStrategy) ChunkingConfig.parseStrategy("strategy",
            Map.of("type", "sentence", "sentences", 3));
        assertEquals(3, sentence.sentencesPerChunk());
        assertEquals("paragraph", ChunkingConfig.parseStrategy("strategy", Map.of("type", "paragraph")).type());
    }

    @Test
    public void testParseStrategy_unknownType_namesTheFieldAndTheSupportedTypes() {
        ConfigException e = assertThrows(ConfigException.class,
            () -> ChunkingConfig.parseStrategy("strategy", Map.of("type", "magic")));
        assertEquals("strategy.type", e.field());
        assertEquals("[strategy.type] unknown strategy [magic]; supported: " + ChunkingConfig.strategyTypes(), e.getMessage());
        assertTrue(ChunkingConfig.strategyTypes().containsAll(List.of("recursive", "sentence", "paragraph", "logits_guided", "perplexity",
            "margin_sampling", "boundary_classifier", "fixed_token", "semantic", "pseudo_instruction")));
    }

    @Test
    public void testParseStrategy_unknownOption_listsTheSupportedOnes() {
        ConfigException e = assertThrows(ConfigException.class,
            () -> ChunkingConfig.parseStrategy("strategy", Map.of("type", "paragraph", "overlap", 10)));
        assertEquals("strategy.overlap", e.field());
        assertTrue(e.getMessage(), e.getMessage().contains("supported: [max_tokens, max_words, type]"));
    }

    @Test
    public void testParseStrategy_maxWordsOutOfRangeOrNotAnInteger_isRejected() {
        for (Object bad : List.of(0, -1, 8193, 2.5, "300")) {
            ConfigException e = assertThrows(ConfigException.class,
                () -> ChunkingConfig.parseStrategy("strategy", Map.of("type", "recursive", "max_words", bad)));
            assertEquals("strategy.max_words", e.field());
        }
    }

    @Test
    public void testParseGranularities_defaultsToHalfAndQuarter_emptyMeansParentsOnly() {
        assertEquals(List.of(0.5, 0.25), ChunkingConfig.parseGranularities("granularities", null, 300));
        assertEquals(List.of(), ChunkingConfig.parseGranularities("granularities", List.of(), 300));
        assertEquals(List.of(0.6, 0.3, 0.1), ChunkingConfig.parseGranularities("granularities", List.of(0.6, 0.3, 0.1), 300));
    }

    @Test
    public void testParseGranularities_rejectsOutOfRangeIncreasingTooManyAndSubWordSizes() {
        for (Object bad : List.of(List.of(1.0), List.of(0.0), List.of(0.25, 0.5), List.of(0.5, 0.5), "0.5",
            List.of(0.9, 0.7, 0.5, 0.3, 0.1), List.of("half"))) {
            assertThrows(String.valueOf(bad), ConfigException.class, () -> ChunkingConfig.parseGranularities("granularities", bad, 300));
        }
        ConfigException e = assertThrows(ConfigException.class,
            () -> ChunkingConfig.parseGranularities("granularities", List.of(0.1), 4));
        assertTrue(e.getMessage(), e.getMessage().contains("less than one word"));
    }

    @Test
    public void testParseGranularities_defaultsThatGiveSubWordChildren_areAConfigErrorNamingTheField() {
        // θ 1 with the default [0.5, 0.25]: θ/4 rounds to 0 words; this once reached RecursiveSplitter as a 500
        ConfigException e = assertThrows(ConfigException.class, () -> ChunkingConfig.parseGranularities("granularities", null, 1));
        assertEquals("granularities", e.field());
        assertTrue(e.getMessage(), e.getMessage().contains("default [0.5, 0.25]") && e.getMessage().contains("less than one word"));
        assertEquals(List.of(0.5, 0.25), ChunkingConfig.parseGranularities("granularities", null, 2));
        assertEquals(List.of(), ChunkingConfig.parseGranularities("granularities", List.of(), 1));
    }
}
