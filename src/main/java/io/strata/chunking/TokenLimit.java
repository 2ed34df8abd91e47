package io.strata.chunking;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The embedding model's hard limit, whatever the strategy: a chunk (parent or child, of any level) whose text, as it is
 * embedded (the model's passage prefix and special tokens included), has more tokens than the model takes would be
 * truncated at embedding time, losing its end. Such a chunk is cut in two at the boundary nearest its middle token — a
 * sentence boundary, else a word start, else a token start — and each half is checked again, until every piece fits.
 * Pieces are trimmed spans of the same text, so offsets stay exact; a cut parent's children are the pieces of its children
 * that fall in each new parent (checked in turn). Runs after the strategy and the child splitters, also on structured
 * layouts (a table piece keeps its repeated header). Deterministic. Counts the cuts it made ({@code Result.limitSplits}).
 *
 * <p>Cost: a piece more than twice the limit by its enclosing chunk's tokens (those that start inside it) is cut without
 * being tokenized again, at the middle of those tokens; only pieces within twice the limit are tokenized to be checked.
 * So each character is tokenized a bounded number of times (TokenLimitCostTests), not once per halving: a text of 10^6
 * tokens is O(n) tokenizer work, not O(n log n) calls on ever smaller pieces of it. Exact for tokenizers whose tokens do
 * not cross a word start (WordPiece: the bundled models), which every sentence and word cut is.
 *
 * <p>Not covered: a contextual header ({@code context}) is added to the chunk's text by the writer, after chunking, so the
 * limit here is for the chunk's text alone; the embedder still counts what it truncates.
 */
final class TokenLimit {
    private final ModelTokens tokens;
    private final int limit;

    TokenLimit(ModelTokens tokens) {
        this.tokens = tokens;
        this.limit = tokens.limit();
    }

    /** {@code result} with every chunk fitting, and how many cuts that took in {@code limitSplits}. */
    MultiGranularChunker.Result apply(MultiGranularChunker.Result result) {
        TextIndex index = result.index();
        List<ChunkedParent> out = new ArrayList<>(result.parents().size());
        int[] splits = { 0 };
        boolean changed = false;
        for (ChunkedParent cp : result.parents()) {
            List<Chunk> parents = fit(index, cp.parent(), splits);
            if (parents.size() == 1) {
                List<Chunk> children = new ArrayList<>(cp.children().size());
                boolean childSplit = false;
                for (Chunk c : cp.children()) {
                    List<Chunk> pieces = fit(index, c, splits);
                    childSplit |= pieces.size() > 1;
                    children.addAll(pieces);
                }
                if (childSplit) {
                    changed = true;
                    out.add(new ChunkedParent(cp.parent(), renumber(children)));
                } else {
                    out.add(cp);
                }
                continue;
            }
            changed = true;
            for (Chunk parent : parents) {
                List<Chunk> children = new ArrayList<>();
                for (Chunk c : cp.children()) {
                    int from = Math.max(c.start(), parent.start());
                    int to = Math.min(c.end(), parent.end());
                    if (from >= to) {
                        continue;
                    }
                    Span clipped = index.trim(from, to);
                    if (clipped.length() > 0) {
                        children.addAll(fit(index, piece(index, c, clipped), splits));
                    }
                }
                out.add(new ChunkedParent(parent, renumber(children)));
            }
        }
        if (!changed) {
            return result;
        }
        List<ChunkedParent> numbered = new ArrayList<>(out.size());
        for (int p = 0; p < out.size(); p++) {
            Chunk parent = out.get(p).parent();
            numbered.add(new ChunkedParent(withOrdinal(parent, p), out.get(p).children()));
        }
        return new MultiGranularChunker.Result(numbered, result.evidence(), index, splits[0]);
    }

    /** {@code chunk} if it fits, else its pieces that do, in order. */
    private List<Chunk> fit(TextIndex index, Chunk chunk, int[] splits) {
        List<Chunk> out = new ArrayList<>(1);
        cut(index, chunk, null, out, splits);
        return out;
    }

    /**
     * @param known the absolute starts of the enclosing chunk's tokens inside {@code chunk} (null: none known); when they
     *              put it above twice the limit it is cut at their middle without being tokenized
     */
    private void cut(TextIndex index, Chunk chunk, int[] known, List<Chunk> out, int[] splits) {
        int[] starts;
        if (known != null && known.length > 2 * limit) {
            starts = known;
        } else {
            if (tokens.embedded(chunk.text()) <= limit) {
                out.add(chunk);
                return;
            }
            starts = tokens.starts(chunk.span().of(index.text()));
            for (int i = 0; i < starts.length; i++) {
                starts[i] += chunk.start();
            }
        }
        int at = boundaryAt(index, chunk.span(), starts);
        if (at < 0) { // nothing left to cut at (one token): the embedder truncates it, and counts it
            out.add(chunk);
            return;
        }
        splits[0]++;
        Chunk left = piece(index, chunk, index.trim(chunk.start(), at));
        Chunk right = piece(index, chunk, index.trim(at, chunk.end()));
        cut(index, left, inside(starts, left.span()), out, splits);
        cut(index, right, inside(starts, right.span()), out, splits);
    }

    /** The sorted {@code starts} inside {@code span}. */
    private static int[] inside(int[] starts, Span span) {
        int from = lowerBound(starts, span.start());
        int to = lowerBound(starts, span.end());
        return Arrays.copyOfRange(starts, from, to);
    }

    private static int lowerBound(int[] sorted, int value) {
        int i = Arrays.binarySearch(sorted, value);
        if (i < 0) {
            return -i - 1;
        }
        while (i > 0 && sorted[i - 1] == value) {
            i--;
        }
        return i;
    }

    /**
     * Where to cut {@code span}: the sentence boundary nearest its middle token, else the word start nearest it, else the
     * middle token's start; -1 when the span is one token. Both sides are non-empty after trimming.
     */
    static int boundary(TextIndex index, Span span, int[] relativeTokenStarts) {
        return boundaryAt(index, span, Arrays.stream(relativeTokenStarts).map(t -> t + span.start()).toArray());
    }

    /** {@link #boundary} with the tokens' absolute starts. */
    private static int boundaryAt(TextIndex index, Span span, int[] tokenStarts) {
        int middle = tokenStarts.length == 0 ? span.start() + span.length() / 2 : tokenStarts[tokenStarts.length / 2];
        int best = nearest(index, span, index.sentenceBoundariesInside(span), middle);
        if (best < 0) {
            best = nearest(index, span, index.wordStartsIn(span), middle);
        }
        if (best < 0) {
            best = nearest(index, span, tokenStarts, middle);
        }
        return best;
    }


    /** The candidate nearest {@code middle} (the earlier on a tie) that leaves text on both sides, or -1. */
    private static int nearest(TextIndex index, Span span, int[] candidates, int middle) {
        int best = -1;
        for (int c : candidates) {
            if (c <= span.start() || c >= span.end()) {
                continue;
            }
            if (index.trim(span.start(), c).length() == 0 || index.trim(c, span.end()).length() == 0) {
                continue;
            }
            if (best < 0 || Math.abs(c - middle) < Math.abs(best - middle)) {
                best = c;
            }
        }
        return best;
    }

    /** A piece of {@code chunk} at {@code span}: same level, section and repeated table header. */
    private static Chunk piece(TextIndex index, Chunk chunk, Span span) {
        // the text is the source span, preceded by the repeated header of a table piece (text = header part + span's text)
        String before = chunk.text().substring(0, chunk.text().length() - chunk.span().length());
        return new Chunk(before + span.of(index.text()), span, chunk.level(), chunk.ordinal(), chunk.section(), chunk.header());
    }

    private static Chunk withOrdinal(Chunk c, int ordinal) {
        return c.ordinal() == ordinal ? c : new Chunk(c.text(), c.span(), c.level(), ordinal, c.section(), c.header());
    }

    /** Ordinals counted again per level, in order. */
    private static List<Chunk> renumber(List<Chunk> children) {
        List<Chunk> out = new ArrayList<>(children.size());
        int[] next = new int[ChunkingConfig.MAX_LEVELS + 2];
        for (Chunk c : children) {
            out.add(withOrdinal(c, next[c.level()]++));
        }
        return out;
    }
}
