package io.strata.it;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Chunk indices map what they hold from the source index, so that what applications send works on them as on the source.
 * The chunks' texts are analysed as the chunked field is: a source field mapped with a language or custom analyzer gives
 * its chunk index the same analysis, so the lexical side of {@code multi_granular} matches what a {@code match} on the
 * field matches (it used to search every chunk index with the standard analyzer: "walked" found no chunk of a text that
 * says "walking" under a stemming analyzer). Oracle: each parent's texts (its own and its children's) and the question
 * analysed by {@code _analyze} with the source field's analysis; a parent matches when they share a term. And copied fields
 * are mapped as in the source: a {@code term} filter on a {@code keyword} tenant used to match nothing (the chunk index had
 * mapped it dynamically as text), a date range in the source's format compared strings.
 */
@SuppressWarnings("unchecked")
public class ChunkFieldMappingIT extends StrataRestTestCase {
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

    public void testAnIndexWideLanguageAnalyzerATemplateGives_analysesTheChunksOfTheIndexItCreates() throws Exception {
        putPipeline("antpl", PIPELINE.formatted("body"));
        call("PUT", "/_index_template/antpl", """
            {"index_patterns": ["antpl-*-docs"], "template": {"settings": {"index.default_pipeline": "antpl",
              "analysis": {"analyzer": {"default": {"type": "english"}}}}}}""");
        // the pattern does not match the chunk index's name: its analysis comes from the source's templates alone
        writeChapters("antpl-1-docs", false);
        assertMatchesLikeTheField("antpl-1-docs", "body", "antpl-1-docs-chunks");
    }

    public void testFiltersOnCopiedFields_keepTheParentsOfTheDocumentsTheSameFilterKeepsInTheSource() throws Exception {
        Map<String, List<String>> parentsOf = tenantDocuments("ancopy");
        List<String> filters = List.of("{\"term\": {\"tenant\": \"Acme Corp\"}}", "{\"term\": {\"tenant\": \"BETA-LABS\"}}",
            "{\"terms\": {\"tags\": [\"Red Team\"]}}", "{\"range\": {\"published\": {\"gte\": \"01/01/2025\", \"lt\": \"01/01/2026\"}}}",
            "{\"range\": {\"meta.rank\": {\"gte\": 6}}}", "{\"geo_distance\": {\"distance\": \"200km\", \"place\": {\"lat\": 49.0, "
                + "\"lon\": 2.0}}}", "{\"range\": {\"views\": {\"gte\": \"18446744073709551613\"}}}",
            "{\"bool\": {\"filter\": [{\"term\": {\"tenant\": \"acme corp\"}}, {\"range\": {\"published\": {\"lt\": \"01/01/2026\"}}}]}}");
        String question = "Who came to visit Hartfield?";
        for (String filter : filters) {
            Set<String> expected = new TreeSet<>();
            for (Object h : (List<Object>) ((Map<String, Object>) call("POST", "/ancopy/_search",
                "{\"size\": 100, \"_source\": false, \"query\": {\"bool\": {\"filter\": [" + filter + "]}}}").get("hits")).get("hits")) {
                expected.addAll(parentsOf.getOrDefault((String) ((Map<String, Object>) h).get("_id"), List.of()));
            }
            assertFalse(filter, expected.isEmpty());
            String mg = "{\"multi_granular\": {\"query_text\": \"" + question + "\", \"k\": 1000%s}}";
            for (String query : List.of(mg.formatted(", \"filter\": " + filter),
                "{\"bool\": {\"must\": [" + mg.formatted("") + "], \"filter\": [" + filter + "]}}")) {
                Set<String> got = new TreeSet<>();
                for (Object h : (List<Object>) ((Map<String, Object>) call("POST", "/ancopy-chunks/_search",
                    "{\"size\": 1000, \"_source\": false, \"query\": " + query + "}").get("hits")).get("hits")) {
                    got.add((String) ((Map<String, Object>) h).get("_id"));
                }
                assertEquals(query, expected, got);
            }
        }
    }

    /**
     * Index {@code index} of six documents with tenants, dates, ranks, tags, places, view counts beyond a long (mapped
     * dynamically as a long, every chunk write failed) and a status (not copied): source id → parents.
     */
    private static Map<String, List<String>> tenantDocuments(String index) throws IOException {
        putPipeline(index, "{\"field\": \"body\", \"target_index\": \"{{_index}}-chunks\", \"copy_fields\": [\"tenant\", "
            + "\"published\", \"meta.rank\", \"tags\", \"place\", \"views\"], \"strategy\": {\"type\": \"recursive\", \"max_words\": 25}}");
        call("PUT", "/" + index, """
            {"settings": {"index.default_pipeline": "%s", "analysis": {"normalizer": {"folded": {"type": "custom",
              "filter": ["lowercase"]}}}},
             "mappings": {"properties": {"body": {"type": "text"}, "tenant": {"type": "keyword", "normalizer": "folded"},
               "published": {"type": "date", "format": "dd/MM/yyyy"}, "meta": {"properties": {"rank": {"type": "integer"}}},
               "tags": {"type": "keyword"}, "status": {"type": "keyword"}, "place": {"type": "geo_point"},
               "views": {"type": "unsigned_long"}}}}""".formatted(index));
        List<String> chapters = new ArrayList<>(emmaChapters().values());
        String[] tenants = { "Acme Corp", "Beta-Labs", "Acme Corp", "Gamma", "beta-labs", "Acme Corp" };
        String[] dates = { "01/02/2024", "15/03/2025", "28/11/2025", "02/01/2026", "30/06/2024", "11/11/2026" };
        StringBuilder bulk = new StringBuilder();
        for (int i = 0; i < tenants.length; i++) {
            String chapter = chapters.get(i % chapters.size());
            int from = (i / chapters.size()) * 900;
            String body = chapter.substring(from, Math.min(from + 900, chapter.length()));
            bulk.append("{\"index\": {\"_id\": \"d").append(i).append("\"}}\n").append(json(Map.of("body", body, "tenant", tenants[i],
                "published", dates[i], "meta", Map.of("rank", i * 3), "tags", i % 2 == 0 ? List.of("Red Team", "x") : List.of("blue"),
                "status", "published", "place", Map.of("lat", 48.0 + i, "lon", 2.0),
                "views", new java.math.BigInteger("1844674407370955161" + i))))
                .append('\n');
        }
        // written through an alias, as applications write: the chunk index is the concrete index's, mapped from it
        call("PUT", "/" + index + "/_alias/" + index + "-write", null);
        Map<String, Object> r = call("POST", "/" + index + "-write/_bulk?refresh=true", bulk.toString());
        assertEquals(r.toString(), false, r.get("errors"));
        refresh(index + "-chunks");
        Map<String, List<String>> parentsOf = new java.util.HashMap<>();
        for (Object h : (List<Object>) ((Map<String, Object>) call("POST", "/" + index + "-chunks/_search",
            "{\"size\": 1000, \"_source\": [\"source_id\"]}").get("hits")).get("hits")) {
            Map<String, Object> hit = (Map<String, Object>) h;
            parentsOf.computeIfAbsent((String) ((Map<String, Object>) hit.get("_source")).get("source_id"), k -> new ArrayList<>())
                .add((String) hit.get("_id"));
        }
        return parentsOf;
    }

    /**
     * A filter on a field of the source documents that the pipeline does not copy kept no parent: the search answered
     * nothing, as if no document matched. It is a 400 naming the field and {@code copy_fields}, for the query's own filter
     * and for the clauses of a {@code bool} around it alike.
     */
    public void testAFilterOnASourceFieldThePipelineDoesNotCopy_isA400NamingCopyFields() throws Exception {
        tenantDocuments("annocopy");
        String mg = "{\"multi_granular\": {\"query_text\": \"Who came to visit Hartfield?\", \"k\": 10%s}}";
        for (String query : List.of(mg.formatted(", \"filter\": {\"term\": {\"status\": \"published\"}}"),
            "{\"bool\": {\"must\": [" + mg.formatted("") + "], \"filter\": [{\"term\": {\"tenant\": \"Gamma\"}}, "
                + "{\"term\": {\"status\": \"published\"}}]}}")) {
            org.opensearch.client.ResponseException e = callFailing("POST", "/annocopy-chunks/_search", "{\"query\": " + query + "}");
            assertEquals(400, e.getResponse().getStatusLine().getStatusCode());
            assertTrue(e.getMessage(), e.getMessage().contains("[multi_granular] filters on field [status], which the chunk documents "
                + "of [annocopy-chunks] do not hold: it is a field of source index [annocopy] that the pipeline does not copy"));
            assertTrue(e.getMessage(), e.getMessage().contains("[copy_fields]"));
        }
        // the copied field alone answers; a field neither index maps is OpenSearch's usual unmapped field (no parent)
        Map<String, Object> r = call("POST", "/annocopy-chunks/_search", "{\"query\": " + mg.formatted(
            ", \"filter\": {\"term\": {\"tenant\": \"Gamma\"}}") + "}");
        assertTrue(((List<Object>) ((Map<String, Object>) r.get("hits")).get("hits")).size() > 0);
        r = call("POST", "/annocopy-chunks/_search", "{\"query\": " + mg.formatted(", \"filter\": {\"term\": {\"nowhere\": \"x\"}}")
            + "}");
        assertEquals(List.of(), ((Map<String, Object>) r.get("hits")).get("hits"));
    }

    /**
     * An index template that maps the uncopied field {@code status} in the chunk index too: the filter on it kept no parent
     * without a word (the check asked whether any chunk index maps the field, not whether the pipeline copies it). It is
     * the same 400 naming the field; a copied field still answers.
     */
    public void testAFilterOnAnUncopiedField_thatATemplateMapsInTheChunkIndex_isStillA400() throws Exception {
        call("PUT", "/_index_template/antpl-chunks", "{\"index_patterns\": [\"antpl-chunks\"], \"template\": {\"mappings\": "
            + "{\"properties\": {\"status\": {\"type\": \"keyword\"}}}}}");
        try {
            tenantDocuments("antpl");
            assertTrue("the template mapped it", mapsStatus(call("GET", "/antpl-chunks/_mapping")));
            String mg = "{\"multi_granular\": {\"query_text\": \"Who came to visit Hartfield?\", \"k\": 10%s}}";
            org.opensearch.client.ResponseException e = callFailing("POST", "/antpl-chunks/_search", "{\"query\": "
                + mg.formatted(", \"filter\": {\"term\": {\"status\": \"published\"}}") + "}");
            assertEquals(e.getMessage(), 400, e.getResponse().getStatusLine().getStatusCode());
            assertTrue(e.getMessage(), e.getMessage().contains("[multi_granular] filters on field [status], which the chunk documents "
                + "of [antpl-chunks] do not hold: it is a field of source index [antpl] that the pipeline does not copy"));
            Map<String, Object> r = call("POST", "/antpl-chunks/_search", "{\"query\": " + mg.formatted(
                ", \"filter\": {\"term\": {\"tenant\": \"Gamma\"}}") + "}");
            assertTrue(((List<Object>) ((Map<String, Object>) r.get("hits")).get("hits")).size() > 0);
        } finally {
            call("DELETE", "/_index_template/antpl-chunks");
        }
    }

    private static boolean mapsStatus(Map<String, Object> mapping) {
        Map<String, Object> index = (Map<String, Object>) mapping.get("antpl-chunks");
        return ((Map<String, Object>) ((Map<String, Object>) index.get("mappings")).get("properties")).containsKey("status");
    }

    /**
     * A filter on source documents' ids — the {@code ids} query an application sends to the source index to keep its answer
     * to given documents — kept no parent (a chunk document's id is {@code <id>:<ordinal>}): the search answered nothing. It
     * is a 400 that gives the filter on {@code source_id}, and that filter, pasted from the message, keeps exactly the
     * parents of those documents (oracle: every chunk document of the index with its {@code source_id}).
     */
    public void testAFilterOnSourceDocumentIds_isA400GivingTheSourceIdFilter_whichKeepsTheirParents() throws Exception {
        Map<String, List<String>> parentsOf = tenantDocuments("annoids");
        String mg = "{\"multi_granular\": {\"query_text\": \"Who came to visit Hartfield?\", \"k\": 100%s}}";
        String reason = null;
        for (String query : List.of(mg.formatted(", \"filter\": {\"ids\": {\"values\": [\"d1\", \"d4\"]}}"),
            "{\"bool\": {\"must\": [" + mg.formatted("") + "], \"filter\": [{\"terms\": {\"_id\": [\"d1\", \"d4\"]}}]}}")) {
            org.opensearch.client.ResponseException e = callFailing("POST", "/annoids-chunks/_search", "{\"query\": " + query + "}");
            assertEquals(400, e.getResponse().getStatusLine().getStatusCode());
            reason = (String) ((Map<String, Object>) entityAsMap(e.getResponse()).get("error")).get("reason");
            assertTrue(reason, reason.contains("[multi_granular] filters on [_id] with [d1, d4], which no chunk document has"));
        }
        String filter = reason.substring(reason.indexOf("{\"terms\""));
        Map<String, Object> r = call("POST", "/annoids-chunks/_search", "{\"size\": 100, \"query\": " + mg.formatted(
            ", \"filter\": " + filter) + "}");
        Set<String> found = new TreeSet<>();
        for (Object h : (List<Object>) ((Map<String, Object>) r.get("hits")).get("hits")) {
            found.add((String) ((Map<String, Object>) h).get("_id"));
        }
        Set<String> expected = new TreeSet<>(parentsOf.get("d1"));
        expected.addAll(parentsOf.get("d4"));
        assertEquals(expected, found);
        // a parent's own id (from an earlier hit) is a chunk id, and filters as before
        String parent = parentsOf.get("d1").get(0);
        r = call("POST", "/annoids-chunks/_search", "{\"query\": " + mg.formatted(", \"filter\": {\"ids\": {\"values\": [\""
            + parent + "\"]}}") + "}");
        assertEquals(List.of(parent), ((List<Object>) ((Map<String, Object>) r.get("hits")).get("hits")).stream()
            .map(h -> ((Map<String, Object>) h).get("_id")).toList());
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
