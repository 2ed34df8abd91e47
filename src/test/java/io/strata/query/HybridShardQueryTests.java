package io.strata.query;

import io.strata.chunkindex.ChunkDocuments;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.LongPoint;
import org.apache.lucene.document.NumericDocValuesField;
import org.apache.lucene.document.SortedNumericDocValuesField;
import org.apache.lucene.document.StoredField;
import org.apache.lucene.document.StringField;
import org.apache.lucene.document.TextField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.NoMergePolicy;
import org.apache.lucene.index.Term;
import org.apache.lucene.search.BooleanClause;
import org.apache.lucene.search.BooleanQuery;
import org.apache.lucene.search.BoostQuery;
import org.apache.lucene.search.ConstantScoreQuery;
import org.apache.lucene.search.Explanation;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.TermQuery;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.search.join.QueryBitSetProducer;
import org.apache.lucene.store.ByteBuffersDirectory;
import org.junit.Test;
import org.opensearch.common.io.stream.BytesStreamOutput;
import org.opensearch.index.mapper.IdFieldMapper;
import org.opensearch.index.mapper.SeqNoFieldMapper;
import org.opensearch.index.mapper.Uid;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Random;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

/**
 * The one-shard hybrid fusion on a real Lucene index laid out as OpenSearch lays out a chunk index: blocks of nested
 * children (placeholder {@code _seq_no} 1, the parent's {@code _id}) followed by their parent.
 */
public class HybridShardQueryTests {
    private static final String ROOT = "root";

    private static void block(IndexWriter w, String id, long seqNo) throws Exception {
        List<Document> docs = new ArrayList<>();
        for (int c = 0; c < 2; c++) {
            docs.add(doc(id, 1, false));
        }
        docs.add(doc(id, seqNo, true));
        w.addDocuments(docs);
    }

    private static Document doc(String id, long seqNo, boolean root) {
        Document d = new Document();
        d.add(new Field(IdFieldMapper.NAME, Uid.encodeId(id), StringField.TYPE_NOT_STORED));
        if (root) {
            d.add(new StoredField(IdFieldMapper.NAME, Uid.encodeId(id)));
            d.add(new StringField(ROOT, "y", Field.Store.NO));
            d.add(new StringField("pid", id, Field.Store.NO));
        }
        d.add(new LongPoint(SeqNoFieldMapper.NAME, seqNo));
        d.add(new NumericDocValuesField(SeqNoFieldMapper.NAME, seqNo));
        return d;
    }

    /** A parent-only "graph search" scoring parent {@code ids[i]} with {@code scores[i]}. */
    private static MultiGranularQuery dense(int k, String[] ids, float[] scores) {
        BooleanQuery.Builder b = new BooleanQuery.Builder();
        for (int i = 0; i < ids.length; i++) {
            b.add(new BoostQuery(new ConstantScoreQuery(new TermQuery(new Term("pid", ids[i]))), scores[i]), BooleanClause.Occur.SHOULD);
        }
        return new MultiGranularQuery(b.build(), k, 2 * k, new float[] { 1f }, List.of(0, 1, 2), false);
    }

    @Test
    public void testFusion_onTheShard_isTheFusionOfTheSameWindowsById_aParentGoneFromTheReaderShapesItsWindowButIsNoHit()
        throws Exception {
        try (ByteBuffersDirectory dir = new ByteBuffersDirectory()) {
            try (IndexWriter w = new IndexWriter(dir, new IndexWriterConfig())) {
                block(w, "a", 10);
                block(w, "b", 11);
                block(w, "c", 12);
                block(w, "d", 13);
                w.commit();
                w.deleteDocuments(new Term("pid", "d")); // gone since the lexical window was searched
            }
            try (DirectoryReader reader = DirectoryReader.open(dir)) {
                IndexSearcher searcher = new IndexSearcher(reader);
                QueryBitSetProducer roots = new QueryBitSetProducer(new TermQuery(new Term(ROOT, "y")));
                // the lexical window: d (gone), c, and a seq_no that only nested children carry (never a parent); a gone parent
                // follows those it ties with (here "d" and "~" do so by id, as the planned path orders them)
                long[] seqNos = { 13, 12, 1 };
                float[] lexical = { 9f, 5f, 1f };
                for (Fusion fusion : List.of(Fusion.DEFAULT, new Fusion(Fusion.Method.RRF, 0.3, null, 60))) {
                    HybridShardQuery q = new HybridShardQuery(dense(3, new String[] { "a", "b", "c" }, new float[] { 0.9f, 0.8f, 0.8f }),
                        seqNos, new int[] { -1, -1, -1 }, lexical, fusion, 4, roots, new TermQuery(new Term("text", "x")));
                    TopDocs top = searcher.search(q, 10);
                    List<Fusion.Fused> expected = new ArrayList<>();
                    for (Fusion.Fused f : fusion.fuse(List.of(new Fusion.SideHit("i", "a", 0.9f), new Fusion.SideHit("i", "b", 0.8f),
                        new Fusion.SideHit("i", "c", 0.8f)), List.of(new Fusion.SideHit("i", "d", 9f), new Fusion.SideHit("i", "c", 5f),
                        new Fusion.SideHit("i", "~", 1f)), 4)) {
                        if (!f.id().equals("d") && !f.id().equals("~")) {
                            expected.add(f);
                        }
                    }
                    assertEquals(fusion.toString(), expected.size(), top.scoreDocs.length);
                    for (int i = 0; i < expected.size(); i++) {
                        ScoreDoc hit = top.scoreDocs[i];
                        String id = Uid.decodeId(searcher.storedFields().document(hit.doc).getBinaryValue(IdFieldMapper.NAME).bytes);
                        assertEquals(fusion + " #" + i, expected.get(i).id(), id);
                        assertEquals(fusion + " #" + i, expected.get(i).score(), hit.score, 0f);
                    }
                }
            }
        }
    }

    /**
     * The docs where the lexical search found its parents are used where they still hold them; every other hint (another
     * parent's doc, a nested child, a deleted parent, out of the reader, none) is looked up by seq_no: same hits either way.
     */
    @Test
    public void testDocHints_thatStillHoldTheParentSkipTheSeqNoLookup_staleOnesAreLookedUp_sameHits() throws Exception {
        try (ByteBuffersDirectory dir = new ByteBuffersDirectory()) {
            try (IndexWriter w = new IndexWriter(dir, new IndexWriterConfig())) {
                block(w, "a", 10); // docs 0-2, the parent at 2
                block(w, "b", 11); // 3-5
                w.commit();
                block(w, "c", 12); // 6-8 (a second segment)
                block(w, "d", 13); // 9-11
                w.commit();
                w.deleteDocuments(new Term("pid", "d"));
            }
            try (DirectoryReader reader = DirectoryReader.open(dir)) {
                assertEquals(2, reader.leaves().size());
                IndexSearcher searcher = new IndexSearcher(reader);
                QueryBitSetProducer roots = new QueryBitSetProducer(new TermQuery(new Term(ROOT, "y")));
                long[] seqNos = { 12, 10, 11, 13 };
                float[] lexical = { 9f, 7f, 5f, 3f };
                MultiGranularQuery dense = dense(2, new String[] { "b", "c" }, new float[] { 0.9f, 0.5f });
                TopDocs expected = searcher.search(new HybridShardQuery(dense, seqNos, new int[] { -1, -1, -1, -1 }, lexical,
                    Fusion.DEFAULT, 4, roots, new TermQuery(new Term("text", "x"))), 10);
                assertEquals(3, expected.scoreDocs.length);
                int[][] hints = {
                    { 8, 2, 5, 11 }, // where each parent is (d deleted since)
                    { 2, 8, 5, 11 }, // a and c swapped: each holds the other's seq_no
                    { 7, 0, 4, 10 }, // nested children of the right parents
                    { 8, 2, 99, -1 }, // out of the reader, none
                };
                int[] lookedUp = { 1, 3, 4, 2 };
                for (int h = 0; h < hints.length; h++) {
                    HybridShardQuery q = new HybridShardQuery(dense, seqNos, hints[h], lexical, Fusion.DEFAULT, 4, roots,
                        new TermQuery(new Term("text", "x")));
                    TopDocs top = searcher.search(q, 10);
                    assertEquals("hints " + h, expected.scoreDocs.length, top.scoreDocs.length);
                    for (int i = 0; i < top.scoreDocs.length; i++) {
                        assertEquals("hints " + h + " #" + i, expected.scoreDocs[i].doc, top.scoreDocs[i].doc);
                        assertEquals("hints " + h + " #" + i, expected.scoreDocs[i].score, top.scoreDocs[i].score, 0f);
                    }
                    assertEquals("hints " + h, lookedUp[h], q.seqNoLookups());
                }
            }
        }
    }

    /**
     * Explaining on the shard, each fused parent's lexical chunks are its children the child query matches, scored as
     * that query scores each of them alone (an oracle per child: {@code explain}), best first, ties by the earlier child;
     * parents in any order across segments, some without a matching child, one without children.
     */
    @Test
    public void testExplaining_eachParentsLexicalChunks_areItsMatchingChildrenScoredOneByOne_bestFirst() throws Exception {
        Random random = new Random(48);
        String[] vocabulary = { "w", "x", "y", "z" };
        int parents = 40;
        List<String> ids = new ArrayList<>();
        try (ByteBuffersDirectory dir = new ByteBuffersDirectory()) {
            try (IndexWriter w = new IndexWriter(dir, new IndexWriterConfig().setMergePolicy(NoMergePolicy.INSTANCE))) {
                for (int p = 0; p < parents; p++) {
                    String id = "p" + p;
                    ids.add(id);
                    List<Document> block = new ArrayList<>();
                    int children = p == 7 ? 0 : 1 + random.nextInt(6);
                    for (int c = 0; c < children; c++) {
                        Document child = doc(id, 1, false);
                        StringBuilder text = new StringBuilder();
                        for (int t = 1 + random.nextInt(4); t > 0; t--) {
                            text.append(vocabulary[random.nextInt(vocabulary.length)]).append(' ');
                        }
                        child.add(new TextField(ChunkDocuments.CHILDREN + "." + ChunkDocuments.TEXT, text.toString(), Field.Store.NO));
                        child.add(new SortedNumericDocValuesField(ChunkDocuments.CHILDREN + "." + ChunkDocuments.LEVEL, c < 2 ? 1 : 2));
                        child.add(new SortedNumericDocValuesField(ChunkDocuments.CHILDREN + "." + ChunkDocuments.ORDINAL, c));
                        block.add(child);
                    }
                    block.add(doc(id, 100 + p, true));
                    w.addDocuments(block);
                    if (p % 15 == 14) {
                        w.commit(); // three segments
                    }
                }
            }
            try (DirectoryReader reader = DirectoryReader.open(dir)) {
                assertEquals(3, reader.leaves().size());
                IndexSearcher searcher = new IndexSearcher(reader);
                QueryBitSetProducer roots = new QueryBitSetProducer(new TermQuery(new Term(ROOT, "y")));
                Query children = new BooleanQuery.Builder()
                    .add(new TermQuery(new Term(ChunkDocuments.CHILDREN + "." + ChunkDocuments.TEXT, "x")), BooleanClause.Occur.SHOULD)
                    .add(new TermQuery(new Term(ChunkDocuments.CHILDREN + "." + ChunkDocuments.TEXT, "z")), BooleanClause.Occur.SHOULD)
                    .build();
                // both windows hold every parent, the lexical one in a shuffled order
                float[] dense = new float[parents];
                for (int p = 0; p < parents; p++) {
                    dense[p] = random.nextFloat();
                }
                List<Integer> order = new ArrayList<>();
                for (int p = 0; p < parents; p++) {
                    order.add(p);
                }
                Collections.shuffle(order, random);
                long[] seqNos = new long[parents];
                float[] lexical = new float[parents];
                for (int r = 0; r < parents; r++) {
                    seqNos[r] = 100 + order.get(r);
                    lexical[r] = 10f - r * 0.2f;
                }
                int chunks = 3;
                int[] noHints = new int[parents];
                Arrays.fill(noHints, -1);
                HybridShardQuery q = new HybridShardQuery(dense(parents, ids.toArray(String[]::new), dense), seqNos, noHints,
                    lexical, Fusion.DEFAULT, parents, roots, new TermQuery(new Term("text", "x")),
                    new HybridShardQuery.Explaining(true, null, "x z", children, chunks));
                TopDocs top = searcher.search(q, parents);
                assertEquals(parents, top.scoreDocs.length);
                int withChunks = 0;
                for (ScoreDoc hit : top.scoreDocs) {
                    PlannedParentsQueryBuilder.Parent parent = q.parent(null, hit.doc);
                    int first = hit.doc - 1;
                    while (first >= 0 && reader.storedFields().document(first).getBinaryValue(IdFieldMapper.NAME) == null) {
                        first--; // children store no _id: back to the previous parent
                    }
                    List<PlannedParentsQueryBuilder.SideChunk> expected = new ArrayList<>();
                    for (int child = first + 1, ordinal = 0; child < hit.doc; child++, ordinal++) {
                        Explanation e = searcher.explain(children, child);
                        if (e.isMatch()) {
                            expected.add(new PlannedParentsQueryBuilder.SideChunk(ordinal < 2 ? 1 : 2, ordinal, e.getValue().floatValue()));
                        }
                    }
                    expected.sort((a, b) -> Float.compare(b.score(), a.score()));
                    assertEquals("parent at doc " + hit.doc, LexicalForm.bestChunks(parent.fused().lexical(), expected, chunks),
                        parent.lexicalChunks());
                    withChunks += expected.isEmpty() ? 0 : 1;
                }
                assertTrue("most parents have a matching child: " + withChunks, withChunks > parents / 2);
                assertTrue("some have none: " + withChunks, withChunks < parents);
            }
        }
    }

    @Test
    public void testBuilder_roundTripsOverTheWire() throws Exception {
        HybridShardQueryBuilder b = new HybridShardQueryBuilder(new DenseParentsQueryBuilder(new float[] { 0.25f, -1f }, 100, 200,
            List.of(0, 2), null, false), new long[] { 7, 3 }, new int[] { 40, -1 }, new float[] { 12.5f, 3f }, new Fusion(Fusion.Method.RRF, 0.3, 50, 20), 10,
            "who wrote it", true, new Evidence(3, 2));
        try (BytesStreamOutput out = new BytesStreamOutput()) {
            b.writeTo(out);
            HybridShardQueryBuilder read = new HybridShardQueryBuilder(out.bytes().streamInput());
            assertEquals(b, read);
            assertEquals(b.hashCode(), read.hashCode());
        }
    }
}
