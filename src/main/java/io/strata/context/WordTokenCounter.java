package io.strata.context;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.stream.IntStream;

/**
 * Counts tokens word by word, each distinct word tokenized once per node, for a tokenizer under which a text's tokens are
 * the sum of its words' tokens: one that splits at whitespace before anything else and whose normalizer works character
 * by character (BERT's normalizer and pre-tokenizer, as every bundled model's). Exact for such a tokenizer, as counting
 * the whole text is; not for another one (byte-level BPE folds a word's leading space into its first token), which must
 * not be given to this class.
 *
 * <p>Why: through DJL's bindings the native tokenizer costs about 1 µs per character (e5-small-v2's, measured on this
 * project's machine), and tokenizing the hits' chunks was most of what {@code strata_context} added to a search
 * ({@code bin/strata-bench query}); the words of one context mostly occur in earlier ones. The words not yet known are
 * tokenized together in one call. The memo is bounded: when it holds {@code capacity} words it is emptied and starts over;
 * words above {@value #LONGEST_KEPT} characters are not kept.
 *
 * <p>A word here is a maximal run of characters that are not Java whitespace, the ASCII separators U+001C–U+001F
 * excepted (BERT's normalizer deletes those, so they join what is around them): every such split is one the tokenizer
 * makes too. {@link #starts} reports all of a word's tokens at the word's first character — exactly what a span cut at
 * whitespace needs ({@link ContextPacker}). Thread-safe.
 */
public final class WordTokenCounter implements TokenCounter {
    private final Function<String, int[]> tokenStarts;
    private final int capacity;
    private final Map<String, Integer> words = new ConcurrentHashMap<>();
    /** Longer words (URLs, encoded blobs) are tokenized every time, so the memo's size is bounded by its word count. */
    static final int LONGEST_KEPT = 64;

    /**
     * @param tokenStarts the tokenizer: start offsets of the tokens of a text, ascending (special tokens left out)
     * @param capacity    how many distinct words the memo holds before it is emptied
     */
    public WordTokenCounter(Function<String, int[]> tokenStarts, int capacity) {
        this.tokenStarts = tokenStarts;
        this.capacity = capacity;
    }

    @Override
    public int count(String text) {
        return IntStream.of(perWord(text, wordSpans(text))).sum();
    }

    @Override
    public int[] starts(String text) {
        int[] spans = wordSpans(text);
        int[] perWord = perWord(text, spans);
        int[] out = new int[IntStream.of(perWord).sum()];
        int k = 0;
        for (int w = 0; w < perWord.length; w++) {
            Arrays.fill(out, k, k + perWord[w], spans[2 * w]);
            k += perWord[w];
        }
        return out;
    }

    /** The token count of each word of {@code text} ({@code spans}: start, end pairs), tokenizing the unknown ones at once. */
    private int[] perWord(String text, int[] spans) {
        int[] out = new int[spans.length / 2];
        Map<String, List<Integer>> missing = null;
        for (int w = 0; w < out.length; w++) {
            String word = text.substring(spans[2 * w], spans[2 * w + 1]);
            Integer known = words.get(word);
            if (known != null) {
                out[w] = known;
            } else {
                if (missing == null) {
                    missing = new LinkedHashMap<>();
                }
                missing.computeIfAbsent(word, k -> new ArrayList<>()).add(w);
            }
        }
        if (missing != null) {
            List<String> unknown = new ArrayList<>(missing.keySet());
            int[] counts = tokenize(unknown);
            if (words.size() + unknown.size() > capacity) {
                words.clear();
            }
            for (int u = 0; u < unknown.size(); u++) {
                if (unknown.get(u).length() <= LONGEST_KEPT) {
                    words.put(unknown.get(u), counts[u]);
                }
                for (int w : missing.get(unknown.get(u))) {
                    out[w] = counts[u];
                }
            }
        }
        return out;
    }

    /** Token counts of {@code words}, tokenized in one call: joined by spaces, each token belongs to the word it starts in. */
    private int[] tokenize(List<String> unknown) {
        int[] offsets = new int[unknown.size()];
        StringBuilder joined = new StringBuilder();
        for (int u = 0; u < unknown.size(); u++) {
            if (u > 0) {
                joined.append(' ');
            }
            offsets[u] = joined.length();
            joined.append(unknown.get(u));
        }
        int[] counts = new int[unknown.size()];
        int u = 0;
        for (int start : tokenStarts.apply(joined.toString())) {
            while (u + 1 < offsets.length && offsets[u + 1] <= start) {
                u++;
            }
            counts[u]++;
        }
        return counts;
    }

    /** Start, end pairs of the words of {@code text}, in order. */
    static int[] wordSpans(String text) {
        int[] out = new int[16];
        int n = 0;
        int start = -1;
        for (int i = 0; i <= text.length(); i++) {
            boolean space = i == text.length() || isSeparator(text.charAt(i));
            if (!space && start < 0) {
                start = i;
            } else if (space && start >= 0) {
                if (n + 2 > out.length) {
                    out = Arrays.copyOf(out, 2 * out.length);
                }
                out[n++] = start;
                out[n++] = i;
                start = -1;
            }
        }
        return Arrays.copyOf(out, n);
    }

    private static boolean isSeparator(char c) {
        return Character.isWhitespace(c) && (c < '\u001C' || c > '\u001F');
    }
}
