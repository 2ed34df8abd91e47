package io.strata.ingest;

import io.strata.chunkindex.write.ChunkWriter;
import io.strata.chunkindex.store.Slicing;
import io.strata.chunking.ChildEmbedding;
import io.strata.chunking.SentenceSegmenter;
import io.strata.inference.InferenceService;
import io.strata.stats.StrataStats;
import org.junit.Test;
import org.opensearch.OpenSearchParseException;
import org.opensearch.common.settings.Settings;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotEquals;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

/** The processor's {@code children: {"embedding": …}} option: parsed once, refused at pipeline creation where it cannot work. */
public class ChildEmbeddingConfigTests {
    private final StrataStats stats = new StrataStats();
    private final InferenceService inference = new InferenceService(Settings.EMPTY,
        Path.of(System.getProperty("strata.models.dir", "target/models")), () -> null, null, null, stats);
    private final MultiGranularChunkingProcessor.Factory factory = new MultiGranularChunkingProcessor.Factory(
        new ChunkWriter.Services(null, null, inference, null, stats, Slicing.DEFAULTS), SentenceSegmenter.english(), null);

    private MultiGranularChunkingProcessor create(Map<String, Object> extra) {
        Map<String, Object> config = new HashMap<>(Map.of("field", "body", "target_index", "chunks"));
        config.putAll(extra);
        return factory.create(Map.of(), "tag", null, config);
    }

    private String rejected(Map<String, Object> extra) {
        return assertThrows(OpenSearchParseException.class, () -> create(extra)).getMessage();
    }

    @Test
    public void testChildren_absentOrEmpty_isSeparate() {
        assertEquals(ChildEmbedding.SEPARATE, create(Map.of()).writer().childEmbedding());
        assertEquals(ChildEmbedding.SEPARATE, create(Map.of("children", Map.of())).writer().childEmbedding());
        assertEquals(ChildEmbedding.SEPARATE, create(Map.of("children", Map.of("embedding", "separate"))).writer().childEmbedding());
    }

    @Test
    public void testChildren_late_withTheDefaultMeanPoolingModel_isAccepted() {
        assertEquals(ChildEmbedding.LATE, create(Map.of("children", Map.of("embedding", "late"))).writer().childEmbedding());
    }

    @Test
    public void testChildren_unknownValue_namesTheFieldAndTheAllowedValues() {
        String m = rejected(Map.of("children", Map.of("embedding", "early")));
        assertTrue(m, m.contains("[children.embedding]") && m.contains("[separate, late]") && m.contains("[early]"));
    }

    @Test
    public void testChildren_notAnObjectOrUnknownKey_isRefusedNamingIt() {
        String notObject = rejected(Map.of("children", "late"));
        assertTrue(notObject, notObject.contains("[children]") && notObject.contains("{\"embedding\": \"late\"}"));
        String unknown = rejected(Map.of("children", Map.of("embedding", "late", "pooling", "max")));
        assertTrue(unknown, unknown.contains("[children.pooling]") && unknown.contains("[embedding, keep_redundant]"));
    }

    @Test
    public void testChildren_late_withAClsModel_isRefusedSayingWhy() {
        String m = rejected(Map.of("children", Map.of("embedding", "late"), "model", "bge-small-en-v15-q"));
        assertTrue(m, m.contains("[children.embedding]") && m.contains("pooling: cls") && m.contains("[separate]"));
    }

    @Test
    public void testChildren_late_withAnMlCommonsModel_isRefused() {
        String m = rejected(Map.of("children", Map.of("embedding", "late"), "model_id", "abc"));
        assertTrue(m, m.contains("[children.embedding]") && m.contains("ml-commons model [abc]") && m.contains("token states"));
    }

    @Test
    public void testChildren_late_withoutVectors_isRefused() {
        String m = rejected(Map.of("children", Map.of("embedding", "late"), "embed", false));
        assertTrue(m, m.contains("[children.embedding]") && m.contains("[embed] is false"));
    }

    @Test
    public void testChildren_keepRedundant_keepsEveryChild_andIsAnotherConfigIdentity() {
        MultiGranularChunkingProcessor keeping = create(Map.of("children", Map.of("keep_redundant", true)));
        assertTrue(keeping.writer().chunker().keepsRedundantChildren());
        assertEquals(ChildEmbedding.SEPARATE, keeping.writer().childEmbedding());
        MultiGranularChunkingProcessor now = create(Map.of());
        assertFalse(now.writer().chunker().keepsRedundantChildren());
        assertNotEquals(now.writer().configHash(), keeping.writer().configHash());
        // false is the default: the same identity as leaving it out
        assertEquals(now.writer().configHash(), create(Map.of("children", Map.of("keep_redundant", false))).writer().configHash());
        assertTrue(create(Map.of("children", Map.of("keep_redundant", true, "embedding", "late"))).writer().chunker()
            .keepsRedundantChildren());
    }

    @Test
    public void testChildren_keepRedundantNotABoolean_isRefusedNamingIt() {
        String m = rejected(Map.of("children", Map.of("keep_redundant", "yes")));
        assertTrue(m, m.contains("[children.keep_redundant]") && m.contains("must be true or false") && m.contains("[yes]"));
        String unknown = rejected(Map.of("children", Map.of("keep", true)));
        assertTrue(unknown, unknown.contains("[children.keep]") && unknown.contains("keep_redundant"));
    }
}
