package io.strata.chunking;

import java.util.ArrayList;
import java.util.List;

/**
 * {@code sentence}: parents of {@code sentences} consecutive sentences (default 1). A group that would
 * exceed θ = {@code max_words} is closed early; a single sentence above θ is cut into word windows.
 */
public final class SentenceStrategy extends BoundedStrategy {
    public static final String TYPE = "sentence";
    private final int sentencesPerChunk;

    public SentenceStrategy(int sentencesPerChunk, int maxWords) {
        super(maxWords);
        if (sentencesPerChunk < 1) {
            throw new IllegalArgumentException("sentences per chunk must be >= 1, got " + sentencesPerChunk);
        }
        this.sentencesPerChunk = sentencesPerChunk;
    }

    @Override
    public String type() {
        return TYPE;
    }

    public int sentencesPerChunk() {
        return sentencesPerChunk;
    }

    @Override
    public List<Span> split(TextIndex text) {
        int theta = splitter.maxWords();
        List<Span> out = new ArrayList<>();
        Span group = null;
        int inGroup = 0;
        for (Span sentence : RecursiveSplitter.sentences(text, new Span(0, text.length()))) {
            if (text.size(sentence) > theta) {
                if (group != null) {
                    out.add(group);
                    group = null;
                    inGroup = 0;
                }
                out.addAll(splitter.split(text, sentence, RecursiveSplitter.Level.WORD));
                continue;
            }
            if (group != null && (inGroup == sentencesPerChunk || text.size(group.start(), sentence.end()) > theta)) {
                out.add(group);
                group = null;
                inGroup = 0;
            }
            group = group == null ? sentence : new Span(group.start(), sentence.end());
            inGroup++;
        }
        if (group != null) {
            out.add(group);
        }
        return out;
    }
}
