package io.strata.ingest;

import org.opensearch.action.ActionRequest;
import org.opensearch.action.ActionRequestValidationException;
import org.opensearch.core.common.io.stream.StreamInput;
import org.opensearch.core.common.io.stream.StreamOutput;

import java.io.IOException;
import java.util.HashMap;
import java.util.Map;

/** A {@code _chunk} request: its JSON body, parsed and validated by the action (see {@link TransportChunkPreviewAction}). */
public final class ChunkPreviewRequest extends ActionRequest {
    private final Map<String, Object> body;

    public ChunkPreviewRequest(Map<String, Object> body) {
        this.body = body;
    }

    public ChunkPreviewRequest(StreamInput in) throws IOException {
        super(in);
        this.body = in.readMap();
    }

    @Override
    public void writeTo(StreamOutput out) throws IOException {
        super.writeTo(out);
        out.writeMap(body);
    }

    /** A mutable copy: parsing consumes keys. */
    public Map<String, Object> body() {
        return new HashMap<>(body);
    }

    @Override
    public ActionRequestValidationException validate() {
        return null;
    }
}
