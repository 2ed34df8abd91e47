package io.strata.chunking;

/**
 * The embedding model's tokenizer as the chunking core sees it: what θ counts with {@code max_tokens}, and what the token
 * limit of every chunk is checked with ({@link TokenLimit}). Implemented by the inference layer over the model's own
 * tokenizer (for embedded models only: an ml-commons model gives no tokenizer); thread-safe; may block (the first call
 * can load the model), so a chunker holding one runs on an inference thread.
 */
public interface ModelTokens {
    /** The model's name, for messages. */
    String model();

    /** The most tokens the model embeds in one input, instruction prefix and special tokens included (its {@code max_tokens}). */
    int limit();

    /** Tokens of {@code text} as it is embedded as a passage: the model's passage prefix and special tokens included. */
    int embedded(String text);

    /**
     * Start offsets (UTF-16 indexes into {@code text}) of the tokens of {@code text} alone — no prefix, no special tokens —
     * in order; tokens with no characters of their own (none in WordPiece) are left out.
     */
    int[] starts(String text);

    /** Tokens a passage costs beyond its own text: the prefix and the special tokens. */
    default int overhead() {
        return embedded("");
    }

    /** The most tokens a chunk's own text may have so that the passage fits: {@link #limit()} − {@link #overhead()}. */
    default int textLimit() {
        return limit() - overhead();
    }
}
