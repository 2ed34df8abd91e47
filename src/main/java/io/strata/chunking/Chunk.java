package io.strata.chunking;

/**
 * One chunk of a source text. {@code level} 0 is a parent; levels 1.. are the multi-granular children
 * (level i has the i-th configured granularity). {@code ordinal} orders chunks of one level within their
 * parent (for parents: within the document). {@code text} always equals {@code source.substring(start, end)}.
 */
public record Chunk(String text, Span span, int level, int ordinal) {
    public int start() {
        return span.start();
    }

    public int end() {
        return span.end();
    }
}
