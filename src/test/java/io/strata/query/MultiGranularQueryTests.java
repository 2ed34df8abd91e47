package io.strata.query;

import org.apache.lucene.codecs.lucene99.Lucene99HnswVectorsFormat;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.IntField;
import org.apache.lucene.document.KnnFloatVectorField;
import org.apache.lucene.document.NumericDocValuesField;
import org.apache.lucene.document.StringField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.DocValues;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.NumericDocValues;
import org.apache.lucene.index.Term;
import org.apache.lucene.index.VectorSimilarityFunction;
import org.apache.lucene.search.BooleanClause.Occur;
import org.apache.lucene.search.BooleanQuery;
import org.apache.lucene.search.FieldExistsQuery;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.MatchAllDocsQuery;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.QueryVisitor;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.TermQuery;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.search.join.BitSetProducer;
import org.apache.lucene.search.join.DiversifyingChildrenFloatKnnVectorQuery;
import org.apache.lucene.search.join.QueryBitSetProducer;
import org.apache.lucene.search.join.ScoreMode;
import org.apache.lucene.search.join.ToChildBlockJoinQuery;
import org.apache.lucene.search.join.ToParentBlockJoinQuery;
import org.apache.lucene.store.Directory;
import org.apache.lucene.tests.index.RandomIndexWriter;
import org.apache.lucene.tests.search.CheckHits;
import org.apache.lucene.tests.search.QueryUtils;
import org.apache.lucene.tests.util.LuceneTestCase;
import org.apache.lucene.tests.util.TestUtil;
import org.apache.lucene.util.Bits;
import org.apache.lucene.util.IOUtils;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * {@link MultiGranularQuery} over random chunk indices laid out as OpenSearch lays out a format-2 chunk index (each parent a
 * block: its nested children, its own level-0 entry, then the parent), in several segments, with deleted and re-written
 * blocks. The delegate has the shape {@link MultiGranularQueryBuilder} builds: a {@link ToParentBlockJoinQuery} (MAX) over one {@link DiversifyingChildrenFloatKnnVectorQuery} on the children's vectors,
 * with a filter on the counted levels; with more candidates than documents the k-NN search is exact, so its result is
 * computed by brute force here: a live parent's score is the best cosine score of its live children at the counted
 * levels. With candidates above k the query keeps exactly the k best parents of the reader with those scores (ties by doc
 * id), and {@code explain} gives the same scores; with candidates at most k it is its delegate.
 */
public class MultiGranularQueryTests extends LuceneTestCase {
    private static final String CHILD_VECTOR = "children.embedding";
    private static final String CHILD_LEVEL = "children.level";
    private static final int DIMS = 4;
    private static final VectorSimilarityFunction SIMILARITY = VectorSimilarityFunction.COSINE;

    /** One child as written: its block (= its parent), level and vector. */
    private record Child(int block, int level, float[] vector) {}

    /** A random chunk index and what was written to it. */
    private record ChunkIndex(Directory dir, DirectoryReader reader, List<Child> children) implements AutoCloseable {
        @Override
        public void close() throws IOException {
            IOUtils.close(reader, dir);
        }
    }

    private static float[] randomVector() {
        float[] v = new float[DIMS];
        for (int i = 0; i < DIMS; i++) {
            v[i] = random().nextFloat() * 2 - 1;
        }
        v[0] += 0.01f; // never the zero vector
        return v;
    }

    /** A block: 0-4 children at levels 1-3, the parent's own level-0 entry, then the parent. */
    private static List<Document> block(int block, List<Child> children) {
        List<Document> docs = new ArrayList<>();
        float[] own = randomVector();
        int n = random().nextInt(5);
        for (int c = 0; c <= n; c++) {
            Child child = c == n ? new Child(block, 0, own) : new Child(block, 1 + random().nextInt(3), randomVector());
            Document d = new Document();
            d.add(new StringField("block", Integer.toString(block), Field.Store.NO));
            d.add(new NumericDocValuesField("child_key", children.size()));
            d.add(new IntField(CHILD_LEVEL, child.level(), Field.Store.NO));
            d.add(new KnnFloatVectorField(CHILD_VECTOR, child.vector(), SIMILARITY));
            children.add(child);
            docs.add(d);
        }
        Document parent = new Document();
        parent.add(new StringField("block", Integer.toString(block), Field.Store.YES));
        parent.add(new NumericDocValuesField("parent_key", block));
        parent.add(new KnnFloatVectorField("embedding", own, SIMILARITY));
        docs.add(parent);
        return docs;
    }

    /**
     * {@code parents} blocks in several segments; then some documents are deleted and some re-chunked (their block
     * replaced by a new one at the end), whole blocks at a time, as OpenSearch deletes nested documents with their parent
     * (block joins need deletions consistent across a block: Lucene's block-join bulk scorer checks the children's).
     */
    private static ChunkIndex randomIndex(int parents) throws IOException {
        Directory dir = newDirectory();
        List<Child> children = new ArrayList<>();
        // the exact float vectors (no quantizing format): the brute force scores the same floats
        IndexWriterConfig config = newIndexWriterConfig().setCodec(TestUtil.alwaysKnnVectorsFormat(new Lucene99HnswVectorsFormat()))
            .setMaxBufferedDocs(TestUtil.nextInt(random(), 20, 60));
        try (RandomIndexWriter w = new RandomIndexWriter(random(), dir, config)) {
            for (int block = 0; block < parents; block++) {
                w.addDocuments(block(block, children));
                if (random().nextInt(parents / 3 + 1) == 0) {
                    w.commit(); // more segments
                }
            }
            for (int block = 0; block < parents; block++) {
                Term term = new Term("block", Integer.toString(block));
                switch (random().nextInt(8)) {
                    case 0 -> w.deleteDocuments(term);
                    case 1 -> w.updateDocuments(term, block(block, children));
                    default -> { }
                }
            }
            return new ChunkIndex(dir, w.getReader(), children);
        }
    }

    private static BitSetProducer parents() {
        return new QueryBitSetProducer(new FieldExistsQuery("parent_key"));
    }

    /** The delegate {@link MultiGranularQueryBuilder} builds for a format-2 index when a level does not count. */
    private static Query delegate(float[] vector, List<Integer> levels, int candidates) {
        Query levelFilter = IntField.newSetQuery(CHILD_LEVEL, levels.stream().mapToInt(Integer::intValue).toArray());
        Query best = new DiversifyingChildrenFloatKnnVectorQuery(CHILD_VECTOR, vector, levelFilter, candidates, parents());
        return new ToParentBlockJoinQuery(best, parents(), ScoreMode.Max);
    }

    /**
     * Every live parent with a live child at a counted level, scored by its best such child, best first (ties: doc id);
     * read from the doc values that name each document, so deleted and merged-away documents fall out as they do in search.
     */
    private static List<ScoreDoc> bruteForce(ChunkIndex index, float[] vector, List<Integer> levels) throws IOException {
        boolean[] liveChild = new boolean[index.children().size()];
        List<int[]> liveParents = new ArrayList<>(); // {doc, block}
        for (LeafReaderContext leaf : index.reader().leaves()) {
            Bits live = leaf.reader().getLiveDocs();
            NumericDocValues childKeys = DocValues.getNumeric(leaf.reader(), "child_key");
            NumericDocValues parentKeys = DocValues.getNumeric(leaf.reader(), "parent_key");
            for (int doc = 0; doc < leaf.reader().maxDoc(); doc++) {
                if (live != null && !live.get(doc)) {
                    continue;
                }
                if (childKeys.advanceExact(doc)) {
                    liveChild[(int) childKeys.longValue()] = true;
                } else if (parentKeys.advanceExact(doc)) {
                    liveParents.add(new int[] { leaf.docBase + doc, (int) parentKeys.longValue() });
                }
            }
        }
        List<ScoreDoc> out = new ArrayList<>();
        for (int[] parent : liveParents) {
            float best = Float.NEGATIVE_INFINITY;
            for (int key = 0; key < liveChild.length; key++) {
                Child c = index.children().get(key);
                if (liveChild[key] && c.block() == parent[1] && levels.contains(c.level())) {
                    best = Math.max(best, SIMILARITY.compare(vector, c.vector()));
                }
            }
            if (best != Float.NEGATIVE_INFINITY) {
                out.add(new ScoreDoc(parent[0], best));
            }
        }
        out.sort((a, b) -> a.score != b.score ? Float.compare(b.score, a.score) : Integer.compare(a.doc, b.doc));
        return out;
    }

    private static List<Integer> randomLevels() {
        List<Integer> levels = new ArrayList<>();
        for (int level = 0; level <= 3; level++) {
            if (random().nextBoolean()) {
                levels.add(level);
            }
        }
        if (levels.isEmpty()) {
            levels.add(random().nextInt(4));
        }
        return levels;
    }

    private static void assertHits(List<ScoreDoc> expected, ScoreDoc[] actual) {
        assertEquals("hits", expected.size(), actual.length);
        for (int i = 0; i < expected.size(); i++) {
            assertEquals("doc at rank " + i, expected.get(i).doc, actual[i].doc);
            assertEquals("score at rank " + i, expected.get(i).score, actual[i].score, 1e-6f);
        }
    }

    public void testSearch_withMoreCandidatesThanK_keepsExactlyTheKBestParentsOfTheReader_withTheirBestChildsScore()
        throws IOException {
        for (int iter = 0; iter < 3; iter++) {
            try (ChunkIndex index = randomIndex(TestUtil.nextInt(random(), 30, 120))) {
                IndexSearcher searcher = newSearcher(index.reader());
                float[] vector = randomVector();
                List<Integer> levels = randomLevels();
                int k = TestUtil.nextInt(random(), 1, 12);
                int candidates = index.reader().maxDoc() + random().nextInt(10); // more than k, and an exact k-NN
                MultiGranularQuery query = new MultiGranularQuery(delegate(vector, levels, candidates), k, candidates, vector, levels,
                    false);
                List<ScoreDoc> all = bruteForce(index, vector, levels);
                List<ScoreDoc> best = all.subList(0, Math.min(k, all.size()));

                assertSame("nothing to rewrite: the graph search runs when the weight is made", query, searcher.rewrite(query));
                TopDocs top = searcher.search(query, k + 5 + random().nextInt(20));
                assertHits(best, top.scoreDocs);
                assertEquals(best.size(), top.totalHits.value());
                assertEquals(best.size(), searcher.count(query));
                for (ScoreDoc hit : top.scoreDocs) {
                    assertEquals(hit.score, searcher.explain(query, hit.doc).getValue().floatValue(), 0f);
                }
                CheckHits.checkExplanations(query, "", searcher, true);
                assertEquals("one graph search for the reader, however often it is searched", 1, query.graphSearches());
                // the k best of the whole reader: the brute force's next parent, if any, is not found
                if (all.size() > k) {
                    assertFalse(searcher.explain(query, all.get(k).doc).isMatch());
                }
            }
        }
    }

    public void testSearch_withCandidatesAtMostK_isTheDelegates_whoseHitsAreEveryMatchingParent() throws IOException {
        try (ChunkIndex index = randomIndex(TestUtil.nextInt(random(), 30, 80))) {
            IndexSearcher searcher = newSearcher(index.reader());
            float[] vector = randomVector();
            List<Integer> levels = randomLevels();
            int k = index.reader().maxDoc() + 1;
            Query delegate = delegate(vector, levels, k);
            MultiGranularQuery query = new MultiGranularQuery(delegate, k, k, vector, levels, false);

            TopDocs top = searcher.search(query, k);
            assertHits(bruteForce(index, vector, levels), top.scoreDocs);
        }
    }

    public void testSearch_onAReaderWithoutMatches_keepsNothing() throws IOException {
        try (ChunkIndex index = randomIndex(10)) {
            IndexSearcher searcher = newSearcher(index.reader());
            float[] vector = randomVector();
            List<Integer> levels = List.of(7); // no child has this level
            MultiGranularQuery query = new MultiGranularQuery(delegate(vector, levels, 100), 3, 100, vector, levels, false);

            assertEquals(0, searcher.count(query));
            assertEquals(0, searcher.search(query, 10).scoreDocs.length);
        }
    }

    /** Counts the runs of a query's rewrite, where Lucene's k-NN queries run their graph search. */
    private static final class CountingQuery extends Query {
        private final Query in;
        private final int[] runs;

        CountingQuery(Query in, int[] runs) {
            this.in = in;
            this.runs = runs;
        }

        @Override
        public Query rewrite(IndexSearcher searcher) throws IOException {
            runs[0]++;
            return in.rewrite(searcher);
        }

        @Override
        public void visit(QueryVisitor visitor) {
            in.visit(visitor);
        }

        @Override
        public String toString(String field) {
            return "counting(" + in.toString(field) + ")";
        }

        @Override
        public boolean equals(Object o) {
            return sameClassAs(o) && in.equals(((CountingQuery) o).in);
        }

        @Override
        public int hashCode() {
            return in.hashCode();
        }
    }

    /** The graph search for the parents that match a restriction (null: all), as DenseParentsQueryBuilder builds it. */
    private static Query restrictedSearch(float[] vector, List<Integer> levels, int candidates, Query restriction, int[] runs) {
        Query levelFilter = IntField.newSetQuery(CHILD_LEVEL, levels.stream().mapToInt(Integer::intValue).toArray());
        Query childFilter = levelFilter;
        if (restriction != null) {
            Query parentCandidates = new BooleanQuery.Builder().add(new FieldExistsQuery("parent_key"), Occur.FILTER)
                .add(restriction, Occur.FILTER).build();
            childFilter = new BooleanQuery.Builder().add(levelFilter, Occur.FILTER)
                .add(new ToChildBlockJoinQuery(parentCandidates, parents()), Occur.FILTER).build();
        }
        Query best = new DiversifyingChildrenFloatKnnVectorQuery(CHILD_VECTOR, vector, childFilter, candidates, parents());
        return new CountingQuery(new ToParentBlockJoinQuery(best, parents(), ScoreMode.Max), runs);
    }

    private static MultiGranularQuery restrictable(float[] vector, List<Integer> levels, int k, int candidates, int[] runs) {
        return new MultiGranularQuery(restrictedSearch(vector, levels, candidates, null, runs), k, candidates, vector, levels, false,
            r -> restrictedSearch(vector, levels, candidates, r, runs));
    }

    /** The blocks whose parent is live and not in {@code excluded}. */
    private static List<ScoreDoc> without(ChunkIndex index, List<ScoreDoc> ranked, String excluded) throws IOException {
        List<ScoreDoc> out = new ArrayList<>();
        for (ScoreDoc sd : ranked) {
            if (!excluded.equals(index.reader().storedFields().document(sd.doc).get("block"))) {
                out.add(sd);
            }
        }
        return out;
    }

    public void testShardQuery_rewrittenAndPushedDownAsOpenSearchPreparesIt_runsTheGraphSearchOnce() throws IOException {
        try (ChunkIndex index = randomIndex(TestUtil.nextInt(random(), 40, 80))) {
            IndexSearcher searcher = newSearcher(index.reader());
            float[] vector = randomVector();
            List<Integer> levels = List.of(0, 1, 2, 3);
            int[] runs = { 0 };
            int candidates = index.reader().maxDoc() + 1;
            MultiGranularQuery mg = restrictable(vector, levels, 5, candidates, runs);
            // as a shard prepares its query: the parsed query bool {must: the query, filter: [nested filter]} is rewritten
            // (preProcess), wrapped by the security plugin's DLS and rewritten again, pushed down (PreFilterPushdown) and
            // rewritten again; each time from the parsed, unrewritten query
            Query parsed = new BooleanQuery.Builder().add(mg, Occur.MUST).add(new FieldExistsQuery("parent_key"), Occur.FILTER).build();
            searcher.rewrite(parsed);
            parsed = new BooleanQuery.Builder().setMinimumNumberShouldMatch(1).add(new FieldExistsQuery("parent_key"), Occur.SHOULD)
                .add(parsed, Occur.MUST).build();
            searcher.rewrite(parsed);
            parsed = PreFilterPushdown.pushDown(parsed);
            Query prepared = searcher.rewrite(parsed);
            TopDocs top = searcher.search(prepared, 10);
            assertEquals("graph searches", 1, runs[0]);
            List<ScoreDoc> all = bruteForce(index, vector, levels);
            assertEquals(Math.min(5, all.size()), top.scoreDocs.length);
            for (int i = 0; i < top.scoreDocs.length; i++) {
                assertEquals(all.get(i).doc, top.scoreDocs[i].doc);
            }
        }
    }

    public void testPushDown_ofOnlyMustNotClauses_keepsKOfTheOtherParents() throws IOException {
        try (ChunkIndex index = randomIndex(TestUtil.nextInt(random(), 40, 80))) {
            IndexSearcher searcher = newSearcher(index.reader());
            float[] vector = randomVector();
            List<Integer> levels = List.of(0, 1, 2, 3);
            int candidates = index.reader().maxDoc() + 1;
            List<ScoreDoc> all = bruteForce(index, vector, levels);
            // exclude the block of the best parent, as bool {must: multi_granular, must_not: term} does
            String best = index.reader().storedFields().document(all.get(0).doc).get("block");
            Query bool = new BooleanQuery.Builder().add(restrictable(vector, levels, 5, candidates, new int[1]), Occur.MUST)
                .add(new TermQuery(new Term("block", best)), Occur.MUST_NOT).build();
            TopDocs top = searcher.search(PreFilterPushdown.pushDown(bool), 10);
            List<ScoreDoc> expected = without(index, all, best);
            assertEquals(Math.min(5, expected.size()), top.scoreDocs.length);
            for (int i = 0; i < top.scoreDocs.length; i++) {
                assertEquals("rank " + i, expected.get(i).doc, top.scoreDocs[i].doc);
                assertEquals("rank " + i, expected.get(i).score, top.scoreDocs[i].score, 0f);
            }
        }
    }

    public void testEquality_dependsOnEveryPart() {
        float[] vector = { 1, 0, 0, 0 };
        Query delegate = new MatchAllDocsQuery();
        MultiGranularQuery query = new MultiGranularQuery(delegate, 5, 50, vector, List.of(0, 1), true);
        QueryUtils.check(query);
        QueryUtils.checkEqual(query, new MultiGranularQuery(new MatchAllDocsQuery(), 5, 50, vector.clone(), List.of(0, 1), true));
        QueryUtils.checkUnequal(query, new MultiGranularQuery(new TermQuery(new Term("f", "v")), 5, 50, vector, List.of(0, 1), true));
        QueryUtils.checkUnequal(query, new MultiGranularQuery(delegate, 6, 50, vector, List.of(0, 1), true));
        QueryUtils.checkUnequal(query, new MultiGranularQuery(delegate, 5, 60, vector, List.of(0, 1), true));
        QueryUtils.checkUnequal(query, new MultiGranularQuery(delegate, 5, 50, new float[] { 0, 1, 0, 0 }, List.of(0, 1), true));
        QueryUtils.checkUnequal(query, new MultiGranularQuery(delegate, 5, 50, vector, List.of(0), true));
        QueryUtils.checkUnequal(query, new MultiGranularQuery(delegate, 5, 50, vector, List.of(0, 1), false));
    }
}
