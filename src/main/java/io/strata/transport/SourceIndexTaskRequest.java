package io.strata.transport;

import org.opensearch.core.common.io.stream.StreamInput;
import org.opensearch.core.tasks.TaskId;

import java.io.IOException;
import java.util.Map;

/**
 * A request on one source index run as a task ({@code _reconcile}, {@code _rebuild}): the task shows the work's progress
 * and can be cancelled, and with {@code wait_for_completion=false} its report is stored in {@code .tasks}.
 */
public abstract class SourceIndexTaskRequest extends SourceIndexRequest {
    private boolean storeResult;

    protected SourceIndexTaskRequest(String action, String index) {
        super(action, index);
    }

    protected SourceIndexTaskRequest(String action, StreamInput in) throws IOException {
        super(action, in);
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
}
