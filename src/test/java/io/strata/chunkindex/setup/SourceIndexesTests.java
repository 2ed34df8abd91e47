package io.strata.chunkindex.setup;

import io.strata.chunkindex.TestClusterService;
import org.opensearch.cluster.ClusterState;
import org.opensearch.cluster.metadata.AliasMetadata;
import org.opensearch.cluster.metadata.ComposableIndexTemplate;
import org.opensearch.cluster.metadata.IndexMetadata;
import org.opensearch.cluster.metadata.Metadata;
import org.opensearch.common.settings.Settings;
import org.opensearch.test.OpenSearchTestCase;
import org.opensearch.threadpool.TestThreadPool;
import org.opensearch.threadpool.ThreadPool;

import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static io.strata.chunkindex.TestClusterService.index;
import static io.strata.chunkindex.TestClusterService.state;
import static org.hamcrest.Matchers.containsString;

/**
 * What chunking reads of a source index or of the templates that will create it, over a cluster state set by hand: the
 * alias a request names resolves to its write index, a data stream's name to its first backing index, date math to
 * today's name; aliases a template would give both a source index and its chunk index are refused; a text kept out of
 * {@code _source} is refused.
 */
public class SourceIndexesTests extends OpenSearchTestCase {
    private static final String SOURCE = "docs";

    private ThreadPool threadPool;
    private TestClusterService clusterService;
    private SourceIndexes sources;

    @Override
    public void setUp() throws Exception {
        super.setUp();
        threadPool = new TestThreadPool(getTestName());
        clusterService = new TestClusterService(Settings.EMPTY, threadPool);
        sources = new SourceIndexes(clusterService,
            () -> new org.opensearch.cluster.metadata.IndexNameExpressionResolver(threadPool.getThreadContext()));
    }

    @Override
    public void tearDown() throws Exception {
        ThreadPool.terminate(threadPool, 10, TimeUnit.SECONDS);
        super.tearDown();
    }

    private void setState(ClusterState state) {
        clusterService.setState(state);
    }

    public void testConcreteIndexFor_anAliasIsItsWriteIndex_anIndexItself_anUnknownNameAsIs() {
        IndexMetadata first = IndexMetadata.builder(index("logs-000001", "l1"))
            .putAlias(AliasMetadata.builder("logs").writeIndex(false)).build();
        IndexMetadata second = IndexMetadata.builder(index("logs-000002", "l2"))
            .putAlias(AliasMetadata.builder("logs").writeIndex(true)).build();
        setState(state(first, second));
        assertEquals("logs-000002", sources.concreteIndexFor("logs"));
        assertEquals("logs-000001", sources.concreteIndexFor("logs-000001"));
        assertEquals("new-index", sources.concreteIndexFor("new-index"));
    }

    public void testResolvedName_evaluatesDateMath_andLeavesOtherNames() {
        String today = java.time.format.DateTimeFormatter.ofPattern("uuuu.MM.dd", java.util.Locale.ROOT)
            .format(java.time.ZonedDateTime.now(java.time.ZoneOffset.UTC));
        assertEquals("logs-" + today, sources.resolvedName("<logs-{now/d}>"));
        assertEquals("logs", sources.resolvedName("logs"));
        assertNull(sources.resolvedName(null));
    }

    public void testConcreteIndexFor_aDataStreamTheWriteCreates_isItsFirstBackingIndex() {
        ComposableIndexTemplate streams = new ComposableIndexTemplate(List.of("logs-*"), null, null, null, null, null,
            new ComposableIndexTemplate.DataStreamTemplate());
        ComposableIndexTemplate plain = new ComposableIndexTemplate(List.of("docs-*"), null, null, null, null, null, null);
        setState(TestClusterService.state(Metadata.builder().put("streams", streams).put("plain", plain).build(), true));
        assertEquals(".ds-logs-app-000001", sources.concreteIndexFor("logs-app"));
        assertEquals("docs-1", sources.concreteIndexFor("docs-1"));
        assertEquals("other", sources.concreteIndexFor("other"));
    }

    public void testSharedTemplateAliases_anAliasATemplateGivesTheSourceIndexAndItsChunkIndex_isRefused_aChunksOnlyOneIsNot() {
        org.opensearch.cluster.metadata.Template withAlias = new org.opensearch.cluster.metadata.Template(null, null,
            Map.of("docs-all", AliasMetadata.builder("docs-all").build()));
        Metadata both = Metadata.builder().put("docs", new ComposableIndexTemplate(List.of("docs-*"), withAlias, null, null, null,
            null, null)).build();
        String problem = SourceIndexes.sharedTemplateAliases(both, "docs-1-chunks", "docs-1");
        assertThat(problem, containsString("[target_index] [docs-1-chunks] would get the aliases [docs-all] of its source index "
            + "[docs-1]"));
        assertThat(problem, containsString("[chunks-{{_index}}]"));
        assertNull("a name outside the pattern", SourceIndexes.sharedTemplateAliases(both, "chunks-docs-1", "docs-1"));
        org.opensearch.cluster.metadata.Template chunksAlias = new org.opensearch.cluster.metadata.Template(null, null,
            Map.of("all-chunks", AliasMetadata.builder("all-chunks").build()));
        Metadata chunksOnly = Metadata.builder().put("chunks", new ComposableIndexTemplate(List.of("*-chunks"), chunksAlias, null,
            null, null, null, null)).build();
        assertNull("an alias of chunk indices only", SourceIndexes.sharedTemplateAliases(chunksOnly, "docs-1-chunks", "docs-1"));
        // an existing source index's own aliases count, whoever gave them
        Metadata existing = Metadata.builder(both).put(IndexMetadata.builder("docs-2").settings(Settings.builder()
            .put(IndexMetadata.SETTING_VERSION_CREATED, org.opensearch.Version.CURRENT)).numberOfShards(1).numberOfReplicas(0)
            .putAlias(AliasMetadata.builder("docs-all"))).build();
        assertThat(SourceIndexes.sharedTemplateAliases(existing, "docs-2-chunks", "docs-2"), containsString("[docs-all]"));
    }

    public void testCheckSourceMapping_refusesAFieldExcludedFromSource_namingItAndWhatToDo() {
        setState(state(index(SOURCE, "src-1", Map.of("_source", Map.of("excludes", List.of("body"))), Settings.EMPTY)));
        IllegalArgumentException e = expectThrows(IllegalArgumentException.class,
            () -> sources.checkSourceMapping("multi_granular_chunking", SOURCE, SOURCE, "body"));
        assertThat(e.getMessage(), containsString("field [body] is kept out of [_source] in index [docs]"));
        sources.checkSourceMapping("multi_granular_chunking", SOURCE, SOURCE, "title");
    }
}
