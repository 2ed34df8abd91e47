package io.strata.query;

import org.apache.lucene.index.Term;
import org.apache.lucene.search.BooleanClause.Occur;
import org.apache.lucene.search.BooleanQuery;
import org.apache.lucene.search.ConstantScoreQuery;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.TermQuery;
import org.apache.lucene.search.join.QueryBitSetProducer;
import org.junit.Test;

import java.util.List;
import java.util.Map;

import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertSame;

/** Strata's queries are found in a parsed tree whether they visit as leaves or, with the lexical side's words, as parents. */
public class QueryTreesTests {
    private static PlannedParentsQuery planned(Query words) {
        return new PlannedParentsQuery(MultiGranularQueryBuilder.Mode.HYBRID, Map.of("a:0",
            PlannedParentsQueryBuilder.Parent.dense("i", "a:0", 0.9f)), new QueryBitSetProducer(new TermQuery(new Term("root", "y"))),
            null, List.of(0, 1), false, null, words);
    }

    @Test
    public void find_plannedParents_withTheLexicalSidesWords_underABoolFilter_andBareUnderAConstantScore() {
        PlannedParentsQuery withWords = planned(new TermQuery(new Term("text", "hannah")));
        Query bool = new BooleanQuery.Builder().add(withWords, Occur.MUST).add(new TermQuery(new Term("topic", "b")), Occur.FILTER).build();
        assertSame(withWords, QueryTrees.find(bool, PlannedParentsQuery.class));
        PlannedParentsQuery bare = planned(null);
        assertSame(bare, QueryTrees.find(new ConstantScoreQuery(bare), PlannedParentsQuery.class));
    }

    @Test
    public void find_nothing_inATreeWithoutIt() {
        assertNull(QueryTrees.find(new TermQuery(new Term("text", "x")), PlannedParentsQuery.class));
        assertNull(QueryTrees.find(null, PlannedParentsQuery.class));
    }
}
