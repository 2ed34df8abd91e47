package io.strata.query;

import org.opensearch.common.io.stream.BytesStreamOutput;
import org.opensearch.common.lucene.search.Queries;
import org.opensearch.core.common.io.stream.NamedWriteableAwareStreamInput;
import org.opensearch.core.common.io.stream.NamedWriteableRegistry;
import org.opensearch.core.common.io.stream.StreamInput;
import org.opensearch.index.query.BoolQueryBuilder;
import org.opensearch.index.query.BoostingQueryBuilder;
import org.opensearch.index.query.ConstantScoreQueryBuilder;
import org.opensearch.index.query.DisMaxQueryBuilder;
import org.opensearch.index.query.QueryBuilder;
import org.opensearch.index.query.QueryBuilderVisitor;
import org.opensearch.index.query.QueryBuilders;
import org.opensearch.index.query.functionscore.FunctionScoreQueryBuilder;
import org.opensearch.index.query.functionscore.ScriptScoreQueryBuilder;
import org.apache.lucene.search.BooleanClause;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.function.Predicate;

/**
 * What restricts a {@code multi_granular} query's top k, read once on the coordinator from the request's query tree (the
 * query is found there by identity: the coordinator rewrites the very tree of the request). The top k is planned for the
 * parents every hit of the whole query must match, so that a tenant filter around the query leaves k parents, not what is
 * left of the k best overall:
 * <ul>
 *   <li>in a {@code bool}'s {@code must} or {@code filter}: the bool's other {@code must} and {@code filter} clauses, its
 *   {@code must_not} clauses, and its {@code should} clauses when some must match (effective minimum_should_match &gt; 0);</li>
 *   <li>in a {@code bool}'s {@code should}: its {@code must}, {@code filter} and {@code must_not} clauses;</li>
 *   <li>{@code constant_score}, {@code function_score}, {@code script_score}, {@code dis_max} and {@code boosting}'s
 *   positive query pass the restrictions around them through (they score or combine, they do not restrict).</li>
 * </ul>
 * Everything else is a 400 naming the combination: under {@code must_not} or {@code boosting}'s negative query (the query
 * would exclude its own top k), in {@code should} with minimum_should_match &gt; 1, beside another {@code multi_granular}
 * that would restrict it, inside any other compound query, or anywhere but the request's {@code query}.
 */
final class Restrictions {
    static final String WRAPPERS = "[bool], [constant_score], [function_score], [script_score], [dis_max] and [boosting] (positive)";
    private static final String NAME = MultiGranularQueryBuilder.NAME;

    private final List<QueryBuilder> filters = new ArrayList<>();
    private final List<QueryBuilder> mustNots = new ArrayList<>();

    private Restrictions() {}

    /**
     * The restriction of {@code target} in the query tree {@code root} as one query on parents (null: none), or a 400 when
     * the tree does not hold {@code target} or holds it where its top k cannot be planned.
     */
    static QueryBuilder of(QueryBuilder root, QueryBuilder target) {
        Restrictions r = new Restrictions();
        if (!r.walk(root, target, false)) {
            throw new IllegalArgumentException("[" + NAME + "] is supported in the search's [query] only (wrapped in " + WRAPPERS
                + "), not in [post_filter], aggregations, [rescore], a [wrapper] query or other parts of the request");
        }
        return r.build();
    }

    /**
     * {@link #of}, copied through the wire format: the sub-searches run it later, and a change to the request's tree in the
     * meantime (builders are mutable) must not change what restricts them. When a clause cannot be copied before its own
     * rewrite, the clauses themselves.
     */
    static QueryBuilder of(QueryBuilder root, QueryBuilder target, NamedWriteableRegistry registry) {
        QueryBuilder restriction = of(root, target);
        if (restriction == null || registry == null) {
            return restriction;
        }
        try (BytesStreamOutput out = new BytesStreamOutput()) {
            out.writeNamedWriteable(restriction);
            try (StreamInput in = new NamedWriteableAwareStreamInput(out.bytes().streamInput(), registry)) {
                return in.readNamedWriteable(QueryBuilder.class);
            }
        } catch (IOException | RuntimeException e) {
            return restriction;
        }
    }

    private QueryBuilder build() {
        if (filters.isEmpty() && mustNots.isEmpty()) {
            return null;
        }
        if (filters.size() == 1 && mustNots.isEmpty()) {
            return filters.get(0);
        }
        BoolQueryBuilder b = QueryBuilders.boolQuery();
        filters.forEach(b::filter);
        mustNots.forEach(b::mustNot);
        return b;
    }

    /** Whether {@code node} leads to {@code target}; collects the restrictions of the way there. */
    private boolean walk(QueryBuilder node, QueryBuilder target, boolean filterContext) {
        if (node == target) {
            return true;
        }
        if (node == null || !contains(node, q -> q == target)) {
            return false;
        }
        if (node instanceof BoolQueryBuilder bool) {
            return walkBool(bool, target, filterContext);
        }
        if (node instanceof ConstantScoreQueryBuilder cs) {
            return walk(cs.innerQuery(), target, true);
        }
        if (node instanceof FunctionScoreQueryBuilder fs && contains(fs.query(), q -> q == target)) {
            return walk(fs.query(), target, filterContext);
        }
        if (node instanceof ScriptScoreQueryBuilder ss && contains(ss.query(), q -> q == target)) {
            return walk(ss.query(), target, filterContext);
        }
        if (node instanceof DisMaxQueryBuilder dm) {
            QueryBuilder holder = null;
            for (QueryBuilder q : dm.innerQueries()) {
                if (contains(q, x -> x == target)) {
                    if (holder != null) {
                        throw twice();
                    }
                    holder = q;
                }
            }
            if (holder != null) {
                return walk(holder, target, filterContext);
            }
        }
        if (node instanceof BoostingQueryBuilder b) {
            if (contains(b.positiveQuery(), q -> q == target)) {
                return walk(b.positiveQuery(), target, filterContext);
            }
            throw new IllegalArgumentException("[" + NAME + "] cannot be the [negative] query of [boosting]: it would lower its own "
                + "top k; use it as the [positive] query, or put what should lower the scores in [negative]");
        }
        throw new IllegalArgumentException(String.format(Locale.ROOT, "[%s] inside [%s] is not supported: its top k is planned on "
            + "the coordinator for the whole request, and only %s let it know which parents may be returned; use [%s] at the top "
            + "of the query or inside those", NAME, node.getName(), WRAPPERS, NAME));
    }

    private enum Occur { MUST, FILTER, SHOULD, MUST_NOT }

    /**
     * The query is found by identity: one object at two places of the tree (a request built in code) would get the first
     * place's restriction at both.
     */
    private static IllegalArgumentException twice() {
        return new IllegalArgumentException("[" + NAME + "] one query object is used at two places of the request's query; its "
            + "top k is planned for one place: give each place a query object of its own");
    }

    private boolean walkBool(BoolQueryBuilder bool, QueryBuilder target, boolean filterContext) {
        Occur where = null;
        QueryBuilder holder = null;
        for (Occur o : Occur.values()) {
            for (QueryBuilder c : clauses(bool, o)) {
                if (contains(c, q -> q == target)) {
                    if (holder != null) {
                        throw twice();
                    }
                    where = o;
                    holder = c;
                }
            }
        }
        if (where == Occur.MUST_NOT) {
            throw new IllegalArgumentException("[" + NAME + "] cannot be under [must_not] of a [bool]: it would exclude its own top k "
                + "parents; to exclude parents, put the condition in [must_not] beside [" + NAME + "] or in its [filter]");
        }
        int shoulds = bool.should().size();
        boolean required = !bool.must().isEmpty() || !bool.filter().isEmpty();
        String spec = bool.minimumShouldMatch();
        // OpenSearch's default: the should clauses of a bool without must/filter, or in a filter context, need one match
        int minShould = spec != null ? Queries.calculateMinShouldMatch(shoulds, spec) : shoulds > 0 && (!required || filterContext) ? 1 : 0;
        if (where == Occur.SHOULD && minShould > 1) {
            throw new IllegalArgumentException(String.format(Locale.ROOT, "[%s] in [should] of a [bool] with [minimum_should_match] %d "
                + "(> 1) is not supported: its top k cannot be planned for parents that must also match other [should] clauses; "
                + "put it in [must] and the other clauses in a [bool] of their own", NAME, minShould));
        }
        boolean targetRequired = where != Occur.SHOULD;
        for (Occur o : Occur.values()) {
            for (QueryBuilder c : clauses(bool, o)) {
                if (c == holder || !contains(c, q -> q instanceof MultiGranularQueryBuilder)) {
                    continue;
                }
                if (o == Occur.MUST_NOT) {
                    throw new IllegalArgumentException("[" + NAME + "] cannot be under [must_not] of a [bool]: it would exclude its own "
                        + "top k parents; to exclude parents, put the condition in [must_not] beside [" + NAME + "] or in its [filter]");
                }
                boolean otherRequired = o == Occur.MUST || o == Occur.FILTER || (o == Occur.SHOULD && minShould > 0);
                if (targetRequired && otherRequired) {
                    throw new IllegalArgumentException("[" + NAME + "] two [" + NAME + "] queries among the required clauses ([must], "
                        + "[filter], [should] with minimum_should_match > 0) of one [bool] are not supported: each would restrict the "
                        + "other's top k; put them in [should] (their parents add up) or search them separately");
                }
                if (!targetRequired && (o == Occur.MUST || o == Occur.FILTER)) {
                    throw new IllegalArgumentException("[" + NAME + "] in [should] of a [bool] whose [must] or [filter] holds another ["
                        + NAME + "] is not supported: that one would restrict this one's top k; put both in [should] or search them "
                        + "separately");
                }
            }
        }
        if (targetRequired) {
            for (Occur o : List.of(Occur.MUST, Occur.FILTER)) {
                for (QueryBuilder c : clauses(bool, o)) {
                    if (c != holder) {
                        filters.add(c);
                    }
                }
            }
            if (minShould > 0) {
                BoolQueryBuilder any = QueryBuilders.boolQuery().minimumShouldMatch(minShould);
                bool.should().forEach(any::should);
                filters.add(any);
            }
        } else {
            filters.addAll(bool.must());
            filters.addAll(bool.filter());
        }
        mustNots.addAll(bool.mustNot());
        return walk(holder, target, filterContext || where == Occur.FILTER);
    }

    private static List<QueryBuilder> clauses(BoolQueryBuilder bool, Occur o) {
        return switch (o) {
            case MUST -> bool.must();
            case FILTER -> bool.filter();
            case SHOULD -> bool.should();
            case MUST_NOT -> bool.mustNot();
        };
    }

    /**
     * Whether {@code node} or a query inside it matches. Walks {@link QueryBuilder#visit}, and also descends into every query a
     * visit hands over, since some implementations hand over their child without visiting it.
     */
    static boolean contains(QueryBuilder node, Predicate<QueryBuilder> match) {
        if (node == null) {
            return false;
        }
        if (match.test(node)) {
            return true;
        }
        Set<QueryBuilder> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        seen.add(node);
        boolean[] found = { false };
        node.visit(new QueryBuilderVisitor() {
            @Override
            public void accept(QueryBuilder qb) {
                if (found[0] || qb == null || !seen.add(qb)) {
                    return;
                }
                found[0] = contains(qb, match);
            }

            @Override
            public QueryBuilderVisitor getChildVisitor(BooleanClause.Occur occur) {
                return this;
            }
        });
        return found[0];
    }
}
