package io.strata.chunking.structure;

import java.util.List;

/**
 * A document read for its structure: the text the chunks are cut from and stored with (the Markdown source itself; for
 * HTML the extracted text), its headings in order and its top-level {@link Block}s in order, all located in that text.
 */
public record StructuredText(String text, List<Heading> headings, List<Block> blocks) {
    public StructuredText {
        headings = List.copyOf(headings);
        blocks = List.copyOf(blocks);
    }
}
