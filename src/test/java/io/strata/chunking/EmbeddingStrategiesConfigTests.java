package io.strata.chunking;

import org.junit.Test;

import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertSame;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

/** Parsing and validation of the {@code semantic} and {@code pseudo_instruction} strategy configs. */
public class EmbeddingStrategiesConfigTests {
    private static final ScriptedEmbedder PIPELINE = new ScriptedEmbedder(Map.of("a", new float[] { 1, 0 }));
    private static final ScriptedEmbedder OTHER = new ScriptedEmbedder(Map.of("a", new float[] { 0, 1 }));
    private static final TextGenerator LLM = new PseudoInstructionStrategyTests.ScriptedGenerator("[a]");

    /** The pipeline's embedder for no name, OTHER for model "other", LLM for llm_model_id "llm-1"; anything else fails. */
    private static final StrategyModels MODELS = new StrategyModels() {
        @Override
        public Embedder embedder(String field, Name name) {
            if (name == null) {
                return PIPELINE;
            }
            if ("other".equals(name.model())) {
                return OTHER;
            }
            throw new ConfigException(field, String.format(Locale.ROOT, "[%s] unknown model", field));
        }

        @Override
        public CausalLm causalLm(String field, Name name) {
            throw new ConfigException(field, "no");
        }

        @Override
        public TextGenerator generator(String field, Name name) {
            if ("llm-1".equals(name.modelId())) {
                return LLM;
            }
            throw new ConfigException(field, String.format(Locale.ROOT, "[%s] model [%s] is not a text generator", field, name));
        }

    };

    private static ChunkingStrategy parse(Object... keyValues) {
        Map<String, Object> map = new HashMap<>();
        for (int i = 0; i < keyValues.length; i += 2) {
            map.put((String) keyValues[i], keyValues[i + 1]);
        }
        return ChunkingConfig.parseStrategy("strategy", map, MODELS);
    }

    private static ConfigException rejected(Object... keyValues) {
        return assertThrows(ConfigException.class, () -> parse(keyValues));
    }

    @Test
    public void testParseSemantic_defaultsAreLangChains() {
        SemanticStrategy s = (SemanticStrategy) parse("type", "semantic");
        assertEquals(1, s.bufferSize());
        assertEquals(SemanticStrategy.ThresholdType.PERCENTILE, s.thresholdType());
        assertEquals(95, s.thresholdAmount(), 0);
        assertEquals(300, s.maxWords());
        assertSame(PIPELINE, s.embedder());
        assertTrue(s.usesModels());
    }

    @Test
    public void testParseSemantic_eachTypeHasItsDefaultAmount_andAnAmountOverridesIt() {
        assertEquals(3, ((SemanticStrategy) parse("type", "semantic", "breakpoint_threshold_type", "standard_deviation"))
            .thresholdAmount(), 0);
        assertEquals(1.5, ((SemanticStrategy) parse("type", "semantic", "breakpoint_threshold_type", "interquartile"))
            .thresholdAmount(), 0);
        assertEquals(95, ((SemanticStrategy) parse("type", "semantic", "breakpoint_threshold_type", "gradient"))
            .thresholdAmount(), 0);
        assertEquals(0.8, ((SemanticStrategy) parse("type", "semantic", "breakpoint_threshold_type", "similarity"))
            .thresholdAmount(), 0);
        SemanticStrategy s = (SemanticStrategy) parse("type", "semantic", "breakpoint_threshold_type", "interquartile",
            "breakpoint_threshold_amount", 2, "buffer_size", 0, "max_words", 120, "model", "other");
        assertEquals(2, s.thresholdAmount(), 0);
        assertEquals(0, s.bufferSize());
        assertEquals(120, s.maxWords());
        assertSame(OTHER, s.embedder());
    }

    @Test
    public void testParseSemantic_badValues_nameTheFieldAndWhatIsAllowed() {
        ConfigException e = rejected("type", "semantic", "breakpoint_threshold_type", "median");
        assertEquals("strategy.breakpoint_threshold_type", e.field());
        assertTrue(e.getMessage(), e.getMessage().contains("[percentile, standard_deviation, interquartile, gradient, similarity]"));
        for (Object bad : List.of(-1, 100.5, "95", Double.NaN)) {
            e = rejected("type", "semantic", "breakpoint_threshold_amount", bad);
            assertEquals("strategy.breakpoint_threshold_amount", e.field());
            assertTrue(e.getMessage(), e.getMessage().contains("[0.0, 100.0]"));
        }
        for (Object bad : List.of(-1, 21, 1.5)) {
            assertEquals("strategy.buffer_size", rejected("type", "semantic", "buffer_size", bad).field());
        }
        // a similarity is a cosine: at most 1
        e = rejected("type", "semantic", "breakpoint_threshold_type", "similarity", "breakpoint_threshold_amount", 80);
        assertEquals("strategy.breakpoint_threshold_amount", e.field());
        assertTrue(e.getMessage(), e.getMessage().contains("[0.0, 1.0]"));
        e = rejected("type", "semantic", "number_of_chunks", 4);
        assertEquals("strategy.number_of_chunks", e.field());
        assertTrue(e.getMessage(), e.getMessage().contains(
            "supported: [breakpoint_threshold_amount, breakpoint_threshold_type, buffer_size, max_tokens, max_words, model, model_id, type]"));
        assertEquals("strategy.model", rejected("type", "semantic", "model", "other", "model_id", "x").field());
        assertEquals("strategy.model", rejected("type", "semantic", "model", "missing").field());
    }

    @Test
    public void testParseSemantic_withoutModels_failsNamingTheModelField() {
        ConfigException e = assertThrows(ConfigException.class,
            () -> ChunkingConfig.parseStrategy("strategy", Map.of("type", "semantic")));
        assertEquals("strategy.model", e.field());
    }

    @Test
    public void testParsePseudoInstruction_withoutLlm_isTheMeanVariant() {
        PseudoInstructionStrategy s = (PseudoInstructionStrategy) parse("type", "pseudo_instruction");
        assertEquals("mean", s.variant());
        assertNull(s.generator());
        assertSame(PIPELINE, s.embedder());
        assertEquals(300, s.maxWords());
        assertTrue(s.usesModels());
    }

    @Test
    public void testParsePseudoInstruction_withLlmModelId_isTheSummaryVariant() {
        PseudoInstructionStrategy s = (PseudoInstructionStrategy) parse("type", "pseudo_instruction", "llm_model_id", "llm-1",
            "model", "other", "max_words", 200, "summary_max_tokens", 128, "llm_max_input_words", 1000);
        assertEquals("summary", s.variant());
        assertSame(LLM, s.generator());
        assertSame(OTHER, s.embedder());
        assertEquals(200, s.maxWords());
    }

    @Test
    public void testParsePseudoInstruction_badValues_nameTheField() {
        assertEquals("strategy.llm_model_id", rejected("type", "pseudo_instruction", "llm_model_id", "unknown").field());
        assertEquals("strategy.llm_model_id", rejected("type", "pseudo_instruction", "llm_model_id", "").field());
        assertEquals("strategy.llm", rejected("type", "pseudo_instruction", "llm", "a", "llm_model_id", "llm-1").field());
        assertEquals("strategy.summary_max_tokens", rejected("type", "pseudo_instruction", "summary_max_tokens", 0).field());
        assertEquals("strategy.llm_max_input_words", rejected("type", "pseudo_instruction", "llm_max_input_words", -5).field());
        ConfigException e = rejected("type", "pseudo_instruction", "threshold", 0.5);
        assertTrue(e.getMessage(), e.getMessage().contains("supported: [instruction, llm, llm_max_input_words, llm_model_id, "
            + "max_tokens, max_words, model, model_id, summary_max_tokens, threshold_sigmas, type]"));
        e = rejected("type", "pseudo_instruction", "instruction", "summary");
        assertEquals("strategy.instruction", e.field());
        assertTrue(e.getMessage(), e.getMessage().contains("needs an LLM"));
        e = rejected("type", "pseudo_instruction", "instruction", "sent", "llm_model_id", "llm-1");
        assertEquals("strategy.instruction", e.field());
        assertTrue(e.getMessage(), e.getMessage().contains("uses no LLM"));
        e = rejected("type", "pseudo_instruction", "instruction", "random");
        assertTrue(e.getMessage(), e.getMessage().contains("[mean, summary, sent]"));
        e = rejected("type", "pseudo_instruction", "threshold_sigmas", 3.5);
        assertEquals("strategy.threshold_sigmas", e.field());
        assertTrue(e.getMessage(), e.getMessage().contains("[-3.0, 3.0]"));
    }

    @Test
    public void testParsePseudoInstruction_sentVariantAndThresholdSigmas() {
        PseudoInstructionStrategy s = (PseudoInstructionStrategy) parse("type", "pseudo_instruction", "instruction", "sent",
            "threshold_sigmas", -1);
        assertEquals("sent", s.variant());
        assertEquals("pseudo_instruction/sent", s.label());
        assertEquals(-1, s.thresholdSigmas(), 0);
        assertEquals(0, ((PseudoInstructionStrategy) parse("type", "pseudo_instruction")).thresholdSigmas(), 0);
    }
}
