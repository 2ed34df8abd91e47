package io.strata.chunking;

/**
 * A causal language model as the model-guided strategies need it (LGMGC's logits-guided chunker, the
 * Meta-Chunking perplexity and margin-sampling chunkers): token log-probabilities of a text, and the
 * probability of end-of-sequence after given positions. Implementations live in the inference layer.
 */
public interface CausalLm {
    /** Per-token log-probabilities of a text: {@code logProbs[i]} = log p(token i | tokens before it). */
    record TokenLogProbs(int[] tokenStarts, int[] tokenEnds, double[] logProbs) {}

    String name();

    /** Log-probabilities of every token of {@code text} after the first, given the preceding tokens. */
    TokenLogProbs logProbs(String text);

    /**
     * p([EOS] | prompt, text[0, position)) for every position, in one forward pass where the model allows
     * it (LGMGC §3.1).
     */
    double[] eosProbabilities(String prompt, String text, int[] positions);
}
