package io.strata.query;

import org.apache.lucene.search.BooleanClause;
import org.apache.lucene.search.BooleanQuery;
import org.apache.lucene.search.MatchAllDocsQuery;
import org.apache.lucene.search.Query;
import org.opensearch.index.query.ParsedQuery;
import org.opensearch.index.shard.SearchOperationListener;
import org.opensearch.search.internal.SearchContext;

import java.util.List;

/**
 * Moves the restrictions that wrap the dense per-shard {@code multi_granular} form on a shard into its graph search, just
 * before the query phase: the security plugin's document-level security (it wraps the shard's query in
 * {@code bool {should: DLS queries, minimum_should_match: 1, must: the query}}), an alias filter and the nested filter
 * OpenSearch adds ({@code bool {must: the query, filter: …}}), and a {@code bool} of a query rewritten without a
 * coordinator. (The restrictions a user writes around {@code multi_granular} are planned on the coordinator instead:
 * {@link Restrictions}.) The per-shard form keeps the k best parents of its graph search; a restriction applied after
 * that would leave fewer than k parents, or none when the best ones are all excluded. Pushed into the search, the k best are k of the parents
 * that may be returned. Nothing is admitted that the outer query would not admit: the outer query still applies, with its
 * required {@code should} clauses as a filter, so a hit's score is its {@code multi_granular} score with or without DLS.
 *
 * <p>Pushed down: the clauses of a boolean query that every hit must match (its {@code filter}, {@code must_not} and
 * other {@code must} clauses, and its {@code should} clauses when at least one must match), when its one scoring
 * {@code must} clause is a {@code multi_granular} query (or such a boolean query, recursively). Registered as a search
 * operation listener, which runs after the security plugin's (plugins register in name order), so that its DLS wrapper
 * is in place.
 */
public final class PreFilterPushdown implements SearchOperationListener {

    @Override
    public void onPreQueryPhase(SearchContext context) {
        ParsedQuery parsed = context.parsedQuery();
        if (parsed == null) {
            return;
        }
        Query pushed = pushDown(parsed.query());
        if (pushed == parsed.query() && context.request().source() != null && context.request().source().query() != null) {
            boolean subSearch = context.groupStats() != null && context.groupStats().contains(SubSearches.STATS_GROUP);
            pushed = unscoredWrapper(parsed.query(), subSearch, () -> context.getQueryShardContext()
                .toQuery(context.request().source().query()).query());
        }
        if (pushed != parsed.query()) {
            context.parsedQuery(new ParsedQuery(pushed, parsed));
            context.preProcess(true); // rebuilds the query the phase runs from the parsed one
        }
    }

    /**
     * The security plugin's document-level security wraps the request's query in {@code bool {should: DLS queries,
     * minimum_should_match: n, must: the query}}, which adds its queries' scores to every hit. For a planned
     * {@code multi_granular} lookup ({@link PlannedParentsQuery}, planned under DLS already) and for the planning's own
     * sub-searches ({@code subSearch}: their scores are the planned ones), such a wrapper — one must clause, which is the
     * request's own query (rebuilt by {@code original}), and required should clauses only — gets its should clauses as one
     * filter: the same hits, the query's own scores. The same instance otherwise (a user's own bool is the request's query
     * itself, never a wrapper around it).
     */
    static Query unscoredWrapper(Query query, boolean subSearch, java.util.function.Supplier<Query> original) {
        if (!(query instanceof BooleanQuery bool) || bool.getMinimumNumberShouldMatch() < 1) {
            return query;
        }
        Query must = null;
        BooleanQuery.Builder shoulds = new BooleanQuery.Builder().setMinimumNumberShouldMatch(bool.getMinimumNumberShouldMatch());
        for (BooleanClause c : bool.clauses()) {
            switch (c.occur()) {
                case MUST -> {
                    if (must != null) {
                        return query;
                    }
                    must = c.query();
                }
                case SHOULD -> shoulds.add(c.query(), BooleanClause.Occur.SHOULD);
                default -> {
                    return query;
                }
            }
        }
        if (must == null || !(subSearch || QueryTrees.find(must, PlannedParentsQuery.class) != null) || !must.equals(original.get())) {
            return query;
        }
        return new BooleanQuery.Builder().add(must, BooleanClause.Occur.MUST).add(shoulds.build(), BooleanClause.Occur.FILTER).build();
    }

    /** {@code query} with its restrictions moved into its {@code multi_granular} query; the same instance if none apply. */
    static Query pushDown(Query query) {
        return pushDown(query, null);
    }

    /**
     * One pass down the chain of required clauses that leads to the {@code multi_granular} query, collecting on the way
     * the restrictions of every boolean query it passes ({@code outer}: those of the enclosing ones, null at the top).
     */
    private static Query pushDown(Query query, Query outer) {
        if (query instanceof MultiGranularQuery mg) {
            return outer == null ? mg : mg.restrictedTo(outer);
        }
        if (!(query instanceof BooleanQuery bool)) {
            return query;
        }
        List<BooleanClause> clauses = bool.clauses();
        int target = target(bool);
        if (target < 0) {
            return query;
        }
        BooleanQuery.Builder restriction = new BooleanQuery.Builder();
        boolean restricts = outer != null;
        boolean positive = outer != null;
        if (outer != null) {
            restriction.add(outer, BooleanClause.Occur.FILTER);
        }
        boolean shoulds = bool.getMinimumNumberShouldMatch() > 0;
        for (int i = 0; i < clauses.size(); i++) {
            BooleanClause c = clauses.get(i);
            switch (c.occur()) {
                case MUST, FILTER -> {
                    if (i != target) {
                        restriction.add(c.query(), BooleanClause.Occur.FILTER);
                        restricts = true;
                        positive = true;
                    }
                }
                case MUST_NOT -> {
                    restriction.add(c.query(), BooleanClause.Occur.MUST_NOT);
                    restricts = true;
                }
                case SHOULD -> {
                    if (shoulds) {
                        restriction.add(c.query(), BooleanClause.Occur.SHOULD);
                        restricts = true;
                        positive = true;
                    }
                }
            }
        }
        if (!restricts) {
            return query;
        }
        if (!positive) {
            // only must_not clauses: a pure-negative boolean query matches nothing, so it needs all documents to subtract from
            restriction.add(new MatchAllDocsQuery(), BooleanClause.Occur.FILTER);
        }
        restriction.setMinimumNumberShouldMatch(shoulds ? bool.getMinimumNumberShouldMatch() : 0);
        Query restricted = pushDown(clauses.get(target).query(), restriction.build());
        // the same documents match; required should clauses become one filter, so that they no longer add to the score
        // (DLS would otherwise add its own query's score to every hit)
        BooleanQuery.Builder out = new BooleanQuery.Builder();
        BooleanQuery.Builder required = new BooleanQuery.Builder().setMinimumNumberShouldMatch(bool.getMinimumNumberShouldMatch());
        for (int i = 0; i < clauses.size(); i++) {
            BooleanClause c = clauses.get(i);
            if (shoulds && c.occur() == BooleanClause.Occur.SHOULD) {
                required.add(c.query(), BooleanClause.Occur.SHOULD);
            } else {
                out.add(i == target ? restricted : c.query(), c.occur());
            }
        }
        if (shoulds) {
            out.add(required.build(), BooleanClause.Occur.FILTER);
        }
        return out.build();
    }

    /** The one {@code must} clause of {@code bool} that leads to a multi_granular query; -1 if none, or two (not ours to pick). */
    private static int target(BooleanQuery bool) {
        int target = -1;
        List<BooleanClause> clauses = bool.clauses();
        for (int i = 0; i < clauses.size(); i++) {
            BooleanClause c = clauses.get(i);
            if (c.occur() == BooleanClause.Occur.MUST && leadsToMultiGranular(c.query())) {
                if (target >= 0) {
                    return -1;
                }
                target = i;
            }
        }
        return target;
    }

    private static boolean leadsToMultiGranular(Query query) {
        return query instanceof MultiGranularQuery || (query instanceof BooleanQuery b && target(b) >= 0);
    }
}
