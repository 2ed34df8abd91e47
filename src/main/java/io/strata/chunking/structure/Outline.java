package io.strata.chunking.structure;

import io.strata.chunking.Span;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.List;

/**
 * The section tree of a document: the root (the whole text, level 0, empty path) and one node per heading, a node's
 * section running from its heading to the next heading of the same or a higher level (a smaller number).
 */
public record Outline(Node root) {
    /**
     * One section.
     *
     * @param path     heading titles from the outermost down to this one (empty for the root)
     * @param level    1–6, 0 for the root
     * @param subtree  the whole section with its sub-sections
     * @param own      its heading and what precedes its first sub-section
     * @param children its sub-sections in order
     */
    public record Node(String title, int level, List<String> path, Span subtree, Span own, List<Node> children) {}

    /** The tree of {@code headings} (ordered by start; a heading at the offset of the previous one is skipped). */
    public static Outline of(List<Heading> headings, int length) {
        Open root = new Open("", 0, List.of(), 0);
        Deque<Open> stack = new ArrayDeque<>();
        stack.push(root);
        int last = -1;
        for (Heading h : headings) {
            if (h.start() <= last || h.level() < 1) {
                continue; // two headings at one offset (nested in broken markup): the first opens the section
            }
            last = h.start();
            while (stack.peek().level >= h.level()) {
                stack.pop().end = h.start();
            }
            Open parent = stack.peek();
            List<String> path = new ArrayList<>(parent.path);
            path.add(h.title());
            Open node = new Open(h.title(), h.level(), List.copyOf(path), h.start());
            parent.children.add(node);
            stack.push(node);
        }
        while (!stack.isEmpty()) {
            stack.pop().end = length;
        }
        return new Outline(root.freeze());
    }

    private static final class Open {
        final String title;
        final int level;
        final List<String> path;
        final int start;
        final List<Open> children = new ArrayList<>();
        int end;

        Open(String title, int level, List<String> path, int start) {
            this.title = title;
            this.level = level;
            this.path = path;
            this.start = start;
        }

        Node freeze() {
            List<Node> frozen = new ArrayList<>(children.size());
            for (Open child : children) {
                frozen.add(child.freeze());
            }
            int ownEnd = children.isEmpty() ? end : children.get(0).start;
            return new Node(title, level, path, new Span(start, end), new Span(start, ownEnd),
                Collections.unmodifiableList(frozen));
        }
    }
}
