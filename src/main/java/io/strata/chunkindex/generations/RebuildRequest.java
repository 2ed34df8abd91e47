package io.strata.chunkindex.generations;

import io.strata.transport.ProgressTask;
import org.opensearch.action.ActionRequest;
import org.opensearch.action.ActionRequestValidationException;
import org.opensearch.action.IndicesRequest;
import org.opensearch.action.support.IndicesOptions;
import org.opensearch.core.common.io.stream.StreamInput;
import org.opensearch.core.common.io.stream.StreamOutput;
import org.opensearch.core.tasks.TaskId;

import java.io.IOException;
import java.util.Arrays;
import java.util.Locale;
import java.util.Map;

/**
 * Build a new generation of one source index's chunk index: with the config of {@code pipeline}'s chunking processor (null:
 * the source index's default, else final, pipeline), at most {@code requestsPerSecond} source documents a second
 * ({@link Float#POSITIVE_INFINITY}: unthrottled, as {@code _reindex}'s {@code -1}).
 */
public final class RebuildRequest extends ActionRequest implements IndicesRequest.Replaceable {
    private String index;
    private final String pipeline;
    private final float requestsPerSecond;
    private boolean storeResult;

    public RebuildRequest(String index, String pipeline, float requestsPerSecond) {
        this.index = index;
        this.pipeline = pipeline;
        this.requestsPerSecond = requestsPerSecond;
    }

    public RebuildRequest(StreamInput in) throws IOException {
        super(in);
        this.index = in.readString();
        this.pipeline = in.readOptionalString();
        this.requestsPerSecond = in.readFloat();
    }

    @Override
    public void writeTo(StreamOutput out) throws IOException {
        super.writeTo(out);
        out.writeString(index);
        out.writeOptionalString(pipeline);
        out.writeFloat(requestsPerSecond);
    }

    public String index() {
        return index;
    }

    public String pipeline() {
        return pipeline;
    }

    public float requestsPerSecond() {
        return requestsPerSecond;
    }

    /** The source index is what a role's index permission is checked against. */
    @Override
    public String[] indices() {
        return new String[] { index };
    }

    /** Replaceable so that the security plugin resolves the one index this request names (see ReconcileRequest). */
    @Override
    public RebuildRequest indices(String... indices) {
        if (indices == null || indices.length != 1) {
            throw new IllegalArgumentException("[_rebuild] takes exactly one source index, got " + Arrays.toString(indices));
        }
        this.index = indices[0];
        return this;
    }

    @Override
    public IndicesOptions indicesOptions() {
        return IndicesOptions.strictSingleIndexNoExpandForbidClosed();
    }

    /** Stored in {@code .tasks} when nobody waits for the answer ({@code wait_for_completion=false}); not on the wire. */
    public void setShouldStoreResult(boolean storeResult) {
        this.storeResult = storeResult;
    }

    @Override
    public boolean getShouldStoreResult() {
        return storeResult;
    }

    @Override
    public ProgressTask createTask(long id, String type, String action, TaskId parentTaskId, Map<String, String> headers) {
        return new ProgressTask(id, type, action, getDescription(), parentTaskId, headers);
    }

    @Override
    public String getDescription() {
        return "rebuild [" + index + "]" + (pipeline == null ? "" : " pipeline [" + pipeline + "]");
    }

    @Override
    public ActionRequestValidationException validate() {
        ActionRequestValidationException e = null;
        if (index == null || index.isBlank()) {
            e = new ActionRequestValidationException();
            e.addValidationError("[_rebuild] needs [index]: the source index whose chunks to build, e.g. "
                + "POST _plugins/_strata/_rebuild?index=books");
        }
        if (!(requestsPerSecond > 0)) {
            e = e == null ? new ActionRequestValidationException() : e;
            e.addValidationError(String.format(Locale.ROOT,
                "[_rebuild] [requests_per_second] must be a positive number of source documents a second, or -1 for no limit; got [%s]",
                requestsPerSecond));
        }
        return e;
    }
}
