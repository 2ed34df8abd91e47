package io.strata.it;

import org.opensearch.client.ResponseException;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Contextual chunk headers ({@code context}) on the real node, against an oracle: every chunk's vector must be bitwise the
 * {@code _embed} passage vector of "header, blank line, its text", the header computed here from the document's fields and
 * the chunk's section; stored {@code text} and offsets stay the source's. Through a write alias and from an object field;
 * a changed title re-embeds; {@code late} opens the parent's pass with the header; {@code lexical} makes BM25 find the header.
 */
@SuppressWarnings("unchecked")
public class ContextHeadersIT extends StrataRestTestCase {

    /** Half a chapter: a few θ-120 parents with their θ/2 and θ/4 children. */
    private static String text() {
        String chapter = emmaChapters().values().iterator().next();
        return chapter.substring(0, chapter.indexOf(' ', 3500));
    }

    private static String pipeline(String target, String extra) {
        return "{\"field\": \"body\", \"target_index\": \"" + target + "\", \"strategy\": {\"type\": \"recursive\", \"max_words\": 120}"
            + extra + "}";
    }

    private static List<Object> embed(List<String> texts) throws Exception {
        return (List<Object>) call("POST", "/_plugins/_strata/_embed", json(Map.of("texts", texts, "purpose", "passage"))).get("vectors");
    }

    /** Every chunk (parent, then its children) of the stored chunk documents, level-0 self entries left out. */
    private static List<Map<String, Object>> allChunks(List<Map<String, Object>> docs) {
        List<Map<String, Object>> out = new ArrayList<>();
        for (Map<String, Object> doc : docs) {
            out.add(doc);
            for (Map<String, Object> child : (List<Map<String, Object>>) doc.get("children")) {
                if (((Number) child.get("level")).intValue() > 0) {
                    out.add(child);
                }
            }
        }
        return out;
    }

    /** Each chunk's text is the source's at its offsets, and its vector is the oracle's for header + text. */
    private static void assertEmbeddedWithHeaders(String body, List<Map<String, Object>> docs, java.util.function.Function<Map<String, Object>,
        String> header) throws Exception {
        List<Map<String, Object>> chunks = allChunks(docs);
        List<String> expected = new ArrayList<>();
        for (Map<String, Object> c : chunks) {
            String text = (String) c.get("text");
            assertEquals(body.substring((Integer) c.get("start"), (Integer) c.get("end")), text);
            String h = header.apply(c);
            expected.add(h.isEmpty() ? text : h + "\n\n" + text);
        }
        List<Object> oracle = embed(expected);
        for (int i = 0; i < chunks.size(); i++) {
            assertEquals("chunk " + i + " embedded as " + expected.get(i).substring(0, Math.min(60, expected.get(i).length())), oracle.get(i), chunks.get(i).get("embedding"));
        }
    }

    public void testTitleFromAnObjectField_throughAnAlias_everyVectorIsTheOraclesOfHeaderAndText_aNewTitleReembeds() throws Exception {
        putPipeline("ctx", pipeline("{{_index}}-chunks", ", \"context\": {\"fields\": [\"meta.title\"]}"));
        call("PUT", "/ctx-000001", "{\"aliases\": {\"ctx-books\": {\"is_write_index\": true}}}");
        String body = text();
        call("PUT", "/ctx-books/_doc/emma?pipeline=ctx&refresh=true", json(Map.of("body", body, "meta", Map.of("title", "Emma, by Jane Austen"))));
        List<Map<String, Object>> first = chunksOf("ctx-000001-chunks", "emma");
        assertTrue(first.size() >= 3);
        assertNull("the header is embedded, not stored", first.get(0).get("context_header"));
        assertEmbeddedWithHeaders(body, first, c -> "Emma, by Jane Austen");

        // the same title again: vectors reused; a new title: every chunk re-embedded with it
        call("PUT", "/ctx-books/_doc/emma?pipeline=ctx&refresh=true", json(Map.of("body", body, "meta", Map.of("title", "Emma, by Jane Austen"))));
        assertEquals(first, chunksOf("ctx-000001-chunks", "emma"));
        call("PUT", "/ctx-books/_doc/emma?pipeline=ctx&refresh=true", json(Map.of("body", body, "meta", Map.of("title", "Emma (1815)"))));
        List<Map<String, Object>> retitled = chunksOf("ctx-000001-chunks", "emma");
        assertNotEquals(first.get(0).get("text_hash"), retitled.get(0).get("text_hash"));
        assertEmbeddedWithHeaders(body, retitled, c -> "Emma (1815)");

        // a document without the field: embedded as its text alone, as without context
        call("PUT", "/ctx-books/_doc/untitled?pipeline=ctx&refresh=true", json(Map.of("body", body)));
        assertEmbeddedWithHeaders(body, chunksOf("ctx-000001-chunks", "untitled"), c -> "");

        ResponseException object = callFailing("PUT", "/ctx-books/_doc/bad?pipeline=ctx", json(Map.of("body", body,
            "meta", Map.of("title", Map.of("main", "Emma")))));
        assertEquals(400, object.getResponse().getStatusLine().getStatusCode());
        assertTrue(object.getMessage(), object.getMessage().contains("[context.fields] field [meta.title] must be a string, a number, "
            + "a boolean or an array of them, got [object]"));
    }

    public void testMarkdown_sectionPathFollowsTheTitle_andLexicalMakesBm25FindTheHeader() throws Exception {
        String body = "# Highbury\n\nEmma Woodhouse lived with her father. " + "She was handsome, clever, and rich. ".repeat(20)
            + "\n\n## Hartfield\n\nMiss Taylor married Mr. Weston. " + "The wedding was quiet. ".repeat(30) + "\n";
        putPipeline("ctx-md", pipeline("ctx-md-chunks", ", \"format\": \"markdown\", \"granularities\": [0.5], "
            + "\"context\": {\"fields\": [\"title\"], \"lexical\": true}"));
        putPipeline("ctx-md-plain", pipeline("ctx-md-plain-chunks", ", \"format\": \"markdown\", \"granularities\": [0.5]"));
        call("PUT", "/ctx-md-src/_doc/1?pipeline=ctx-md&refresh=true", json(Map.of("body", body, "title", "Austenland")));
        call("PUT", "/ctx-md-plain-src/_doc/1?pipeline=ctx-md-plain&refresh=true", json(Map.of("body", body, "title", "Austenland")));
        List<Map<String, Object>> docs = chunksOf("ctx-md-chunks", "1");
        java.util.function.Function<Map<String, Object>, String> header = c -> {
            List<String> parts = new ArrayList<>(List.of("Austenland"));
            parts.addAll((List<String>) c.get("section"));
            return String.join(" › ", parts);
        };
        assertEmbeddedWithHeaders(body, docs, header);
        for (Map<String, Object> c : allChunks(docs)) {
            assertEquals(header.apply(c), c.get("context_header"));
        }
        assertTrue(allChunks(docs).stream().anyMatch(c -> "Austenland › Highbury › Hartfield".equals(c.get("context_header"))));

        // "Austenland" is only in the header: BM25 finds it with lexical headers, not without
        String query = "{\"size\": 5, \"query\": {\"multi_granular\": {\"query_text\": \"Austenland\", \"mode\": \"lexical\", \"k\": 5}}}";
        List<Object> hits = (List<Object>) ((Map<String, Object>) call("POST", "/ctx-md-chunks/_search", query).get("hits")).get("hits");
        assertEquals(Math.min(5, docs.size()), hits.size());
        List<Object> none = (List<Object>) ((Map<String, Object>) call("POST", "/ctx-md-plain-chunks/_search", query).get("hits"))
            .get("hits");
        assertEquals(0, none.size());
    }

    public void testLate_theHeaderOpensTheParentsPass() throws Exception {
        putPipeline("ctx-late", pipeline("ctx-late-chunks", ", \"children\": {\"embedding\": \"late\"}, \"context\": {\"fields\": [\"title\"]}"));
        putPipeline("late-plain", pipeline("late-plain-chunks", ", \"children\": {\"embedding\": \"late\"}"));
        String body = text();
        call("PUT", "/ctx-late-src/_doc/1?pipeline=ctx-late&refresh=true", json(Map.of("body", body, "title", "Emma")));
        call("PUT", "/late-plain-src/_doc/1?pipeline=late-plain&refresh=true", json(Map.of("body", body, "title", "Emma")));
        List<Map<String, Object>> late = chunksOf("ctx-late-chunks", "1");
        List<Map<String, Object>> plain = chunksOf("late-plain-chunks", "1");
        List<String> parents = late.stream().map(p -> "Emma\n\n" + p.get("text")).toList();
        List<Object> oracle = embed(parents);
        for (int p = 0; p < late.size(); p++) {
            assertEquals("parent " + p + ": pooled from the pass over header + text", oracle.get(p), late.get(p).get("embedding"));
            List<Map<String, Object>> children = (List<Map<String, Object>>) late.get(p).get("children");
            List<Map<String, Object>> plainChildren = (List<Map<String, Object>>) plain.get(p).get("children");
            for (int c = 1; c < children.size(); c++) {
                assertEquals(plainChildren.get(c).get("text"), children.get(c).get("text"));
                assertNotEquals("child " + c + " of parent " + p + " sees the header", plainChildren.get(c).get("embedding"),
                    children.get(c).get("embedding"));
            }
        }
    }

    public void testChunkPreview_showsEachChunksHeader_andErrorsNameTheField() throws Exception {
        Map<String, Object> r = call("POST", "/_plugins/_strata/_chunk", json(Map.of("text", "# Install\n\nRun it.\n\n## On Linux\n\nUnpack it.\n",
            "format", "markdown", "strategy", Map.of("type", "recursive", "max_words", 3), "granularities", List.of(),
            "context", Map.of("fields", List.of("title")), "document", Map.of("title", "Strata"))));
        List<Map<String, Object>> parents = (List<Map<String, Object>>) r.get("parents");
        assertEquals(List.of("Strata › Install", "Strata › Install › On Linux"),
            parents.stream().map(p -> p.get("context_header")).distinct().toList());
        ResponseException section = callFailing("PUT", "/_ingest/pipeline/ctx-bad", "{\"processors\": [{\"multi_granular_chunking\": "
            + pipeline("x", ", \"context\": {\"fields\": [\"title\"], \"section\": true}") + "}]}");
        assertEquals(400, section.getResponse().getStatusLine().getStatusCode());
        assertTrue(section.getMessage(), section.getMessage().contains("[context.section] needs [format] [markdown, html]"));
        ResponseException unknown = callFailing("PUT", "/_ingest/pipeline/ctx-bad", "{\"processors\": [{\"multi_granular_chunking\": "
            + pipeline("x", ", \"context\": {\"fields\": [\"title\"], \"lexicon\": true}") + "}]}");
        assertEquals(400, unknown.getResponse().getStatusLine().getStatusCode());
        assertTrue(unknown.getMessage(), unknown.getMessage().contains("supported: [fields, lexical, section]"));
    }
}
