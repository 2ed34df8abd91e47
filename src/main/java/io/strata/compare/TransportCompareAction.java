package io.strata.compare;

import io.strata.chunkindex.registry.ChunkIndexRegistry;
import io.strata.chunkindex.generations.TransportGenerationsAction;
import io.strata.query.QueryLimits;
import io.strata.transport.ProgressTask;
import io.strata.transport.RenderedResponse;
import org.opensearch.action.support.ActionFilters;
import org.opensearch.action.support.HandledTransportAction;
import org.opensearch.action.support.TransportIndicesResolvingAction;
import org.opensearch.cluster.metadata.IndexAbstraction;
import org.opensearch.cluster.metadata.IndexMetadata;
import org.opensearch.cluster.metadata.Metadata;
import org.opensearch.cluster.metadata.OptionallyResolvedIndices;
import org.opensearch.cluster.metadata.ResolvedIndices;
import org.opensearch.cluster.service.ClusterService;
import org.opensearch.common.inject.Inject;
import org.opensearch.common.settings.ClusterSettings;
import org.opensearch.common.settings.Setting;
import org.opensearch.common.settings.Settings;
import org.opensearch.common.util.concurrent.AbstractRunnable;
import org.opensearch.core.action.ActionListener;
import org.opensearch.core.rest.RestStatus;
import org.opensearch.core.tasks.TaskId;
import org.opensearch.core.xcontent.NamedXContentRegistry;
import org.opensearch.index.IndexNotFoundException;
import org.opensearch.tasks.Task;
import org.opensearch.threadpool.ThreadPool;
import org.opensearch.transport.TransportService;
import org.opensearch.transport.client.Client;

import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * {@code POST _plugins/_strata/_compare}: two chunk indices searched with the same {@code multi_granular} query for the
 * same questions, scored against the questions' expected source documents (and spans); see {@link CompareReport}.
 *
 * <p>Everything is checked before the first search: both sides are chunk indices Strata registered, {@code k} within
 * {@code plugins.strata.query.max_k}, the questions within {@code plugins.strata.compare.max_questions}, and the query's
 * options parse. The two need not serve the same source index: a chunking change applied by copying the source index
 * through a new pipeline ({@code _reindex}) gives two source indices with the same document ids, which is what the
 * questions' {@code source_id}s name; the answer names each side's source index. The searches run as the caller, in its
 * thread context ({@link CompareRun}): with document-level security the comparison is of what this caller can read.
 */
public final class TransportCompareAction extends HandledTransportAction<CompareRequest, RenderedResponse>
    implements TransportIndicesResolvingAction<CompareRequest> {
    private final ClusterService clusterService;
    private final ChunkIndexRegistry registry;
    private final NamedXContentRegistry xContentRegistry;
    private final Client client;
    private final ThreadPool threadPool;

    @Inject
    public TransportCompareAction(TransportService transportService, ActionFilters actionFilters, ClusterService clusterService,
                                  ChunkIndexRegistry registry, NamedXContentRegistry xContentRegistry, Client client) {
        super(CompareAction.NAME, transportService, actionFilters, CompareRequest::new);
        this.clusterService = clusterService;
        this.registry = registry;
        this.xContentRegistry = xContentRegistry;
        this.client = client;
        this.threadPool = transportService.getThreadPool();
    }

    /** The indices the action is authorised on: both sides, as named. */
    @Override
    public OptionallyResolvedIndices resolveIndices(CompareRequest request) {
        return ResolvedIndices.of(request.indices());
    }

    @Override
    protected void doExecute(Task task, CompareRequest request, ActionListener<RenderedResponse> listener) {
        CompareReport.Side a;
        CompareReport.Side b;
        QueryTemplate template;
        try {
            ClusterSettings settings = clusterService.getClusterSettings();
            CompareRequest.checkCount(request.questions().size(), value(settings, CompareLimits.MAX_QUESTIONS));
            int maxK = value(settings, QueryLimits.MAX_K);
            if (request.k() > maxK) {
                throw new IllegalArgumentException(String.format(Locale.ROOT, "[%s] [k] must be at most [%d] on this cluster ([%s]), "
                    + "got [%d]", CompareRequest.OWNER, maxK, QueryLimits.MAX_K.getKey(), request.k()));
            }
            // before the options reach the query parser, which recurses per level
            CompareRequest.checkQueryDepth(request.query(), value(settings, CompareLimits.MAX_QUERY_DEPTH));
            Metadata metadata = clusterService.state().metadata();
            a = side(metadata, "a", request.a());
            b = side(metadata, "b", request.b());
            template = new QueryTemplate(xContentRegistry, request.query(), request.k());
        } catch (Exception e) {
            listener.onFailure(e);
            return;
        }
        TaskId parent = new TaskId(clusterService.localNode().getId(), task.getId());
        CompareRun run = new CompareRun(client, parent, task instanceof ProgressTask p ? p : null, request,
            new String[] { a.name(), b.name() }, template);
        run.start(ActionListener.wrap(rankings -> threadPool.generic().execute(new AbstractRunnable() {
            @Override
            protected void doRun() throws Exception {
                // the bootstrap (10,000 resamples per metric) runs here, not on the thread of the last search's response
                listener.onResponse(RenderedResponse.of(new CompareReport(request, a, b, rankings), RestStatus.OK));
            }

            @Override
            public void onFailure(Exception e) {
                listener.onFailure(e);
            }
        }), listener::onFailure));
    }

    /** A side: one chunk index Strata registered (by name, or an alias of one index), or a 400 naming the field. */
    private CompareReport.Side side(Metadata metadata, String field, String name) {
        IndexAbstraction named = metadata.getIndicesLookup().get(name);
        if (named == null) {
            throw new IndexNotFoundException(name);
        }
        if (named.getIndices().size() != 1) {
            throw new IllegalArgumentException(String.format(Locale.ROOT, "[%s] [%s] must name one chunk index, got [%s], %s of %s",
                CompareRequest.OWNER, field, name, named.getType().getDisplayName(),
                named.getIndices().stream().map(i -> i.getIndex().getName()).sorted().toList()));
        }
        String concrete = named.getIndices().get(0).getIndex().getName();
        ChunkIndexRegistry.Registration registration = registry.ofChunkIndex(concrete);
        Map<?, ?> generation = registration == null ? TransportGenerationsAction.aboutOf(metadata.index(concrete)) : null;
        if (generation != null && generation.get("source_index_uuid") instanceof String uuid) {
            // a generation _rebuild built and no pipeline writes yet: compared before it serves. Its _meta only names the
            // source in the report; the searches run as the caller whatever it says.
            for (IndexMetadata source : metadata.indices().values()) {
                if (source.getIndexUUID().equals(uuid)) {
                    return new CompareReport.Side(field, name, concrete, source.getIndex().getName(), uuid);
                }
            }
        }
        if (registration == null) {
            List<String> chunkIndices = registry.ofSource(metadata, concrete).stream().map(r -> r.chunkIndex().getName()).sorted().toList();
            throw new IllegalArgumentException(chunkIndices.isEmpty()
                ? String.format(Locale.ROOT, "[%s] [%s] [%s] is not a chunk index: name an index a [multi_granular_chunking] pipeline "
                    + "writes chunks to", CompareRequest.OWNER, field, name)
                : String.format(Locale.ROOT, "[%s] [%s] [%s] is a source index: name one of its chunk indices %s", CompareRequest.OWNER,
                    field, name, chunkIndices));
        }
        return new CompareReport.Side(field, name, concrete, registration.source().getName(), registration.source().getUUID());
    }

    /** The setting's value; its default where it is not registered (a node without the plugin's settings: tests). */
    private static int value(ClusterSettings settings, Setting<Integer> setting) {
        return settings.get(setting.getKey()) == null ? setting.getDefault(Settings.EMPTY) : settings.get(setting);
    }
}
