package io.strata.chunking;

import java.util.List;

/**
 * Parent spans and the boundary evidence that chose them, for the preview API: model-guided strategies say which
 * signal they read at which candidate positions (EOS probabilities, similarities, perplexities, margins).
 */
public record Segmentation(List<Span> parents, List<Evidence> evidence) {
    public Segmentation {
        parents = List.copyOf(parents);
        evidence = List.copyOf(evidence);
    }

    /**
     * One signal: {@code values[i]} was read at character offset {@code positions[i]} (e.g. the end of a sentence);
     * {@code threshold} is what it was compared with, NaN when the strategy took an argmax instead.
     */
    public record Evidence(String signal, int[] positions, double[] values, double threshold) {}

    public static Segmentation of(List<Span> parents) {
        return new Segmentation(parents, List.of());
    }
}
