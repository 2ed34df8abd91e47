package io.strata.chunking.structure;

import org.commonmark.ext.gfm.tables.TablesExtension;
import org.commonmark.node.Node;
import org.commonmark.parser.Parser;
import org.junit.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;

public class MarkdownStructureTests {
    /** The titles of the top-level headings when commonmark parses the whole document with its inline content. */
    private static List<String> fullParseTitles(String markdown) {
        Parser full = Parser.builder().extensions(List.of(TablesExtension.create())).build();
        List<String> titles = new ArrayList<>();
        for (Node n = full.parse(FrontMatter.blank(markdown)).getFirstChild(); n != null; n = n.getNext()) {
            if (n instanceof org.commonmark.node.Heading) {
                titles.add(MarkdownStructure.title(n));
            }
        }
        return titles;
    }

    private static List<String> titles(String markdown) {
        return new MarkdownStructure().parse(markdown).headings().stream().map(Heading::title).toList();
    }

    @Test
    public void testParse_headingTitlesWithInlineMarkup_readAsTheFullParseDoes() {
        String markdown = """
            ---
            title: front matter
            ---
              ## Install *the* `plugin` ##

            Setext with **strong**
            and a second line
            ===

            Hard \s
            break
            ---

            # C# and F\\# &amp; &copy; \\*not emphasis\\*

            # A [reference link][ref], a [collapsed][], a [shortcut] and an ![image][ref]

            ## An [undefined reference][nowhere] stays text

            ### An <span>inline tag</span> and <https://example.org> and a [link](http://x "t")

            > [ref]: http://example.org
            > "its title on the next line"

            - [Collapsed]:
              http://example.org/on/the/next/line

            [shortcut]: /url

            | a | b |
            |---|---|
            | 1 | 2 |

            #### [Multi
            line label] without a definition, and # trailing hashes ###

            ### Plain: 50% of $x ~ {y} | z (Café, "quoted") ###

            Plain setext, one line
            ----------------------
            """;
        List<String> expected = fullParseTitles(markdown);
        assertEquals(10, expected.size());
        assertEquals("Plain: 50% of $x ~ {y} | z (Café, \"quoted\")", expected.get(8));
        assertEquals("Install the plugin", expected.get(0));
        assertEquals("A reference link, a collapsed, a shortcut and an image", expected.get(4));
        assertEquals(expected, titles(markdown));
    }

    @Test
    public void testParse_withCrlfAndNoHeadings_readsTitlesAndNothing() {
        String crlf = "# One *a*\r\n\r\ntext\r\n\r\nTwo\r\n---\r\n";
        assertEquals(List.of("One a", "Two"), titles(crlf));
        assertEquals(fullParseTitles(crlf), titles(crlf));
        assertEquals(List.of(), titles("just a paragraph\n\n    code\n"));
    }

    @Test
    public void testLineStarts_splitsAtLfCrlfAndCr() {
        assertArrayEquals(new int[] { 0, 2, 5, 7 }, MarkdownStructure.lineStarts("a\nb\r\nc\rd"));
        assertArrayEquals(new int[] { 0, 2, 4 }, MarkdownStructure.lineStarts("a\nb\n"));
        assertArrayEquals(new int[] { 0 }, MarkdownStructure.lineStarts(""));
    }
}
