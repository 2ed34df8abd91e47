package io.strata.chunkindex;

import io.strata.model.ModelInfo;
import io.strata.model.ModelRef;
import io.strata.chunking.Chunk;
import io.strata.chunking.ChunkedParent;
import io.strata.chunking.Span;
import org.junit.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

/** The chunk-document shape of format 2 (the parent as its own level-0 child) and the readers that must see through it. */
public class ChunkDocumentsTests {
    private static final String TEXT = "Emma Woodhouse, handsome, clever, and rich. She had lived nearly twenty-one years.";

    private static ChunkedParent parent() {
        Chunk p = new Chunk(TEXT, new Span(0, TEXT.length()), 0, 3);
        Chunk c1 = new Chunk(TEXT.substring(0, 43), new Span(0, 43), 1, 0);
        Chunk c2 = new Chunk(TEXT.substring(44), new Span(44, TEXT.length()), 1, 1);
        return new ChunkedParent(p, List.of(c1, c2));
    }

    private static List<float[]> vectors() {
        return List.of(new float[] { 1, 0 }, new float[] { 0, 1 }, new float[] { 0.6f, 0.8f });
    }

    /** A stored source as a node hands it back: vectors as lists of numbers. */
    @SuppressWarnings("unchecked")
    private static Map<String, Object> stored(Map<String, Object> doc) {
        Map<String, Object> out = new java.util.LinkedHashMap<>(doc);
        if (doc.get(ChunkDocuments.EMBEDDING) != null) {
            out.put(ChunkDocuments.EMBEDDING, numbers((float[]) doc.get(ChunkDocuments.EMBEDDING)));
        }
        List<Object> children = new ArrayList<>();
        for (Map<String, Object> c : (List<Map<String, Object>>) doc.get(ChunkDocuments.CHILDREN)) {
            Map<String, Object> child = new java.util.LinkedHashMap<>(c);
            child.put(ChunkDocuments.EMBEDDING, numbers((float[]) c.get(ChunkDocuments.EMBEDDING)));
            children.add(child);
        }
        out.put(ChunkDocuments.CHILDREN, children);
        return out;
    }

    private static List<Double> numbers(float[] v) {
        List<Double> out = new ArrayList<>();
        for (float x : v) {
            out.add((double) x);
        }
        return out;
    }

    @Test
    public void testSourcePart_ofATablePiece_isItsOwnTextWithoutTheStoredHeader_andNullForAShorterText() {
        String source = "| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |";
        int start = source.indexOf("| 3");
        String stored = "| a | b |\n|---|---|\n" + source.substring(start); // the header row repeated before the piece
        assertEquals("| 3 | 4 |", ChunkDocuments.sourcePart(stored, start, source.length()));
        assertEquals("| 3 | 4 |", ChunkDocuments.sourcePart("| 3 | 4 |", start, source.length()));
        assertNull(ChunkDocuments.sourcePart("| 3", start, source.length()));
    }

    @Test
    @SuppressWarnings("unchecked")
    public void testToSource_withVectors_putsTheParentFirstAmongItsChildrenAsLevelZero() {
        Map<String, Object> doc = ChunkDocuments.toSource("books", "emma", "recursive", parent(), Map.of(), vectors(), "h", null);
        List<Map<String, Object>> children = (List<Map<String, Object>>) doc.get(ChunkDocuments.CHILDREN);
        assertEquals(3, children.size());
        assertEquals(Map.of(ChunkDocuments.LEVEL, 0, ChunkDocuments.EMBEDDING, vectors().get(0)).keySet(), children.get(0).keySet());
        assertEquals(0, children.get(0).get(ChunkDocuments.LEVEL));
        assertArrayEquals(vectors().get(0), (float[]) children.get(0).get(ChunkDocuments.EMBEDDING), 0f);
        assertArrayEquals("the parent keeps its own top-level vector", vectors().get(0), (float[]) doc.get(ChunkDocuments.EMBEDDING), 0f);
        assertEquals(1, children.get(1).get(ChunkDocuments.LEVEL));
        assertEquals(TEXT.substring(0, 43), children.get(1).get(ChunkDocuments.TEXT));
        assertTrue(ChunkDocuments.isSelfEntry(children.get(0)));
        assertFalse(ChunkDocuments.isSelfEntry(children.get(1)));
    }

    @Test
    @SuppressWarnings("unchecked")
    public void testToSource_withoutVectors_writesOnlyTheChunkingsChildren() {
        Map<String, Object> doc = ChunkDocuments.toSource("books", "emma", "recursive", parent(), Map.of());
        List<Map<String, Object>> children = (List<Map<String, Object>>) doc.get(ChunkDocuments.CHILDREN);
        assertEquals(2, children.size());
        assertTrue(children.stream().noneMatch(ChunkDocuments::isSelfEntry));
    }

    @Test
    @SuppressWarnings("unchecked")
    public void testToSource_ofAParentWithoutItsOwnVector_hasNoEmbeddingNorLevelZeroEntry_andReadsBackForReuse() {
        ChunkedParent whole = new ChunkedParent(parent().parent(), parent().children(), false);
        List<float[]> vectors = java.util.Arrays.asList(null, vectors().get(1), vectors().get(2));
        Map<String, Object> doc = ChunkDocuments.toSource("books", "emma", "recursive", whole, Map.of(), vectors, "h", null);
        assertFalse(doc.containsKey(ChunkDocuments.EMBEDDING));
        assertEquals("the parent keeps its text for BM25 and the context", TEXT, doc.get(ChunkDocuments.TEXT));
        List<Map<String, Object>> children = (List<Map<String, Object>>) doc.get(ChunkDocuments.CHILDREN);
        assertEquals(2, children.size());
        assertTrue(children.stream().noneMatch(ChunkDocuments::isSelfEntry));
        List<float[]> read = ChunkDocuments.vectorsOf(stored(doc));
        assertEquals(3, read.size());
        assertNull(read.get(0));
        assertArrayEquals(vectors().get(1), read.get(1), 1e-6f);
        assertArrayEquals(vectors().get(2), read.get(2), 1e-6f);
    }

    @Test
    public void testVectorsOf_skipsTheLevelZeroEntry_soReuseSeesParentThenChildren() {
        Map<String, Object> doc = stored(ChunkDocuments.toSource("books", "emma", "recursive", parent(), Map.of(), vectors(), "h", null));
        List<float[]> read = ChunkDocuments.vectorsOf(doc);
        assertEquals("what the processor compares with children + 1", parent().children().size() + 1, read.size());
        for (int i = 0; i < read.size(); i++) {
            assertArrayEquals(vectors().get(i), read.get(i), 1e-6f);
        }
    }

    @Test
    @SuppressWarnings("unchecked")
    public void testVectorsOf_ofAFormatOneDocument_readsItAsBefore() {
        Map<String, Object> doc = stored(ChunkDocuments.toSource("books", "emma", "recursive", parent(), Map.of(), vectors(), "h", null));
        ((List<Object>) doc.get(ChunkDocuments.CHILDREN)).remove(0);
        assertEquals(3, ChunkDocuments.vectorsOf(doc).size());
        ((Map<String, Object>) ((List<Object>) doc.get(ChunkDocuments.CHILDREN)).get(1)).remove(ChunkDocuments.EMBEDDING);
        assertNull("a child without its vector: nothing to reuse", ChunkDocuments.vectorsOf(doc));
    }

    @Test
    public void testMapping_recordsFormatThree_andFormatOfReadsOneWhenAbsent() {
        Map<String, Object> mapping = ChunkDocuments.mapping(new ModelInfo(ModelRef.embedded("m"), "m", 2));
        assertEquals(3, ChunkIndexMeta.ofMapping(mapping).format());
        assertTrue(ChunkIndexMeta.ofMapping(mapping).selfInChildren());
        assertTrue(ChunkIndexMeta.ofMapping(mapping).versioned());
        assertEquals(1, ChunkIndexMeta.ofMeta(Map.of("strata", Map.of("source_index", "books"))).format());
        assertFalse(ChunkIndexMeta.ofMeta(Map.of("strata", Map.of("format", 2))).versioned());
        assertNull("not a chunk index", ChunkIndexMeta.ofMapping(Map.of("properties", Map.of())));
    }

    @Test
    public void testMapping_recordsModelAndDimension_butNoSourceIndex() {
        Map<String, Object> mapping = ChunkDocuments.mapping(new ModelInfo(ModelRef.embedded("m"), "m", 384));
        ChunkIndexMeta meta = ChunkIndexMeta.ofMapping(mapping);
        assertNull("the source of a chunk index is the registry's, not _meta's", meta.sourceIndex());
        assertTrue(meta.hasVectors());
        assertEquals(Integer.valueOf(384), meta.dimension());
        ChunkIndexMeta noVectors = ChunkIndexMeta.ofMapping(ChunkDocuments.mapping(null));
        assertFalse(noVectors.hasVectors());
        assertNull(noVectors.dimension());
    }

    @Test
    public void testChunkIdsFit_OpenSearchsIdLimit_countingTheLongestOrdinalInUtf8Bytes() {
        String id = "x".repeat(510);
        ChunkDocuments.checkChunkIdsFit(id, 10); // "…:9": 512 bytes
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ChunkDocuments.checkChunkIdsFit(id, 11));
        assertEquals("[_id] of 510 bytes is too long for this document's chunk ids (<_id>:<ordinal>, up to :10) to fit OpenSearch's "
            + "512-byte limit on ids; use an [_id] of at most 509 bytes", e.getMessage());
        String wide = "é".repeat(254); // 508 bytes in UTF-8, 254 chars
        ChunkDocuments.checkChunkIdsFit(wide, 1000); // "…:999": 512 bytes (in chars, 258)
        assertThrows(IllegalArgumentException.class, () -> ChunkDocuments.checkChunkIdsFit(wide, 1001)); // "…:1000": 513
        ChunkDocuments.checkChunkIdsFit("d1", 1);
    }

    @Test
    public void testChunkIds_ofADocumentOffItsHomeShard_carryTheShard_andParseBack() {
        assertEquals("doc:3", ChunkKey.home("doc").chunkId(3));
        assertEquals("doc:3@2", new ChunkKey("doc", 2).chunkId(3));
        for (String id : List.of("doc:3", "doc:3@2", "a:b@c:0", "a:b@c:0@7", "x@1:12")) {
            int ordinal = ChunkDocuments.ordinalOf(id);
            assertEquals(id, ChunkDocuments.siblingId(id, ordinal));
            assertEquals(ChunkDocuments.siblingId(id, 0), ChunkDocuments.keyOf(id));
        }
        assertEquals(3, ChunkDocuments.ordinalOf("doc:3@2"));
        assertEquals("doc:4@2", ChunkDocuments.siblingId("doc:3@2", 4));
        assertEquals(-1, ChunkDocuments.ordinalOf("doc"));
        assertEquals(-1, ChunkDocuments.ordinalOf("doc:x"));
        assertEquals(-1, ChunkDocuments.ordinalOf("doc:3@x"));
    }

    @Test
    public void testChunkIds_neverCollide_betweenKeys_whateverTheSourceIdHolds() {
        // _ids that look like the other form: each key's ids stay its own
        List<ChunkKey> keys = List.of(ChunkKey.home("doc"), new ChunkKey("doc", 2), ChunkKey.home("doc:0@2"), ChunkKey.home("doc@2"),
            new ChunkKey("doc:0", 2), ChunkKey.home("doc:0"), new ChunkKey("doc@2", 1));
        java.util.Set<String> seen = new java.util.HashSet<>();
        for (ChunkKey key : keys) {
            for (int i = 0; i < 3; i++) {
                assertTrue(key + " " + i, seen.add(key.chunkId(i)));
                assertEquals(key.chunkId(0), ChunkDocuments.keyOf(key.chunkId(i)));
            }
        }
    }
}
