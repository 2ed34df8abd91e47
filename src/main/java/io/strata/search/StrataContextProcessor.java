package io.strata.search;

import io.strata.chunkindex.ChunkDocuments;
import io.strata.chunkindex.ChunkIndexMeta;
import io.strata.context.ContextOptions;
import io.strata.context.ContextPacker;
import io.strata.context.PackedContext;
import io.strata.inference.InferenceService;
import io.strata.model.ModelRef;
import org.opensearch.action.search.SearchRequest;
import org.opensearch.action.search.SearchResponse;
import org.opensearch.action.search.SearchResponseSections;
import org.opensearch.action.search.ShardSearchFailure;
import org.opensearch.OpenSearchStatusException;
import org.opensearch.action.support.GroupedActionListener;
import org.opensearch.common.settings.ClusterSettings;
import org.opensearch.common.settings.Setting;
import org.opensearch.common.settings.Settings;
import org.opensearch.core.rest.RestStatus;
import org.opensearch.core.tasks.TaskId;
import org.opensearch.index.IndexSettings;
import org.opensearch.index.query.QueryBuilder;
import org.opensearch.tasks.Task;
import org.opensearch.cluster.metadata.IndexMetadata;
import org.opensearch.cluster.service.ClusterService;
import org.opensearch.core.action.ActionListener;
import org.opensearch.search.SearchExtBuilder;
import org.opensearch.search.SearchHit;
import org.opensearch.search.builder.SearchSourceBuilder;
import org.opensearch.search.pipeline.AbstractProcessor;
import org.opensearch.search.pipeline.PipelineProcessingContext;
import org.opensearch.search.pipeline.Processor;
import org.opensearch.search.pipeline.SearchResponseProcessor;
import org.opensearch.search.profile.SearchProfileShardResults;
import org.opensearch.transport.client.Client;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

/**
 * {@code strata_context}: a search response processor that assembles, from the hits of a search on a chunk index, the
 * context an application puts into its prompt — at most a budget of tokens, cited — and returns it as
 * {@code ext.strata_context} ({@code tokens}, {@code budget}, {@code tokenizer}, {@code passages}, {@code text}); the hits
 * stay as they were. {@link ContextPacker} decides what enters; this class gathers its inputs.
 *
 * <p>What it reads, it reads as the caller: searches by id (each index's ids of the hits' parents and of the parents before
 * and after each, under a filter on that index; child tasks of the search with its time-out) with the caller's thread context, on the indices or aliases the search named, so document- and field-level
 * security and alias filters apply to it as to the search itself (the query's own filters do not: a neighbouring parent
 * is context of a hit, not a hit); a parent the caller may not read never enters, nor does text the caller may not see. The seed of each
 * hit is its matched chunk when the query asked for {@code explain_child} (the {@code strata_best_child} field), else the
 * whole parent.
 */
public final class StrataContextProcessor extends AbstractProcessor implements SearchResponseProcessor {
    public static final String TYPE = "strata_context";
    private static final String[] FETCHED = {ChunkDocuments.SOURCE_ID, ChunkDocuments.SOURCE_INDEX, ChunkDocuments.ORDINAL,
        ChunkDocuments.TEXT, ChunkDocuments.START, ChunkDocuments.END, ChunkDocuments.CHILDREN + "." + ChunkDocuments.LEVEL,
        ChunkDocuments.CHILDREN + "." + ChunkDocuments.START, ChunkDocuments.CHILDREN + "." + ChunkDocuments.END};

    private final ContextParams defaults;
    private final Services services;

    /** What the processor needs from the node; suppliers for what exists only once the node has started. */
    public record Services(Supplier<Client> client, Supplier<ClusterService> clusterService, Supplier<InferenceService> inference) {}

    StrataContextProcessor(String tag, String description, boolean ignoreFailure, ContextParams defaults, Services services) {
        super(tag, description, ignoreFailure);
        this.defaults = defaults;
        this.services = services;
    }

    @Override
    public String getType() {
        return TYPE;
    }

    @Override
    public SearchResponse processResponse(SearchRequest request, SearchResponse response) {
        throw new UnsupportedOperationException("[" + TYPE + "] runs asynchronously");
    }

    @Override
    public void processResponseAsync(SearchRequest request, SearchResponse response, PipelineProcessingContext context,
                                     ActionListener<SearchResponse> listener) {
        try {
            ContextParams params = options(request);
            if (params.tokenizer() != null && !params.tokenizer().equals(defaults.tokenizer())) {
                checkTokenizer(services.inference().get(), "ext." + TYPE, params.tokenizer());
            }
            SearchHit[] hits = response.getHits().getHits();
            checkLimits(params, hits.length);
            if (hits.length == 0) {
                listener.onResponse(withContext(response, render(new PackedContext(0, params.budget(), List.of(), ""), params, null,
                    List.of())));
                return;
            }
            String tokenizer = params.tokenizer() != null ? params.tokenizer() : indexTokenizer(hits);
            HitChunks chunks = HitChunks.of(hits, params.neighbours());
            List<SearchRequest> lookups = lookups(request, chunks);
            GroupedActionListener<SearchResponse> all = new GroupedActionListener<>(ActionListener.wrap(responses -> {
                List<SearchHit> found = new ArrayList<>();
                for (SearchResponse r : responses) {
                    found.addAll(List.of(r.getHits().getHits()));
                }
                services.inference().get().runQuery(() -> {
                    ContextPacker packer = new ContextPacker(services.inference().get().tokenCounter(tokenizer));
                    ContextOptions options = new ContextOptions(params.budget(), params.order(), params.separator());
                    HitChunks.Inputs inputs = chunks.inputs(found.toArray(SearchHit[]::new), params.seeds() == ContextParams.Seeds.EVIDENCE);
                    PackedContext packed = packer.pack(inputs.seeds(), inputs.documents(), options);
                    return render(packed, params, tokenizer, chunks.citations());
                }, ActionListener.wrap(c -> listener.onResponse(withContext(response, c)), listener::onFailure));
            }, listener::onFailure), lookups.size());
            Client client = services.client().get();
            for (SearchRequest lookup : lookups) {
                client.search(lookup, ActionListener.wrap(r -> {
                    if (r.getFailedShards() > 0 || r.isTimedOut()) {
                        all.onFailure(incomplete(r));
                    } else {
                        all.onResponse(r);
                    }
                }, all::onFailure));
            }
        } catch (Exception e) {
            listener.onFailure(e);
        }
    }

    /** A 400 naming the node setting a search goes past: checked before anything is read. */
    private void checkLimits(ContextParams params, int hits) {
        ClusterSettings settings = services.clusterService().get().getClusterSettings();
        int maxHits = value(settings, ContextLimits.MAX_HITS);
        if (hits > maxHits) {
            throw new IllegalArgumentException(String.format(Locale.ROOT, "[%s] reads the parents of at most [%d] hits ([%s]), got [%d] "
                + "hits; ask for fewer ([size], or [k] of multi_granular)", TYPE, maxHits, ContextLimits.MAX_HITS.getKey(), hits));
        }
        int maxBudget = value(settings, ContextLimits.MAX_BUDGET);
        if (params.budget() > maxBudget) {
            throw new IllegalArgumentException(String.format(Locale.ROOT, "[%s] [budget] must be at most [%d] on this cluster ([%s]), got "
                + "[%d]", TYPE, maxBudget, ContextLimits.MAX_BUDGET.getKey(), params.budget()));
        }
    }

    private static int value(ClusterSettings settings, Setting<Integer> setting) {
        return settings == null || settings.get(setting.getKey()) == null ? setting.getDefault(Settings.EMPTY) : settings.get(setting);
    }

    /**
     * The searches that read the hits' parents and their neighbours, as the caller: through the indices the search named (its
     * aliases' filters apply) unless it searched a point in time, with its routing, preference, time-out and
     * cancel-after-interval, each a child task of the search (a cancel stops them), no search pipeline, and in batches of at
     * most {@value #LOOKUP_BATCH} parents (within any index's result window).
     */
    private List<SearchRequest> lookups(SearchRequest request, HitChunks chunks) {
        Task task = ContextExtFilter.searchTask(services.client().get().threadPool().getThreadContext());
        ClusterService cluster = services.clusterService().get();
        TaskId parent = task == null || cluster.localNode() == null ? null : new TaskId(cluster.localNode().getId(), task.getId());
        return lookups(request, chunks, parent, batch(chunks, cluster));
    }

    /** {@link #lookups(SearchRequest, HitChunks)} for the search task {@code parent} (null: none known), {@code batch} parents each. */
    static List<SearchRequest> lookups(SearchRequest request, HitChunks chunks, TaskId parent, int batch) {
        boolean named = request.indices() != null && request.indices().length > 0 && request.pointInTimeBuilder() == null;
        List<SearchRequest> out = new ArrayList<>();
        for (Map.Entry<QueryBuilder, Integer> q : chunks.lookups(batch)) {
            SearchSourceBuilder source = new SearchSourceBuilder().query(q.getKey()).size(q.getValue())
                // naming the vector fields lets the k-NN plugin skip rebuilding them from its derived source
                .fetchSource(FETCHED, new String[] {ChunkDocuments.EMBEDDING, ChunkDocuments.CHILDREN + "." + ChunkDocuments.EMBEDDING})
                .trackTotalHits(false);
            if (request.source() != null && request.source().timeout() != null) {
                source.timeout(request.source().timeout());
            }
            SearchRequest fetch = new SearchRequest(named ? request.indices() : chunks.indices()).source(source);
            // no search pipeline: the lookup of an index whose default pipeline is this one would assemble a context of its
            // own lookup, and so on without end
            fetch.pipeline("_none");
            fetch.routing(request.routing()).preference(request.preference());
            fetch.allowPartialSearchResults(false);
            if (named) {
                fetch.indicesOptions(request.indicesOptions());
            }
            if (request.getCancelAfterTimeInterval() != null) {
                fetch.setCancelAfterTimeInterval(request.getCancelAfterTimeInterval());
            }
            if (parent != null) {
                fetch.setParentTask(parent);
            }
            out.add(fetch);
        }
        return out;
    }

    /** Parents per lookup search. */
    static final int LOOKUP_BATCH = 1_000;

    /** {@link #LOOKUP_BATCH}, or less where a hit's index (of this cluster) has a smaller result window. */
    private static int batch(HitChunks chunks, ClusterService cluster) {
        int batch = LOOKUP_BATCH;
        for (String index : chunks.indices()) {
            IndexMetadata meta = cluster.state().metadata().index(index);
            if (meta != null) {
                batch = Math.min(batch, IndexSettings.MAX_RESULT_WINDOW_SETTING.get(meta.getSettings()));
            }
        }
        return Math.max(1, batch);
    }

    /** A lookup that timed out or failed on some shards: no context from part of the parents. */
    private static OpenSearchStatusException incomplete(SearchResponse r) {
        if (r.getShardFailures().length > 0) {
            ShardSearchFailure first = r.getShardFailures()[0];
            return new OpenSearchStatusException(String.format(Locale.ROOT, "[%s] reading the hits' parents failed on [%d] of [%d] shards, "
                + "so no context is built from part of them: %s", TYPE, r.getFailedShards(), r.getTotalShards(), first.reason()),
                first.status(), first.getCause());
        }
        return new OpenSearchStatusException(String.format(Locale.ROOT, "[%s] reading the hits' parents timed out after %s (the search's "
            + "[timeout]), so no context is built from part of them; raise [timeout]", TYPE, r.getTook()), RestStatus.GATEWAY_TIMEOUT);
    }

    /**
     * A named tokenizer must be an embedding model of this node: checked when the pipeline is created and when a request
     * names another, so the error names [tokenizer] (the model layer's own message names [model]).
     */
    private static void checkTokenizer(InferenceService inference, String owner, String tokenizer) {
        try {
            inference.validate("", ModelRef.embedded(tokenizer));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(String.format(Locale.ROOT, "[%s] [tokenizer] %s", owner,
                e.getMessage().strip().replaceFirst("^\\[model\\] ", "")), e);
        }
    }

    private ContextParams options(SearchRequest request) {
        ContextExt ext = ContextExt.requestOf(request);
        return ext == null ? defaults : ext.options(defaults);
    }

    /** The tokenizer of the searched chunk indices' embedded model (the default model for chunk indices without vectors). */
    private String indexTokenizer(SearchHit[] hits) {
        Set<String> models = new LinkedHashSet<>();
        for (SearchHit hit : hits) {
            if (hit.getClusterAlias() != null) { // this node's metadata describes its own indices, maybe one of the same name
                throw new IllegalArgumentException(String.format(Locale.ROOT, "[%s] hit [%s] comes from index [%s] of remote cluster "
                    + "[%s], whose model this node cannot read; name the model whose tokenizer counts the budget in [tokenizer]",
                    TYPE, hit.getId(), HitChunks.indexOf(hit), hit.getClusterAlias()));
            }
            IndexMetadata index = services.clusterService().get().state().metadata().index(hit.getIndex());
            ChunkIndexMeta meta = index == null ? null : ChunkIndexMeta.of(index);
            if (meta == null) {
                throw new IllegalArgumentException(String.format(Locale.ROOT, "[%s] index [%s] is not a Strata chunk index (no "
                    + "[_meta.strata] in its mapping); search the target_index of a multi_granular_chunking pipeline", TYPE,
                    hit.getIndex()));
            }
            if (!meta.hasVectors()) {
                models.add(services.inference().get().defaultRef().model());
            } else if (meta.model().get("model") instanceof String name) {
                models.add(name);
            } else {
                throw new IllegalArgumentException(String.format(Locale.ROOT, "[%s] chunk index [%s] was embedded by ml-commons model "
                    + "[%s], whose tokenizer is not on this node; name an embedded model in [tokenizer] to count the budget with",
                    TYPE, hit.getIndex(), meta.model().get("model_id")));
            }
        }
        if (models.size() > 1) {
            throw new IllegalArgumentException(String.format(Locale.ROOT, "[%s] the hits come from chunk indices of different models %s; "
                + "name the one whose tokenizer counts the budget in [tokenizer]", TYPE, models));
        }
        return models.iterator().next();
    }

    private static Map<String, Object> render(PackedContext packed, ContextParams params, String tokenizer, List<HitChunks.Citation> citations) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("tokens", packed.tokens());
        out.put("budget", packed.budget());
        if (tokenizer != null) {
            out.put("tokenizer", tokenizer);
        }
        List<Map<String, Object>> passages = new ArrayList<>(packed.passages().size());
        for (var p : packed.passages()) {
            HitChunks.Citation cite = HitChunks.Citation.of(p.document(), citations);
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("index", cite.index());
            m.put("source_index", cite.sourceIndex());
            m.put("source_id", cite.sourceId());
            m.put("start", p.start());
            m.put("end", p.end());
            m.put("tokens", p.tokens());
            m.put("hits", p.hits());
            if (p.truncated()) {
                m.put("truncated", true);
            }
            m.put("text", p.text());
            passages.add(m);
        }
        out.put("passages", passages);
        out.put("text", packed.text());
        return out;
    }

    private static SearchResponse withContext(SearchResponse response, Map<String, Object> context) {
        SearchResponseSections in = response.getInternalResponse();
        List<SearchExtBuilder> exts = new ArrayList<>(in.getSearchExtBuilders());
        exts.add(ContextExt.ofResponse(context));
        SearchResponseSections out = new SearchResponseSections(in.hits(), in.aggregations(), in.suggest(), in.timedOut(),
            in.terminatedEarly(), response.getProfileResults() == null || response.getProfileResults().isEmpty() ? null
            : new SearchProfileShardResults(response.getProfileResults()), in.getNumReducePhases(), exts, in.getProcessorResult());
        return new SearchResponse(out, response.getScrollId(), response.getTotalShards(), response.getSuccessfulShards(),
            response.getSkippedShards(), response.getTook().millis(), response.getPhaseTook(), response.getShardFailures(),
            response.getClusters(), response.pointInTimeId());
    }

    public static final class Factory implements Processor.Factory<SearchResponseProcessor> {
        private final Services services;

        public Factory(Services services) {
            this.services = services;
        }

        @Override
        public SearchResponseProcessor create(Map<String, Processor.Factory<SearchResponseProcessor>> factories, String tag,
                                              String description, boolean ignoreFailure, Map<String, Object> config,
                                              Processor.PipelineContext pipelineContext) {
            ContextParams defaults = ContextParams.parse(TYPE, config, ContextParams.DEFAULTS);
            if (defaults.tokenizer() != null) {
                checkTokenizer(services.inference().get(), TYPE, defaults.tokenizer());
            }
            config.clear(); // every key was read (or refused) above
            return new StrataContextProcessor(tag, description, ignoreFailure, defaults, services);
        }
    }
}
