package io.strata.chunking;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Children that add nothing are not written. Runs on every layout, after the child splitters:
 * <ul>
 *   <li><b>Tiny children join a neighbour</b>: a child smaller than {@link #MIN_FRACTION} of its level's size (θ·g, in the
 *   unit θ counts) joins the smaller of its neighbours at its level (the earlier one on a tie), while the parent has
 *   another child at that level and the merged child stays below θ·g plus that fraction. In flat text
 *   ({@code format: text}); the structured layouts merge small units inside a section themselves. The token limit still
 *   applies to a merged child. So a
 *   sentence tail such as {@code "he liked."} is not embedded alone.</li>
 *   <li><b>Repeats are dropped</b>: a child whose span equals its parent's or a coarser child's of the same parent is
 *   not written: its vector (and its text, for BM25) would equal the one already there, so a parent's MAX over its
 *   chunks is the same without it. A parent of at most θ·g has no children at that level; a level's children then
 *   need not cover the whole parent (the coarser chunk holding the rest does).</li>
 * </ul>
 * Ordinals are counted again per level. Deterministic; no model is called.
 */
final class ChildPolicy {
    /** A child below this fraction of its level's size joins a neighbour. */
    static final double MIN_FRACTION = 0.25;

    /** The size of each child level (θ·g), level 1 first. */
    private final int[] levelSizes;

    ChildPolicy(int[] levelSizes) {
        this.levelSizes = levelSizes.clone();
    }

    /** Tiny children merged into a neighbour (see the class comment), parents unchanged. */
    MultiGranularChunker.Result mergeTiny(MultiGranularChunker.Result result) {
        TextIndex index = result.index();
        List<ChunkedParent> out = new ArrayList<>(result.parents().size());
        boolean changed = false;
        for (ChunkedParent cp : result.parents()) {
            List<Chunk> children = new ArrayList<>(cp.children().size());
            boolean merged = false;
            for (int level = 1; level <= levelSizes.length; level++) {
                List<Chunk> ofLevel = new ArrayList<>();
                for (Chunk c : cp.children()) {
                    if (c.level() == level) {
                        ofLevel.add(c);
                    }
                }
                merged |= mergeTiny(index, ofLevel, levelSizes[level - 1]);
                children.addAll(ofLevel);
            }
            if (merged) {
                changed = true;
                out.add(new ChunkedParent(cp.parent(), renumber(children), cp.parentEmbedded()));
            } else {
                out.add(cp);
            }
        }
        return changed ? new MultiGranularChunker.Result(out, result.evidence(), index, result.limitSplits()) : result;
    }

    /**
     * Merges, in place, the smallest child below a quarter of {@code size} into its smaller mergeable neighbour, until none
     * is left; a merge that would reach {@code size} plus that quarter is not made (so a neighbour takes in one tail, not
     * a chain of them).
     */
    private static boolean mergeTiny(TextIndex index, List<Chunk> level, int size) {
        double min = size * MIN_FRACTION;
        boolean merged = false;
        Set<Integer> stuck = new HashSet<>(); // tiny children with no neighbour they may join (by start)
        while (level.size() > 1) {
            int smallest = -1;
            int smallestSize = Integer.MAX_VALUE;
            for (int i = 0; i < level.size(); i++) {
                int childSize = index.size(level.get(i).span());
                if (childSize < min && childSize < smallestSize && !stuck.contains(level.get(i).start())) {
                    smallest = i;
                    smallestSize = childSize;
                }
            }
            if (smallest < 0) {
                return merged;
            }
            int target = -1;
            for (int n : new int[] { smallest - 1, smallest + 1 }) {
                if (n >= 0 && n < level.size() && mergeable(level.get(smallest), level.get(n))
                    && index.size(level.get(Math.min(n, smallest)).start(), level.get(Math.max(n, smallest)).end()) < size + min
                    && (target < 0 || index.size(level.get(n).span()) < index.size(level.get(target).span()))) {
                    target = n;
                }
            }
            if (target < 0) {
                stuck.add(level.get(smallest).start());
                continue;
            }
            Chunk a = level.get(Math.min(smallest, target));
            Chunk b = level.get(Math.max(smallest, target));
            Span span = new Span(a.start(), b.end());
            level.set(Math.min(smallest, target), new Chunk(span.of(index.text()), span, a.level(), a.ordinal(), a.section(), null));
            level.remove(Math.max(smallest, target));
            merged = true;
        }
        return merged;
    }

    /** Flat text only: structured layouts merge small units themselves, and two sections may have equal paths. */
    private static boolean mergeable(Chunk a, Chunk b) {
        return a.section() == null && b.section() == null && a.header() == null && b.header() == null;
    }

    /** Children whose span repeats their parent's or a coarser child's dropped (see the class comment). */
    static MultiGranularChunker.Result dropRepeats(MultiGranularChunker.Result result) {
        TextIndex index = result.index();
        List<ChunkedParent> out = new ArrayList<>(result.parents().size());
        boolean changed = false;
        for (ChunkedParent cp : result.parents()) {
            Set<Span> seen = new HashSet<>();
            if (cp.parentEmbedded()) { // a parent without a vector of its own is scored by its children only: keep them all
                seen.add(cp.parent().span());
                seen.add(index.trim(cp.parent().start(), cp.parent().end()));
            }
            List<Chunk> kept = new ArrayList<>(cp.children().size());
            List<Chunk> byLevel = new ArrayList<>(cp.children());
            byLevel.sort((x, y) -> Integer.compare(x.level(), y.level())); // stable: coarser levels first, in order
            List<Span> levelSpans = new ArrayList<>();
            int level = -1;
            for (Chunk c : byLevel) {
                if (c.level() != level) { // a level's spans count as seen for the finer levels only
                    seen.addAll(levelSpans);
                    levelSpans.clear();
                    level = c.level();
                }
                if (c.header() == null && seen.contains(c.span())) {
                    continue;
                }
                kept.add(c);
                levelSpans.add(c.span());
            }
            if (kept.size() == cp.children().size()) {
                out.add(cp);
            } else {
                changed = true;
                out.add(new ChunkedParent(cp.parent(), renumber(kept), cp.parentEmbedded()));
            }
        }
        return changed ? new MultiGranularChunker.Result(out, result.evidence(), index, result.limitSplits()) : result;
    }

    /** Ordinals counted again per level, in order. */
    private static List<Chunk> renumber(List<Chunk> children) {
        List<Chunk> out = new ArrayList<>(children.size());
        int[] next = new int[ChunkingConfig.MAX_LEVELS + 2];
        for (Chunk c : children) {
            int ordinal = next[c.level()]++;
            out.add(c.ordinal() == ordinal ? c : new Chunk(c.text(), c.span(), c.level(), ordinal, c.section(), c.header()));
        }
        return out;
    }
}
