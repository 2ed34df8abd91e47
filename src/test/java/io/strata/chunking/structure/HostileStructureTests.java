package io.strata.chunking.structure;

import io.strata.chunking.DocumentFormat;
import io.strata.chunking.MultiGranularChunker;
import io.strata.chunking.RecursiveStrategy;
import io.strata.chunking.SentenceSegmenter;
import org.junit.Test;

import java.util.List;
import java.util.Locale;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

/**
 * Documents nested past what any reader needs: each reader answers within the nesting limit, and past it refuses with an
 * IllegalArgumentException naming the node setting, never a StackOverflowError (which on a node's thread exits the node).
 * Depths of 10^5 are what 100–500 KB of markup reach.
 */
public class HostileStructureTests {
    private static final String SETTING = "plugins.strata.chunking.max_nesting_depth";
    private static final int DEEP = 100_000;

    private static MultiGranularChunker chunker(DocumentFormat format) {
        return new MultiGranularChunker(new RecursiveStrategy(50), List.of(0.5, 0.25), SentenceSegmenter.forLocale(Locale.ENGLISH),
            StructuredLayout.of(format));
    }

    private static void assertRefused(DocumentFormat format, String document) {
        long start = System.nanoTime();
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> chunker(format).chunk(document));
        assertTrue(e.getMessage(), e.getMessage().contains("[" + SETTING + "]"));
        long ms = (System.nanoTime() - start) / 1_000_000;
        // HTML: jsoup parses the whole markup first (linear, yet seconds for 1.3 MB on two shared cores)
        assertTrue("refused in " + ms + " ms", ms < 15_000);
    }

    @Test
    public void testMarkdown_blockQuotesNestedPastTheLimit_refusedNamingTheSetting() {
        assertRefused(DocumentFormat.MARKDOWN, ">".repeat(5_000) + " x");
        assertRefused(DocumentFormat.MARKDOWN, "> ".repeat(DEEP) + "x");
    }

    @Test
    public void testMarkdown_listsNestedPastTheLimit_refusedNamingTheSetting() {
        assertRefused(DocumentFormat.MARKDOWN, "- ".repeat(DEEP) + "x");
        assertRefused(DocumentFormat.MARKDOWN, "1. ".repeat(DEEP) + "x");
        assertRefused(DocumentFormat.MARKDOWN, "> - ".repeat(DEEP) + "x");
    }

    @Test
    public void testMarkdown_headingWithInlineMarkupNestedPastTheLimit_refusedNamingTheSetting() {
        assertRefused(DocumentFormat.MARKDOWN, "# " + "*".repeat(DEEP) + "x" + "*".repeat(DEEP) + "\n\ntext");
        assertRefused(DocumentFormat.MARKDOWN, "# " + "_".repeat(DEEP) + "x" + "_".repeat(DEEP) + "\n\ntext");
        assertRefused(DocumentFormat.MARKDOWN, "# " + "[![".repeat(DEEP / 3) + "x" + "](u)](u)".repeat(DEEP / 3) + "\n\ntext");
    }

    @Test
    public void testHtml_listsTablesAndPreNestedPastTheLimit_refusedNamingTheSetting() {
        // items of more than θ words are laid out around their nested blocks, recursively: before the limit this one
        // overflowed the stack (in TextIndex.trim, 10^5 levels down)
        assertRefused(DocumentFormat.HTML, ("<ul><li>" + "w ".repeat(5)).repeat(DEEP));
        for (String open : List.of("<ul><li>", "<ol><li>", "<table><tr><td>", "<div><ul><li><pre>x</pre><table><tr><td>")) {
            assertRefused(DocumentFormat.HTML, open.repeat(DEEP) + "x");
        }
    }

    @Test
    public void testHtml_otherElementsNested10e5Deep_readWithinSeconds() {
        for (String open : List.of("<div>", "<blockquote>", "<b>", "<span>", "<p>", "<li>", "<a href=u>")) {
            long start = System.nanoTime();
            assertEquals(open, "x", chunker(DocumentFormat.HTML).chunk(open.repeat(DEEP) + "x").get(0).parent().text());
            long ms = (System.nanoTime() - start) / 1_000_000;
            assertTrue(open + " read in " + ms + " ms", ms < 10_000);
        }
    }

    @Test
    public void testNestingWithinTheLimit_chunkedAsUsual() {
        String quotes = ">".repeat(100) + " deep words here\n\nafter the quote";
        assertFalse(chunker(DocumentFormat.MARKDOWN).chunk(quotes).isEmpty());
        StringBuilder lists = new StringBuilder();
        for (int i = 0; i < 100; i++) {
            lists.append("  ".repeat(i)).append("- item ").append(i).append('\n');
        }
        assertFalse(chunker(DocumentFormat.MARKDOWN).chunk(lists.toString()).isEmpty());
        String html = "<div>".repeat(300) + "deep words" + "</div>".repeat(300);
        assertEquals("deep words", chunker(DocumentFormat.HTML).chunk(html).get(0).parent().text());
    }

    /** At the setting's maximum the walks that recurse per level stay inside a node's 1 MB thread stack (-Xss1m). */
    @Test
    public void testAtTheMaximumDepth_recursiveWalksFitA1MbStack() throws Exception {
        int max = NestingLimit.MAX;
        StringBuilder lists = new StringBuilder();
        for (int i = 0; i < max; i++) {
            lists.append("> ".repeat(i)).append("- item ").append(i).append(" with some words to lay out\n");
        }
        List<String[]> documents = List.of(
            new String[] {"MARKDOWN", ">".repeat(max) + " deep words here\n\nafter"},
            new String[] {"MARKDOWN", "- ".repeat(max - 1) + "x"},
            new String[] {"MARKDOWN", lists.toString()},
            // items above θ are laid out around their nested blocks, one recursion per level
            new String[] {"HTML", ("<ul><li>" + "w ".repeat(60)).repeat(max)},
            new String[] {"HTML", ("<ul><li><table><tr><th>h<tr><td>" + "w ".repeat(60)).repeat(max / 2)});
        Throwable[] failure = new Throwable[1];
        Thread thread = new Thread(null, () -> {
            try {
                for (String[] d : documents) {
                    DocumentFormat format = DocumentFormat.valueOf(d[0]);
                    new MultiGranularChunker(new RecursiveStrategy(50), List.of(0.5, 0.25), SentenceSegmenter.forLocale(Locale.ENGLISH),
                        StructuredLayout.of(format, new NestingLimit(max))).chunk(d[1]);
                }
            } catch (Throwable t) {
                failure[0] = t;
            }
        }, "max-depth", 1 << 20);
        thread.start();
        thread.join();
        if (failure[0] != null) {
            throw new AssertionError(failure[0]);
        }
    }

    @Test
    public void testMarkdown_manyUnnestedMarkersAndBrackets_chunkedAsUsual() {
        // brackets and emphasis that do not nest: no limit applies, the text is chunked
        String brackets = "[".repeat(DEEP) + "x" + "]".repeat(DEEP);
        assertFalse(chunker(DocumentFormat.MARKDOWN).chunk(brackets).isEmpty());
        assertFalse(chunker(DocumentFormat.MARKDOWN).chunk("*a* ".repeat(DEEP / 4)).isEmpty());
    }
}
