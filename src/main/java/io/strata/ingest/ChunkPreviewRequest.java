package io.strata.ingest;

import io.strata.transport.RestBodies;
import org.opensearch.action.ActionRequest;
import org.opensearch.action.ActionRequestValidationException;
import org.opensearch.core.common.bytes.BytesReference;
import org.opensearch.core.common.io.stream.StreamInput;
import org.opensearch.core.common.io.stream.StreamOutput;
import org.opensearch.core.xcontent.MediaType;

import java.io.IOException;
import java.util.Map;

/**
 * A {@code _chunk} request: its body as sent (up to a million characters of text), parsed and validated by the action
 * on its own pool (see {@link TransportChunkPreviewAction}), not by the thread that receives it.
 */
public final class ChunkPreviewRequest extends ActionRequest {
    static final String USAGE = "[_chunk] needs a body: {\"text\": \"...\", \"strategy\": {\"type\": ...}, \"granularities\": [...]}";
    private final BytesReference body;
    private final MediaType mediaType;

    public ChunkPreviewRequest(BytesReference body, MediaType mediaType) {
        this.body = body;
        this.mediaType = mediaType;
    }

    public ChunkPreviewRequest(StreamInput in) throws IOException {
        super(in);
        this.body = in.readBytesReference();
        this.mediaType = in.readMediaType();
    }

    @Override
    public void writeTo(StreamOutput out) throws IOException {
        super.writeTo(out);
        out.writeBytesReference(body);
        mediaType.writeTo(out);
    }

    /** The body parsed into a mutable map (parsing consumes keys). */
    public Map<String, Object> body() {
        return RestBodies.map(body, mediaType, USAGE);
    }

    @Override
    public ActionRequestValidationException validate() {
        return null;
    }
}
