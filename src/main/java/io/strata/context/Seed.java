package io.strata.context;

import java.util.List;

/**
 * Where one hit points into its source document: the chunk that matched ({@code [start, end)}, source offsets), the hit's
 * rank (0 = best) and what cites it; and, best first, other chunks of the hit that matched ({@code alternatives}, each
 * {@code {start, end}}), which seed the hit's passage when its matched chunk does not fit.
 *
 * @param document which {@link SourceText} of the packer's map holds the text
 * @param hit      the hit's citation ({@code _index/_id} of the parent chunk document)
 */
public record Seed(String document, int start, int end, int rank, String hit, List<int[]> alternatives) {
    public Seed {
        alternatives = alternatives == null ? List.of() : List.copyOf(alternatives);
    }

    public Seed(String document, int start, int end, int rank, String hit) {
        this(document, start, end, rank, hit, List.of());
    }
}
