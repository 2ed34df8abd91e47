package io.strata.query;

import io.strata.inference.InferenceService;
import org.opensearch.cluster.metadata.IndexNameExpressionResolver;
import org.opensearch.cluster.service.ClusterService;

import java.util.function.Supplier;

/** What a {@code multi_granular} query needs on the coordinator: the index mappings and the inference layer. */
public record QueryServices(Supplier<ClusterService> clusterService, Supplier<IndexNameExpressionResolver> resolver,
                            Supplier<InferenceService> inference) {}
