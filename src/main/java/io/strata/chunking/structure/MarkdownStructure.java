package io.strata.chunking.structure;

import io.strata.chunking.Span;
import org.commonmark.ext.gfm.tables.TableBlock;
import org.commonmark.ext.gfm.tables.TablesExtension;
import org.commonmark.node.AbstractVisitor;
import org.commonmark.node.BlockQuote;
import org.commonmark.node.Code;
import org.commonmark.node.FencedCodeBlock;
import org.commonmark.node.HardLineBreak;
import org.commonmark.node.IndentedCodeBlock;
import org.commonmark.node.LinkReferenceDefinition;
import org.commonmark.node.ListBlock;
import org.commonmark.node.Node;
import org.commonmark.node.SoftLineBreak;
import org.commonmark.node.SourceSpan;
import org.commonmark.node.Text;
import org.commonmark.parser.IncludeSourceSpans;
import org.commonmark.parser.Parser;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

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
 * <p>Thread-safe (commonmark's parser is).
 */
public final class MarkdownStructure {
    /**
     * Block structure only: inline content (emphasis, links, table cells) is not parsed, since chunking reads blocks and
     * inline parsing was most of the parse time (bin/strata-bench chunking). A heading keeps its content unparsed, as one
     * {@link Text}, for {@link Read#titles}.
     */
    private final Parser parser = Parser.builder()
        .extensions(List.of(TablesExtension.create()))
        .includeSourceSpans(IncludeSourceSpans.BLOCKS)
        .inlineParserFactory(context -> (lines, block) -> {
            if (block instanceof org.commonmark.node.Heading) {
                block.appendChild(new Text(lines.getContent()));
            }
        })
        .build();
    /** commonmark's full parser, for the titles: fed only the headings' source lines and the link labels. */
    private static final Parser TITLES = Parser.builder().build();

    public StructuredText parse(String source) {
        String markdown = FrontMatter.blank(source);
        Node document = parser.parse(markdown);
        Read read = new Read(source, lineStarts(source));
        List<org.commonmark.node.Heading> nodes = new ArrayList<>();
        List<Integer> starts = new ArrayList<>();
        for (Node node = document.getFirstChild(); node != null; node = node.getNext()) {
            if (node instanceof org.commonmark.node.Heading heading) {
                Span span = read.span(heading);
                if (span != null) {
                    nodes.add(heading);
                    starts.add(span.start());
                }
            } else {
                read.collect(node, read.blocks);
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

        Read(String source, int[] lineStarts) {
            this.source = source;
            this.lineStarts = lineStarts;
        }

        void collect(Node node, List<Block> out) {
            if (node instanceof LinkReferenceDefinition definition) {
                labels.add(definition.getLabel());
                return;
            }
            if (!(node instanceof FencedCodeBlock || node instanceof IndentedCodeBlock || node instanceof TableBlock
                || node instanceof ListBlock || node instanceof BlockQuote)) {
                return;
            }
            Span span = span(node);
            if (span == null) {
                return;
            }
            if (node instanceof FencedCodeBlock || node instanceof IndentedCodeBlock) {
                out.add(new Block(Block.Kind.CODE, span, lines(node), null, List.of()));
            } else if (node instanceof TableBlock) {
                List<Span> lines = lines(node);
                if (lines.size() < 2) {
                    return;
                }
                // GFM: the header row and the delimiter row, then one body row per line
                Span header = new Span(lines.get(0).start(), lines.get(1).end());
                out.add(new Block(Block.Kind.TABLE, span, lines.subList(2, lines.size()), header, List.of()));
            } else if (node instanceof ListBlock) {
                List<Span> items = new ArrayList<>();
                List<Block> nested = new ArrayList<>();
                for (Node item = node.getFirstChild(); item != null; item = item.getNext()) {
                    Span itemSpan = span(item);
                    if (itemSpan == null) {
                        continue;
                    }
                    items.add(itemSpan);
                    for (Node child = item.getFirstChild(); child != null; child = child.getNext()) {
                        collect(child, nested);
                    }
                }
                out.add(new Block(Block.Kind.LIST, span, items, null, nested));
            } else {
                for (Node child = node.getFirstChild(); child != null; child = child.getNext()) {
                    collect(child, out);
                }
            }
        }

        /** From the start of a node's first source span to the end of its last, or null when it has none. */
        Span span(Node node) {
            List<SourceSpan> spans = node.getSourceSpans();
            if (spans.isEmpty()) {
                return null;
            }
            SourceSpan first = spans.get(0);
            SourceSpan last = spans.get(spans.size() - 1);
            return trimmed(lineStart(outermostQuote(node), first), offset(last) + last.getLength());
        }

        /** The outermost block quote holding {@code node}, or null. */
        private static BlockQuote outermostQuote(Node node) {
            BlockQuote quote = null;
            for (Node n = node.getParent(); n != null; n = n.getParent()) {
                if (n instanceof BlockQuote q) {
                    quote = q;
                }
            }
            return quote;
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

        private List<Span> lines(Node node) {
            List<SourceSpan> spans = node.getSourceSpans();
            List<Span> out = new ArrayList<>(spans.size());
            BlockQuote quote = outermostQuote(node);
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
