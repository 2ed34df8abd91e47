package io.strata.inference.transport;

import io.strata.model.ModelRef;
import io.strata.inference.InferenceService;
import org.opensearch.action.ActionRequest;
import org.opensearch.action.ActionRequestValidationException;
import org.opensearch.action.support.ActionFilters;
import org.opensearch.action.support.HandledTransportAction;
import org.opensearch.common.inject.Inject;
import org.opensearch.core.action.ActionListener;
import org.opensearch.tasks.Task;
import org.opensearch.transport.TransportService;

/**
 * Runs {@link EmbedAction} on this node with {@link InferenceService}. Accepts {@link ActionRequest}, not only
 * {@link EmbedRequest}: a caller from another plugin sends its own class, converted here.
 */
public final class TransportEmbedAction extends HandledTransportAction<ActionRequest, EmbedResponse> {
    private final InferenceService inference;

    @Inject
    public TransportEmbedAction(TransportService transportService, ActionFilters actionFilters, InferenceService inference) {
        super(EmbedAction.NAME, transportService, actionFilters, EmbedRequest::new);
        this.inference = inference;
    }

    @Override
    protected void doExecute(Task task, ActionRequest request, ActionListener<EmbedResponse> listener) {
        EmbedRequest embed;
        ModelRef ref;
        try {
            embed = EmbedRequest.fromActionRequest(request);
            ActionRequestValidationException invalid = embed.validate();
            if (invalid != null) {
                throw invalid;
            }
            ref = embed.ref() == null ? inference.defaultRef() : embed.ref();
            inference.validate("[_embed]", ref);
        } catch (Exception e) {
            listener.onFailure(e);
            return;
        }
        inference.embed(ref, embed.texts(), embed.purpose(), ActionListener.map(listener, vectors -> new EmbedResponse(ref, vectors)));
    }
}
