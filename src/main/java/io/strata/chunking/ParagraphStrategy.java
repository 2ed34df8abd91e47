package io.strata.chunking;

import java.util.ArrayList;
import java.util.List;

/**
 * {@code paragraph}: one parent per paragraph (blank-line separated), the "Para Chunker" baseline of the
 * LGMGC paper and LumberChunker. Paragraphs longer than θ = {@code max_words} are cut recursively from
 * the line level down, so no parent exceeds θ (the paper's baseline has no bound; an unbounded parent
 * would not fit an embedding model).
 */
public final class ParagraphStrategy extends BoundedStrategy {
    public static final String TYPE = "paragraph";

    public ParagraphStrategy(int maxWords) {
        super(maxWords);
    }

    @Override
    public String type() {
        return TYPE;
    }

    @Override
    public List<Span> split(TextIndex text) {
        List<Span> out = new ArrayList<>();
        for (Span paragraph : RecursiveSplitter.paragraphs(text, new Span(0, text.length()))) {
            if (text.size(paragraph) <= splitter.maxWords()) {
                out.add(paragraph);
            } else {
                out.addAll(splitter.split(text, paragraph, RecursiveSplitter.Level.LINE));
            }
        }
        return out;
    }
}
