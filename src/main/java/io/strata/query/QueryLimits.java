package io.strata.query;

import org.opensearch.common.settings.ClusterSettings;
import org.opensearch.common.settings.Setting;
import org.opensearch.common.settings.Setting.Property;

import java.util.List;
import java.util.Locale;

/**
 * Bounds on what one {@code multi_granular} query may cost (dynamic node settings, read on the coordinator before anything is
 * embedded or searched): the parents it returns ({@code k}: the sub-searches' size, the parents the shards look up) and the
 * candidates its graph search and fusion read per side ({@code num_candidates}, {@code fusion.window}, and with
 * {@code rescore} the candidates times {@code oversample_factor}). The query's own
 * parse accepts up to {@link MultiGranularQueryBuilder#MAX_K}; these let an operator lower that without a restart.
 */
public final class QueryLimits {
    private QueryLimits() {}

    public static final Setting<Integer> MAX_K = Setting.intSetting("plugins.strata.query.max_k", MultiGranularQueryBuilder.MAX_K, 1,
        MultiGranularQueryBuilder.MAX_K, Property.Dynamic, Property.NodeScope);
    public static final Setting<Integer> MAX_CANDIDATES = Setting.intSetting("plugins.strata.query.max_candidates",
        MultiGranularQueryBuilder.MAX_K, 1, MultiGranularQueryBuilder.MAX_K, Property.Dynamic, Property.NodeScope);

    public static List<Setting<?>> settings() {
        return List.of(MAX_K, MAX_CANDIDATES);
    }

    /** A 400 naming the setting when {@code query} asks for more than the node allows; nothing when the settings are unknown. */
    static void check(MultiGranularQueryBuilder query, ClusterSettings settings) {
        if (settings == null) {
            return;
        }
        int maxK = value(settings, MAX_K);
        if (query.k() > maxK) {
            throw tooLarge("k", query.k(), MAX_K, maxK);
        }
        int maxCandidates = value(settings, MAX_CANDIDATES);
        if (query.numCandidates() != null && query.numCandidates() > maxCandidates) {
            throw tooLarge("num_candidates", query.numCandidates(), MAX_CANDIDATES, maxCandidates);
        }
        if (query.fusion() != null && query.fusion().window() != null && query.fusion().window() > maxCandidates) {
            throw tooLarge("fusion.window", query.fusion().window(), MAX_CANDIDATES, maxCandidates);
        }
        // the graph search collects candidates × oversample_factor parents (the dense mode's candidates; every form is capped at
        // MultiGranularQueryBuilder.MAX_K on the shard)
        if (query.rescore() != null && query.rescore().enabled()
            && query.rescore().graphCandidates(query.candidates(), Integer.MAX_VALUE) > maxCandidates) {
            throw new IllegalArgumentException(String.format(Locale.ROOT, "[%s] [rescore.oversample_factor] [%s] × %d candidates = %d "
                + "graph candidates; at most [%d] on this cluster ([%s]): lower the factor or [num_candidates]",
                MultiGranularQueryBuilder.NAME, query.rescore().oversampleFactor(), query.candidates(),
                query.rescore().graphCandidates(query.candidates(), Integer.MAX_VALUE), maxCandidates, MAX_CANDIDATES.getKey()));
        }
    }

    /** The setting's value; its default where it is not registered (a node without the plugin's settings: tests). */
    private static int value(ClusterSettings settings, Setting<Integer> setting) {
        return settings.get(setting.getKey()) == null ? setting.getDefault(org.opensearch.common.settings.Settings.EMPTY)
            : settings.get(setting);
    }

    private static IllegalArgumentException tooLarge(String field, int got, Setting<Integer> setting, int max) {
        return new IllegalArgumentException(String.format(Locale.ROOT, "[%s] [%s] must be at most [%d] on this cluster ([%s]), got [%d]",
            MultiGranularQueryBuilder.NAME, field, max, setting.getKey(), got));
    }
}
