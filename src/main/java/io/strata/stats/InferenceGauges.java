package io.strata.stats;

import java.util.Map;
import java.util.function.Supplier;

/**
 * What the stats report reads from the inference layer when it is asked, handed in by the wiring so that the stats
 * packages depend on no layer above them: the names of the node's two inference thread pools (their queue, active and
 * rejected counts come from the node's thread pool) and, for each embedded model loaded on the node, its truncation count.
 */
public record InferenceGauges(String pool, String queryPool, Supplier<Map<String, Long>> truncations) {}
