package io.strata.ingest;

import io.strata.chunking.ChildEmbedding;
import io.strata.chunking.ConfigException;
import io.strata.chunking.ConfigMap;
import io.strata.inference.InferenceService;
import io.strata.model.ModelRef;
import io.strata.stats.StrataStats;
import org.junit.Test;
import org.opensearch.common.settings.Settings;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

/**
 * {@code _chunk}'s {@code children}, {@code vectors}, {@code query_text} and {@code compare_embedding}: read the way the
 * processor reads {@code children} (the same errors), refused naming the field and what is allowed.
 */
public class PreviewEmbeddingsTests {
    private final InferenceService inference = new InferenceService(Settings.EMPTY,
        Path.of(System.getProperty("strata.models.dir", "target/models")), () -> null, null, null, new StrataStats());

    private PreviewEmbeddings.Options parse(Map<String, Object> body) {
        return parse(body, null);
    }

    private PreviewEmbeddings.Options parse(Map<String, Object> body, ModelRef model) {
        ConfigMap config = new ConfigMap("_chunk", "", new HashMap<>(body));
        PreviewEmbeddings.Options options = PreviewEmbeddings.parse(config, model, inference);
        assertNull("every option is consumed", config.firstUnknown());
        return options;
    }

    private String rejected(Map<String, Object> body, ModelRef model) {
        return assertThrows(ConfigException.class, () -> parse(body, model)).getMessage();
    }

    @Test
    public void testParse_noOptions_embedsNothing_withTheNodesDefaultModel() {
        PreviewEmbeddings.Options o = parse(Map.of());
        assertEquals(ChildEmbedding.SEPARATE, o.children());
        assertEquals(List.of(ChildEmbedding.SEPARATE), o.modes());
        assertFalse(o.embeds());
        assertEquals(inference.defaultRef(), o.model());
    }

    @Test
    public void testParse_childrenLateAlone_isCheckedButEmbedsNothing() {
        PreviewEmbeddings.Options o = parse(Map.of("children", Map.of("embedding", "late")));
        assertEquals(List.of(ChildEmbedding.LATE), o.modes());
        assertFalse("children alone only validates a pasted processor configuration", o.embeds());
    }

    @Test
    public void testParse_vectorsOrQuery_embedInTheChildrenMode() {
        PreviewEmbeddings.Options o = parse(Map.of("children", Map.of("embedding", "late"), "vectors", true));
        assertTrue(o.embeds() && o.vectors());
        assertEquals(List.of(ChildEmbedding.LATE), o.modes());
        PreviewEmbeddings.Options q = parse(Map.of("query_text", "Who married Miss Taylor?"));
        assertTrue(q.embeds());
        assertFalse(q.vectors());
        assertEquals("Who married Miss Taylor?", q.query());
        assertEquals(List.of(ChildEmbedding.SEPARATE), q.modes());
    }

    @Test
    public void testParse_compare_showsSeparateThenLate_whateverChildrenSays() {
        assertEquals(List.of(ChildEmbedding.SEPARATE, ChildEmbedding.LATE), parse(Map.of("compare_embedding", true)).modes());
        PreviewEmbeddings.Options o = parse(Map.of("compare_embedding", true, "children", Map.of("embedding", "late")));
        assertEquals(List.of(ChildEmbedding.SEPARATE, ChildEmbedding.LATE), o.modes());
        assertTrue(o.embeds());
    }

    @Test
    public void testParse_childrenErrors_areTheProcessors() {
        String unknown = rejected(Map.of("children", Map.of("embedding", "early")), null);
        assertTrue(unknown, unknown.contains("[children.embedding]") && unknown.contains("[separate, late]") && unknown.contains("[early]"));
        String notObject = rejected(Map.of("children", "late"), null);
        assertTrue(notObject, notObject.contains("[children]") && notObject.contains("{\"embedding\": \"late\"}"));
        String cls = rejected(Map.of("children", Map.of("embedding", "late")), ModelRef.embedded("bge-small-en-v15-q"));
        assertTrue(cls, cls.contains("[children.embedding]") && cls.contains("pooling: cls") && cls.contains("[separate]"));
        String remote = rejected(Map.of("children", Map.of("embedding", "late")), new ModelRef(null, "abc"));
        assertTrue(remote, remote.contains("[children.embedding]") && remote.contains("ml-commons model [abc]"));
    }

    @Test
    public void testParse_compareWithAModelThatCannotPoolSpans_namesTheFieldAndWhy() {
        String m = rejected(Map.of("compare_embedding", true), ModelRef.embedded("bge-small-en-v15-q"));
        assertTrue(m, m.startsWith("[_chunk] [compare_embedding]") && m.contains("[late] cannot be used") && m.contains("pooling: cls"));
    }

    @Test
    public void testParse_badValues_nameTheFieldAndWhatIsAllowed() {
        String vectors = rejected(Map.of("vectors", "yes"), null);
        assertTrue(vectors, vectors.startsWith("[_chunk] [vectors] must be true or false, got [yes]"));
        String compare = rejected(Map.of("compare_embedding", 1), null);
        assertTrue(compare, compare.startsWith("[_chunk] [compare_embedding] must be true or false"));
        String query = rejected(Map.of("query_text", " "), null);
        assertTrue(query, query.startsWith("[_chunk] [query_text] must be a non-empty string"));
        String notText = rejected(Map.of("query_text", List.of("a")), null);
        assertTrue(notText, notText.startsWith("[_chunk] [query_text] must be a non-empty string"));
    }

    @Test
    public void testScore_isTheCosineSimilarityScoreOfKnn() {
        float[] a = { 1, 0 };
        assertEquals(1.0, PreviewEmbeddings.score(a, new float[] { 2, 0 }), 1e-12);
        assertEquals(0.5, PreviewEmbeddings.score(a, new float[] { 0, 3 }), 1e-12);
        assertEquals(0.0, PreviewEmbeddings.score(a, new float[] { -1, 0 }), 1e-12);
        assertEquals((1 + Math.sqrt(0.5)) / 2, PreviewEmbeddings.score(a, new float[] { 1, 1 }), 1e-7);
    }
}
