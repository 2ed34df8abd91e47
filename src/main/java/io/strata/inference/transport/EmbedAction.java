package io.strata.inference.transport;

import org.opensearch.action.ActionType;

/**
 * Embeds texts with Strata's inference layer on the node that receives the request: an embedded model
 * ({@code model}, default when neither is given) or an ml-commons model ({@code model_id}). Internal: meant for other
 * plugins on the node, which call it with their own copy of {@link EmbedRequest}'s wire format.
 */
public final class EmbedAction extends ActionType<EmbedResponse> {
    public static final String NAME = "cluster:admin/strata/embed";
    public static final EmbedAction INSTANCE = new EmbedAction();

    private EmbedAction() {
        super(NAME, EmbedResponse::new);
    }
}
