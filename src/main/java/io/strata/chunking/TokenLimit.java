package io.strata.chunking;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The embedding model's hard limit, for every chunk that is embedded: a chunk whose text, as it is embedded (the model's
 * passage prefix and special tokens included), has more tokens than the model takes would be truncated at embedding
 * time, losing its end. Such a chunk is cut in two at the boundary nearest its middle token — a sentence boundary, else a
 * word start, else a token start — and each half is checked again, until every piece fits. Pieces are trimmed spans of
 * the same text, so offsets stay exact. Runs after the strategy and the child splitters, also on structured layouts (a
 * table piece keeps its repeated header). Deterministic. Counts the cuts it made ({@code Result.limitSplits}).
 *
 * <p>A parent is not embedded when it is above the window and within {@link ParentSize} ({@code parents.max_tokens}): it
 * keeps its text and span, has no vector of its own ({@link ChunkedParent#parentEmbedded()} false), and its children,
 * each within the window, score it through the MAX. That needs children covering every word of it; a parent without
 * them is cut to the window as any chunk. A parent above {@code parents.max_tokens} is cut (counted) into pieces within
 * it, each placed again; a cut parent's children are the pieces of its children that fall in each new parent.
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
    /** The largest parent kept whole; at most the window: every parent is embedded. */
    private final int maxParent;

    TokenLimit(ModelTokens tokens) {
        this(tokens, ParentSize.DEFAULT);
    }

    TokenLimit(ModelTokens tokens, ParentSize parents) {
        this.tokens = tokens;
        this.limit = tokens.limit();
        this.maxParent = Math.max(limit, parents.maxTokens());
    }

    /** {@code result} with every embedded chunk fitting, and how many cuts that took in {@code limitSplits}. */
    MultiGranularChunker.Result apply(MultiGranularChunker.Result result) {
        TextIndex index = result.index();
        List<ChunkedParent> out = new ArrayList<>(result.parents().size());
        int[] splits = { 0 };
        for (ChunkedParent cp : result.parents()) {
            if (cp.children().isEmpty() || maxParent == limit) {
                // nothing could score a parent above the window: cut to it, as every chunk
                for (Chunk parent : fit(index, cp.parent(), splits)) {
                    out.add(new ChunkedParent(parent, fitChildren(index, cp, parent, splits)));
                }
            } else {
                place(index, cp, cp.parent(), out, splits);
            }
        }
        boolean changed = out.size() != result.parents().size();
        for (int p = 0; p < out.size() && !changed; p++) {
            changed = !out.get(p).equals(result.parents().get(p));
        }
        if (!changed) {
            return result;
        }
        List<ChunkedParent> numbered = new ArrayList<>(out.size());
        for (int p = 0; p < out.size(); p++) {
            ChunkedParent cp = out.get(p);
            numbered.add(new ChunkedParent(withOrdinal(cp.parent(), p), cp.children(), cp.parentEmbedded()));
        }
        return new MultiGranularChunker.Result(numbered, result.evidence(), index, splits[0]);
    }

    /** Places {@code parent} (the parent of {@code cp} or a piece of it): embedded, kept whole without a vector, or cut. */
    private void place(TextIndex index, ChunkedParent cp, Chunk parent, List<ChunkedParent> out, int[] splits) {
        int n = tokens.embedded(parent.text());
        if (n <= limit) {
            out.add(new ChunkedParent(parent, fitChildren(index, cp, parent, splits)));
            return;
        }
        if (n <= maxParent) {
            List<Chunk> children = fitChildren(index, cp, parent, splits);
            if (covers(index, parent.span(), children)) {
                out.add(new ChunkedParent(parent, children, false));
                return;
            }
            for (Chunk piece : fit(index, parent, splits)) {
                out.add(new ChunkedParent(piece, fitChildren(index, cp, piece, splits)));
            }
            return;
        }
        List<Chunk> pieces = new ArrayList<>();
        cut(index, parent, null, pieces, splits, maxParent);
        for (Chunk piece : pieces) {
            place(index, cp, piece, out, splits);
        }
    }

    /** The children of {@code cp} inside {@code parent} (clipped to it when it is a piece), each within the window. */
    private List<Chunk> fitChildren(TextIndex index, ChunkedParent cp, Chunk parent, int[] splits) {
        boolean whole = parent.span().equals(cp.parent().span());
        List<Chunk> children = new ArrayList<>(cp.children().size());
        boolean changed = false;
        for (Chunk c : cp.children()) {
            Chunk inside = c;
            if (!whole) {
                int from = Math.max(c.start(), parent.start());
                int to = Math.min(c.end(), parent.end());
                if (from >= to) {
                    changed = true;
                    continue;
                }
                Span clipped = index.trim(from, to);
                if (clipped.length() == 0) {
                    changed = true;
                    continue;
                }
                if (!clipped.equals(c.span())) {
                    inside = piece(index, c, clipped);
                }
            }
            List<Chunk> pieces = fit(index, inside, splits);
            changed |= pieces.size() > 1 || inside != c;
            children.addAll(pieces);
        }
        return changed ? renumber(children) : cp.children();
    }

    /** Whether every word of {@code span} starts inside one of {@code chunks}: the MAX over them sees all of it. */
    static boolean covers(TextIndex index, Span span, List<Chunk> chunks) {
        if (chunks.isEmpty()) {
            return false;
        }
        int[][] spans = new int[chunks.size()][];
        for (int i = 0; i < spans.length; i++) {
            spans[i] = new int[] { chunks.get(i).start(), chunks.get(i).end() };
        }
        Arrays.sort(spans, (a, b) -> Integer.compare(a[0], b[0]));
        int next = 0;
        int reach = Integer.MIN_VALUE; // the end of the union of the spans starting at or before the word
        for (int word : index.wordStartsIn(span)) {
            while (next < spans.length && spans[next][0] <= word) {
                reach = Math.max(reach, spans[next][1]);
                next++;
            }
            if (word >= reach) {
                return false;
            }
        }
        return true;
    }

    /** {@code chunk} if it fits, else its pieces that do, in order. */
    private List<Chunk> fit(TextIndex index, Chunk chunk, int[] splits) {
        List<Chunk> out = new ArrayList<>(1);
        cut(index, chunk, null, out, splits, limit);
        return out;
    }

    /**
     * Cuts {@code chunk} into pieces of at most {@code limit} embedded tokens.
     *
     * @param known the absolute starts of the enclosing chunk's tokens inside {@code chunk} (null: none known); when they
     *              put it above twice the limit it is cut at their middle without being tokenized
     */
    private void cut(TextIndex index, Chunk chunk, int[] known, List<Chunk> out, int[] splits, int limit) {
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
        cut(index, left, inside(starts, left.span()), out, splits, limit);
        cut(index, right, inside(starts, right.span()), out, splits, limit);
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
