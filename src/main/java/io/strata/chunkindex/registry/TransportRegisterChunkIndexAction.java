package io.strata.chunkindex.registry;


import org.opensearch.action.support.ActionFilters;
import org.opensearch.action.support.clustermanager.AcknowledgedResponse;
import org.opensearch.action.support.clustermanager.TransportClusterManagerNodeAction;
import org.opensearch.cluster.AckedClusterStateUpdateTask;
import org.opensearch.cluster.ClusterState;
import org.opensearch.cluster.block.ClusterBlockException;
import org.opensearch.cluster.block.ClusterBlockLevel;
import org.opensearch.cluster.metadata.IndexMetadata;
import org.opensearch.cluster.metadata.IndexNameExpressionResolver;
import org.opensearch.cluster.metadata.Metadata;
import org.opensearch.cluster.service.ClusterService;
import org.opensearch.common.Priority;
import org.opensearch.common.inject.Inject;
import org.opensearch.core.action.ActionListener;
import org.opensearch.core.common.io.stream.StreamInput;
import org.opensearch.core.index.Index;
import org.opensearch.index.IndexNotFoundException;
import org.opensearch.threadpool.ThreadPool;
import org.opensearch.transport.TransportService;

import java.io.IOException;
import java.util.Locale;

/**
 * Registers a chunk index to its concrete source index on the cluster manager ({@link ChunkIndexRegistry}), deciding on
 * the state it replaces: both indices must still be the ones named (same UUIDs), and a chunk index serves one source index
 * only. Registering the same pair again changes nothing.
 */
public final class TransportRegisterChunkIndexAction extends TransportClusterManagerNodeAction<RegisterChunkIndexRequest, AcknowledgedResponse> {

    @Inject
    public TransportRegisterChunkIndexAction(TransportService transportService, ClusterService clusterService, ThreadPool threadPool,
                                             ActionFilters actionFilters, IndexNameExpressionResolver resolver) {
        super(RegisterChunkIndexAction.NAME, transportService, clusterService, threadPool, actionFilters, RegisterChunkIndexRequest::new,
            resolver);
    }

    @Override
    protected String executor() {
        return ThreadPool.Names.SAME;
    }

    @Override
    protected AcknowledgedResponse read(StreamInput in) throws IOException {
        return new AcknowledgedResponse(in);
    }

    @Override
    protected ClusterBlockException checkBlock(RegisterChunkIndexRequest request, ClusterState state) {
        return state.blocks().globalBlockedException(ClusterBlockLevel.METADATA_WRITE);
    }

    @Override
    protected void clusterManagerOperation(RegisterChunkIndexRequest request, ClusterState state,
                                           ActionListener<AcknowledgedResponse> listener) {
        IndexMetadata chunks = state.metadata().index(request.chunkIndex().getName());
        ChunkIndexRegistry.Registration existing = ChunkIndexRegistry.registrationOf(chunks);
        if (request.served() == null && request.replaces() == null && existing != null
            && existing.chunkIndex().equals(request.chunkIndex()) && existing.source().equals(request.source())) {
            listener.onResponse(new AcknowledgedResponse(true)); // already registered
            return;
        }
        clusterService.submitStateUpdateTask("strata: register chunk index " + request.chunkIndex() + " of " + request.source(),
            new AckedClusterStateUpdateTask<AcknowledgedResponse>(Priority.URGENT, request, listener) {
                @Override
                public ClusterState execute(ClusterState current) {
                    return request.served() == null && request.replaces() == null
                        ? register(current, request.chunkIndex(), request.source())
                        : serve(current, request.chunkIndex(), request.source(), request.replaces(), request.served());
                }

                @Override
                protected AcknowledgedResponse newResponse(boolean acknowledged) {
                    return new AcknowledgedResponse(acknowledged);
                }
            });
    }

    /**
     * {@code current} with generation {@code chunkIndex} registered to {@code source} (as served, recording {@code served};
     * null: as it is), and {@code replaces} (null: none) — when it is registered to the same source — no longer registered,
     * in one update. Fails as {@link #register} does.
     */
    static ClusterState serve(ClusterState current, Index chunkIndex, Index source, String replaces,
                              ChunkIndexRegistry.Served served) {
        ClusterState registered = register(current, chunkIndex, source);
        Metadata.Builder metadata = Metadata.builder(registered.metadata());
        if (served != null) {
            metadata.put(ChunkIndexRegistry.registeredServing(registered.metadata().index(chunkIndex.getName()),
                registered.metadata().index(source.getName()), served), false);
        }
        IndexMetadata old = replaces == null || replaces.equals(chunkIndex.getName()) ? null : registered.metadata().index(replaces);
        ChunkIndexRegistry.Registration oldOwner = ChunkIndexRegistry.registrationOf(old);
        if (oldOwner != null && oldOwner.source().equals(source)) {
            metadata.put(ChunkIndexRegistry.unregistered(old), false);
        }
        return ClusterState.builder(registered).metadata(metadata).build();
    }

    /** {@code current} with {@code chunkIndex} registered to {@code source}; fails when either is gone or taken. */
    static ClusterState register(ClusterState current, Index chunkIndex, Index source) {
        IndexMetadata chunks = current.metadata().index(chunkIndex.getName());
        if (chunks == null || !chunks.getIndexUUID().equals(chunkIndex.getUUID())) {
            throw new IndexNotFoundException(chunkIndex);
        }
        IndexMetadata sourceNow = current.metadata().index(source.getName());
        if (sourceNow == null || !sourceNow.getIndexUUID().equals(source.getUUID())) {
            throw new IndexNotFoundException(source);
        }
        ChunkIndexRegistry.Registration existing = ChunkIndexRegistry.registrationOf(chunks);
        if (existing != null) {
            if (existing.source().equals(source)) {
                return current;
            }
            throw ChunkIndexRegistry.takenBy(chunkIndex.getName(), existing.source(), current.metadata());
        }
        if (ChunkIndexRegistry.registrationOf(sourceNow) != null) {
            throw new IllegalArgumentException(String.format(Locale.ROOT,
                "[target_index] [%s]: index [%s] is itself a chunk index", chunkIndex.getName(), source.getName()));
        }
        return ClusterState.builder(current)
            .metadata(Metadata.builder(current.metadata()).put(ChunkIndexRegistry.registered(chunks, sourceNow), false)).build();
    }
}
