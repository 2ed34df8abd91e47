package io.strata.chunking.structure;

import io.strata.chunking.Span;

import java.util.List;

/**
 * A block that chunking keeps whole when it fits, and otherwise cuts only between its units: a code block between lines,
 * a table between rows (its header row repeated in every piece that lacks it), a list between items.
 *
 * @param span   the whole block in the stored text
 * @param units  the pieces it may be cut between, in order: lines, body rows (without the header), items
 * @param header the table's header (for Markdown the header row and the delimiter row), null for other kinds
 * @param nested blocks inside the units (a code block inside a list item), in order; an item too large for a chunk is
 *               cut by the same rules around them
 */
public record Block(Kind kind, Span span, List<Span> units, Span header, List<Block> nested) {
    public enum Kind { CODE, TABLE, LIST }

    public Block {
        units = List.copyOf(units);
        nested = List.copyOf(nested);
    }
}
