package io.strata.chunkindex;

import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.opensearch.action.admin.indices.mapping.put.PutMappingClusterStateUpdateRequest;
import org.opensearch.cluster.ClusterChangedEvent;
import org.opensearch.cluster.ClusterState;
import org.opensearch.cluster.ClusterStateListener;
import org.opensearch.cluster.ClusterStateUpdateTask;
import org.opensearch.cluster.metadata.IndexMetadata;
import org.opensearch.cluster.metadata.MetadataDeleteIndexService;
import org.opensearch.cluster.metadata.MetadataMappingService;
import org.opensearch.cluster.service.ClusterService;
import org.opensearch.common.Priority;
import org.opensearch.common.inject.Inject;
import org.opensearch.common.lifecycle.AbstractLifecycleComponent;
import org.opensearch.common.settings.Setting;
import org.opensearch.common.settings.Settings;
import org.opensearch.common.unit.TimeValue;
import org.opensearch.common.xcontent.XContentFactory;
import org.opensearch.core.action.ActionListener;
import org.opensearch.core.common.bytes.BytesReference;
import org.opensearch.core.index.Index;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Deletes the chunk index of a deleted source index, on the elected cluster manager (one chunk index per source index:
 * once its source is gone, every chunk in it is an orphan). Off with {@link #DELETE_WITH_SOURCE} = false; then
 * {@code _reconcile?index=<deleted source>} removes them on demand. A delete-index request from a caller already deletes
 * both, with the caller's permissions ({@link SourceIndexDeleteFilter}); the janitor is the plugin's own backstop for a
 * source index that went without a caller's request (e.g. another plugin's cluster-state code): cluster-state updates
 * as the node, never on a user's behalf.
 *
 * <p><b>The delete-and-re-create race.</b> A source index can be deleted and a new one of the same name written to
 * within milliseconds, into the same chunk index (the pipeline names it). Deleting the chunk index by name would then
 * destroy the new chunks. So a chunk index records which incarnation of its source index it serves (the source
 * index's UUID in the mapping's {@code _meta}, {@link ChunkDocuments#META_SOURCE_UUID}), and:
 * <ul>
 *   <li>the processor claims the chunk index for the current incarnation ({@link ChunkStore#ensureIndex}: a mapping
 *       update to the new UUID, or to {@code _na_} while the new source index does not exist yet) before writing any
 *       chunk for it;</li>
 *   <li>the janitor decides inside a cluster-state update task, against the state it replaces: it deletes the chunk
 *       index only if that is still the same index (same UUID) and still records the deleted incarnation.</li>
 * </ul>
 * Both updates run one after the other on the cluster manager's update thread, so either the claim comes first (the
 * janitor spares the index; chunks of the deleted incarnation stay as orphans for {@code _reconcile}) or the delete
 * does (the claim fails with "no such index" and the processor creates a fresh chunk index). New chunks are never
 * written into a chunk index that is deleted afterwards.
 *
 * <p>A chunk index created before its source index exists (the first bulk runs pipelines before creating the index)
 * records {@code _na_}; when the source index is then created, the janitor records its UUID (a mapping update, also
 * serialised on the cluster manager; losing a race to a processor's claim only leaves the index to {@code _reconcile}).
 * Deletions the janitor does not see (it was off, or the cluster manager changed in between) are left to
 * {@code _reconcile}.
 */
public final class ChunkIndexJanitor extends AbstractLifecycleComponent implements ClusterStateListener {
    private static final Logger logger = LogManager.getLogger(ChunkIndexJanitor.class);

    /** Whether deleting a source index deletes its chunk index (dynamic cluster setting). */
    public static final Setting<Boolean> DELETE_WITH_SOURCE = Setting.boolSetting("plugins.strata.chunk_index.delete_with_source", true,
        Setting.Property.Dynamic, Setting.Property.NodeScope);

    private static final TimeValue TIMEOUT = TimeValue.timeValueSeconds(30);

    private final ClusterService clusterService;
    private final MetadataDeleteIndexService deleteIndexService;
    private final MetadataMappingService mappingService;
    private volatile boolean enabled;

    @Inject
    public ChunkIndexJanitor(Settings settings, ClusterService clusterService, MetadataDeleteIndexService deleteIndexService,
                             MetadataMappingService mappingService) {
        this.clusterService = clusterService;
        this.deleteIndexService = deleteIndexService;
        this.mappingService = mappingService;
        this.enabled = DELETE_WITH_SOURCE.get(settings);
        clusterService.getClusterSettings().addSettingsUpdateConsumer(DELETE_WITH_SOURCE, v -> enabled = v);
    }

    @Override
    protected void doStart() {
        clusterService.addListener(this);
    }

    @Override
    protected void doStop() {
        clusterService.removeListener(this);
    }

    @Override
    protected void doClose() {}

    @Override
    public void clusterChanged(ClusterChangedEvent event) {
        if (!enabled || !event.localNodeClusterManager() || !event.metadataChanged()) {
            return;
        }
        if (!event.indicesDeleted().isEmpty()) {
            deleteChunkIndicesOf(event.state(), event.indicesDeleted());
        }
        if (!event.indicesCreated().isEmpty()) {
            recordSourceUuids(event.state(), Set.copyOf(event.indicesCreated()));
        }
    }

    /** A chunk index of one of {@code deleted}, as it was when the deletion was seen. */
    private record Doomed(Index chunkIndex, Index source) {}

    private void deleteChunkIndicesOf(ClusterState state, List<Index> deleted) {
        List<Doomed> doomed = new ArrayList<>();
        for (Index source : deleted) {
            for (IndexMetadata index : state.metadata().indices().values()) {
                if (records(index, source)) {
                    doomed.add(new Doomed(index.getIndex(), source));
                }
            }
        }
        if (doomed.isEmpty()) {
            return;
        }
        clusterService.submitStateUpdateTask("strata: delete the chunk indices of deleted source indices " + deleted,
            new ClusterStateUpdateTask(Priority.NORMAL) {
                private final Set<Index> gone = new HashSet<>();

                @Override
                public ClusterState execute(ClusterState current) {
                    gone.clear();
                    for (Doomed d : doomed) {
                        IndexMetadata now = current.metadata().index(d.chunkIndex().getName());
                        // decided on the state this task replaces: a claim by a new incarnation that came first wins
                        if (now != null && now.getIndexUUID().equals(d.chunkIndex().getUUID()) && records(now, d.source())) {
                            gone.add(now.getIndex());
                        }
                    }
                    return gone.isEmpty() ? current : deleteIndexService.deleteIndices(current, gone);
                }

                @Override
                public void clusterStateProcessed(String source, ClusterState oldState, ClusterState newState) {
                    if (!gone.isEmpty()) {
                        logger.info("deleted chunk indices {} of deleted source indices {}", gone, deleted);
                    }
                }

                @Override
                public void onFailure(String source, Exception e) {
                    logger.warn("deleting the chunk indices of deleted source indices " + deleted
                        + " failed; POST _plugins/_strata/_reconcile?index=<source> removes them", e);
                }
            });
    }

    /** Whether {@code index} is a chunk index that records {@code source}'s name and UUID. */
    private static boolean records(IndexMetadata index, Index source) {
        ChunkIndexMeta meta = ChunkIndexMeta.of(index);
        return meta != null && source.getName().equals(meta.sourceIndex()) && source.getUUID().equals(meta.sourceUuid());
    }

    /** Chunk indices written before their source index existed learn its UUID, so that its deletion can find them. */
    private void recordSourceUuids(ClusterState state, Set<String> created) {
        for (IndexMetadata index : state.metadata().indices().values()) {
            ChunkIndexMeta chunkMeta = ChunkIndexMeta.of(index);
            String owner = chunkMeta == null ? null : chunkMeta.sourceIndex();
            if (owner == null || !created.contains(owner) || !IndexMetadata.INDEX_UUID_NA_VALUE.equals(chunkMeta.sourceUuid())) {
                continue;
            }
            IndexMetadata source = state.metadata().index(owner);
            if (source == null) {
                continue;
            }
            String meta;
            try {
                meta = BytesReference.bytes(XContentFactory.jsonBuilder().map(chunkMeta.mappingWithSourceUuid(source.getIndexUUID())))
                    .utf8ToString();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            // the node's own bookkeeping, straight to the mapping service: no caller's request, no transport action
            PutMappingClusterStateUpdateRequest put = new PutMappingClusterStateUpdateRequest(meta)
                .indices(new Index[] { index.getIndex() }).ackTimeout(TIMEOUT).clusterManagerNodeTimeout(TIMEOUT);
            mappingService.putMapping(put, ActionListener.wrap(r -> {}, e -> logger.debug(
                "recording the UUID of [" + owner + "] in chunk index [" + index.getIndex().getName() + "] failed", e)));
        }
    }
}
