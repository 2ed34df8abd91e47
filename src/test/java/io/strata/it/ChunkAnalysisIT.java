package io.strata.it;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The chunks' texts are analysed as the chunked field is: a source field mapped with a language or custom analyzer gives
 * its chunk index the same analysis, so the lexical side of {@code multi_granular} matches what a {@code match} on the
 * field matches (it used to search every chunk index with the standard analyzer: "walked" found no chunk of a text that
 * says "walking" under a stemming analyzer). Oracle: each parent's texts (its own and its children's) and the question
 * analysed by {@code _analyze} with the source field's analysis; a parent matches when they share a term.
 */
@SuppressWarnings("unchecked")
public class ChunkAnalysisIT extends StrataRestTestCase {
    private static final String PIPELINE = "{\"field\": \"%s\", \"target_index\": \"{{_index}}-chunks\", \"embed\": false, "
        + "\"strategy\": {\"type\": \"recursive\", \"max_words\": 60}}";
    private static final List<String> QUESTIONS = List.of("walked", "marrying", "visits", "Weston's wedding");

    public void testACustomAnalyzerOfAnObjectField_analysesItsChunks_andTheLexicalSideMatchesAsTheFieldDoes() throws Exception {
        putPipeline("anobj", PIPELINE.formatted("doc.body"));
        call("PUT", "/anobj", """
            {"settings": {"index.default_pipeline": "anobj", "analysis": {"analyzer": {"my_en": {"type": "custom",
              "tokenizer": "standard", "filter": ["lowercase", "porter_stem"]}}}},
             "mappings": {"properties": {"doc": {"properties": {"body": {"type": "text", "analyzer": "my_en"}}}}}}""");
        writeChapters("anobj", true);
        assertMatchesLikeTheField("anobj", "doc.body", "anobj-chunks");
        Map<String, Object> text = (Map<String, Object>) ((Map<String, Object>) ((Map<String, Object>) call("GET",
            "/anobj-chunks/_mapping").get("anobj-chunks")).get("mappings")).get("properties");
        assertEquals("my_en", ((Map<String, Object>) text.get("text")).get("analyzer"));
    }

    public void testALanguageAnalyzerATemplateGives_analysesTheChunksOfTheIndexItCreates() throws Exception {
        putPipeline("antpl", PIPELINE.formatted("body"));
        call("PUT", "/_index_template/antpl", """
            {"index_patterns": ["antpl-*"], "template": {"settings": {"index.default_pipeline": "antpl"},
              "mappings": {"properties": {"body": {"type": "text", "analyzer": "english"}}}}}""");
        writeChapters("antpl-1", false);
        assertMatchesLikeTheField("antpl-1", "body", "antpl-1-chunks");
    }

    private static void writeChapters(String index, boolean inObject) throws IOException {
        StringBuilder bulk = new StringBuilder();
        int n = 0;
        for (String chapter : emmaChapters().values()) {
            if (n++ == 3) {
                break;
            }
            Map<String, Object> source = inObject ? Map.of("doc", Map.of("body", chapter)) : Map.of("body", chapter);
            bulk.append("{\"index\": {\"_id\": \"c").append(n).append("\"}}\n").append(json(source)).append('\n');
        }
        Map<String, Object> r = call("POST", "/" + index + "/_bulk?refresh=true", bulk.toString());
        assertEquals(r.toString(), false, r.get("errors"));
    }

    private static void assertMatchesLikeTheField(String index, String field, String chunkIndex) throws IOException {
        refresh(chunkIndex);
        List<Object> parents = (List<Object>) ((Map<String, Object>) call("POST", "/" + chunkIndex + "/_search",
            "{\"size\": 1000, \"_source\": {\"excludes\": [\"embedding\", \"children.embedding\"]}}").get("hits")).get("hits");
        assertTrue(parents.size() > 20);
        boolean standardDiffers = false;
        for (String question : QUESTIONS) {
            Set<String> asField = terms(index, Map.of("field", field), List.of(question));
            Set<String> asStandard = terms(index, Map.of("analyzer", "standard"), List.of(question));
            Set<String> expected = new TreeSet<>();
            Set<String> withStandard = new TreeSet<>();
            for (Object p : parents) {
                Map<String, Object> hit = (Map<String, Object>) p;
                Map<String, Object> chunk = (Map<String, Object>) hit.get("_source");
                List<String> texts = new ArrayList<>(List.of((String) chunk.get("text")));
                for (Object c : (List<Object>) chunk.get("children")) {
                    texts.add((String) ((Map<String, Object>) c).get("text"));
                }
                if (!java.util.Collections.disjoint(terms(index, Map.of("field", field), texts), asField)) {
                    expected.add((String) hit.get("_id"));
                }
                if (!java.util.Collections.disjoint(terms(index, Map.of("analyzer", "standard"), texts), asStandard)) {
                    withStandard.add((String) hit.get("_id"));
                }
            }
            assertFalse(question, expected.isEmpty());
            standardDiffers |= !expected.equals(withStandard);
            Map<String, Object> r = call("POST", "/" + chunkIndex + "/_search", json(Map.of("size", 1000, "_source", false, "query",
                Map.of("multi_granular", Map.of("query_text", question, "mode", "lexical", "k", 1000)))));
            Set<String> got = new TreeSet<>();
            for (Object h : (List<Object>) ((Map<String, Object>) r.get("hits")).get("hits")) {
                got.add((String) ((Map<String, Object>) h).get("_id"));
            }
            assertEquals(question, expected, got);
        }
        assertTrue("the field's analysis matches other parents than the standard analyzer would", standardDiffers);
    }

    /** The terms {@code _analyze} gives {@code texts} on {@code index} with {@code how} (a field, or an analyzer). */
    private static Set<String> terms(String index, Map<String, Object> how, List<String> texts) throws IOException {
        Map<String, Object> body = new java.util.HashMap<>(how);
        body.put("text", texts);
        Set<String> out = new TreeSet<>();
        for (Object t : (List<Object>) call("POST", "/" + index + "/_analyze", json(body)).get("tokens")) {
            out.add((String) ((Map<String, Object>) t).get("token"));
        }
        return out;
    }
}
