package io.strata.query;

import org.apache.lucene.index.Term;
import org.apache.lucene.search.BooleanClause;
import org.apache.lucene.search.BooleanClause.Occur;
import org.apache.lucene.search.BooleanQuery;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.TermQuery;
import org.junit.Test;

import java.util.List;
import java.util.function.Function;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertSame;
import static org.junit.Assert.assertTrue;

/**
 * What {@link PreFilterPushdown} moves into a {@code multi_granular} graph search: the restrictions every hit must meet
 * (the security plugin's DLS wrapper, a bool's filter and must_not), and nothing optional. The graph search stands in as
 * {@code bool {must: graph, filter: restriction}}, so the tests read which restriction it got.
 */
public class PreFilterPushdownTests {
    private static final Query GRAPH = new TermQuery(new Term("graph", "search"));
    private static final Function<Query, Query> SEARCH = r -> r == null ? GRAPH
        : new BooleanQuery.Builder().add(GRAPH, Occur.MUST).add(r, Occur.FILTER).build();

    private static MultiGranularQuery mg() {
        return new MultiGranularQuery(GRAPH, 4, 8, new float[] { 1f, 0f }, List.of(0, 1), false, SEARCH);
    }

    private static Query term(String value) {
        return new TermQuery(new Term("f", value));
    }

    /** The restriction the graph search of {@code q}'s multi_granular query runs under. */
    private static Query restrictionOf(Query q) {
        Query delegate = ((MultiGranularQuery) q).delegate();
        List<BooleanClause> clauses = ((BooleanQuery) delegate).clauses();
        assertEquals(GRAPH, clauses.get(0).query());
        return clauses.get(1).query();
    }

    private static Query mgClause(BooleanQuery q) {
        return q.clauses().stream().filter(c -> c.query() instanceof MultiGranularQuery).findFirst().orElseThrow().query();
    }

    @Test
    public void dlsWrapper_requiredShoulds_goIntoTheGraphSearch_andNoLongerScore() {
        // the security plugin's shape: bool {minimum_should_match: 1, should: [dls, children of dls], must: the query}
        BooleanQuery dls = new BooleanQuery.Builder().setMinimumNumberShouldMatch(1).add(term("red"), Occur.SHOULD)
            .add(term("red-children"), Occur.SHOULD).add(mg(), Occur.MUST).build();
        BooleanQuery pushed = (BooleanQuery) PreFilterPushdown.pushDown(dls);
        BooleanQuery restriction = (BooleanQuery) restrictionOf(mgClause(pushed));
        assertEquals(1, restriction.getMinimumNumberShouldMatch());
        assertEquals(List.of(term("red"), term("red-children")), restriction.clauses().stream().map(BooleanClause::query).toList());
        // outside: the multi_granular query scores, the DLS queries only filter
        assertEquals(2, pushed.clauses().size());
        assertEquals(Occur.MUST, pushed.clauses().get(0).occur());
        assertEquals(Occur.FILTER, pushed.clauses().get(1).occur());
        assertEquals(restriction, pushed.clauses().get(1).query());
    }

    @Test
    public void boolFilterAndMustNot_goIntoTheGraphSearch_andStillApplyOutside() {
        BooleanQuery bool = new BooleanQuery.Builder().add(mg(), Occur.MUST).add(term("x"), Occur.FILTER)
            .add(term("y"), Occur.MUST_NOT).build();
        BooleanQuery pushed = (BooleanQuery) PreFilterPushdown.pushDown(bool);
        BooleanQuery restriction = (BooleanQuery) restrictionOf(mgClause(pushed));
        assertEquals(List.of(new BooleanClause(term("x"), Occur.FILTER), new BooleanClause(term("y"), Occur.MUST_NOT)),
            restriction.clauses());
        assertTrue(pushed.clauses().contains(new BooleanClause(term("x"), Occur.FILTER)));
        assertTrue(pushed.clauses().contains(new BooleanClause(term("y"), Occur.MUST_NOT)));
    }

    @Test
    public void optionalShoulds_twoMultiGranularQueries_orNone_areLeftAlone() {
        BooleanQuery optional = new BooleanQuery.Builder().add(mg(), Occur.MUST).add(term("x"), Occur.SHOULD).build();
        assertSame(optional, PreFilterPushdown.pushDown(optional));
        BooleanQuery two = new BooleanQuery.Builder().add(mg(), Occur.MUST).add(mg(), Occur.MUST).add(term("x"), Occur.FILTER).build();
        assertSame(two, PreFilterPushdown.pushDown(two));
        BooleanQuery none = new BooleanQuery.Builder().add(term("z"), Occur.MUST).add(term("x"), Occur.FILTER).build();
        assertSame(none, PreFilterPushdown.pushDown(none));
        MultiGranularQuery alone = mg();
        assertSame(alone, PreFilterPushdown.pushDown(alone));
    }

    @Test
    public void dlsAroundAUsersBoolFilter_bothRestrictTheGraphSearch() {
        BooleanQuery user = new BooleanQuery.Builder().add(mg(), Occur.MUST).add(term("x"), Occur.FILTER).build();
        BooleanQuery dls = new BooleanQuery.Builder().setMinimumNumberShouldMatch(1).add(term("red"), Occur.SHOULD)
            .add(user, Occur.MUST).build();
        BooleanQuery pushed = (BooleanQuery) PreFilterPushdown.pushDown(dls);
        BooleanQuery inner = (BooleanQuery) pushed.clauses().get(0).query();
        // the graph search runs under both: the user's filter and, as a further filter, the DLS restriction
        String restriction = restrictionOf(mgClause(inner)).toString();
        assertTrue(restriction, restriction.contains("f:x"));
        assertTrue(restriction, restriction.contains("f:red"));
    }

    @Test
    public void restrictionsAboveBoolsWithoutOwnOnes_reachTheGraphSearch() {
        // bool {filter: x, must: bool {must: bool {must: mg}}}: the inner bools restrict nothing themselves
        BooleanQuery inner = new BooleanQuery.Builder().add(mg(), Occur.MUST).build();
        BooleanQuery middle = new BooleanQuery.Builder().add(inner, Occur.MUST).build();
        assertSame(middle, PreFilterPushdown.pushDown(middle));
        BooleanQuery outer = new BooleanQuery.Builder().add(middle, Occur.MUST).add(term("x"), Occur.FILTER).build();
        BooleanQuery pushed = (BooleanQuery) PreFilterPushdown.pushDown(outer);
        BooleanQuery pushedInner = (BooleanQuery) ((BooleanQuery) pushed.clauses().get(0).query()).clauses().get(0).query();
        String restriction = restrictionOf(mgClause(pushedInner)).toString();
        assertTrue(restriction, restriction.contains("f:x"));
        assertTrue(pushed.clauses().contains(new BooleanClause(term("x"), Occur.FILTER)));
    }

    private static Query planned() {
        return new PlannedParentsQuery(MultiGranularQueryBuilder.Mode.DENSE, java.util.Map.of("a:0",
            PlannedParentsQueryBuilder.Parent.dense("i", "a:0", 0.9f)), new org.apache.lucene.search.join.QueryBitSetProducer(term("root")),
            null, List.of(0, 1), false, null, null);
    }

    @Test
    public void dlsWrapper_aroundAPlannedLookup_scoresNoMore_butTheUsersOwnBoolKeepsItsScoring() {
        Query user = new BooleanQuery.Builder().add(planned(), Occur.MUST).add(term("x"), Occur.SHOULD).setMinimumNumberShouldMatch(1)
            .build();
        // the security plugin's wrapper around the request's query: its should clauses become a filter
        BooleanQuery dls = new BooleanQuery.Builder().setMinimumNumberShouldMatch(1).add(term("red"), Occur.SHOULD)
            .add(user, Occur.MUST).build();
        BooleanQuery unscored = (BooleanQuery) PreFilterPushdown.unscoredWrapper(dls, false, () -> user);
        assertEquals(user, unscored.clauses().get(0).query());
        assertEquals(Occur.MUST, unscored.clauses().get(0).occur());
        assertEquals(Occur.FILTER, unscored.clauses().get(1).occur());
        assertEquals(1, ((BooleanQuery) unscored.clauses().get(1).query()).getMinimumNumberShouldMatch());
        // the user's own bool with a required should is the request's query, not a wrapper: it keeps scoring
        assertSame(user, PreFilterPushdown.unscoredWrapper(user, false, () -> user));
        // a wrapper around a query without a planned lookup is left alone
        BooleanQuery other = new BooleanQuery.Builder().setMinimumNumberShouldMatch(1).add(term("red"), Occur.SHOULD)
            .add(term("q"), Occur.MUST).build();
        assertSame(other, PreFilterPushdown.unscoredWrapper(other, false, () -> term("q")));
        // unless it is one of the planning's sub-searches (the lexical one's query is plain OpenSearch queries)
        assertEquals(Occur.FILTER, ((BooleanQuery) PreFilterPushdown.unscoredWrapper(other, true, () -> term("q"))).clauses().get(1).occur());
    }
}
