package io.strata.chunkindex.reconcile;

import io.strata.chunkindex.lifecycle.ChunkLedger;

import org.opensearch.ExceptionsHelper;
import org.opensearch.OpenSearchSecurityException;
import org.opensearch.action.get.MultiGetRequest;
import org.opensearch.action.search.MultiSearchRequest;
import org.opensearch.action.search.MultiSearchResponse;
import org.opensearch.action.search.SearchRequest;
import org.opensearch.action.support.ContextPreservingActionListener;
import org.opensearch.action.update.UpdateRequest;
import org.opensearch.action.update.UpdateResponse;
import org.opensearch.common.UUIDs;
import org.opensearch.common.util.concurrent.ThreadContext;
import org.opensearch.core.action.ActionListener;
import org.opensearch.core.rest.RestStatus;
import org.opensearch.index.engine.DocumentMissingException;
import org.opensearch.index.query.QueryBuilder;
import org.opensearch.index.query.QueryBuilders;
import org.opensearch.search.builder.SearchSourceBuilder;
import org.opensearch.search.fetch.subphase.FetchSourceContext;
import org.opensearch.transport.client.Client;
import org.opensearch.cluster.routing.Preference;
import org.opensearch.common.unit.TimeValue;
import org.opensearch.threadpool.ThreadPool;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Supplier;

/**
 * Whether a caller sees the whole of the indices {@code _reconcile} compares, unaltered. It reads them as the caller, so
 * document-level security that hides source documents made their chunks orphans, which it deleted; field-level security
 * that hides the chunked text or the {@code strata} summaries made documents stale or their chunks orphans; and a source
 * rewritten from a masked or field-filtered read lost what was hidden. Any such restriction on any of the indices is a
 * 403 before the passes read anything.
 *
 * <p>The security plugin's own decision comes first: it refuses an update under document- or field-level security or
 * field masking on the index ("Update is not supported when FLS or DLS or Fieldmasking is activated"), so an update of a
 * document that does not exist, sent as the caller, answers "document missing" only to an unrestricted caller (nothing is
 * written: no upsert), and any refusal other than a missing permission is taken for a restriction. A caller who may not
 * update the index gets no such answer; then a multi-get (which the plugin turns non-realtime for a restricted caller)
 * and the counts the caller's searches see — every document, every holder of the chunked fields and of the summaries —
 * compared with the node's own ({@link DocCountsAction}, an internal action: only compared, never returned or acted on)
 * decide, each failing closed.
 */
public interface CallerView {
    /** Fails with a 403 when anything restricts the caller's view of an index of {@code fields}. */
    void requireWhole(Map<String, List<String>> fields, ActionListener<Void> listener);

    /**
     * The security plugin's answer to a caller without the permission; any other refusal of the probe counts as a
     * restriction (3.x refuses an update under DLS, FLS or field masking with "Update is not supported when FLS or DLS or
     * Fieldmasking is activated").
     */
    String NO_PERMISSION = "no permissions for";

    /** The check against the node's counts, with {@code client} in the caller's thread context. */
    static CallerView of(Client client) {
        return (fields, listener) -> {
            TreeSet<String> restricted = new TreeSet<>();
            probe(client, fields.keySet().iterator(), restricted, ActionListener.wrap(v -> {
                if (!restricted.isEmpty()) {
                    listener.onFailure(refusal(restricted, fields.keySet()));
                    return;
                }
                counts(client, fields, 1, listener);
            }, listener::onFailure));
        };
    }

    /** Probes each index in turn as the caller; adds those the security plugin restricts to {@code restricted}. */
    private static void probe(Client client, Iterator<String> indices, Set<String> restricted, ActionListener<Void> listener) {
        if (!indices.hasNext()) {
            listener.onResponse(null);
            return;
        }
        String index = indices.next();
        String id = "_strata_probe_" + UUIDs.randomBase64UUID();
        ActionListener<Void> next = ActionListener.wrap(v -> probe(client, indices, restricted, listener), listener::onFailure);
        ThreadContext threadContext = client.threadPool().getThreadContext();
        // routed: an index whose documents require a routing answers an update without one before the plugin is asked
        UpdateRequest update = new UpdateRequest(index, id).routing(id).doc(Map.of());
        ActionListener<UpdateResponse> updated = ActionListener.wrap(r -> next.onResponse(null), e -> {
            Throwable cause = ExceptionsHelper.unwrapCause(e);
            if (cause instanceof DocumentMissingException) {
                next.onResponse(null); // the plugin let an update through: nothing restricts this index for the caller
            } else if (cause instanceof OpenSearchSecurityException && !String.valueOf(cause.getMessage()).contains(NO_PERMISSION)) {
                // its refusal under DLS, FLS or masking — or any other refusal that is not a missing permission
                restricted.add(index);
                next.onResponse(null);
            } else {
                realtimeProbe(client, index, restricted, next); // no update permission (or not a security answer)
            }
        });
        ActionListener<UpdateResponse> inCallersContext = ContextPreservingActionListener.wrapPreservingContext(updated, threadContext);
        // an update to no document, not one of the caller's writes: the bulk filter leaves it alone
        try (ThreadContext.StoredContext ignored = threadContext.newStoredContext(true, List.of(ChunkLedger.TRANSIENT))) {
            threadContext.putTransient(ChunkLedger.TRANSIENT, ChunkLedger.ownWrites());
            client.update(update, inCallersContext);
        }
    }

    /** The security plugin makes a restricted caller's multi-gets non-realtime, on the request the caller sent. */
    private static void realtimeProbe(Client client, String index, Set<String> restricted, ActionListener<Void> listener) {
        MultiGetRequest get = new MultiGetRequest().realtime(true);
        String id = "_strata_probe_" + UUIDs.randomBase64UUID();
        get.add(new MultiGetRequest.Item(index, id).routing(id)
            .fetchSourceContext(FetchSourceContext.DO_NOT_FETCH_SOURCE));
        client.multiGet(get, ActionListener.wrap(r -> {
            if (!get.realtime()) {
                restricted.add(index);
            }
            listener.onResponse(null);
        }, listener::onFailure));
    }

    /**
     * Count comparisons before a difference is taken for a restriction: a refresh that makes deletes visible between the
     * node's count and the caller's lowers the caller's for an instant, on a cluster that restricts nobody; a restriction
     * stays.
     */
    int COUNT_ATTEMPTS = 3;
    TimeValue COUNT_RETRY_DELAY = TimeValue.timeValueMillis(300);

    private static void counts(Client client, Map<String, List<String>> fields, int attempt, ActionListener<Void> listener) {
        ThreadContext threadContext = client.threadPool().getThreadContext();
        Supplier<ThreadContext.StoredContext> caller = threadContext.newRestorableContext(false);
        ActionListener<Set<String>> compared = ActionListener.wrap(restricted -> {
            if (restricted.isEmpty()) {
                listener.onResponse(null);
            } else if (attempt < COUNT_ATTEMPTS) { // the caller's context: the scheduled run keeps it
                client.threadPool().schedule(() -> counts(client, fields, attempt + 1, listener), COUNT_RETRY_DELAY,
                    ThreadPool.Names.GENERIC);
            } else {
                listener.onFailure(refusal(restricted, fields.keySet()));
            }
        }, listener::onFailure);
        ActionListener<DocCountsAction.Response> counted = new ContextPreservingActionListener<>(caller, ActionListener.wrap(
            node -> compare(client, fields, node.totals(), compared), listener::onFailure));
        try (ThreadContext.StoredContext ignored = threadContext.stashContext()) {
            client.execute(DocCountsAction.INSTANCE, new DocCountsAction.Request(fields), counted); // the node's view
        }
    }

    /** The indices whose counts the caller's searches see below the node's. */
    private static void compare(Client client, Map<String, List<String>> fields, Map<String, Long> node,
                                ActionListener<Set<String>> listener) {
        MultiSearchRequest searches = new MultiSearchRequest();
        List<String> keys = new ArrayList<>();
        List<String> indices = new ArrayList<>();
        for (var e : fields.entrySet()) {
            List<QueryBuilder> queries = new ArrayList<>(List.of(QueryBuilders.matchAllQuery()));
            keys.add(DocCountsAction.key(e.getKey(), null));
            for (String field : e.getValue()) {
                queries.add(QueryBuilders.existsQuery(field));
                keys.add(DocCountsAction.key(e.getKey(), field));
            }
            for (QueryBuilder q : queries) {
                // the primaries, as the node counts them: a replica may be a refresh behind its primary
                searches.add(new SearchRequest(e.getKey()).preference(Preference.PRIMARY.type())
                    .source(new SearchSourceBuilder().size(0).trackTotalHits(true).query(q)));
                indices.add(e.getKey());
            }
        }
        client.multiSearch(searches, ActionListener.wrap(r -> {
            TreeSet<String> restricted = new TreeSet<>();
            MultiSearchResponse.Item[] items = r.getResponses();
            for (int i = 0; i < items.length; i++) {
                if (items[i].isFailure()) {
                    listener.onFailure(items[i].getFailure()); // e.g. the caller may not read it: as the passes would fail
                    return;
                }
                if (items[i].getResponse().getHits().getTotalHits().value() < node.getOrDefault(keys.get(i), 0L)) {
                    restricted.add(indices.get(i));
                }
            }
            listener.onResponse(restricted);
        }, listener::onFailure));
    }

    private static OpenSearchSecurityException refusal(Set<String> restricted, Set<String> indices) {
        return new OpenSearchSecurityException(String.format(Locale.ROOT, "[_reconcile] compares every document of the source "
            + "index with its chunks, but document-level security, field-level security or field masking restricts your view "
            + "of %s: it would take what is hidden for deleted or changed, delete or rewrite its chunks, and rewrite sources "
            + "from what you read. Run it as a user whose roles put no document- or field-level security and no field masking "
            + "on %s (or again, if documents were deleted meanwhile); nothing was read or changed", restricted, indices),
            RestStatus.FORBIDDEN);
    }
}
