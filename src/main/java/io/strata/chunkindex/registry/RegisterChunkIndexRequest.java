package io.strata.chunkindex.registry;

import org.opensearch.action.ActionRequestValidationException;
import org.opensearch.action.support.clustermanager.AcknowledgedRequest;
import org.opensearch.core.common.io.stream.StreamInput;
import org.opensearch.core.common.io.stream.StreamOutput;
import org.opensearch.core.index.Index;

import java.io.IOException;

/**
 * Register {@code chunkIndex} as the chunk index of {@code source} (both concrete, by name and UUID); for a swapped-in
 * generation ({@code served} not null), in the same cluster-state update, {@code replaces} (the generation served
 * before, by name; null: none left) is no longer registered.
 */
public final class RegisterChunkIndexRequest extends AcknowledgedRequest<RegisterChunkIndexRequest> {
    private final Index chunkIndex;
    private final Index source;
    private final String replaces;
    private final ChunkIndexRegistry.Served served;

    public RegisterChunkIndexRequest(Index chunkIndex, Index source) {
        this(chunkIndex, source, null, null);
    }

    public RegisterChunkIndexRequest(Index chunkIndex, Index source, String replaces, ChunkIndexRegistry.Served served) {
        this.chunkIndex = chunkIndex;
        this.source = source;
        this.replaces = replaces;
        this.served = served;
    }

    public RegisterChunkIndexRequest(StreamInput in) throws IOException {
        super(in);
        this.chunkIndex = new Index(in);
        this.source = new Index(in);
        this.replaces = in.readOptionalString();
        if (in.readBoolean()) {
            String previous = in.readOptionalString();
            String config = in.readOptionalString();
            long[] checkpoints = in.readBoolean() ? in.readLongArray() : null;
            this.served = new ChunkIndexRegistry.Served(previous, config, checkpoints);
        } else {
            this.served = null;
        }
    }

    @Override
    public void writeTo(StreamOutput out) throws IOException {
        super.writeTo(out);
        chunkIndex.writeTo(out);
        source.writeTo(out);
        out.writeOptionalString(replaces);
        out.writeBoolean(served != null);
        if (served != null) {
            out.writeOptionalString(served.previous());
            out.writeOptionalString(served.config());
            out.writeBoolean(served.checkpoints() != null);
            if (served.checkpoints() != null) {
                out.writeLongArray(served.checkpoints());
            }
        }
    }

    public String replaces() {
        return replaces;
    }

    public ChunkIndexRegistry.Served served() {
        return served;
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
