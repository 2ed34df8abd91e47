package io.strata.query;

import io.strata.chunkindex.write.ChunkWriters;
import io.strata.inference.InferenceService;
import io.strata.stats.StrataStats;
import org.opensearch.cluster.metadata.IndexNameExpressionResolver;
import org.opensearch.cluster.service.ClusterService;
import org.opensearch.common.util.concurrent.ThreadContext;

import java.util.function.Supplier;

/**
 * What a {@code multi_granular} query needs on the coordinator: the index mappings, the inference layer, the node's
 * counters, the thread context (where {@link SearchTaskFilter} leaves the user's search task) and the chunk writers of the
 * node's pipelines (what they copy into which chunk index). Suppliers for what the
 * node creates after the query is registered; the counters exist from the start.
 */
public record QueryServices(Supplier<ClusterService> clusterService, Supplier<IndexNameExpressionResolver> resolver,
                            Supplier<InferenceService> inference, StrataStats stats, Supplier<ThreadContext> threadContext,
                            Supplier<ChunkWriters> writers) {
    /** Without the node's pipelines: which fields a chunk index holds is read from its mapping. */
    public QueryServices(Supplier<ClusterService> clusterService, Supplier<IndexNameExpressionResolver> resolver,
                         Supplier<InferenceService> inference, StrataStats stats, Supplier<ThreadContext> threadContext) {
        this(clusterService, resolver, inference, stats, threadContext, () -> null);
    }
}
