package io.strata.chunking;

import java.util.List;

/**
 * Lays out a structured document (Markdown, HTML) in parents and children along its structure. Implemented in
 * {@code io.strata.chunking.structure} with the parsers; {@link MultiGranularChunker} receives it, so the core does not
 * depend on them. Immutable and thread-safe.
 */
public interface DocumentLayout {
    DocumentFormat format();

    /**
     * Parents cut by {@code strategy} within the structure, each with its children at the sizes of {@code childSplitters}
     * (level i + 1 = the i-th splitter), and the index of the text the chunks were cut from.
     */
    MultiGranularChunker.Result chunk(String text, ChunkingStrategy strategy, List<RecursiveSplitter> childSplitters,
                                      SentenceSegmenter segmenter);
}
