package io.strata.query;

import io.strata.chunkindex.registry.ChunkIndexRegistry;
import org.opensearch.Version;
import org.opensearch.cluster.metadata.IndexMetadata;
import org.opensearch.cluster.metadata.MappingMetadata;
import org.opensearch.cluster.metadata.Metadata;
import org.opensearch.common.settings.Settings;
import org.opensearch.core.index.Index;
import org.opensearch.index.mapper.MapperService;
import org.opensearch.index.query.QueryBuilder;
import org.opensearch.index.query.QueryBuilders;
import org.opensearch.test.OpenSearchTestCase;

import java.util.List;
import java.util.Map;

import static org.hamcrest.Matchers.containsString;

public class UncopiedFieldsTests extends OpenSearchTestCase {
    private static final Map<String, Object> SOURCE_MAPPING = Map.of("properties", Map.of(
        "body", Map.of("type", "text"), "status", Map.of("type", "keyword"), "tenant", Map.of("type", "keyword"),
        "meta", Map.of("properties", Map.of("year", Map.of("type", "integer"), "owner", Map.of("type", "keyword")))));
    private static final Map<String, Object> CHUNK_MAPPING = Map.of("properties", Map.of(
        "text", Map.of("type", "text"), "source_id", Map.of("type", "keyword"),
        "tenant", Map.of("type", "text", "fields", Map.of("keyword", Map.of("type", "keyword"))),
        "meta", Map.of("properties", Map.of("year", Map.of("type", "integer"))),
        "who", Map.of("type", "alias", "path", "tenant")));

    private static IndexMetadata index(String name, String uuid, Map<String, Object> mapping, Map<String, String> custom) {
        IndexMetadata.Builder b = IndexMetadata.builder(name).settings(Settings.builder().put(IndexMetadata.SETTING_VERSION_CREATED,
            Version.CURRENT).put(IndexMetadata.SETTING_INDEX_UUID, uuid)).numberOfShards(1).numberOfReplicas(0)
            .putMapping(new MappingMetadata(MapperService.SINGLE_MAPPING_NAME, mapping));
        if (custom != null) {
            b.putCustom(ChunkIndexRegistry.CUSTOM_KEY, custom);
        }
        return b.build();
    }

    private static Metadata metadata() {
        return Metadata.builder().put(index("docs", "s-1", SOURCE_MAPPING, null), false)
            .put(index("docs-chunks", "c-1", CHUNK_MAPPING, Map.of("source_index", "docs", "source_index_uuid", "s-1")), false)
            .put(index("hand-made", "h-1", CHUNK_MAPPING, null), false).build();
    }

    private static void check(QueryBuilder filter, String... indices) {
        Metadata metadata = metadata();
        UncopiedFields.check(filter, java.util.Arrays.stream(indices).map(n -> metadata.index(n).getIndex()).toArray(Index[]::new),
            metadata);
    }

    public void testRequiredFields_areThoseOfTheQueryAndItsMustAndFilterClauses_leavingMetadataFieldsAndPatterns() {
        QueryBuilder tree = QueryBuilders.boolQuery().filter(QueryBuilders.termQuery("status", "live"))
            .must(QueryBuilders.constantScoreQuery(QueryBuilders.rangeQuery("meta.year").gte(2020)))
            .should(QueryBuilders.boolQuery().mustNot(QueryBuilders.existsQuery("tenant")))
            .should(QueryBuilders.termQuery("owner", "x"))
            .filter(QueryBuilders.multiMatchQuery("x", "title", "summary", "body*"))
            .filter(QueryBuilders.idsQuery().addIds("1")).filter(QueryBuilders.termQuery("_index", "docs-chunks"));
        assertEquals(java.util.Set.of(List.of("status"), List.of("meta.year"), List.of("title", "summary")), java.util.Set.copyOf(
            UncopiedFields.requiredFields(tree).stream().map(l -> l.stream().sorted(java.util.Comparator.reverseOrder()).toList()).toList()));
        assertEquals(List.of(List.of("status")), UncopiedFields.requiredFields(QueryBuilders.termQuery("status", "x")));
    }

    public void testAFilterOnASourceFieldThePipelineDoesNotCopy_isA400NamingItAndCopyFields() {
        IllegalArgumentException e = expectThrows(IllegalArgumentException.class,
            () -> check(QueryBuilders.boolQuery().filter(QueryBuilders.termQuery("tenant", "a")).filter(QueryBuilders.termQuery("status",
                "live")), "docs-chunks"));
        assertThat(e.getMessage(), containsString("[multi_granular] filters on field [status], which the chunk documents of "
            + "[docs-chunks] do not hold: it is a field of source index [docs] that the pipeline does not copy"));
        assertThat(e.getMessage(), containsString("[copy_fields]"));
        expectThrows(IllegalArgumentException.class, () -> check(QueryBuilders.termQuery("meta.owner", "x"), "docs-chunks"));
    }

    public void testCopiedFieldsMultiFieldsAliasesAndFieldsNoIndexMaps_passAsOpenSearchWouldRunThem() {
        check(QueryBuilders.termQuery("tenant", "a"), "docs-chunks");
        check(QueryBuilders.termQuery("tenant.keyword", "a"), "docs-chunks");
        check(QueryBuilders.rangeQuery("meta.year").gte(2020), "docs-chunks");
        check(QueryBuilders.termQuery("who", "a"), "docs-chunks");
        check(QueryBuilders.termQuery("source_id", "1"), "docs-chunks");
        check(QueryBuilders.termQuery("nowhere", "a"), "docs-chunks"); // unmapped in the source too: OpenSearch's own behaviour
        check(QueryBuilders.termQuery("status", "live"), "hand-made"); // no registered source to tell
        check(null, "docs-chunks");
        // where the field's absence does not empty the filter: should and must_not clauses, a multi_match with a copied field
        check(QueryBuilders.boolQuery().should(QueryBuilders.termQuery("status", "live")).should(QueryBuilders.termQuery("tenant", "a")),
            "docs-chunks");
        check(QueryBuilders.boolQuery().mustNot(QueryBuilders.termQuery("status", "live")), "docs-chunks");
        check(QueryBuilders.multiMatchQuery("live", "status", "tenant"), "docs-chunks");
        expectThrows(IllegalArgumentException.class, () -> check(QueryBuilders.multiMatchQuery("live", "status", "meta.owner"),
            "docs-chunks"));
    }

    public void testAFilterOnSourceDocumentIds_isA400NamingSourceId_andChunkIdsPass() {
        for (QueryBuilder ids : List.of(QueryBuilders.idsQuery().addIds("70", "71:0"), QueryBuilders.termQuery("_id", "70"),
            QueryBuilders.termsQuery("_id", "70", "71:0"), QueryBuilders.boolQuery().filter(QueryBuilders.boolQuery()
                .must(QueryBuilders.idsQuery().addIds("70"))))) {
            IllegalArgumentException e = expectThrows(IllegalArgumentException.class, () -> check(ids, "docs-chunks"));
            assertThat(e.getMessage(), containsString("[multi_granular] filters on [_id] with [70], which no chunk document has"));
            assertThat(e.getMessage(), containsString("{\"terms\": {\"source_id\": [\"70\"]}}"));
        }
        // chunk ids (a parent's own), and ids where their absence does not empty the filter
        check(QueryBuilders.idsQuery().addIds("70:0", "a:b:12"), "docs-chunks");
        check(QueryBuilders.termQuery("_id", "70:3"), "docs-chunks");
        check(QueryBuilders.boolQuery().should(QueryBuilders.idsQuery().addIds("70")).should(QueryBuilders.termQuery("tenant", "a")),
            "docs-chunks");
        check(QueryBuilders.boolQuery().mustNot(QueryBuilders.idsQuery().addIds("70")), "docs-chunks");
        IllegalArgumentException quoted = expectThrows(IllegalArgumentException.class,
            () -> check(QueryBuilders.termQuery("_id", "say \"hi\""), "docs-chunks"));
        assertThat(quoted.getMessage(), containsString("[\"say \\\"hi\\\"\"]"));
    }

    public void testMapped_followsObjectsMultiFieldsAndDerivedFields() {
        Map<String, Object> chunks = UncopiedFields.mappingOf(metadata().index("docs-chunks"));
        assertTrue(UncopiedFields.mapped(chunks, "meta.year"));
        assertFalse(UncopiedFields.mapped(chunks, "meta.owner"));
        assertTrue(UncopiedFields.mapped(chunks, "tenant.keyword"));
        assertFalse(UncopiedFields.mapped(chunks, "tenant.raw"));
        assertFalse(UncopiedFields.mapped(chunks, "text.keyword"));
        Map<String, Object> derived = UncopiedFields.mappingOf(index("d", "d-1", Map.of("derived", Map.of("year_s",
            Map.of("type", "keyword")), "properties", Map.of()),
            null));
        assertTrue(UncopiedFields.mapped(derived, "year_s"));
        assertFalse(UncopiedFields.mapped(derived, List.of("x").get(0)));
    }
}
