package io.strata.inference.transport;

import io.strata.model.ModelRef;
import org.opensearch.core.action.ActionResponse;
import org.opensearch.core.common.io.stream.StreamInput;
import org.opensearch.core.common.io.stream.StreamOutput;
import org.opensearch.core.xcontent.ToXContentObject;
import org.opensearch.core.xcontent.XContentBuilder;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * The model that embedded (resolved: never the implicit default) and one unit vector per text. Wire format (mirrored
 * by other plugins): optional string {@code model}, optional string {@code model_id}, vint count, then each vector as
 * a float array.
 */
public final class EmbedResponse extends ActionResponse implements ToXContentObject {
    private final ModelRef ref;
    private final List<float[]> vectors;

    public EmbedResponse(ModelRef ref, List<float[]> vectors) {
        this.ref = ref;
        this.vectors = vectors;
    }

    public EmbedResponse(StreamInput in) throws IOException {
        super(in);
        ref = new ModelRef(in.readOptionalString(), in.readOptionalString());
        int count = in.readVInt();
        vectors = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            vectors.add(in.readFloatArray());
        }
    }

    @Override
    public void writeTo(StreamOutput out) throws IOException {
        out.writeOptionalString(ref.model());
        out.writeOptionalString(ref.modelId());
        out.writeVInt(vectors.size());
        for (float[] v : vectors) {
            out.writeFloatArray(v);
        }
    }

    /** This response from one of another class loader (another plugin's copy of the wire format). */
    public static EmbedResponse fromActionResponse(ActionResponse response) {
        if (response instanceof EmbedResponse embedResponse) {
            return embedResponse;
        }
        return CrossLoader.reread(response, EmbedResponse::new, "response");
    }

    public ModelRef ref() {
        return ref;
    }

    public List<float[]> vectors() {
        return vectors;
    }

    public int dimension() {
        return vectors.isEmpty() ? 0 : vectors.get(0).length;
    }

    @Override
    public XContentBuilder toXContent(XContentBuilder builder, Params params) throws IOException {
        builder.startObject();
        if (ref.isEmbedded()) {
            builder.field("model", ref.model());
        } else {
            builder.field("model_id", ref.modelId());
        }
        builder.field("dimension", dimension());
        builder.startArray("vectors");
        for (float[] v : vectors) {
            builder.startArray();
            for (float x : v) {
                builder.value(x);
            }
            builder.endArray();
        }
        builder.endArray();
        return builder.endObject();
    }
}
