package io.strata.chunking;

import java.util.List;

/** {@code recursive}: the whole text through the {@link RecursiveSplitter} with θ = {@code max_words}. */
public final class RecursiveStrategy implements ChunkingStrategy {
    public static final String TYPE = "recursive";
    private final RecursiveSplitter splitter;

    public RecursiveStrategy(int maxWords) {
        this.splitter = new RecursiveSplitter(maxWords);
    }

    @Override
    public String type() {
        return TYPE;
    }

    @Override
    public int maxWords() {
        return splitter.maxWords();
    }

    @Override
    public List<Span> split(TextIndex text) {
        return splitter.split(text, new Span(0, text.length()));
    }
}
