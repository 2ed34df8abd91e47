package io.strata.transport;

import org.opensearch.core.tasks.TaskId;
import org.opensearch.tasks.CancellableTask;

import java.util.Map;
import java.util.function.Supplier;

/**
 * The task of a long Strata action ({@code _reconcile}): cancellable through {@code POST _tasks/<id>/_cancel}, and
 * {@code GET _tasks/<id>} shows its progress ({@link ProgressStatus}) as the work reports it. The work checks
 * {@link #isCancelled()} between its bounded steps (a page, a document), so a cancel stops it after the step under way.
 */
public final class ProgressTask extends CancellableTask {
    private volatile Supplier<Map<String, Object>> progress = Map::of;

    public ProgressTask(long id, String type, String action, String description, TaskId parentTaskId, Map<String, String> headers) {
        super(id, type, action, description, parentTaskId, headers);
    }

    /** Where the status is read from while the task runs: a snapshot of the work's counters. */
    public void progress(Supplier<Map<String, Object>> progress) {
        this.progress = progress;
    }

    @Override
    public boolean shouldCancelChildrenOnCancellation() {
        return true;
    }

    @Override
    public Status getStatus() {
        return new ProgressStatus(progress.get());
    }
}
