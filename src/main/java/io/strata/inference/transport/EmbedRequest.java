package io.strata.inference.transport;

import io.strata.model.ModelRef;
import io.strata.chunking.Embedder;
import org.opensearch.action.ActionRequest;
import org.opensearch.action.ActionRequestValidationException;
import org.opensearch.core.common.io.stream.StreamInput;
import org.opensearch.core.common.io.stream.StreamOutput;

import java.io.IOException;
import java.util.List;
import java.util.Locale;

import static org.opensearch.action.ValidateActions.addValidationError;

/**
 * Texts to embed, their purpose and the model. Wire format (other plugins mirror it, so it only ever grows at the
 * end): optional string {@code model}, optional string {@code model_id}, string purpose ({@code QUERY}|{@code PASSAGE}),
 * string list texts.
 */
public final class EmbedRequest extends ActionRequest {
    /** Texts per request; the inference layer batches them further. */
    public static final int MAX_TEXTS = 1000;

    private final String model;
    private final String modelId;
    private final Embedder.Purpose purpose;
    private final List<String> texts;

    /** @param ref the model, or null for the node's default embedded model */
    public EmbedRequest(ModelRef ref, Embedder.Purpose purpose, List<String> texts) {
        this.model = ref == null ? null : ref.model();
        this.modelId = ref == null ? null : ref.modelId();
        this.purpose = purpose;
        this.texts = texts;
    }

    public EmbedRequest(StreamInput in) throws IOException {
        super(in);
        model = in.readOptionalString();
        modelId = in.readOptionalString();
        purpose = Embedder.Purpose.valueOf(in.readString());
        texts = in.readStringList();
    }

    @Override
    public void writeTo(StreamOutput out) throws IOException {
        super.writeTo(out);
        out.writeOptionalString(model);
        out.writeOptionalString(modelId);
        out.writeString(purpose.name());
        out.writeStringCollection(texts);
    }

    /**
     * This request from one of another class loader (another plugin's copy of the same wire format): written out and
     * read back, as ml-commons does for its requests.
     */
    public static EmbedRequest fromActionRequest(ActionRequest request) {
        if (request instanceof EmbedRequest embedRequest) {
            return embedRequest;
        }
        return CrossLoader.reread(request, EmbedRequest::new, "request");
    }

    @Override
    public ActionRequestValidationException validate() {
        ActionRequestValidationException e = null;
        if (model != null && modelId != null) {
            e = addValidationError("[model] and [model_id] cannot be combined", e);
        }
        if (purpose == null) {
            e = addValidationError("[purpose] is required", e);
        }
        if (texts == null || texts.isEmpty()) {
            e = addValidationError("[texts] must be a non-empty list of strings", e);
        } else if (texts.size() > MAX_TEXTS) {
            e = addValidationError(String.format(Locale.ROOT, "[texts] has %d texts; at most %d per request", texts.size(), MAX_TEXTS), e);
        } else if (texts.stream().anyMatch(t -> t == null)) {
            e = addValidationError("[texts] must not contain null", e);
        }
        return e;
    }

    /** The model, or null for the node's default. */
    public ModelRef ref() {
        return model == null && modelId == null ? null : new ModelRef(model, modelId);
    }

    public Embedder.Purpose purpose() {
        return purpose;
    }

    public List<String> texts() {
        return texts;
    }
}
