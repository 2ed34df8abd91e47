package io.strata.stats.transport;

import io.strata.stats.InferenceGauges;
import io.strata.stats.StrataStats;
import org.opensearch.action.FailedNodeException;
import org.opensearch.action.support.ActionFilters;
import org.opensearch.action.support.nodes.TransportNodesAction;
import org.opensearch.cluster.service.ClusterService;
import org.opensearch.common.inject.Inject;
import org.opensearch.core.common.io.stream.StreamInput;
import org.opensearch.threadpool.ThreadPool;
import org.opensearch.threadpool.ThreadPoolStats;
import org.opensearch.transport.TransportService;

import java.io.IOException;
import java.util.List;

/**
 * Asks every selected node for its {@link StrataStats}, with its inference thread pools and the truncation counts of its
 * loaded models ({@link InferenceGauges}). Runs on the management pool, as {@code _nodes/stats} does; answering costs no
 * I/O.
 */
public final class TransportStatsAction extends TransportNodesAction<StatsRequest, StatsResponse, StatsNodeRequest, StatsNodeResponse> {
    private final StrataStats stats;
    private final InferenceGauges inference;

    @Inject
    public TransportStatsAction(ThreadPool threadPool, ClusterService clusterService, TransportService transportService,
                                ActionFilters actionFilters, StrataStats stats, InferenceGauges inference) {
        super(StatsAction.NAME, threadPool, clusterService, transportService, actionFilters, StatsRequest::new, StatsNodeRequest::new,
            ThreadPool.Names.MANAGEMENT, StatsNodeResponse.class);
        this.stats = stats;
        this.inference = inference;
    }

    @Override
    protected StatsResponse newResponse(StatsRequest request, List<StatsNodeResponse> responses, List<FailedNodeException> failures) {
        return new StatsResponse(clusterService.getClusterName(), responses, failures);
    }

    @Override
    protected StatsNodeRequest newNodeRequest(StatsRequest request) {
        return new StatsNodeRequest();
    }

    @Override
    protected StatsNodeResponse newNodeResponse(StreamInput in) throws IOException {
        return new StatsNodeResponse(in);
    }

    @Override
    protected StatsNodeResponse nodeOperation(StatsNodeRequest request) {
        ThreadPoolStats.Stats pool = null;
        ThreadPoolStats.Stats queryPool = null;
        for (ThreadPoolStats.Stats s : threadPool.stats()) {
            if (s.getName().equals(inference.pool())) {
                pool = s;
            } else if (s.getName().equals(inference.queryPool())) {
                queryPool = s;
            }
        }
        return new StatsNodeResponse(clusterService.localNode(), stats.snapshot(pool, queryPool, inference.truncations().get()));
    }
}
