package io.strata.query;

import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.search.BooleanClause;
import org.apache.lucene.search.BooleanQuery;
import org.apache.lucene.search.DocIdSetIterator;
import org.apache.lucene.search.FilterWeight;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.QueryVisitor;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.ScoreMode;
import org.apache.lucene.search.Scorer;
import org.apache.lucene.search.ScorerSupplier;
import org.apache.lucene.search.Weight;
import org.apache.lucene.util.Bits;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;

/**
 * The Lucene form of the dense per-shard {@code multi_granular} query ({@link DenseParentsQueryBuilder}): its engine-native
 * delegate (the diversified nested k-NN, joined to parents with MAX) and, when the graph search collects more candidates
 * than k, the k best of them on this shard.
 *
 * <p>The graph search runs once per shard and reader, lazily, when the search creates the query's weight — not in
 * {@link #rewrite}: OpenSearch rewrites a shard's query again each time something re-prepares it ({@link PreFilterPushdown}
 * and the security plugin's document-level security each do), and a search in rewrite would run each time. Its result
 * (the top parents of this reader) is kept for the reader; the weight is not cacheable, since a top-k set depends on the
 * whole reader, not on one segment. Keeps the query vector and levels visible to {@link BestChildFetchSubPhase}.
 */
final class MultiGranularQuery extends Query {
    private final Query delegate;
    private final int k;
    private final int candidates;
    private final float[] vector;
    private final List<Integer> levels;
    private final boolean explainChild;
    /** The delegate for the parents that also match a restriction (see {@link PreFilterPushdown}); null: not supported. */
    private final Function<Query, Query> restricted;
    /** The reader the graph search ran on, and what it found there (the top parents); guarded by this. */
    private Object searchedReader;
    private Query searched;
    /** Graph searches run by this instance (one per reader it is searched on). */
    private int graphSearches;

    MultiGranularQuery(Query delegate, int k, int candidates, float[] vector, List<Integer> levels, boolean explainChild) {
        this(delegate, k, candidates, vector, levels, explainChild, null);
    }

    MultiGranularQuery(Query delegate, int k, int candidates, float[] vector, List<Integer> levels, boolean explainChild,
                       Function<Query, Query> restricted) {
        this.restricted = restricted;
        this.delegate = delegate;
        this.k = k;
        this.candidates = candidates;
        this.vector = vector;
        this.levels = List.copyOf(levels);
        this.explainChild = explainChild;
    }

    float[] vector() {
        return vector;
    }

    List<Integer> levels() {
        return levels;
    }

    boolean explainChild() {
        return explainChild;
    }

    Query delegate() {
        return delegate;
    }

    int k() {
        return k;
    }

    int candidates() {
        return candidates;
    }

    /**
     * This query for the parents that also match {@code restriction}: the graph search runs on them, so the k best are k
     * of them (a restriction applied after the top k would leave fewer, or none). Same query when it cannot be restricted.
     */
    MultiGranularQuery restrictedTo(Query restriction) {
        if (restricted == null) {
            return this;
        }
        Function<Query, Query> further = more -> restricted.apply(more == null ? restriction
            : new BooleanQuery.Builder().add(restriction, BooleanClause.Occur.FILTER).add(more, BooleanClause.Occur.FILTER).build());
        return new MultiGranularQuery(restricted.apply(restriction), k, candidates, vector, levels, explainChild, further);
    }

    /** Nothing to rewrite: the graph search runs in {@link #createWeight}, once per reader. */
    @Override
    public Query rewrite(IndexSearcher searcher) {
        return this;
    }

    @Override
    public Weight createWeight(IndexSearcher searcher, ScoreMode scoreMode, float boost) throws IOException {
        return uncached(this, topParents(searcher).createWeight(searcher, scoreMode, boost));
    }

    /** {@code top} as {@code owner}'s weight, never cached: a top-k set depends on the whole reader, not on one segment. */
    static Weight uncached(Query owner, Weight top) {
        return new FilterWeight(owner, top) {
            @Override
            public boolean isCacheable(LeafReaderContext ctx) {
                return false;
            }
        };
    }

    /** Graph searches this instance ran (tests count them). */
    synchronized int graphSearches() {
        return graphSearches;
    }

    /**
     * The top parents of the searcher's reader: the graph search (run the first time this reader is searched), cut to the
     * k best when it collected more candidates.
     */
    private synchronized Query topParents(IndexSearcher searcher) throws IOException {
        Object reader = searcher.getIndexReader().getContext().id();
        if (searched != null && searchedReader == reader) {
            return searched;
        }
        graphSearches++;
        Query result = graphSearch(searcher);
        if (candidates > k) {
            result = new ScoredDocsQuery(best(searcher, result).toArray(ScoreDoc[]::new), searcher.getIndexReader(),
                "multi_granular: MAX over the parent and its children at the counted levels");
        }
        searchedReader = reader;
        searched = result;
        return result;
    }

    /**
     * The k best parents of the searcher's reader with their scores, best first (ties: by doc): the graph search, run
     * here, not kept — for a caller that uses them once ({@link HybridShardQuery}).
     */
    List<ScoreDoc> topDocs(IndexSearcher searcher) throws IOException {
        synchronized (this) {
            graphSearches++;
        }
        return best(searcher, graphSearch(searcher));
    }

    /** The delegate rewritten: the graph searches run in its rewrite. */
    private Query graphSearch(IndexSearcher searcher) throws IOException {
        // Lucene's rewrite loop, not the searcher's, whose profiler does not nest
        Query result = delegate;
        for (Query next = result.rewrite(searcher); next != result; next = result.rewrite(searcher)) {
            result = next;
        }
        return result;
    }

    /** The k best parents of what the graph search found: at most a few times {@code candidates} parents, one pass. */
    private List<ScoreDoc> best(IndexSearcher searcher, Query found) throws IOException {
        Weight weight = found.createWeight(searcher, ScoreMode.COMPLETE, 1f);
        List<ScoreDoc> hits = new ArrayList<>();
        for (LeafReaderContext leaf : searcher.getIndexReader().leaves()) {
            ScorerSupplier supplier = weight.scorerSupplier(leaf);
            if (supplier == null) {
                continue;
            }
            Scorer scorer = supplier.get(Long.MAX_VALUE);
            Bits live = leaf.reader().getLiveDocs();
            DocIdSetIterator it = scorer.iterator();
            for (int doc = it.nextDoc(); doc != DocIdSetIterator.NO_MORE_DOCS; doc = it.nextDoc()) {
                if (live == null || live.get(doc)) {
                    hits.add(new ScoreDoc(leaf.docBase + doc, scorer.score()));
                }
            }
        }
        hits.sort((a, b) -> a.score != b.score ? Float.compare(b.score, a.score) : Integer.compare(a.doc, b.doc));
        return hits.subList(0, Math.min(k, hits.size()));
    }

    @Override
    public void visit(QueryVisitor visitor) {
        visitor.visitLeaf(this);
        delegate.visit(visitor);
    }

    @Override
    public String toString(String field) {
        return "multi_granular(k=" + k + ", candidates=" + candidates + ", " + delegate.toString(field) + ")";
    }

    @Override
    public boolean equals(Object o) {
        return sameClassAs(o) && delegate.equals(((MultiGranularQuery) o).delegate) && k == ((MultiGranularQuery) o).k
            && candidates == ((MultiGranularQuery) o).candidates && Arrays.equals(vector, ((MultiGranularQuery) o).vector)
            && levels.equals(((MultiGranularQuery) o).levels) && explainChild == ((MultiGranularQuery) o).explainChild;
    }

    @Override
    public int hashCode() {
        return Objects.hash(classHash(), delegate, k, candidates, Arrays.hashCode(vector), levels, explainChild);
    }
}
