package io.strata.stats.transport;

import org.opensearch.action.support.nodes.BaseNodesRequest;
import org.opensearch.core.common.io.stream.StreamInput;

import java.io.IOException;

/** The nodes to ask (ids, names or any node filter of {@code _nodes}; none = all). */
public final class StatsRequest extends BaseNodesRequest<StatsRequest> {
    public StatsRequest(String... nodeIds) {
        super(nodeIds);
    }

    public StatsRequest(StreamInput in) throws IOException {
        super(in);
    }
}
