package io.strata.chunkindex;

import org.opensearch.OpenSearchSecurityException;
import org.opensearch.action.search.MultiSearchRequest;
import org.opensearch.action.search.MultiSearchResponse;
import org.opensearch.action.search.SearchRequest;
import org.opensearch.action.support.ContextPreservingActionListener;
import org.opensearch.common.util.concurrent.ThreadContext;
import org.opensearch.core.action.ActionListener;
import org.opensearch.core.rest.RestStatus;
import org.opensearch.index.query.QueryBuilder;
import org.opensearch.index.query.QueryBuilders;
import org.opensearch.search.builder.SearchSourceBuilder;
import org.opensearch.transport.client.Client;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeSet;
import java.util.function.Supplier;

/**
 * Whether a caller sees the whole of the indices {@code _reconcile} compares. It reads them as the caller, so document-level
 * security that hides source documents made their chunks orphans, which it deleted, and field-level security that hides the
 * chunked text made every document stale. The counts the caller's searches see — every document, and every holder of the
 * chunked fields — are compared with the node's own ({@link DocCountsAction}, an internal action: only compared, never
 * returned or acted on); fewer for the caller is a 403 before anything is read or written.
 */
public interface CallerView {
    /** Fails with a 403 when the caller sees fewer documents of an index of {@code fields}, or fewer holders of its fields. */
    void requireWhole(Map<String, List<String>> fields, ActionListener<Void> listener);

    /** The check against the node's counts, with {@code client} in the caller's thread context. */
    static CallerView of(Client client) {
        return (fields, listener) -> {
            ThreadContext threadContext = client.threadPool().getThreadContext();
            Supplier<ThreadContext.StoredContext> caller = threadContext.newRestorableContext(false);
            ActionListener<DocCountsAction.Response> counted = new ContextPreservingActionListener<>(caller, ActionListener.wrap(
                node -> compare(client, fields, node.totals(), listener), listener::onFailure));
            try (ThreadContext.StoredContext ignored = threadContext.stashContext()) {
                client.execute(DocCountsAction.INSTANCE, new DocCountsAction.Request(fields), counted); // the node's view
            }
        };
    }

    private static void compare(Client client, Map<String, List<String>> fields, Map<String, Long> node, ActionListener<Void> listener) {
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
                searches.add(new SearchRequest(e.getKey()).source(new SearchSourceBuilder().size(0).trackTotalHits(true).query(q)));
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
            if (restricted.isEmpty()) {
                listener.onResponse(null);
                return;
            }
            listener.onFailure(new OpenSearchSecurityException(String.format(Locale.ROOT, "[_reconcile] compares every document "
                + "of the source index with its chunks, but document- or field-level security hides part of %s from you: it would "
                + "take what is hidden for deleted or changed and delete or rewrite its chunks. Run it as a user whose roles put no "
                + "document- or field-level security on %s (or again, if documents were deleted meanwhile); nothing was changed",
                restricted, fields.keySet()), RestStatus.FORBIDDEN));
        }, listener::onFailure));
    }
}
