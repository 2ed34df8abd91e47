package io.strata.chunking;

import ai.djl.Device;
import io.strata.inference.DjlEmbedder;
import io.strata.inference.ModelDescriptor;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

/**
 * A child that repeats its parent's or a coarser child's span adds nothing to the parent's MAX: with the real default
 * model (e5-small-v2 int8), every parent's dense MAX for real questions is the same with and without those children.
 */
public class ChildPolicyModelTests {
    private static final Path MODELS = Path.of(System.getProperty("strata.models.dir", "target/models"));
    private static DjlEmbedder embedder;

    @BeforeClass
    public static void load() throws Exception {
        embedder = DjlEmbedder.load(ModelDescriptor.read("e5-small-v2-q", MODELS.resolve("e5-small-v2-q")), Device.cpu(), 2, 2, 1);
    }

    @AfterClass
    public static void close() {
        embedder.close();
    }

    @Test
    public void testDropRepeats_onEmmaTheta200_everyParentsMaxIsUnchanged_withFewerVectors() {
        String text = TestTexts.emma().substring(0, 12_000);
        TextIndex index = new TextIndex(text, SentenceSegmenter.english());
        int theta = 200;
        // the children as the chunker wrote them before: every level cut again from the parent, repeats included
        List<ChunkedParent> before = new ArrayList<>();
        List<Span> parents = new RecursiveStrategy(theta).segment(index).parents();
        for (int p = 0; p < parents.size(); p++) {
            List<Chunk> children = new ArrayList<>();
            for (int level = 1; level <= 2; level++) {
                List<Span> spans = new RecursiveSplitter(level == 1 ? theta / 2 : theta / 4).split(index, parents.get(p));
                for (int c = 0; c < spans.size(); c++) {
                    children.add(new Chunk(spans.get(c).of(text), spans.get(c), level, c));
                }
            }
            before.add(new ChunkedParent(new Chunk(parents.get(p).of(text), parents.get(p), 0, p), children));
        }
        List<ChunkedParent> after = ChildPolicy.dropRepeats(new MultiGranularChunker.Result(before, List.of(), index)).parents();
        int vectorsBefore = before.stream().mapToInt(p -> p.all().size()).sum();
        int vectorsAfter = after.stream().mapToInt(p -> p.all().size()).sum();
        assertTrue(vectorsBefore + " → " + vectorsAfter, vectorsAfter < vectorsBefore);
        List<float[]> queries = embedder.embed(List.of("Who married Miss Taylor?", "What did Mr. Woodhouse think of matrimony?",
            "Who is Mr. Knightley?", "Where did Emma's sister live?"), Embedder.Purpose.QUERY);
        assertEquals(before.size(), after.size());
        for (int p = 0; p < before.size(); p++) {
            // each side embedded on its own, as each pipeline would
            List<float[]> b = embedder.embed(before.get(p).all().stream().map(Chunk::text).toList(), Embedder.Purpose.PASSAGE);
            List<float[]> a = embedder.embed(after.get(p).all().stream().map(Chunk::text).toList(), Embedder.Purpose.PASSAGE);
            for (float[] q : queries) {
                assertEquals("parent " + p, max(q, b), max(q, a), 1e-6);
            }
        }
    }

    private static double max(float[] q, List<float[]> vectors) {
        double best = Double.NEGATIVE_INFINITY;
        for (float[] v : vectors) {
            double s = 0;
            for (int i = 0; i < v.length; i++) {
                s += q[i] * v[i];
            }
            best = Math.max(best, s);
        }
        return best;
    }
}
