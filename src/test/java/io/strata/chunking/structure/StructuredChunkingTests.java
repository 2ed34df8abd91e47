package io.strata.chunking.structure;

import io.strata.chunking.Chunk;
import io.strata.chunking.ChunkedParent;
import io.strata.chunking.ChunkingConfig;
import io.strata.chunking.ConfigException;
import io.strata.chunking.DocumentFormat;
import io.strata.chunking.MultiGranularChunker;
import io.strata.chunking.RecursiveStrategy;
import io.strata.chunking.SentenceSegmenter;
import org.junit.Test;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

public class StructuredChunkingTests {
    private static final SentenceSegmenter SEGMENTER = SentenceSegmenter.english();

    private static List<ChunkedParent> chunk(DocumentFormat format, int theta, String text) {
        return new MultiGranularChunker(new RecursiveStrategy(theta), MultiGranularChunker.DEFAULT_GRANULARITIES, SEGMENTER, StructuredLayout.of(format))
            .chunk(text);
    }

    private static String words(String word, int n) {
        return (word + " ").repeat(n).strip() + ".";
    }

    @Test
    public void testSplit_whenTableLongerThanParent_repeatsHeaderRow() {
        StringBuilder md = new StringBuilder("# Settings\n\n| Name | Meaning |\n|---|---|\n");
        for (int i = 0; i < 40; i++) {
            md.append("| setting").append(i).append(" | ").append(words("value", 8)).append(" |\n");
        }
        String text = md.toString();
        List<ChunkedParent> parents = chunk(DocumentFormat.MARKDOWN, 60, text);
        assertTrue(parents.size() > 3);
        String header = "| Name | Meaning |\n|---|---|";
        for (int i = 0; i < parents.size(); i++) {
            Chunk p = parents.get(i).parent();
            assertTrue("every piece reads with the columns: " + p.text(), p.text().startsWith(i == 0 ? "# Settings" : header));
            assertEquals(List.of("Settings"), p.section().path());
            // the offsets keep indexing the source: the header sits where header_start/end say, the rows at start/end
            if (i > 0) {
                assertEquals(header, p.header().of(text));
                assertEquals(p.header().of(text) + "\n" + p.span().of(text), p.text());
                assertTrue("cut between rows", text.charAt(p.start() - 1) == '\n' && text.charAt(p.end()) == '\n');
            } else {
                assertNull(p.header());
            }
        }
    }

    @Test
    public void testChunk_whenCodeBlockInABlockQuoteIsSplit_cutsAtLineStartsLeavingNoQuoteMarkerBehind() {
        // as in The Rust Programming Language (ch05-03): a listing inside a "> " note, larger than a chunk
        StringBuilder md = new StringBuilder("# Methods\n\n> Note: the following are the same:\n>\n> ```rust\n");
        for (int i = 0; i < 30; i++) {
            md.append(">     let value").append(i).append(" = compute(first, second, third);\n");
        }
        String text = md.append("> ```\n").toString();
        List<ChunkedParent> parents = chunk(DocumentFormat.MARKDOWN, 40, text);
        assertTrue(parents.size() > 3);
        for (ChunkedParent p : parents) {
            for (Chunk c : p.all()) {
                // a piece ends with its last line; the next line's "> " opens the next piece
                assertTrue("ends at a line end: " + c.text(), c.end() == text.length() - 1 || text.charAt(c.end()) == '\n');
                assertTrue("starts at a line start: " + c.text(), c.start() == 0 || text.charAt(c.start() - 1) == '\n');
            }
        }
    }

    @Test
    public void testChunk_whenSiblingSectionsFitTogether_mergesThemAndRecordsTheMerge() {
        String text = "# Install\n\n" + words("intro", 44) + "\n\n## On Linux\n\nRun the script now please.\n\n## On Mac\n\nUse brew to install it.\n";
        List<ChunkedParent> parents = chunk(DocumentFormat.MARKDOWN, 50, text);
        assertEquals(2, parents.size());
        Chunk merged = parents.get(1).parent();
        assertEquals("## On Linux\n\nRun the script now please.\n\n## On Mac\n\nUse brew to install it.", merged.text());
        assertEquals(List.of("Install"), merged.section().path());
        assertEquals(1, merged.section().level());
        assertEquals(List.of("On Linux", "On Mac"), merged.section().merged());
        // children (θ/4 = 12 words: one section each) keep their own sections
        Chunk child = parents.get(1).children().stream().filter(c -> c.level() == 2).findFirst().orElseThrow();
        assertEquals(List.of("Install", "On Linux"), child.section().path());
        assertEquals(2, child.section().level());
    }

    @Test
    public void testChunk_whenSectionsDoNotFitTogether_neverCrossesAHeading() {
        String text = "# A\n\n" + words("alpha", 30) + "\n\n# B\n\n" + words("beta", 30) + "\n";
        List<ChunkedParent> parents = chunk(DocumentFormat.MARKDOWN, 40, text);
        assertEquals(2, parents.size());
        assertEquals(List.of("A"), parents.get(0).parent().section().path());
        assertEquals(List.of("B"), parents.get(1).parent().section().path());
        assertTrue(parents.get(1).parent().text().startsWith("# B"));
    }

    @Test
    public void testChunk_whenCodeBlockFitsParent_keepsItWholeWithItsProse() {
        String code = "```bash\n" + "echo one two three\n".repeat(10) + "```";
        String text = "## Run\n\n" + words("explain", 25) + "\n\n" + code + "\n\n" + words("after", 25) + "\n";
        for (ChunkedParent p : chunk(DocumentFormat.MARKDOWN, 50, text)) {
            String t = p.parent().text();
            assertTrue("the fence stays whole: " + t, !t.contains("```") || t.contains(code));
        }
    }

    @Test
    public void testChunk_whenFenceUnclosed_cutsTheRestBetweenLines() {
        String text = "# Broken\n\n```java\n" + "int x = 1; // a line of code\n".repeat(500);
        List<ChunkedParent> parents = chunk(DocumentFormat.MARKDOWN, 100, text);
        assertTrue(parents.size() > 10);
        for (ChunkedParent p : parents) {
            for (Chunk c : p.all()) {
                assertEquals(List.of("Broken"), c.section().path());
                assertTrue(c.end() == text.strip().length() || text.charAt(c.end()) == '\n');
            }
        }
    }

    @Test
    public void testChunk_onFiveMegabyteSingleSectionPages_chunksWithinTheSizeLimit() {
        String paragraph = words("lorem", 60) + "\n\n";
        String md = "# One section\n\n" + paragraph.repeat(5_000_000 / paragraph.length());
        String html = "<html><body><h1>One section</h1>" + ("<p>" + paragraph + "</p>").repeat(5_000_000 / paragraph.length());
        for (var doc : Map.of(DocumentFormat.MARKDOWN, md, DocumentFormat.HTML, html).entrySet()) {
            var chunker = new MultiGranularChunker(new RecursiveStrategy(300), MultiGranularChunker.DEFAULT_GRANULARITIES,
                SEGMENTER, StructuredLayout.of(doc.getKey()));
            var result = chunker.chunkWithEvidence(doc.getValue());
            assertTrue(result.parents().size() > 1000);
            for (ChunkedParent p : result.parents()) {
                assertTrue(result.index().words(p.parent().span()) <= 300);
                assertEquals(List.of("One section"), p.parent().section().path());
            }
        }
    }

    @Test
    public void testChunk_onBrokenHtml_readsWhatABrowserWould() {
        // unclosed p, b, td, li and pre, a heading inside a list item, no html/body
        String html = "<h2>Usage</h2><p>Run <b>it<table><tr><th>Key<th>Value<tr><td>a<td>1</table><ul><li>one<li>two"
            + "<h3>Notes</h3><pre>line 1\nline 2";
        var chunker = new MultiGranularChunker(new RecursiveStrategy(300), MultiGranularChunker.DEFAULT_GRANULARITIES, SEGMENTER,
            StructuredLayout.of(DocumentFormat.HTML));
        var result = chunker.chunkWithEvidence(html);
        String text = result.index().text();
        assertTrue(text, text.contains("Key | Value\na | 1"));
        List<List<String>> sections = result.parents().stream().map(p -> p.parent().section().path()).toList();
        assertEquals(List.of(List.of("Usage")), sections);
        // the h3 inside the unclosed list opens a sub-section, merged whole into the one parent
        assertEquals(List.of("Notes"), result.parents().get(0).parent().section().merged());
        assertTrue(text, text.endsWith("Notes\n\nline 1\nline 2"));
        for (ChunkedParent p : result.parents()) {
            for (Chunk c : p.all()) {
                assertEquals(c.span().of(text), c.text());
            }
        }
    }

    @Test
    public void testChunk_withCrlfLineEnds_keepsOffsetsExactInTheSource() {
        String text = "# Title\r\n\r\nSome text.\r\n\r\n## Part\r\n\r\n| a | b |\r\n|---|---|\r\n| 1 | 2 |\r\n";
        for (ChunkedParent p : chunk(DocumentFormat.MARKDOWN, 300, text)) {
            for (Chunk c : p.all()) {
                assertEquals(c.span().of(text), c.text());
            }
        }
        assertEquals(List.of("Title"), chunk(DocumentFormat.MARKDOWN, 300, text).get(0).parent().section().path());
    }

    @Test
    public void testChunk_withYamlFrontMatter_readsItAsTextNotAHeading() {
        String text = "---\ntitle: Docker\nparent: Install\n---\n\n# Docker\n\n" + words("body", 400) + "\n";
        List<ChunkedParent> parents = chunk(DocumentFormat.MARKDOWN, 300, text);
        assertEquals(List.of(), parents.get(0).parent().section().path());
        assertTrue(parents.get(0).parent().text().startsWith("---\ntitle: Docker"));
        assertEquals(List.of("Docker"), parents.get(1).parent().section().path());
    }

    @Test
    public void testFormat_whenAbsent_isText() {
        assertEquals(DocumentFormat.TEXT, ChunkingConfig.removeFormat(new HashMap<>()));
        Map<String, Object> config = new HashMap<>(Map.of("format", "markdown"));
        assertEquals(DocumentFormat.MARKDOWN, ChunkingConfig.removeFormat(config));
        assertTrue("consumed", config.isEmpty());
    }

    @Test
    public void testFormat_whenUnknown_namesTheFieldAndTheSupportedValues() {
        Map<String, Object> config = new HashMap<>(Map.of("format", "pdf"));
        ConfigException e = assertThrows(ConfigException.class, () -> ChunkingConfig.removeFormat(config));
        assertEquals("format", e.field());
        assertEquals("[format] unknown value [pdf]; supported: [text, markdown, html]", e.getMessage());
        Map<String, Object> nullFormat = new HashMap<>();
        nullFormat.put("format", null);
        assertThrows(ConfigException.class, () -> ChunkingConfig.removeFormat(nullFormat));
    }

    @Test
    public void testChunk_withTextFormat_carriesNoSection() {
        for (ChunkedParent p : chunk(DocumentFormat.TEXT, 300, "# Not a heading here\n\nplain text.")) {
            assertNull(p.parent().section());
        }
    }
}
