package io.strata.chunking;

import java.util.List;

/**
 * A parent chunk and its multi-granular children. Following the LGMGC paper (§3.2) the parent counts as
 * its own child: {@link #all()} starts with the parent at level 0; {@link #children()} holds levels 1.. only.
 *
 * @param parentEmbedded false for a parent above the embedding model's window ({@link ParentSize}): it has no vector of
 *                       its own, and its children, which cover every word of it, score it
 */
public record ChunkedParent(Chunk parent, List<Chunk> children, boolean parentEmbedded) {
    public ChunkedParent {
        children = List.copyOf(children);
    }

    public ChunkedParent(Chunk parent, List<Chunk> children) {
        this(parent, children, true);
    }

    /** The parent followed by its children: every chunk that scores this parent. */
    public List<Chunk> all() {
        var all = new java.util.ArrayList<Chunk>(children.size() + 1);
        all.add(parent);
        all.addAll(children);
        return all;
    }

    /** The chunks that get a vector: {@link #all()} without the parent when it has none. */
    public List<Chunk> embedded() {
        return parentEmbedded ? all() : children;
    }
}
