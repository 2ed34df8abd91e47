package io.strata.stats.transport;

import org.opensearch.core.common.Strings;
import org.opensearch.rest.BaseRestHandler;
import org.opensearch.rest.RestRequest;
import org.opensearch.rest.action.RestActions;
import org.opensearch.transport.client.node.NodeClient;

import java.util.List;

/**
 * {@code GET _plugins/_strata/stats} and {@code GET _plugins/_strata/{nodeId}/stats} (or {@code ?nodes=}): the counters
 * of every node, or of the nodes named (ids, names, or any node filter {@code _nodes} takes, comma-separated).
 * {@code ?timeout=} bounds the wait for each node.
 */
public final class RestStatsAction extends BaseRestHandler {
    public static final String PATH = "/_plugins/_strata/stats";

    @Override
    public String getName() {
        return "strata_stats_action";
    }

    @Override
    public List<Route> routes() {
        return List.of(new Route(RestRequest.Method.GET, PATH), new Route(RestRequest.Method.GET, "/_plugins/_strata/{nodeId}/stats"));
    }

    @Override
    protected RestChannelConsumer prepareRequest(RestRequest request, NodeClient client) {
        String nodes = request.param("nodeId", request.param("nodes"));
        StatsRequest stats = new StatsRequest(Strings.splitStringByCommaToArray(nodes));
        stats.timeout(request.param("timeout"));
        return channel -> client.execute(StatsAction.INSTANCE, stats, new RestActions.NodesResponseRestListener<>(channel));
    }
}
