package io.strata.plugin;

import io.strata.chunking.SentenceSegmenter;
import io.strata.ingest.ChunkLifecycleFilter;
import io.strata.ingest.ChunkStore;
import io.strata.ingest.MultiGranularChunkingProcessor;
import org.apache.lucene.util.SetOnce;
import org.opensearch.action.support.ActionFilter;
import org.opensearch.cluster.metadata.IndexNameExpressionResolver;
import org.opensearch.cluster.service.ClusterService;
import org.opensearch.core.common.io.stream.NamedWriteableRegistry;
import org.opensearch.core.xcontent.NamedXContentRegistry;
import org.opensearch.env.Environment;
import org.opensearch.env.NodeEnvironment;
import org.opensearch.ingest.Processor;
import org.opensearch.plugins.ActionPlugin;
import org.opensearch.plugins.IngestPlugin;
import org.opensearch.plugins.Plugin;
import org.opensearch.repositories.RepositoriesService;
import org.opensearch.script.ScriptService;
import org.opensearch.threadpool.ThreadPool;
import org.opensearch.transport.client.Client;
import org.opensearch.watcher.ResourceWatcherService;

import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Supplier;

/** Wiring only: components are built here and passed to the adapters that need them. */
public class StrataPlugin extends Plugin implements IngestPlugin, ActionPlugin {
    private final SentenceSegmenter segmenter = SentenceSegmenter.forLocale(Locale.ENGLISH);
    private final SetOnce<ClusterService> clusterService = new SetOnce<>();
    private final SetOnce<ThreadPool> threadPool = new SetOnce<>();
    private final SetOnce<ChunkStore> chunkStore = new SetOnce<>();

    @Override
    public Collection<Object> createComponents(Client client, ClusterService clusterService, ThreadPool threadPool,
                                               ResourceWatcherService resourceWatcherService, ScriptService scriptService,
                                               NamedXContentRegistry xContentRegistry, Environment environment,
                                               NodeEnvironment nodeEnvironment, NamedWriteableRegistry namedWriteableRegistry,
                                               IndexNameExpressionResolver indexNameExpressionResolver,
                                               Supplier<RepositoriesService> repositoriesServiceSupplier) {
        this.clusterService.set(clusterService);
        this.threadPool.set(threadPool);
        chunkStore(client, clusterService);
        return List.of();
    }

    @Override
    public Map<String, Processor.Factory> getProcessors(Processor.Parameters parameters) {
        ChunkStore store = chunkStore(parameters.client, parameters.ingestService.getClusterService());
        return Map.of(MultiGranularChunkingProcessor.TYPE,
            new MultiGranularChunkingProcessor.Factory(store, parameters.threadContext, parameters.client, segmenter));
    }

    @Override
    public List<ActionFilter> getActionFilters() {
        return List.of(new ChunkLifecycleFilter(
            () -> threadPool.get() == null ? null : threadPool.get().getThreadContext(), clusterService::get, chunkStore::get));
    }

    /** One store per node, whichever of the node's two construction paths reaches it first. */
    private synchronized ChunkStore chunkStore(Client client, ClusterService clusterService) {
        if (chunkStore.get() == null) {
            chunkStore.set(new ChunkStore(client, clusterService));
        }
        return chunkStore.get();
    }
}
