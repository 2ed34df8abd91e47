package io.strata.chunkindex.lifecycle;

import io.strata.chunkindex.registry.ChunkIndexJanitor;
import io.strata.chunkindex.registry.ChunkIndexRegistry;

import org.opensearch.ExceptionsHelper;
import org.opensearch.OpenSearchSecurityException;
import org.opensearch.action.ActionRequest;
import org.opensearch.action.admin.indices.delete.DeleteIndexAction;
import org.opensearch.action.admin.indices.delete.DeleteIndexRequest;
import org.opensearch.action.support.ActionFilter;
import org.opensearch.action.support.ActionFilterChain;
import org.opensearch.action.support.ContextPreservingActionListener;
import org.opensearch.action.support.clustermanager.AcknowledgedResponse;
import org.opensearch.common.util.concurrent.ThreadContext;
import org.opensearch.core.action.ActionListener;
import org.opensearch.core.action.ActionResponse;
import org.opensearch.core.rest.RestStatus;
import org.opensearch.tasks.Task;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * Deleting a source index deletes its chunk indices (those {@link ChunkIndexRegistry} records for it, never what a
 * mapping's {@code _meta} claims) in the same request, with the caller's permissions: a delete of source indices that
 * have chunk indices is replaced by one delete of both, run in the caller's thread context. With the
 * security plugin a caller who may delete the source index but not its chunk index gets a 403 naming the chunk index
 * and nothing is deleted; one who may delete both deletes both in one cluster-state update (so no new incarnation of
 * the source can claim the chunk index in between). Off with {@link ChunkIndexJanitor#DELETE_WITH_SOURCE} = false.
 *
 * <p>{@link ChunkIndexJanitor} stays as the plugin's own backstop for deletions that do not pass through a node's
 * transport action (e.g. an index deleted by another plugin straight from cluster-state code): there no caller acts.
 */
public final class SourceIndexDeleteFilter implements ActionFilter {
    /** Marks our own expanded request in the thread context, so that it is not expanded again. */
    static final String EXPANDED = "strata.delete_with_chunk_indices";

    private final SourceIndexLookup node;

    public SourceIndexDeleteFilter(SourceIndexLookup node) {
        this.node = node;
    }

    @Override
    public int order() {
        return Integer.MAX_VALUE; // after security filters: the original request was allowed; the expanded one is checked anew
    }

    @Override
    @SuppressWarnings("unchecked")
    public <Request extends ActionRequest, Response extends ActionResponse> void apply(Task task, String action, Request request,
                                                                                       ActionListener<Response> listener,
                                                                                       ActionFilterChain<Request, Response> chain) {
        if (!DeleteIndexAction.NAME.equals(action) || !(request instanceof DeleteIndexRequest delete) || !node.ready()
            || !node.clusterService().get().getClusterSettings().get(ChunkIndexJanitor.DELETE_WITH_SOURCE)) {
            chain.proceed(task, action, request, listener);
            return;
        }
        ThreadContext context = node.threadContext().get();
        Map<String, String> chunkIndices = node.chunkIndicesLeftOut(delete);
        if (chunkIndices.isEmpty()) {
            chain.proceed(task, action, request, listener);
            return;
        }
        if (context.getTransient(EXPANDED) != null) {
            // our expanded request came back without them: something between (e.g. a security plugin set to drop
            // forbidden indices instead of failing) removed them; deleting the sources alone would orphan their chunks
            listener.onFailure(refused(chunkIndices, null));
            return;
        }
        List<String> names = new ArrayList<>(Arrays.asList(delete.indices()));
        names.addAll(chunkIndices.keySet());
        DeleteIndexRequest both = new DeleteIndexRequest(names.toArray(String[]::new)).indicesOptions(delete.indicesOptions())
            .timeout(delete.timeout()).clusterManagerNodeTimeout(delete.clusterManagerNodeTimeout());
        ActionListener<AcknowledgedResponse> reply = ContextPreservingActionListener.wrapPreservingContext(ActionListener.wrap(
            r -> listener.onResponse((Response) r),
            e -> listener.onFailure(ExceptionsHelper.status(e) == RestStatus.FORBIDDEN ? refused(chunkIndices, e) : e)), context);
        try (ThreadContext.StoredContext restore = context.newStoredContext(true)) {
            context.putTransient(EXPANDED, Boolean.TRUE);
            // the caller's own context (user, roles): the security plugin checks the delete of both
            node.client().get().admin().indices().delete(both, reply);
        }
    }

    private static OpenSearchSecurityException refused(Map<String, String> chunkIndices, Exception cause) {
        StringBuilder message = new StringBuilder();
        chunkIndices.forEach((chunkIndex, source) -> message.append(message.isEmpty() ? "" : "; ")
            .append("deleting source index [").append(source).append("] also deletes its chunk index [").append(chunkIndex).append("]"));
        message.append(" (").append(ChunkIndexJanitor.DELETE_WITH_SOURCE.getKey()).append(" is true), and the caller may not delete ")
            .append(chunkIndices.size() == 1 ? "it" : "them").append("; nothing was deleted");
        if (cause != null) {
            message.append(": ").append(cause.getMessage());
        }
        return new OpenSearchSecurityException(message.toString(), RestStatus.FORBIDDEN, cause);
    }
}
