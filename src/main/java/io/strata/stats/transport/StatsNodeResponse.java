package io.strata.stats.transport;

import io.strata.stats.NodeStats;
import org.opensearch.action.support.nodes.BaseNodeResponse;
import org.opensearch.cluster.node.DiscoveryNode;
import org.opensearch.core.common.io.stream.StreamInput;
import org.opensearch.core.common.io.stream.StreamOutput;

import java.io.IOException;

/** One node's counters. */
public final class StatsNodeResponse extends BaseNodeResponse {
    private final NodeStats stats;

    public StatsNodeResponse(DiscoveryNode node, NodeStats stats) {
        super(node);
        this.stats = stats;
    }

    public StatsNodeResponse(StreamInput in) throws IOException {
        super(in);
        stats = NodeStats.read(in);
    }

    @Override
    public void writeTo(StreamOutput out) throws IOException {
        super.writeTo(out);
        stats.writeTo(out);
    }

    public NodeStats stats() {
        return stats;
    }
}
