package io.strata.chunking;

import com.ibm.icu.text.BreakIterator;
import com.ibm.icu.text.UnicodeSet;
import com.ibm.icu.util.ULocale;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A source text with the indexes every strategy needs, computed once per document: word starts (for
 * O(log n) word counts of any span) and, lazily, sentence boundaries. Not thread-safe; one per document.
 *
 * <p>A word is a maximal run of non-whitespace characters, the unit of θ in the LGMGC paper ("chunks of θ words"),
 * except in scripts written without spaces (Chinese, Japanese, Thai, Lao, Khmer, Burmese): a run holding such characters
 * counts the words ICU's word segmentation finds in it ({@link BreakIterator#getWordInstance}, dictionary-based). Cuts
 * at word starts therefore never split a word, in any script.
 * With {@link ModelTokens} (a strategy's {@code max_tokens}) θ counts the embedding model's tokens instead:
 * {@link #size} then counts the tokens that start inside a span (the whole text is tokenized once), and {@link #words}
 * still counts words.
 */
public final class TextIndex {
    private final String text;
    private final int[] wordStarts;
    /** The end of each word, parallel to {@link #wordStarts}. */
    private final int[] wordEnds;
    private final int wordCount;
    /** Whitespace runs holding >= 2 line breaks (blank lines): start, end pairs, in order. */
    private final int[] paragraphBreaks;
    private final int paragraphBreakCount;
    private final SentenceSegmenter segmenter;
    private int[] sentenceBounds;
    /** Sentence boundaries of single lines segmented on demand, by line start (offsets within the line). */
    private final Map<Integer, int[]> lineSentences = new HashMap<>();
    /** Offsets of the paragraph separators (line breaks), found on first use. */
    private int[] separators;
    /** Start offsets of the model's tokens when θ counts tokens, else null. */
    private final int[] tokenStarts;

    public TextIndex(String text, SentenceSegmenter segmenter) {
        this(text, segmenter, (ModelTokens) null);
    }

    /**
     * Word starts and paragraph breaks of a text, as this index finds them: for a reader that writes the text char by char
     * anyway ({@code format: html}) and finds them as it writes, instead of a second pass over the text here.
     *
     * @param starts word starts, {@code [0, count)} used
     * @param breaks blank-line whitespace runs as start, end pairs, {@code [0, 2 * breakCount)} used
     */
    public record Words(int[] starts, int count, int[] breaks, int breakCount) {
        /** Equal when the used parts are (for tests: a reader's against this index's own pass). */
        @Override
        public boolean equals(Object o) {
            return o instanceof Words w && Arrays.equals(starts, 0, count, w.starts, 0, w.count)
                && Arrays.equals(breaks, 0, 2 * breakCount, w.breaks, 0, 2 * w.breakCount);
        }

        @Override
        public int hashCode() {
            return 31 * Arrays.hashCode(Arrays.copyOf(starts, count)) + Arrays.hashCode(Arrays.copyOf(breaks, 2 * breakCount));
        }

        @Override
        public String toString() {
            return "Words" + Arrays.toString(Arrays.copyOf(starts, count)) + " breaks " + Arrays.toString(Arrays.copyOf(breaks, 2 * breakCount));
        }
    }

    /** An index over {@code text} whose word starts and paragraph breaks were found by its reader ({@link Words}). */
    public TextIndex(String text, SentenceSegmenter segmenter, Words words) {
        this.text = text;
        this.tokenStarts = null;
        this.segmenter = segmenter;
        // the reader's paragraph breaks; words are ICU's, as for every text
        int[][] icu = icuWords(text);
        this.wordStarts = icu[0];
        this.wordEnds = icu[1];
        this.wordCount = icu[2][0];
        this.paragraphBreaks = words.breaks();
        this.paragraphBreakCount = words.breakCount();
    }

    private static final BreakIterator WORDS = BreakIterator.getWordInstance(ULocale.ROOT);

    /**
     * Starts and ends of the words of {@code text}, and their count: a run of non-whitespace is one word, unless it holds
     * a character of a script written without spaces between words (Han, Hiragana, Katakana, Thai, Lao, Khmer, Burmese):
     * such a run counts ICU's words inside it (word status only; dictionary-based for those scripts). Punctuation between
     * two words goes with the word it belongs to: opening brackets and quotes ({@code 「『（“}) with the word after them,
     * everything else ({@code 。、」）}) with the word before, so words tile the run and a cut at a word start falls where a
     * sentence or clause ends, never between a word and its full stop or opening quote.
     */
    private static int[][] icuWords(String text) {
        int[] starts = new int[Math.max(16, text.length() / 5)];
        int[] ends = new int[starts.length];
        int n = 0;
        BreakIterator it = null;
        int i = 0;
        while (i < text.length()) {
            if (isWhitespace(text.charAt(i))) {
                i++;
                continue;
            }
            int runStart = i;
            boolean spaceless = false;
            while (i < text.length() && !isWhitespace(text.charAt(i))) {
                int cp = text.codePointAt(i);
                spaceless |= SPACELESS.contains(cp);
                i += Character.charCount(cp);
            }
            if (n + (i - runStart) + 1 > starts.length) {
                starts = Arrays.copyOf(starts, Math.max(starts.length * 2, n + (i - runStart) + 1));
                ends = Arrays.copyOf(ends, starts.length);
            }
            if (!spaceless) {
                starts[n] = runStart;
                ends[n++] = i;
                continue;
            }
            if (it == null) {
                it = (BreakIterator) WORDS.clone();
            }
            it.setText(text.substring(runStart, i));
            int before = n;
            int opening = -1; // where opening punctuation waiting for its word starts
            int prev = it.first();
            for (int cur = it.next(); cur != BreakIterator.DONE; prev = cur, cur = it.next()) {
                if (it.getRuleStatus() >= BreakIterator.WORD_NONE_LIMIT) {
                    // the first word takes in what precedes it in the run
                    starts[n] = n == before ? runStart : opening >= 0 ? opening : runStart + prev;
                    ends[n++] = runStart + cur;
                    opening = -1;
                } else if (opening < 0 && isOpening(text, runStart + prev, runStart + cur)) {
                    opening = runStart + prev;
                } else if (opening < 0 && n > before) {
                    ends[n - 1] = runStart + cur; // closing punctuation stays with the word before it
                }
            }
            if (n == before) { // punctuation only: one word, as any run
                starts[n] = runStart;
                ends[n++] = i;
            } else {
                ends[n - 1] = i; // what follows the run's last word is its own
            }
        }
        return new int[][] { starts, ends, { n } };
    }

    /** Whether {@code text[from, to)} starts with opening punctuation (Unicode Ps or Pi: brackets, opening quotes). */
    private static boolean isOpening(String text, int from, int to) {
        if (from >= to) {
            return false;
        }
        int type = Character.getType(text.codePointAt(from));
        return type == Character.START_PUNCTUATION || type == Character.INITIAL_QUOTE_PUNCTUATION;
    }

    /** Scripts written without spaces between words: their runs are segmented by ICU's dictionaries. */
    private static final UnicodeSet SPACELESS = new UnicodeSet("[[:Han:][:Hiragana:][:Katakana:][:Thai:][:Lao:][:Khmer:][:Myanmar:]]")
        .freeze();

    /** The word starts and paragraph breaks this index holds. */
    public Words wordIndex() {
        return new Words(wordStarts, wordCount, paragraphBreaks, paragraphBreakCount);
    }

    /** @param tokens the model whose tokens θ counts, or null for words */
    public TextIndex(String text, SentenceSegmenter segmenter, ModelTokens tokens) {
        this.text = text;
        this.tokenStarts = tokens == null ? null : tokens.starts(text);
        this.segmenter = segmenter;
        // ICU's words, and one pass for paragraph breaks: every level of every strategy reuses them
        int[][] icu = icuWords(text);
        int[] breaks = new int[16];
        int b = 0;
        int runStart = -1;
        int runNewlines = 0;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (isWhitespace(c)) {
                if (runStart < 0) {
                    runStart = i;
                    runNewlines = 0;
                }
                if (c == '\n') {
                    runNewlines++;
                }
                continue;
            }
            if (runNewlines >= 2 && runStart > 0) {
                if (b + 2 > breaks.length) {
                    breaks = Arrays.copyOf(breaks, breaks.length * 2);
                }
                breaks[b++] = runStart;
                breaks[b++] = i;
            }
            runStart = -1;
            runNewlines = 0;
        }
        this.wordStarts = icu[0];
        this.wordEnds = icu[1];
        this.wordCount = icu[2][0];
        this.paragraphBreaks = breaks;
        this.paragraphBreakCount = b / 2;
    }

    /** Paragraph pieces of {@code span} (pieces between blank lines), trimmed, in order. */
    public List<Span> paragraphs(Span span) {
        Span trimmed = trim(span.start(), span.end());
        List<Span> out = new ArrayList<>();
        // first break whose run ends after the span start
        int lo = 0;
        int hi = paragraphBreakCount;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (paragraphBreaks[2 * mid + 1] <= trimmed.start()) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        int pieceStart = trimmed.start();
        for (int k = lo; k < paragraphBreakCount && paragraphBreaks[2 * k] < trimmed.end(); k++) {
            int runStart = paragraphBreaks[2 * k];
            if (runStart > pieceStart) {
                out.add(new Span(pieceStart, runStart));
            }
            pieceStart = Math.max(pieceStart, paragraphBreaks[2 * k + 1]);
        }
        if (trimmed.end() > pieceStart) {
            out.add(new Span(pieceStart, trimmed.end()));
        }
        return out;
    }

    public String text() {
        return text;
    }

    public int length() {
        return text.length();
    }

    public int totalWords() {
        return wordCount;
    }

    /** Words (or parts of words) inside {@code [start, end)}. */
    public int words(int start, int end) {
        if (end <= start) {
            return 0;
        }
        int first = lowerBound(start);
        int n = lowerBound(end) - first;
        // a word that began before start and continues into the span counts too
        if (first > 0 && wordEnds[first - 1] > start) {
            n++;
        }
        return n;
    }

    public int words(Span span) {
        return words(span.start(), span.end());
    }

    /** Whether θ counts the model's tokens ({@code max_tokens}) rather than words. */
    public boolean countsTokens() {
        return tokenStarts != null;
    }

    /**
     * The size of {@code [start, end)} in θ's unit: {@link #words} or, when {@link #countsTokens()}, the model's tokens
     * that start inside it (exact for spans cut at whitespace with a tokenizer that splits at whitespace first, as
     * WordPiece does; {@link TokenLimit} checks every chunk exactly anyway).
     */
    public int size(int start, int end) {
        if (tokenStarts == null) {
            return words(start, end);
        }
        return end <= start ? 0 : lowerBound(tokenStarts, tokenStarts.length, end) - lowerBound(tokenStarts, tokenStarts.length, start);
    }

    public int size(Span span) {
        return size(span.start(), span.end());
    }

    /** Start offsets of the model's tokens inside {@code span}; only when {@link #countsTokens()}. */
    public int[] tokenStartsIn(Span span) {
        if (tokenStarts == null) {
            throw new IllegalStateException("this index counts words");
        }
        int from = lowerBound(tokenStarts, tokenStarts.length, span.start());
        int to = lowerBound(tokenStarts, tokenStarts.length, span.end());
        return Arrays.copyOfRange(tokenStarts, from, to);
    }

    /** Start offsets of the words in {@code span}, in order (a partial first word included). */
    public int[] wordStartsIn(Span span) {
        int from = lowerBound(span.start());
        int to = lowerBound(span.end());
        boolean partialFirst = span.length() > 0 && from > 0 && wordEnds[from - 1] > span.start();
        int[] out = new int[to - from + (partialFirst ? 1 : 0)];
        int k = 0;
        if (partialFirst) {
            out[k++] = span.start();
        }
        System.arraycopy(wordStarts, from, out, k, to - from);
        return out;
    }

    /**
     * Sentence boundaries of the whole text (sorted offsets, starting with 0 and ending with the length),
     * segmented once on first use. Sentence segmentation breaks after line separators too, so the
     * boundaries inside any paragraph equal those of segmenting that paragraph alone.
     */
    public int[] sentenceBoundaries() {
        if (sentenceBounds == null) {
            sentenceBounds = segmenter.boundaries(text);
        }
        return sentenceBounds;
    }

    /**
     * The sentence boundaries strictly inside {@code span}, sorted: those of {@link #sentenceBoundaries()} without
     * segmenting the whole text. Only the lines {@code span} touches are segmented, each once per index: ICU breaks after
     * every paragraph separator (UAX #29 rule SB4) and none of its rules looks across one, nor do our suppressions, so a
     * line's boundaries are those the whole text has inside it. Recursive splitting reaches sentences only for lines above
     * θ/4, which on documentation pages is a few percent of the text (7 % of the HTML corpus's extracted text).
     */
    public int[] sentenceBoundariesInside(Span span) {
        if (sentenceBounds != null) {
            int from = lowerBound(sentenceBounds, sentenceBounds.length, span.start() + 1);
            int to = lowerBound(sentenceBounds, sentenceBounds.length, span.end());
            return Arrays.copyOfRange(sentenceBounds, from, Math.max(from, to));
        }
        if (separators == null) {
            separators = separators(text);
        }
        int[] out = new int[16];
        int n = 0;
        // the line holding span.start: after the last separator before it
        int line = lowerBound(separators, separators.length, span.start());
        int lineStart = line == 0 ? 0 : separators[line - 1] + 1;
        for (; lineStart < span.end(); line++) {
            int lineEnd = line < separators.length ? separators[line] : text.length();
            int offset = lineStart;
            int[] inLine = lineSentences.computeIfAbsent(lineStart, k -> segmenter.boundaries(text.substring(offset, lineEnd)));
            // the line's own 0 and length are not boundaries of the whole text (the one after its separator is)
            int from = Math.max(1, lowerBound(inLine, inLine.length, span.start() - lineStart + 1));
            for (int i = from; i < inLine.length - 1 && lineStart + inLine[i] < span.end(); i++) {
                if (n == out.length) {
                    out = Arrays.copyOf(out, 2 * n);
                }
                out[n++] = lineStart + inLine[i];
            }
            if (lineEnd == text.length()) {
                break;
            }
            // a break after every separator, none between CR and LF (SB3): CR LF ends one line with an empty one after CR
            int next = lineEnd + 1;
            boolean crlf = text.charAt(lineEnd) == '\r' && next < text.length() && text.charAt(next) == '\n';
            if (!crlf && next > span.start() && next < span.end()) {
                if (n == out.length) {
                    out = Arrays.copyOf(out, 2 * n);
                }
                out[n++] = next;
            }
            lineStart = next;
        }
        return Arrays.copyOf(out, n);
    }

    /** Offsets of the paragraph separators of {@code text}, in order. */
    private static int[] separators(String text) {
        int[] out = new int[64];
        int n = 0;
        for (int i = 0; i < text.length(); i++) {
            if (isParagraphSeparator(text.charAt(i))) {
                if (n == out.length) {
                    out = Arrays.copyOf(out, 2 * n);
                }
                out[n++] = i;
            }
        }
        return Arrays.copyOf(out, n);
    }

    /** ICU's sentence-breaking paragraph separators (UAX #29 Sep, CR, LF). */
    private static boolean isParagraphSeparator(char c) {
        return c == '\n' || c == '\r' || c == '\u0085' || c == '\u2028' || c == '\u2029';
    }

    /** The span shrunk to exclude leading and trailing whitespace (possibly empty). */
    public Span trim(int start, int end) {
        while (start < end && isWhitespace(text.charAt(start))) {
            start++;
        }
        while (end > start && isWhitespace(text.charAt(end - 1))) {
            end--;
        }
        return new Span(start, end);
    }

    /** Whitespace as this index counts it (words are the runs between): ASCII whitespace and Unicode spaces, no-break ones included. */
    public static boolean isWhitespace(char c) {
        if (c <= ' ') { // ASCII fast path: this runs once per character of every document
            return c == ' ' || (c >= '\t' && c <= '\r') || (c >= '\u001C' && c <= '\u001F');
        }
        // Character.isWhitespace excludes the no-break spaces; treat them as spaces too
        return c >= '\u0080' && (Character.isWhitespace(c) || c == '\u00A0' || c == '\u2007' || c == '\u202F');
    }

    /** Index of the first word start >= offset. */
    private int lowerBound(int offset) {
        return lowerBound(wordStarts, wordCount, offset);
    }

    /** Index of the first of {@code starts[0, n)} >= offset. */
    private static int lowerBound(int[] starts, int n, int offset) {
        int lo = 0;
        int hi = n;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (starts[mid] < offset) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }
}
