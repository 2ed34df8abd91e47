package io.strata.chunking;

/**
 * BertChunker's model (Luo, §2.1): a frozen encoder with a trained head that scores every token as the start of a new
 * chunk. Blocking and thread-safe; implemented by the inference layer, scripted in tests.
 */
public interface BoundaryScorer {
    /**
     * Token {@code i} covers {@code text[starts[i], ends[i])} (special tokens left out) and {@code probabilities[i]} is
     * p(token i starts a chunk) = σ(t), t the head's logit difference start − normal (the paper's eq. 1).
     */
    record Scores(int[] starts, int[] ends, double[] probabilities) {
        public Scores {
            if (starts.length != ends.length || starts.length != probabilities.length) {
                throw new IllegalArgumentException("starts, ends and probabilities must have one entry per token");
            }
        }

        public int size() {
            return starts.length;
        }
    }

    String name();

    /** The window the head reads at once, in model tokens (special tokens excluded). */
    int windowTokens();

    /**
     * Scores the longest prefix of {@code text} that fits one window: tokens past the window are absent from the
     * result, so callers see how far it reached and slide on from there.
     */
    Scores score(String text);
}
