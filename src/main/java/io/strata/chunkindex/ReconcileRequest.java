package io.strata.chunkindex;

import io.strata.transport.ProgressTask;
import org.opensearch.core.tasks.TaskId;

import org.opensearch.action.ActionRequest;
import org.opensearch.action.ActionRequestValidationException;
import org.opensearch.action.IndicesRequest;
import org.opensearch.action.support.IndicesOptions;
import org.opensearch.core.common.io.stream.StreamInput;
import org.opensearch.core.common.io.stream.StreamOutput;

import java.io.IOException;
import java.util.Arrays;
import java.util.Map;

/** Reconcile one source index (existing, or deleted with its chunk indices left); {@code dryRun} only reports. */
public final class ReconcileRequest extends ActionRequest implements IndicesRequest.Replaceable {
    private String index;
    private final boolean dryRun;
    private boolean storeResult;

    public ReconcileRequest(String index, boolean dryRun) {
        this.index = index;
        this.dryRun = dryRun;
    }

    public ReconcileRequest(StreamInput in) throws IOException {
        super(in);
        this.index = in.readString();
        this.dryRun = in.readBoolean();
    }

    @Override
    public void writeTo(StreamOutput out) throws IOException {
        super.writeTo(out);
        out.writeString(index);
        out.writeBoolean(dryRun);
    }

    public String index() {
        return index;
    }

    public boolean dryRun() {
        return dryRun;
    }

    /** The source index is what a role's index permission is checked against. */
    @Override
    public String[] indices() {
        return new String[] { index };
    }

    /**
     * Replaceable so that the security plugin resolves the one index this request names (a plain {@link IndicesRequest}
     * of a plugin is evaluated against every index). Only one concrete name can come back.
     */
    @Override
    public ReconcileRequest indices(String... indices) {
        if (indices == null || indices.length != 1) {
            throw new IllegalArgumentException("[_reconcile] takes exactly one source index, got " + Arrays.toString(indices));
        }
        this.index = indices[0];
        return this;
    }

    @Override
    public IndicesOptions indicesOptions() {
        // one concrete name, no wildcards or aliases (the handler refuses them with a clear message); the source may be
        // gone with its chunk indices left over, which the action handles itself
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

    @Override
    public String getDescription() {
        return "reconcile [" + index + "]" + (dryRun ? " dry_run" : "");
    }

    @Override
    public ActionRequestValidationException validate() {
        if (index == null || index.isBlank()) {
            ActionRequestValidationException e = new ActionRequestValidationException();
            e.addValidationError("[_reconcile] needs [index]: the source index whose chunks to check, e.g. "
                + "POST _plugins/_strata/_reconcile?index=books");
            return e;
        }
        return null;
    }
}
