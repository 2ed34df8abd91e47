package io.strata.chunking.structure;

import io.strata.chunking.InputLimitException;

import java.util.Locale;

/**
 * How deep the structure of one document may nest (block quotes and list items in Markdown, lists, tables and
 * {@code <pre>} in HTML, emphasis and links in a Markdown heading): the node setting {@value #SETTING}. The readers check it as they read, before any
 * work that grows with the depth, so every walk of a document's structure is bounded by it (recursive ones included)
 * and a document nested deeper is refused with a message naming the setting.
 */
public record NestingLimit(int maxDepth) {
    /** The node setting's key (declared with the node's settings outside the chunking core). */
    public static final String SETTING = "plugins.strata.chunking.max_nesting_depth";
    public static final int DEFAULT = 512;
    /**
     * The setting's maximum: the walks that recurse per level (Markdown's blocks, a list's nested blocks in the layout) stay
     * far inside a 1 MB thread stack at this depth (HostileStructureTests).
     */
    public static final int MAX = 1_000;
    public static final NestingLimit DEFAULTS = new NestingLimit(DEFAULT);

    public NestingLimit {
        if (maxDepth < 1 || maxDepth > MAX) {
            throw new IllegalArgumentException(String.format(Locale.ROOT, "[%s] must be in [1, %d], got [%d]", SETTING, MAX, maxDepth));
        }
    }

    /** The refusal of a document whose {@code what} ({@code "[markdown] block quotes and lists"}) nests deeper, {@code where}. */
    InputLimitException exceeded(String what, String where) {
        return new InputLimitException(String.format(Locale.ROOT,
            "%s nest deeper than [%d] levels %s; the limit is the node setting [%s] (at most %d)", what, maxDepth, where, SETTING, MAX));
    }
}
