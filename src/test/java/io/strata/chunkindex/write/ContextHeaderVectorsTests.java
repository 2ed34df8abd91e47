package io.strata.chunkindex.write;

import io.strata.chunkindex.ChunkDocuments;
import io.strata.chunking.ChildEmbedding;
import io.strata.chunking.Chunk;
import io.strata.chunking.ChunkContext;
import io.strata.chunking.ChunkedParent;
import io.strata.chunking.Embedder;
import io.strata.chunking.MultiGranularChunker;
import io.strata.chunking.RecursiveStrategy;
import io.strata.chunking.SentenceSegmenter;
import io.strata.model.ModelInfo;
import io.strata.model.ModelRef;
import org.junit.Test;

import java.util.Collections;
import java.util.List;
import java.util.Map;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotEquals;
import static org.junit.Assert.assertNull;

/** Contextual headers in what is embedded (separate and late), in the chunk documents, and in the reuse key. */
public class ContextHeaderVectorsTests {
    private static final MultiGranularChunker CHUNKER = new MultiGranularChunker(new RecursiveStrategy(40),
        MultiGranularChunker.DEFAULT_GRANULARITIES, SentenceSegmenter.english());
    private static final ChunkContext TITLE = new ChunkContext(List.of("title"), false, false);
    private static final ModelInfo INFO = new ModelInfo(ModelRef.embedded("e5-small-v2-q"), "e5-small-v2-q", 384);

    private static String book() {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < 30; i++) {
            b.append("Sentence number ").append(i).append(" talks about Highbury and the weather there. ");
            if (i % 7 == 6) {
                b.append("\n\n");
            }
        }
        return b.toString();
    }

    private static ChunkContext.Headers title(String title) {
        return TITLE.headers(Map.<String, Object>of("title", title)::get);
    }

    private static ChunkWriter writer(ChildEmbedding mode, ChunkContext context) {
        return new ChunkWriter("body", "c", CHUNKER, List.of(), INFO.ref(), mode, context, null);
    }

    @Test
    public void testTexts_everyChunkIsEmbeddedAsHeaderBlankLineText() {
        List<ChunkedParent> parents = CHUNKER.chunk(book());
        DocumentVectors vectors = new DocumentVectors(parents, Collections.nCopies(parents.size(), null), title("Emma"));
        List<String> texts = vectors.texts(vectors.slices(10_000).get(0));
        List<String> expected = parents.stream().flatMap(p -> p.all().stream()).map(c -> "Emma\n\n" + c.text()).toList();
        assertEquals(expected, texts);
    }

    @Test
    public void testSpannedTexts_late_theHeaderOpensTheParentsPass_andChildSpansStillCutTheirOwnTexts() {
        List<ChunkedParent> parents = CHUNKER.chunk(book());
        DocumentVectors vectors = new DocumentVectors(parents, Collections.nCopies(parents.size(), null), title("Emma"));
        List<Embedder.SpannedText> texts = vectors.spannedTexts(vectors.slices(10_000).get(0));
        for (int p = 0; p < parents.size(); p++) {
            String text = texts.get(p).text();
            assertEquals("Emma\n\n" + parents.get(p).parent().text(), text);
            assertEquals(parents.get(p).children().stream().map(Chunk::text).toList(),
                texts.get(p).spans().stream().map(s -> s.of(text)).toList());
        }
    }

    @Test
    public void testTextHash_coversTheHeader_soAChangedTitleReembeds_andNoHeaderKeepsTodaysHash() {
        ChunkedParent parent = CHUNKER.chunk(book()).get(0);
        for (ChildEmbedding mode : ChildEmbedding.values()) {
            ChunkWriter w = writer(mode, TITLE);
            assertNotEquals(w.textHash(INFO, parent, title("Emma")), w.textHash(INFO, parent, title("Persuasion")));
            assertEquals(w.textHash(INFO, parent, title("Emma")), writer(mode, TITLE).textHash(INFO, parent, title("Emma")));
            // a document without the field is embedded as one without a context, so it keeps that hash and its vectors
            assertEquals(w.textHash(INFO, parent, ChunkContext.Headers.NONE),
                w.textHash(INFO, parent, TITLE.headers(Map.<String, Object>of()::get)));
        }
    }

    @Test
    public void testChunkDocuments_keepTheSourceText_andCarryTheHeaderOnlyWhenLexical() {
        ChunkedParent parent = CHUNKER.chunk(book()).get(0);
        ChunkWriter.SourceFields fields = writer(ChildEmbedding.SEPARATE, TITLE).sourceFields(Map.of("title", "Emma", "body", book()));
        Map<String, Object> dense = writer(ChildEmbedding.SEPARATE, TITLE).preview("books", "emma", parent, fields);
        assertEquals(parent.parent().text(), dense.get(ChunkDocuments.TEXT));
        assertNull(dense.get(ChunkDocuments.CONTEXT_HEADER));
        ChunkContext lexical = new ChunkContext(List.of("title"), false, true);
        Map<String, Object> doc = writer(ChildEmbedding.SEPARATE, lexical).preview("books", "emma", parent,
            writer(ChildEmbedding.SEPARATE, lexical).sourceFields(Map.of("title", "Emma")));
        assertEquals(parent.parent().text(), doc.get(ChunkDocuments.TEXT));
        assertEquals(parent.parent().start(), doc.get(ChunkDocuments.START));
        assertEquals("Emma", doc.get(ChunkDocuments.CONTEXT_HEADER));
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> children = (List<Map<String, Object>>) doc.get(ChunkDocuments.CHILDREN);
        for (int i = 0; i < children.size(); i++) {
            assertEquals(parent.children().get(i).text(), children.get(i).get(ChunkDocuments.TEXT));
            assertEquals("Emma", children.get(i).get(ChunkDocuments.CONTEXT_HEADER));
        }
    }

    @Test
    public void testSourceFields_readDottedPathsAndObjects_asCopyFieldsDo() {
        ChunkContext meta = new ChunkContext(List.of("meta.title"), false, false);
        ChunkWriter w = writer(ChildEmbedding.SEPARATE, meta);
        Chunk c = CHUNKER.chunk(book()).get(0).parent();
        assertEquals("Emma", w.sourceFields(Map.of("meta", Map.of("title", "Emma"))).headers().of(c));
        assertEquals("Emma", w.sourceFields(Map.of("meta.title", "Emma")).headers().of(c));
        assertEquals("", writer(ChildEmbedding.SEPARATE, null).sourceFields(Map.of("title", "Emma")).headers().of(c));
    }
}
