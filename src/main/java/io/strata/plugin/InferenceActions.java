package io.strata.plugin;

import io.strata.inference.transport.EmbedAction;
import io.strata.inference.transport.RestEmbedAction;
import io.strata.inference.transport.TransportEmbedAction;
import org.opensearch.plugins.ActionPlugin;
import org.opensearch.rest.RestHandler;

import java.util.List;

/**
 * The inference layer's transport actions and REST endpoints. {@link TransportEmbedAction} gets the
 * {@code InferenceService} by injection, so {@code createComponents} must return it.
 */
public final class InferenceActions {
    private InferenceActions() {}

    public static List<ActionPlugin.ActionHandler<?, ?>> actions() {
        return List.of(new ActionPlugin.ActionHandler<>(EmbedAction.INSTANCE, TransportEmbedAction.class));
    }

    public static List<RestHandler> restHandlers() {
        return List.of(new RestEmbedAction());
    }
}
