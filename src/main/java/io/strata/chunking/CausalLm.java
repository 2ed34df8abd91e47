package io.strata.chunking;

import java.util.List;

/**
 * A causal language model as the model-guided strategies need it (LGMGC's logits-guided chunker, the
 * Meta-Chunking perplexity and margin-sampling chunkers). Implementations live in the inference layer
 * (an embedded ONNX/TorchScript model, or an ml-commons remote model); they are thread-safe and blocking,
 * so callers run them on inference threads.
 *
 * <p>Positions are character offsets into the strings passed in, so strategies never see model tokens.
 */
public interface CausalLm {
    /**
     * Per-token log-probabilities of a text. Token {@code i} covers {@code text[tokenStarts[i], tokenEnds[i])} and
     * {@code logProbs[i]} = log p(token i | every token before it); the first token of the text is scored given only
     * the model's start of sequence (or is {@link Double#NaN} when the model has none).
     */
    record TokenLogProbs(int[] tokenStarts, int[] tokenEnds, double[] logProbs) {
        public int size() {
            return logProbs.length;
        }
    }

    String name();

    /**
     * Log-probabilities of every token of {@code text}. Texts longer than the model's context are scored with a
     * sliding window, each token keeping as much preceding context as the window allows (Meta-Chunking §3.3's
     * KV-cache window for long texts).
     */
    TokenLogProbs logProbs(String text);

    /**
     * For each position p (ascending character offsets into {@code text}, 0 &lt; p ≤ length):
     * p([EOS] | prompt, text[0, p)), the probability that the model ends the sequence right there. One forward
     * pass over {@code prompt + text} answers every position when the text fits the context (LGMGC §3.1).
     * A model that only lists its top alternatives (a remote completions API) may not know p(EOS) at a position: it
     * answers {@link #unknownBelow} the least listed probability there (a negative value; see {@link #isKnown}).
     */
    double[] eosProbabilities(String prompt, String text, int[] positions);

    /** The answer for a probability that is not known, only that it is below {@code bound} (encoded as {@code -bound}). */
    static double unknownBelow(double bound) {
        return -Math.max(bound, Double.MIN_VALUE);
    }

    /** Whether {@code value} of {@link #eosProbabilities} is a probability (else {@code -value} bounds it from above). */
    static boolean isKnown(double value) {
        return value >= 0;
    }

    /**
     * log p(candidate | prompt) for each candidate continuation, summed over the candidate's tokens (for
     * single-token answers such as Meta-Chunking's "1"/"2" this is the next-token log-probability).
     */
    double[] continuationLogProbs(String prompt, List<String> candidates);
}
