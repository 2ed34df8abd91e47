package io.strata.chunkindex.generations;

import io.strata.chunkindex.registry.ChunkIndexRegistry;
import io.strata.transport.ProgressStatus;
import io.strata.transport.RenderedResponse;
import org.opensearch.action.admin.cluster.node.tasks.list.ListTasksRequest;
import org.opensearch.action.search.MultiSearchRequest;
import org.opensearch.action.search.MultiSearchResponse;
import org.opensearch.action.search.SearchRequest;
import org.opensearch.action.support.ActionFilters;
import org.opensearch.action.support.HandledTransportAction;
import org.opensearch.action.support.TransportIndicesResolvingAction;
import org.opensearch.cluster.metadata.IndexMetadata;
import org.opensearch.cluster.metadata.Metadata;
import org.opensearch.cluster.metadata.OptionallyResolvedIndices;
import org.opensearch.cluster.metadata.ResolvedIndices;
import org.opensearch.cluster.service.ClusterService;
import org.opensearch.common.inject.Inject;
import org.opensearch.core.action.ActionListener;
import org.opensearch.core.rest.RestStatus;
import org.opensearch.core.xcontent.ToXContentObject;
import org.opensearch.index.IndexNotFoundException;
import org.opensearch.index.query.QueryBuilders;
import org.opensearch.search.builder.SearchSourceBuilder;
import org.opensearch.tasks.Task;
import org.opensearch.tasks.TaskInfo;
import org.opensearch.transport.TransportService;
import org.opensearch.transport.client.Client;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.TreeMap;

/**
 * Lists the generations of a source index's chunk indices: each chunk index registered to it (generation 1 when named
 * as the pipeline names it) and each index a {@code _rebuild} of it built ({@link GenerationBuilder#GENERATION_META}),
 * with its generation number, config identity (as the build recorded it), whether it is the index of the chunk index's
 * name (the one searches of that name read), its state ({@code complete}, or {@code interrupted}: a build that no live task
 * runs left it unfinished, {@link GenerationRecord}), and its documents and parents as the caller's searches count them;
 * and a rebuild of it running on any node (as the caller may list tasks: one who may not sees a build running on another
 * node as {@code interrupted}).
 */
public final class TransportGenerationsAction extends HandledTransportAction<GenerationsAction.Request, RenderedResponse>
    implements TransportIndicesResolvingAction<GenerationsAction.Request> {
    private final ClusterService clusterService;
    private final ChunkIndexRegistry registry;
    private final GenerationBuilder builder;
    private final Client client;

    @Inject
    public TransportGenerationsAction(TransportService transportService, ActionFilters actionFilters, ClusterService clusterService,
                                      ChunkIndexRegistry registry, GenerationBuilder builder, Client client) {
        super(GenerationsAction.NAME, transportService, actionFilters, GenerationsAction.Request::new);
        this.clusterService = clusterService;
        this.registry = registry;
        this.builder = builder;
        this.client = client;
    }

    @Override
    public OptionallyResolvedIndices resolveIndices(GenerationsAction.Request request) {
        return ResolvedIndices.of(request.index());
    }

    @Override
    protected void doExecute(Task task, GenerationsAction.Request request, ActionListener<RenderedResponse> listener) {
        Metadata metadata = clusterService.state().metadata();
        IndexMetadata source = metadata.index(request.index());
        if (source == null) {
            listener.onFailure(new IndexNotFoundException(request.index()));
            return;
        }
        String uuid = source.getIndexUUID();
        // generation index name → what is known of it
        TreeMap<String, Map<String, Object>> generations = new TreeMap<>();
        for (ChunkIndexRegistry.Registration r : registry.ofSource(uuid)) {
            Map<String, Object> g = new LinkedHashMap<>();
            g.put("index", r.chunkIndex().getName());
            // a swapped-in generation is registered under its own name; the name applications search is then its alias
            String name = r.chunkIndex().getName();
            int cut = name.lastIndexOf("-g");
            OptionalInt number = cut > 0 ? GenerationNames.generationOf(name.substring(0, cut), name) : OptionalInt.empty();
            g.put("generation", number.orElse(1));
            g.put("chunk_index", number.isPresent() ? name.substring(0, cut) : name);
            g.put("serving", true);
            g.put(GenerationRecord.STATE, GenerationRecord.COMPLETE);
            generations.put(r.chunkIndex().getName(), g);
        }
        for (IndexMetadata index : metadata.indices().values()) {
            Map<?, ?> about = aboutOf(index);
            if (about == null || !uuid.equals(about.get("source_index_uuid"))) {
                continue;
            }
            String name = index.getIndex().getName();
            Map<String, Object> g = new LinkedHashMap<>();
            g.put("index", name);
            g.put("generation", about.get("generation"));
            int cut = name.lastIndexOf("-g");
            String chunkIndex = cut > 0 ? name.substring(0, cut) : name;
            OptionalInt number = GenerationNames.generationOf(chunkIndex, name);
            g.put("chunk_index", number.isPresent() ? chunkIndex : name);
            g.put("config", about.get("config"));
            g.put("pipeline", about.get("pipeline"));
            g.put("serving", registry.ofChunkIndex(name) != null);
            // building and not the running build's (removed below): its build was interrupted
            g.put(GenerationRecord.STATE, GenerationRecord.stateOf(about).equals(GenerationRecord.BUILDING) ? GenerationRecord.INTERRUPTED
                : GenerationRecord.COMPLETE);
            generations.put(name, g);
        }
        String name = source.getIndex().getName();
        runningRebuild(name, uuid, ActionListener.wrap(rebuild -> {
            if (rebuild != null) {
                generations.remove(rebuild.get("generation_index")); // not whole yet: shown as the running build
            }
            List<Map<String, Object>> list = new ArrayList<>(generations.values());
            count(list, ActionListener.wrap(v -> {
                Map<String, Object> body = new LinkedHashMap<>();
                body.put("source_index", name);
                body.put("generations", list);
                if (rebuild != null) {
                    body.put("rebuild", rebuild);
                }
                ToXContentObject content = (b, params) -> b.map(body);
                listener.onResponse(RenderedResponse.of(content, RestStatus.OK));
            }, listener::onFailure));
        }, listener::onFailure));
    }

    /**
     * The progress of a rebuild of {@code source} running on any node, with its task id, or null: the cluster's rebuild
     * tasks as the caller may list them ({@code cluster:monitor/tasks/lists}); a caller who may not sees only a rebuild
     * running on this node.
     */
    private void runningRebuild(String source, String uuid, ActionListener<Map<String, Object>> listener) {
        GenerationBuilder.Running local = builder.running(uuid);
        Map<String, Object> here = null;
        if (local != null) {
            here = new LinkedHashMap<>(local.report().progress());
            here.put("task", local.task());
        }
        Map<String, Object> fallback = here;
        ListTasksRequest tasks = new ListTasksRequest().setActions(RebuildAction.NAME).setDetailed(true);
        client.admin().cluster().listTasks(tasks, ActionListener.wrap(r -> {
            for (TaskInfo info : r.getTasks()) {
                // the status names the source index it rebuilds (its name: the task ran against the index of this name)
                if (info.getStatus() instanceof ProgressStatus status && source.equals(status.values().get("source_index"))
                    && status.values().containsKey("generation_index")) {
                    Map<String, Object> rebuild = new LinkedHashMap<>(status.values());
                    rebuild.put("task", info.getTaskId().toString());
                    listener.onResponse(rebuild);
                    return;
                }
            }
            // the listing covers every node, this one too: a build it does not show has ended (this node's entry can
            // outlive its task by a moment), so the local entry stands in only when the caller may not list tasks
            listener.onResponse(null);
        }, e -> listener.onResponse(fallback)));
    }

    /** What a built generation's {@code _meta} says of it (source, generation, config), or null: shown or reported, never acted on. */
    public static Map<?, ?> aboutOf(IndexMetadata index) {
        if (index.mapping() == null || !(index.mapping().sourceAsMap().get("_meta") instanceof Map<?, ?> meta)) {
            return null;
        }
        return meta.get(GenerationBuilder.GENERATION_META) instanceof Map<?, ?> about ? about : null;
    }

    /** Documents (chunk 0 of each) and parents of each generation, as the caller's searches see them. */
    private void count(List<Map<String, Object>> list, ActionListener<Void> listener) {
        if (list.isEmpty()) {
            listener.onResponse(null);
            return;
        }
        MultiSearchRequest searches = new MultiSearchRequest();
        for (Map<String, Object> g : list) {
            String index = (String) g.get("index");
            searches.add(new SearchRequest(index).source(new SearchSourceBuilder().size(0).trackTotalHits(true)
                .query(QueryBuilders.termQuery("ordinal", 0))));
            searches.add(new SearchRequest(index).source(new SearchSourceBuilder().size(0).trackTotalHits(true)));
        }
        client.multiSearch(searches, ActionListener.wrap(r -> {
            MultiSearchResponse.Item[] items = r.getResponses();
            for (int i = 0; i < list.size(); i++) {
                Map<String, Object> g = list.get(i);
                MultiSearchResponse.Item documents = items[2 * i];
                MultiSearchResponse.Item parents = items[2 * i + 1];
                if (documents.isFailure() || parents.isFailure()) {
                    Exception e = documents.isFailure() ? documents.getFailure() : parents.getFailure();
                    g.put("error", e.getMessage());
                } else {
                    g.put("documents", documents.getResponse().getHits().getTotalHits().value());
                    g.put("parents", parents.getResponse().getHits().getTotalHits().value());
                }
            }
            listener.onResponse(null);
        }, listener::onFailure));
    }
}
