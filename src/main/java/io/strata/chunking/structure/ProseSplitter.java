package io.strata.chunking.structure;

import io.strata.chunking.Span;

import java.util.List;

/**
 * Cuts the prose of a section (its text between blocks) into chunks: the configured strategy for parents, recursive
 * splitting at θ·g for children. Returns trimmed spans inside {@code span}, in order.
 */
@FunctionalInterface
public interface ProseSplitter {
    List<Span> split(Span span);
}
