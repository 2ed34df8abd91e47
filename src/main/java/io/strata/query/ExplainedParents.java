package io.strata.query;

import java.util.List;

/**
 * What {@link BestChildFetchSubPhase} quotes for the hits of a query that knows its parents' scores by side: the planned
 * parents ({@link PlannedParentsQuery}) and the parents one shard fused ({@link HybridShardQuery}).
 */
interface ExplainedParents {
    MultiGranularQueryBuilder.Mode mode();

    /** The parent of hit {@code id} (may be null: not read), document {@code doc} of the top-level reader; null: not one of them. */
    PlannedParentsQueryBuilder.Parent parent(String id, int doc);

    /** The question's vector (null: no dense side). */
    float[] vector();

    /** The counted levels, ascending. */
    List<Integer> levels();

    boolean explainChild();

    /** Null: no evidence packs. */
    PlannedParentsQueryBuilder.EvidenceSpec evidence();
}
