package io.strata.chunkindex.reconcile;

import io.strata.transport.SourceIndexTaskRestHandler;
import org.opensearch.rest.RestRequest;
import org.opensearch.transport.client.node.NodeClient;

import java.util.List;

/**
 * {@code POST _plugins/_strata/_reconcile?index=<source index>[&dry_run=true]}: finds and fixes drift between a source
 * index and its chunk indices (see {@link Reconciler}) and reports what it found and did, through {@link ReconcileAction}
 * ({@value ReconcileAction#NAME}, checked against the source index by a security plugin).
 *
 * <p>A source index that no longer exists, but whose chunk index (found by the chunk mapping's {@code _meta}) does, is
 * reconciled too: all its chunks are orphans ({@link Reconciler#reconcileDeleted}).
 *
 * <p>{@code wait_for_completion=false} answers at once with {@code {"task": "<node>:<id>"}}, as {@code _reindex} does:
 * {@code GET _tasks/<id>} shows the run's progress while it runs and its report when done (stored in the {@code .tasks}
 * index), and {@code POST _tasks/<id>/_cancel} stops it after the page or document under way. The run is the same, in the
 * caller's thread context either way.
 */
public final class RestReconcileAction extends SourceIndexTaskRestHandler {
    public static final String PATH = "/_plugins/_strata/_reconcile";

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
        ReconcileRequest reconcile = new ReconcileRequest(index, dryRun);
        return runTask(request, client, ReconcileAction.INSTANCE, reconcile);
    }
}
