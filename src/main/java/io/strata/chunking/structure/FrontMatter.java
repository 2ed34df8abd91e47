package io.strata.chunking.structure;

/**
 * A leading YAML front matter block of a Markdown page: a first line {@code ---}, then lines up to a closing {@code ---}
 * or {@code ...}. Not Markdown, and CommonMark would read its closing {@code ---} as the underline of a setext heading.
 */
final class FrontMatter {
    private FrontMatter() {}

    /** {@code source} with the characters of its front matter (line breaks excepted) replaced by spaces; offsets unchanged. */
    static String blank(String source) {
        int end = end(source);
        if (end == 0) {
            return source;
        }
        // a StringBuilder keeps a Latin-1 source in one byte per character (toCharArray would widen it and back)
        StringBuilder blanked = new StringBuilder(source);
        for (int i = 0; i < end; i++) {
            if (source.charAt(i) != '\n' && source.charAt(i) != '\r') {
                blanked.setCharAt(i, ' ');
            }
        }
        return blanked.toString();
    }

    /** Where the front matter ends (after its closing line), or 0 when the source does not start with one. */
    static int end(String source) {
        int lineEnd = lineEnd(source, 0);
        if (isFence(source, 0, lineEnd, false) == false) {
            return 0;
        }
        int start = next(source, lineEnd);
        while (start < source.length()) {
            int end = lineEnd(source, start);
            if (isFence(source, start, end, true)) {
                return end;
            }
            start = next(source, end);
        }
        return 0;
    }

    private static boolean isFence(String s, int start, int end, boolean closing) {
        String line = s.substring(start, end).stripTrailing();
        return line.equals("---") || (closing && line.equals("..."));
    }

    private static int lineEnd(String s, int from) {
        int i = from;
        while (i < s.length() && s.charAt(i) != '\n' && s.charAt(i) != '\r') {
            i++;
        }
        return i;
    }

    private static int next(String s, int lineEnd) {
        if (lineEnd < s.length() && s.charAt(lineEnd) == '\r' && lineEnd + 1 < s.length() && s.charAt(lineEnd + 1) == '\n') {
            return lineEnd + 2;
        }
        return lineEnd + 1;
    }
}
