package io.strata.context;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * What the caller could read of one source document: the texts of some of its parents (each with its {@code [start, end)}
 * in the source) and the boundaries of their chunks. A context passage is a stretch of this text between two boundaries.
 *
 * <p>Chunks are trimmed spans that cover the source up to whitespace (the chunking contract), so the text between two
 * consecutive parents that no chunk stores is whitespace: it is rendered as one space when it is one character long and as a
 * line break otherwise (the only place a passage's text can differ from the source, and only in whitespace).
 */
public final class SourceText {
    private final TreeMap<Integer, Parent> parents = new TreeMap<>();
    private final TreeSet<Integer> starts = new TreeSet<>();
    private final TreeSet<Integer> ends = new TreeSet<>();

    private record Parent(int ordinal, String text) {}

    /**
     * Adds parent number {@code ordinal} of the source, at {@code start}, and the spans of its chunks at the finest level it
     * has ({@code units}; the parent itself when it has none): the steps a passage grows by.
     */
    public void addParent(int ordinal, int start, String text, List<int[]> units) {
        if (parents.putIfAbsent(start, new Parent(ordinal, text)) != null) {
            return;
        }
        starts.add(start);
        ends.add(start + text.length());
        for (int[] u : units) {
            starts.add(u[0]);
            ends.add(u[1]);
        }
    }


    /** The first chunk end after {@code end} that a passage ending there can grow to, or -1. */
    int nextEnd(int end) {
        Integer e = ends.higher(end);
        return e == null || !covered(end, e) ? -1 : e;
    }

    /** The last chunk start before {@code start} that a passage starting there can grow to, or -1. */
    int previousStart(int start) {
        Integer s = starts.lower(start);
        return s == null || !covered(s, start) ? -1 : s;
    }

    /**
     * Whether {@code [a, b)} is readable: inside known parents, or in the whitespace between two consecutive ones (ordinals
     * n and n + 1). Between two known parents that are not consecutive lies one the caller could not read or that was not
     * fetched: a passage never spans it.
     */
    boolean covered(int a, int b) {
        int at = a;
        while (at < b) {
            Map.Entry<Integer, Parent> p = parents.floorEntry(at);
            if (p == null) {
                return false;
            }
            int pEnd = p.getKey() + p.getValue().text().length();
            if (pEnd > at) {
                at = pEnd;
                continue;
            }
            Map.Entry<Integer, Parent> next = parents.higherEntry(at);
            if (next == null || next.getValue().ordinal() != p.getValue().ordinal() + 1) {
                return false;
            }
            at = next.getKey();
        }
        return true;
    }

    /** The text of {@code [start, end)} (which {@link #covered} allows); uncovered whitespace as the class comment says. */
    String text(int start, int end) {
        StringBuilder out = new StringBuilder(end - start);
        int at = start;
        while (at < end) {
            Map.Entry<Integer, Parent> p = parents.floorEntry(at);
            int pEnd = p == null ? -1 : p.getKey() + p.getValue().text().length();
            if (p != null && pEnd > at) {
                int to = Math.min(end, pEnd);
                out.append(p.getValue().text(), at - p.getKey(), to - p.getKey());
                at = to;
            } else {
                Integer next = parents.higherKey(at);
                int to = next == null ? end : Math.min(end, next);
                out.append(to - at == 1 ? " " : "\n");
                at = to;
            }
        }
        return out.toString();
    }

    /** A piece of a parent: {@code [from, to)} of the source, in the parent's {@code text} starting at {@code at}. */
    @FunctionalInterface
    interface PieceConsumer {
        void accept(String text, int at, int from, int to);
    }

    /**
     * Calls {@code each} with every piece that overlaps {@code [start, end)}, in order: the parents cut at their chunks'
     * starts (the steps a passage grows by), so each piece is cut at whitespace.
     */
    void piecesIn(int start, int end, PieceConsumer each) {
        Map.Entry<Integer, Parent> first = parents.floorEntry(start);
        Integer from = first != null && first.getKey() + first.getValue().text().length() > start ? first.getKey()
            : parents.ceilingKey(start);
        if (from == null) {
            return;
        }
        for (Map.Entry<Integer, Parent> p : parents.tailMap(from, true).entrySet()) {
            int at = p.getKey();
            if (at >= end) {
                break;
            }
            int parentEnd = at + p.getValue().text().length();
            Integer floor = starts.floor(Math.max(start, at));
            int pieceStart = floor == null || floor < at ? at : floor;
            while (pieceStart < Math.min(end, parentEnd)) {
                Integer next = starts.higher(pieceStart);
                int pieceEnd = next == null || next > parentEnd ? parentEnd : next;
                each.accept(p.getValue().text(), at, pieceStart, pieceEnd);
                pieceStart = pieceEnd;
            }
        }
    }

    /**
     * Whether a passage ending at {@code end} and one starting at {@code start} read as one: they overlap, or only the
     * whitespace between two chunks separates them.
     */
    boolean touches(int end, int start) {
        if (start <= end) {
            return true;
        }
        Integer between = starts.ceiling(end);
        return (between == null || between >= start) && covered(end, start);
    }

    /** Offsets in {@code [from, to]} where a cut leaves whole words on its left: {@code to} and every whitespace run's start. */
    int[] wordEnds(int from, int to) {
        char[] t = sourceChars(from, to);
        List<Integer> out = new ArrayList<>();
        for (int i = 1; i < t.length; i++) {
            if (Character.isWhitespace(t[i]) && !Character.isWhitespace(t[i - 1])) {
                out.add(from + i);
            }
        }
        out.add(to);
        return out.stream().mapToInt(Integer::intValue).toArray();
    }

    /** Offsets in {@code [from, to]} where a cut leaves whole words on its right: {@code from} and every word's start. */
    int[] wordStarts(int from, int to) {
        char[] t = sourceChars(from, to);
        List<Integer> out = new ArrayList<>();
        out.add(from);
        for (int i = 1; i < t.length; i++) {
            if (!Character.isWhitespace(t[i]) && Character.isWhitespace(t[i - 1])) {
                out.add(from + i);
            }
        }
        return out.stream().mapToInt(Integer::intValue).toArray();
    }

    /**
     * The characters of {@code [from, to)} at their source offsets, what no known parent holds as spaces. Not {@link #text}:
     * that renders a gap between parents as one character whatever its length, so its indexes drift from the source's
     * (cuts computed on it fell inside words after every blank line between parents).
     */
    private char[] sourceChars(int from, int to) {
        char[] out = new char[Math.max(0, to - from)];
        java.util.Arrays.fill(out, ' ');
        piecesIn(from, to, (text, at, pieceStart, pieceEnd) -> {
            int a = Math.max(from, pieceStart);
            int b = Math.min(to, pieceEnd);
            text.getChars(a - at, b - at, out, a - from);
        });
        return out;
    }

}
