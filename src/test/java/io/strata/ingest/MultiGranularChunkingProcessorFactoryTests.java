package io.strata.ingest;

import io.strata.chunkindex.write.ChunkWriter;
import io.strata.chunkindex.store.Slicing;
import io.strata.model.ModelRef;
import io.strata.chunking.SentenceSegmenter;
import io.strata.inference.InferenceService;
import io.strata.stats.StrataStats;
import org.junit.Test;
import org.opensearch.common.settings.Settings;

import java.nio.file.Path;
import org.opensearch.OpenSearchParseException;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotEquals;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

public class MultiGranularChunkingProcessorFactoryTests {
    private final StrataStats stats = new StrataStats();
    private final InferenceService inference = new InferenceService(Settings.EMPTY,
        Path.of(System.getProperty("strata.models.dir", "target/models")), () -> null, null, null, stats);
    private final MultiGranularChunkingProcessor.Factory factory = new MultiGranularChunkingProcessor.Factory(
        new ChunkWriter.Services(null, null, inference, null, stats, Slicing.DEFAULTS), SentenceSegmenter.english(), null);

    private MultiGranularChunkingProcessor create(Map<String, Object> config) {
        return factory.create(Map.of(), "tag", null, new HashMap<>(config));
    }

    private OpenSearchParseException rejected(Map<String, Object> config) {
        return assertThrows(OpenSearchParseException.class, () -> create(config));
    }

    @Test
    public void testCreate_minimalConfig_usesRecursive300WithHalfAndQuarterChildren() {
        MultiGranularChunkingProcessor p = create(Map.of("field", "body", "target_index", "chunks"));
        assertEquals("body", p.writer().field());
        assertEquals("chunks", p.writer().targetTemplate());
        assertEquals("recursive", p.writer().chunker().strategy().type());
        assertEquals(300, p.writer().chunker().strategy().maxWords());
        assertEquals(List.of(0.5, 0.25), p.writer().chunker().granularities());
        assertEquals(ModelRef.embedded("e5-small-v2-q"), p.writer().model());
    }

    private String configHash(Map<String, Object> config) {
        return create(config).writer().configHash();
    }

    /** The config identity: what cuts or embeds differently changes it; where chunks go and which texts are taken do not. */
    @Test
    public void testConfigHash_changesWithCuttingAndEmbedding_notWithTargetOrInputLimits() {
        Map<String, Object> base = Map.of("field", "body", "target_index", "chunks", "embed", false);
        String hash = configHash(base);
        assertEquals(24, hash.length());
        assertEquals(hash, configHash(with(base, "target_index", "{{_index}}-chunks")));
        assertEquals(hash, configHash(with(base, "copy_fields", List.of("title"))));
        assertEquals(hash, configHash(with(base, "ignore_missing", true)));
        assertEquals(hash, configHash(with(base, "max_chars", 1000)));
        // defaults written out: the type, θ and granularities are compared as parsed
        assertEquals(hash, configHash(with(base, "strategy", Map.of("type", "recursive", "max_words", 300))));
        assertEquals(hash, configHash(with(base, "granularities", List.of(0.5, 0.25))));

        assertNotEquals(hash, configHash(with(base, "strategy", Map.of("type", "recursive", "max_words", 200))));
        assertNotEquals(hash, configHash(with(base, "strategy", Map.of("type", "paragraph", "max_words", 300))));
        assertNotEquals(hash, configHash(with(base, "granularities", List.of(0.5))));
        assertNotEquals(hash, configHash(with(base, "field", "text")));
        assertNotEquals(hash, configHash(with(base, "format", "markdown")));
        assertNotEquals(configHash(with(base, "strategy", Map.of("type", "sentence", "sentences", 1))),
            configHash(with(base, "strategy", Map.of("type", "sentence", "sentences", 2))));

        Map<String, Object> embedded = Map.of("field", "body", "target_index", "chunks");
        assertNotEquals(hash, configHash(embedded));
        // the default model is resolved: naming it is the same config, naming another is not
        assertEquals(configHash(embedded), configHash(with(embedded, "model", "e5-small-v2-q")));
        assertNotEquals(configHash(embedded), configHash(with(embedded, "model", "bge-small-en-v15-q")));
    }

    private static Map<String, Object> with(Map<String, Object> base, String key, Object value) {
        Map<String, Object> out = new HashMap<>(base);
        out.put(key, value);
        return out;
    }

    @Test
    public void testCreate_targetIndexTemplate_namesTheChunkIndexAfterTheConcreteIndex_andRefusesOtherPlaceholders() {
        MultiGranularChunkingProcessor p = create(Map.of("field", "body", "target_index", "{{_index}}-chunks"));
        assertEquals("logs-000002-chunks", p.writer().targetFor("logs-000002"));
        assertEquals("fixed", create(Map.of("field", "body", "target_index", "fixed")).writer().targetFor("logs-000002"));
        assertTrue(rejected(Map.of("field", "body", "target_index", "{{_id}}-chunks")).getMessage()
            .contains("may only contain the placeholder {{_index}}"));
        assertTrue(rejected(Map.of("field", "body", "target_index", "{{_index}}-Chunks")).getMessage().contains("must be lowercase"));
    }

    @Test
    public void testCreate_badOptions_nameTheFieldOnce() {
        // OpenSearch puts the property's name before the reason: the reason must not name it again
        assertEquals("[granularities] must be strictly decreasing (level 1 is the coarsest child), got [0.25, 0.5]",
            rejected(Map.of("field", "b", "target_index", "c", "granularities", List.of(0.25, 0.5))).getMessage());
        assertEquals("[strategy.max_tokens] is supported with [format] text only, got [markdown]: use [strategy.max_words] (no chunk "
            + "exceeds the embedding model's token limit either way)", rejected(Map.of("field", "b", "target_index", "c", "format",
            "markdown", "strategy", Map.of("type", "recursive", "max_tokens", 128))).getMessage());
    }

    @Test
    public void testCreate_modelChoices() {
        assertEquals(ModelRef.embedded("bge-small-en-v15-q"),
            create(Map.of("field", "b", "target_index", "c", "model", "bge-small-en-v15-q")).writer().model());
        assertEquals(new ModelRef(null, "abc"), create(Map.of("field", "b", "target_index", "c", "model_id", "abc")).writer().model());
        assertEquals(null, create(Map.of("field", "b", "target_index", "c", "embed", false)).writer().model());
        assertTrue(rejected(Map.of("field", "b", "target_index", "c", "model", "nope")).getMessage()
            .contains("unknown model [nope]"));
        assertTrue(rejected(Map.of("field", "b", "target_index", "c", "model", "../etc")).getMessage()
            .contains("must be the name of a model folder"));
        assertTrue(rejected(Map.of("field", "b", "target_index", "c", "model", "x", "model_id", "y")).getMessage()
            .contains("cannot be combined"));
        assertTrue(rejected(Map.of("field", "b", "target_index", "c", "embed", false, "model", "bge-small-en-v15-q")).getMessage()
            .contains("[embed] is false but a model is configured"));
    }

    @Test
    public void testCreate_fullConfig() {
        MultiGranularChunkingProcessor p = create(Map.of("field", "body", "target_index", "chunks", "strategy",
            Map.of("type", "sentence", "sentences", 2, "max_words", 120), "granularities", List.of(0.5), "copy_fields",
            List.of("title", "meta.author"), "ignore_missing", true, "max_chars", 5000));
        assertEquals("sentence", p.writer().chunker().strategy().type());
        assertEquals(120, p.writer().chunker().strategy().maxWords());
        assertEquals(List.of(0.5), p.writer().chunker().granularities());
    }

    @Test
    public void testCreate_errorsNameTheFieldAndTheAllowedValues() {
        assertEquals("[field] required property is missing", rejected(Map.of("target_index", "c")).getMessage());
        assertTrue(rejected(Map.of("field", "b", "target_index", "c", "size", 3)).getMessage()
            .startsWith("[size] unknown option [size]; supported: [children, context, copy_fields, embed, field, format, granularities"));
        OpenSearchParseException e = rejected(Map.of("field", "b", "target_index", "c", "strategy", Map.of("type", "nope")));
        assertEquals("strategy.type", e.getMetadata("opensearch.property_name").get(0));
        assertTrue(e.getMessage(), e.getMessage().contains("unknown strategy [nope]; supported: " + io.strata.chunking.ChunkingConfig.strategyTypes()));
        // each message names its field once: OpenSearch adds the property's name, so the reason must not repeat it
        assertEquals("[strategy.threshold] unknown option [threshold] for strategy [semantic]; supported: [breakpoint_threshold_amount, "
            + "breakpoint_threshold_type, buffer_size, max_tokens, max_words, model, model_id, type]",
            rejected(Map.of("field", "b", "target_index", "c", "strategy", Map.of("type", "semantic", "threshold", "high"))).getMessage());
        assertEquals("[model] must be the name of a model folder in the plugin's config directory ([a-z0-9][a-z0-9._-]{0,99}), got "
            + "[../etc]", rejected(Map.of("field", "b", "target_index", "c", "model", "../etc")).getMessage());
        assertTrue(rejected(Map.of("field", "b", "target_index", "UPPER")).getMessage().contains("must be lowercase"));
        assertTrue(rejected(Map.of("field", "b", "target_index", "a,b")).getMessage().contains("is not a valid index name"));
        assertTrue(rejected(Map.of("field", "b", "target_index", "c", "copy_fields", List.of("children.x"))).getMessage()
            .contains("would overwrite a chunk field"));
        assertTrue(rejected(Map.of("field", "b", "target_index", "c", "copy_fields", "title")).getMessage()
            .contains("must be a list of source field names"));
        assertTrue(rejected(Map.of("field", "b", "target_index", "c", "max_chars", 0)).getMessage().contains("positive integer"));
        assertTrue(rejected(Map.of("field", "b", "target_index", "c", "granularities", List.of(0.5, 0.7))).getMessage()
            .contains("strictly decreasing"));
        OpenSearchParseException tiny = rejected(Map.of("field", "b", "target_index", "c", "strategy",
            Map.of("type", "recursive", "max_words", 1)));
        assertEquals("granularities", tiny.getMetadata("opensearch.property_name").get(0));
        assertTrue(tiny.getMessage(), tiny.getMessage().contains("less than one word"));
    }

    @Test
    public void testCreate_context_isReadOnce_andItsErrorsNameTheFieldAndTheAllowedValues() {
        MultiGranularChunkingProcessor p = create(Map.of("field", "b", "target_index", "c", "format", "markdown", "context",
            Map.of("fields", List.of("title", "meta.author"), "lexical", true)));
        assertEquals(new io.strata.chunking.ChunkContext(List.of("title", "meta.author"), true, true), p.writer().context());
        assertEquals(null, create(Map.of("field", "b", "target_index", "c")).writer().context());
        OpenSearchParseException section = rejected(Map.of("field", "b", "target_index", "c", "context", Map.of("section", true)));
        assertEquals("context.section", section.getMetadata("opensearch.property_name").get(0));
        assertTrue(section.getMessage(), section.getMessage().contains("needs [format] [markdown, html]: format [text] has no sections"));
        OpenSearchParseException unknown = rejected(Map.of("field", "b", "target_index", "c", "context", Map.of("field", "title")));
        assertEquals("context.field", unknown.getMetadata("opensearch.property_name").get(0));
        assertTrue(unknown.getMessage(), unknown.getMessage().contains("supported: [fields, lexical, section]"));
        assertTrue(rejected(Map.of("field", "b", "target_index", "c", "embed", false, "context", Map.of("fields", List.of("t"))))
            .getMessage().contains("has no effect: [embed] is false and [context.lexical] is false"));
    }

    @Test
    public void testCreate_emptyFieldAndNullStrategy_areRejectedNotDefaulted() {
        OpenSearchParseException empty = rejected(Map.of("field", "", "target_index", "c"));
        assertEquals("field", empty.getMetadata("opensearch.property_name").get(0));
        assertTrue(empty.getMessage(), empty.getMessage().contains("got an empty string"));
        Map<String, Object> config = new HashMap<>(Map.of("field", "b", "target_index", "c"));
        config.put("strategy", null);
        OpenSearchParseException nullStrategy = assertThrows(OpenSearchParseException.class,
            () -> factory.create(Map.of(), "tag", null, config));
        assertEquals("strategy", nullStrategy.getMetadata("opensearch.property_name").get(0));
        assertTrue(nullStrategy.getMessage(), nullStrategy.getMessage().contains("[strategy] must be an object"));
    }

    @Test
    public void testCreate_nullFieldOrTargetIndex_isRejectedAsMissing() {
        for (String key : List.of("field", "target_index")) {
            Map<String, Object> config = new HashMap<>(Map.of("field", "b", "target_index", "c"));
            config.put(key, null);
            OpenSearchParseException e = assertThrows(OpenSearchParseException.class, () -> factory.create(Map.of(), "tag", null, config));
            assertEquals(key, e.getMetadata("opensearch.property_name").get(0));
            assertTrue(e.getMessage(), e.getMessage().contains("required property is missing"));
        }
    }

    @Test
    public void testCreate_ingestMetadataAsTheField_isRejected_soAForeachCannotChunkEachElementAsTheWholeDocument() {
        for (String field : List.of("_ingest._value", "_ingest")) {
            OpenSearchParseException e = rejected(Map.of("field", field, "target_index", "c"));
            assertEquals("field", e.getMetadata("opensearch.property_name").get(0));
            assertTrue(e.getMessage(), e.getMessage().startsWith("[field] must name a field of the document, not ingest metadata, got ["
                + field + "]") && e.getMessage().contains("[foreach]") && e.getMessage().contains("[join]"));
        }
        assertEquals("_ingestion_text", create(Map.of("field", "_ingestion_text", "target_index", "c")).writer().field());
    }
}
