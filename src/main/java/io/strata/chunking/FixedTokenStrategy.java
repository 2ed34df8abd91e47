package io.strata.chunking;

import com.ibm.icu.text.BreakIterator;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * {@code fixed_token}: the incumbent baseline, neural-search's {@code text_chunking} {@code fixed_token_length}
 * algorithm — windows of {@code token_limit} tokens (default 384), each starting {@code token_limit - ⌊token_limit ·
 * overlap_rate⌋} tokens after the previous one ({@code overlap_rate} in [0, 0.5], default 0).
 *
 * <p>Tokens are the word segments of UAX #29 (ICU4J's word {@link BreakIterator}, the rules Lucene's
 * {@code StandardTokenizer} — neural-search's default {@code standard} tokenizer — implements): segments with
 * letters, digits or ideographs; spaces and punctuation are not tokens. As in neural-search, a window runs from its
 * first token to just before the next window's first token, so punctuation between windows stays with the earlier
 * one; the first window starts at the text start and the last one ends at the text end. Spans are then trimmed.
 *
 * <p>Where this differs from the rest of the core, deliberately (it reproduces neural-search):
 * <ul>
 *   <li>θ ({@link #maxWords()}) is {@code token_limit}: parents are bounded in tokens, not in whitespace words, so a
 *   window can hold slightly more whitespace words than θ when the text has punctuation-only words (e.g. a lone
 *   dash). Children are cut at θ·g whitespace words as for every strategy.</li>
 *   <li>With {@code overlap_rate > 0} consecutive parents overlap (each parent is still a trimmed span of the
 *   text). Downstream this is harmless — each parent is chunked, stored and scored on its own — but the same
 *   sentence can then be retrieved in two parents.</li>
 *   <li>With {@code max_tokens} instead of {@code token_limit} the windows count the embedding model's tokens (a
 *   window may then end inside a word that the model splits into several tokens).</li>
 *   <li>Unlike neural-search there is no {@code max_token_count} (10,000 there: a longer text fails) and no
 *   {@code max_chunk_limit}; the processor's {@code max_chars} bounds the text instead.</li>
 * </ul>
 */
public final class FixedTokenStrategy implements ChunkingStrategy {
    public static final String TYPE = "fixed_token";
    public static final int DEFAULT_TOKEN_LIMIT = 384;
    public static final double MAX_OVERLAP_RATE = 0.5;

    private final int tokenLimit;
    private final double overlapRate;
    private final int step;

    public FixedTokenStrategy(int tokenLimit, double overlapRate) {
        if (tokenLimit < 1) {
            throw new IllegalArgumentException("token_limit must be >= 1, got " + tokenLimit);
        }
        if (!(overlapRate >= 0 && overlapRate <= MAX_OVERLAP_RATE)) {
            throw new IllegalArgumentException(String.format(Locale.ROOT, "overlap_rate must be in [0, %s], got %s",
                MAX_OVERLAP_RATE, overlapRate));
        }
        this.tokenLimit = tokenLimit;
        this.overlapRate = overlapRate;
        // as neural-search: overlap tokens = floor(limit * rate); rate <= 0.5 keeps the step >= 1
        this.step = tokenLimit - (int) Math.floor(tokenLimit * overlapRate);
    }

    /** Reads {@code token_limit} (UAX #29 tokens) or {@code max_tokens} (the embedding model's tokens), {@code overlap_rate}. */
    static ChunkingStrategy parse(ChunkingConfig.Options o) {
        return new FixedTokenStrategy(o.theta("token_limit", DEFAULT_TOKEN_LIMIT), o.doubleValue("overlap_rate", 0, 0, MAX_OVERLAP_RATE));
    }

    @Override
    public String type() {
        return TYPE;
    }

    /** θ = {@code token_limit} (see the class comment: tokens, not whitespace words). */
    @Override
    public int maxWords() {
        return tokenLimit;
    }

    public int tokenLimit() {
        return tokenLimit;
    }

    public double overlapRate() {
        return overlapRate;
    }

    @Override
    public List<Span> split(TextIndex text) {
        // with max_tokens the windows count the embedding model's tokens (the index holds them), else UAX #29 tokens
        int[] starts = text.countsTokens() ? text.tokenStartsIn(new Span(0, text.length())) : tokenStarts(text.text());
        int n = starts.length;
        List<Span> out = new ArrayList<>();
        for (int first = 0; ; first += step) {
            int from = first == 0 ? 0 : starts[first];
            boolean last = first + tokenLimit >= n;
            int to = last ? text.length() : starts[first + tokenLimit];
            Span span = text.trim(from, to);
            if (span.length() > 0) {
                out.add(span);
            }
            if (last) {
                return out;
            }
        }
    }

    /** Start offsets of the UAX #29 word tokens of {@code text} (segments that are not spaces or punctuation). */
    static int[] tokenStarts(String text) {
        BreakIterator words = BreakIterator.getWordInstance(Locale.ROOT);
        words.setText(text);
        int[] out = new int[Math.max(16, text.length() / 4)];
        int n = 0;
        int start = words.first();
        for (int end = words.next(); end != BreakIterator.DONE; start = end, end = words.next()) {
            if (words.getRuleStatus() == BreakIterator.WORD_NONE) {
                continue;
            }
            if (n == out.length) {
                out = java.util.Arrays.copyOf(out, n * 2);
            }
            out[n++] = start;
        }
        return java.util.Arrays.copyOf(out, n);
    }
}
