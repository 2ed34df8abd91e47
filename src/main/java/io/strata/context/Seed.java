package io.strata.context;

import java.util.List;

/**
 * Where one hit points into its source document: the chunk that matched ({@code [start, end)}, source offsets), the hit's
 * rank (0 = best), its score and what cites it; and, best first, other chunks of the hit that matched ({@code alternatives},
 * each {@code {start, end}}), which seed the hit's passage when its matched chunk does not fit.
 *
 * @param document which {@link SourceText} of the packer's map holds the text
 * @param hit      the hit's citation ({@code _index/_id} of the parent chunk document)
 * @param score    the hit's search score, NaN when the search gave none (sorted by a field): how much the packer spends on
 *                 the hit's surroundings against the other hits' ({@link ContextPacker})
 * @param sentences the parent's best sentences for the query's words ({@code evidence.sentences}), best first, each
 *                 {@code {start, end}}: the best hit's passage starts from the first inside its matched chunk that fits when
 *                 neither the chunk nor a finer alternative does
 */
public record Seed(String document, int start, int end, int rank, String hit, double score, List<int[]> alternatives,
                   List<int[]> sentences) {
    public Seed {
        alternatives = alternatives == null ? List.of() : List.copyOf(alternatives);
        sentences = sentences == null ? List.of() : List.copyOf(sentences);
    }

    /** A seed without sentences. */
    public Seed(String document, int start, int end, int rank, String hit, double score, List<int[]> alternatives) {
        this(document, start, end, rank, hit, score, alternatives, List.of());
    }

    /** A seed without a score: every hit weighs the same. */
    public Seed(String document, int start, int end, int rank, String hit, List<int[]> alternatives) {
        this(document, start, end, rank, hit, Double.NaN, alternatives, List.of());
    }

    public Seed(String document, int start, int end, int rank, String hit) {
        this(document, start, end, rank, hit, Double.NaN, List.of(), List.of());
    }
}
