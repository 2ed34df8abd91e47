package io.strata.query;

import io.strata.inference.InferenceService;
import io.strata.stats.StrataStats;
import org.opensearch.cluster.metadata.IndexNameExpressionResolver;
import org.opensearch.cluster.service.ClusterService;

import java.util.function.Supplier;

/**
 * What a {@code multi_granular} query needs on the coordinator: the index mappings, the inference layer and the node's
 * counters. Suppliers for what the node creates after the query is registered; the counters exist from the start.
 */
public record QueryServices(Supplier<ClusterService> clusterService, Supplier<IndexNameExpressionResolver> resolver,
                            Supplier<InferenceService> inference, StrataStats stats) {}
