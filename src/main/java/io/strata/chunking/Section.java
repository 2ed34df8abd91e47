package io.strata.chunking;

import java.util.List;

/**
 * The place of a chunk in its document's heading tree ({@code format: markdown} or {@code html}).
 *
 * @param path   the titles of the headings above the chunk, outermost first ({@code ["Install", "On Linux"]}); empty
 *               before the first heading
 * @param level  the level of the last heading of the path (1 for {@code #} / {@code <h1>}), 0 for an empty path
 * @param merged titles of the sub-sections of {@code path} that were merged whole into this chunk because together they
 *               fit its size (empty when the chunk lies inside one section)
 */
public record Section(List<String> path, int level, List<String> merged) {
    public Section {
        path = List.copyOf(path);
        merged = List.copyOf(merged);
    }
}
