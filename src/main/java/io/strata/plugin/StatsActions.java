package io.strata.plugin;

import io.strata.stats.transport.RestStatsAction;
import io.strata.stats.transport.StatsAction;
import io.strata.stats.transport.TransportStatsAction;
import org.opensearch.plugins.ActionPlugin;
import org.opensearch.rest.RestHandler;

import java.util.List;

/**
 * The stats API: {@code GET _plugins/_strata/stats}. {@link TransportStatsAction} gets the {@code StrataStats} and the
 * {@code InferenceService} by injection, so {@code createComponents} must return both.
 */
public final class StatsActions {
    private StatsActions() {}

    public static List<ActionPlugin.ActionHandler<?, ?>> actions() {
        return List.of(new ActionPlugin.ActionHandler<>(StatsAction.INSTANCE, TransportStatsAction.class));
    }

    public static List<RestHandler> restHandlers() {
        return List.of(new RestStatsAction());
    }
}
