package io.strata.inference;

import io.strata.model.TokenEncoder;


/**
 * A {@link DjlEmbedder}'s encoder read per token (BertChunker's frozen backbone): the last hidden state of every
 * non-special token, with its character offsets. Shares the embedder's loaded model, tokenizer and predictors.
 *
 * <p>{@link #encode} encodes at most {@link #maxTokens()} tokens (special tokens included) and leaves the rest of a
 * longer text out of the result, so a caller sliding windows sees how far each window reached.
 */
public final class DjlTokenEncoder implements TokenEncoder {
    private final DjlEmbedder embedder;
    private final int maxTokens;

    /** @param maxTokens the window, at most the model's {@code max_tokens} (a head may be trained on shorter ones) */
    public DjlTokenEncoder(DjlEmbedder embedder, int maxTokens) {
        if (maxTokens < 3 || maxTokens > embedder.maxTokens()) {
            throw new IllegalArgumentException("model [" + embedder.name() + "] window must be in [3, " + embedder.maxTokens()
                + "] tokens, got [" + maxTokens + "]");
        }
        this.embedder = embedder;
        this.maxTokens = maxTokens;
    }

    public DjlTokenEncoder(DjlEmbedder embedder) {
        this(embedder, embedder.maxTokens());
    }

    @Override
    public String name() {
        return embedder.name();
    }

    @Override
    public int dimension() {
        return embedder.dimension();
    }

    @Override
    public int maxTokens() {
        return maxTokens;
    }

    @Override
    public Tokens encode(String text) {
        return embedder.hiddenStates(text, maxTokens);
    }
}
