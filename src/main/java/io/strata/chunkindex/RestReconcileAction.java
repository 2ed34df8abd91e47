package io.strata.chunkindex;

import org.opensearch.cluster.metadata.IndexMetadata;
import org.opensearch.cluster.metadata.Metadata;
import org.opensearch.cluster.service.ClusterService;
import org.opensearch.index.IndexNotFoundException;
import org.opensearch.rest.BaseRestHandler;
import org.opensearch.rest.RestRequest;
import org.opensearch.rest.action.RestStatusToXContentListener;
import org.opensearch.transport.client.node.NodeClient;

import java.util.List;
import java.util.Locale;
import java.util.function.Supplier;

/**
 * {@code POST _plugins/_strata/_reconcile?index=<source index>[&dry_run=true]}: finds and fixes drift between a source
 * index and its chunk indices (see {@link Reconciler}) and reports what it found and did.
 *
 * <p>A REST handler over the node client rather than a transport action: the work is a sequence of ordinary client calls
 * (scroll, multi-get, bulk, index) orchestrated on the node that receives the request, with nothing node-local to reach
 * on other nodes (every node holds the pipelines' processors). Each of those calls runs in the caller's thread context,
 * so the security plugin checks each read and write against the caller's own permissions: a caller who may not write the
 * chunk index gets 403 (with the report: what was found, and each refused fix) instead of a fix made as the system.
 *
 * <p>A source index that no longer exists, but whose chunk index (found by the chunk mapping's {@code _meta}) does, is
 * reconciled too: all its chunks are orphans ({@link Reconciler#reconcileDeleted}).
 */
public final class RestReconcileAction extends BaseRestHandler {
    public static final String PATH = "/_plugins/_strata/_reconcile";

    private final Supplier<ClusterService> clusterService;
    private final Supplier<ChunkWriters> writers;

    public RestReconcileAction(Supplier<ClusterService> clusterService, Supplier<ChunkWriters> writers) {
        this.clusterService = clusterService;
        this.writers = writers;
    }

    @Override
    public String getName() {
        return "strata_reconcile_action";
    }

    @Override
    public List<Route> routes() {
        return List.of(new Route(RestRequest.Method.POST, PATH));
    }

    @Override
    protected RestChannelConsumer prepareRequest(RestRequest request, NodeClient client) {
        String index = request.param("index");
        boolean dryRun = request.paramAsBoolean("dry_run", false);
        if (index == null || index.isBlank()) {
            throw new IllegalArgumentException("[_reconcile] needs [index]: the source index whose chunks to check, e.g. "
                + "POST _plugins/_strata/_reconcile?index=books");
        }
        Metadata state = clusterService.get().state().metadata();
        IndexMetadata metadata = state.index(index);
        if (metadata == null) {
            if (state.hasAlias(index) || index.contains("*") || index.contains(",")) {
                throw new IllegalArgumentException(String.format(Locale.ROOT,
                    "[_reconcile] [index] must name one source index, got [%s]", index));
            }
            List<String> chunkIndices = ChunkIndexMeta.chunkIndicesOf(state, index);
            if (chunkIndices.isEmpty()) {
                throw new IndexNotFoundException(index);
            }
            // a deleted source index whose chunks are still there: all orphans
            Reconciler reconciler = new Reconciler(client, clusterService.get(), writers.get());
            return channel -> reconciler.reconcileDeleted(index, chunkIndices, dryRun, new RestStatusToXContentListener<>(channel));
        }
        ChunkIndexMeta chunkMeta = ChunkIndexMeta.of(metadata);
        String owner = chunkMeta == null ? null : chunkMeta.sourceIndex();
        if (owner != null) {
            throw new IllegalArgumentException(String.format(Locale.ROOT,
                "[_reconcile] [%s] is a chunk index; reconcile its source index [%s]", index, owner));
        }
        Reconciler reconciler = new Reconciler(client, clusterService.get(), writers.get());
        return channel -> reconciler.reconcile(index, dryRun, new RestStatusToXContentListener<>(channel));
    }
}
