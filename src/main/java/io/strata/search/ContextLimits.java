package io.strata.search;

import org.opensearch.common.settings.Setting;
import org.opensearch.common.settings.Setting.Property;

import java.util.List;

/**
 * Bounds on what one {@code strata_context} may cost (dynamic node settings, read per search): the hits whose parents it
 * reads and packs, and the token budget. Checked before the lookup; a search past one is a 400 naming the setting.
 */
public final class ContextLimits {
    private ContextLimits() {}

    /**
     * Hits of one search whose parents (and their neighbours: up to 3 per hit) it reads and packs. 2,000 hits with
     * neighbours read 6,000 parents; the packing is O(n log n) in the hits (bin/strata-bench packer).
     */
    public static final Setting<Integer> MAX_HITS = Setting.intSetting("plugins.strata.context.max_hits", 2_000, 1, 10_000,
        Property.Dynamic, Property.NodeScope);
    /** The largest {@code budget} a search may ask for (the processor's configuration accepts up to {@link ContextParams#MAX_BUDGET}). */
    public static final Setting<Integer> MAX_BUDGET = Setting.intSetting("plugins.strata.context.max_budget", ContextParams.MAX_BUDGET,
        1, ContextParams.MAX_BUDGET, Property.Dynamic, Property.NodeScope);

    public static List<Setting<?>> settings() {
        return List.of(MAX_HITS, MAX_BUDGET);
    }
}
