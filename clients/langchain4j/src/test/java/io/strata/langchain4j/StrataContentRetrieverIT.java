package io.strata.langchain4j;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.langchain4j.data.document.Metadata;
import dev.langchain4j.rag.content.Content;
import dev.langchain4j.rag.query.Query;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static io.strata.langchain4j.Cluster.JSON;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The retriever against a real cluster (started by bin/strata-test): documents ingested through a
 * {@code multi_granular_chunking} pipeline; the oracles are the raw REST search with the same body and the source texts.
 */
class StrataContentRetrieverIT {
    private static final String SOURCE = "lc4j-notes";
    private static final String CHUNKS = "lc4j-notes-chunks";
    private static final String QUESTION = "How long did the relief boat take to reach the lighthouse keeper after the storm?";
    private static final Map<String, String> DOCS = new LinkedHashMap<>();

    @BeforeAll
    static void ingest() throws Exception {
        try (var files = Files.list(Path.of("../testdata"))) {
            for (Path f : files.filter(p -> p.toString().endsWith(".txt")).sorted().toList()) {
                DOCS.put(f.getFileName().toString().replace(".txt", ""), Files.readString(f));
            }
        }
        Cluster.call("DELETE", "/" + SOURCE + "," + CHUNKS + "?ignore_unavailable=true", null);
        Cluster.ok("PUT", "/_ingest/pipeline/" + SOURCE, """
            {"processors": [{"multi_granular_chunking": {"field": "body", "target_index": "%s",
              "strategy": {"type": "recursive", "max_words": 60}}}]}""".formatted(CHUNKS));
        StringBuilder bulk = new StringBuilder();
        for (Map.Entry<String, String> d : DOCS.entrySet()) {
            bulk.append(JSON.writeValueAsString(Map.of("index", Map.of("_index", SOURCE, "_id", d.getKey())))).append('\n');
            bulk.append(JSON.writeValueAsString(Map.of("body", d.getValue()))).append('\n');
        }
        JsonNode r = Cluster.ok("POST", "/_bulk?pipeline=" + SOURCE + "&refresh=true", bulk.toString());
        assertFalse(r.path("errors").asBoolean(), r.toString());
        Cluster.ok("POST", "/" + CHUNKS + "/_refresh", null);
    }

    /** The search a user would send by hand for the same question, k and budget. */
    private static String rawBody(int k, int budget, String filter) {
        return """
            {"size": %d, "query": {"multi_granular": {"query_text": "%s", "k": %d, "explain_child": true,
              "evidence": {"chunks": 3, "sentences": 3}%s}},
             "search_pipeline": {"response_processors": [{"strata_context": {"budget": %d}}]}}"""
            .formatted(k, QUESTION, k, filter == null ? "" : ", \"filter\": " + filter, budget);
    }

    private static String squash(String s) {
        return s.strip().replaceAll("\\s+", " ");
    }

    /** A passage as the REST response has it, in the retriever's metadata terms. */
    private static Map<String, Object> citation(JsonNode p) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (String f : List.of("index", "source_index", "source_id")) {
            m.put(f, p.path(f).asText());
        }
        for (String f : List.of("start", "end", "tokens")) {
            m.put(f, p.path(f).asInt());
        }
        List<String> hits = new ArrayList<>();
        p.path("hits").forEach(h -> hits.add(h.asText()));
        m.put("hits", String.join(",", hits));
        if (p.path("truncated").asBoolean(false)) {
            m.put("truncated", "true");
        }
        m.put("text", p.path("text").asText());
        return m;
    }

    private static Map<String, Object> citation(Content c) {
        Metadata md = c.textSegment().metadata();
        Map<String, Object> m = new LinkedHashMap<>(md.toMap());
        m.put("text", c.textSegment().text());
        return m;
    }

    private static void assertQuotesTheSources(List<Content> contents) {
        for (Content c : contents) {
            Metadata m = c.textSegment().metadata();
            assertEquals(SOURCE, m.getString("source_index"));
            assertEquals(CHUNKS, m.getString("index"));
            String source = DOCS.get(m.getString("source_id"));
            assertEquals(squash(source.substring(m.getInteger("start"), m.getInteger("end"))), squash(c.textSegment().text()));
        }
    }

    @Test
    void retrieve_returnsTheRawSearchsPassages_sameTextsCitationsAndOrder() throws Exception {
        List<Content> contents = Cluster.retriever(CHUNKS).k(5).budget(128).build().retrieve(Query.from(QUESTION));
        JsonNode raw = Cluster.ok("POST", "/" + CHUNKS + "/_search", rawBody(5, 128, null));
        JsonNode passages = raw.path("ext").path("strata_context").path("passages");
        assertTrue(passages.size() > 0, raw.toString());
        List<Map<String, Object>> expected = new ArrayList<>();
        passages.forEach(p -> expected.add(citation(p)));
        assertEquals(expected, contents.stream().map(StrataContentRetrieverIT::citation).toList());
        assertQuotesTheSources(contents);
        assertTrue(contents.stream().mapToInt(c -> c.textSegment().metadata().getInteger("tokens")).sum() <= 128);
        // the question is about the lighthouse: its passage comes first
        assertEquals("lighthouse", contents.get(0).textSegment().metadata().getString("source_id"));
    }

    @Test
    void retrieve_withAFilterOnParentFields_keepsToTheFilteredDocument() throws Exception {
        String filter = "{\"term\": {\"source_id\": \"comet\"}}";
        List<Content> contents = Cluster.retriever(CHUNKS).k(3).budget(200).filter(filter).build().retrieve(Query.from(QUESTION));
        assertFalse(contents.isEmpty());
        for (Content c : contents) {
            assertEquals("comet", c.textSegment().metadata().getString("source_id"));
        }
        JsonNode raw = Cluster.ok("POST", "/" + CHUNKS + "/_search", rawBody(3, 200, filter));
        List<String> expected = new ArrayList<>();
        raw.path("ext").path("strata_context").path("passages").forEach(p -> expected.add(p.path("text").asText()));
        assertEquals(expected, contents.stream().map(c -> c.textSegment().text()).toList());
        assertQuotesTheSources(contents);
    }

    @Test
    void retrieve_throughANamedPipeline_givesTheInlinePipelinesPassages() throws Exception {
        Cluster.ok("PUT", "/_search/pipeline/lc4j-rag", """
            {"response_processors": [{"strata_context": {"budget": 1000, "order": "document"}}]}""");
        List<Content> named = Cluster.retriever(CHUNKS).k(4).budget(96).pipeline("lc4j-rag").build().retrieve(Query.from(QUESTION));
        List<Content> inline = Cluster.retriever(CHUNKS).k(4).budget(96).build().retrieve(Query.from(QUESTION));
        // the request's budget overrides the pipeline's; its order (document) stays
        assertTrue(named.stream().mapToInt(c -> c.textSegment().metadata().getInteger("tokens")).sum() <= 96);
        assertEquals(inline.stream().map(c -> c.textSegment().text()).sorted().toList(),
            named.stream().map(c -> c.textSegment().text()).sorted().toList());
        assertQuotesTheSources(named);
    }

    @Test
    void retrieve_withABadBudget_raisesTheServers400Message() throws Exception {
        StrataException e = assertThrows(StrataException.class,
            () -> Cluster.retriever(CHUNKS).budget(0).build().retrieve(Query.from(QUESTION)));
        JsonNode raw = Cluster.call("POST", "/" + CHUNKS + "/_search", rawBody(10, 0, null)).body();
        assertEquals(400, e.status());
        String reason = raw.path("error").path("reason").asText();
        assertTrue(reason.contains("[budget]"), raw.toString());
        assertTrue(e.getMessage().contains(reason), e.getMessage() + " lacks " + reason);
    }
}
