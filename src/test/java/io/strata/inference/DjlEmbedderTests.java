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
        embedder = DjlEmbedder.load(ModelDescriptor.read("bge-small-en-v15-q", MODELS.resolve("bge-small-en-v15-q")), Device.cpu(), 2, 2, 1);
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
    public void testTextTokens_countsTheTextAlone_withoutSpecialTokensOrInstruction() {
        String text = "Emma Woodhouse, handsome, clever, and rich, with a comfortable home.";
        int alone = embedder.textTokens(text);
        // what the model is fed for a passage: [CLS] + its instruction prefix (none for bge passages) + text + [SEP]
        assertEquals(embedder.tokenCounts(List.of(text), Embedder.Purpose.PASSAGE)[0] - 2, alone);
        // WordPiece splits at whitespace first: the count of a concatenation is the sum of the parts'
        assertEquals(alone + embedder.textTokens("Miss Taylor married Mr. Weston."),
            embedder.textTokens(text + "\n\nMiss Taylor married Mr. Weston."));
        assertEquals(0, embedder.textTokens(""));
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
     * The issue this guards: the int8 model quantises activations per batch tensor, so with batching a text's vector
     * moved with its neighbours (cosine ≈ 0.995). One pass per text makes it bitwise the same alone, in a mixed-length
     * call of either purpose order, from concurrent callers whose lanes interleave, and on the query lane's predictors.
     */
    @Test
    public void testEmbed_vectorIsBitwiseTheSameAloneInAMixedBatchAndUnderConcurrency() throws Exception {
        List<String> texts = new java.util.ArrayList<>(List.of("short", "a somewhat longer sentence about Highbury and its people",
            "mid length text here", "one", "two words", "Mr. Knightley walked to Hartfield in the rain.", "alpha beta", "gamma",
            "delta epsilon zeta", "Emma Woodhouse, handsome, clever, and rich, with a comfortable home and happy disposition, "
                + "seemed to unite some of the best blessings of existence"));
        List<float[]> alone = new java.util.ArrayList<>();
        for (String t : texts) {
            alone.add(embedder.embed(List.of(t), Embedder.Purpose.PASSAGE).get(0));
        }
        List<float[]> batched = embedder.embed(texts, Embedder.Purpose.PASSAGE);
        java.util.Collections.reverse(texts);
        List<float[]> reversed = embedder.embed(texts, Embedder.Purpose.PASSAGE);
        java.util.Collections.reverse(texts);
        var pool = java.util.concurrent.Executors.newFixedThreadPool(2);
        try {
            var a = pool.submit(() -> embedder.embed(texts, Embedder.Purpose.PASSAGE));
            var b = pool.submit(() -> embedder.embed(texts.subList(3, texts.size()), Embedder.Purpose.PASSAGE));
            // the query lane's own predictors, one text at a time, while those calls run on the others
            List<float[]> queryLane = new java.util.ArrayList<>();
            for (String t : texts) {
                queryLane.add(embedder.embedQuery(List.of(t), Embedder.Purpose.PASSAGE).get(0));
            }
            List<float[]> fromA = a.get();
            List<float[]> fromB = b.get();
            for (int i = 0; i < texts.size(); i++) {
                org.junit.Assert.assertArrayEquals(texts.get(i), alone.get(i), queryLane.get(i), 0f);
                org.junit.Assert.assertArrayEquals(texts.get(i), alone.get(i), batched.get(i), 0f);
                org.junit.Assert.assertArrayEquals(texts.get(i), alone.get(i), reversed.get(texts.size() - 1 - i), 0f);
                org.junit.Assert.assertArrayEquals(texts.get(i), alone.get(i), fromA.get(i), 0f);
                if (i >= 3) {
                    org.junit.Assert.assertArrayEquals(texts.get(i), alone.get(i), fromB.get(i - 3), 0f);
                }
            }
        } finally {
            pool.shutdown();
        }
        float[] query = embedder.embed(List.of(texts.get(1)), Embedder.Purpose.QUERY).get(0);
        List<float[]> queries = embedder.embed(texts, Embedder.Purpose.QUERY);
        org.junit.Assert.assertArrayEquals(query, queries.get(1), 0f);
        org.junit.Assert.assertArrayEquals(query, embedder.embedQuery(texts, Embedder.Purpose.QUERY).get(1), 0f);
    }

    @Test
    public void testEmbed_emptyCallGivesNoVectors() {
        assertEquals(0, embedder.embed(List.of(), Embedder.Purpose.PASSAGE).size());
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
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> service.embedded().embedder("bge-small-en-v15-q"));
        assertTrue(e.getMessage(), e.getMessage().contains("[plugins.strata.inference.device] is [gpu] but engine [OnnxRuntime] sees no GPU"));
        InferenceService auto = new InferenceService(Settings.EMPTY, MODELS, () -> null, null, null, new StrataStats());
        try {
            float[] v = auto.embedded().embedder("bge-small-en-v15-q").embed(List.of("falls back to the CPU"), Embedder.Purpose.PASSAGE).get(0);
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
