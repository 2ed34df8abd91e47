package io.strata.chunking.structure;

import io.strata.chunking.Span;
import org.commonmark.ext.gfm.tables.TableBlock;
import org.commonmark.ext.gfm.tables.TablesExtension;
import org.commonmark.node.AbstractVisitor;
import org.commonmark.internal.BlockQuoteParser;
import org.commonmark.internal.HeadingParser;
import org.commonmark.internal.ListBlockParser;
import org.commonmark.internal.ThematicBreakParser;
import org.commonmark.node.BlockQuote;
import org.commonmark.node.Code;
import org.commonmark.node.FencedCodeBlock;
import org.commonmark.node.HardLineBreak;
import org.commonmark.node.IndentedCodeBlock;
import org.commonmark.node.LinkReferenceDefinition;
import org.commonmark.node.ListBlock;
import org.commonmark.node.ListItem;
import org.commonmark.node.Node;
import org.commonmark.node.SoftLineBreak;
import org.commonmark.node.SourceSpan;
import org.commonmark.node.Text;
import org.commonmark.parser.IncludeSourceSpans;
import org.commonmark.parser.Parser;
import org.commonmark.parser.block.AbstractBlockParserFactory;
import org.commonmark.parser.block.BlockStart;
import org.commonmark.parser.block.MatchedBlockParser;
import org.commonmark.parser.block.ParserState;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * Reads Markdown (CommonMark with GFM tables, by commonmark-java) for chunking. The stored text is the Markdown source
 * itself, so every offset is exact in it: commonmark's source spans (line, column) are turned into offsets with the line
 * starts of the source, split at {@code \n}, {@code \r\n} and {@code \r} as commonmark does.
 *
 * <p>Headings are the top-level ATX and setext headings (a heading inside a list or a quote does not open a section).
 * Blocks are fenced and indented code blocks, GFM tables and lists at the top level or inside block quotes; code blocks,
 * tables and lists inside list items are nested blocks of their list; inside a block quote, a block and its lines, rows
 * and items start at the quote's {@code >} markers of their line. A leading YAML front matter ({@code ---} … {@code ---}
 * or {@code ...}, as Jekyll and Hugo pages start) is read as plain text: it is blanked before parsing, offsets unchanged,
 * since CommonMark would otherwise read its closing {@code ---} as a setext heading underline.
 *
 * <p>Block quotes and list items nest at most {@link NestingLimit#maxDepth()} deep, and so do emphasis and links in a
 * heading's title: a deeper document is refused while it is parsed ({@link DepthLimit}), before the work that grows with
 * the depth (commonmark's own work per nested list marker grows with the depth; its inline parser recurses per level of
 * emphasis).
 *
 * <p>Thread-safe (commonmark's parser is).
 */
public final class MarkdownStructure {
    private final NestingLimit limit;
    /**
     * Block structure only: inline content (emphasis, links, table cells) is not parsed, since chunking reads blocks and
     * inline parsing was most of the parse time (bin/strata-bench chunking). A heading keeps its content unparsed, as one
     * {@link Text}, for {@link Read#titles}.
     */
    private final Parser parser;
    /** commonmark's full parser, for the titles: fed only the headings' source lines and the link labels. */
    private static final Parser TITLES = Parser.builder().build();

    public MarkdownStructure() {
        this(NestingLimit.DEFAULTS);
    }

    public MarkdownStructure(NestingLimit limit) {
        this.limit = limit;
        this.parser = Parser.builder()
            .extensions(List.of(TablesExtension.create()))
            // after the tables' factory (a table row it starts opens no container), before commonmark's own factories
            .customBlockParserFactory(new DepthLimit(limit))
            .includeSourceSpans(IncludeSourceSpans.BLOCKS)
            .inlineParserFactory(context -> (lines, block) -> {
                if (block instanceof org.commonmark.node.Heading) {
                    block.appendChild(new Text(lines.getContent()));
                }
            })
            .build();
    }

    public StructuredText parse(String source) {
        String markdown = FrontMatter.blank(source);
        Node document = parser.parse(markdown);
        Read read = new Read(source, lineStarts(source), limit);
        List<org.commonmark.node.Heading> nodes = new ArrayList<>();
        List<Integer> starts = new ArrayList<>();
        for (Node node = document.getFirstChild(); node != null; node = node.getNext()) {
            if (node instanceof org.commonmark.node.Heading heading) {
                Span span = read.span(heading, null);
                if (span != null) {
                    nodes.add(heading);
                    starts.add(span.start());
                }
            } else {
                read.collect(node, null, read.blocks);
            }
        }
        List<String> titles = read.titles(nodes);
        List<Heading> headings = new ArrayList<>(nodes.size());
        for (int i = 0; i < nodes.size(); i++) {
            headings.add(new Heading(nodes.get(i).getLevel(), titles.get(i), starts.get(i)));
        }
        return new StructuredText(source, headings, read.blocks);
    }

    /** One document being read: its source, line starts, blocks and link reference labels. */
    private static final class Read {
        final String source;
        final int[] lineStarts;
        final List<Block> blocks = new ArrayList<>();
        final List<String> labels = new ArrayList<>();
        final NestingLimit limit;

        Read(String source, int[] lineStarts, NestingLimit limit) {
            this.source = source;
            this.lineStarts = lineStarts;
            this.limit = limit;
        }

        /**
         * The blocks of {@code node} into {@code out}; {@code quote} is the outermost block quote holding it (null: none).
         * Recursive, at most twice {@link NestingLimit#maxDepth()} deep (a list and its item per level), which the parse
         * enforced.
         */
        void collect(Node node, BlockQuote quote, List<Block> out) {
            if (node instanceof LinkReferenceDefinition definition) {
                labels.add(definition.getLabel());
                return;
            }
            if (!(node instanceof FencedCodeBlock || node instanceof IndentedCodeBlock || node instanceof TableBlock
                || node instanceof ListBlock || node instanceof BlockQuote)) {
                return;
            }
            Span span = span(node, quote);
            if (span == null) {
                return;
            }
            if (node instanceof FencedCodeBlock || node instanceof IndentedCodeBlock) {
                out.add(new Block(Block.Kind.CODE, span, lines(node, quote),
                    null, List.of()));
            } else if (node instanceof TableBlock) {
                List<Span> lines = lines(node, quote);
                if (lines.size() < 2) {
                    return;
                }
                // GFM: the header row and the delimiter row, then one body row per line
                Span header = new Span(lines.get(0).start(), lines.get(1).end());
                out.add(new Block(Block.Kind.TABLE, span,
                    lines.subList(2, lines.size()), header, List.of()));
            } else if (node instanceof ListBlock) {
                List<Span> items = new ArrayList<>();
                List<Block> nested = new ArrayList<>();
                for (Node item = node.getFirstChild(); item != null; item = item.getNext()) {
                    Span itemSpan = span(item, quote);
                    if (itemSpan == null) {
                        continue;
                    }
                    items.add(itemSpan);
                    for (Node child = item.getFirstChild(); child != null; child = child.getNext()) {
                        collect(child, quote, nested);
                    }
                }
                out.add(new Block(Block.Kind.LIST, span, items, null, nested));
            } else {
                BlockQuote outermost = quote != null ? quote : (BlockQuote) node;
                for (Node child = node.getFirstChild(); child != null; child = child.getNext()) {
                    collect(child, outermost, out);
                }
            }
        }

        /**
         * From the start of a node's first source span to the end of its last, or null when it has none; {@code quote} is
         * the outermost block quote holding the node (null: none).
         */
        Span span(Node node, BlockQuote quote) {
            List<SourceSpan> spans = node.getSourceSpans();
            if (spans.isEmpty()) {
                return null;
            }
            SourceSpan first = spans.get(0);
            SourceSpan last = spans.get(spans.size() - 1);
            return trimmed(lineStart(quote, first), offset(last) + last.getLength());
        }

        /**
         * Where the line of span {@code s} starts inside {@code quote} (the outermost block quote holding its node): at its
         * {@code >} markers. commonmark's spans of a block inside a quote start after the markers, and a block or a unit
         * starting there would leave the markers of its first line at the end of the chunk before it (a stray {@code >},
         * and a cut inside a line). Outside quotes (null), or on a line the quote has no span on, where {@code s} starts.
         */
        private int lineStart(BlockQuote quote, SourceSpan s) {
            if (quote == null) {
                return offset(s);
            }
            // one span per line of the quote, in line order: bisect for the line of s
            List<SourceSpan> lines = quote.getSourceSpans();
            int lo = 0;
            int hi = lines.size() - 1;
            while (lo <= hi) {
                int mid = (lo + hi) >>> 1;
                int line = lines.get(mid).getLineIndex();
                if (line < s.getLineIndex()) {
                    lo = mid + 1;
                } else if (line > s.getLineIndex()) {
                    hi = mid - 1;
                } else {
                    return Math.min(offset(lines.get(mid)), offset(s));
                }
            }
            return offset(s);
        }

        /** The span without surrounding whitespace (a line inside a list item starts with part of its indentation), or null. */
        private Span trimmed(int start, int end) {
            while (start < end && Character.isWhitespace(source.charAt(start))) {
                start++;
            }
            while (end > start && Character.isWhitespace(source.charAt(end - 1))) {
                end--;
            }
            return end > start ? new Span(start, end) : null;
        }

        private List<Span> lines(Node node, BlockQuote quote) {
            List<SourceSpan> spans = node.getSourceSpans();
            List<Span> out = new ArrayList<>(spans.size());
            for (SourceSpan s : spans) {
                int start = offset(s);
                Span line = trimmed(lineStart(quote, s), start + s.getLength());
                if (line != null) {
                    out.add(line);
                }
            }
            return out;
        }

        private int offset(SourceSpan s) {
            return lineStarts[s.getLineIndex()] + s.getColumnIndex();
        }

        /**
         * The headings' titles. A heading whose content has no character that inline parsing acts on is its own title;
         * the others are parsed by commonmark's full parser, on a small document of their source lines (each a top-level
         * heading again, alone between blank lines) and the document's link labels (a title may hold a reference link):
         * the same inline parse as in the whole document, on a few lines instead of all of it.
         */
        List<String> titles(List<org.commonmark.node.Heading> headings) {
            List<String> out = new ArrayList<>(headings.size());
            StringBuilder marked = new StringBuilder();
            for (org.commonmark.node.Heading heading : headings) {
                String content = heading.getFirstChild() instanceof Text text ? text.getLiteral() : "";
                if (isPlain(content)) {
                    out.add(content.strip());
                    continue;
                }
                out.add(null);
                int depth = inlineDepthBound(content);
                if (depth > limit.maxDepth()) {
                    throw limit.exceeded("[markdown] emphasis and links in a heading", String.format(Locale.ROOT,
                        "(up to [%d] by their markers) in the heading at offset [%d]", depth, offset(heading.getSourceSpans().get(0))));
                }
                for (SourceSpan s : heading.getSourceSpans()) {
                    int start = offset(s);
                    marked.append(source, start, start + s.getLength()).append('\n');
                }
                marked.append('\n');
            }
            if (marked.isEmpty()) {
                return out;
            }
            for (String label : labels) {
                // only whether a reference resolves matters to the text of a title, not where it points
                marked.append('[').append(label).append("]: x\n\n");
            }
            List<String> parsed = new ArrayList<>();
            for (Node node = TITLES.parse(marked.toString()).getFirstChild(); node != null; node = node.getNext()) {
                if (node instanceof org.commonmark.node.Heading) {
                    parsed.add(title(node));
                }
            }
            for (int i = 0, k = 0; i < out.size(); i++) {
                if (out.get(i) == null) {
                    // k runs short only if a heading read differently alone, which a top-level one cannot: then its content
                    out.set(i, k < parsed.size() ? parsed.get(k++) : ((Text) headings.get(i).getFirstChild()).getLiteral().strip());
                }
            }
            return out;
        }
    }

    /**
     * An upper bound of how deep commonmark's inline parser nests {@code content}: each level of emphasis takes a delimiter
     * character on either side, each link or image a {@code [}. commonmark's inline parser and {@link #title} recurse per
     * level, so a heading is refused above the limit before either runs.
     */
    static int inlineDepthBound(String content) {
        int delimiters = 0;
        int brackets = 0;
        for (int i = 0; i < content.length(); i++) {
            char c = content.charAt(i);
            if (c == '*' || c == '_') {
                delimiters++;
            } else if (c == '[') {
                brackets++;
            }
        }
        return delimiters / 2 + brackets;
    }

    /**
     * Refuses a block quote or list item that would open deeper than the limit, as commonmark reads the line (it is asked
     * before commonmark's own block starts at every container position of a line). It starts no block itself.
     */
    private static final class DepthLimit extends AbstractBlockParserFactory {
        private final NestingLimit limit;
        private final BlockQuoteParser.Factory quotes = new BlockQuoteParser.Factory();
        private final ListBlockParser.Factory lists = new ListBlockParser.Factory();
        // tried before a list by commonmark: a line of them starts no list
        private final ThematicBreakParser.Factory breaks = new ThematicBreakParser.Factory();
        private final HeadingParser.Factory headings = new HeadingParser.Factory();

        DepthLimit(NestingLimit limit) {
            this.limit = limit;
        }

        @Override
        public BlockStart tryStart(ParserState state, MatchedBlockParser matched) {
            if (state.getIndent() >= 4) {
                return BlockStart.none(); // indented code, or a continuation: no container starts here
            }
            CharSequence line = state.getLine().getContent();
            int next = state.getNextNonSpaceIndex();
            char c = next < line.length() ? line.charAt(next) : '\n';
            if (c != '>' && c != '-' && c != '+' && c != '*' && (c < '0' || c > '9')) {
                return BlockStart.none();
            }
            // the containers the new one would sit in: at most the limit, which this check keeps
            int depth = 0;
            for (Node n = matched.getMatchedBlockParser().getBlock(); n != null; n = n.getParent()) {
                if (n instanceof BlockQuote || n instanceof ListItem) {
                    depth++;
                }
            }
            if (depth < limit.maxDepth()) {
                return BlockStart.none();
            }
            boolean opens = c == '>' ? quotes.tryStart(state, matched) != null
                : lists.tryStart(state, matched) != null && breaks.tryStart(state, matched) == null
                    && headings.tryStart(state, matched) == null;
            if (opens) {
                throw limit.exceeded("[markdown] block quotes and lists", String.format(Locale.ROOT, "at line [%d]",
                    state.getLine().getSourceSpan() == null ? -1 : state.getLine().getSourceSpan().getLineIndex() + 1));
            }
            return BlockStart.none();
        }
    }

    /**
     * Whether commonmark's inline parser leaves {@code content} one text node as it is: one line of letters, digits,
     * spaces and punctuation that starts nothing (no emphasis, code, link, image, escape, entity, tag or line break).
     */
    static boolean isPlain(String content) {
        for (int i = 0; i < content.length(); i++) {
            char c = content.charAt(i);
            if (!Character.isLetterOrDigit(c) && PLAIN_PUNCTUATION.indexOf(c) < 0) {
                return false;
            }
        }
        return true;
    }

    private static final String PLAIN_PUNCTUATION = " .,:;?'\"()-/+=#%$@^~|{}";

    /** The heading's text without its markup (emphasis, links and code spans keep their text). */
    static String title(Node heading) {
        StringBuilder b = new StringBuilder();
        heading.accept(new AbstractVisitor() {
            @Override
            public void visit(Text text) {
                b.append(text.getLiteral());
            }

            @Override
            public void visit(Code code) {
                b.append(code.getLiteral());
            }

            @Override
            public void visit(SoftLineBreak lineBreak) {
                b.append(' ');
            }

            @Override
            public void visit(HardLineBreak lineBreak) {
                b.append(' ');
            }
        });
        return b.toString().strip();
    }

    /** Offsets where each line starts, lines split at \n, \r\n and \r. */
    static int[] lineStarts(String text) {
        int[] starts = new int[Math.max(16, text.length() / 32)];
        int n = 0;
        starts[n++] = 0;
        if (text.indexOf('\r') < 0) {
            // the usual case, by String.indexOf, which scans many characters at a time
            for (int i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) {
                if (n == starts.length) {
                    starts = Arrays.copyOf(starts, n * 2);
                }
                starts[n++] = i + 1;
            }
            return Arrays.copyOf(starts, n);
        }
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '\n' || c == '\r') {
                if (c == '\r' && i + 1 < text.length() && text.charAt(i + 1) == '\n') {
                    i++;
                }
                if (n == starts.length) {
                    starts = Arrays.copyOf(starts, n * 2);
                }
                starts[n++] = i + 1;
            }
        }
        return Arrays.copyOf(starts, n);
    }
}
