package io.strata.model;

/**
 * A frozen transformer encoder's last hidden states, one vector per model token (BertChunker's backbone).
 * Blocking and thread-safe.
 */
public interface TokenEncoder {
    /** Token {@code i} covers {@code text[starts[i], ends[i])}; special tokens are left out. */
    record Tokens(int[] starts, int[] ends, float[][] hidden) {
        public int size() {
            return starts.length;
        }
    }

    String name();

    int dimension();

    /** Longest input in model tokens, special tokens included. */
    int maxTokens();

    /** Hidden states of {@code text}, which must fit {@link #maxTokens()}; callers slide windows over longer texts. */
    Tokens encode(String text);
}
