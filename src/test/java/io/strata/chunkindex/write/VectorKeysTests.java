package io.strata.chunkindex.write;

import io.strata.chunkindex.ChunkDocuments;
import io.strata.chunking.ChildEmbedding;
import io.strata.chunking.Chunk;
import io.strata.chunking.ChunkContext;
import io.strata.chunking.ChunkedParent;
import io.strata.chunking.MultiGranularChunker;
import io.strata.chunking.RecursiveStrategy;
import io.strata.chunking.SentenceSegmenter;
import io.strata.chunking.TestTexts;
import io.strata.model.ModelInfo;
import io.strata.model.ModelRef;
import org.junit.Test;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotEquals;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

/**
 * Per-chunk vector reuse: a chunk's key is its model, its mode and the exact text the model saw (late: the parent's pass and
 * its span), so a cut under other granularities finds the vectors of every chunk whose embedded text it shares and sends
 * the model only the others. Oracle: the texts of the two cuts, compared as strings.
 */
public class VectorKeysTests {
    private static final ModelInfo E5 = new ModelInfo(ModelRef.embedded("e5-small-v2-q"), "e5-small-v2-q", 384);
    private static final ModelInfo BGE = new ModelInfo(ModelRef.embedded("bge-small-en-v1.5-q"), "bge-small-en-v1.5-q", 384);

    private static MultiGranularChunker chunker(List<Double> granularities) {
        return new MultiGranularChunker(new RecursiveStrategy(60), granularities, SentenceSegmenter.english());
    }

    private static String text() {
        String emma = TestTexts.emma();
        return emma.substring(0, emma.indexOf(' ', 4000));
    }

    /** The stored vectors of a cut, by key: each chunk's vector is made up, one per distinct key. */
    private static Map<String, float[]> stored(List<ChunkedParent> parents, ChildEmbedding mode, ChunkContext.Headers headers, ModelInfo model) {
        Map<String, float[]> out = new HashMap<>();
        for (ChunkedParent p : parents) {
            for (String key : VectorKeys.of(model, mode, p, headers)) {
                if (key != null) {
                    out.putIfAbsent(key, new float[] { out.size(), key.hashCode() });
                }
            }
        }
        return out;
    }

    private static DocumentVectors reusing(List<ChunkedParent> parents, Map<String, float[]> stored, ChildEmbedding mode,
                                           ChunkContext.Headers headers, ModelInfo model) {
        List<List<float[]>> byKey = new ArrayList<>();
        for (ChunkedParent p : parents) {
            byKey.add(VectorKeys.of(model, mode, p, headers).stream().map(k -> k == null ? null : stored.get(k)).toList());
        }
        return new DocumentVectors(parents, Collections.nCopies(parents.size(), null), byKey, headers, false, mode == ChildEmbedding.LATE);
    }

    private static List<String> sent(DocumentVectors vectors) {
        List<String> out = new ArrayList<>();
        vectors.slices(128).forEach(s -> out.addAll(vectors.texts(s)));
        return out;
    }

    @Test
    public void testALevelAdded_reusesEveryTextTheOldCutHad_andSendsOnlyTheNewOnes() {
        ChunkContext.Headers none = ChunkContext.Headers.NONE;
        List<ChunkedParent> before = chunker(List.of(0.5, 0.25)).chunk(text());
        List<ChunkedParent> after = chunker(List.of(0.5, 0.25, 0.125)).chunk(text());
        Set<String> old = new HashSet<>();
        before.forEach(p -> p.all().forEach(c -> old.add(c.text())));
        List<String> expected = new ArrayList<>();
        after.forEach(p -> p.all().stream().map(Chunk::text).filter(t -> !old.contains(t)).forEach(expected::add));
        assertFalse("the new level brings new texts", expected.isEmpty());

        Map<String, float[]> stored = stored(before, ChildEmbedding.SEPARATE, none, E5);
        DocumentVectors vectors = reusing(after, stored, ChildEmbedding.SEPARATE, none, E5);
        assertEquals(expected, sent(vectors));
        assertEquals(expected.size(), vectors.textsToEmbed());
        assertEquals(vectors.texts() - expected.size(), vectors.textsReused());

        // the model's answers fill the gaps; the reused chunks keep the stored vectors
        List<float[]> answers = new ArrayList<>();
        for (int i = 0; i < expected.size(); i++) {
            answers.add(new float[] { -1, i });
        }
        int next = 0;
        for (DocumentVectors.Slice s : vectors.slices(128)) {
            vectors.fill(s, answers.subList(next, next + s.texts()));
            next += s.texts();
        }
        int fresh = 0;
        for (int i = 0; i < after.size(); i++) {
            List<float[]> v = vectors.take(i);
            List<String> keys = VectorKeys.of(E5, ChildEmbedding.SEPARATE, after.get(i), none);
            for (int j = 0; j < v.size(); j++) {
                if (old.contains(after.get(i).all().get(j).text())) {
                    assertArrayEquals(stored.get(keys.get(j)), v.get(j), 0f);
                } else {
                    assertArrayEquals(new float[] { -1, fresh++ }, v.get(j), 0f);
                }
            }
        }
        assertEquals(expected.size(), fresh);
    }

    @Test
    public void testALevelDropped_reusesEveryVector_andSendsNothing() {
        ChunkContext.Headers none = ChunkContext.Headers.NONE;
        List<ChunkedParent> before = chunker(List.of(0.5, 0.25)).chunk(text());
        List<ChunkedParent> after = chunker(List.of(0.5)).chunk(text());
        for (ChildEmbedding mode : ChildEmbedding.values()) {
            DocumentVectors vectors = reusing(after, stored(before, mode, none, E5), mode, none, E5);
            assertEquals(mode.label(), 0, vectors.textsToEmbed());
            assertTrue(mode.label(), vectors.slices(128).isEmpty());
        }
    }

    @Test
    public void testAnotherModel_anotherHeader_orTheOtherMode_findsNothing() {
        ChunkContext.Headers none = ChunkContext.Headers.NONE;
        ChunkContext.Headers titled = new ChunkContext.Headers(List.of("Emma"), false);
        List<ChunkedParent> before = chunker(List.of(0.5, 0.25)).chunk(text());
        List<ChunkedParent> after = chunker(List.of(0.5)).chunk(text());
        Map<String, float[]> stored = stored(before, ChildEmbedding.SEPARATE, none, E5);
        for (DocumentVectors v : List.of(reusing(after, stored, ChildEmbedding.SEPARATE, none, BGE),
            reusing(after, stored, ChildEmbedding.SEPARATE, titled, E5), reusing(after, stored, ChildEmbedding.LATE, none, E5))) {
            assertEquals(0, v.textsReused());
            assertEquals(v.texts(), v.textsToEmbed());
        }
        // with the header, the text the model saw is "Emma\n\n" + the chunk's: the same header reuses
        assertEquals(0, reusing(after, stored(before, ChildEmbedding.SEPARATE, titled, E5), ChildEmbedding.SEPARATE, titled, E5)
            .textsToEmbed());
    }

    /**
     * Late: a child's vector comes from its parent's pass, so the same child text under another parent text (or the same
     * parent text under another header) is embedded again; and a parent that misses any vector is sent whole.
     */
    @Test
    public void testLate_theSameChildTextInAnotherParent_isEmbeddedAgain_andAParentMissingOneIsSentWhole() {
        ChunkContext.Headers none = ChunkContext.Headers.NONE;
        MultiGranularChunker chunker = chunker(List.of(0.5, 0.25));
        ChunkedParent parent = chunker.chunk(text()).get(0);
        Chunk child = parent.children().get(0);
        String other = child.text() + " And yet the weather at Highbury was nothing to speak of, all that week.";
        ChunkedParent elsewhere = chunker.chunk(other).get(0);
        assertEquals(child.text(), elsewhere.children().get(0).text());
        List<String> here = VectorKeys.of(E5, ChildEmbedding.LATE, parent, none);
        List<String> there = VectorKeys.of(E5, ChildEmbedding.LATE, elsewhere, none);
        assertNotEquals(here.get(1), there.get(1));
        assertEquals("separate: the text alone", VectorKeys.of(E5, ChildEmbedding.SEPARATE, parent, none).get(1),
            VectorKeys.of(E5, ChildEmbedding.SEPARATE, elsewhere, none).get(1));
        assertNotEquals(here.get(1), VectorKeys.of(E5, ChildEmbedding.LATE, parent, new ChunkContext.Headers(List.of("Emma"), false)).get(1));

        List<ChunkedParent> before = chunker(List.of(0.5, 0.25)).chunk(text());
        List<ChunkedParent> after = chunker(List.of(0.5, 0.25, 0.125)).chunk(text());
        // the oracle: a late chunk is its parent's text and its place in it; a parent with any chunk the old cut lacks is sent whole
        Set<String> old = new HashSet<>();
        before.forEach(p -> p.all().forEach(c -> old.add(p.parent().text() + "@" + (c.start() - p.parent().start()) + "-" + c.text().length())));
        int sentParents = 0;
        int sentVectors = 0;
        for (ChunkedParent p : after) {
            if (p.all().stream().anyMatch(c -> !old.contains(p.parent().text() + "@" + (c.start() - p.parent().start()) + "-" + c.text().length()))) {
                sentParents++;
                sentVectors += p.all().size();
            }
        }
        assertTrue(sentParents > 0);
        DocumentVectors late = reusing(after, stored(before, ChildEmbedding.LATE, none, E5), ChildEmbedding.LATE, none, E5);
        assertEquals("one pass gives all of a parent's vectors: nothing kept of a parent sent", sentVectors, late.textsToEmbed());
        assertEquals(sentParents, late.spannedTexts(late.slices(100_000).get(0)).size());
    }

    @Test
    public void testKeys_onlyForChunksWithAVectorOfTheirOwn_andWrittenWithTheirVectors() {
        MultiGranularChunker chunker = chunker(List.of(0.5, 0.25));
        ChunkedParent parent = chunker.chunk(text()).get(0);
        ChunkedParent whole = new ChunkedParent(parent.parent(), parent.children(), false);
        List<String> keys = VectorKeys.of(E5, ChildEmbedding.SEPARATE, whole, ChunkContext.Headers.NONE);
        assertNull("a parent above the window has no vector, so no key", keys.get(0));
        assertEquals(parent.children().size(), keys.stream().filter(k -> k != null).count());

        List<String> own = VectorKeys.of(E5, ChildEmbedding.SEPARATE, parent, ChunkContext.Headers.NONE);
        List<float[]> vectors = new ArrayList<>();
        for (int i = 0; i < own.size(); i++) {
            vectors.add(new float[] { i });
        }
        Map<String, Object> doc = ChunkDocuments.toSource("books", "1", "recursive", parent, Map.of(), vectors, "h", null, own);
        assertEquals(own.get(0), doc.get(ChunkDocuments.VECTOR_KEY));
        List<?> children = (List<?>) doc.get(ChunkDocuments.CHILDREN);
        assertNull("the parent's level-0 entry repeats its vector, not its key", ((Map<?, ?>) children.get(0)).get(ChunkDocuments.VECTOR_KEY));
        for (int i = 1; i < children.size(); i++) {
            assertEquals(own.get(i), ((Map<?, ?>) children.get(i)).get(ChunkDocuments.VECTOR_KEY));
        }
    }
}
