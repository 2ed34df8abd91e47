package io.strata.transport;

import org.opensearch.action.ActionRequest;
import org.opensearch.action.ActionRequestValidationException;
import org.opensearch.action.IndicesRequest;
import org.opensearch.action.support.IndicesOptions;
import org.opensearch.core.common.io.stream.StreamInput;
import org.opensearch.core.common.io.stream.StreamOutput;
import org.opensearch.core.tasks.TaskId;

import java.io.IOException;
import java.util.Arrays;
import java.util.Map;

/**
 * A request that works on one source index as a task ({@code _reconcile}, {@code _rebuild}): the index is what a role's
 * index permission is checked against, the task shows the work's progress and can be cancelled, and with
 * {@code wait_for_completion=false} its report is stored in {@code .tasks}.
 */
public abstract class SourceIndexTaskRequest extends ActionRequest implements IndicesRequest.Replaceable {
    private final String action;
    private String index;
    private boolean storeResult;

    /** @param action the REST action's name in messages, e.g. {@code _reconcile} */
    protected SourceIndexTaskRequest(String action, String index) {
        this.action = action;
        this.index = index;
    }

    protected SourceIndexTaskRequest(String action, StreamInput in) throws IOException {
        super(in);
        this.action = action;
        this.index = in.readString();
    }

    @Override
    public void writeTo(StreamOutput out) throws IOException {
        super.writeTo(out);
        out.writeString(index);
    }

    public String index() {
        return index;
    }

    @Override
    public String[] indices() {
        return new String[] { index };
    }

    /**
     * Replaceable so that the security plugin resolves the one index this request names (a plain {@link IndicesRequest}
     * of a plugin is evaluated against every index). Only one concrete name can come back.
     */
    @Override
    public SourceIndexTaskRequest indices(String... indices) {
        if (indices == null || indices.length != 1) {
            throw new IllegalArgumentException("[" + action + "] takes exactly one source index, got " + Arrays.toString(indices));
        }
        this.index = indices[0];
        return this;
    }

    @Override
    public IndicesOptions indicesOptions() {
        // one concrete name, no wildcards or aliases (the handlers refuse them with a clear message); the source may be
        // gone with its chunk indices left over, which _reconcile handles itself
        return IndicesOptions.strictSingleIndexNoExpandForbidClosed();
    }

    /**
     * Whether the node stores the report in the {@code .tasks} index when the run ends ({@code wait_for_completion=false}:
     * nobody waits for the answer). Not on the wire: such a request runs on the node that received it.
     */
    public void setShouldStoreResult(boolean storeResult) {
        this.storeResult = storeResult;
    }

    @Override
    public boolean getShouldStoreResult() {
        return storeResult;
    }

    /** A task that {@code GET _tasks} shows with the run's progress, and that {@code _tasks/<id>/_cancel} stops. */
    @Override
    public ProgressTask createTask(long id, String type, String action, TaskId parentTaskId, Map<String, String> headers) {
        return new ProgressTask(id, type, action, getDescription(), parentTaskId, headers);
    }

    /** The validation error of a missing index, naming what the index is for ({@code whose chunks to check}). */
    protected ActionRequestValidationException validateIndex(String what) {
        if (index == null || index.isBlank()) {
            ActionRequestValidationException e = new ActionRequestValidationException();
            e.addValidationError("[" + action + "] needs [index]: the source index " + what + ", e.g. POST _plugins/_strata/"
                + action + "?index=books");
            return e;
        }
        return null;
    }
}
