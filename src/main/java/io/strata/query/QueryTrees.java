package io.strata.query;

import org.apache.lucene.search.BooleanClause;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.QueryVisitor;

/** Finding Strata's queries inside a parsed query tree (under {@code bool}, {@code constant_score}, the DLS wrapper, …). */
final class QueryTrees {
    private QueryTrees() {}

    /**
     * The first query of {@code type} in {@code query}, or null. Seen as a leaf, or as the parent of the queries it visits:
     * {@link PlannedParentsQuery} visits the lexical side's words below itself (for highlighters) and is no leaf then.
     */
    static <T extends Query> T find(Query query, Class<T> type) {
        if (query == null) {
            return null;
        }
        Object[] found = new Object[1];
        query.visit(new QueryVisitor() {
            @Override
            public void visitLeaf(Query q) {
                take(q);
            }

            @Override
            public QueryVisitor getSubVisitor(BooleanClause.Occur occur, Query parent) {
                take(parent);
                return this;
            }

            private void take(Query q) {
                if (found[0] == null && type.isInstance(q)) {
                    found[0] = q;
                }
            }
        });
        return type.cast(found[0]);
    }
}
