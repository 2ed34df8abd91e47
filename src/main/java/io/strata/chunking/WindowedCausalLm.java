package io.strata.chunking;

import java.util.Arrays;
import java.util.List;

/**
 * A causal LM whose context is known only as a number of tokens, without its tokenizer (a remote model through
 * ml-commons): {@link #logProbs} of a long text slides a window over it, as the embedded model does with its own
 * tokenizer (Meta-Chunking §3.3: long texts are scored with a window, each token keeping as much preceding text as the
 * window allows).
 *
 * <p>Windows are cut in characters. The first holds at most {@code contextTokens − 1} characters (one generated token
 * must fit too), which cannot exceed the context whenever no character takes more than one token — true of the
 * byte-level BPE vocabularies of current LLMs for text in Latin script. Each answer tells how many characters its
 * tokens took, and the next window is {@value #SAFETY} of what that ratio allows. A window keeps half its length as
 * context before the characters it scores, so every token but the text's first sees at least that much of what
 * precedes it. Window edges fall on whitespace where there is any, so no token is cut by one; a stretch without
 * whitespace longer than a window is cut anywhere, its cut token scored again whole by the next window, which then
 * has no context (characters with no whitespace near them, e.g. long runs of Chinese text, lose context at each cut).
 *
 * <p>Only {@link #logProbs} is windowed: the other calls score bounded texts (a θ-word window of the logits-guided
 * strategy, a margin-sampling question) and pass through.
 */
public final class WindowedCausalLm implements CausalLm {
    /** The share of a measured window the next one uses: margin for text denser in tokens than the last window. */
    static final double SAFETY = 0.8;

    private final CausalLm lm;
    private final int contextTokens;

    public WindowedCausalLm(CausalLm lm, int contextTokens) {
        if (contextTokens < 4) {
            throw new IllegalArgumentException("a context of at least 4 tokens is needed, got " + contextTokens);
        }
        this.lm = lm;
        this.contextTokens = contextTokens;
    }

    public int contextTokens() {
        return contextTokens;
    }

    @Override
    public String name() {
        return lm.name();
    }

    @Override
    public TokenLogProbs logProbs(String text) {
        int budget = contextTokens - 1;
        if (text.length() <= budget) {
            return lm.logProbs(text);
        }
        int n = text.length();
        int[] starts = new int[64];
        int[] ends = new int[64];
        double[] values = new double[64];
        int size = 0;
        double charsPerToken = 1; // until an answer says otherwise
        int scored = 0; // tokens starting before this were taken from earlier windows
        while (scored < n) {
            int window = Math.max(2, (int) (budget * charsPerToken * (scored == 0 ? 1 : SAFETY)));
            int from = scored == 0 ? 0 : atWhitespace(text, Math.max(0, scored - window / 2), scored);
            int end = Math.min(n, from + window);
            boolean cutInWord = false;
            if (end < n) {
                int atSpace = lastWhitespace(text, scored + 1, end);
                cutInWord = atSpace < 0;
                end = cutInWord ? end : atSpace;
            }
            TokenLogProbs lp = lm.logProbs(text.substring(from, end));
            int taken = lp.size();
            if (cutInWord && taken > 1 && from + lp.tokenStarts()[taken - 1] > scored) {
                taken--; // the window cut it: the next window scores it whole
            }
            for (int t = 0; t < taken; t++) {
                int start = from + lp.tokenStarts()[t];
                if (start < scored) {
                    continue; // context: scored by an earlier window with more before it
                }
                if (size == values.length) {
                    starts = Arrays.copyOf(starts, size * 2);
                    ends = Arrays.copyOf(ends, size * 2);
                    values = Arrays.copyOf(values, size * 2);
                }
                starts[size] = start;
                ends[size] = from + lp.tokenEnds()[t];
                values[size++] = lp.logProbs()[t];
            }
            if (lp.size() > 0) {
                charsPerToken = Math.max(1, (double) (end - from) / lp.size());
            }
            scored = taken < lp.size() ? from + lp.tokenStarts()[taken] : end;
        }
        return new TokenLogProbs(Arrays.copyOf(starts, size), Arrays.copyOf(ends, size), Arrays.copyOf(values, size));
    }

    /**
     * A window's context start: the first whitespace at or after {@code at} and before {@code limit}; without one, no
     * context ({@code limit}), since a cut inside a word would tokenize it differently from the text and the window's
     * first scored token could straddle {@code limit}.
     */
    private static int atWhitespace(String text, int at, int limit) {
        for (int i = at; i < limit; i++) {
            if (TextIndex.isWhitespace(text.charAt(i))) {
                return i;
            }
        }
        return limit;
    }

    /**
     * A window's end: the start of the last whitespace run in ({@code min}, {@code end}], or -1. The next window then
     * starts with the whole run, so a token that carries the whitespace before a word (as byte-level BPE tokens do) is
     * not cut.
     */
    private static int lastWhitespace(String text, int min, int end) {
        for (int i = end; i > min; i--) {
            if (TextIndex.isWhitespace(text.charAt(i)) && !TextIndex.isWhitespace(text.charAt(i - 1))) {
                return i;
            }
        }
        return -1;
    }

    @Override
    public double[] eosProbabilities(String prompt, String text, int[] positions) {
        return lm.eosProbabilities(prompt, text, positions);
    }

    @Override
    public double[] continuationLogProbs(String prompt, List<String> candidates) {
        return lm.continuationLogProbs(prompt, candidates);
    }
}
