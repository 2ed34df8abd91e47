package io.strata.chunking.structure;

import io.strata.chunking.Chunk;
import io.strata.chunking.ChunkedParent;
import io.strata.chunking.ChunkingStrategy;
import io.strata.chunking.ParagraphStrategy;
import io.strata.chunking.SentenceStrategy;
import io.strata.chunking.DocumentFormat;
import io.strata.chunking.MultiGranularChunker;
import io.strata.chunking.RecursiveStrategy;
import io.strata.chunking.SentenceSegmenter;
import io.strata.chunking.Span;
import io.strata.chunking.TextIndex;
import org.commonmark.ext.gfm.tables.TableBlock;
import org.commonmark.ext.gfm.tables.TablesExtension;
import org.commonmark.node.AbstractVisitor;
import org.commonmark.node.BulletList;
import org.commonmark.node.CustomBlock;
import org.commonmark.node.FencedCodeBlock;
import org.commonmark.node.IndentedCodeBlock;
import org.commonmark.node.ListBlock;
import org.commonmark.node.Node;
import org.commonmark.node.OrderedList;
import org.commonmark.node.SourceSpan;
import org.commonmark.parser.IncludeSourceSpans;
import org.commonmark.parser.Parser;
import org.commonmark.renderer.html.HtmlRenderer;
import org.jsoup.Jsoup;
import org.jsoup.nodes.Element;
import org.junit.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;

/**
 * The structure rules on real documentation (src/test/resources/structure-corpus, subfolders included, see its
 * PROVENANCE.md), checked against the parsers' own view of each page: commonmark's heading nodes, code blocks, tables and
 * lists for Markdown; jsoup's headings and table rows for HTML. At θ = 300 and θ = 80 (which splits many tables and code
 * blocks), with children at θ/2 and θ/4.
 *
 * <p>{@code -Dstrata.structure.corpus=DIR} runs the same checks on another corpus: every {@code .md} file under
 * {@code DIR/markdown} and every {@code .html} file under {@code DIR/html}, subfolders included.
 */
public class StructureCorpusTests {
    private static final Path CORPUS = Path.of(System.getProperty("strata.structure.corpus", "src/test/resources/structure-corpus"));
    private static final SentenceSegmenter SEGMENTER = SentenceSegmenter.english();
    /**
     * Recursive cutting at two sizes, and two strategies that take the other path of the layout (each stretch of prose
     * segmented as a text of its own, as model-guided strategies are).
     */
    private static final List<ChunkingStrategy> STRATEGIES = List.of(new RecursiveStrategy(300), new RecursiveStrategy(80),
        new SentenceStrategy(3, 150), new ParagraphStrategy(120));

    /** A section of the oracle's tree: its path and the whole section (heading to the next heading of its level or higher). */
    private record Section(List<String> path, int level, Span subtree, int headingStart) {}

    /** A block the oracle knows, with the offsets a chunk may start or end at inside it, and its header (tables). */
    private record OracleBlock(Span span, List<Span> units, Span header) {}

    @Test
    public void testChunk_onMarkdownCorpus_respectsTheHeadingTreeCodeBlocksAndTables() throws IOException {
        List<Path> files = files("markdown", ".md");
        assertTrue("the corpus holds a few hundred pages", files.size() >= 150);
        int merged = 0;
        int repeatedHeaders = 0;
        for (Path file : files) {
            String source = Files.readString(file, StandardCharsets.UTF_8);
            Node document = oracleParser().parse(FrontMatter.blank(source));
            int[] lines = MarkdownStructure.lineStarts(source);
            List<Heading> headings = new ArrayList<>();
            HtmlRenderer renderer = HtmlRenderer.builder().build();
            for (Node n = document.getFirstChild(); n != null; n = n.getNext()) {
                if (n instanceof org.commonmark.node.Heading h) {
                    // the title a reader sees: the heading rendered to HTML, its text read by jsoup (a link reads as its
                    // text, <small>optional</small> as "optional", a comment as nothing)
                    String title = Jsoup.parseBodyFragment(renderer.render(h)).body().text();
                    headings.add(new Heading(h.getLevel(), title, offset(lines, h.getSourceSpans().get(0))));
                }
            }
            List<OracleBlock> blocks = new ArrayList<>();
            document.accept(new AbstractVisitor() {
                @Override
                public void visit(FencedCodeBlock code) {
                    blocks.add(block(code, lines, 0));
                }

                @Override
                public void visit(IndentedCodeBlock code) {
                    blocks.add(block(code, lines, 0));
                }

                @Override
                public void visit(CustomBlock custom) {
                    if (custom instanceof TableBlock) {
                        blocks.add(block(custom, lines, 2));
                    }
                }

                @Override
                public void visit(BulletList list) {
                    blocks.add(list(list, lines));
                    visitChildren(list);
                }

                @Override
                public void visit(OrderedList list) {
                    blocks.add(list(list, lines));
                    visitChildren(list);
                }
            });
            for (ChunkingStrategy strategy : STRATEGIES) {
                int[] counts = check(file, DocumentFormat.MARKDOWN, source, source, headings, blocks, strategy);
                merged += counts[0];
                repeatedHeaders += counts[1];
            }
        }
        assertTrue("the corpus exercises merges", merged > 0);
        assertTrue("the corpus exercises repeated table headers", repeatedHeaders > 0);
    }

    @Test
    public void testChunk_onHtmlCorpus_respectsTheHeadingTreePreBlocksAndTables() throws IOException {
        List<Path> files = files("html", ".html");
        assertTrue("the corpus holds a hundred pages", files.size() >= 100);
        int repeatedHeaders = 0;
        for (Path file : files) {
            String source = Files.readString(file, StandardCharsets.UTF_8);
            StructuredText structure = new HtmlStructure().parse(source);
            String text = structure.text();
            // the words found while extracting are those the index finds in the text
            assertBreaks(file.toString(), new TextIndex(text, SentenceSegmenter.english()).wordIndex(), structure.words());
            // the headings found are jsoup's, in order, each at an offset where its title is the text
            List<Element> elements = Jsoup.parse(source).body().select("h1, h2, h3, h4, h5, h6");
            List<Element> titled = elements.stream().filter(e -> !e.text().isBlank()).toList();
            assertEquals(file.toString(), titled.size(), structure.headings().size());
            for (int i = 0; i < titled.size(); i++) {
                Heading h = structure.headings().get(i);
                assertEquals(file.toString(), titled.get(i).text(), h.title());
                assertEquals(titled.get(i).normalName().charAt(1) - '0', h.level());
                assertTrue(file + ": " + h, text.substring(h.start()).replaceAll("\\s+", " ").startsWith(h.title()));
            }
            // every top-level table has jsoup's rows: its header row (th cells) apart, one unit per body row
            List<Element> tables = Jsoup.parse(source).body().select("table").stream()
                .filter(t -> t.parents().stream().noneMatch(p -> p.normalName().equals("table") || p.normalName().equals("ul")
                    || p.normalName().equals("ol") || p.normalName().equals("pre")))
                .toList();
            List<Block> found = structure.blocks().stream().filter(b -> b.kind() == Block.Kind.TABLE).toList();
            assertEquals(file.toString(), tables.size(), found.size());
            for (int i = 0; i < tables.size(); i++) {
                Element table = tables.get(i);
                int rows = (int) table.select("tr").stream().filter(r -> r.closest("table") == table
                    && !r.text().isBlank()).count();
                assertEquals(file + " table " + i, rows, found.get(i).units().size() + (found.get(i).header() == null ? 0 : 1));
            }
            List<OracleBlock> blocks = new ArrayList<>();
            for (Block b : structure.blocks()) {
                blocks.add(new OracleBlock(b.span(), b.units(), b.header()));
            }
            for (ChunkingStrategy strategy : STRATEGIES) {
                repeatedHeaders += check(file, DocumentFormat.HTML, source, text, structure.headings(), blocks, strategy)[1];
            }
        }
        assertTrue("the corpus exercises repeated table headers", repeatedHeaders > 0);
    }

    /** Checks every rule on one page; returns [chunks with merges, chunks repeating a header]. */
    private static int[] check(Path file, DocumentFormat format, String source, String text, List<Heading> headings,
                               List<OracleBlock> blocks, ChunkingStrategy strategy) {
        int theta = strategy.maxWords();
        var chunker = new MultiGranularChunker(strategy, MultiGranularChunker.DEFAULT_GRANULARITIES,
            SEGMENTER, StructuredLayout.of(format));
        MultiGranularChunker.Result result = chunker.chunkWithEvidence(source);
        assertEquals(text, result.index().text());
        TextIndex index = result.index();
        List<Section> sections = sections(headings, text.length());
        int[] counts = new int[2];
        List<Chunk> parents = result.parents().stream().map(ChunkedParent::parent).toList();
        assertCovers(file, text, new Span(0, text.length()), parents);
        for (ChunkedParent p : result.parents()) {
            // each level, with the coarser chunks where it has none (a child repeating one is not written), covers the parent
            List<Chunk> effective = List.of(p.parent());
            for (int level = 1; level <= 2; level++) {
                int l = level;
                List<Chunk> mine = p.children().stream().filter(c -> c.level() == l).toList();
                List<Chunk> next = new ArrayList<>(mine);
                for (Chunk e : effective) {
                    if (mine.stream().noneMatch(m -> m.start() < e.end() && e.start() < m.end())) {
                        next.add(e);
                    }
                }
                next.sort((a, b) -> Integer.compare(a.start(), b.start()));
                assertCovers(file, text, p.parent().span(), next);
                effective = next;
            }
            for (Chunk c : p.all()) {
                int limit = c.level() == 0 ? theta : MultiGranularChunker.childWords(theta, c.level() == 1 ? 0.5 : 0.25);
                String where = file + " " + strategy.type() + " θ=" + theta + " level " + c.level() + " " + c.span() + " " + c.section();
                assertNotNull(where, c.section());
                String expectedText = (c.header() == null ? "" : c.header().of(text) + "\n") + c.span().of(text);
                assertEquals(where, expectedText, c.text());
                int words = index.words(c.span()) + (c.header() == null ? 0 : index.words(c.header()));
                // a heading joins its section's first content; a child below a quarter of its level joins a neighbour
                int leading = leadingHeadingWords(text, index, sections, c.start());
                double allowed = c.level() == 0 ? limit + leading : limit * (1 + 0.25) + leading;
                assertTrue(where + " has " + words + " words", words <= allowed);
                // the section is the deepest one holding the whole chunk: exact path and level
                Section home = sections.get(0);
                for (Section s : sections) {
                    if (s.subtree().contains(c.span()) && s.path().size() >= home.path().size()) {
                        home = s;
                    }
                }
                assertEquals(where, home.path(), seen(c.section().path()));
                assertEquals(where, home.level(), c.section().level());
                // a heading inside the chunk: only a whole merged sub-section, recorded
                List<String> inside = new ArrayList<>();
                for (Section s : sections) {
                    if (s.headingStart() > c.start() && s.headingStart() < c.end()) {
                        // or the chunk leads with headings alone before it: they joined that section's first content
                        assertTrue(where + " cuts section " + s.path(), c.span().contains(index.trim(s.subtree().start(), s.subtree().end()))
                            || onlyHeadings(text, sections, c.start(), s.headingStart()));
                        if (s.path().size() == home.path().size() + 1) {
                            inside.add(s.path().get(s.path().size() - 1));
                        }
                    }
                }
                if (!inside.isEmpty() || !c.section().merged().isEmpty()) {
                    // merged titles: the direct sub-sections whose heading lies in the chunk (a merge may start at one)
                    for (String title : inside) {
                        assertTrue(where + " merged " + c.section().merged(), seen(c.section().merged()).contains(title));
                    }
                    counts[0]++;
                }
                if (c.header() != null) {
                    counts[1]++;
                }
                for (OracleBlock b : blocks) {
                    checkBlock(where, text, index, b, c, limit, headings);
                }
            }
        }
        return counts;
    }

    /**
     * A block that fits is never cut; a larger one only between its units, a table piece without its header repeats it. A
     * heading inside the block (HTML: an {@code <h3>} in a table cell) is a section boundary, which cuts any block.
     */
    private static void checkBlock(String where, String text, TextIndex index, OracleBlock b, Chunk c, int limit,
                                   List<Heading> headings) {
        Span block = index.trim(b.span().start(), b.span().end());
        boolean startsInside = c.start() > block.start() && c.start() < block.end() && !atHeading(text, c.start(), block, headings);
        boolean endsInside = c.end() > block.start() && c.end() < block.end() && !atHeading(text, c.end(), block, headings);
        if (!startsInside && !endsInside) {
            return;
        }
        assertTrue(where + " cuts a block that fits: " + block, index.words(block) > limit);
        for (int cut : new int[] { startsInside ? c.start() : -1, endsInside ? c.end() : -1 }) {
            if (cut < 0) {
                continue;
            }
            boolean atUnit = b.header() != null && cut == index.trim(b.header().start(), b.header().end()).end();
            // a header larger than the limit is cut at words, as any unit would be
            atUnit |= b.header() != null && b.header().start() < cut && cut < b.header().end() && index.words(b.header()) > limit;
            for (Span u : b.units()) {
                Span unit = index.trim(u.start(), u.end());
                atUnit |= cut == unit.start() || cut == unit.end();
                // inside a Markdown block quote, a unit's line starts at its quote markers: a cut may precede them
                int lineStart = text.lastIndexOf('\n', unit.start() - 1) + 1;
                atUnit |= lineStart <= cut && cut < unit.start() && text.substring(lineStart, cut).isBlank()
                    && text.substring(cut, unit.start()).matches("[>\\s]*");
                // a single unit larger than the limit is cut at words
                atUnit |= unit.start() < cut && cut < unit.end() && index.words(unit) + (b.header() == null ? 0 : index.words(b.header())) > limit;
            }
            assertTrue(where + " cuts block " + block + " at " + cut + " between units", atUnit);
        }
        if (b.header() != null && startsInside && c.start() >= b.header().end() && index.words(b.header()) < limit) {
            assertEquals(where + " repeats the table header", index.trim(b.header().start(), b.header().end()), c.header());
        }
    }

    /** Titles as jsoup's text() reads them (in the Markdown oracle): without the invisible characters it leaves out. */
    private static List<String> seen(List<String> titles) {
        return titles.stream().map(t -> t.replace("\u200B", "").replace("\u00AD", "")).toList();
    }

    /** Whether {@code cut} is where a heading inside {@code block} starts, but for whitespace. */
    private static boolean atHeading(String text, int cut, Span block, List<Heading> headings) {
        for (Heading h : headings) {
            if (h.start() > block.start() && h.start() < block.end() && cut <= h.start() && isBlank(text.substring(cut, h.start()))) {
                return true;
            }
        }
        return false;
    }

    /** Whether every line of {@code [from, to)} with letters or digits starts at a heading. */
    private static boolean onlyHeadings(String text, List<Section> sections, int from, int to) {
        int at = from;
        while (at < to) {
            int end = text.indexOf('\n', at);
            end = end < 0 || end > to ? to : end;
            int lineStart = at;
            boolean noText = text.substring(at, end).codePoints().noneMatch(Character::isLetterOrDigit); // blank, a rule
            if (!noText && sections.stream().noneMatch(s -> s.headingStart() == lineStart)) {
                return false;
            }
            at = end + 1;
        }
        return true;
    }

    /** Words of the heading lines a chunk starting at {@code start} leads with (0 when it starts elsewhere). */
    private static int leadingHeadingWords(String text, TextIndex index, List<Section> sections, int start) {
        int at = start;
        int words = 0;
        while (at < text.length()) {
            int lineStart = at;
            if (sections.stream().noneMatch(s -> s.headingStart() == lineStart)) {
                break;
            }
            int end = text.indexOf('\n', at);
            end = end < 0 ? text.length() : end;
            words += index.words(at, end);
            at = end + 1;
            while (at < text.length() && Character.isWhitespace(text.charAt(at))) {
                at++;
            }
        }
        return words;
    }

    private static void assertCovers(Path file, String text, Span range, List<Chunk> chunks) {
        int pos = range.start();
        for (Chunk c : chunks) {
            assertTrue(file + " " + c.span(), c.start() >= pos);
            assertTrue(file + " gap " + pos + ".." + c.start(), isBlank(text.substring(pos, c.start())));
            assertFalse(isBlank(c.span().of(text)));
            pos = c.end();
        }
        assertTrue(file + " tail", isBlank(text.substring(pos, range.end())));
    }

    /** Blank: whitespace and space separators only (an HTML page's &nbsp; is a space, not text to keep in a chunk). */
    private static boolean isBlank(String s) {
        return s.chars().allMatch(c -> Character.isWhitespace(c) || Character.isSpaceChar(c));
    }

    private static List<Section> sections(List<Heading> headings, int length) {
        List<Section> out = new ArrayList<>();
        out.add(new Section(List.of(), 0, new Span(0, length), -1));
        for (int i = 0; i < headings.size(); i++) {
            Heading h = headings.get(i);
            int end = length;
            for (int j = i + 1; j < headings.size(); j++) {
                if (headings.get(j).level() <= h.level()) {
                    end = headings.get(j).start();
                    break;
                }
            }
            List<String> path = new ArrayList<>();
            for (int k = out.size() - 1; k >= 1; k--) { // the enclosing section: the last one whose subtree holds this one
                Section s = out.get(k);
                if (s.level() < h.level() && s.subtree().end() >= end && s.subtree().start() < h.start()) {
                    path.addAll(s.path());
                    break;
                }
            }
            path.add(h.title());
            out.add(new Section(List.copyOf(path), h.level(), new Span(h.start(), end), h.start()));
        }
        return out;
    }

    private static OracleBlock block(Node node, int[] lines, int headerLines) {
        List<Span> units = new ArrayList<>();
        for (SourceSpan s : node.getSourceSpans()) {
            units.add(new Span(offset(lines, s), offset(lines, s) + s.getLength()));
        }
        Span span = new Span(units.get(0).start(), units.get(units.size() - 1).end());
        Span header = headerLines == 0 ? null : new Span(units.get(0).start(), units.get(1).end());
        return new OracleBlock(span, units.subList(headerLines, units.size()), header);
    }

    /** A list (at any depth) and its items, each from its first source span to its last. */
    private static OracleBlock list(ListBlock list, int[] lines) {
        List<Span> items = new ArrayList<>();
        for (Node item = list.getFirstChild(); item != null; item = item.getNext()) {
            List<SourceSpan> spans = item.getSourceSpans();
            SourceSpan last = spans.get(spans.size() - 1);
            items.add(new Span(offset(lines, spans.get(0)), offset(lines, last) + last.getLength()));
        }
        return new OracleBlock(new Span(items.get(0).start(), items.get(items.size() - 1).end()), items, null);
    }

    private static int offset(int[] lines, SourceSpan s) {
        return lines[s.getLineIndex()] + s.getColumnIndex();
    }

    private static Parser oracleParser() {
        return Parser.builder().extensions(List.of(TablesExtension.create())).includeSourceSpans(IncludeSourceSpans.BLOCKS).build();
    }

    private static List<Path> files(String folder, String suffix) throws IOException {
        try (Stream<Path> s = Files.walk(CORPUS.resolve(folder))) {
            return s.filter(p -> p.toString().endsWith(suffix)).sorted().toList();
        }
    }

    /** The reader's paragraph breaks equal the index's own pass (words are ICU's, found by the index from the text). */
    private static void assertBreaks(Object where, TextIndex.Words expected, TextIndex.Words actual) {
        assertEquals(String.valueOf(where), java.util.Arrays.toString(java.util.Arrays.copyOf(expected.breaks(), 2 * expected.breakCount())),
            java.util.Arrays.toString(java.util.Arrays.copyOf(actual.breaks(), 2 * actual.breakCount())));
    }
}
