package io.strata.chunking.structure;

/** A heading of a document: its level (1 for {@code #} / {@code <h1>}), its title, and where it starts in the stored text. */
public record Heading(int level, String title, int start) {}
