package io.strata.chunking;

/** A strategy whose parents never exceed θ = {@code max_words}, with a recursive splitter for what is too long. */
abstract class BoundedStrategy implements ChunkingStrategy {
    protected final RecursiveSplitter splitter;

    BoundedStrategy(int maxWords) {
        this.splitter = new RecursiveSplitter(maxWords);
    }

    @Override
    public final int maxWords() {
        return splitter.maxWords();
    }
}
