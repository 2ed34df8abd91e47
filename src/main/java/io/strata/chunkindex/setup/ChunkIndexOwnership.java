package io.strata.chunkindex.setup;

import io.strata.chunkindex.ChunkIndexMeta;
import io.strata.chunkindex.WriteScope;
import io.strata.chunkindex.registry.ChunkIndexRegistry;
import org.opensearch.action.admin.cluster.state.ClusterStateRequest;
import org.opensearch.action.admin.indices.refresh.RefreshRequest;
import org.opensearch.action.admin.indices.stats.IndicesStatsRequest;
import org.opensearch.action.support.ContextPreservingActionListener;
import org.opensearch.cluster.metadata.IndexMetadata;
import org.opensearch.cluster.metadata.Metadata;
import org.opensearch.cluster.service.ClusterService;
import org.opensearch.common.util.concurrent.ThreadContext;
import org.opensearch.core.action.ActionListener;
import org.opensearch.index.shard.DocsStats;
import org.opensearch.transport.client.Client;

import java.util.Locale;
import java.util.function.Supplier;

/**
 * Whether a chunk index may serve a source index: not registered to another one (nor to a deleted incarnation of it), not
 * a source index itself, and, when it exists without a registration, empty or registered on the cluster manager already
 * ({@link #adoptable}). Part of {@link ChunkIndexSetup}'s check before the first chunk write.
 */
final class ChunkIndexOwnership {
    private final Client client;
    private final ClusterService clusterService;
    private final ChunkIndexRegistry registry;

    ChunkIndexOwnership(Client client, ClusterService clusterService, ChunkIndexRegistry registry) {
        this.client = client;
        this.clusterService = clusterService;
        this.registry = registry;
    }

    /**
     * Fails when {@code target} is registered to a source index other than the concrete index {@code sourceIndex} (or to a
     * deleted incarnation of it: its chunk documents carry that incarnation's sequence numbers), or is itself a source index
     * with chunk indices.
     */
    void checkOwner(String target, String sourceIndex, Metadata metadata) {
        ChunkIndexRegistry.Registration owner = registry.ofChunkIndex(target);
        if (owner != null) {
            IndexMetadata source = metadata.index(sourceIndex);
            boolean same = owner.source().getName().equals(sourceIndex) && source != null
                && source.getIndexUUID().equals(owner.source().getUUID());
            if (!same) {
                throw ChunkIndexRegistry.takenBy(target, owner.source(), metadata);
            }
        }
        IndexMetadata targetMeta = metadata.index(target);
        if (targetMeta != null && !registry.ofSource(targetMeta.getIndexUUID()).isEmpty()) {
            throw new IllegalArgumentException(String.format(Locale.ROOT,
                "[target_index] [%s] is a source index with chunk indices of its own; chunks need an index of their own", target));
        }
    }

    /**
     * Continues when {@code target} may become (or is) a chunk index of {@code sourceIndex}: registered to it, or holding no
     * document — refreshed first, so every acknowledged write counts; Strata's own tombstones (a delete in the bulk that
     * creates the chunk index) hold none — or registered to it in the cluster manager's state (a registration not applied
     * here yet). Anything else is an index Strata did not create: a 400 before anything is written, since registering it
     * would let the node delete it with the source (as the janitor does, as itself), and chunk writes would mix with its
     * documents. Read as the node (a refresh and the document count; the caller may not be allowed to, and learns no more
     * than that the index holds documents).
     */
    void adoptable(String target, String sourceIndex, ActionListener<Void> listener) {
        ChunkIndexRegistry.Registration owner = registry.ofChunkIndex(target);
        if (owner != null && owner.source().getName().equals(sourceIndex)) {
            listener.onResponse(null); // checkOwner made sure it is this incarnation's
            return;
        }
        ThreadContext threadContext = client.threadPool().getThreadContext();
        if (threadContext.getTransient(WriteScope.TRANSIENT) instanceof WriteScope own && own.isOwnWrites()
            && ChunkIndexMeta.of(clusterService.state().metadata().index(target)) != null) {
            // a generation caught up by _swap or _rollback (Strata's own writes, as the caller): a chunk index by its mapping,
            // not registered while another generation serves; nothing registers it here
            listener.onResponse(null);
            return;
        }
        Supplier<ThreadContext.StoredContext> caller = threadContext.newRestorableContext(false);
        try (ThreadContext.StoredContext ignored = threadContext.stashContext()) {
            ActionListener<Void> notOurs = new ContextPreservingActionListener<>(caller, ActionListener.wrap(listener::onResponse,
                e -> listener.onFailure(inUse(target))));
            client.admin().indices().refresh(new RefreshRequest(target), ActionListener.wrap(
                refreshed -> client.admin().indices().stats(new IndicesStatsRequest().indices(target).clear().docs(true),
                    ActionListener.wrap(stats -> {
                        DocsStats docs = stats.getShards().length == 0 ? null : stats.getPrimaries().getDocs();
                        if (docs != null && docs.getCount() == 0) {
                            notOurs.onResponse(null);
                        } else {
                            registeredOnClusterManager(target, sourceIndex, notOurs);
                        }
                    }, notOurs::onFailure)),
                notOurs::onFailure));
        }
    }

    static IllegalArgumentException inUse(String target) {
        return new IllegalArgumentException(String.format(Locale.ROOT, "[target_index] [%s] is an existing index that Strata did "
            + "not create and that holds documents; a chunk index is a new index, an empty one, or one registered to this "
            + "source index: name another [target_index] (e.g. \"{{_index}}-chunks\")", target));
    }

    /**
     * The registration as the cluster manager has it: a chunk index another node created and registered a moment ago (the
     * registration is acknowledged before its chunks are written) may not have reached this node's state yet.
     */
    private void registeredOnClusterManager(String target, String sourceIndex, ActionListener<Void> listener) {
        IndexMetadata source = clusterService.state().metadata().index(sourceIndex);
        client.admin().cluster().state(new ClusterStateRequest().clear().metadata(true).indices(target), ActionListener.wrap(state -> {
            ChunkIndexRegistry.Registration owner = ChunkIndexRegistry.registrationOf(state.getState().metadata().index(target));
            if (owner != null && source != null && owner.source().getUUID().equals(source.getIndexUUID())) {
                listener.onResponse(null);
            } else {
                listener.onFailure(inUse(target));
            }
        }, listener::onFailure));
    }
}
