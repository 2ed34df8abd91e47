package io.strata.query;

import org.apache.lucene.search.IndexSearcher;
import org.opensearch.ExceptionsHelper;
import org.opensearch.OpenSearchStatusException;
import org.opensearch.action.IndicesRequest;
import org.opensearch.action.search.SearchContextId;
import org.opensearch.action.search.SearchRequest;
import org.opensearch.action.search.SearchResponse;
import org.opensearch.action.search.SearchType;
import org.opensearch.action.search.ShardSearchFailure;
import org.opensearch.cluster.ClusterState;
import org.opensearch.common.UUIDs;
import org.opensearch.common.unit.TimeValue;
import org.opensearch.core.action.ActionListener;
import org.opensearch.core.common.io.stream.NamedWriteableRegistry;
import org.opensearch.core.common.io.stream.NotSerializableExceptionWrapper;
import org.opensearch.core.index.Index;
import org.opensearch.core.rest.RestStatus;
import org.opensearch.core.tasks.TaskId;
import org.opensearch.index.mapper.SeqNoFieldMapper;
import org.opensearch.index.query.QueryBuilder;
import org.opensearch.search.builder.PointInTimeBuilder;
import org.opensearch.search.builder.SearchSourceBuilder;
import org.opensearch.tasks.Task;
import org.opensearch.transport.client.Client;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The searches a {@code multi_granular} query is planned with, made like the user's request so that they see what the
 * user's search sees: the same user (the thread context), the same indices, or the same point-in-time, routing, preference
 * and index options, the user's {@code timeout}, child tasks of the user's search (a cancel reaches them), and no search
 * pipeline (the request already went through its own). Without a point-in-time and without a preference, one generated
 * preference is set on the sub-searches AND on the user's request, so that the planning and the lookup read the same
 * shard copies; what can still differ is the refresh point (a refresh between the planning and the lookup), which only a
 * point-in-time fixes.
 *
 * <p>A sub-search never yields a partial answer: it runs with {@code allow_partial_search_results: false}, and a shard
 * failure or a time-out fails the query with an error naming the side, whatever the user's own setting.
 */
final class SubSearches {
    /** The search-stats group of the sub-searches: shows them in index stats, and tells the shards what they are. */
    static final String STATS_GROUP = "strata_multi_granular_planning";

    private final IndicesRequest original;
    private final SearchRequest search;
    private final PointInTimeBuilder pit;
    private final TaskId parent;
    private final NamedWriteableRegistry registry;

    private SubSearches(IndicesRequest original, TaskId parent, NamedWriteableRegistry registry) {
        this.original = original;
        this.search = original instanceof SearchRequest s ? s : null;
        this.pit = search == null ? null : search.pointInTimeBuilder();
        this.parent = parent;
        this.registry = registry;
        if (search != null && pit == null && search.preference() == null) {
            // plain text, not one of the reserved _preferences: any copy choice, but the same one for every request using it
            search.preference("strata-" + UUIDs.randomBase64UUID());
        }
    }

    /** Sub-searches for the request being rewritten; child tasks of {@code task} when it is known. */
    static SubSearches of(IndicesRequest original, Task task, String localNodeId, NamedWriteableRegistry registry) {
        TaskId parent = task == null || localNodeId == null ? null : new TaskId(localNodeId, task.getId());
        return new SubSearches(original, parent, registry);
    }

    /** The concrete indices the sub-searches read. */
    Index[] concreteIndices(ClusterState state, org.opensearch.cluster.metadata.IndexNameExpressionResolver resolver) {
        if (pit != null) {
            List<Index> out = new ArrayList<>();
            for (String name : SearchContextId.decode(registry, pit.getId()).getActualIndices()) {
                var meta = state.metadata().index(name);
                if (meta != null) {
                    out.add(meta.getIndex());
                }
            }
            return out.toArray(Index[]::new);
        }
        return resolver.concreteIndices(state, original);
    }

    TaskId parent() {
        return parent;
    }

    /** Whether a point in time fixes the indices read (the names cannot move under the search). */
    boolean byPointInTime() {
        return pit != null;
    }

    /** The request's index expression, for errors: its names, or empty for a point in time. */
    List<String> expressions() {
        return pit != null || original.indices() == null ? List.of() : List.of(original.indices());
    }

    /** A search for the top {@code size} of {@code query}: ids and scores, plus what {@code source} adds (inner hits). */
    SearchRequest request(QueryBuilder query, int size, SearchType type) {
        SearchSourceBuilder source = new SearchSourceBuilder().query(query).size(size).fetchSource(false).trackTotalHits(false)
            .stats(List.of(STATS_GROUP));
        SearchRequest request;
        if (pit != null) {
            request = new SearchRequest();
            source.pointInTimeBuilder(new PointInTimeBuilder(pit.getId()).setKeepAlive(pit.getKeepAlive()));
        } else {
            request = new SearchRequest(original.indices()).indicesOptions(original.indicesOptions());
            if (search != null) {
                request.routing(search.routing()).preference(search.preference());
            }
        }
        if (search != null && search.source() != null && search.source().timeout() != null) {
            source.timeout(search.source().timeout());
        }
        if (search != null && search.getCancelAfterTimeInterval() != null) {
            request.setCancelAfterTimeInterval(search.getCancelAfterTimeInterval());
        }
        request.source(source).searchType(type).allowPartialSearchResults(false);
        request.pipeline("_none"); // the user's request already went through its search pipeline
        if (parent != null) {
            request.setParentTask(parent);
        }
        return request;
    }

    /**
     * {@link #request} whose hits carry their {@code _seq_no} (doc values) instead of {@code _id}: no stored field is read,
     * which for a window of 100 parents was ~3 ms of the lexical side's ~11 (bin/strata-bench query). Only for a search of
     * one shard, whose documents the seq_no names.
     */
    SearchRequest requestBySeqNo(QueryBuilder query, int size, SearchType type) {
        SearchRequest request = request(query, size, type);
        request.source().storedField(org.opensearch.search.fetch.StoredFieldsContext._NONE_).docValueField(SeqNoFieldMapper.NAME);
        return request;
    }

    /** The search type of the lexical mode: the user's dfs if asked for (global BM25 statistics), else per shard. */
    SearchType lexicalType() {
        return search != null && search.searchType() == SearchType.DFS_QUERY_THEN_FETCH ? SearchType.DFS_QUERY_THEN_FETCH
            : SearchType.QUERY_THEN_FETCH;
    }

    /** Runs one side's search; the listener gets a complete response, or an error naming the side. */
    static void run(Client client, String side, SearchRequest request, ActionListener<SearchResponse> listener) {
        client.search(request, ActionListener.wrap(response -> {
            if (response.getFailedShards() > 0 || response.isTimedOut()) {
                listener.onFailure(incomplete(side, response));
            } else {
                listener.onResponse(response);
            }
        }, e -> listener.onFailure(failed(side, e))));
    }

    /** The error for a side whose search failed: a 400 when the query was too large for Lucene, else the failure's status. */
    private static OpenSearchStatusException failed(String side, Exception e) {
        if (tooManyClauses(e)) {
            // the text's terms and the clauses of the filters around the query (its restriction) add up in one query
            return new OpenSearchStatusException(String.format(Locale.ROOT, "[%s] the text ([query_text] or [match]) has too many "
                + "terms for its [%s] search, with the clauses of its [filter] and of the queries around it that restrict it: each "
                + "term is matched in the text and the context header of the parents and of the children, and the whole query may "
                + "hold at most [indices.query.bool.max_clause_count] clauses (1024 by default); shorten the text, use fewer "
                + "clauses (a [terms] query is one), or search with [query_text] and [mode: dense]", MultiGranularQueryBuilder.NAME,
                side), RestStatus.BAD_REQUEST, e);
        }
        return new OpenSearchStatusException(String.format(Locale.ROOT, "[%s] its [%s] search failed, so no partial result is used: %s",
            MultiGranularQueryBuilder.NAME, side, e.getMessage()), ExceptionsHelper.status(e), e);
    }

    /**
     * Lucene refused the query for its size (IndexSearcher.TooManyClauses: a 500 from OpenSearch, as for any query of its
     * own that large). A shard failure carries it wrapped (NotSerializableExceptionWrapper, its message led by the
     * exception's name), also from the local node.
     */
    private static boolean tooManyClauses(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof IndexSearcher.TooManyClauses || t instanceof NotSerializableExceptionWrapper w
                && (w.getMessage().startsWith("too_many_clauses:") || w.getMessage().startsWith("too_many_nested_clauses:"))) {
                return true;
            }
        }
        return false;
    }

    /** The error for a side that timed out or failed on some shards. */
    static OpenSearchStatusException incomplete(String side, SearchResponse response) {
        ShardSearchFailure[] failures = response.getShardFailures();
        if (failures.length > 0) {
            ShardSearchFailure first = failures[0];
            return new OpenSearchStatusException(String.format(Locale.ROOT, "[%s] its [%s] search failed on [%d] of [%d] shards, so no "
                + "partial result is used: %s", MultiGranularQueryBuilder.NAME, side, response.getFailedShards(),
                response.getTotalShards(), first.reason()), first.status(), first.getCause());
        }
        TimeValue took = response.getTook();
        return new OpenSearchStatusException(String.format(Locale.ROOT, "[%s] its [%s] search timed out after %s, so no partial result "
            + "is used; raise [timeout]", MultiGranularQueryBuilder.NAME, side, took), RestStatus.GATEWAY_TIMEOUT);
    }
}
