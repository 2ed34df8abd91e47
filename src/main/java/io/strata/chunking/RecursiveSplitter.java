package io.strata.chunking;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Recursive chunking (Kamradt's recursive character splitting, the baseline and the parent/child splitter
 * of the LGMGC paper §3.2) with θ counted in words and a sentence level: a span above θ words is cut at
 * the coarsest separator that occurs in it — paragraph (blank line), line, sentence, word — and the
 * pieces are merged greedily back into chunks of at most θ words. A piece is cut at a finer separator only
 * when it alone exceeds θ, so a sentence is split (at words) only when the sentence alone exceeds θ.
 *
 * <p>Differences from the LangChain splitter the paper used: sizes are words, not characters (the paper
 * states θ in words); a sentence level sits between line and word (the paper requires that children never
 * split a sentence); there is no overlap (the paper uses none). Separators are never part of a chunk:
 * every chunk is trimmed, so chunks of one level cover the text up to whitespace.
 *
 * <p>On a {@link TextIndex} that counts the model's tokens ({@code max_tokens}) θ is in tokens: sizes are
 * {@link TextIndex#size}, and the word level makes windows of whole words up to θ tokens; only a word alone above θ
 * tokens (a long number, a URL, a run of CJK characters) is cut between its tokens.
 */
public final class RecursiveSplitter {
    /** Separator levels, coarsest first. */
    public enum Level { PARAGRAPH, LINE, SENTENCE, WORD }

    private final int maxWords;

    public RecursiveSplitter(int maxWords) {
        if (maxWords < 1) {
            throw new IllegalArgumentException("max words must be >= 1, got " + maxWords);
        }
        this.maxWords = maxWords;
    }

    public int maxWords() {
        return maxWords;
    }

    /** Chunks of at most θ words covering {@code span}, cut from the paragraph level down. */
    public List<Span> split(TextIndex text, Span span) {
        return split(text, span, Level.PARAGRAPH);
    }

    /** Chunks of at most θ words covering {@code span}, starting at separator level {@code from}. */
    public List<Span> split(TextIndex text, Span span, Level from) {
        List<Span> out = new ArrayList<>();
        splitInto(text, text.trim(span.start(), span.end()), from, out);
        return out;
    }

    private void splitInto(TextIndex text, Span span, Level level, List<Span> out) {
        if (span.length() == 0) {
            return;
        }
        if (text.size(span) <= maxWords) {
            out.add(span);
            return;
        }
        if (level == Level.WORD) {
            wordWindows(text, span, out);
            return;
        }
        List<Span> pieces = pieces(text, span, level);
        Level finer = Level.values()[level.ordinal() + 1];
        if (pieces.size() <= 1) {
            splitInto(text, span, finer, out);
            return;
        }
        Span current = null;
        for (Span piece : pieces) {
            if (text.size(piece) > maxWords) {
                if (current != null) {
                    out.add(current);
                    current = null;
                }
                splitInto(text, piece, finer, out);
            } else if (current == null) {
                current = piece;
            } else if (text.size(current.start(), piece.end()) <= maxWords) {
                current = new Span(current.start(), piece.end());
            } else {
                out.add(current);
                current = piece;
            }
        }
        if (current != null) {
            out.add(current);
        }
    }

    /** Consecutive windows of θ words (the last one shorter); of whole words up to θ tokens when θ counts tokens. */
    private void wordWindows(TextIndex text, Span span, List<Span> out) {
        if (text.countsTokens()) {
            tokenWindows(text, span, out);
            return;
        }
        int[] starts = text.wordStartsIn(span);
        for (int i = 0; i < starts.length; i += maxWords) {
            int end = i + maxWords < starts.length ? starts[i + maxWords] : span.end();
            out.add(text.trim(i == 0 ? span.start() : starts[i], end)); // what precedes the first word stays in
        }
    }

    private void tokenWindows(TextIndex text, Span span, List<Span> out) {
        int[] words = text.wordStartsIn(span);
        int[] tokens = text.tokenStartsIn(span);
        int from = span.start();
        int w = 0;
        int t = 0;
        while (from < span.end()) {
            if (text.size(from, span.end()) <= maxWords) {
                addTrimmed(text, from, span.end(), out);
                return;
            }
            while (w < words.length && words[w] <= from) {
                w++;
            }
            int cut = -1;
            while (w < words.length && text.size(from, words[w]) <= maxWords) {
                cut = words[w++];
            }
            if (cut < 0) { // the word at from alone is above θ tokens: cut it after θ of its tokens
                while (t < tokens.length && tokens[t] < from) {
                    t++;
                }
                cut = tokens[Math.min(t + maxWords, tokens.length - 1)];
                if (cut <= from) { // tokens sharing one start: take the next later one
                    int k = t + maxWords;
                    while (k < tokens.length && tokens[k] <= from) {
                        k++;
                    }
                    cut = k < tokens.length ? tokens[k] : span.end();
                }
            }
            addTrimmed(text, from, cut, out);
            from = cut;
        }
    }

    static List<Span> pieces(TextIndex text, Span span, Level level) {
        return switch (level) {
            case PARAGRAPH -> paragraphs(text, span);
            case LINE -> lines(text, span);
            case SENTENCE -> sentences(text, span);
            case WORD -> throw new IllegalStateException("words are windowed, not merged");
        };
    }

    /** Pieces separated by whitespace runs holding at least two line breaks (blank lines). */
    static List<Span> paragraphs(TextIndex index, Span span) {
        return index.paragraphs(span);
    }

    static List<Span> lines(TextIndex index, Span span) {
        String text = index.text();
        List<Span> out = new ArrayList<>();
        int pieceStart = span.start();
        for (int i = span.start(); i < span.end(); i++) {
            char c = text.charAt(i);
            if (c == '\n' || c == '\r' || c == '\u2028' || c == '\u2029') {
                addTrimmed(index, pieceStart, i, out);
                pieceStart = i + 1;
            }
        }
        addTrimmed(index, pieceStart, span.end(), out);
        return out;
    }

    static List<Span> sentences(TextIndex index, Span span) {
        List<Span> out = new ArrayList<>();
        int pieceStart = span.start();
        for (int b : index.sentenceBoundariesInside(span)) {
            addTrimmed(index, pieceStart, b, out);
            pieceStart = b;
        }
        addTrimmed(index, pieceStart, span.end(), out);
        return out;
    }

    private static void addTrimmed(TextIndex index, int start, int end, List<Span> out) {
        Span s = index.trim(start, end);
        if (s.length() > 0) {
            out.add(s);
        }
    }
}
