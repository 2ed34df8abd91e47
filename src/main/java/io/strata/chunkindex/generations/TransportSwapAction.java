package io.strata.chunkindex.generations;

import io.strata.chunkindex.registry.ChunkIndexRegistry;
import io.strata.chunkindex.write.ChunkWriter;
import io.strata.transport.RenderedResponse;
import org.opensearch.action.support.ActionFilters;
import org.opensearch.action.support.HandledTransportAction;
import org.opensearch.action.support.TransportIndicesResolvingAction;
import org.opensearch.cluster.metadata.IndexMetadata;
import org.opensearch.cluster.metadata.OptionallyResolvedIndices;
import org.opensearch.cluster.metadata.ResolvedIndices;
import org.opensearch.cluster.service.ClusterService;
import org.opensearch.common.inject.Inject;
import org.opensearch.core.action.ActionListener;
import org.opensearch.core.rest.RestStatus;
import org.opensearch.core.xcontent.ToXContentObject;
import org.opensearch.tasks.Task;
import org.opensearch.transport.TransportService;

import java.util.Map;

/** Runs {@link SwapAction#SWAP} or {@link SwapAction#ROLLBACK} on the node that received it, as the caller ({@link GenerationSwap}). */
public abstract class TransportSwapAction extends HandledTransportAction<SwapRequest, RenderedResponse>
    implements TransportIndicesResolvingAction<SwapRequest> {
    private final ClusterService clusterService;
    private final GenerationSwap swap;
    private final GenerationBuilder builder;
    private final ChunkIndexRegistry registry;

    TransportSwapAction(SwapAction action, String name, TransportService transportService, ActionFilters actionFilters,
                        ClusterService clusterService, GenerationSwap swap, GenerationBuilder builder, ChunkIndexRegistry registry) {
        super(action.name(), transportService, actionFilters, in -> new SwapRequest(name, in));
        this.clusterService = clusterService;
        this.swap = swap;
        this.builder = builder;
        this.registry = registry;
    }

    @Override
    public OptionallyResolvedIndices resolveIndices(SwapRequest request) {
        return ResolvedIndices.of(request.index());
    }

    @Override
    protected void doExecute(Task task, SwapRequest request, ActionListener<RenderedResponse> listener) {
        TransportRebuildAction.Resolved resolved = TransportRebuildAction.resolve(registry, clusterService.state().metadata(),
            builder.writers(), request.index(), request.pipeline(), request.action(), listener);
        if (resolved == null) {
            return;
        }
        IndexMetadata source = resolved.source();
        String pipeline = resolved.pipeline();
        ChunkWriter writer = resolved.writer();
        ActionListener<Map<String, Object>> rendered = ActionListener.wrap(
            report -> listener.onResponse(RenderedResponse.of((ToXContentObject) (b, p) -> b.map(report), RestStatus.OK)), listener::onFailure);
        if (request.generation() == null && "_rollback".equals(request.action())) {
            swap.rollback(source, writer, pipeline, rendered);
        } else {
            swap.swap(source, writer, pipeline, request.generation(), rendered);
        }
    }

    /** {@code _swap}. */
    public static final class Swap extends TransportSwapAction {
        @Inject
        public Swap(TransportService transportService, ActionFilters actionFilters, ClusterService clusterService, GenerationSwap swap,
                    GenerationBuilder builder, ChunkIndexRegistry registry) {
            super(SwapAction.SWAP, "_swap", transportService, actionFilters, clusterService, swap, builder, registry);
        }
    }

    /** {@code _rollback}. */
    public static final class Rollback extends TransportSwapAction {
        @Inject
        public Rollback(TransportService transportService, ActionFilters actionFilters, ClusterService clusterService,
                        GenerationSwap swap, GenerationBuilder builder, ChunkIndexRegistry registry) {
            super(SwapAction.ROLLBACK, "_rollback", transportService, actionFilters, clusterService, swap, builder, registry);
        }
    }
}
