package io.strata.chunkindex.generations;

import io.strata.transport.SourceIndexRequest;
import org.opensearch.action.ActionRequestValidationException;
import org.opensearch.core.common.io.stream.StreamInput;
import org.opensearch.core.common.io.stream.StreamOutput;

import java.io.IOException;

/**
 * Serve a generation of one source index's chunk index under its name: {@code generation} (a number, or the index name) for
 * {@code _swap}; null for {@code _rollback} (the one served before). {@code pipeline} names the pipeline whose chunking
 * processor writes the chunk index (null: the source's default, else final, pipeline).
 */
public final class SwapRequest extends SourceIndexRequest {
    private final String action;
    private final String generation;
    private final String pipeline;

    public SwapRequest(String action, String index, String generation, String pipeline) {
        super(action, index);
        this.action = action;
        this.generation = generation;
        this.pipeline = pipeline;
    }

    public SwapRequest(String action, StreamInput in) throws IOException {
        super(action, in);
        this.action = action;
        this.generation = in.readOptionalString();
        this.pipeline = in.readOptionalString();
    }

    @Override
    public void writeTo(StreamOutput out) throws IOException {
        super.writeTo(out);
        out.writeOptionalString(generation);
        out.writeOptionalString(pipeline);
    }

    public String action() {
        return action;
    }

    public String generation() {
        return generation;
    }

    public String pipeline() {
        return pipeline;
    }

    @Override
    public ActionRequestValidationException validate() {
        return validateIndex("whose chunk index to serve from another generation",
            "POST _plugins/_strata/" + action + "?index=books" + ("_swap".equals(action) ? "&generation=2" : ""));
    }
}
