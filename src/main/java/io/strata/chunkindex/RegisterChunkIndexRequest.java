package io.strata.chunkindex;

import org.opensearch.action.ActionRequestValidationException;
import org.opensearch.action.support.clustermanager.AcknowledgedRequest;
import org.opensearch.core.common.io.stream.StreamInput;
import org.opensearch.core.common.io.stream.StreamOutput;
import org.opensearch.core.index.Index;

import java.io.IOException;

/** Register {@code chunkIndex} as the chunk index of {@code source} (both concrete, by name and UUID). */
public final class RegisterChunkIndexRequest extends AcknowledgedRequest<RegisterChunkIndexRequest> {
    private final Index chunkIndex;
    private final Index source;

    public RegisterChunkIndexRequest(Index chunkIndex, Index source) {
        this.chunkIndex = chunkIndex;
        this.source = source;
    }

    public RegisterChunkIndexRequest(StreamInput in) throws IOException {
        super(in);
        this.chunkIndex = new Index(in);
        this.source = new Index(in);
    }

    @Override
    public void writeTo(StreamOutput out) throws IOException {
        super.writeTo(out);
        chunkIndex.writeTo(out);
        source.writeTo(out);
    }

    public Index chunkIndex() {
        return chunkIndex;
    }

    public Index source() {
        return source;
    }

    @Override
    public ActionRequestValidationException validate() {
        return null;
    }
}
