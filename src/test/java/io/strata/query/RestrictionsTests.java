package io.strata.query;

import io.strata.stats.StrataStats;
import org.junit.Test;
import org.opensearch.common.settings.Settings;
import org.opensearch.core.common.io.stream.NamedWriteableRegistry;
import org.opensearch.search.SearchModule;
import org.opensearch.index.query.BoolQueryBuilder;
import org.opensearch.index.query.QueryBuilder;
import org.opensearch.index.query.QueryBuilders;
import org.opensearch.index.query.functionscore.FunctionScoreQueryBuilder;
import org.opensearch.index.query.functionscore.ScoreFunctionBuilders;

import java.util.List;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

/** Which restriction a {@code multi_granular} query gets from the query tree around it, and which trees are refused. */
public class RestrictionsTests {
    private static final QueryServices SERVICES = new QueryServices(() -> null, () -> null, () -> null, new StrataStats(), () -> null);

    private static MultiGranularQueryBuilder mg() {
        return MultiGranularQueryBuilder.of(null, null, "Hannah", 3, null, null, null, null, SERVICES);
    }

    private static QueryBuilder term(String v) {
        return QueryBuilders.termQuery("f", v);
    }

    private static String refused(QueryBuilder root, QueryBuilder target) {
        return assertThrows(IllegalArgumentException.class, () -> Restrictions.of(root, target)).getMessage();
    }

    @Test
    public void testBare_hasNoRestriction() {
        MultiGranularQueryBuilder q = mg();
        assertNull(Restrictions.of(q, q));
    }

    @Test
    public void testBoolMustOrFilter_isRestrictedByTheOtherRequiredClausesAndMustNot_butNotOptionalShoulds() {
        MultiGranularQueryBuilder q = mg();
        BoolQueryBuilder root = QueryBuilders.boolQuery().must(q).filter(term("a")).must(term("b")).mustNot(term("c")).should(term("d"));
        BoolQueryBuilder r = (BoolQueryBuilder) Restrictions.of(root, q);
        assertEquals(List.of(term("b"), term("a")), r.filter());
        assertEquals(List.of(term("c")), r.mustNot());
        assertTrue(r.should().isEmpty());
    }

    @Test
    public void testOnlyMustNot_isAPureNegativeRestriction() {
        MultiGranularQueryBuilder q = mg();
        BoolQueryBuilder r = (BoolQueryBuilder) Restrictions.of(QueryBuilders.boolQuery().must(q).mustNot(term("c")), q);
        assertTrue(r.filter().isEmpty());
        assertEquals(List.of(term("c")), r.mustNot());
    }

    @Test
    public void testRequiredShoulds_becomeOneFilterWithTheirMinimum() {
        MultiGranularQueryBuilder q = mg();
        BoolQueryBuilder root = QueryBuilders.boolQuery().filter(q).should(term("a")).should(term("b")).minimumShouldMatch(1);
        BoolQueryBuilder any = (BoolQueryBuilder) Restrictions.of(root, q);
        assertEquals(List.of(term("a"), term("b")), any.should());
        assertEquals("1", any.minimumShouldMatch());
        // in a filter context (constant_score) a bool's should clauses are required without minimum_should_match
        BoolQueryBuilder inner = QueryBuilders.boolQuery().must(q).should(term("a"));
        BoolQueryBuilder r = (BoolQueryBuilder) Restrictions.of(QueryBuilders.constantScoreQuery(inner), q);
        assertEquals(List.of(term("a")), r.should());
    }

    @Test
    public void testInShould_isRestrictedByMustFilterAndMustNotOnly() {
        MultiGranularQueryBuilder q = mg();
        BoolQueryBuilder root = QueryBuilders.boolQuery().should(q).should(term("s")).filter(term("f")).mustNot(term("n"));
        BoolQueryBuilder r = (BoolQueryBuilder) Restrictions.of(root, q);
        assertEquals(List.of(term("f")), r.filter());
        assertEquals(List.of(term("n")), r.mustNot());
    }

    @Test
    public void testWrappers_passTheRestrictionsAroundThemThrough_nestedBoolsAddUp() {
        MultiGranularQueryBuilder q = mg();
        QueryBuilder inner = QueryBuilders.disMaxQuery().add(new FunctionScoreQueryBuilder(QueryBuilders.boolQuery().must(q)
            .filter(term("inner")), ScoreFunctionBuilders.weightFactorFunction(2))).add(term("other"));
        BoolQueryBuilder root = QueryBuilders.boolQuery().must(QueryBuilders.boostingQuery(inner, term("neg")).negativeBoost(0.5f))
            .filter(term("outer"));
        BoolQueryBuilder r = (BoolQueryBuilder) Restrictions.of(root, q);
        assertEquals(List.of(term("outer"), term("inner")), r.filter());
    }

    @Test
    public void testRefused_combinationsThatCannotBePlanned_eachNamed() {
        MultiGranularQueryBuilder q = mg();
        assertTrue(refused(QueryBuilders.boolQuery().mustNot(q), q).contains("[must_not]"));
        assertTrue(refused(QueryBuilders.boostingQuery(term("a"), q), q).contains("[negative] query of [boosting]"));
        assertTrue(refused(QueryBuilders.boolQuery().should(q).should(term("a")).minimumShouldMatch(2), q)
            .contains("[minimum_should_match] 2"));
        assertTrue(refused(QueryBuilders.boolQuery().must(q).filter(mg()), q).contains("two [multi_granular] queries among the required"));
        assertTrue(refused(QueryBuilders.boolQuery().should(q).must(mg()), q).contains("in [should] of a [bool] whose [must]"));
        assertTrue(refused(QueryBuilders.nestedQuery("children", q, org.apache.lucene.search.join.ScoreMode.Max), q)
            .contains("inside [nested]"));
        assertTrue(refused(QueryBuilders.matchAllQuery(), q).contains("in the search's [query] only"));
    }

    @Test
    public void testSeveralInShould_areEachPlannedWithTheSameRestriction() {
        MultiGranularQueryBuilder a = mg();
        MultiGranularQueryBuilder b = mg();
        BoolQueryBuilder root = QueryBuilders.boolQuery().should(a).should(b).filter(term("t"));
        assertEquals(term("t"), Restrictions.of(root, a));
        assertEquals(term("t"), Restrictions.of(root, b));
    }

    @Test
    public void testOneQueryObjectAtTwoPlaces_isRefused_notRestrictedAsTheFirstPlace() {
        // found by identity: a request built in code that puts one object under two tenants' filters would plan both places
        // with the first tenant's restriction
        MultiGranularQueryBuilder q = mg();
        BoolQueryBuilder root = QueryBuilders.boolQuery()
            .should(QueryBuilders.boolQuery().filter(term("red")).must(q))
            .should(QueryBuilders.boolQuery().filter(term("blue")).must(q));
        assertTrue(refused(root, q).contains("one query object is used at two places"));
        assertTrue(refused(QueryBuilders.disMaxQuery().add(q).add(QueryBuilders.boolQuery().filter(term("blue")).must(q)), q)
            .contains("one query object is used at two places"));
    }

    @Test
    public void testATreeWithoutTheQueryObject_isRefused_evenWithAnEqualCopyInIt() {
        // the coordinator rewrites the request's own tree; a tree that was replaced (a copy, equal but another object) or
        // a request without a query tree is a 400, never a query planned without its restriction
        MultiGranularQueryBuilder q = mg();
        MultiGranularQueryBuilder copy = mg();
        assertEquals(q, copy);
        assertTrue(refused(QueryBuilders.boolQuery().filter(term("red")).must(copy), q).contains("is supported in the search's [query] only"));
        assertTrue(refused(null, q).contains("is supported in the search's [query] only"));
    }

    @Test
    public void testTheRestriction_isACopy_thatAChangeToTheRequestsTreeDoesNotReach() {
        NamedWriteableRegistry registry = new NamedWriteableRegistry(new SearchModule(Settings.EMPTY, List.of()).getNamedWriteables());
        MultiGranularQueryBuilder q = mg();
        BoolQueryBuilder tenant = QueryBuilders.boolQuery().filter(term("red"));
        BoolQueryBuilder root = QueryBuilders.boolQuery().must(q).filter(tenant);
        QueryBuilder restriction = Restrictions.of(root, q, registry);
        // builders are mutable: the tree changes after the planning read it, before its sub-searches run
        tenant.filter(QueryBuilders.matchAllQuery());
        tenant.mustNot(term("red"));
        assertEquals(QueryBuilders.boolQuery().filter(term("red")), restriction);
    }
}
