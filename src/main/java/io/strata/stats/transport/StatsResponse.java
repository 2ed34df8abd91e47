package io.strata.stats.transport;

import org.opensearch.action.FailedNodeException;
import org.opensearch.action.support.nodes.BaseNodesResponse;
import org.opensearch.cluster.ClusterName;
import org.opensearch.core.common.io.stream.StreamInput;
import org.opensearch.core.common.io.stream.StreamOutput;
import org.opensearch.core.xcontent.ToXContentFragment;
import org.opensearch.core.xcontent.XContentBuilder;

import java.io.IOException;
import java.util.List;

/**
 * The counters of every node that answered, by node id. Rendered by {@code NodesResponseRestListener}, which adds the
 * {@code _nodes} header and {@code cluster_name}, as {@code _nodes/stats} is.
 */
public final class StatsResponse extends BaseNodesResponse<StatsNodeResponse> implements ToXContentFragment {
    public StatsResponse(ClusterName clusterName, List<StatsNodeResponse> nodes, List<FailedNodeException> failures) {
        super(clusterName, nodes, failures);
    }

    public StatsResponse(StreamInput in) throws IOException {
        super(in);
    }

    @Override
    protected List<StatsNodeResponse> readNodesFrom(StreamInput in) throws IOException {
        return in.readList(StatsNodeResponse::new);
    }

    @Override
    protected void writeNodesTo(StreamOutput out, List<StatsNodeResponse> nodes) throws IOException {
        out.writeList(nodes);
    }

    @Override
    public XContentBuilder toXContent(XContentBuilder builder, Params params) throws IOException {
        builder.startObject("nodes");
        for (StatsNodeResponse node : getNodes()) {
            builder.startObject(node.getNode().getId());
            builder.field("name", node.getNode().getName());
            node.stats().toXContent(builder, params);
            builder.endObject();
        }
        return builder.endObject();
    }
}
