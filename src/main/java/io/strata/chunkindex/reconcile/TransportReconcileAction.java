package io.strata.chunkindex.reconcile;

import org.opensearch.action.support.TransportIndicesResolvingAction;
import org.opensearch.cluster.metadata.OptionallyResolvedIndices;
import org.opensearch.cluster.metadata.ResolvedIndices;
import io.strata.chunkindex.ChunkIndexMeta;
import io.strata.chunkindex.registry.ChunkIndexRegistry;
import io.strata.transport.RenderedResponse;
import org.opensearch.action.support.ActionFilters;
import org.opensearch.action.support.HandledTransportAction;
import org.opensearch.cluster.metadata.IndexAbstraction;
import org.opensearch.cluster.metadata.IndexMetadata;
import org.opensearch.cluster.metadata.Metadata;
import org.opensearch.cluster.service.ClusterService;
import org.opensearch.common.inject.Inject;
import org.opensearch.core.action.ActionListener;
import org.opensearch.index.IndexNotFoundException;
import org.opensearch.tasks.CancellableTask;
import org.opensearch.tasks.Task;
import org.opensearch.transport.TransportService;

import java.util.List;
import java.util.Locale;

/**
 * Runs {@link ReconcileAction} on the node that received it: the work is a sequence of ordinary client calls (scroll,
 * multi-get, bulk, index) made by {@link Reconciler} in the caller's thread context, so the security plugin checks each
 * read and write against the caller's own permissions; a caller who may not write the chunk index gets 403 (with the
 * report: what was found, and each refused fix) instead of a fix made as the system.
 */
public final class TransportReconcileAction extends HandledTransportAction<ReconcileRequest, RenderedResponse>
    implements TransportIndicesResolvingAction<ReconcileRequest> {
    private final ClusterService clusterService;
    private final Reconciler reconciler;
    private final ChunkIndexRegistry registry;

    @Inject
    public TransportReconcileAction(TransportService transportService, ActionFilters actionFilters, ClusterService clusterService,
                                    Reconciler reconciler, ChunkIndexRegistry registry) {
        super(ReconcileAction.NAME, transportService, actionFilters, ReconcileRequest::new);
        this.clusterService = clusterService;
        this.reconciler = reconciler;
        this.registry = registry;
    }

    /**
     * The index the action is authorised on: the source index, one concrete name (OpenSearch 3.4's security plugin asks
     * the action itself; without this it cannot tell which index a plugin's request names and refuses it).
     */
    @Override
    public OptionallyResolvedIndices resolveIndices(ReconcileRequest request) {
        return ResolvedIndices.of(request.index());
    }

    @Override
    protected void doExecute(Task task, ReconcileRequest request, ActionListener<RenderedResponse> listener) {
        String index = request.index();
        ActionListener<ReconcileReport> render = ActionListener.wrap(
            report -> listener.onResponse(RenderedResponse.of(report, report.status())), listener::onFailure);
        try {
            Metadata state = clusterService.state().metadata();
            IndexMetadata metadata = state.index(index);
            if (metadata == null) {
                if (state.getIndicesLookup().get(index) instanceof IndexAbstraction alias) {
                    // an alias or a data stream: authorisation is on the name given, so the caller names the index itself
                    throw new IllegalArgumentException(String.format(Locale.ROOT,
                        "[_reconcile] [index] must name one source index, got [%s], %s of %s: reconcile each by its own name",
                        index, alias.getType().getDisplayName(), alias.getIndices().stream().map(i -> i.getIndex().getName()).sorted().toList()));
                }
                if (index.contains("*") || index.contains(",")) {
                    throw new IllegalArgumentException(String.format(Locale.ROOT,
                        "[_reconcile] [index] must name one source index, got [%s]", index));
                }
                List<String> chunkIndices = registry.ofDeletedSource(state, index).stream().map(r -> r.chunkIndex().getName()).toList();
                if (chunkIndices.isEmpty()) {
                    throw new IndexNotFoundException(index);
                }
                // a deleted source index whose chunk indices are still there: all orphans
                reconciler.reconcileDeleted(index, chunkIndices, request.dryRun(), render);
                return;
            }
            ChunkIndexRegistry.Registration registered = registry.ofChunkIndex(index);
            if (registered != null) {
                throw new IllegalArgumentException(String.format(Locale.ROOT,
                    "[_reconcile] [%s] is a chunk index; reconcile its source index [%s]", index, registered.source().getName()));
            }
            ChunkIndexMeta legacy = ChunkIndexMeta.of(metadata);
            if (legacy != null) {
                throw new IllegalArgumentException(String.format(Locale.ROOT,
                    "[_reconcile] [%s] is a chunk index; reconcile its source index%s", index,
                    legacy.sourceIndex() == null ? "" : " [" + legacy.sourceIndex() + "]"));
            }
        } catch (Exception e) {
            listener.onFailure(e);
            return;
        }
        reconciler.reconcile(index, request.dryRun(), task instanceof CancellableTask c ? c : null, render);
    }
}
