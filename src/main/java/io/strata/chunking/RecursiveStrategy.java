package io.strata.chunking;

import java.util.List;

/** {@code recursive}: the whole text through the {@link RecursiveSplitter} with θ = {@code max_words}. */
public final class RecursiveStrategy extends BoundedStrategy {
    public static final String TYPE = "recursive";

    public RecursiveStrategy(int maxWords) {
        super(maxWords);
    }

    @Override
    public String type() {
        return TYPE;
    }

    @Override
    public List<Span> split(TextIndex text) {
        return splitter.split(text, new Span(0, text.length()));
    }
}
