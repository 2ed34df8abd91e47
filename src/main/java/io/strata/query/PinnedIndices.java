package io.strata.query;

import org.opensearch.OpenSearchStatusException;
import org.opensearch.cluster.ClusterState;
import org.opensearch.cluster.metadata.IndexMetadata;
import org.opensearch.cluster.metadata.IndexNameExpressionResolver;
import org.opensearch.core.index.Index;
import org.opensearch.core.rest.RestStatus;

import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The concrete indices one planning of a {@code multi_granular} query reads: what the request's names (an alias over a
 * generation of a chunk index, say) resolved to when it began, with each index's aliases version. Each sub-search and
 * the user's search resolve the names again; {@link #movedIn} says whether that could have given other indices during the
 * planning, and {@link PlannedParentsQueryBuilder.Planned#check} refuses a shard of another index afterwards.
 *
 * @param indices         the concrete indices, name and UUID
 * @param aliasesVersions each one's {@link IndexMetadata#getAliasesVersion()}: it changes whenever an alias is added to or
 *                        removed from that index, so a move away and back is seen although the names resolve as before
 * @param byPointInTime   a point in time fixes the indices itself: nothing can move
 */
record PinnedIndices(List<Index> indices, Map<Index, Long> aliasesVersions, boolean byPointInTime) {
    PinnedIndices {
        indices = List.copyOf(indices);
        aliasesVersions = Map.copyOf(aliasesVersions);
    }

    static PinnedIndices of(Index[] concrete, ClusterState state, SubSearches searches) {
        Map<Index, Long> versions = new HashMap<>();
        for (Index index : concrete) {
            IndexMetadata meta = state.metadata().index(index);
            versions.put(index, meta == null ? -1L : meta.getAliasesVersion());
        }
        return new PinnedIndices(Arrays.asList(concrete), versions, searches.byPointInTime());
    }

    Set<String> names() {
        return indices.stream().map(Index::getName).collect(Collectors.toSet());
    }

    /**
     * Null when every sub-search read exactly these indices: no hit came from another ({@code foreignHit} is null), the
     * names resolve to them in {@code now}, and none of them had an alias added or removed meanwhile. Else what moved.
     */
    String movedIn(ClusterState now, SubSearches searches, IndexNameExpressionResolver resolver, String foreignHit) {
        if (foreignHit != null) {
            return "a sub-search read [" + foreignHit + "]";
        }
        if (byPointInTime) {
            return null;
        }
        List<Index> resolved = Arrays.asList(searches.concreteIndices(now, resolver));
        if (!Set.copyOf(resolved).equals(Set.copyOf(indices))) {
            return "they now name " + resolved.stream().map(Index::getName).toList();
        }
        for (Index index : indices) {
            IndexMetadata meta = now.metadata().index(index);
            if (meta == null || meta.getAliasesVersion() != aliasesVersions.get(index)) {
                return "the aliases of [" + index.getName() + "] changed";
            }
        }
        return null;
    }

    /** The retryable error of a search whose indices moved under its planning twice (or into another model). */
    static OpenSearchStatusException moved(SubSearches searches, String what) {
        return new OpenSearchStatusException(String.format(Locale.ROOT, "[%s] the chunk index behind %s moved during this search, while "
            + "its parents were planned (%s); retry the search", MultiGranularQueryBuilder.NAME, searches.expressions(), what),
            RestStatus.SERVICE_UNAVAILABLE);
    }
}
