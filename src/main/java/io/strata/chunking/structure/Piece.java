package io.strata.chunking.structure;

import io.strata.chunking.Section;
import io.strata.chunking.Span;

/**
 * A chunk laid out along the document's structure: its span of the stored text, the table header it repeats (null when
 * none) and its section.
 */
public record Piece(Span span, Span header, Section section) {}
