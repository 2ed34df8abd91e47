package io.strata.chunking;

/**
 * One chunk of a source text. {@code level} 0 is a parent; levels 1.. are the multi-granular children
 * (level i has the i-th configured granularity). {@code ordinal} orders chunks of one level within their
 * parent (for parents: within the document).
 *
 * <p>{@code text} equals {@code source.substring(start, end)}, except for a piece of a table split at its rows that does
 * not contain the table's header row: {@code header} then locates that row (or rows) in the source, and {@code text} is
 * the header, a line break, then {@code source.substring(start, end)}, so every piece of a table reads with its columns.
 *
 * @param section where the chunk sits in the document's heading tree; null for {@code format: text}
 * @param header  the repeated header of a table piece, or null
 */
public record Chunk(String text, Span span, int level, int ordinal, Section section, Span header) {
    public Chunk(String text, Span span, int level, int ordinal) {
        this(text, span, level, ordinal, null, null);
    }

    public int start() {
        return span.start();
    }

    public int end() {
        return span.end();
    }
}
