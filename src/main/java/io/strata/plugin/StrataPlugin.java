package io.strata.plugin;

import io.strata.chunkindex.lifecycle.LifecycleComponents;
import io.strata.search.ContextExt;
import io.strata.search.ContextExtFilter;
import io.strata.search.ContextLimits;
import io.strata.search.StrataContextProcessor;
import io.strata.chunking.SentenceSegmenter;
import io.strata.inference.Chunkers;
import io.strata.inference.InferenceService;
import io.strata.compare.CompareAction;
import io.strata.compare.CompareLimits;
import io.strata.compare.RestCompareAction;
import io.strata.compare.TransportCompareAction;
import io.strata.inference.InferenceSettings;
import io.strata.inference.mlcommons.MlCommonsEmbeddings;
import io.strata.inference.mlcommons.MlCommonsLlm;
import io.strata.inference.transport.EmbedAction;
import io.strata.inference.transport.RestEmbedAction;
import io.strata.inference.transport.TransportEmbedAction;
import io.strata.studio.RestStudioAction;
import io.strata.stats.transport.RestStatsAction;
import io.strata.stats.transport.StatsAction;
import io.strata.stats.transport.TransportStatsAction;
import io.strata.chunkindex.reconcile.CallerView;
import io.strata.chunkindex.store.ChunkCommit;
import io.strata.chunkindex.registry.ChunkIndexJanitor;
import io.strata.chunkindex.registry.ChunkIndexRegistry;
import io.strata.chunkindex.setup.ChunkIndexSetup;
import io.strata.chunkindex.lifecycle.ChunkLifecycleFilter;
import io.strata.chunkindex.store.ChunkStore;
import io.strata.chunkindex.write.ChunkWriter;
import io.strata.chunkindex.reconcile.DocCountsAction;
import io.strata.chunkindex.lifecycle.Rechunker;
import io.strata.chunkindex.registry.RegisterChunkIndexAction;
import io.strata.chunkindex.reconcile.RestReconcileAction;
import io.strata.chunkindex.registry.TransportRegisterChunkIndexAction;
import io.strata.chunkindex.lifecycle.SourceIndexDeleteFilter;
import io.strata.chunkindex.lifecycle.SourceIndexLookup;
import io.strata.chunkindex.lifecycle.ChunkVectorsFilter;
import io.strata.chunkindex.lifecycle.SourceIndexRefreshFilter;
import io.strata.chunkindex.store.Slicing;
import io.strata.chunkindex.reconcile.ReconcileAction;
import io.strata.chunkindex.reconcile.Reconciler;
import io.strata.chunkindex.reconcile.TransportReconcileAction;
import io.strata.chunkindex.generations.GenerationBuilder;
import io.strata.chunkindex.generations.GenerationSwap;
import io.strata.chunkindex.generations.RestSwapAction;
import io.strata.chunkindex.generations.SwapAction;
import io.strata.chunkindex.generations.TransportSwapAction;
import io.strata.chunkindex.generations.GenerationsAction;
import io.strata.chunkindex.generations.RestGenerationsAction;
import io.strata.chunkindex.generations.TransportGenerationsAction;
import io.strata.chunkindex.generations.RebuildAction;
import io.strata.chunkindex.generations.RebuildResumeExecutor;
import io.strata.chunkindex.generations.RebuildResumeParams;
import io.strata.chunkindex.generations.RestRebuildAction;
import io.strata.chunkindex.generations.TransportRebuildAction;
import io.strata.ingest.ChunkPreviewAction;
import io.strata.ingest.ChunkProcessors;
import io.strata.ingest.TargetIndexChangeFilter;
import io.strata.transport.ProgressStatus;
import org.opensearch.tasks.Task;
import io.strata.ingest.TransportChunkPreviewAction;
import io.strata.ingest.MultiGranularChunkingProcessor;
import io.strata.ingest.RestChunkPreviewAction;
import org.opensearch.ingest.IngestService;
import io.strata.query.BestChildFetchSubPhase;
import io.strata.query.DenseParentsQueryBuilder;
import io.strata.query.HybridShardQueryBuilder;
import io.strata.query.MultiGranularQueryBuilder;
import io.strata.query.PlannedParentsQueryBuilder;
import io.strata.query.PreFilterPushdown;
import io.strata.query.QueryServices;
import io.strata.stats.InferenceGauges;
import io.strata.query.QueryLimits;
import io.strata.query.SearchTaskFilter;
import io.strata.stats.StrataStats;
import org.apache.lucene.util.SetOnce;
import org.opensearch.common.settings.SettingsModule;
import org.opensearch.core.ParseField;
import org.opensearch.persistent.PersistentTaskParams;
import org.opensearch.persistent.PersistentTasksExecutor;
import org.opensearch.plugins.PersistentTaskPlugin;
import org.opensearch.action.support.ActionFilter;
import org.opensearch.cluster.metadata.IndexNameExpressionResolver;
import org.opensearch.cluster.node.DiscoveryNodes;
import org.opensearch.cluster.service.ClusterService;
import org.opensearch.common.lifecycle.LifecycleComponent;
import org.opensearch.index.IndexModule;
import org.opensearch.common.settings.ClusterSettings;
import org.opensearch.common.util.concurrent.ThreadContext;
import org.opensearch.common.settings.IndexScopedSettings;
import org.opensearch.common.settings.Setting;
import org.opensearch.common.settings.Settings;
import org.opensearch.common.settings.SettingsFilter;
import org.opensearch.common.unit.TimeValue;
import org.opensearch.core.common.io.stream.NamedWriteableRegistry;
import org.opensearch.core.xcontent.NamedXContentRegistry;
import org.opensearch.env.Environment;
import org.opensearch.env.NodeEnvironment;
import org.opensearch.ingest.Processor;
import org.opensearch.plugins.ActionPlugin;
import org.opensearch.plugins.IngestPlugin;
import org.opensearch.plugins.Plugin;
import org.opensearch.plugins.SearchPipelinePlugin;
import org.opensearch.plugins.SearchPlugin;
import org.opensearch.repositories.RepositoriesService;
import org.opensearch.rest.RestController;
import org.opensearch.rest.RestHandler;
import org.opensearch.script.ScriptService;
import org.opensearch.search.pipeline.SearchResponseProcessor;
import org.opensearch.search.fetch.FetchSubPhase;
import org.opensearch.threadpool.ExecutorBuilder;
import org.opensearch.threadpool.FixedExecutorBuilder;
import org.opensearch.threadpool.ThreadPool;
import org.opensearch.transport.client.Client;
import org.opensearch.watcher.ResourceWatcherService;

import java.nio.file.Path;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Supplier;

/** Wiring only: components are built here and passed to the adapters that need them. */
public class StrataPlugin extends Plugin implements IngestPlugin, ActionPlugin, SearchPlugin, SearchPipelinePlugin,
    PersistentTaskPlugin {
    private final Settings settings;
    private final SentenceSegmenter segmenter = SentenceSegmenter.forLocale(Locale.ENGLISH);
    /** This node's counters: everything that counts gets this one instance. */
    private final StrataStats stats = new StrataStats();
    private final SetOnce<ClusterService> clusterService = new SetOnce<>();
    private final SetOnce<ThreadPool> threadPool = new SetOnce<>();
    private final SetOnce<Client> client = new SetOnce<>();
    /** Which chunk index serves which source index: every component that needs it gets this one instance. */
    private final ChunkIndexRegistry registry = new ChunkIndexRegistry();
    private final SetOnce<LifecycleComponents> chunkComponents = new SetOnce<>();
    private final SetOnce<InferenceService> inference = new SetOnce<>();
    private final SetOnce<IndexNameExpressionResolver> resolver = new SetOnce<>();
    private final SetOnce<IngestService> ingestService = new SetOnce<>();
    private final SetOnce<GenerationBuilder> generations = new SetOnce<>();
    /** The dynamic {@link InferenceSettings#REMOTE_TIMEOUT}, read by every ml-commons call. */
    private volatile TimeValue remoteTimeout;
    private final QueryServices queryServices = new QueryServices(clusterService::get, resolver::get, inference::get, stats,
        () -> threadPool.get() == null ? null : threadPool.get().getThreadContext(), this::chunkWriters);

    public StrataPlugin(Settings settings) {
        this.settings = settings;
        this.remoteTimeout = InferenceSettings.REMOTE_TIMEOUT.get(settings);
    }

    @Override
    public List<Setting<?>> getSettings() {
        List<Setting<?>> all = new java.util.ArrayList<>(InferenceSettings.all());
        all.addAll(Slicing.settings());
        all.add(ChunkIndexJanitor.DELETE_WITH_SOURCE);
        all.addAll(QueryLimits.settings());
        all.addAll(ContextLimits.settings());
        all.add(Chunkers.MAX_NESTING_DEPTH);
        all.addAll(CompareLimits.settings());
        return all;
    }

    /** Built by the node's injector: it needs the cluster manager's index deletion service. */
    @Override
    public Collection<Class<? extends LifecycleComponent>> getGuiceServiceClasses() {
        return List.of(ChunkIndexJanitor.class);
    }

    @Override
    public List<ExecutorBuilder<?>> getExecutorBuilders(Settings settings) {
        return List.of(new FixedExecutorBuilder(settings, InferenceSettings.THREAD_POOL, InferenceSettings.THREADS.get(settings),
                InferenceSettings.QUEUE_SIZE.get(settings), "plugins.strata.inference.thread_pool"),
            new FixedExecutorBuilder(settings, InferenceSettings.QUERY_THREAD_POOL, InferenceSettings.QUERY_THREADS.get(settings),
                InferenceSettings.QUERY_QUEUE_SIZE.get(settings), "plugins.strata.inference.query_thread_pool"));
    }

    @Override
    public Collection<Object> createComponents(Client client, ClusterService clusterService, ThreadPool threadPool,
                                               ResourceWatcherService resourceWatcherService, ScriptService scriptService,
                                               NamedXContentRegistry xContentRegistry, Environment environment,
                                               NodeEnvironment nodeEnvironment, NamedWriteableRegistry namedWriteableRegistry,
                                               IndexNameExpressionResolver indexNameExpressionResolver,
                                               Supplier<RepositoriesService> repositoriesServiceSupplier) {
        this.clusterService.set(clusterService);
        this.threadPool.set(threadPool);
        this.client.set(client);
        this.resolver.set(indexNameExpressionResolver);
        InferenceService inference = inference(environment, client);
        ClusterSettings dynamic = clusterService.getClusterSettings();
        dynamic.addSettingsUpdateConsumer(InferenceSettings.MAX_PENDING, inference.executor()::setMaxPending);
        dynamic.addSettingsUpdateConsumer(InferenceSettings.QUERY_QUEUE_TIMEOUT, inference.executor()::setQueryQueueTimeout);
        dynamic.addSettingsUpdateConsumer(InferenceSettings.REMOTE_TIMEOUT, t -> remoteTimeout = t);
        clusterService.addListener(registry);
        LifecycleComponents chunks = chunkComponents(client, clusterService);
        InferenceGauges gauges = new InferenceGauges(InferenceSettings.THREAD_POOL, InferenceSettings.QUERY_THREAD_POOL,
            () -> inference.embedded().truncations());
        GenerationBuilder builder = new GenerationBuilder(client, clusterService, chunks.setup(), chunks.commit(), this::chunkWriters,
            CallerView.of(client));
        generations.set(builder);
        return List.of(chunks.store(), chunks.setup(), registry, inference, stats, gauges, new Chunkers(inference, segmenter),
            new Reconciler(client, clusterService, chunks.setup(), chunks.store(), chunks.rechunker(), this::chunkWriters,
                CallerView.of(client)),
            builder, new GenerationSwap(client, clusterService, builder, registry));
    }

    @Override
    public Map<String, Processor.Factory> getProcessors(Processor.Parameters parameters) {
        LifecycleComponents chunks = chunkComponents(parameters.client, parameters.ingestService.getClusterService());
        ingestService.trySet(parameters.ingestService);
        var services = new ChunkWriter.Services(chunks.store(), chunks.setup(), inference(parameters.env, parameters.client),
            parameters.threadContext, stats, Slicing.of(parameters.env.settings()));
        return Map.of(MultiGranularChunkingProcessor.TYPE, new MultiGranularChunkingProcessor.Factory(services, segmenter, parameters.ingestService));
    }

    @Override
    public List<ActionHandler<?, ?>> getActions() {
        // the transport actions get their services (InferenceService, StrataStats, InferenceGauges, Chunkers, Reconciler) injected
        // from createComponents
        return List.of(new ActionHandler<>(EmbedAction.INSTANCE, TransportEmbedAction.class),
            new ActionHandler<>(StatsAction.INSTANCE, TransportStatsAction.class),
            new ActionHandler<>(ChunkPreviewAction.INSTANCE, TransportChunkPreviewAction.class),
            new ActionHandler<>(ReconcileAction.INSTANCE, TransportReconcileAction.class),
            new ActionHandler<>(DocCountsAction.INSTANCE, DocCountsAction.TransportDocCountsAction.class),
            new ActionHandler<>(RegisterChunkIndexAction.INSTANCE, TransportRegisterChunkIndexAction.class),
            new ActionHandler<>(CompareAction.INSTANCE, TransportCompareAction.class),
            new ActionHandler<>(RebuildAction.INSTANCE, TransportRebuildAction.class),
            new ActionHandler<>(GenerationsAction.INSTANCE, TransportGenerationsAction.class),
            new ActionHandler<>(SwapAction.SWAP, TransportSwapAction.Swap.class),
            new ActionHandler<>(SwapAction.ROLLBACK, TransportSwapAction.Rollback.class));
    }

    @Override
    public List<RestHandler> getRestHandlers(Settings settings, RestController restController, ClusterSettings clusterSettings,
                                             IndexScopedSettings indexScopedSettings, SettingsFilter settingsFilter,
                                             IndexNameExpressionResolver indexNameExpressionResolver,
                                             Supplier<DiscoveryNodes> nodesInCluster) {
        return List.of(new RestEmbedAction(), new RestStatsAction(), new RestChunkPreviewAction(), new RestReconcileAction(),
            new RestStudioAction(), new RestCompareAction(clusterSettings), new RestRebuildAction(), new RestGenerationsAction(),
            new RestSwapAction());
    }

    @Override
    public List<QuerySpec<?>> getQueries() {
        return List.of(new QuerySpec<>(MultiGranularQueryBuilder.NAME, in -> new MultiGranularQueryBuilder(in, queryServices),
            parser -> MultiGranularQueryBuilder.fromXContent(parser, queryServices)),
            new QuerySpec<>(PlannedParentsQueryBuilder.NAME, PlannedParentsQueryBuilder::new, PlannedParentsQueryBuilder::fromXContent),
            new QuerySpec<>(DenseParentsQueryBuilder.NAME, DenseParentsQueryBuilder::new, DenseParentsQueryBuilder::fromXContent),
            new QuerySpec<>(HybridShardQueryBuilder.NAME, HybridShardQueryBuilder::new, HybridShardQueryBuilder::fromXContent));
    }

    @Override
    public Map<String, org.opensearch.search.pipeline.Processor.Factory<SearchResponseProcessor>> getResponseProcessors(
        SearchPipelinePlugin.Parameters parameters) {
        return Map.of(StrataContextProcessor.TYPE,
            new StrataContextProcessor.Factory(new StrataContextProcessor.Services(client::get, clusterService::get, inference::get)));
    }

    /** {@code ext.strata_context}: a search's context options in, its assembled context out. */
    @Override
    public List<SearchExtSpec<?>> getSearchExts() {
        return List.of(new SearchExtSpec<>(ContextExt.NAME, ContextExt::new, ContextExt::parse));
    }

    @Override
    public List<FetchSubPhase> getFetchSubPhases(FetchPhaseConstructionContext context) {
        return List.of(new BestChildFetchSubPhase());
    }

    /** Restrictions around the dense per-shard form on a shard (document-level security, alias filters) join its graph search. */
    @Override
    public void onIndexModule(IndexModule indexModule) {
        indexModule.addSearchOperationListener(new PreFilterPushdown());
    }

    @Override
    public List<ActionFilter> getActionFilters() {
        Supplier<ThreadContext> threadContext = () -> threadPool.get() == null ? null : threadPool.get().getThreadContext();
        SourceIndexLookup sources = new SourceIndexLookup(threadContext, clusterService::get, client::get, resolver::get, () -> registry);
        return List.of(new ChunkLifecycleFilter(threadContext, chunkComponents::get),
            new SourceIndexDeleteFilter(sources), new SourceIndexRefreshFilter(sources), new ChunkVectorsFilter(sources),
            new SearchTaskFilter(threadContext), new ContextExtFilter(threadContext),
            new TargetIndexChangeFilter(ingestService::get, clusterService::get, registry));
    }

    /**
     * The status of Strata's tasks, readable by a node that did not run them ({@code GET _tasks} of another node's task); the
     * params of a rebuild's persistent task, in the cluster state.
     */
    @Override
    public List<NamedWriteableRegistry.Entry> getNamedWriteables() {
        return List.of(new NamedWriteableRegistry.Entry(Task.Status.class, ProgressStatus.NAME, ProgressStatus::new),
            new NamedWriteableRegistry.Entry(PersistentTaskParams.class, RebuildResumeParams.NAME, RebuildResumeParams::new));
    }

    /** The params of a rebuild's persistent task, in the cluster state on disk. */
    @Override
    public List<NamedXContentRegistry.Entry> getNamedXContent() {
        return List.of(new NamedXContentRegistry.Entry(PersistentTaskParams.class, new ParseField(RebuildResumeParams.NAME),
            RebuildResumeParams::fromXContent));
    }

    /** Resumes a rebuild whose node left, with its caller's stored roles. */
    @Override
    public List<PersistentTasksExecutor<?>> getPersistentTasksExecutor(ClusterService clusterService, ThreadPool threadPool,
                                                                       Client client, SettingsModule settingsModule,
                                                                       IndexNameExpressionResolver expressionResolver) {
        return List.of(new RebuildResumeExecutor(generations::get, client, clusterService));
    }

    @Override
    public void close() {
        if (inference.get() != null) {
            inference.get().close();
        }
    }

    /** One set of chunk-index components per node, whichever of the node's two construction paths reaches it first. */
    private synchronized LifecycleComponents chunkComponents(Client client, ClusterService clusterService) {
        if (chunkComponents.get() == null) {
            ChunkStore store = new ChunkStore(client, stats);
            ChunkIndexSetup setup = new ChunkIndexSetup(client, clusterService, registry, resolver::get);
            ChunkCommit commit = new ChunkCommit(store, Slicing.of(settings));
            Rechunker rechunker = new Rechunker(setup, commit, this::chunkWriters, client, stats);
            chunkComponents.set(new LifecycleComponents(setup, commit, rechunker, store));
        }
        return chunkComponents.get();
    }

    /** The writers of the node's pipelines, once the ingest service is known. */
    private ChunkProcessors chunkWriters() {
        return ingestService.get() == null || clusterService.get() == null ? null
            : new ChunkProcessors(clusterService.get(), ingestService::get);
    }

    private synchronized InferenceService inference(Environment environment, Client client) {
        if (inference.get() == null) {
            configureDjl(environment.tmpDir());
            Path models = environment.configDir().resolve("strata").resolve("models");
            inference.set(new InferenceService(settings, models, threadPool::get,
                new MlCommonsEmbeddings(client, () -> remoteTimeout), MlCommonsLlm.models(client, () -> remoteTimeout), stats));
        }
        return inference.get();
    }

    /** DJL never goes online, and unpacks native libraries under the node's temp dir rather than the user's home. */
    private static void configureDjl(Path tmpDir) {
        if (System.getProperty("ai.djl.offline") == null) {
            System.setProperty("ai.djl.offline", "true");
        }
        if (System.getProperty("DJL_CACHE_DIR") == null) {
            System.setProperty("DJL_CACHE_DIR", tmpDir.resolve("djl").toString());
        }
    }
}
