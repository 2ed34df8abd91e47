package io.strata.chunkindex.generations;

import io.strata.transport.ProgressStatus;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.opensearch.OpenSearchSecurityException;
import org.opensearch.action.admin.cluster.health.ClusterHealthRequest;
import org.opensearch.cluster.ClusterState;
import org.opensearch.cluster.metadata.IndexMetadata;
import org.opensearch.cluster.metadata.Metadata;
import org.opensearch.cluster.node.DiscoveryNode;
import org.opensearch.cluster.service.ClusterService;
import org.opensearch.common.unit.TimeValue;
import org.opensearch.common.util.concurrent.ThreadContext;
import org.opensearch.core.action.ActionListener;
import org.opensearch.core.rest.RestStatus;
import org.opensearch.core.tasks.TaskId;
import org.opensearch.persistent.AllocatedPersistentTask;
import org.opensearch.persistent.PersistentTaskState;
import org.opensearch.persistent.PersistentTasksCustomMetadata;
import org.opensearch.persistent.PersistentTasksExecutor;
import org.opensearch.threadpool.ThreadPool;
import org.opensearch.transport.client.Client;

import java.util.Locale;
import java.util.Map;
import java.util.function.Supplier;

/**
 * Runs the persistent task of a {@code _rebuild} ({@link RebuildResumeParams}) on the node it is assigned to: the node of the
 * live build while that node is in the cluster (there it does nothing: the build's end completes it), else another node,
 * which resumes the build as a caller's re-issue of {@code _rebuild} would (same action, same {@link ResumeCheck}s), as a
 * child task, in a thread context stashed of everything the node carries and given only the caller's stored roles
 * ({@link CallerIdentity}). A resume that is refused or fails ends the task and leaves the generation {@code interrupted}
 * (a resume never deletes it but on cancel): it is never retried by itself.
 */
public final class RebuildResumeExecutor extends PersistentTasksExecutor<RebuildResumeParams> {
    private static final Logger logger = LogManager.getLogger(RebuildResumeExecutor.class);
    /** How long a resume waits for the source and the generation to have their primaries after the node left. */
    static final TimeValue HEALTH_WAIT = TimeValue.timeValueSeconds(60);

    private final Supplier<GenerationBuilder> builder;
    private final Client client;
    private final ClusterService clusterService;

    public RebuildResumeExecutor(Supplier<GenerationBuilder> builder, Client client, ClusterService clusterService) {
        super(RebuildResumeParams.NAME, ThreadPool.Names.GENERIC);
        this.builder = builder;
        this.client = client;
        this.clusterService = clusterService;
    }

    @Override
    public PersistentTasksCustomMetadata.Assignment getAssignment(RebuildResumeParams params, ClusterState state) {
        if (state.nodes().get(params.node()) != null) {
            return new PersistentTasksCustomMetadata.Assignment(params.node(), "the node of the live build");
        }
        DiscoveryNode node = selectLeastLoadedNode(state, DiscoveryNode::isDataNode);
        return node == null ? NO_NODE_FOUND : new PersistentTasksCustomMetadata.Assignment(node.getId(), "resumes the build");
    }

    @Override
    protected String getDescription(PersistentTasksCustomMetadata.PersistentTask<RebuildResumeParams> task) {
        return "resume rebuild [" + task.getParams().sourceIndex() + "] generation [" + task.getParams().generationIndex() + "]";
    }

    @Override
    protected AllocatedPersistentTask createTask(long id, String type, String action, TaskId parentTaskId,
                                                 PersistentTasksCustomMetadata.PersistentTask<RebuildResumeParams> task,
                                                 Map<String, String> headers) {
        String uuid = task.getParams().sourceUuid();
        return new AllocatedPersistentTask(id, type, action, getDescription(task), parentTaskId, headers) {
            @Override
            public Status getStatus() { // the build's progress while it runs here
                GenerationBuilder.Running running = builder.get().running(uuid);
                return running == null ? super.getStatus() : new ProgressStatus(running.report().progress());
            }
        };
    }

    @Override
    protected void nodeOperation(AllocatedPersistentTask task, RebuildResumeParams params, PersistentTaskState state) {
        GenerationBuilder generations = builder.get();
        RebuildResumes resumes = generations.resumes();
        String uuid = params.sourceUuid();
        resumes.allocated(uuid, task);
        if (generations.running(uuid) != null) {
            return; // the live build runs here: its end completes the task
        }
        String nothing = nothingToResume(params, clusterService.state().metadata());
        if (nothing != null) {
            logger.info("[_rebuild] nothing to resume for [{}]: {}", params.sourceIndex(), nothing);
            resumes.finish(uuid, task, null);
            return;
        }
        CallerIdentity caller = params.caller();
        boolean secured = caller.secured() || CallerIdentity.securedNode(clusterService.getSettings());
        String problem = secured ? new CallerIdentity(caller.user(), caller.roles(), true).problem() : null;
        if (problem != null) {
            refused(params, task, new OpenSearchSecurityException(String.format(Locale.ROOT, "[_rebuild] generation [%s] of [%s] "
                + "is not resumed automatically: %s; it is never resumed as the node", params.generationIndex(), params.sourceIndex(),
                problem), RestStatus.FORBIDDEN));
            return;
        }
        ThreadContext threadContext = client.threadPool().getThreadContext();
        try (ThreadContext.StoredContext ignored = threadContext.stashContext()) {
            // as the node: waiting for primaries reads no user data
            client.admin().cluster().health(new ClusterHealthRequest(params.sourceIndex(), params.generationIndex())
                .waitForYellowStatus().timeout(HEALTH_WAIT), ActionListener.wrap(h -> resume(task, params, secured ? caller : null),
                e -> refused(params, task, e)));
        }
    }

    /** The resume: {@code _rebuild} of the source under the recorded pipeline, with only {@code caller}'s roles (null: a plain cluster). */
    private void resume(AllocatedPersistentTask task, RebuildResumeParams params, CallerIdentity caller) {
        if (task.isCancelled()) {
            builder.get().resumes().finish(params.sourceUuid(), task, null);
            return;
        }
        ThreadContext threadContext = client.threadPool().getThreadContext();
        try (ThreadContext.StoredContext ignored = threadContext.stashContext()) {
            if (caller != null) {
                threadContext.putTransient(CallerIdentity.INJECTED_ROLES, caller.injected());
            }
            RebuildRequest request = new RebuildRequest(params.sourceIndex(), params.pipeline(), params.requestsPerSecond());
            request.setParentTask(clusterService.localNode().getId(), task.getId());
            request.setShouldStoreResult(true); // GET _tasks/<id> shows its report after it ends
            logger.info("[_rebuild] resuming generation [{}] of [{}] automatically{}", params.generationIndex(), params.sourceIndex(),
                caller == null ? "" : " with the roles of [" + caller.user() + "]");
            client.execute(RebuildAction.INSTANCE, request, ActionListener.wrap(report -> {
                logger.info("[_rebuild] resumed generation [{}] of [{}]: complete", params.generationIndex(), params.sourceIndex());
                builder.get().resumes().finish(params.sourceUuid(), task, null); // the build's end did, unless it never registered
            }, e -> refused(params, task, e)));
        }
    }

    private void refused(RebuildResumeParams params, AllocatedPersistentTask task, Exception e) {
        logger.warn("[_rebuild] the automatic resume of generation [{}] of [{}] ended: {}; the generation stays interrupted: "
            + "re-issue POST _plugins/_strata/_rebuild?index={} to resume it, or DELETE {}", params.generationIndex(),
            params.sourceIndex(), e.getMessage(), params.sourceIndex(), params.generationIndex());
        builder.get().resumes().finish(params.sourceUuid(), task, e);
    }

    /** Why there is nothing to resume (the source or generation gone, or the generation no longer building), or null. */
    static String nothingToResume(RebuildResumeParams params, Metadata metadata) {
        IndexMetadata source = metadata.index(params.sourceIndex());
        if (source == null || !source.getIndexUUID().equals(params.sourceUuid())) {
            return "source index [" + params.sourceIndex() + "] of that build no longer exists";
        }
        IndexMetadata generation = metadata.index(params.generationIndex());
        Map<?, ?> about = generation == null ? null : TransportGenerationsAction.aboutOf(generation);
        if (about == null || !params.sourceUuid().equals(about.get("source_index_uuid"))
            || !GenerationRecord.BUILDING.equals(GenerationRecord.stateOf(about))) {
            return "generation [" + params.generationIndex() + "] is no longer an unfinished build";
        }
        return null;
    }
}
