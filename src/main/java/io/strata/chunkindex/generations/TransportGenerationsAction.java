package io.strata.chunkindex.generations;

import io.strata.chunkindex.ChunkIndexRegistry;
import io.strata.transport.RenderedResponse;
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
 * name (the one searches of that name read), and its documents and parents as the caller's searches count them; and a
 * rebuild running on this node.
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
            g.put("generation", 1);
            g.put("chunk_index", r.chunkIndex().getName());
            g.put("serving", true);
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
            g.put("serving", false);
            generations.put(name, g);
        }
        GenerationBuilder.Running running = builder.running(uuid);
        if (running != null) {
            generations.remove(running.report().generationIndex); // not whole yet: shown as the running build
        }
        List<Map<String, Object>> list = new ArrayList<>(generations.values());
        count(list, ActionListener.wrap(v -> {
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("source_index", source.getIndex().getName());
            body.put("generations", list);
            if (running != null) {
                Map<String, Object> rebuild = new LinkedHashMap<>(running.report().progress());
                rebuild.put("task", running.task());
                body.put("rebuild", rebuild);
            }
            ToXContentObject content = (b, params) -> b.map(body);
            listener.onResponse(RenderedResponse.of(content, RestStatus.OK));
        }, listener::onFailure));
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
