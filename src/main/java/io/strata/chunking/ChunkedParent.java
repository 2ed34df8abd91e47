package io.strata.chunking;

import java.util.List;

/**
 * A parent chunk and its multi-granular children. Following the LGMGC paper (§3.2) the parent counts as
 * its own child: {@link #all()} starts with the parent at level 0; {@link #children()} holds levels 1.. only.
 */
public record ChunkedParent(Chunk parent, List<Chunk> children) {
    public ChunkedParent {
        children = List.copyOf(children);
    }

    /** The parent followed by its children: every chunk that scores this parent. */
    public List<Chunk> all() {
        var all = new java.util.ArrayList<Chunk>(children.size() + 1);
        all.add(parent);
        all.addAll(children);
        return all;
    }
}
