package io.strata.context;

/**
 * Where one hit points into its source document: the chunk that matched ({@code [start, end)}, source offsets), the hit's
 * rank (0 = best) and what cites it.
 *
 * @param document which {@link SourceText} of the packer's map holds the text
 * @param hit      the hit's citation ({@code _index/_id} of the parent chunk document)
 */
public record Seed(String document, int start, int end, int rank, String hit) {}
