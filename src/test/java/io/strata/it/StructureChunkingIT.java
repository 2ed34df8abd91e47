package io.strata.it;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * {@code format: markdown} and {@code html} on a real node: a real documentation page through a pipeline; the chunk
 * documents carry their section paths, and their offsets read against the source (Markdown) or the extracted text that
 * {@code _chunk} returns (HTML).
 */
public class StructureChunkingIT extends StrataRestTestCase {
    private static final Path CORPUS = Path.of("src/test/resources/structure-corpus");

    @SuppressWarnings("unchecked")
    public void testPipeline_withMarkdownFormat_storesSectionsAndExactOffsets() throws Exception {
        String page = Files.readString(CORPUS.resolve("markdown/_install-and-configure_install-opensearch_docker.md"));
        putPipeline("docs-md", """
            {"field": "body", "target_index": "docs-md-chunks", "format": "markdown", "embed": false}""");
        bulk("docs-md", "docs-md", Map.of("docker", Map.of("body", page)));
        List<Map<String, Object>> chunks = chunksOf("docs-md-chunks", "docker");
        assertTrue(chunks.size() > 5);
        boolean linux = false;
        for (Map<String, Object> chunk : chunks) {
            int start = (Integer) chunk.get("start");
            int end = (Integer) chunk.get("end");
            String expected = chunk.containsKey("header_start")
                ? page.substring((Integer) chunk.get("header_start"), (Integer) chunk.get("header_end")) + "\n" + page.substring(start, end)
                : page.substring(start, end);
            assertEquals(expected, chunk.get("text"));
            List<String> section = (List<String>) chunk.get("section");
            assertNotNull(section);
            linux |= section.equals(List.of("Installing OpenSearch with Docker", "Configure important host settings"))
                && ((List<String>) chunk.getOrDefault("merged_sections", List.of())).contains("Linux settings");
            for (Map<String, Object> child : (List<Map<String, Object>>) chunk.get("children")) {
                assertEquals(page.substring((Integer) child.get("start"), (Integer) child.get("end")), child.get("text"));
                assertNotNull(child.get("section"));
            }
        }
        assertTrue("the host settings section with its Linux sub-section merged", linux);
        // the section path is a keyword: chunks of one section are found by it
        Map<String, Object> r = call("POST", "/docs-md-chunks/_search", """
            {"query": {"term": {"section": "Password requirements"}}}""");
        assertTrue(((Number) ((Map<String, Object>) ((Map<String, Object>) r.get("hits")).get("total")).get("value")).intValue() >= 1);
    }

    /**
     * A table piece stores its table's header row before its own rows; the header's place in the source is elsewhere. The
     * query's evidence sentences of such a parent are still quoted at their offsets in the source (oracle: the page), inside
     * the parent, and never the repeated header.
     */
    @SuppressWarnings("unchecked")
    public void testEvidenceSentences_ofATablePieceWithItsRepeatedHeader_quoteTheSourceAtTheirOffsets() throws Exception {
        String page = orchardTable();
        putPipeline("docs-tbl", """
            {"field": "body", "target_index": "docs-tbl-chunks", "format": "markdown", "embed": false,
             "strategy": {"type": "recursive", "max_words": 60}}""");
        bulk("docs-tbl", "docs-tbl", Map.of("orchard", Map.of("body", page)));
        refresh("docs-tbl-chunks");
        Map<String, Object> r = call("POST", "/docs-tbl-chunks/_search", """
            {"size": 5, "query": {"multi_granular": {"query_text": "fruit37 valley37 fruit", "k": 5,
             "evidence": {"chunks": 1, "sentences": 3}}}}""");
        boolean tablePiece = false;
        for (Map<String, Object> hit : (List<Map<String, Object>>) ((Map<String, Object>) r.get("hits")).get("hits")) {
            Map<String, Object> source = (Map<String, Object>) hit.get("_source");
            Map<String, Object> pack = (Map<String, Object>) ((List<Object>) ((Map<String, Object>) hit.get("fields"))
                .get("strata_evidence")).get(0);
            List<Map<String, Object>> sentences = (List<Map<String, Object>>) pack.get("sentences");
            for (Map<String, Object> sentence : sentences) {
                int start = (Integer) sentence.get("start");
                int end = (Integer) sentence.get("end");
                assertTrue(hit.get("_id") + ": " + sentence, start >= (Integer) source.get("start") && end <= (Integer) source.get("end"));
                assertEquals(hit.get("_id") + ": " + sentence, page.substring(start, end), sentence.get("text"));
            }
            tablePiece |= source.containsKey("header_start") && !sentences.isEmpty();
        }
        assertTrue("a table piece with its repeated header among the hits, with sentences", tablePiece);
    }

    @SuppressWarnings("unchecked")
    public void testPipeline_withHtmlFormat_storesSectionsAndOffsetsIntoTheExtractedText() throws Exception {
        String page = Files.readString(CORPUS.resolve("html/copy.html"));
        putPipeline("docs-html", """
            {"field": "body", "target_index": "docs-html-chunks", "format": "html", "embed": false}""");
        bulk("docs-html", "docs-html", Map.of("copy", Map.of("body", page)));
        Map<String, Object> preview = call("POST", "/_plugins/_strata/_chunk", json(Map.of("text", page, "format", "html")));
        String text = (String) preview.get("document_text");
        assertFalse(text.contains("<table"));
        List<Map<String, Object>> chunks = chunksOf("docs-html-chunks", "copy");
        assertEquals(((List<Object>) preview.get("parents")).size(), chunks.size());
        for (Map<String, Object> chunk : chunks) {
            int start = (Integer) chunk.get("start");
            int end = (Integer) chunk.get("end");
            String expected = chunk.containsKey("header_start")
                ? text.substring((Integer) chunk.get("header_start"), (Integer) chunk.get("header_end")) + "\n" + text.substring(start, end)
                : text.substring(start, end);
            assertEquals(expected, chunk.get("text"));
            assertEquals("Copy", ((List<String>) chunk.get("section")).get(0));
        }
    }

    public void testPipeline_withUnknownFormat_failsNamingTheSupportedValues() {
        var e = callFailing("PUT", "/_ingest/pipeline/bad-format", """
            {"processors": [{"multi_granular_chunking": {"field": "body", "target_index": "x-chunks", "format": "pdf"}}]}""");
        assertTrue(e.getMessage(), e.getMessage().contains("unknown value [pdf]; supported: [text, markdown, html]"));
    }
}
