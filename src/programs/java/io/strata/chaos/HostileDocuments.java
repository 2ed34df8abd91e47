package io.strata.chaos;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;

/**
 * Generated hostile documents, the same for a seed and a scale: every nesting the Markdown and HTML readers know (block
 * quotes, lists, lists in quotes, emphasis, links and brackets in headings, tables, HTML elements) {@code 100,000 × scale}
 * deep (emphasis, links and brackets in a paragraph, which the reader leaves unparsed, and a wide table
 * {@code 10,000 × scale}: one model token per character); many small blocks (items, rows, headings:
 * {@code 10,000 × scale}); a token of {@code 1,000,000 × scale}
 * characters without a space; {@code 100,000 × scale} one-word paragraphs; combining marks, bidi controls, lone
 * surrogates (escaped in the JSON: {@code "\ud800"}) and NUL. The seed picks the words and the order of mixed nestings.
 * Used by {@code HostileDocumentsIT} (seed 44, scale 1) and {@code bin/strata-chaos hostile} (any seed and scale).
 */
public final class HostileDocuments {
    /** The formats every document of a generic kind is sent with. */
    public static final List<String> FORMATS = List.of("text", "markdown", "html");

    /**
     * One document: its name, its {@code format}, and its text as a JSON string literal (quoted, every character outside
     * printable ASCII escaped as {@code \\uXXXX}, which is how a lone surrogate can be sent at all).
     */
    public record Doc(String name, String format, String json, int chars) {
        @Override
        public String toString() {
            return String.format(Locale.ROOT, "%s (%s, %,d chars)", name, format, chars);
        }
    }

    private final Random random;
    private final int deep;
    private final int many;
    private final int tokenChars;

    private HostileDocuments(long seed, double scale) {
        this.random = new Random(seed);
        this.deep = Math.max(1, (int) Math.round(100_000 * scale));
        this.many = Math.max(1, (int) Math.round(100_000 * scale));
        this.tokenChars = Math.max(1, (int) Math.round(1_000_000 * scale));
    }

    /** The documents of {@code seed} at {@code scale} (1: the sizes above), in a fixed order. */
    public static List<Doc> generate(long seed, double scale) {
        return new HostileDocuments(seed, scale).all();
    }

    private List<Doc> all() {
        List<Doc> out = new ArrayList<>();
        int d = deep;
        // Markdown: every container and inline nesting commonmark reads
        md(out, "md-quotes", ">".repeat(d) + " " + word());
        md(out, "md-quotes-spaced", "> ".repeat(d) + word());
        md(out, "md-lists", "- ".repeat(d) + word());
        md(out, "md-ordered-lists", "1. ".repeat(d) + word());
        md(out, "md-list-in-quote", "> - ".repeat(d) + word());
        md(out, "md-mixed-containers", mixed(d, "> ", "- ", "* ", "+ ", "1. ", "2) ") + word());
        md(out, "md-indented-lists", indentedLists((int) Math.min(d, 700)));
        // in a paragraph the reader leaves inline markup unparsed: these are texts of one model token per character, whose
        // cost is the tokenizer's (~5 µs a token on 2 shared cores, several passes), so they come at a tenth of the depth
        int p = Math.max(1, d / 10);
        md(out, "md-emphasis", "*".repeat(p) + word() + "*".repeat(p));
        md(out, "md-heading-emphasis", "# " + "*".repeat(d) + word() + "*".repeat(d) + "\n\n" + word());
        md(out, "md-heading-underscores", "## " + "_".repeat(d) + word() + "_".repeat(d) + "\n\n" + word());
        md(out, "md-heading-links", "# " + "[![".repeat(d / 3) + word() + "](u)](u)".repeat(d / 3) + "\n\n" + word());
        md(out, "md-links", "[".repeat(p) + word() + "](u)".repeat(p));
        md(out, "md-brackets", "[".repeat(p) + word() + "]".repeat(p));
        md(out, "md-wide-table", wideTable(p));
        md(out, "md-table-in-quotes", tableInQuotes(d / 10));
        // many blocks: a tenth of the paragraphs' count, for the same reason (each line is two or more model tokens)
        int m = Math.max(1, many / 10);
        md(out, "md-many-items", lines(m, "- "));
        md(out, "md-many-rows", "| a | b |\n|---|---|\n" + lines(m, "| x | "));
        md(out, "md-many-headings", lines(m, "# "));
        // HTML: elements of every kind the reader treats apart, nested without and with their end tags
        for (String open : List.of("<div>", "<blockquote>", "<ul><li>", "<ol><li>", "<table><tr><td>", "<b>", "<i>", "<span>",
            "<a href=u>", "<p>", "<pre>", "<h1>", "<dl><dd>", "<section>", "<font>", "<em>", "<li>", "<td>")) {
            // as deep as fits _chunk's 1,000,000 characters at scale 1 (83,333 <blockquote>s), far past any nesting limit
            int levels = Math.min(d, Math.max(1, (tokenChars - 16) / open.length()));
            html(out, "html-" + open.replaceAll("[<>]", "").replace(" href=u", ""), open.repeat(levels) + word());
        }
        html(out, "html-divs-closed", "<div>".repeat(d / 2) + word() + "</div>".repeat(d / 2));
        html(out, "html-mixed", mixed(d, "<div>", "<ul><li>", "<blockquote>", "<b>", "<table><tr><td>", "<pre>", "<span>") + word());
        html(out, "html-many-items", "<ul>" + lines(m, "<li>") + "</ul>");
        html(out, "html-many-rows", "<table>" + lines(m, "<tr><td>") + "</table>");
        html(out, "html-many-headings", lines(m, "<h2>"));
        // every format: size, counts and characters
        for (String format : FORMATS) {
            String f = format.equals("text") ? "plain" : format.substring(0, 2);
            add(out, f + "-token", format, token(tokenChars));
            add(out, f + "-paragraphs", format, paragraphs(many));
            add(out, f + "-combining", format, combining());
            add(out, f + "-bidi", format, bidi());
            add(out, f + "-surrogates", format, surrogates());
            add(out, f + "-nul", format, nul());
        }
        return out;
    }

    private void md(List<Doc> out, String name, String text) {
        add(out, name, "markdown", text);
    }

    private void html(List<Doc> out, String name, String text) {
        add(out, name, "html", text);
    }

    private static void add(List<Doc> out, String name, String format, String text) {
        out.add(new Doc(name, format, jsonString(text), text.length()));
    }

    private static final String[] WORDS = {"orchard", "valley", "river", "Emma", "Hartfield", "kitten", "ledger", "harbour", "quill",
        "meadow", "lantern", "cider"};

    private String word() {
        return WORDS[random.nextInt(WORDS.length)];
    }

    private String mixed(int n, String... openers) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < n; i++) {
            b.append(openers[random.nextInt(openers.length)]);
        }
        return b.toString();
    }

    private String lines(int n, String prefix) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < n; i++) {
            b.append(prefix).append(word()).append('\n');
        }
        return b.toString();
    }

    /** Lists nested by indentation, one level per line: depth n takes ~n² characters, so n stays small. */
    private String indentedLists(int n) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < n; i++) {
            b.append("  ".repeat(i)).append("- ").append(word()).append('\n');
        }
        return b.toString();
    }

    private String tableInQuotes(int depth) {
        String q = ">".repeat(depth) + " ";
        return q + "| fruit | valley |\n" + q + "|---|---|\n" + q + "| " + word() + " | " + word() + " |\n";
    }

    private String wideTable(int columns) {
        return "|" + " a |".repeat(columns) + "\n|" + "---|".repeat(columns) + "\n|" + (" " + word() + " |").repeat(columns / 8) + "\n";
    }

    private String token(int chars) {
        StringBuilder b = new StringBuilder(chars);
        while (b.length() < chars) {
            b.append((char) ('a' + random.nextInt(26)));
        }
        return b.toString();
    }

    private String paragraphs(int n) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < n; i++) {
            b.append(word()).append("\n\n");
        }
        return b.toString();
    }

    /** Words under runs of combining marks, and one letter under 10,000 of them. */
    private String combining() {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < 2_000; i++) {
            b.append(word()).append("\u0301\u0308\u20dd".repeat(1 + random.nextInt(20))).append(' ');
        }
        return b.append('e').append("\u0301".repeat(10_000)).append(". ").append(word()).toString();
    }

    /** Words wrapped in every kind of bidi control, embeddings left open. */
    private String bidi() {
        String[] controls = {"\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068", "\u2069", "\u200e",
            "\u200f", "\u061c"};
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < 20_000; i++) {
            b.append(controls[random.nextInt(controls.length)]).append(word()).append(i % 7 == 0 ? ". " : " ");
        }
        return b.toString();
    }

    /** Lone high and low surrogates and reversed pairs inside and between words. */
    private String surrogates() {
        String[] lone = {"\ud800", "\udfff", "\udbff", "\udc00", "\udc00\ud800"};
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < 5_000; i++) {
            b.append(word()).append(lone[random.nextInt(lone.length)]).append(i % 5 == 0 ? ".\n\n" : " ");
        }
        return b.toString();
    }

    /** NUL inside words, as separators and in runs. */
    private String nul() {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < 5_000; i++) {
            b.append(word()).append(i % 3 == 0 ? "\u0000" : " ").append(i % 11 == 0 ? "\u0000".repeat(100) + "\n\n" : "");
        }
        return b.toString();
    }

    private static final char[] HEX = "0123456789abcdef".toCharArray();

    /** {@code s} as a JSON string literal of printable ASCII: everything else escaped, lone surrogates included. */
    public static String jsonString(String s) {
        StringBuilder b = new StringBuilder(s.length() + 16).append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '"' || c == '\\') {
                b.append('\\').append(c);
            } else if (c >= 0x20 && c < 0x7f) {
                b.append(c);
            } else {
                b.append("\\u").append(HEX[c >> 12]).append(HEX[(c >> 8) & 15]).append(HEX[(c >> 4) & 15]).append(HEX[c & 15]);
            }
        }
        return b.append('"').toString();
    }
}
