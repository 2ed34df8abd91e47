package io.strata.chunkindex.generations;

import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.opensearch.ExceptionsHelper;
import org.opensearch.ResourceAlreadyExistsException;
import org.opensearch.ResourceNotFoundException;
import org.opensearch.cluster.service.ClusterService;
import org.opensearch.common.unit.TimeValue;
import org.opensearch.core.action.ActionListener;
import org.opensearch.core.index.Index;
import org.opensearch.persistent.AllocatedPersistentTask;
import org.opensearch.persistent.PersistentTasksCustomMetadata;
import org.opensearch.persistent.PersistentTasksService;

import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The persistent task of each running {@code _rebuild} ({@link RebuildResumeParams}): registered, as the node (Strata's own
 * bookkeeping, like the registry), once the build has created and recorded its generation, and completed when the build
 * ends, whatever the end (done, failed, cancelled). While the build runs the task is assigned to its node; should the node
 * leave, the cluster manager assigns it to another, where {@link RebuildResumeExecutor} resumes the build.
 */
public final class RebuildResumes {
    private static final Logger logger = LogManager.getLogger(RebuildResumes.class);
    private static final TimeValue REMOVAL_WAIT = TimeValue.timeValueSeconds(30);

    private final PersistentTasksService tasks;
    private final ClusterService clusterService;
    /** The allocated persistent tasks running on this node, by source index UUID. */
    private final Map<String, AllocatedPersistentTask> local = new ConcurrentHashMap<>();

    RebuildResumes(PersistentTasksService tasks, ClusterService clusterService) {
        this.tasks = tasks;
        this.clusterService = clusterService;
    }

    /**
     * Registers the persistent task of {@code report}'s build of {@code source}, which runs on this node, then continues;
     * the task of an automatic resume exists already and is kept. A registration that fails leaves the build without an
     * automatic resume (as before there was one), logged.
     */
    void started(RebuildReport report, Index source, ActionListener<Void> next) {
        CallerIdentity caller = report.caller == null ? CallerIdentity.NONE : report.caller;
        RebuildResumeParams params = new RebuildResumeParams(source.getName(), source.getUUID(), report.generationIndex,
            report.pipeline, report.config, report.requestsPerSecond, clusterService.localNode().getId(), caller.user(),
            caller.roles(), caller.secured());
        tasks.sendStartRequest(RebuildResumeParams.taskId(source.getUUID()), RebuildResumeParams.NAME, params, ActionListener.wrap(t -> {
            report.registered = true;
            next.onResponse(null);
        }, e -> {
            if (ExceptionsHelper.unwrapCause(e) instanceof ResourceAlreadyExistsException) {
                report.registered = true; // the task that resumes this generation, or one of a build a node lost
            } else {
                logger.warn("[_rebuild] of [{}]: no automatic resume for generation [{}]: {}", source.getName(),
                    report.generationIndex, e.getMessage());
            }
            next.onResponse(null);
        }));
    }

    /** {@code next}, after the persistent task of {@code report}'s build of source {@code sourceUuid} ended, if it registered one. */
    <T> ActionListener<T> endingFirst(RebuildReport report, String sourceUuid, ActionListener<T> next) {
        return ActionListener.wrap(r -> ended(report, sourceUuid, () -> next.onResponse(r)),
            e -> ended(report, sourceUuid, () -> next.onFailure(e)));
    }

    private void ended(RebuildReport report, String sourceUuid, Runnable next) {
        if (!report.registered) {
            next.run();
            return;
        }
        AllocatedPersistentTask task = local.remove(sourceUuid);
        if (task != null) {
            task.markAsCompleted(); // its allocation here: completing it removes it from the cluster state
            // the caller hears the result once it is gone: a build that answered has no resume left to run
            tasks.waitForPersistentTaskCondition(RebuildResumeParams.taskId(sourceUuid), Objects::isNull, REMOVAL_WAIT,
                new PersistentTasksService.WaitForPersistentTaskListener<RebuildResumeParams>() {
                    @Override
                    public void onResponse(PersistentTasksCustomMetadata.PersistentTask<RebuildResumeParams> gone) {
                        next.run();
                    }

                    @Override
                    public void onFailure(Exception e) {
                        next.run();
                    }

                    @Override
                    public void onTimeout(TimeValue timeout) {
                        logger.warn("[_rebuild] the persistent task [{}] was still registered {} after its build ended",
                            RebuildResumeParams.taskId(sourceUuid), timeout);
                        next.run();
                    }
                });
            return;
        }
        tasks.sendRemoveRequest(RebuildResumeParams.taskId(sourceUuid), ActionListener.wrap(r -> next.run(), e -> {
            if (!(ExceptionsHelper.unwrapCause(e) instanceof ResourceNotFoundException)) {
                logger.warn("[_rebuild] could not remove the persistent task [{}]: {}", RebuildResumeParams.taskId(sourceUuid),
                    e.getMessage());
            }
            next.run();
        }));
    }

    /** Called by the executor: {@code task} of source {@code sourceUuid} runs on this node; the build's end completes it. */
    void allocated(String sourceUuid, AllocatedPersistentTask task) {
        local.put(sourceUuid, task);
    }

    /** Ends {@code task} (unless the build's end did): completed, or failed with {@code failure}. */
    void finish(String sourceUuid, AllocatedPersistentTask task, Exception failure) {
        if (local.remove(sourceUuid, task)) {
            if (failure == null) {
                task.markAsCompleted();
            } else {
                task.markAsFailed(failure);
            }
        }
    }
}
