package io.strata.context;

import java.util.List;

/**
 * One stretch of a source document in the context: {@code [start, end)} in the source (the offsets the chunks store),
 * its text, its token count on its own, and the hits whose chunks it holds (best first).
 *
 * @param truncated whether the budget cut it inside the chunk it started from (only when no whole chunk fits)
 */
public record Passage(String document, int start, int end, String text, int tokens, int rank, List<String> hits, boolean truncated) {}
