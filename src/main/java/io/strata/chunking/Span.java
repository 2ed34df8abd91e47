package io.strata.chunking;

/** A half-open character range {@code [start, end)} of a source text. */
public record Span(int start, int end) {
    public Span {
        if (start < 0 || end < start) {
            throw new IllegalArgumentException("invalid span [" + start + ", " + end + ")");
        }
    }

    public int length() {
        return end - start;
    }

    public boolean contains(Span other) {
        return start <= other.start && other.end <= end;
    }

    public String of(CharSequence text) {
        return text.subSequence(start, end).toString();
    }
}
