package io.strata.inference;

import ai.djl.Device;
import io.strata.chunking.Embedder;
import io.strata.stats.StrataStats;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;
import org.opensearch.common.settings.Settings;

import java.nio.file.Path;
import java.util.List;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

/** The bundled bge-small-en-v1.5 (int8 ONNX) through DJL, as the plugin runs it. */
public class DjlEmbedderTests {
    static final Path MODELS = Path.of(System.getProperty("strata.models.dir", "target/models"));
    private static DjlEmbedder embedder;

    @BeforeClass
    public static void load() throws Exception {
        embedder = DjlEmbedder.load(ModelDescriptor.read("bge-small-en-v15-q", MODELS.resolve("bge-small-en-v15-q")), Device.cpu(), 2, 1, 8);
    }

    @AfterClass
    public static void close() {
        embedder.close();
    }

    static double cos(float[] a, float[] b) {
        double s = 0;
        for (int i = 0; i < a.length; i++) {
            s += a[i] * b[i];
        }
        return s;
    }

    @Test
    public void testEmbed_givesUnitVectorsOfTheModelDimension() {
        List<float[]> v = embedder.embed(List.of("Emma Woodhouse, handsome, clever, and rich.", "x"), Embedder.Purpose.PASSAGE);
        assertEquals(2, v.size());
        for (float[] x : v) {
            assertEquals(384, x.length);
            assertEquals(1.0, Math.sqrt(cos(x, x)), 1e-4);
        }
    }

    @Test
    public void testEmbed_relatedSentencesAreCloserThanUnrelatedOnes() {
        List<float[]> v = embedder.embed(List.of("The cat sat on the mat.", "A kitten was resting on the rug.",
            "Quarterly revenue grew by ten percent."), Embedder.Purpose.PASSAGE);
        double related = cos(v.get(0), v.get(1));
        double unrelated = cos(v.get(0), v.get(2));
        assertTrue(related + " vs " + unrelated, related > unrelated + 0.2);
    }

    /**
     * Padding is masked, so a text's vector barely depends on its batch. Not exactly: the int8 model quantises
     * activations dynamically per tensor, so batch neighbours shift its scales (the fp32 variant agrees to 1e-4).
     */
    @Test
    public void testEmbed_batchingAndOrderBarelyChangeVectors() {
        List<String> texts = List.of("short", "a somewhat longer sentence about Highbury and its people", "mid length text here",
            "one", "two words", "Mr. Knightley walked to Hartfield in the rain.", "alpha beta", "gamma", "delta epsilon zeta");
        List<float[]> batched = embedder.embed(texts, Embedder.Purpose.PASSAGE);
        for (int i = 0; i < texts.size(); i++) {
            float[] alone = embedder.embed(List.of(texts.get(i)), Embedder.Purpose.PASSAGE).get(0);
            assertEquals(texts.get(i), 1.0, cos(alone, batched.get(i)), 0.01);
        }
    }

    @Test
    public void testEmbed_queriesGetTheInstructionPrefix() {
        String q = "why does Mr. Woodhouse feel fortunate?";
        float[] asQuery = embedder.embed(List.of(q), Embedder.Purpose.QUERY).get(0);
        float[] asPassage = embedder.embed(List.of(q), Embedder.Purpose.PASSAGE).get(0);
        float[] prefixed = embedder.embed(List.of("Represent this sentence for searching relevant passages: " + q),
            Embedder.Purpose.PASSAGE).get(0);
        assertEquals(1.0, cos(asQuery, prefixed), 1e-5);
        assertTrue(cos(asQuery, asPassage) < 0.999);
        int[] counts = embedder.tokenCounts(List.of(q), Embedder.Purpose.QUERY);
        assertTrue(counts[0] > embedder.tokenCounts(List.of(q), Embedder.Purpose.PASSAGE)[0]);
    }

    @Test
    public void testEmbed_longTextIsTruncatedToMaxTokensAndCounted() {
        String longText = "word ".repeat(2000);
        long before = embedder.truncatedCount();
        int[] counts = embedder.tokenCounts(List.of(longText), Embedder.Purpose.PASSAGE);
        assertEquals(2002, counts[0]); // [CLS] + 2000 + [SEP]
        float[] v = embedder.embed(List.of(longText), Embedder.Purpose.PASSAGE).get(0);
        assertEquals(384, v.length);
        assertEquals(before + 1, embedder.truncatedCount());
    }

    @Test
    public void testDevice_gpuOnANodeWithoutGpu_failsWithTheSettingName() {
        InferenceService service = new InferenceService(Settings.builder().put("plugins.strata.inference.device", "gpu").build(),
            MODELS, () -> null, null, null, new StrataStats());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> service.embedder("bge-small-en-v15-q"));
        assertTrue(e.getMessage(), e.getMessage().contains("[plugins.strata.inference.device] is [gpu] but engine [OnnxRuntime] sees no GPU"));
        InferenceService auto = new InferenceService(Settings.EMPTY, MODELS, () -> null, null, null, new StrataStats());
        try {
            float[] v = auto.embedder("bge-small-en-v15-q").embed(List.of("falls back to the CPU"), Embedder.Purpose.PASSAGE).get(0);
            assertEquals(384, v.length);
        } catch (Exception e2) {
            throw new AssertionError(e2);
        } finally {
            auto.close();
        }
    }

    @Test
    public void testDescriptor_rejectsFilesOutsideTheModelFolder() throws Exception {
        Path dir = Path.of(System.getProperty("java.io.tmpdir")).resolve("evil-model");
        java.nio.file.Files.createDirectories(dir);
        java.nio.file.Files.writeString(dir.resolve("model.json"),
            "{\"engine\": \"onnx\", \"model_file\": \"../../etc/passwd\", \"tokenizer_file\": \"t.json\", \"dimension\": 4}");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ModelDescriptor.read("evil-model", dir));
        assertTrue(e.getMessage(), e.getMessage().contains("must name a file inside the model folder"));
    }
}
