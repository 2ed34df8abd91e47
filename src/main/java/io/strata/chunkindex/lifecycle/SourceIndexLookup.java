package io.strata.chunkindex.lifecycle;

import io.strata.chunkindex.registry.ChunkIndexRegistry;

import org.opensearch.action.IndicesRequest;
import org.opensearch.cluster.metadata.IndexNameExpressionResolver;
import org.opensearch.cluster.service.ClusterService;
import org.opensearch.common.util.concurrent.ThreadContext;
import org.opensearch.transport.client.Client;

import java.util.Map;
import java.util.function.Supplier;

/**
 * What the action filters that extend a request on source indices to their chunk indices ({@link SourceIndexDeleteFilter},
 * {@link SourceIndexRefreshFilter}) need of the node: suppliers, because the node creates action filters before plugin
 * components.
 */
public record SourceIndexLookup(Supplier<ThreadContext> threadContext, Supplier<ClusterService> clusterService, Supplier<Client> client,
                                Supplier<IndexNameExpressionResolver> resolver, Supplier<ChunkIndexRegistry> registry) {

    /** Whether the node's components exist yet (until then the filters let every request through). */
    boolean ready() {
        return threadContext.get() != null && clusterService.get() != null && client.get() != null && resolver.get() != null
            && registry.get() != null;
    }

    /**
     * The chunk indices (→ their source) registered to the concrete indices {@code request} names, that it does not name
     * itself; none when it names nothing that resolves (the action itself reports what is wrong with the request).
     */
    Map<String, String> chunkIndicesLeftOut(IndicesRequest request) {
        try {
            return registry.get().chunkIndicesBeside(resolver.get().concreteIndices(clusterService.get().state(), request));
        } catch (RuntimeException e) {
            return Map.of();
        }
    }
}
