package io.strata.stats.transport;

import org.opensearch.action.ActionType;

/** Every node's Strata counters ({@code GET _plugins/_strata/stats}), like {@code _nodes/stats}. */
public final class StatsAction extends ActionType<StatsResponse> {
    public static final String NAME = "cluster:monitor/strata/stats";
    public static final StatsAction INSTANCE = new StatsAction();

    private StatsAction() {
        super(NAME, StatsResponse::new);
    }
}
