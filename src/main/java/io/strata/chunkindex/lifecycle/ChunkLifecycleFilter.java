package io.strata.chunkindex.lifecycle;

import io.strata.chunkindex.ChunkKey;
import io.strata.chunkindex.registry.ChunkIndexRegistry;
import io.strata.chunkindex.setup.WriteChecks;
import io.strata.chunkindex.store.ChunkCommit;
import org.opensearch.action.ActionRequest;
import org.opensearch.action.DocWriteRequest;
import org.opensearch.action.DocWriteResponse;
import org.opensearch.action.bulk.BulkAction;
import org.opensearch.action.bulk.BulkShardRequest;
import org.opensearch.action.bulk.BulkItemResponse;
import org.opensearch.action.bulk.BulkRequest;
import org.opensearch.action.bulk.BulkResponse;
import org.opensearch.action.support.ActionFilter;
import org.opensearch.action.support.ActionFilterChain;
import org.opensearch.action.support.ContextPreservingActionListener;
import org.opensearch.action.support.WriteRequest;
import org.opensearch.action.update.UpdateAction;
import org.opensearch.action.update.UpdateRequest;
import org.opensearch.action.update.UpdateResponse;
import org.opensearch.common.util.concurrent.ThreadContext;
import org.opensearch.core.action.ActionListener;
import org.opensearch.core.action.ActionResponse;
import org.opensearch.core.index.Index;
import org.opensearch.tasks.Task;

import java.util.List;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * Writes the chunk indices after every bulk request (single-document index, delete and update requests run as one-item
 * bulks, as do {@code _update_by_query}, {@code _delete_by_query} and {@code _reindex} page by page), from what the bulk
 * response says was stored:
 * <ul>
 *   <li>before: puts a {@link ChunkLedger} into the thread context, in which processors record the chunks they prepared;</li>
 *   <li>after, before the client sees the response, for each item that succeeded (a failed source write has no chunk
 *       written, ever): the prepared chunks of a written document go to the chunk index of the concrete index it landed
 *       in, versioned with its {@code _seq_no} ({@link ChunkCommit}); a deleted document loses its chunks in every chunk
 *       index registered to its index, with the delete's {@code _seq_no}; a document written without chunking (an
 *       {@code _update}, an index request that ran no chunking pipeline) is brought in step from what is stored
 *       ({@link Rechunker});</li>
 *   <li>a retried write that finds nothing to do, after its first attempt stored the source and failed on the chunks: a
 *       noop update (in a bulk, or a single {@code _update}, which writes no inner bulk then) has its chunks checked against
 *       the stored summary and cut again if stale or missing; a delete answered {@code not_found} deletes the chunks of
 *       that {@code _id} on the shard the delete was routed to, at its own {@code _seq_no} (a delete with another routing
 *       touches nothing of a document stored on another shard: chunk ids carry the shard, {@link ChunkKey}).</li>
 * </ul>
 * Ledger entries are matched to items through the request slot (the item's id, and the index the request named, which may
 * be an alias), and written into the chunk index of the item's concrete index ({@link BulkItemResponse#getIndex()}). The
 * chunk index is registered to that concrete index first ({@link ChunkIndexRegistry}), so deleting it takes the chunks.
 *
 * The work after a bulk is {@link AfterBulk}'s.
 *
 * <p>All of it runs in the caller's thread context (restored explicitly, whatever thread answers the bulk), so with the
 * security plugin every chunk write is checked against the caller's own permissions. An item whose source was stored but
 * whose chunks could not be written or deleted is answered as a failure of that item, with the cause's status and what to
 * do: the caller learns that its chunks are missing or stale instead of getting a silent success.
 */
public final class ChunkLifecycleFilter implements ActionFilter {
    private final Supplier<ThreadContext> threadContext;
    private final Supplier<LifecycleComponents> components;

    /** Suppliers because the node creates action filters before plugin components. */
    public ChunkLifecycleFilter(Supplier<ThreadContext> threadContext, Supplier<LifecycleComponents> components) {
        this.threadContext = threadContext;
        this.components = components;
    }

    @Override
    public int order() {
        return Integer.MAX_VALUE; // after security filters: only requests that are allowed to run
    }

    @Override
    @SuppressWarnings("unchecked")
    public <Request extends ActionRequest, Response extends ActionResponse> void apply(Task task, String action, Request request,
                                                                                       ActionListener<Response> listener,
                                                                                       ActionFilterChain<Request, Response> chain) {
        ThreadContext context = threadContext.get();
        LifecycleComponents c = components.get();
        if (UpdateAction.NAME.equals(action) && context != null && c != null && context.getTransient(ChunkLedger.TRANSIENT) == null) {
            // a single _update runs its write as an inner bulk (seen below), except a noop, which writes nothing
            UpdateRequest update = (UpdateRequest) request;
            ActionListener<Response> after = ContextPreservingActionListener.wrapPreservingContext(ActionListener.wrap(
                response -> afterUpdate(c, update, (UpdateResponse) response, r -> listener.onResponse((Response) r), listener::onFailure),
                listener::onFailure), context);
            chain.proceed(task, action, request, after);
            return;
        }
        if (StoredTextCheck.isShardBulk(action) && context != null && context.getTransient(ChunkLedger.TRANSIENT) instanceof ChunkLedger ledger
            && !ledger.isOwnWrites() && !ledger.isEmpty()) {
            // the pipelines have run: a document stored without the text its chunks were cut from is refused here
            StoredTextCheck.abortChanged((BulkShardRequest) request, ledger);
        }
        if (!BulkAction.NAME.equals(action) || context == null || c == null || context.getTransient(ChunkLedger.TRANSIENT) != null) {
            // not a bulk, or Strata's own writes (chunks, summaries) inside an outer bulk or a reconcile
            chain.proceed(task, action, request, listener);
            return;
        }
        ChunkLedger ledger = new ChunkLedger(new WriteChecks(c.setup()));
        try (ThreadContext.StoredContext restore = context.newStoredContext(true)) {
            context.putTransient(ChunkLedger.TRANSIENT, ledger);
            // the caller's context (with the ledger) for the chunk work after the bulk, whichever thread answers it
            ActionListener<Response> after = ContextPreservingActionListener.wrapPreservingContext(ActionListener.wrap(
                response -> new AfterBulk(c, ledger, (BulkRequest) request, (BulkResponse) response,
                    r -> listener.onResponse((Response) r)).run(),
                listener::onFailure), context);
            chain.proceed(task, action, request, after);
        }
    }

    /** After a single {@code _update} answered noop: its chunks checked and repaired ({@link AfterBulk#checkNoop}). */
    private static void afterUpdate(LifecycleComponents c, UpdateRequest request, UpdateResponse response, Consumer<UpdateResponse> reply,
                                    Consumer<Exception> fail) {
        Index concrete = response.getShardId().getIndex();
        List<String> targets = response.getResult() != DocWriteResponse.Result.NOOP ? List.of()
            : c.setup().registry().namesOf(concrete.getUUID());
        if (targets.isEmpty()) {
            reply.accept(response);
            return;
        }
        AfterBulk.checkNoop(c, concrete, response.getId(), request.routing(), targets, new WriteChecks(c.setup()), ActionListener.wrap(repaired -> {
            if (!repaired || request.getRefreshPolicy() == WriteRequest.RefreshPolicy.NONE) {
                reply.accept(response);
            } else {
                c.store().refresh(targets, ActionListener.wrap(r -> reply.accept(response), e -> reply.accept(response)));
            }
        }, e -> fail.accept(AfterBulk.chunkFailure(new BulkItemResponse(0, DocWriteRequest.OpType.UPDATE, response), null, e))));
    }
}
