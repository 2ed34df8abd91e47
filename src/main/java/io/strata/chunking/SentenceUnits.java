package io.strata.chunking;

import java.util.ArrayList;
import java.util.List;

/**
 * Shared pieces of the causal-LM strategies (logits-guided, perplexity, margin sampling): the sentence units
 * they score and Meta-Chunking's dynamic merging.
 */
final class SentenceUnits {
    private SentenceUnits() {}

    /**
     * The trimmed sentences of the whole text, in order; a sentence above θ words is replaced by its θ-word
     * windows, so every unit fits a parent and the units together cover all non-whitespace.
     */
    static List<Span> of(TextIndex text, RecursiveSplitter splitter) {
        List<Span> out = new ArrayList<>();
        for (Span sentence : RecursiveSplitter.sentences(text, new Span(0, text.length()))) {
            if (text.size(sentence) > splitter.maxWords()) {
                out.addAll(splitter.split(text, sentence, RecursiveSplitter.Level.WORD));
            } else {
                out.add(sentence);
            }
        }
        return out;
    }

    /** Character offsets of the ends of {@code units}. */
    static int[] ends(List<Span> units) {
        int[] out = new int[units.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = units.get(i).end();
        }
        return out;
    }

    /**
     * Meta-Chunking's dynamic combination (§2.1, last paragraph): adjacent groups are merged greedily while the
     * merged span has at most {@code targetWords} words, i.e. c1..c3 is a chunk when len(c1..c3) ≤ L and
     * len(c1..c4) > L. A group alone above the target stays alone. {@code cuts} are the indexes of the last unit of
     * each group (ascending, the last one = units.size() - 1); returns the surviving cuts. {@code targetWords} ≤ 0
     * disables merging.
     */
    static List<Integer> merge(TextIndex text, List<Span> units, List<Integer> cuts, int targetWords) {
        if (targetWords <= 0 || cuts.size() <= 1) {
            return cuts;
        }
        List<Integer> out = new ArrayList<>();
        int groupStart = 0; // first unit of the chunk being merged
        int previousCut = -1;
        for (int cut : cuts) {
            if (previousCut >= 0 && text.size(units.get(groupStart).start(), units.get(cut).end()) > targetWords) {
                out.add(previousCut);
                groupStart = previousCut + 1;
            }
            previousCut = cut;
        }
        out.add(previousCut);
        return out;
    }
}
