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
import org.commonmark.node.ListBlock;
import org.commonmark.node.Node;
import org.commonmark.node.SoftLineBreak;
import org.commonmark.node.SourceSpan;
import org.commonmark.node.Text;
import org.commonmark.internal.InlineParserImpl;
import org.commonmark.parser.IncludeSourceSpans;
import org.commonmark.parser.InlineParser;
import org.commonmark.parser.InlineParserContext;
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
 * tables and lists inside list items are nested blocks of their list. A leading YAML front matter ({@code ---} … {@code ---}
 * or {@code ...}, as Jekyll and Hugo pages start) is read as plain text: it is blanked before parsing, offsets unchanged,
 * since CommonMark would otherwise read its closing {@code ---} as a setext heading underline.
 *
 * <p>Thread-safe (commonmark's parser is).
 */
public final class MarkdownStructure {
    private final Parser parser = Parser.builder()
        .extensions(List.of(TablesExtension.create()))
        .includeSourceSpans(IncludeSourceSpans.BLOCKS)
        .inlineParserFactory(MarkdownStructure::headingsOnly)
        .build();

    /**
     * Inline content (emphasis, links, table cells) is parsed for headings only, whose titles need it: chunking reads
     * block structure, and skipping the rest halves the parse time (bin/strata-bench chunking). commonmark's own inline
     * parser does the headings.
     */
    private static InlineParser headingsOnly(InlineParserContext context) {
        InlineParser full = new InlineParserImpl(context);
        return (lines, block) -> {
            if (block instanceof org.commonmark.node.Heading) {
                full.parse(lines, block);
            }
        };
    }

    public StructuredText parse(String source) {
        Node document = parser.parse(FrontMatter.blank(source));
        int[] lineStarts = lineStarts(source);
        List<Heading> headings = new ArrayList<>();
        List<Block> blocks = new ArrayList<>();
        for (Node node = document.getFirstChild(); node != null; node = node.getNext()) {
            if (node instanceof org.commonmark.node.Heading heading) {
                Span span = span(heading, source, lineStarts);
                if (span != null) {
                    headings.add(new Heading(heading.getLevel(), title(heading), span.start()));
                }
            } else {
                collect(node, source, lineStarts, blocks);
            }
        }
        return new StructuredText(source, headings, blocks);
    }

    private static void collect(Node node, String source, int[] lineStarts, List<Block> out) {
        Span span = span(node, source, lineStarts);
        if (span == null) {
            return;
        }
        if (node instanceof FencedCodeBlock || node instanceof IndentedCodeBlock) {
            out.add(new Block(Block.Kind.CODE, span, lines(node, source, lineStarts), null, List.of()));
        } else if (node instanceof TableBlock) {
            List<Span> lines = lines(node, source, lineStarts);
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
                Span itemSpan = span(item, source, lineStarts);
                if (itemSpan == null) {
                    continue;
                }
                items.add(itemSpan);
                for (Node child = item.getFirstChild(); child != null; child = child.getNext()) {
                    collect(child, source, lineStarts, nested);
                }
            }
            out.add(new Block(Block.Kind.LIST, span, items, null, nested));
        } else if (node instanceof BlockQuote) {
            for (Node child = node.getFirstChild(); child != null; child = child.getNext()) {
                collect(child, source, lineStarts, out);
            }
        }
    }

    /** From the start of a node's first source span to the end of its last, or null when it has none. */
    private static Span span(Node node, String source, int[] lineStarts) {
        List<SourceSpan> spans = node.getSourceSpans();
        if (spans.isEmpty()) {
            return null;
        }
        SourceSpan first = spans.get(0);
        SourceSpan last = spans.get(spans.size() - 1);
        int start = lineStarts[first.getLineIndex()] + first.getColumnIndex();
        int end = lineStarts[last.getLineIndex()] + last.getColumnIndex() + last.getLength();
        return trimmed(source, start, end);
    }

    /** The span without surrounding whitespace (a line inside a list item starts with part of its indentation), or null. */
    private static Span trimmed(String source, int start, int end) {
        while (start < end && Character.isWhitespace(source.charAt(start))) {
            start++;
        }
        while (end > start && Character.isWhitespace(source.charAt(end - 1))) {
            end--;
        }
        return end > start ? new Span(start, end) : null;
    }

    private static List<Span> lines(Node node, String source, int[] lineStarts) {
        List<Span> out = new ArrayList<>();
        for (SourceSpan s : node.getSourceSpans()) {
            int start = lineStarts[s.getLineIndex()] + s.getColumnIndex();
            Span line = trimmed(source, start, start + s.getLength());
            if (line != null) {
                out.add(line);
            }
        }
        return out;
    }

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
        int[] starts = new int[64];
        int n = 0;
        starts[n++] = 0;
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
