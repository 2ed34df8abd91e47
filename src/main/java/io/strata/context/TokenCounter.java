package io.strata.context;

/** Counts a text's tokens with one tokenizer, special tokens left out: what the text costs in a prompt. */
@FunctionalInterface
public interface TokenCounter {
    int count(String text);

    /**
     * Start offsets of the tokens of {@code text}, ascending (a word's tokens may all be given at the word's first
     * character: {@link WordTokenCounter}), or null when this counter gives none. Only for tokenizers that split at
     * whitespace first (WordPiece, as every bundled model's): a span of the text cut at whitespace then holds exactly the
     * tokens that start in it, so {@link ContextPacker} tokenizes each parent once instead of every candidate passage.
     */
    default int[] starts(String text) {
        return null;
    }
}
