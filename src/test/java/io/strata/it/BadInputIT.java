package io.strata.it;

import org.opensearch.client.ResponseException;

import java.util.Arrays;
import java.util.List;
import java.util.Map;

/** Every bad input gets a 4xx naming the field and what is allowed, and nothing is written. */
public class BadInputIT extends StrataRestTestCase {

    private static void assertBadPipeline(String processorJson, String... expected) {
        ResponseException e = callFailing("PUT", "/_ingest/pipeline/bad",
            "{\"processors\": [{\"multi_granular_chunking\": " + processorJson + "}]}");
        assertEquals(400, e.getResponse().getStatusLine().getStatusCode());
        for (String fragment : expected) {
            assertTrue("expected [" + fragment + "] in " + e.getMessage(), e.getMessage().contains(fragment));
        }
    }

    public void testPipelineCreation_rejectsInvalidConfigWithTheFieldAndAllowedValues() {
        assertBadPipeline("{\"target_index\": \"c\"}", "[field] required property is missing");
        assertBadPipeline("{\"field\": \"body\"}", "[target_index] required property is missing");
        assertBadPipeline("{\"field\": \"body\", \"target_index\": \"c\", \"colour\": 1}", "unknown option [colour]", "target_index");
        assertBadPipeline("{\"field\": \"body\", \"target_index\": \"c\", \"strategy\": {\"type\": \"magic\"}}",
            "unknown strategy [magic]", "recursive", "sentence", "paragraph");
        assertBadPipeline("{\"field\": \"body\", \"target_index\": \"c\", \"strategy\": {\"max_words\": 100}}",
            "[strategy.type] is required");
        assertBadPipeline("{\"field\": \"body\", \"target_index\": \"c\", \"strategy\": {\"type\": \"recursive\", \"max_words\": 0}}",
            "[strategy.max_words] must be an integer in [1, 8192]");
        assertBadPipeline("{\"field\": \"body\", \"target_index\": \"c\", \"strategy\": {\"type\": \"recursive\", \"max_words\": \"lots\"}}",
            "[strategy.max_words] must be an integer");
        assertBadPipeline("{\"field\": \"body\", \"target_index\": \"c\", \"strategy\": {\"type\": \"recursive\", \"sentences\": 2}}",
            "unknown option [sentences] for strategy [recursive]");
        assertBadPipeline("{\"field\": \"body\", \"target_index\": \"c\", \"granularities\": [0.25, 0.5]}", "strictly decreasing");
        assertBadPipeline("{\"field\": \"body\", \"target_index\": \"c\", \"granularities\": [1.5]}", "values must be numbers in (0, 1)");
        assertBadPipeline("{\"field\": \"body\", \"target_index\": \"c\", \"granularities\": \"half\"}", "[granularities] must be a list");
        assertBadPipeline("{\"field\": \"body\", \"target_index\": \"c\", \"copy_fields\": [\"text\"]}", "would overwrite a chunk field");
        assertBadPipeline("{\"field\": \"body\", \"target_index\": \"Bad*Name\"}", "[Bad*Name] is not a valid index name");
        assertBadPipeline("{\"field\": \"body\", \"target_index\": \"c\", \"max_chars\": -5}", "[max_chars]");
    }

    private static void assertBadDocument(String docJson, String expected) throws Exception {
        ResponseException e = callFailing("PUT", "/docs/_doc/1?pipeline=p", docJson);
        assertEquals(e.getMessage(), 400, e.getResponse().getStatusLine().getStatusCode());
        assertTrue("expected [" + expected + "] in " + e.getMessage(), e.getMessage().contains(expected));
    }

    public void testIngest_rejectsBadDocumentsAndWritesNothing() throws Exception {
        putPipeline("p", "{\"field\": \"body\", \"target_index\": \"docs-chunks\", \"max_chars\": 1000}");
        assertBadDocument("{\"title\": \"no body\"}", "field [body] is missing");
        assertBadDocument("{\"body\": 42}", "field [body] must be a string, got [number]");
        assertBadDocument("{\"body\": {\"text\": \"a\"}}", "field [body] must be a string, got [object]");
        assertBadDocument("{\"body\": true}", "field [body] must be a string, got [boolean]");
        ResponseException array = callFailing("PUT", "/docs/_doc/1?pipeline=p", "{\"body\": [\"a\", \"b\"]}");
        assertEquals(400, array.getResponse().getStatusLine().getStatusCode());
        // the reason as the caller reads it (parsed from the JSON body): a processor to paste into the pipeline
        assertEquals("[multi_granular_chunking] field [body] must be a string, got [array]; a document has one chunked text: join the "
            + "elements in a processor before this one, e.g. {\"script\": {\"source\": \"ctx.body = String.join('\\n\\n', ctx.body)\"}}",
            ((Map<?, ?>) entityAsMap(array.getResponse()).get("error")).get("reason"));
        assertBadDocument("{\"body\": \"\"}", "field [body] is empty; set [ignore_missing] to store such documents without chunks");
        assertBadDocument("{\"body\": \"   \\n  \"}", "field [body] is empty");
        assertBadDocument(json(Map.of("body", "word ".repeat(300))), "more than [max_chars] = 1000");
        // the summary's field holding the document's own data: refused, not overwritten
        assertBadDocument(json(Map.of("body", "Some text.", "strata", "my own value")), "the document's field [strata] holds data of its own");
        assertBadDocument(json(Map.of("body", "Some text.", "strata", Map.of("team", "search"))), "chunking would overwrite it");
        assertFalse(indexExists("docs-chunks"));
        assertFalse(indexExists("docs"));

        // an _id so long that the chunk ids (<_id>:<ordinal>) would pass OpenSearch's 512-byte limit: refused before the
        // source is written (it used to be written, and its chunks could never be)
        putPipeline("small", "{\"field\": \"body\", \"target_index\": \"docs-chunks\", \"embed\": false, \"strategy\": "
            + "{\"type\": \"recursive\", \"max_words\": 5}}");
        String text = "One two three four five. ".repeat(12); // 12 parents: ordinals up to 11
        ResponseException e = callFailing("PUT", "/docs/_doc/" + "x".repeat(510) + "?pipeline=small", json(Map.of("body", text)));
        assertEquals(e.getMessage(), 400, e.getResponse().getStatusLine().getStatusCode());
        assertTrue(e.getMessage(), e.getMessage().contains("[_id] of 510 bytes is too long for this document's chunk ids"));
        assertFalse(indexExists("docs"));
        call("PUT", "/docs/_doc/" + "x".repeat(509) + "?pipeline=small&refresh=true", json(Map.of("body", text))); // ":11" fits
        assertEquals(12, chunksOf("docs-chunks", "x".repeat(509)).size());
    }

    public void testIngest_withIgnoreMissing_indexesTheDocumentWithoutChunks() throws Exception {
        putPipeline("lenient", "{\"field\": \"body\", \"target_index\": \"docs-chunks\", \"ignore_missing\": true}");
        call("PUT", "/docs/_doc/1?pipeline=lenient&refresh=true", "{\"title\": \"no body\"}");
        Map<String, Object> source = (Map<String, Object>) call("GET", "/docs/_doc/1").get("_source");
        assertEquals(Map.of("title", "no body"), source);
        assertFalse(indexExists("docs-chunks"));
        // a blank text has nothing to chunk: stored as sent, and a re-ingest that blanks a text removes its chunks (as an
        // _update that blanks it does)
        call("PUT", "/docs/_doc/2?pipeline=lenient&refresh=true", json(Map.of("body", "Emma walked to Highbury in the rain.")));
        assertEquals(1, chunksOf("docs-chunks", "2").size());
        for (String blank : List.of("", "  \n\t ")) {
            call("PUT", "/docs/_doc/2?pipeline=lenient&refresh=true", json(Map.of("body", blank, "title", "t")));
            assertEquals(Map.of("body", blank, "title", "t"), call("GET", "/docs/_doc/2").get("_source"));
            assertEquals(List.of(), chunksOf("docs-chunks", "2"));
        }
    }

    /** The processor the 400 for an array names, cut out of its reason: {@code {"script": …}}, and the field to chunk after it. */
    private static List<String> remedyOf(ResponseException e) throws Exception {
        String reason = (String) ((Map<?, ?>) entityAsMap(e.getResponse()).get("error")).get("reason");
        int from = reason.indexOf("e.g. ") + 5;
        int then = reason.indexOf(", then chunk field [");
        String script = reason.substring(from, then < 0 ? reason.length() : then);
        String field = then < 0 ? null : reason.substring(then + ", then chunk field [".length(), reason.length() - 1);
        return Arrays.asList(script, field);
    }

    /**
     * An array where one text is expected — of strings ({@code body: [..]}), or of objects on the field's path
     * ({@code sections: [{text}, ..]} for {@code sections.text}): the 400 gives a processor that makes it one text, and that
     * processor, put before the chunking one as the message says, chunks every element's text (oracle: the elements
     * themselves, each found whole in a parent of the {@code _simulate} result).
     */
    public void testIngest_anArrayInTheField_getsAProcessorThatMakesItOneText() throws Exception {
        List<String> texts = List.of("Emma walked from Hartfield to Highbury in the rain.", "Mr Knightley rode to Donwell Abbey.");
        putPipeline("sections", "{\"field\": \"sections.text\", \"target_index\": \"docs-chunks\", \"embed\": false}");
        Map<String, Object> ofObjects = Map.of("sections", List.of(Map.of("text", texts.get(0)), Map.of("title", "no text"),
            Map.of("text", texts.get(1))));
        Map<String, Object> ofStrings = Map.of("body", texts);
        for (var c : List.of(List.of("sections", ofObjects, "sections.text"), List.of("p", ofStrings, "body"))) {
            if (c.get(0).equals("p")) {
                putPipeline("p", "{\"field\": \"body\", \"target_index\": \"docs-chunks\", \"embed\": false}");
            }
            ResponseException e = callFailing("PUT", "/docs/_doc/1?pipeline=" + c.get(0), json((Map<String, ?>) c.get(1)));
            assertEquals(e.getMessage(), 400, e.getResponse().getStatusLine().getStatusCode());
            List<String> remedy = remedyOf(e);
            String field = remedy.get(1) == null ? (String) c.get(2) : remedy.get(1);
            Map<String, Object> simulated = call("POST", "/_ingest/pipeline/_simulate", "{\"pipeline\": {\"processors\": ["
                + remedy.get(0) + ", {\"multi_granular_chunking\": {\"field\": \"" + field + "\", \"target_index\": \"docs-chunks\", "
                + "\"embed\": false}}]}, \"docs\": [{\"_index\": \"docs\", \"_id\": \"1\", \"_source\": " + json((Map<String, ?>) c.get(1))
                + "}]}");
            Map<String, Object> doc = (Map<String, Object>) ((Map<String, Object>) ((List<Object>) simulated.get("docs")).get(0)).get("doc");
            assertNotNull(simulated.toString(), doc);
            List<Map<String, Object>> parents = (List<Map<String, Object>>) ((Map<String, Object>) ((Map<String, Object>) doc.get("_source"))
                .get("strata")).get("chunks");
            String all = String.join("\n", parents.stream().map(p -> (String) p.get("text")).toList());
            for (String text : texts) {
                assertTrue(c.get(0) + ": [" + text + "] in " + all, all.contains(text));
            }
        }
        assertFalse(indexExists("docs"));
    }

    public void testIngest_intoItsOwnTargetIndex_isRejected() throws Exception {
        putPipeline("self", "{\"field\": \"body\", \"target_index\": \"docs\"}");
        ResponseException e = callFailing("PUT", "/docs/_doc/1?pipeline=self", "{\"body\": \"Some text.\"}");
        assertEquals(400, e.getResponse().getStatusLine().getStatusCode());
        assertTrue(e.getMessage().contains("[target_index] [docs] is the index being written"));
    }

    /**
     * A document has one summary, which its updates, deletes and {@code _reconcile} follow, so a second chunking processor
     * on the same document would have its chunks deleted by the next update (they were, before this was refused): two in
     * one pipeline (into one chunk index or two) are 400s naming both fields, a default (or the request's) pipeline and a
     * final pipeline that both chunk are 400s naming both pipelines, and nothing is written; processors with {@code ignore_missing} over documents holding one of their fields each still work.
     */
    public void testIngest_aDocumentChunkedByTwoProcessors_isRejectedNamingBoth_andNothingIsWritten() throws Exception {
        String body = json(Map.of("body", "Emma walked to the village. She met Harriet there.", "summary", "A walk and a meeting."));
        call("PUT", "/_ingest/pipeline/two", "{\"processors\": [{\"multi_granular_chunking\": {\"field\": \"body\", \"target_index\":"
            + " \"two-chunks\"}}, {\"multi_granular_chunking\": {\"field\": \"summary\", \"target_index\": \"two-chunks\"}}]}");
        call("PUT", "/_ingest/pipeline/apart", "{\"processors\": [{\"multi_granular_chunking\": {\"field\": \"body\", \"target_index\":"
            + " \"two-chunks\"}}, {\"multi_granular_chunking\": {\"field\": \"summary\", \"target_index\": \"two-summaries\"}}]}");
        for (String pipeline : List.of("two", "apart")) {
            ResponseException e = callFailing("PUT", "/two/_doc/1?pipeline=" + pipeline, body);
            assertEquals(e.getMessage(), 400, e.getResponse().getStatusLine().getStatusCode());
            assertTrue(e.getMessage(), e.getMessage().contains("already chunked by this write (field [body] into [two-chunks])"));
            assertTrue(e.getMessage(), e.getMessage().contains("so field [summary] into [two-"));
        }
        putPipeline("by-body", "{\"field\": \"body\", \"target_index\": \"two-chunks\"}");
        putPipeline("by-summary", "{\"field\": \"summary\", \"target_index\": \"two-summaries\"}");
        call("PUT", "/two", "{\"settings\": {\"index.default_pipeline\": \"by-body\", \"index.final_pipeline\": \"by-summary\"}}");
        for (String write : List.of("/two/_doc/1", "/two/_doc/1?pipeline=by-body")) { // the default or the request's pipeline
            ResponseException e = callFailing("PUT", write, body);
            assertEquals(e.getMessage(), 400, e.getResponse().getStatusLine().getStatusCode());
            assertTrue(e.getMessage(), e.getMessage().contains("index [two] chunks its documents in its final pipeline [by-summary] too,"
                + " after pipeline [by-body]"));
        }
        assertEquals(0, count("two"));
        for (String chunks : List.of("two-chunks", "two-summaries")) {
            assertTrue(chunks, !indexExists(chunks) || count(chunks) == 0);
        }
        // processors that skip a missing field: a document holding one of the two fields is chunked once, by that one
        putPipeline("by-body-if", "{\"field\": \"body\", \"target_index\": \"either-body\", \"ignore_missing\": true}");
        putPipeline("by-summary-if", "{\"field\": \"summary\", \"target_index\": \"either-summary\", \"ignore_missing\": true}");
        call("PUT", "/either2", "{\"settings\": {\"index.default_pipeline\": \"by-body-if\", \"index.final_pipeline\": \"by-summary-if\"}}");
        call("PUT", "/either2/_doc/b?refresh=true", json(Map.of("body", "Emma walked to the village.")));
        call("PUT", "/either2/_doc/s?refresh=true", json(Map.of("summary", "A walk and a meeting.")));
        assertEquals("Emma walked to the village.", chunksOf("either-body", "b").get(0).get("text"));
        assertEquals("A walk and a meeting.", chunksOf("either-summary", "s").get(0).get("text"));
        ResponseException both = callFailing("PUT", "/either2/_doc/2", body);
        assertEquals(both.getMessage(), 400, both.getResponse().getStatusLine().getStatusCode());
        assertTrue(both.getMessage(), both.getMessage().contains("chunks its documents in its final pipeline [by-summary-if] too"));

        // the final pipeline alone chunks as usual
        call("PUT", "/two/_settings", "{\"index.default_pipeline\": \"_none\"}");
        call("PUT", "/two/_doc/1?refresh=true", body);
        assertEquals("A walk and a meeting.", chunksOf("two-summaries", "1").get(0).get("text"));
        assertTrue(!indexExists("two-chunks") || count("two-chunks") == 0);

        // one chunking processor per document: either field, never both
        call("PUT", "/_ingest/pipeline/either", "{\"processors\": [{\"multi_granular_chunking\": {\"field\": \"body\", \"target_index\":"
            + " \"either-chunks\", \"ignore_missing\": true}}, {\"multi_granular_chunking\": {\"field\": \"summary\", \"target_index\":"
            + " \"either-chunks\", \"ignore_missing\": true}}]}");
        call("PUT", "/either/_doc/b?pipeline=either&refresh=true", json(Map.of("body", "Emma walked to the village.")));
        call("PUT", "/either/_doc/s?pipeline=either&refresh=true", json(Map.of("summary", "A walk and a meeting.")));
        assertEquals("Emma walked to the village.", chunksOf("either-chunks", "b").get(0).get("text"));
        assertEquals("A walk and a meeting.", chunksOf("either-chunks", "s").get(0).get("text"));
    }
}
