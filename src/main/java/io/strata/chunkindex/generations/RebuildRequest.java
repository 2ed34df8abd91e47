package io.strata.chunkindex.generations;

import io.strata.transport.SourceIndexTaskRequest;
import org.opensearch.action.ActionRequestValidationException;
import org.opensearch.core.common.io.stream.StreamInput;
import org.opensearch.core.common.io.stream.StreamOutput;

import java.io.IOException;
import java.util.Locale;

/**
 * Build a new generation of one source index's chunk index: with the config of {@code pipeline}'s chunking processor (null:
 * the source index's default, else final, pipeline), at most {@code requestsPerSecond} source documents a second
 * ({@link Float#POSITIVE_INFINITY}: unthrottled, as {@code _reindex}'s {@code -1}).
 */
public final class RebuildRequest extends SourceIndexTaskRequest {
    private final String pipeline;
    private final float requestsPerSecond;

    public RebuildRequest(String index, String pipeline, float requestsPerSecond) {
        super("_rebuild", index);
        this.pipeline = pipeline;
        this.requestsPerSecond = requestsPerSecond;
    }

    public RebuildRequest(StreamInput in) throws IOException {
        super("_rebuild", in);
        this.pipeline = in.readOptionalString();
        this.requestsPerSecond = in.readFloat();
    }

    @Override
    public void writeTo(StreamOutput out) throws IOException {
        super.writeTo(out);
        out.writeOptionalString(pipeline);
        out.writeFloat(requestsPerSecond);
    }

    public String pipeline() {
        return pipeline;
    }

    public float requestsPerSecond() {
        return requestsPerSecond;
    }

    @Override
    public String getDescription() {
        return "rebuild [" + index() + "]" + (pipeline == null ? "" : " pipeline [" + pipeline + "]");
    }

    @Override
    public ActionRequestValidationException validate() {
        ActionRequestValidationException e = validateIndex("whose chunks to build", "POST _plugins/_strata/_rebuild?index=books");
        if (!(requestsPerSecond > 0)) {
            e = e == null ? new ActionRequestValidationException() : e;
            e.addValidationError(String.format(Locale.ROOT,
                "[_rebuild] [requests_per_second] must be a positive number of source documents a second, or -1 for no limit; got [%s]",
                requestsPerSecond));
        }
        return e;
    }
}
