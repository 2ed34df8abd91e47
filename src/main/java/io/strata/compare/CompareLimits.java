package io.strata.compare;

import org.opensearch.common.settings.Setting;
import org.opensearch.common.settings.Setting.Property;

import java.util.List;

/** Bounds on one {@code _compare} (dynamic node settings, checked before any search). */
public final class CompareLimits {
    private CompareLimits() {}

    /** Questions per {@code _compare}: each costs one {@code multi_granular} search per side. */
    public static final Setting<Integer> MAX_QUESTIONS = Setting.intSetting("plugins.strata.compare.max_questions", 1_000, 1, 100_000,
        Property.Dynamic, Property.NodeScope);

    /**
     * JSON levels of the body's {@code query} options: the comparison parses them with the node's query parser, which
     * recurses per level on a generic thread; 300 nested bools (903 levels) overflowed its stack and the node exited. The
     * ceiling, 300 levels, is below what was tried safe there (150 bools, 453 levels) and a third of XContent's own limit (1,000).
     */
    public static final int QUERY_DEPTH_CEILING = 300;
    public static final Setting<Integer> MAX_QUERY_DEPTH = Setting.intSetting("plugins.strata.compare.max_query_depth", 100, 1,
        QUERY_DEPTH_CEILING, Property.Dynamic, Property.NodeScope);

    public static List<Setting<?>> settings() {
        return List.of(MAX_QUESTIONS, MAX_QUERY_DEPTH);
    }
}
