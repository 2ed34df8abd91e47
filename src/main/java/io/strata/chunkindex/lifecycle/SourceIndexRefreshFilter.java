package io.strata.chunkindex.lifecycle;

import io.strata.chunkindex.registry.ChunkIndexRegistry;

import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.opensearch.ExceptionsHelper;
import org.opensearch.action.ActionRequest;
import org.opensearch.action.admin.indices.refresh.RefreshAction;
import org.opensearch.action.admin.indices.refresh.RefreshRequest;
import org.opensearch.action.support.ActionFilter;
import org.opensearch.action.support.ActionFilterChain;
import org.opensearch.action.support.ContextPreservingActionListener;
import org.opensearch.action.support.IndicesOptions;
import org.opensearch.core.action.ActionListener;
import org.opensearch.core.action.ActionResponse;
import org.opensearch.core.rest.RestStatus;
import org.opensearch.tasks.Task;

import java.util.Set;

/**
 * A refresh of source indices also refreshes their chunk indices, so that what the refresh made searchable in a source
 * index is searchable as chunks too: {@code POST docs/_refresh} before a search of {@code docs-chunks} (the usual "index,
 * refresh, search"), and the refresh that {@code _update_by_query}, {@code _delete_by_query} and {@code _reindex} send at
 * their end with {@code refresh=true} (they write through bulks without a refresh policy, then refresh their own indices).
 *
 * <p>The chunk indices are those {@link ChunkIndexRegistry} records for the refreshed concrete indices (never a mapping's
 * {@code _meta}). Their refresh is a second request sent after the first one answered, in the caller's thread context, so
 * the security plugin checks it against the caller's own permissions; the caller gets the source refresh's response
 * unchanged (its shard counts are those of the indices it named). A caller who may refresh the source but not its chunk
 * index gets what it got before: the source refreshed.
 */
public final class SourceIndexRefreshFilter implements ActionFilter {
    private static final Logger logger = LogManager.getLogger(SourceIndexRefreshFilter.class);
    /** Closed or deleted in between: refresh what is there. */
    private static final IndicesOptions CHUNK_INDICES = IndicesOptions.lenientExpandOpen();

    private final SourceIndexLookup node;

    public SourceIndexRefreshFilter(SourceIndexLookup node) {
        this.node = node;
    }

    @Override
    public int order() {
        return Integer.MAX_VALUE; // after security filters: only refreshes the caller may send
    }

    @Override
    public <Request extends ActionRequest, Response extends ActionResponse> void apply(Task task, String action, Request request,
                                                                                       ActionListener<Response> listener,
                                                                                       ActionFilterChain<Request, Response> chain) {
        if (!RefreshAction.NAME.equals(action) || !(request instanceof RefreshRequest refresh) || !node.ready()) {
            chain.proceed(task, action, request, listener);
            return;
        }
        Set<String> chunkIndices = node.chunkIndicesLeftOut(refresh).keySet();
        if (chunkIndices.isEmpty()) {
            chain.proceed(task, action, request, listener);
            return;
        }
        ActionListener<Response> then = ContextPreservingActionListener.wrapPreservingContext(ActionListener.wrap(
            response -> node.client().get().admin().indices().refresh(
                new RefreshRequest(chunkIndices.toArray(String[]::new)).indicesOptions(CHUNK_INDICES),
                ActionListener.wrap(r -> listener.onResponse(response), e -> {
                    if (ExceptionsHelper.status(e) == RestStatus.FORBIDDEN) {
                        logger.debug("the caller may not refresh chunk indices {}", chunkIndices);
                    } else {
                        logger.warn("refreshing chunk indices " + chunkIndices + " after their source indices failed", e);
                    }
                    listener.onResponse(response);
                })),
            listener::onFailure), node.threadContext().get());
        chain.proceed(task, action, request, then);
    }
}
