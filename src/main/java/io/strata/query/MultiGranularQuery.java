package io.strata.query;

import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.QueryVisitor;

import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * The Lucene form of a semantic {@code multi_granular} query: rewrites to its engine-native delegate (a block join,
 * MAX, over one diversified nested k-NN whose children include the parent itself at level 0), and keeps the query vector and
 * levels visible to {@link BestChildFetchSubPhase}, which finds the child that matched.
 */
final class MultiGranularQuery extends Query {
    private final Query delegate;
    private final float[] vector;
    private final List<Integer> levels;
    private final boolean explainChild;

    MultiGranularQuery(Query delegate, float[] vector, List<Integer> levels, boolean explainChild) {
        this.delegate = delegate;
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

    @Override
    public Query rewrite(IndexSearcher searcher) {
        return delegate;
    }

    @Override
    public void visit(QueryVisitor visitor) {
        visitor.visitLeaf(this);
        delegate.visit(visitor);
    }

    @Override
    public String toString(String field) {
        return "multi_granular(" + delegate.toString(field) + ")";
    }

    @Override
    public boolean equals(Object o) {
        return sameClassAs(o) && delegate.equals(((MultiGranularQuery) o).delegate) && Arrays.equals(vector, ((MultiGranularQuery) o).vector)
            && levels.equals(((MultiGranularQuery) o).levels) && explainChild == ((MultiGranularQuery) o).explainChild;
    }

    @Override
    public int hashCode() {
        return Objects.hash(classHash(), delegate, Arrays.hashCode(vector), levels, explainChild);
    }
}
