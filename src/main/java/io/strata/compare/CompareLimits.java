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

    public static List<Setting<?>> settings() {
        return List.of(MAX_QUESTIONS);
    }
}
