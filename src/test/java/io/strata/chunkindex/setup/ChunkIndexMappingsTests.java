package io.strata.chunkindex.setup;

import io.strata.chunkindex.ChunkDocuments;
import io.strata.model.ModelInfo;
import io.strata.model.ModelRef;
import org.opensearch.test.OpenSearchTestCase;

import java.util.List;
import java.util.Map;

import static io.strata.chunkindex.TestClusterService.index;
import static org.hamcrest.Matchers.containsString;

/** What mappings mean for chunking: what {@code _source} keeps, a chunk mapping over an index's own, a strict mapping. */
public class ChunkIndexMappingsTests extends OpenSearchTestCase {
    private static final ModelInfo E5 = new ModelInfo(ModelRef.embedded("e5-small-v2"), "intfloat/e5-small-v2", 384);

    public void testKeptInSource_followsEnabledIncludesAndExcludes_forObjectAndDottedPaths() {
        assertTrue(ChunkIndexMappings.keptInSource(Map.of(), "doc.body"));
        assertFalse(ChunkIndexMappings.keptInSource(Map.of("_source", Map.of("enabled", false)), "body"));
        assertFalse(ChunkIndexMappings.keptInSource(Map.of("_source", Map.of("excludes", List.of("doc.*"))), "doc.body"));
        assertTrue(ChunkIndexMappings.keptInSource(Map.of("_source", Map.of("excludes", List.of("title"))), "doc.body"));
        assertTrue(ChunkIndexMappings.keptInSource(Map.of("_source", Map.of("includes", List.of("doc"))), "doc.body"));
        assertFalse(ChunkIndexMappings.keptInSource(Map.of("_source", Map.of("includes", List.of("title"))), "body"));
    }

    @SuppressWarnings("unchecked")
    public void testMappingOver_keepsTheIndexsOwnAnalyzersAndGraphParameters_andRefusesAnotherType() {
        Map<String, Object> ours = ChunkDocuments.mapping(E5);
        Map<String, Object> english = Map.of("type", "text", "analyzer", "whitespace");
        Map<String, Object> graph = Map.of("type", "knn_vector", "dimension", 384, "method", Map.of("name", "hnsw", "engine", "lucene",
            "parameters", Map.of("m", 32)));
        Map<String, Object> given = Map.of("properties", Map.of("text", english, "embedding", graph, "tenant", Map.of("type", "keyword"),
            "children", Map.of("type", "nested", "properties", Map.of("text", english))));
        Map<String, Object> merged = ChunkIndexMappings.over(ours, List.of(given), "c", false);
        Map<String, Object> props = (Map<String, Object>) merged.get("properties");
        assertEquals(english, props.get("text"));
        assertEquals(graph, props.get("embedding"));
        assertEquals(english, ((Map<String, Object>) ((Map<String, Object>) props.get("children")).get("properties")).get("text"));
        assertEquals("ours where the index says nothing", Map.of("type", "keyword"), props.get("source_id"));
        assertFalse("only our fields are put", props.containsKey("tenant"));
        assertEquals(ours.get("_meta"), merged.get("_meta"));
        // a later template's definition replaces an earlier one's
        Map<String, Object> later = Map.of("properties", Map.of("text", Map.of("type", "text", "analyzer", "simple")));
        assertEquals("simple", ((Map<String, Object>) ((Map<String, Object>) ChunkIndexMappings.over(ours, List.of(given, later), "c", false)
            .get("properties")).get("text")).get("analyzer"));

        Map<String, Object> keywordChildren = Map.of("properties", Map.of("children", Map.of("type", "nested", "properties",
            Map.of("text", Map.of("type", "keyword")))));
        IllegalArgumentException keyword = expectThrows(IllegalArgumentException.class,
            () -> ChunkIndexMappings.over(ours, List.of(keywordChildren), "c", false));
        assertThat(keyword.getMessage(),
            containsString("[target_index] [c] maps [children.text] as [keyword]; chunk documents need it as [text]"));
        // from templates, another type is overridden by ours, as the create request always did
        Map<String, Object> broad = Map.of("properties", Map.of("text", Map.of("type", "keyword")));
        assertEquals(Map.of("type", "text"), ((Map<String, Object>) ChunkIndexMappings.over(ours, List.of(broad), "c", true)
            .get("properties")).get("text"));
        IllegalArgumentException dims = expectThrows(IllegalArgumentException.class, () -> ChunkIndexMappings.over(ours,
            List.of(Map.of("properties", Map.of("embedding", Map.of("type", "knn_vector", "dimension", 768)))), "c", false));
        assertThat(dims.getMessage(), containsString("maps [embedding] as [knn_vector] of 768 dimensions; chunk documents need it as "
            + "[knn_vector] of 384 dimensions"));
    }

    public void testMappingProblem_aStrictMappingWithoutTheSummaryField_isNamedWithTheMappingToAdd() {
        Map<String, Object> strict = Map.of("dynamic", "strict", "properties", Map.of("body", Map.of("type", "text")));
        String problem = ChunkIndexMappings.problem(List.of(strict), "docs", "body");
        assertThat(problem, containsString("index [docs] has a strict mapping"));
        assertThat(problem, containsString("{\"properties\": {\"strata\": {\"type\": \"object\", \"enabled\": false}}}"));
        // the summary mapped (here by a later template), or a mapping that is not strict: nothing to refuse
        assertNull(ChunkIndexMappings.problem(List.of(strict, Map.of("properties", Map.of("strata", Map.of("type", "object",
            "enabled", false)))), "docs", "body"));
        assertNull(ChunkIndexMappings.problem(List.of(Map.of("dynamic", false)), "docs", "body"));
        assertNull(ChunkIndexMappings.problem(List.of(strict, Map.of("dynamic", true)), "docs", "body"));
    }
}
