package io.strata.chunkindex.write;

import io.strata.chunkindex.store.Slicing;
import io.strata.chunking.Chunk;
import io.strata.chunking.ChunkedParent;
import io.strata.chunking.Span;
import org.junit.Test;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertSame;
import static org.junit.Assert.assertThrows;

/** How a document's texts are cut into embedding slices, and how the model's answers go back to their parents. */
public class DocumentVectorsTests {

    /** Parent {@code p} with {@code children} children; texts "p", "p.1", "p.2", … */
    private static ChunkedParent parent(int p, int children) {
        List<Chunk> c = new ArrayList<>();
        for (int i = 1; i <= children; i++) {
            c.add(new Chunk(p + "." + i, new Span(0, 1), 1, i - 1));
        }
        return new ChunkedParent(new Chunk(Integer.toString(p), new Span(0, 1), 0, p), c);
    }

    /** A vector that names its text: {parent, child}. */
    private static float[] vectorOf(String text) {
        String[] parts = text.split("\\.");
        return new float[] { Float.parseFloat(parts[0]), parts.length > 1 ? Float.parseFloat(parts[1]) : 0 };
    }

    private static List<float[]> embed(List<String> texts) {
        return texts.stream().map(DocumentVectorsTests::vectorOf).toList();
    }

    @Test
    public void testSlices_whenPartsFit_packConsecutiveParentsUpToTheLimit() {
        assertEquals(List.of(new DocumentVectors.Slice(0, 2, 6), new DocumentVectors.Slice(2, 4, 6), new DocumentVectors.Slice(4, 5, 3)),
            DocumentVectors.slices(new int[] { 3, 3, 3, 3, 3 }, 7));
    }

    @Test
    public void testSlices_whenOneParentExceedsTheLimit_itGoesAloneAndWhole() {
        assertEquals(List.of(new DocumentVectors.Slice(0, 1, 2), new DocumentVectors.Slice(1, 2, 9), new DocumentVectors.Slice(2, 3, 2)),
            DocumentVectors.slices(new int[] { 2, 9, 2 }, 4));
    }

    @Test
    public void testSlices_skipReusedParents_andReturnNothingWhenAllAreReused() {
        assertEquals(List.of(new DocumentVectors.Slice(1, 4, 4)), DocumentVectors.slices(new int[] { 0, 2, 0, 2, 0 }, 4));
        assertEquals(List.of(), DocumentVectors.slices(new int[] { 0, 0 }, 4));
        assertEquals(List.of(), DocumentVectors.slices(new int[0], 4));
    }

    @Test
    public void testSlices_coverEveryTextOnce_neverAboveTheLimitExceptSingleParents() {
        java.util.Random random = new java.util.Random(7);
        for (int round = 0; round < 200; round++) {
            int[] counts = random.ints(random.nextInt(300), 0, 12).toArray();
            int max = 1 + random.nextInt(40);
            List<DocumentVectors.Slice> slices = DocumentVectors.slices(counts, max);
            int covered = 0;
            int previousEnd = 0;
            for (DocumentVectors.Slice s : slices) {
                assertEquals(Arrays.stream(counts, s.from(), s.to()).sum(), s.texts());
                assertEquals("slices are in order and disjoint", true, s.from() >= previousEnd && s.to() > s.from());
                assertEquals("at most the limit, or one parent", true, s.texts() <= max
                    || Arrays.stream(counts, s.from(), s.to()).filter(n -> n > 0).count() == 1);
                covered += s.texts();
                previousEnd = s.to();
            }
            assertEquals(Arrays.stream(counts).sum(), covered);
        }
    }

    @Test
    public void testFill_givesEachParentItsOwnVectors_andKeepsReusedOnes() {
        List<ChunkedParent> parents = List.of(parent(0, 2), parent(1, 3), parent(2, 1), parent(3, 2));
        List<float[]> stored = embed(List.of("1", "1.1", "1.2", "1.3"));
        DocumentVectors vectors = new DocumentVectors(parents, Arrays.asList(null, stored, List.of(new float[] { 9 }), null));
        assertEquals(12, vectors.texts());
        assertEquals("parent 2's stored vectors have the wrong count: re-embedded", 4, vectors.textsReused());
        List<DocumentVectors.Slice> slices = vectors.slices(5);
        assertEquals(List.of(new DocumentVectors.Slice(0, 3, 5), new DocumentVectors.Slice(3, 4, 3)), slices);
        assertEquals(List.of("0", "0.1", "0.2", "2", "2.1"), vectors.texts(slices.get(0)));
        for (DocumentVectors.Slice s : slices) {
            vectors.fill(s, embed(vectors.texts(s)));
        }
        for (int p = 0; p < parents.size(); p++) {
            List<float[]> v = vectors.take(p);
            if (p == 1) {
                assertSame(stored, v);
            }
            List<String> texts = parents.get(p).all().stream().map(Chunk::text).toList();
            assertEquals(texts.size(), v.size());
            for (int i = 0; i < texts.size(); i++) {
                assertArrayEquals(texts.get(i), vectorOf(texts.get(i)), v.get(i), 0);
            }
        }
    }

    @Test
    public void testFill_whenAParentHasNoVectorOfItsOwn_onlyItsChildrenAreEmbedded_andItsEntryIsNull() {
        ChunkedParent whole = new ChunkedParent(parent(1, 2).parent(), parent(1, 2).children(), false);
        List<ChunkedParent> parents = List.of(parent(0, 1), whole);
        DocumentVectors vectors = new DocumentVectors(parents, Arrays.asList(null, null));
        assertEquals(4, vectors.texts());
        List<DocumentVectors.Slice> slices = vectors.slices(10);
        assertEquals(List.of(new DocumentVectors.Slice(0, 2, 4)), slices);
        assertEquals(List.of("0", "0.1", "1.1", "1.2"), vectors.texts(slices.get(0)));
        vectors.fill(slices.get(0), embed(vectors.texts(slices.get(0))));
        assertEquals(2, vectors.take(0).size());
        List<float[]> v = vectors.take(1);
        assertEquals(3, v.size());
        assertEquals(null, v.get(0));
        assertArrayEquals(vectorOf("1.2"), v.get(2), 0);
    }

    @Test
    public void testFillSpans_late_dropsThePassOwnVectorOfAParentWithoutOne() {
        ChunkedParent whole = new ChunkedParent(parent(1, 2).parent(), parent(1, 2).children(), false);
        DocumentVectors vectors = new DocumentVectors(List.of(parent(0, 1), whole), Arrays.asList(null, null));
        DocumentVectors.Slice only = vectors.slices(10).get(0);
        vectors.fillSpans(only, List.of(embed(List.of("0", "0.1")), embed(List.of("1", "1.1", "1.2"))));
        assertArrayEquals(vectorOf("0"), vectors.take(0).get(0), 0);
        List<float[]> v = vectors.take(1);
        assertEquals(null, v.get(0));
        assertArrayEquals(vectorOf("1.1"), v.get(1), 0);
    }

    @Test
    public void testFill_withMeanParents_aParentWithoutItsOwnVectorGetsTheLengthWeightedMeanOfItsFinestChildren() {
        Chunk parentChunk = new Chunk("p", new Span(0, 30), 0, 0);
        List<Chunk> children = List.of(new Chunk("a", new Span(0, 30), 1, 0), new Chunk("b", new Span(0, 10), 2, 0),
            new Chunk("c", new Span(10, 30), 2, 1));
        ChunkedParent whole = new ChunkedParent(parentChunk, children, false);
        DocumentVectors vectors = new DocumentVectors(List.of(whole), java.util.Collections.singletonList(null),
            io.strata.chunking.ChunkContext.Headers.NONE, true);
        DocumentVectors.Slice only = vectors.slices(10).get(0);
        assertEquals(List.of("a", "b", "c"), vectors.texts(only));
        vectors.fill(only, List.of(new float[] { 0, 0, 1 }, new float[] { 1, 0, 0 }, new float[] { 0, 1, 0 }));
        // level 2 only: (10·[1,0,0] + 20·[0,1,0]) / |…| = [1, 2, 0] / √5
        assertArrayEquals(new float[] { (float) (1 / Math.sqrt(5)), (float) (2 / Math.sqrt(5)), 0 }, vectors.take(0).get(0), 1e-6f);
    }

    @Test
    public void testReuse_onlyWhenTheStoredParentHasAVectorExactlyWhenThisOneGetsOne() {
        ChunkedParent whole = new ChunkedParent(parent(1, 2).parent(), parent(1, 2).children(), false);
        List<float[]> storedWithParent = embed(List.of("1", "1.1", "1.2"));
        List<float[]> storedWithout = Arrays.asList(null, vectorOf("1.1"), vectorOf("1.2"));
        assertEquals(0, new DocumentVectors(List.of(whole), List.of(storedWithParent)).textsReused());
        assertEquals(2, new DocumentVectors(List.of(whole), List.of(storedWithout)).textsReused());
        assertEquals(0, new DocumentVectors(List.of(parent(1, 2)), List.of(storedWithout)).textsReused());
    }

    @Test
    public void testTake_releasesTheVectors_soEachChunkDocumentIsBuiltOnce() {
        DocumentVectors vectors = new DocumentVectors(List.of(parent(0, 1)), java.util.Collections.singletonList(null));
        DocumentVectors.Slice only = vectors.slices(10).get(0);
        vectors.fill(only, embed(vectors.texts(only)));
        vectors.take(0);
        assertThrows(IllegalStateException.class, () -> vectors.take(0));
    }

    @Test
    public void testFill_whenTheModelAnswersTheWrongCount_fails() {
        DocumentVectors vectors = new DocumentVectors(List.of(parent(0, 2)), java.util.Collections.singletonList(null));
        DocumentVectors.Slice only = vectors.slices(10).get(0);
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> vectors.fill(only, embed(List.of("0", "0.1"))));
        assertEquals("the model returned 2 vectors for 3 texts", e.getMessage());
    }

    @Test
    public void testBulkFull_atTheDocumentCountOrTheByteSize() {
        Slicing slicing = new Slicing(10, 3, 1000);
        assertEquals(false, slicing.bulkFull(2, 999));
        assertEquals(true, slicing.bulkFull(3, 10));
        assertEquals(true, slicing.bulkFull(1, 1000));
        assertEquals(new Slicing(128, 500, 4L << 20), Slicing.DEFAULTS);
    }
}
