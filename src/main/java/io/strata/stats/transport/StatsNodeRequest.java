package io.strata.stats.transport;

import org.opensearch.core.common.io.stream.StreamInput;
import org.opensearch.transport.TransportRequest;

import java.io.IOException;

/** What one node is asked: its counters. Carries nothing. */
public final class StatsNodeRequest extends TransportRequest {
    public StatsNodeRequest() {}

    public StatsNodeRequest(StreamInput in) throws IOException {
        super(in);
    }
}
