package io.strata.query;

import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.StringField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.Term;
import org.apache.lucene.search.BooleanClause;
import org.apache.lucene.search.BooleanQuery;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.QueryVisitor;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.TermQuery;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.search.join.QueryBitSetProducer;
import org.apache.lucene.store.ByteBuffersDirectory;
import org.junit.Test;
import org.opensearch.common.io.stream.BytesStreamOutput;
import org.opensearch.core.index.Index;
import org.opensearch.core.rest.RestStatus;
import org.opensearch.index.mapper.IdFieldMapper;
import org.opensearch.index.mapper.Uid;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

/**
 * The shard side of a planned {@code multi_granular} query on a real Lucene index laid out as OpenSearch lays out a chunk
 * index: every parent is a block of its nested children followed by the parent, and the children carry the parent's
 * {@code _id} too.
 */
public class PlannedParentsQueryTests {
    private static final String ROOT = "root";

    private static Document doc(String id, boolean root) {
        Document d = new Document();
        d.add(new Field(IdFieldMapper.NAME, Uid.encodeId(id), StringField.TYPE_NOT_STORED));
        d.add(new StringField("stored_id", id, Field.Store.YES));
        if (root) {
            d.add(new StringField(ROOT, "y", Field.Store.NO));
        }
        return d;
    }

    private static PlannedParentsQueryBuilder.Parent parent(String id, float score) {
        return new PlannedParentsQueryBuilder.Parent(new Fusion.Fused("idx", id, score, 0.8f, Float.NaN, score, 0), null);
    }

    @Test
    public void testRewrite_matchesOnlyTheLiveRootDocumentOfEachPlannedParent_withItsPlannedScore() throws Exception {
        try (ByteBuffersDirectory dir = new ByteBuffersDirectory()) {
            try (IndexWriter w = new IndexWriter(dir, new IndexWriterConfig())) {
                for (int p = 0; p < 20; p++) {
                    String id = "src-" + p / 4 + ":" + p % 4; // chunk ids as the processor writes them
                    List<Document> block = new ArrayList<>();
                    for (int c = 0; c < 3; c++) {
                        block.add(doc(id, false));
                    }
                    block.add(doc(id, true));
                    w.addDocuments(block);
                    if (p == 9) {
                        w.commit(); // two segments
                    }
                }
                // a deleted copy of a fused parent: re-indexed, so one live and one deleted block share the id
                List<Document> again = List.of(doc("src-1:1", false), doc("src-1:1", true));
                w.updateDocuments(new Term(IdFieldMapper.NAME, Uid.encodeId("src-1:1")), again);
            }
            try (DirectoryReader reader = DirectoryReader.open(dir)) {
                IndexSearcher searcher = new IndexSearcher(reader);
                Map<String, PlannedParentsQueryBuilder.Parent> fused = new HashMap<>();
                fused.put("src-0:2", parent("src-0:2", 0.9f));
                fused.put("src-1:1", parent("src-1:1", 0.7f));
                fused.put("src-4:3", parent("src-4:3", 0.5f));
                fused.put("src-9:0", parent("src-9:0", 0.4f)); // on another shard
                PlannedParentsQuery query = new PlannedParentsQuery(MultiGranularQueryBuilder.Mode.HYBRID, fused, new QueryBitSetProducer(new TermQuery(new Term(ROOT, "y"))),
                    null, List.of(0, 1, 2), false, null, null);
                TopDocs top = searcher.search(query, 10);
                assertEquals(3, top.totalHits.value());
                List<String> ids = new ArrayList<>();
                for (ScoreDoc sd : top.scoreDocs) {
                    ids.add(searcher.storedFields().document(sd.doc).get("stored_id"));
                    assertEquals(fused.get(ids.get(ids.size() - 1)).fused().score(), sd.score, 0f);
                }
                assertEquals(List.of("src-0:2", "src-1:1", "src-4:3"), ids);
                assertEquals(0.9f, query.parent("src-0:2", -1).fused().score(), 0f);
                assertNull(query.parent("src-2:2", -1));
            }
        }
    }

    @Test
    public void testBuilder_roundTripsOverTheWire() throws Exception {
        PlannedParentsQueryBuilder b = new PlannedParentsQueryBuilder(MultiGranularQueryBuilder.Mode.HYBRID, List.of(
            new PlannedParentsQueryBuilder.Parent(new Fusion.Fused("i", "a:0", 0.8f, 0.9f, 12.5f, 0.5, 0.3),
                List.of(new PlannedParentsQueryBuilder.SideChunk(2, 3, 12.5f), new PlannedParentsQueryBuilder.SideChunk(1, 0, 9f))),
            new PlannedParentsQueryBuilder.Parent(new Fusion.Fused("i", "b:1", 0.5f, Float.NaN, 7f, 0, 0.5), null)),
            new PlannedParentsQueryBuilder.Planned(List.of(new Index("i", "uuid-i"), new Index("j", "uuid-j")), List.of("alias")),
            new float[] { 0.25f, -1f }, List.of(0, 2), true,
            new PlannedParentsQueryBuilder.EvidenceSpec(new Evidence(3, 2), "who wrote it", 0.9f, 0.1f, 14f, Float.NaN), "who wrote it");
        try (BytesStreamOutput out = new BytesStreamOutput()) {
            b.writeTo(out);
            PlannedParentsQueryBuilder read = new PlannedParentsQueryBuilder(out.bytes().streamInput());
            assertEquals(b, read);
            assertEquals(b.hashCode(), read.hashCode());
        }
    }

    @Test
    public void testVisit_givesTheLexicalSidesWords_toAHighlighter_andIsALeafWithoutThem() {
        Map<String, PlannedParentsQueryBuilder.Parent> planned = Map.of("a:0", parent("a:0", 0.9f));
        QueryBitSetProducer roots = new QueryBitSetProducer(new TermQuery(new Term(ROOT, "y")));
        BooleanQuery words = new BooleanQuery.Builder()
            .add(new TermQuery(new Term("text", "hannah")), BooleanClause.Occur.SHOULD)
            .add(new TermQuery(new Term("text", "fortunate")), BooleanClause.Occur.SHOULD).build();
        Set<Term> collected = new HashSet<>();
        new PlannedParentsQuery(MultiGranularQueryBuilder.Mode.HYBRID, planned, roots, null, List.of(0), false, null, words)
            .visit(QueryVisitor.termCollector(collected));
        assertEquals(Set.of(new Term("text", "hannah"), new Term("text", "fortunate")), collected);
        collected.clear();
        new PlannedParentsQuery(MultiGranularQueryBuilder.Mode.DENSE, planned, roots, null, List.of(0), false, null, null)
            .visit(QueryVisitor.termCollector(collected));
        assertEquals(Set.of(), collected);
    }

    @Test
    public void testAShardOfAnIndexThePlanningDidNotSearch_failsWithARetryable503NamingBoth() {
        PlannedParentsQueryBuilder.Planned planned = new PlannedParentsQueryBuilder.Planned(List.of(new Index("docs-chunks-g1", "u1")),
            List.of("docs-chunks"));
        planned.check(new Index("docs-chunks-g1", "u1"));
        // the alias moved to another generation between the planning and the lookup
        PlannedParentsQueryBuilder.IndexMovedException e = assertThrows(PlannedParentsQueryBuilder.IndexMovedException.class,
            () -> planned.check(new Index("docs-chunks-g2", "u2")));
        assertEquals(RestStatus.SERVICE_UNAVAILABLE, e.status());
        assertEquals("[multi_granular] the chunk index behind [docs-chunks] moved during this search: its parents were planned in "
            + "[docs-chunks-g1] and this shard is of [docs-chunks-g2]; retry the search", e.getMessage());
        assertEquals("docs-chunks-g2", e.getIndex().getName());
        // an index deleted and created again under the same name is another index
        assertThrows(PlannedParentsQueryBuilder.IndexMovedException.class, () -> planned.check(new Index("docs-chunks-g1", "u3")));
        assertTrue(planned.indices().contains(new Index("docs-chunks-g1", "u1")));
    }
}
