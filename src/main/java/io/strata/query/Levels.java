package io.strata.query;

import java.util.ArrayList;
import java.util.List;

/** The granularities a {@code multi_granular} query counts: 0 = the parent itself, 1 = θ/2 children, 2 = θ/4 … (null: all). */
final class Levels {
    private Levels() {}

    static boolean counts(List<Integer> levels, int level) {
        return levels == null || levels.contains(level);
    }

    /** The counted levels, ascending. */
    static List<Integer> counted(List<Integer> levels) {
        List<Integer> out = new ArrayList<>();
        for (int l = 0; l <= MultiGranularQueryBuilder.MAX_LEVEL; l++) {
            if (counts(levels, l)) {
                out.add(l);
            }
        }
        return out;
    }

    /** The counted levels of children (1 and above), ascending. */
    static List<Integer> children(List<Integer> levels) {
        List<Integer> out = counted(levels);
        out.remove(Integer.valueOf(0));
        return out;
    }
}
