package io.strata.chunkindex.write;

import io.strata.chunking.ChildEmbedding;
import io.strata.chunking.Chunk;
import io.strata.chunking.ChunkContext;
import io.strata.chunking.ChunkedParent;
import io.strata.chunking.Embedder;
import io.strata.chunking.MultiGranularChunker;
import io.strata.chunking.RecursiveStrategy;
import io.strata.chunking.SentenceSegmenter;
import io.strata.chunking.Span;
import io.strata.model.ModelInfo;
import io.strata.model.ModelRef;
import org.junit.Test;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.assertNotEquals;
import static org.junit.Assert.assertSame;

/** Late chunking in the document's vectors: one text per parent out, the parent's and children's vectors back; reuse keys per mode. */
public class LateChunkVectorsTests {
    private static final MultiGranularChunker CHUNKER = new MultiGranularChunker(new RecursiveStrategy(40),
        MultiGranularChunker.DEFAULT_GRANULARITIES, SentenceSegmenter.english());

    private static String book() {
        StringBuilder b = new StringBuilder("Preface line.\n\n");
        for (int i = 0; i < 30; i++) {
            b.append("Sentence number ").append(i).append(" talks about Highbury and the weather there. ");
            if (i % 7 == 6) {
                b.append("\n\n");
            }
        }
        return b.toString();
    }

    @Test
    public void testSpannedTexts_onePerParent_childSpansCutTheChildTextsOutOfTheParent() {
        List<ChunkedParent> parents = CHUNKER.chunk(book());
        DocumentVectors vectors = new DocumentVectors(parents, Collections.nCopies(parents.size(), null));
        DocumentVectors.Slice all = vectors.slices(10_000).get(0);
        List<Embedder.SpannedText> texts = vectors.spannedTexts(all);
        assertEquals(parents.size(), texts.size());
        for (int p = 0; p < parents.size(); p++) {
            ChunkedParent parent = parents.get(p);
            assertEquals(parent.parent().text(), texts.get(p).text());
            String text = texts.get(p).text();
            List<String> cut = texts.get(p).spans().stream().map(s -> s.of(text)).toList();
            assertEquals(parent.children().stream().map(Chunk::text).toList(), cut);
        }
    }

    @Test
    public void testFillSpans_expandsEachParentsAnswerToItsParentAndChildrenVectors() {
        List<ChunkedParent> parents = CHUNKER.chunk(book());
        List<List<float[]>> reused = new ArrayList<>(Collections.nCopies(parents.size(), null));
        List<float[]> stored = new ArrayList<>();
        for (int i = 0; i <= parents.get(0).children().size(); i++) {
            stored.add(new float[] { -1, i });
        }
        reused.set(0, stored); // the first parent's vectors are reused: it is not sent
        DocumentVectors vectors = new DocumentVectors(parents, reused);
        DocumentVectors.Slice all = vectors.slices(10_000).get(0);
        List<Embedder.SpannedText> texts = vectors.spannedTexts(all);
        assertEquals(parents.size() - 1, texts.size());
        List<List<float[]>> answer = new ArrayList<>();
        for (int t = 0; t < texts.size(); t++) {
            List<float[]> perText = new ArrayList<>();
            for (int v = 0; v <= texts.get(t).spans().size(); v++) {
                perText.add(new float[] { t + 1, v }); // {parent, 0 = the parent itself / child index + 1}
            }
            answer.add(perText);
        }
        vectors.fillSpans(all, answer);
        assertSame(stored, vectors.take(0));
        for (int p = 1; p < parents.size(); p++) {
            List<float[]> v = vectors.take(p);
            assertEquals(parents.get(p).children().size() + 1, v.size());
            for (int i = 0; i < v.size(); i++) {
                assertEquals(p, v.get(i)[0], 0f);
                assertEquals(i, v.get(i)[1], 0f);
            }
        }
    }

    @Test
    public void testTextHash_dependsOnTheChildEmbedding_soVectorsAreNeverReusedAcrossModes() {
        ModelInfo info = new ModelInfo(ModelRef.embedded("e5-small-v2-q"), "e5-small-v2-q", 384);
        ChunkWriter separate = new ChunkWriter("body", "c", CHUNKER, List.of(), info.ref(), ChildEmbedding.SEPARATE, null);
        ChunkWriter late = new ChunkWriter("body", "c", CHUNKER, List.of(), info.ref(), ChildEmbedding.LATE, null);
        ChunkWriter defaulted = new ChunkWriter("body", "c", CHUNKER, List.of(), info.ref(), null);
        ChunkedParent text = CHUNKER.chunk("Emma Woodhouse, handsome, clever, and rich.").get(0);
        ChunkContext.Headers none = ChunkContext.Headers.NONE;
        assertNotEquals(separate.textHash(info, text, none), late.textHash(info, text, none));
        assertEquals(late.textHash(info, text, none), new ChunkWriter("body", "d", CHUNKER, List.of(), info.ref(), ChildEmbedding.LATE,
            null).textHash(info, text, none));
        assertEquals(separate.textHash(info, text, none), defaulted.textHash(info, text, none));
    }

    /**
     * The same parent text with its children cut otherwise (as another release's rules cut them: a tiny child joined, a
     * repeat dropped, the parent kept whole) never reuses the stored vectors, even with as many children. On the old hash
     * (model, sizes, modes, headers and the parent text only) the two were equal.
     */
    @Test
    public void testTextHash_dependsOnWhereTheChildrenLie_andOnWhetherTheParentHasAVector() {
        ModelInfo info = new ModelInfo(ModelRef.embedded("e5-small-v2-q"), "e5-small-v2-q", 384);
        ChunkWriter w = new ChunkWriter("body", "c", CHUNKER, List.of(), info.ref(), ChildEmbedding.SEPARATE, null);
        ChunkedParent parent = CHUNKER.chunk(String.join(" ", java.util.Collections.nCopies(40,
            "Emma Woodhouse walked from Hartfield to Highbury."))).get(0);
        assertTrue(parent.children().size() >= 2);
        List<Chunk> moved = new java.util.ArrayList<>(parent.children());
        Chunk first = moved.get(0);
        // the first child one word shorter: as many children, other spans
        int cut = first.text().lastIndexOf(' ');
        moved.set(0, new Chunk(first.text().substring(0, cut), new Span(first.start(), first.start() + cut), first.level(),
            first.ordinal(), first.section(), first.header()));
        ChunkContext.Headers none = ChunkContext.Headers.NONE;
        String hash = w.textHash(info, parent, none);
        assertEquals(hash, w.textHash(info, new ChunkedParent(parent.parent(), parent.children()), none));
        assertNotEquals(hash, w.textHash(info, new ChunkedParent(parent.parent(), moved), none));
        assertNotEquals(hash, w.textHash(info, new ChunkedParent(parent.parent(), parent.children(), false), none));
    }
}
