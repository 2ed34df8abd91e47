package io.strata.chunkindex.registry;

import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.opensearch.cluster.ClusterChangedEvent;
import org.opensearch.cluster.ClusterState;
import org.opensearch.cluster.ClusterStateListener;
import org.opensearch.cluster.ClusterStateUpdateTask;
import org.opensearch.cluster.metadata.IndexMetadata;
import org.opensearch.cluster.metadata.Metadata;
import org.opensearch.cluster.metadata.MetadataDeleteIndexService;
import org.opensearch.cluster.service.ClusterService;
import org.opensearch.common.Priority;
import org.opensearch.common.inject.Inject;
import org.opensearch.common.lifecycle.AbstractLifecycleComponent;
import org.opensearch.common.settings.Setting;
import org.opensearch.common.settings.Settings;
import org.opensearch.core.index.Index;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Deletes the chunk indices of a deleted source index, on the elected cluster manager (a chunk index serves one concrete
 * source index: once its source is gone, every chunk in it is an orphan). Off with {@link #DELETE_WITH_SOURCE} = false;
 * then {@code _reconcile?index=<deleted source>} removes them on demand. A delete-index request from a caller already
 * deletes both, with the caller's permissions ({@code SourceIndexDeleteFilter}); the janitor is the plugin's own backstop
 * for a source index that went without a caller's request (e.g. another plugin's cluster-state code): cluster-state
 * updates as the node, never on a user's behalf.
 *
 * <p>It acts only on {@link ChunkIndexRegistry} entries — Strata's own record in the chunk index's metadata, written by
 * the node after a caller's authorised chunk write — never on a mapping's {@code _meta}, which any user with put-mapping
 * rights can write (trusting it would let such a user make the node delete any index by naming another in its
 * {@code _meta}). It decides inside a cluster-state update task, against the state it replaces: a chunk index is deleted
 * only if it is still the same index (same UUID) and still registered to the deleted source index (same UUID). A source
 * index of the same name created again afterwards gets a chunk index of its own (the processor creates one once the old
 * one is gone, and refuses to write into one registered to a deleted index). Deletions the janitor does not see (it was
 * off, or the cluster manager changed in between) are left to {@code _reconcile}.
 *
 * <p>It also settles the registrations of chunk indices restored from a snapshot (a restore gives every index a new UUID
 * and copies the registration; see {@link ChunkIndexRegistry#afterRestore}), whatever {@link #DELETE_WITH_SOURCE} says.
 */
public final class ChunkIndexJanitor extends AbstractLifecycleComponent implements ClusterStateListener {
    private static final Logger logger = LogManager.getLogger(ChunkIndexJanitor.class);

    /** Whether deleting a source index deletes its chunk index (dynamic cluster setting). */
    public static final Setting<Boolean> DELETE_WITH_SOURCE = Setting.boolSetting("plugins.strata.chunk_index.delete_with_source", true,
        Setting.Property.Dynamic, Setting.Property.NodeScope);

    private final ClusterService clusterService;
    private final MetadataDeleteIndexService deleteIndexService;
    private final ChunkIndexRegistry registry;
    private volatile boolean enabled;

    @Inject
    public ChunkIndexJanitor(Settings settings, ClusterService clusterService, MetadataDeleteIndexService deleteIndexService,
                             ChunkIndexRegistry registry) {
        this.clusterService = clusterService;
        this.deleteIndexService = deleteIndexService;
        this.registry = registry;
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
        if (!event.localNodeClusterManager() || !event.metadataChanged()) {
            return;
        }
        if (!event.indicesCreated().isEmpty()) {
            settleRestored(event.state().metadata(), Set.copyOf(event.indicesCreated()));
        }
        if (!enabled || event.indicesDeleted().isEmpty()) {
            return;
        }
        // the chunk indices of a deleted source are still there, registered to it (whether or not the registry applied this
        // state yet); those deleted in the same request are gone already, which is what a caller's delete does
        List<Doomed> doomed = new ArrayList<>();
        for (Index source : event.indicesDeleted()) {
            for (ChunkIndexRegistry.Registration r : registry.ofSource(source.getUUID())) {
                doomed.add(new Doomed(r.chunkIndex(), source));
            }
        }
        if (!doomed.isEmpty()) {
            deleteChunkIndices(event.indicesDeleted(), doomed);
        }
    }

    /**
     * Chunk indices a snapshot restore created (it creates all its indices in one cluster-state update: {@code created})
     * carry the registration they had when snapshotted; each is registered to its source restored with it, or, restored as
     * a copy next to its live source, unregistered ({@link ChunkIndexRegistry#afterRestore}), so that writes, deletes and
     * {@code _reconcile} of the restored pair find each other and those of the live pair leave the copy alone. Each change
     * is decided again on the state it replaces.
     */
    private void settleRestored(Metadata metadata, Set<String> created) {
        List<ChunkIndexRegistry.Restored> changes = new ArrayList<>();
        for (String name : created) {
            ChunkIndexRegistry.Restored change = ChunkIndexRegistry.afterRestore(metadata.index(name), metadata, created);
            if (change != null) {
                changes.add(change);
            }
        }
        if (changes.isEmpty()) {
            return;
        }
        clusterService.submitStateUpdateTask("strata: register restored chunk indices",
            new ClusterStateUpdateTask(Priority.URGENT) {
                private final List<ChunkIndexRegistry.Restored> applied = new ArrayList<>();

                @Override
                public ClusterState execute(ClusterState current) {
                    applied.clear();
                    Metadata.Builder updated = Metadata.builder(current.metadata());
                    for (ChunkIndexRegistry.Restored planned : changes) {
                        IndexMetadata chunks = current.metadata().index(planned.chunkIndex().getName());
                        if (chunks != null && planned.equals(ChunkIndexRegistry.afterRestore(chunks, current.metadata(), created))) {
                            updated.put(ChunkIndexRegistry.apply(chunks, planned, current.metadata()), false);
                            applied.add(planned);
                        }
                    }
                    return applied.isEmpty() ? current : ClusterState.builder(current).metadata(updated).build();
                }

                @Override
                public void clusterStateProcessed(String source, ClusterState oldState, ClusterState newState) {
                    if (!applied.isEmpty()) {
                        logger.info("restored chunk indices registered to their restored sources (none: a copy) {}", applied);
                    }
                }

                @Override
                public void onFailure(String source, Exception e) {
                    logger.warn("registering restored chunk indices " + changes + " failed", e);
                }
            });
    }

    /** A chunk index of one of the deleted source indices, as registered when the deletion was seen. */
    private record Doomed(Index chunkIndex, Index source) {}

    private void deleteChunkIndices(List<Index> deleted, List<Doomed> doomed) {
        clusterService.submitStateUpdateTask("strata: delete the chunk indices of deleted source indices " + deleted,
            new ClusterStateUpdateTask(Priority.NORMAL) {
                private final Set<Index> gone = new HashSet<>();

                @Override
                public ClusterState execute(ClusterState current) {
                    gone.clear();
                    for (Doomed d : doomed) {
                        IndexMetadata now = current.metadata().index(d.chunkIndex().getName());
                        ChunkIndexRegistry.Registration r = ChunkIndexRegistry.registrationOf(now);
                        // decided on the state this task replaces: the same chunk index, still registered to the deleted source
                        if (now != null && now.getIndexUUID().equals(d.chunkIndex().getUUID()) && r != null && r.source().equals(d.source())) {
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
}
