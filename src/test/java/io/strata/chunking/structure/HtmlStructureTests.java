package io.strata.chunking.structure;

import io.strata.chunking.SentenceSegmenter;
import io.strata.chunking.Span;
import io.strata.chunking.TextIndex;
import org.junit.Test;

import java.util.List;
import java.util.Random;

import static org.junit.Assert.assertEquals;

/** The text HtmlStructure extracts and the headings and blocks it locates in it (pinned before the extraction was sped up). */
public class HtmlStructureTests {
    private static StructuredText parse(String html) {
        return new HtmlStructure().parse(html);
    }

    @Test
    public void testParse_collapsesWhitespaceRunsAcrossTextNodes() {
        assertEquals("one two three four\n\nfive", parse("<p>  one \t\n two <b> three </b>  four</p><p>five</p>").text());
    }

    @Test
    public void testParse_keepsPreTextAsWrittenWithBreaksAsNewlinesAndCutsItBetweenLines() {
        StructuredText t = parse("<p>before</p><pre>  a  b\n\tc<br>d<script>x</script>e</pre><p>after</p>");
        assertEquals("before\n\n  a  b\n\tc\nde\n\nafter", t.text());
        assertEquals(List.of(new Block(Block.Kind.CODE, new Span(10, 20), List.of(new Span(10, 14), new Span(16, 17), new Span(18, 20)),
            null, List.of())), t.blocks());
    }

    @Test
    public void testParse_joinsTheCellsOfARowAndTakesAnAllThRowAsTheHeader() {
        StructuredText t = parse("<table><tr><th>k</th><th>v</th></tr><tr><td>a</td> <td>b</td></tr>"
            + "<tr><td><b>c</b></td><td>d<br>e</td></tr></table>");
        assertEquals("k | v\na | b\nc | d\ne", t.text());
        assertEquals(List.of(new Block(Block.Kind.TABLE, new Span(0, 19), List.of(new Span(6, 11), new Span(12, 19)), new Span(0, 5),
            List.of())), t.blocks());
    }

    @Test
    public void testParse_endsLinesAtDefinitionsCaptionsAndListItems() {
        StructuredText t = parse("<dl><dt>term</dt><dd>definition</dd></dl><table><caption>Cap</caption><tr><td>x</td></tr></table>"
            + "<ol><li>one<li>two</ol>");
        assertEquals("term\ndefinition\n\nCap\n\nx\n\none\ntwo", t.text());
        assertEquals(List.of(
            new Block(Block.Kind.TABLE, new Span(17, 23), List.of(new Span(22, 23)), null, List.of()),
            new Block(Block.Kind.LIST, new Span(25, 32), List.of(new Span(25, 28), new Span(29, 32)), null, List.of())), t.blocks());
    }

    @Test
    public void testParse_collapsesEveryAsciiWhitespaceInHeadingTitlesAndSkipsBlankHeadings() {
        StructuredText t = parse("<h2>A<br>B\u000BC  <i>D</i>\t</h2><p>text</p><h3> </h3><p>more</p>");
        assertEquals("A\nB\u000BC D\n\ntext\n\nmore", t.text());
        assertEquals(List.of(new Heading(2, "A B C D", 0)), t.headings());
    }

    @Test
    public void testParse_keepsCharactersBeyondLatin1AndNoBreakSpaces() {
        assertEquals("a \u2014 b\n\nc\u00A0d", parse("<p>a &mdash; b</p><p>c\u00A0d</p>").text());
    }

    @Test
    public void testParse_takesRowsItemsAndHeadingsOfOnlyNoBreakSpacesAsBlank() {
        // as in the Apache httpd manual (mod_lbmethod_byrequests): a spacer row of &nbsp; is no row, and no header either
        StructuredText t = parse("<h2>&nbsp;</h2><h2>&nbsp;Usage&nbsp;</h2><table><tr><th>&nbsp;</th></tr><tr><th>k</th><th>v</th></tr>"
            + "<tr><td>a</td><td>b</td></tr><tr><td colspan=2>&nbsp;</td></tr><tr><td>c</td><td>d</td></tr></table>"
            + "<ul><li>&nbsp;<li>e</ul>");
        assertEquals("\u00A0\n\n\u00A0Usage\u00A0\n\n\u00A0\nk | v\na | b\n\u00A0\nc | d\n\n\u00A0\ne", t.text());
        assertEquals(List.of(new Heading(2, "Usage", 4)), t.headings());
        assertEquals(List.of(
            new Block(Block.Kind.TABLE, new Span(14, 33), List.of(new Span(20, 25), new Span(28, 33)), new Span(14, 19), List.of()),
            new Block(Block.Kind.LIST, new Span(37, 38), List.of(new Span(37, 38)), null, List.of())), t.blocks());
    }

    @Test
    public void testParse_leavesOutHeadScriptsStylesTemplatesAndOtherNonText() {
        assertEquals("shown\n\nend", parse("<head><style>p{}</style><script>var x;</script></head><body><p>shown</p>"
            + "<template>hidden</template><noscript>no</noscript><svg><text>s</text></svg><select><option>o</select>end</body>").text());
    }

    @Test
    public void testParse_onDeeplyNestedMarkup_readsTheTextWithoutOverflowing() {
        String html = "<div>" + "<div>".repeat(5000) + "deep" + "</div>".repeat(5000) + " tail</div>";
        assertEquals("deep\n\ntail", parse(html).text());
    }

    @Test
    public void testParse_findsTheWordsAndBlankLinesTheIndexFinds_whileExtracting() {
        List<String> pages = List.of("", "<p>   </p>", "x", "<p>a</p><p>b</p>", "<pre>\n\n  code\n\n\n  more\t\u000B end</pre>after",
            "<p>one\u00A0two \u00A0 three\u3000four\u2003five</p><h2>\u00A0Title </h2>", "<table><tr><th>a</th><th> b </th></tr>"
                + "<tr><td>1</td><td></td><td>3</td></tr></table>", "<ul><li>a<br>b<li> c</ul><dl><dt>t<dd>d</dl>",
            "<div>lead <span>in</span>line\u000B\u001Cx<div>nested</div>  tail</div>", "<p>x</p><pre>\n</pre><p>\u00A0</p><p>y</p>");
        for (String page : pages) {
            StructuredText structure = parse(page);
            assertBreaks(page, new TextIndex(structure.text(), SentenceSegmenter.english()).wordIndex(), structure.words());
        }
    }

    /** Random tag soup (unclosed, misnested, whitespace of every kind, entities): the words found as written are the index's. */
    @Test
    public void testParse_onRandomTagSoup_findsTheWordsTheIndexFinds() {
        String[] parts = { "<p>", "</p>", "<div>", "</div>", "<pre>", "</pre>", "<br>", "<table>", "<tr>", "<td>", "<th>", "</tr>",
            "<ul>", "<li>", "</ul>", "<h2>", "</h2>", "<b>", "</b>", "<script>x y</script>", " ", "  ", "\n", "\n\n", "\t", "\r\n",
            "&nbsp;", "\u00A0", "\u2003", "\u000B", "\u001F", "word", "two words", "é", "日本", "|", ".", "\u2028" };
        Random random = new Random(42);
        for (int page = 0; page < 2000; page++) {
            StringBuilder html = new StringBuilder();
            for (int i = random.nextInt(40); i >= 0; i--) {
                html.append(parts[random.nextInt(parts.length)]);
            }
            StructuredText structure = parse(html.toString());
            assertBreaks(html.toString(), new TextIndex(structure.text(), SentenceSegmenter.english()).wordIndex(), structure.words());
        }
    }

    /** The reader's paragraph breaks equal the index's own pass (words are ICU's, found by the index from the text). */
    private static void assertBreaks(Object where, TextIndex.Words expected, TextIndex.Words actual) {
        assertEquals(String.valueOf(where), java.util.Arrays.toString(java.util.Arrays.copyOf(expected.breaks(), 2 * expected.breakCount())),
            java.util.Arrays.toString(java.util.Arrays.copyOf(actual.breaks(), 2 * actual.breakCount())));
    }
}
