package io.strata.chunking.structure;

import io.strata.chunking.Span;
import io.strata.chunking.TextIndex;
import org.jsoup.nodes.Element;
import org.jsoup.nodes.Node;
import org.jsoup.nodes.TextNode;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.Deque;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The text of an HTML body as chunks store it, with its headings and blocks located in it. Outside {@code <pre>},
 * whitespace runs collapse to one space (as a browser renders them); {@code <pre>} keeps its text as written. Headings,
 * paragraphs and other block elements are separated by a blank line; list items, table rows, {@code <dt>}/{@code <dd>}
 * and {@code <br>} end a line; cells of a row are joined by {@code " | "}. Scripts, styles, templates, SVG and other
 * non-text content are left out. Lists, tables and {@code <pre>} nest at most {@link NestingLimit#maxDepth()} deep (the
 * layout walks nested blocks recursively); other elements nest as deep as the markup does (jsoup's parse and this walk are
 * iterative, linear in the markup). One instance per document.
 */
final class HtmlText {
    private final NestingLimit limit;

    HtmlText(NestingLimit limit) {
        this.limit = limit;
    }

    /** Left out with their content. */
    private static final Set<String> SKIPPED = Set.of("script", "style", "noscript", "template", "head", "svg", "math",
        "iframe", "object", "canvas", "select");

    /** A block being read: where it starts, its units so far, its header row and the blocks inside it. */
    private static final class Open {
        final Block.Kind kind;
        final int start;
        final List<Span> units = new ArrayList<>();
        final List<Block> nested = new ArrayList<>();
        Span header;

        Open(Block.Kind kind, int start) {
            this.kind = kind;
            this.start = start;
        }
    }

    /**
     * The text so far: a char array rather than a StringBuilder. A builder holding one non-Latin-1 character (an
     * {@code &mdash;}) copies every later Latin-1 string into it through a CharSequence char by char (with bounds checks
     * and calls); here each char of a text node is read once and written once, collapsed as it goes.
     */
    private char[] out = new char[4096];
    private int length;
    private final List<Heading> headings = new ArrayList<>();
    private final List<Block> blocks = new ArrayList<>();
    private final Deque<Open> open = new ArrayDeque<>();
    /** Start offsets of the open headings, rows and items (elements that may nest, in malformed input too). */
    private int[] starts = new int[16];
    private int startCount;
    private int preDepth;
    /**
     * Word starts and blank-line runs of the text, found as it is written ({@link TextIndex.Words}): the chunker's index then
     * needs no second pass over the text. Only whitespace is ever cut from the end, so what is recorded at a word stays.
     */
    private int[] wordStarts = new int[512];
    private int wordCount;
    private int[] breaks = new int[32];
    private int breakCount;

    StructuredText extract(Element root) {
        walk(root);
        trimTrailing();
        // a heading nested in another (broken markup) ends first: order them by where they start
        headings.sort(Comparator.comparingInt(Heading::start));
        return new StructuredText(new String(out, 0, length), headings, blocks,
            new TextIndex.Words(wordStarts, wordCount, breaks, breakCount));
    }

    /**
     * Depth first through {@code root}: text nodes appended, elements opened ({@link #head}) and closed ({@link #tail}),
     * skipped ones neither descended into nor closed. Iterative (documents nest deep), reading each element's child list
     * by index rather than stepping {@code nextSibling()}, which goes through the parent for every node.
     */
    private void walk(Element root) {
        if (!head(root, hasElementBefore(root))) {
            return;
        }
        Element[] parents = new Element[32];
        int[] next = new int[32];
        boolean[] elementSeen = new boolean[32];
        int depth = 0;
        Element current = root;
        int index = 0;
        boolean seen = false; // whether an element came before among the current children: a cell after one is joined
        while (true) {
            if (index < current.childNodeSize()) {
                Node child = current.childNode(index++);
                if (child instanceof TextNode text) {
                    append(text);
                } else if (child instanceof Element element) {
                    boolean afterElement = seen;
                    seen = true;
                    if (head(element, afterElement)) {
                        if (depth == parents.length) {
                            parents = Arrays.copyOf(parents, depth * 2);
                            next = Arrays.copyOf(next, depth * 2);
                            elementSeen = Arrays.copyOf(elementSeen, depth * 2);
                        }
                        parents[depth] = current;
                        elementSeen[depth] = seen;
                        next[depth++] = index;
                        current = element;
                        index = 0;
                        seen = false;
                    }
                }
                continue;
            }
            tail(current);
            if (depth == 0) {
                return;
            }
            current = parents[--depth];
            index = next[depth];
            seen = elementSeen[depth];
            parents[depth] = null;
        }
    }

    /**
     * Opens {@code element} ({@code afterElement}: an element precedes it among its siblings); false when it is left out
     * with its content.
     */
    private boolean head(Element element, boolean afterElement) {
        String tag = element.normalName();
        if (SKIPPED.contains(tag)) {
            return false;
        }
        if (preDepth > 0) {
            if (tag.equals("br")) {
                append('\n');
            }
            return true;
        }
        switch (tag) {
            case "br" -> lineBreak();
            case "h1", "h2", "h3", "h4", "h5", "h6" -> {
                paragraphBreak();
                pushStart();
            }
            case "pre" -> {
                paragraphBreak();
                push(new Open(Block.Kind.CODE, length), tag);
                preDepth++;
            }
            case "table" -> {
                paragraphBreak();
                push(new Open(Block.Kind.TABLE, length), tag);
            }
            case "ul", "ol" -> {
                paragraphBreak();
                push(new Open(Block.Kind.LIST, length), tag);
            }
            case "tr", "li" -> {
                lineBreak();
                pushStart();
            }
            case "td", "th" -> {
                if (afterElement) {
                    trimTrailingSpaces();
                    append(" | ");
                }
            }
            case "dt", "dd", "caption" -> lineBreak();
            default -> separate(element);
        }
        return true;
    }

    /** Opens a block inside the open ones, at most {@link NestingLimit#maxDepth()} deep. */
    private void push(Open block, String tag) {
        if (open.size() == limit.maxDepth()) {
            throw limit.exceeded("[html] lists, tables and pre blocks", String.format(Locale.ROOT, "at <%s> after text offset [%d]",
                tag, length));
        }
        open.push(block);
    }

    private void tail(Element element) {
        String tag = element.normalName();
        if (preDepth > 0 && !tag.equals("pre")) {
            return;
        }
        switch (tag) {
            case "h1", "h2", "h3", "h4", "h5", "h6" -> {
                Span span = trimmed(popStart(), length);
                String title = collapsed(span).strip();
                if (!title.isEmpty()) {
                    headings.add(new Heading(tag.charAt(1) - '0', title, span.start()));
                }
                paragraphBreak();
            }
            case "pre" -> {
                preDepth--;
                close(Block.Kind.CODE);
                paragraphBreak();
            }
            case "table" -> {
                close(Block.Kind.TABLE);
                paragraphBreak();
            }
            case "ul", "ol" -> {
                close(Block.Kind.LIST);
                paragraphBreak();
            }
            case "tr" -> {
                Span row = trimmed(popStart(), length);
                Open table = open.peek();
                if (table != null && table.kind == Block.Kind.TABLE && row.length() > 0) {
                    if (table.header == null && table.units.isEmpty() && isHeaderRow(element)) {
                        table.header = row;
                    } else {
                        table.units.add(row);
                    }
                }
                lineBreak();
            }
            case "li" -> {
                Span item = trimmed(popStart(), length);
                Open list = open.peek();
                if (list != null && list.kind == Block.Kind.LIST && item.length() > 0) {
                    list.units.add(item);
                }
                lineBreak();
            }
            case "br", "td", "th" -> { }
            case "dt", "dd", "caption" -> lineBreak();
            default -> separate(element);
        }
    }

    private void separate(Element element) {
        if (element.isBlock()) {
            paragraphBreak();
        }
    }

    private void pushStart() {
        if (startCount == starts.length) {
            starts = Arrays.copyOf(starts, startCount * 2);
        }
        starts[startCount++] = length;
    }

    /** The start of the innermost open heading, row or item; the end of the text when none is open (broken nesting). */
    private int popStart() {
        return startCount == 0 ? length : starts[--startCount];
    }

    private static boolean isHeaderRow(Element row) {
        if (row.parent() != null && row.parent().normalName().equals("thead")) {
            return true;
        }
        boolean any = false;
        for (Element cell : row.children()) {
            if (!cell.normalName().equals("th")) {
                return false;
            }
            any = true;
        }
        return any;
    }

    /** Ends the innermost open block (when it is of {@code kind}: malformed nesting leaves it open otherwise). */
    private void close(Block.Kind kind) {
        if (open.isEmpty() || open.peek().kind != kind) {
            return;
        }
        Open o = open.pop();
        Span span = trimmed(o.start, length);
        if (span.length() == 0) {
            return;
        }
        List<Span> units = kind == Block.Kind.CODE ? lines(span) : o.units;
        Block block = new Block(kind, span, units, o.header, o.nested);
        if (open.isEmpty()) {
            blocks.add(block);
        } else {
            open.peek().nested.add(block);
        }
    }

    private List<Span> lines(Span span) {
        List<Span> lines = new ArrayList<>();
        int start = span.start();
        for (int i = span.start(); i <= span.end(); i++) {
            if (i == span.end() || out[i] == '\n') {
                Span line = trimmed(start, i);
                if (line.length() > 0) {
                    lines.add(line);
                }
                start = i + 1;
            }
        }
        return lines;
    }

    private void append(TextNode node) {
        String text = node.getWholeText();
        int n = text.length();
        reserve(n);
        if (preDepth > 0) {
            text.getChars(0, n, out, length);
            scan(length, length + n);
            length += n;
            return;
        }
        // each whitespace run becomes one space after text, none otherwise; read with charAt: most text nodes are a few
        // words or an indentation, for which a bulk getChars per node cost more than it saved
        char[] buf = out;
        int write = length;
        boolean afterText = write > 0 && !isSpace(buf[write - 1]);
        boolean afterWhitespace = write == 0 || TextIndex.isWhitespace(buf[write - 1]); // as the index counts it
        // no line break is written here (they collapse): after a word of this node, a run holds none, so is no paragraph break
        boolean wroteWord = false;
        int read = 0;
        while (read < n) {
            char c = text.charAt(read++);
            if (c > ' ' || !isSpace(c)) {
                boolean whitespace = (c <= ' ' || c >= '\u0080') && TextIndex.isWhitespace(c); // &nbsp; stays, and is one
                if (afterWhitespace && !whitespace) {
                    if (wroteWord) {
                        recordWord(write);
                    } else {
                        wordAt(write);
                        wroteWord = true;
                    }
                }
                afterWhitespace = whitespace;
                buf[write++] = c;
                afterText = true;
            } else {
                while (read < n && isSpace(text.charAt(read))) {
                    read++;
                }
                if (afterText) {
                    buf[write++] = ' ';
                    afterText = false;
                    afterWhitespace = true;
                }
            }
        }
        length = write;
    }

    private void append(char c) {
        reserve(1);
        out[length] = c;
        scan(length, length + 1);
        length++;
    }

    private void append(String s) {
        reserve(s.length());
        s.getChars(0, s.length(), out, length);
        scan(length, length + s.length());
        length += s.length();
    }

    /** Records the words starting in {@code out[from, to)}, just written. */
    private void scan(int from, int to) {
        boolean afterWhitespace = from == 0 || TextIndex.isWhitespace(out[from - 1]);
        for (int i = from; i < to; i++) {
            boolean whitespace = TextIndex.isWhitespace(out[i]);
            if (afterWhitespace && !whitespace) {
                wordAt(i);
            }
            afterWhitespace = whitespace;
        }
    }

    private void recordWord(int i) {
        if (wordCount == wordStarts.length) {
            wordStarts = Arrays.copyOf(wordStarts, wordCount * 2);
        }
        wordStarts[wordCount++] = i;
    }

    /**
     * A word starts at {@code i}: recorded, and the whitespace run before it (as it now stands: cuts of the end have happened)
     * with it when the run holds a blank line, as {@link TextIndex} records paragraph breaks.
     */
    private void wordAt(int i) {
        recordWord(i);
        int j = i - 1;
        int newlines = 0;
        while (j >= 0 && TextIndex.isWhitespace(out[j])) {
            if (out[j] == '\n') {
                newlines++;
            }
            j--;
        }
        if (newlines >= 2 && j >= 0) {
            if (2 * breakCount + 2 > breaks.length) {
                breaks = Arrays.copyOf(breaks, breaks.length * 2);
            }
            breaks[2 * breakCount] = j + 1;
            breaks[2 * breakCount + 1] = i;
            breakCount++;
        }
    }

    private void reserve(int more) {
        if (length + more > out.length) {
            out = Arrays.copyOf(out, Math.max(out.length * 2, length + more));
        }
    }

    /**
     * The text of {@code span} with every run of ASCII whitespace ({@code \s}: space, tab, newline, vertical tab, form
     * feed, carriage return) replaced by one space, as {@code replaceAll("\\s+", " ")} does, without a regex per heading.
     */
    private String collapsed(Span span) {
        StringBuilder title = new StringBuilder(span.length());
        for (int i = span.start(); i < span.end(); ) {
            char c = out[i++];
            if (!isRegexSpace(c)) {
                title.append(c);
                continue;
            }
            while (i < span.end() && isRegexSpace(out[i])) {
                i++;
            }
            title.append(' ');
        }
        return title.toString();
    }

    private static boolean isRegexSpace(char c) {
        return c == ' ' || c == '\t' || c == '\n' || c == 0x0B || c == '\f' || c == '\r';
    }

    /** Whether an element precedes this one among its siblings (for the root; the walk tracks it for the others). */
    private static boolean hasElementBefore(Element element) {
        for (Node n = element.previousSibling(); n != null; n = n.previousSibling()) {
            if (n instanceof Element) {
                return true;
            }
        }
        return false;
    }

    private void lineBreak() {
        trimTrailingSpaces();
        if (length > 0 && out[length - 1] != '\n') {
            append('\n');
        }
    }

    private void paragraphBreak() {
        trimTrailingSpaces();
        if (length == 0) {
            return;
        }
        int newlines = 0;
        for (int i = length - 1; i >= 0 && out[i] == '\n' && newlines < 2; i--) {
            newlines++;
        }
        for (; newlines < 2; newlines++) {
            append('\n');
        }
    }

    private void trimTrailingSpaces() {
        while (length > 0 && (out[length - 1] == ' ' || out[length - 1] == '\t')) {
            length--;
        }
    }

    private void trimTrailing() {
        while (length > 0 && isSpace(out[length - 1])) {
            length--;
        }
    }

    /**
     * The span without surrounding whitespace, no-break spaces included: they stay in the text (they do not collapse) but,
     * as for TextIndex and jsoup, are no text of their own, so a row, item or heading of only {@code &nbsp;} is blank
     * (not a table's header, a unit or a section) and a title does not start or end with one.
     */
    private Span trimmed(int start, int end) {
        start = Math.min(start, end);
        while (start < end && isTrimmed(out[start])) {
            start++;
        }
        while (end > start && isTrimmed(out[end - 1])) {
            end--;
        }
        return new Span(start, end);
    }

    private static boolean isTrimmed(char c) {
        return isSpace(c) || c == '\u00A0' || c == '\u2007' || c == '\u202F';
    }

    private static boolean isSpace(char c) {
        return c <= ' ' && (c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f');
    }
}
