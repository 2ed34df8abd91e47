package io.strata.chunkindex.setup;

import io.strata.chunkindex.ChunkDocuments;
import io.strata.chunkindex.ChunkIndexMeta;
import io.strata.chunkindex.ChunkKey;
import io.strata.chunkindex.ChunkWriteException;
import io.strata.chunkindex.ServingIndex;
import io.strata.chunkindex.VectorOptions;
import io.strata.chunkindex.registry.ChunkIndexRegistry;
import io.strata.chunkindex.registry.RegisterChunkIndexAction;
import io.strata.chunkindex.registry.RegisterChunkIndexRequest;
import io.strata.model.ModelInfo;
import org.opensearch.ExceptionsHelper;
import org.opensearch.ResourceAlreadyExistsException;
import org.opensearch.action.admin.indices.create.CreateIndexRequest;
import org.opensearch.action.admin.indices.mapping.put.PutMappingRequest;
import org.opensearch.action.support.ContextPreservingActionListener;
import org.opensearch.action.bulk.BulkItemResponse;
import org.opensearch.action.bulk.BulkRequest;
import org.opensearch.action.index.IndexRequest;
import org.opensearch.cluster.ClusterState;
import org.opensearch.cluster.metadata.IndexMetadata;
import org.opensearch.cluster.metadata.IndexNameExpressionResolver;
import org.opensearch.cluster.service.ClusterService;
import org.opensearch.common.settings.Settings;
import org.opensearch.common.util.concurrent.ThreadContext;
import org.opensearch.core.action.ActionListener;
import org.opensearch.core.index.Index;
import org.opensearch.core.rest.RestStatus;
import org.opensearch.index.IndexSettings;
import org.opensearch.ingest.IngestService;
import org.opensearch.index.engine.VersionConflictEngineException;
import org.opensearch.transport.client.Client;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * Gets a chunk index ready for a caller's chunk writes, with the caller's permissions: creates it (or adds the chunk mapping
 * to an index the user created) on first use, checks that it holds vectors of the same model and belongs to the same
 * source index ({@link ChunkIndexRegistry}; {@link ChunkIndexOwnership}), and checks that the caller may write it
 * ({@link #checkWritable}); then, after the caller's source write, registers it to its concrete source index as the node
 * ({@link #register}). What it reads of the source index, or of the templates that will create it, is
 * {@link SourceIndexes}'.
 */
public final class ChunkIndexSetup {
    private static final org.apache.logging.log4j.Logger LOG = org.apache.logging.log4j.LogManager.getLogger(ChunkIndexSetup.class);

    /** The id of the write check: not a chunk id (those end in {@code :<ordinal>}). */
    static final String WRITE_CHECK_ID = "_strata_write_check";

    private final Client client;
    private final ClusterService clusterService;
    private final ChunkIndexRegistry registry;
    private final SourceIndexes sources;
    private final ChunkIndexOwnership ownership;
    /** "target|model" → the {@link #stamp} of the last successful check. */
    private final Map<String, String> ready = new ConcurrentHashMap<>();
    /** Callers waiting for an index check in progress, by "target|model". */
    private final Map<String, List<Waiter>> inFlight = new ConcurrentHashMap<>();

    /**
     * @param dateMath resolves an index name's date math ({@code <logs-{now/d}>}) as a write does; a supplier, since the
     *                 node's resolver may not exist yet when the ingest processors are built
     */
    public ChunkIndexSetup(Client client, ClusterService clusterService, ChunkIndexRegistry registry,
                           Supplier<IndexNameExpressionResolver> dateMath) {
        this.client = client;
        this.clusterService = clusterService;
        this.registry = registry;
        this.sources = new SourceIndexes(clusterService, dateMath);
        this.ownership = new ChunkIndexOwnership(client, clusterService, registry);
    }

    /** The chunk key of {@code id} stored on {@code shard} of concrete index {@code index} ({@link ChunkKey}). */
    public ChunkKey keyOf(String index, String id, int shard) {
        return ChunkKey.of(clusterService.state().metadata().index(index), id, shard);
    }

    /** The chunk key of {@code id} stored with {@code routing} (null: none) in concrete index {@code index}. */
    public ChunkKey keyOf(String index, String id, String routing) {
        return ChunkKey.routed(clusterService.state().metadata().index(index), id, routing);
    }

    /** The number of shards of concrete index {@code index} (1 when it is gone). */
    public int shardsOf(String index) {
        IndexMetadata metadata = clusterService.state().metadata().index(index);
        return metadata == null ? 1 : metadata.getNumberOfShards();
    }

    /** The cluster state as this node has applied it. */
    public ClusterState clusterState() {
        return clusterService.state();
    }

    /** The concrete index chunk index name {@code name} writes to now ({@link ServingIndex}). */
    public String servingIndex(String name) {
        return ServingIndex.of(clusterService.state().metadata(), name);
    }

    /** The source indices chunk indices are set up for, as writes see them. */
    public SourceIndexes sources() {
        return sources;
    }

    public ChunkIndexRegistry registry() {
        return registry;
    }

    /**
     * Makes {@code target} a chunk index for vectors of {@code model} (null: no vectors), to be written from source index
     * {@code sourceIndex} (a concrete name; it may not exist yet). Fails when {@code target} is registered to another
     * source index. Concurrent first uses (a bulk request of many documents) share one check; each caller continues in
     * its own thread context, and a permission failure of the caller who ran the check is not handed to the others (they
     * check again under their own permissions).
     */
    public void ensureIndex(String name, String sourceIndex, Fields fields, ModelInfo model, ActionListener<Void> listener) {
        ClusterState state = clusterService.state();
        String target = ServingIndex.of(state.metadata(), name);
        try {
            ownership.checkOwner(target, sourceIndex, state.metadata());
        } catch (Exception e) {
            listener.onFailure(e);
            return;
        }
        String key = target + "|" + (model == null ? "" : ChunkDocuments.modelMeta(model)) + "|" + fields.copied() + "|" + fields.vectors();
        IndexMetadata metadata = state.metadata().index(target);
        if (metadata != null && stamp(metadata).equals(ready.get(key))) {
            listener.onResponse(null);
            return;
        }
        ThreadContext threadContext = client.threadPool().getThreadContext();
        Waiter own = new Waiter(listener, threadContext.newRestorableContext(false));
        boolean[] first = new boolean[1];
        List<Waiter> waiting = inFlight.compute(key, (k, list) -> {
            first[0] = list == null;
            List<Waiter> l = list == null ? new ArrayList<>() : list;
            l.add(own);
            return l;
        });
        if (!first[0]) {
            return;
        }
        ActionListener<Void> all = ActionListener.wrap(v -> {
            for (Waiter w : drain(key, waiting)) {
                w.run(() -> w.listener().onResponse(null));
            }
        }, e -> {
            List<Waiter> joined = drain(key, waiting);
            boolean permission = isPermission(e);
            // a refused create or mapping update names the chunk index, as a refused chunk write does
            Exception failure = permission ? ChunkWriteException.of(target, e) : e;
            for (int i = 0; i < joined.size(); i++) {
                Waiter w = joined.get(i);
                if (i > 0 && permission) {
                    // the caller who ran the check may not create or map the index; this one checks under its own rights
                    w.run(() -> ensureIndex(target, sourceIndex, fields, model, w.listener()));
                } else {
                    w.run(() -> w.listener().onFailure(failure));
                }
            }
        });
        try {
            check(target, sourceIndex, fields, model, key, all);
        } catch (Exception e) {
            all.onFailure(e);
        }
    }

    static boolean isPermission(Exception e) {
        RestStatus status = ExceptionsHelper.status(ExceptionsHelper.unwrapCause(e));
        return status == RestStatus.FORBIDDEN || status == RestStatus.UNAUTHORIZED;
    }

    /** What a cached check stands for: this chunk index and this mapping. */
    private static String stamp(IndexMetadata chunkIndex) {
        return chunkIndex.getIndexUUID() + "|" + chunkIndex.getMappingVersion();
    }

    /** A caller of {@link #ensureIndex} and its thread context, in which it continues (its chunk writes carry its rights). */
    private record Waiter(ActionListener<Void> listener, Supplier<ThreadContext.StoredContext> context) {
        void run(Runnable r) {
            try (ThreadContext.StoredContext ignored = context.get()) {
                r.run();
            }
        }
    }

    /** Ends the check: later callers start a new one; everyone who joined this one is returned, the first first. */
    private List<Waiter> drain(String key, List<Waiter> waiting) {
        // compute() and remove() lock the same map entry, so no listener joins after the removal
        inFlight.remove(key, waiting);
        return List.copyOf(waiting);
    }

    private void check(String target, String sourceIndex, Fields fields, ModelInfo model, String key, ActionListener<Void> listener) {
        IndexMetadata metadata = clusterService.state().metadata().index(target);
        if (metadata == null) {
            String shared = SourceIndexes.sharedTemplateAliases(clusterService.state().metadata(), target, sourceIndex);
            if (shared != null) {
                listener.onFailure(new IllegalArgumentException(shared));
                return;
            }
            // the chunks' text is analysed as the chunked field is (an `english` body is searched with stemming on the
            // lexical side too), and copied fields are mapped as in the source (a `keyword` tenant mapped dynamically as
            // text matched no `term` filter), with the analysis and similarity settings that define analyzers, normalizers
            // and similarities; a template of the chunk index still wins
            SourceIndexes.SourceMapping source = sources.sourceMapping(sourceIndex);
            Map<String, Object> parameters = ChunkIndexMappings.analysisOf(source.mappings(), fields.text());
            Map<String, Object> copied = ChunkIndexMappings.definitionsOf(source.mappings(), fields.copied());
            Map<String, Object> ours = ChunkIndexMappings.withFields(ChunkIndexMappings.withAnalysis(ChunkDocuments.mapping(model, fields.vectors()),
                parameters), copied);
            Map<String, Object> mapping;
            Settings templateSettings;
            try {
                List<Map<String, Object>> templates = ChunkIndexMappings.ofTemplates(clusterService.state(), target);
                mapping = ChunkIndexMappings.over(ours, templates, target, true);
                if (model != null && !fields.vectors().isDefault()) {
                    // the processor's vector options are its own choice: they win over a template's graph parameters
                    mapping = ChunkIndexMappings.withVectors(mapping, ChunkDocuments.mapping(model, fields.vectors()));
                }
                templateSettings = sources.templateSettings(target);
            } catch (Exception e) {
                mapping = ours; // a template the create itself will report
                templateSettings = Settings.EMPTY;
            }
            // no pipeline ever runs on chunk documents, whatever a template matching the name gives (a `docs-*` template
            // with a chunking default pipeline also matches `docs-1-chunks`: every chunk write ran the chunking processor)
            Settings.Builder settings = Settings.builder().put("index.knn", true)
                .put(IndexSettings.DEFAULT_PIPELINE.getKey(), IngestService.NOOP_PIPELINE_NAME)
                .put(IndexSettings.FINAL_PIPELINE.getKey(), IngestService.NOOP_PIPELINE_NAME);
            // all of them: an index-wide default analyzer or similarity applies to the chunks' text fields as to the source's
            for (String k : source.analysis().keySet()) {
                if (!templateSettings.hasValue(k) && templateSettings.getAsList(k, null) == null) {
                    settings.copy(k, source.analysis());
                }
            }
            CreateIndexRequest create = new CreateIndexRequest(target).mapping(mapping).settings(settings);
            client.admin().indices().create(create, ActionListener.wrap(r -> {
                markReady(target, key);
                listener.onResponse(null);
            }, e -> {
                if (ExceptionsHelper.unwrapCause(e) instanceof ResourceAlreadyExistsException) {
                    ownership.adoptable(target, sourceIndex, ActionListener.wrap( // another document created it first, or someone else
                        v -> checkMapping(target, sourceIndex, fields, model, key, listener), listener::onFailure));
                } else {
                    listener.onFailure(e);
                }
            }));
        } else {
            ownership.adoptable(target, sourceIndex, ActionListener.wrap(v -> checkMapping(target, sourceIndex, fields, model, key, listener),
                listener::onFailure));
        }
    }

    /**
     * What a chunk index serves: the source fields (the chunked text's path and the {@code copy_fields}) and how it indexes
     * their vectors.
     */
    public record Fields(String text, List<String> copied, VectorOptions vectors) {
        public Fields {
            copied = List.copyOf(copied);
            vectors = vectors == null ? VectorOptions.DEFAULT : vectors;
        }

        public Fields(String text, List<String> copied) {
            this(text, copied, VectorOptions.DEFAULT);
        }
    }

    private void checkMapping(String target, String sourceIndex, Fields fields, ModelInfo model, String key,
                              ActionListener<Void> listener) {
        IndexMetadata metadata = clusterService.state().metadata().index(target);
        ChunkIndexMeta chunkMeta = ChunkIndexMeta.of(metadata);
        Object existingModel = chunkMeta == null ? null : chunkMeta.model();
        Object wantedModel = model == null ? null : ChunkDocuments.modelMeta(model);
        if (existingModel != null && !existingModel.equals(wantedModel)) {
            listener.onFailure(new IllegalArgumentException(String.format(Locale.ROOT,
                "[target_index] [%s] holds vectors of %s; this pipeline embeds with %s. Use another target index or the same model",
                target, describe(existingModel), wantedModel == null ? "no model" : describe(wantedModel))));
            return;
        }
        String finalPipeline = metadata == null ? null : IndexSettings.FINAL_PIPELINE.get(metadata.getSettings());
        if (finalPipeline != null && !IngestService.NOOP_PIPELINE_NAME.equals(finalPipeline)) {
            // a default pipeline is skipped by every chunk write ("_none"); a final one cannot be
            listener.onFailure(new IllegalArgumentException(String.format(Locale.ROOT, "[target_index] [%s] has [%s] [%s], which would "
                + "run on every chunk document Strata writes (they are stored as written); set it to [%s] on the chunk index",
                target, IndexSettings.FINAL_PIPELINE.getKey(), finalPipeline, IngestService.NOOP_PIPELINE_NAME)));
            return;
        }
        if (model != null && metadata != null && !metadata.getSettings().getAsBoolean("index.knn", false)) {
            listener.onFailure(new IllegalArgumentException(String.format(Locale.ROOT,
                "[target_index] [%s] was created without [index.knn: true], which vector fields need; create it with "
                    + "{\"settings\": {\"index.knn\": true}} or let the processor create it", target)));
            return;
        }
        Map<String, Object> existing = metadata == null || metadata.mapping() == null ? Map.of() : metadata.mapping().sourceAsMap();
        if (model != null) {
            String differs = ChunkIndexMappings.vectorsDiffer(existing, fields.vectors(), target);
            if (differs != null) {
                listener.onFailure(new IllegalArgumentException(differs));
                return;
            }
        }
        // copied fields the chunk index does not map yet are mapped as in the source before a chunk document brings them
        // (one it mapped already, e.g. dynamically by an older version, keeps its mapping: a field's type cannot change)
        Map<String, Object> copied = fields.copied().isEmpty() ? Map.of() : ChunkIndexMappings.missingFrom(existing,
            ChunkIndexMappings.definitionsOf(sources.sourceMapping(sourceIndex).mappings(), fields.copied()));
        // chunk indices made before context_header or vector_key existed get their mappings, else they would be mapped dynamically
        boolean ours = chunkMeta == null || (existingModel == null && wantedModel != null) || !maps(metadata, ChunkDocuments.CONTEXT_HEADER)
            || !maps(metadata, ChunkDocuments.VECTOR_KEY);
        if (!ours && copied.isEmpty()) {
            ready.put(key, stamp(metadata));
            listener.onResponse(null);
            return;
        }
        PutMappingRequest put;
        try {
            put = new PutMappingRequest(target).source(ChunkIndexMappings.withFields(ours ? ChunkIndexMappings.over(
                ChunkDocuments.mapping(model, fields.vectors()), existing.isEmpty() ? List.of() : List.of(existing), target, false)
                : Map.of("properties", Map.of()), copied));
        } catch (IllegalArgumentException e) {
            listener.onFailure(e);
            return;
        }
        client.admin().indices().putMapping(put, ActionListener.wrap(r -> {
            markReady(target, key);
            listener.onResponse(null);
        }, e -> {
            if (ours || isPermission(e)) {
                listener.onFailure(e);
                return;
            }
            // only the copied fields' definitions were refused (an analyzer or normalizer this chunk index does not define):
            // they are mapped dynamically, as before
            LOG.warn("chunk index [{}] could not map the copied fields {} as in their source index; they are mapped dynamically: {}",
                target, copied.keySet(), e.getMessage());
            ready.put(key, stamp(clusterService.state().metadata().index(target)));
            listener.onResponse(null);
        }));
    }

    private static boolean maps(IndexMetadata metadata, String field) {
        Object props = metadata == null || metadata.mapping() == null ? null : metadata.mapping().sourceAsMap().get("properties");
        return props instanceof Map<?, ?> p && p.containsKey(field);
    }

    /** "model [name] (384 dims)" from a mapping's model record. */
    private static String describe(Object modelMeta) {
        if (!(modelMeta instanceof Map<?, ?> m)) {
            return String.valueOf(modelMeta);
        }
        Object ref = m.containsKey("model") ? "model [" + m.get("model") + "]" : "model_id [" + m.get("model_id") + "]";
        return ref + " (" + m.get("dimension") + " dims)";
    }

    private void markReady(String target, String key) {
        // acknowledged create/put-mapping responses mean this node has applied the new state
        IndexMetadata metadata = clusterService.state().metadata().index(target);
        if (metadata != null) {
            ready.put(key, stamp(metadata));
        }
    }

    /**
     * Whether the caller may write {@code target}, found out without writing anything: an index request guarded by a
     * sequence number no document can have answers 409 (version conflict) to a caller allowed to write, and 403 to one who
     * is not (or when the index is blocked for writes). The listener fails with the refusal, naming the chunk index.
     */
    public void checkWritable(String target, ActionListener<Void> listener) {
        BulkRequest probe = new BulkRequest().add(new IndexRequest(target).id(WRITE_CHECK_ID).source(Map.of())
            .setPipeline(IngestService.NOOP_PIPELINE_NAME).setIfSeqNo(Long.MAX_VALUE - 1).setIfPrimaryTerm(Long.MAX_VALUE));
        client.bulk(probe, ActionListener.wrap(response -> {
            BulkItemResponse item = response.getItems()[0];
            if (!item.isFailed() || ExceptionsHelper.unwrapCause(item.getFailure().getCause()) instanceof VersionConflictEngineException) {
                listener.onResponse(null);
            } else {
                listener.onFailure(ChunkWriteException.of(target, item.getFailure().getCause()));
            }
        }, e -> listener.onFailure(ChunkWriteException.of(target, e))));
    }

    /**
     * Registers {@code chunkIndex} to its concrete source index {@code source}, as the node (a caller's write to both came
     * first), unless the registry already holds that; continues in the caller's thread context.
     */
    public void register(String name, Index source, ActionListener<Void> listener) {
        String chunkIndex = servingIndex(name);
        ChunkIndexRegistry.Registration existing = registry.ofChunkIndex(chunkIndex);
        if (existing != null && existing.source().equals(source)) {
            listener.onResponse(null);
            return;
        }
        IndexMetadata chunks = clusterService.state().metadata().index(chunkIndex);
        if (chunks == null) {
            listener.onFailure(new org.opensearch.index.IndexNotFoundException(chunkIndex));
            return;
        }
        ThreadContext threadContext = client.threadPool().getThreadContext();
        Supplier<ThreadContext.StoredContext> caller = threadContext.newRestorableContext(false);
        try (ThreadContext.StoredContext ignored = threadContext.stashContext()) {
            // the node's own bookkeeping: an internal action, not the caller's request
            client.execute(RegisterChunkIndexAction.INSTANCE, new RegisterChunkIndexRequest(chunks.getIndex(), source),
                new org.opensearch.action.support.ContextPreservingActionListener<>(caller,
                    ActionListener.wrap(r -> listener.onResponse(null), listener::onFailure)));
        }
    }

}
