package io.strata.chunking.structure;

import io.strata.chunking.TextIndex;

import java.util.List;

/**
 * A document read for its structure: the text the chunks are cut from and stored with (the Markdown source itself; for
 * HTML the extracted text), its headings in order and its top-level {@link Block}s in order, all located in that text;
 * and the text's words when the reader found them as it wrote the text (null: the index finds them).
 */
public record StructuredText(String text, List<Heading> headings, List<Block> blocks, TextIndex.Words words) {
    public StructuredText {
        headings = List.copyOf(headings);
        blocks = List.copyOf(blocks);
    }

    public StructuredText(String text, List<Heading> headings, List<Block> blocks) {
        this(text, headings, blocks, null);
    }
}
