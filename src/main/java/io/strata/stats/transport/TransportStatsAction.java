package io.strata.stats.transport;

import io.strata.inference.InferenceService;
import io.strata.inference.InferenceSettings;
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
 * Asks every selected node for its {@link StrataStats}, with its {@code strata_inference} thread pool and the truncation
 * counts of its loaded models. Runs on the management pool, as {@code _nodes/stats} does; answering costs no I/O.
 */
public final class TransportStatsAction extends TransportNodesAction<StatsRequest, StatsResponse, StatsNodeRequest, StatsNodeResponse> {
    private final StrataStats stats;
    private final InferenceService inference;

    @Inject
    public TransportStatsAction(ThreadPool threadPool, ClusterService clusterService, TransportService transportService,
                                ActionFilters actionFilters, StrataStats stats, InferenceService inference) {
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
        for (ThreadPoolStats.Stats s : threadPool.stats()) {
            if (s.getName().equals(InferenceSettings.THREAD_POOL)) {
                pool = s;
            }
        }
        return new StatsNodeResponse(clusterService.localNode(), stats.snapshot(pool, inference.embedded().truncations()));
    }
}
