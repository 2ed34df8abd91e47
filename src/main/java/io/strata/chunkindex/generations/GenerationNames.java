package io.strata.chunkindex.generations;

import java.util.Collection;
import java.util.Locale;
import java.util.OptionalInt;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The names of a chunk index's generations: generation {@code k} of chunk index {@code X} (the name a pipeline's
 * {@code target_index} gives, which applications search) is the concrete index {@code X-g<k>}. A concrete index named
 * {@code X} itself, written before generations, counts as generation 1, so the first rebuild of it builds {@code X-g2}.
 */
public final class GenerationNames {
    private static final Pattern SUFFIX = Pattern.compile("-g([1-9][0-9]{0,8})$");

    private GenerationNames() {}

    /** {@code X-g<k>}. */
    public static String name(String chunkIndex, int generation) {
        if (generation < 1) {
            throw new IllegalArgumentException(String.format(Locale.ROOT, "[generation] must be at least 1, got [%d]", generation));
        }
        return chunkIndex + "-g" + generation;
    }

    /** The generation number of {@code index} as a generation of {@code chunkIndex}: {@code X} is 1, {@code X-g<k>} is k. */
    public static OptionalInt generationOf(String chunkIndex, String index) {
        if (index.equals(chunkIndex)) {
            return OptionalInt.of(1);
        }
        if (!index.startsWith(chunkIndex)) {
            return OptionalInt.empty();
        }
        Matcher m = SUFFIX.matcher(index.substring(chunkIndex.length()));
        return m.matches() ? OptionalInt.of(Integer.parseInt(m.group(1))) : OptionalInt.empty();
    }

    /** The next generation after every generation of {@code chunkIndex} among {@code existing} index names (1 when none). */
    public static int next(String chunkIndex, Collection<String> existing) {
        int max = 0;
        for (String index : existing) {
            OptionalInt g = generationOf(chunkIndex, index);
            if (g.isPresent()) {
                max = Math.max(max, g.getAsInt());
            }
        }
        return max + 1;
    }
}
