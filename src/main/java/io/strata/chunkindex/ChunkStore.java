package io.strata.chunkindex;

import io.strata.model.ModelInfo;
import org.opensearch.ExceptionsHelper;
import org.opensearch.ResourceAlreadyExistsException;
import org.opensearch.action.admin.indices.create.CreateIndexRequest;
import org.opensearch.action.admin.indices.refresh.RefreshRequest;
import org.opensearch.action.admin.indices.mapping.put.PutMappingRequest;
import org.opensearch.action.bulk.BulkItemResponse;
import org.opensearch.action.bulk.BulkRequest;
import org.opensearch.action.delete.DeleteRequest;
import org.opensearch.action.get.GetRequest;
import org.opensearch.action.get.MultiGetItemResponse;
import org.opensearch.action.get.MultiGetRequest;
import org.opensearch.action.index.IndexRequest;
import org.opensearch.cluster.ClusterState;
import org.opensearch.cluster.metadata.IndexMetadata;
import org.opensearch.cluster.service.ClusterService;
import org.opensearch.common.settings.Settings;
import org.opensearch.common.util.concurrent.ThreadContext;
import org.opensearch.index.IndexNotFoundException;
import io.strata.stats.StrataStats;
import org.opensearch.core.action.ActionListener;
import org.opensearch.core.rest.RestStatus;
import org.opensearch.search.fetch.subphase.FetchSourceContext;
import org.opensearch.transport.client.Client;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.Set;
import java.util.function.IntFunction;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * Writes and removes the chunk documents of one source document. Every call goes through the node client
 * in the caller's thread context, so chunk writes carry the caller's permissions.
 *
 * <p>Chunk ids are {@code <source _id>:<ordinal>} with ordinals 0..n-1, so the chunks of a document are
 * found by realtime multi-get probes of consecutive ids — exact even before a refresh, and without
 * {@code _delete_by_query} (which needs the reindex module).
 */
public final class ChunkStore {
    /** How many consecutive chunk ids one probe asks for. */
    static final int PROBE = 64;

    private final Client client;
    private final ClusterService clusterService;
    private final StrataStats stats;
    /**
     * "target|source|model" → the {@link #stamp} of the last successful check: a deleted and re-created chunk index, a
     * changed mapping (e.g. the janitor recording a source UUID) or another incarnation of the source index is checked again.
     */
    private final Map<String, String> ready = new ConcurrentHashMap<>();
    /** Callers waiting for an index check in progress, by "target|source|model|source UUID". */
    private final Map<String, List<Waiter>> inFlight = new ConcurrentHashMap<>();

    public ChunkStore(Client client, ClusterService clusterService, StrataStats stats) {
        this.client = client;
        this.clusterService = clusterService;
        this.stats = stats;
    }

    /**
     * Creates the chunk index (or adds the chunk mapping to an index the user created) on first use, and records in its
     * mapping which incarnation of the source index (its UUID, {@link ChunkDocuments#META_SOURCE_UUID}) it now serves,
     * before any chunk is written for it: {@link ChunkIndexJanitor} deletes a chunk index only while it still records
     * the deleted incarnation. Concurrent first uses (a bulk request of many documents) share one check; each caller
     * continues in its own thread context, and a permission failure of the caller who ran the check is not handed to
     * the others (they check again under their own permissions).
     */
    public void ensureIndex(String target, String sourceIndex, ModelInfo model, ActionListener<Void> listener) {
        ClusterState state = clusterService.state();
        String sourceUuid = sourceUuid(state, sourceIndex);
        String key = target + "|" + sourceIndex + "|" + (model == null ? "" : ChunkDocuments.modelMeta(model));
        IndexMetadata metadata = state.metadata().index(target);
        if (metadata != null && stamp(metadata, sourceUuid).equals(ready.get(key))) {
            listener.onResponse(null);
            return;
        }
        String flightKey = key + "|" + sourceUuid;
        ThreadContext threadContext = client.threadPool().getThreadContext();
        Waiter own = new Waiter(listener, threadContext.newRestorableContext(false));
        boolean[] first = new boolean[1];
        List<Waiter> waiting = inFlight.compute(flightKey, (k, list) -> {
            first[0] = list == null;
            List<Waiter> l = list == null ? new ArrayList<>() : list;
            l.add(own);
            return l;
        });
        if (!first[0]) {
            return;
        }
        ActionListener<Void> all = ActionListener.wrap(v -> {
            for (Waiter w : drain(flightKey, waiting)) {
                w.run(() -> w.listener().onResponse(null));
            }
        }, e -> {
            List<Waiter> joined = drain(flightKey, waiting);
            RestStatus status = ExceptionsHelper.status(ExceptionsHelper.unwrapCause(e));
            boolean permission = status == RestStatus.FORBIDDEN || status == RestStatus.UNAUTHORIZED;
            // a refused create or mapping update names the chunk index, as a refused chunk write does
            Exception failure = permission ? chunkWriteFailure(target, e) : e;
            for (int i = 0; i < joined.size(); i++) {
                Waiter w = joined.get(i);
                if (i > 0 && permission) {
                    // the caller who ran the check may not create or map the index; this one checks under its own rights
                    w.run(() -> ensureIndex(target, sourceIndex, model, w.listener()));
                } else {
                    w.run(() -> w.listener().onFailure(failure));
                }
            }
        });
        try {
            check(target, sourceIndex, sourceUuid, model, key, all);
        } catch (Exception e) {
            all.onFailure(e);
        }
    }

    /** The UUID of {@code sourceIndex}, or {@code _na_} while it does not exist (its first bulk runs pipelines first). */
    static String sourceUuid(ClusterState state, String sourceIndex) {
        IndexMetadata source = state.metadata().index(sourceIndex);
        return source == null ? IndexMetadata.INDEX_UUID_NA_VALUE : source.getIndexUUID();
    }

    /** What a cached check stands for: this chunk index, this mapping, this incarnation of the source index. */
    private static String stamp(IndexMetadata chunkIndex, String sourceUuid) {
        return chunkIndex.getIndexUUID() + "|" + chunkIndex.getMappingVersion() + "|" + sourceUuid;
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

    private void check(String target, String sourceIndex, String sourceUuid, ModelInfo model, String key,
                       ActionListener<Void> listener) {
        IndexMetadata metadata = clusterService.state().metadata().index(target);
        if (metadata == null) {
            CreateIndexRequest create = new CreateIndexRequest(target).mapping(ChunkDocuments.mapping(sourceIndex, sourceUuid, model))
                .settings(Settings.builder().put("index.knn", true));
            client.admin().indices().create(create, ActionListener.wrap(r -> {
                markReady(target, key, sourceUuid);
                listener.onResponse(null);
            }, e -> {
                if (ExceptionsHelper.unwrapCause(e) instanceof ResourceAlreadyExistsException) {
                    // another document created it first: check who owns it
                    checkMapping(target, sourceIndex, sourceUuid, model, key, listener);
                } else {
                    listener.onFailure(e);
                }
            }));
        } else {
            checkMapping(target, sourceIndex, sourceUuid, model, key, listener);
        }
    }

    private void checkMapping(String target, String sourceIndex, String sourceUuid, ModelInfo model, String key,
                              ActionListener<Void> listener) {
        IndexMetadata metadata = clusterService.state().metadata().index(target);
        ChunkIndexMeta chunkMeta = ChunkIndexMeta.of(metadata);
        String owner = chunkMeta == null ? null : chunkMeta.sourceIndex();
        Object existingModel = chunkMeta == null ? null : chunkMeta.model();
        Object wantedModel = model == null ? null : ChunkDocuments.modelMeta(model);
        if (owner != null && owner.equals(sourceIndex) && existingModel != null && !existingModel.equals(wantedModel)) {
            listener.onFailure(new IllegalArgumentException(String.format(Locale.ROOT,
                "[target_index] [%s] holds vectors of %s; this pipeline embeds with %s. Use another target index or the same model",
                target, describe(existingModel), wantedModel == null ? "no model" : describe(wantedModel))));
            return;
        }
        if (model != null && metadata != null && !metadata.getSettings().getAsBoolean("index.knn", false)) {
            listener.onFailure(new IllegalArgumentException(String.format(Locale.ROOT,
                "[target_index] [%s] was created without [index.knn: true], which vector fields need; create it with "
                    + "{\"settings\": {\"index.knn\": true}} or let the processor create it", target)));
            return;
        }
        if (owner == null || (existingModel == null && wantedModel != null)) {
            PutMappingRequest put = new PutMappingRequest(target).source(ChunkDocuments.mapping(sourceIndex, sourceUuid, model));
            client.admin().indices().putMapping(put, ActionListener.wrap(r -> {
                markReady(target, key, sourceUuid);
                listener.onResponse(null);
            }, listener::onFailure));
        } else if (owner.equals(sourceIndex) && !sourceUuid.equals(chunkMeta.sourceUuid())) {
            // the source index was re-created (or not created yet): claim the chunk index for this incarnation first, so
            // that the janitor's check for the deleted one (serialised with this update on the cluster manager) spares it
            PutMappingRequest put = new PutMappingRequest(target).source(chunkMeta.mappingWithSourceUuid(sourceUuid));
            client.admin().indices().putMapping(put, ActionListener.wrap(r -> {
                markReady(target, key, sourceUuid);
                listener.onResponse(null);
            }, e -> {
                if (ExceptionsHelper.unwrapCause(e) instanceof IndexNotFoundException) {
                    check(target, sourceIndex, sourceUuid, model, key, listener); // the janitor was first: start afresh
                } else {
                    listener.onFailure(e);
                }
            }));
        } else if (owner.equals(sourceIndex)) {
            ready.put(key, stamp(metadata, sourceUuid));
            listener.onResponse(null);
        } else {
            listener.onFailure(new IllegalArgumentException(String.format(Locale.ROOT,
                "[target_index] [%s] already holds the chunks of index [%s]; use one target index per source index", target,
                owner)));
        }
    }

    /** "model [name] (384 dims)" from a mapping's model record. */
    private static String describe(Object modelMeta) {
        if (!(modelMeta instanceof Map<?, ?> m)) {
            return String.valueOf(modelMeta);
        }
        Object ref = m.containsKey("model") ? "model [" + m.get("model") + "]" : "model_id [" + m.get("model_id") + "]";
        return ref + " (" + m.get("dimension") + " dims)";
    }

    private void markReady(String target, String key, String sourceUuid) {
        // acknowledged create/put-mapping responses mean this node has applied the new state
        IndexMetadata metadata = clusterService.state().metadata().index(target);
        if (metadata != null) {
            ready.put(key, stamp(metadata, sourceUuid));
        }
    }

    /**
     * Writes chunks 0..count-1 of {@code sourceId}, chunk {@code i} being {@code docAt.apply(i)} (called once per chunk, in
     * order, as its bulk slice is built: only one slice of chunk documents exists at a time), in bulk requests of at most
     * {@link Slicing#bulkDocs()} documents and about {@link Slicing#bulkBytes()} bytes, one after another; then removes the
     * chunks of earlier versions beyond {@code count}. When any slice fails, nothing of this version is left: the chunks
     * are deleted from 0 and the listener fails (a first slice rejected as a whole wrote nothing and deletes nothing).
     */
    public void replace(String target, String sourceId, int count, IntFunction<Map<String, Object>> docAt, Slicing slicing,
                        StrataStats.Progress progress, ActionListener<Void> listener) {
        if (count == 0) {
            deleteFrom(target, sourceId, 0, listener);
            return;
        }
        writeSlice(target, sourceId, 0, count, docAt, slicing, progress, listener);
    }

    private void writeSlice(String target, String sourceId, int from, int count, IntFunction<Map<String, Object>> docAt,
                            Slicing slicing, StrataStats.Progress progress, ActionListener<Void> listener) {
        if (from == count) {
            deleteFrom(target, sourceId, count, listener);
            return;
        }
        BulkRequest bulk = new BulkRequest();
        int end = from;
        try {
            while (end < count && !slicing.bulkFull(bulk.numberOfActions(), bulk.estimatedSizeInBytes())) {
                bulk.add(new IndexRequest(target).id(ChunkDocuments.chunkId(sourceId, end)).source(docAt.apply(end)));
                end++;
            }
        } catch (Exception e) {
            abandon(target, sourceId, from, e, listener);
            return;
        }
        int next = end;
        client.bulk(bulk, ActionListener.wrap(response -> {
            int ok = (int) Arrays.stream(response.getItems()).filter(item -> !item.isFailed()).count();
            stats.ingest().chunksWritten(ok);
            progress.written(ok);
            if (response.hasFailures()) {
                abandon(target, sourceId, 1, chunkWriteFailure(target, firstFailure(response.getItems()).getFailure().getCause()),
                    listener);
            } else {
                writeSlice(target, sourceId, next, count, docAt, slicing, progress, listener);
            }
        }, e -> abandon(target, sourceId, from, e, listener)));
    }

    /**
     * A slice failed: leave no partial set behind — the caller sees the failure and nothing of this version. Nothing to undo
     * when the failure came before anything of this version was written ({@code writtenUpTo} 0).
     */
    private void abandon(String target, String sourceId, int writtenUpTo, Exception cause, ActionListener<Void> listener) {
        if (writtenUpTo == 0) {
            listener.onFailure(cause);
            return;
        }
        deleteFrom(target, sourceId, 0, ActionListener.wrap(v -> listener.onFailure(cause), e -> {
            cause.addSuppressed(e);
            listener.onFailure(cause);
        }));
    }

    /**
     * Vectors of the stored chunks {@code 0..count-1} of {@code sourceId} (realtime) whose {@code text_hash} is in
     * {@code wanted}: the parent's vector followed by its children's, by hash. Read {@link #PROBE} chunks at a time, keeping
     * only the wanted vectors as {@code float[]}, and stopping at the first probe that finds no chunk (chunk ids have no
     * gaps, as {@link #deleteFrom} assumes). Missing index or chunks: empty.
     */
    public void storedVectors(String target, String sourceId, int count, Set<String> wanted,
                              ActionListener<Map<String, List<float[]>>> listener) {
        storedVectors(target, sourceId, 0, count, wanted, new HashMap<>(), listener);
    }

    private void storedVectors(String target, String sourceId, int from, int count, Set<String> wanted,
                               Map<String, List<float[]>> byHash, ActionListener<Map<String, List<float[]>>> listener) {
        if (from >= count) {
            listener.onResponse(byHash);
            return;
        }
        MultiGetRequest probe = new MultiGetRequest().realtime(true);
        // children.level tells the parent's own level-0 entry (format 2) from the children
        FetchSourceContext fields = new FetchSourceContext(true, new String[] { ChunkDocuments.TEXT_HASH, ChunkDocuments.EMBEDDING,
            ChunkDocuments.CHILDREN + "." + ChunkDocuments.LEVEL, ChunkDocuments.CHILDREN + "." + ChunkDocuments.EMBEDDING }, null);
        for (int i = from; i < Math.min(count, from + PROBE); i++) {
            probe.add(new MultiGetRequest.Item(target, ChunkDocuments.chunkId(sourceId, i)).fetchSourceContext(fields));
        }
        client.multiGet(probe, ActionListener.wrap(response -> {
            boolean found = false;
            for (MultiGetItemResponse item : response.getResponses()) {
                if (item.isFailed() || !item.getResponse().isExists()) {
                    continue;
                }
                found = true;
                Map<String, Object> source = item.getResponse().getSourceAsMap();
                if (source.get(ChunkDocuments.TEXT_HASH) instanceof String hash && wanted.contains(hash)) {
                    List<float[]> vectors = ChunkDocuments.vectorsOf(source);
                    if (vectors != null) {
                        byHash.put(hash, vectors);
                    }
                }
            }
            if (found) {
                storedVectors(target, sourceId, from + PROBE, count, wanted, byHash, listener);
            } else {
                listener.onResponse(byHash);
            }
        }, listener::onFailure));
    }

    /** The chunks one source document should have now: ids 0..parents-1 carrying {@code sourceHash}, and nothing beyond. */
    public record Expected(String target, String sourceId, String sourceHash, int parents) {}

    /**
     * Those of {@code expected} that the chunks as stored now (realtime) do not meet: a chunk missing, cut from another
     * version of the source, or one too many. One multi-get for all of them.
     */
    public void unmet(List<Expected> expected, ActionListener<List<Expected>> listener) {
        MultiGetRequest probe = new MultiGetRequest().realtime(true);
        FetchSourceContext fields = new FetchSourceContext(true, new String[] { ChunkDocuments.SOURCE_HASH }, null);
        for (Expected e : expected) {
            for (int i = 0; i <= e.parents(); i++) {
                probe.add(new MultiGetRequest.Item(e.target(), ChunkDocuments.chunkId(e.sourceId(), i)).fetchSourceContext(fields));
            }
        }
        client.multiGet(probe, ActionListener.wrap(response -> {
            MultiGetItemResponse[] items = response.getResponses();
            List<Expected> unmet = new ArrayList<>();
            int at = 0;
            for (Expected e : expected) {
                boolean met = true;
                for (int i = 0; i <= e.parents(); i++, at++) {
                    MultiGetItemResponse item = items[at];
                    boolean exists = !item.isFailed() && item.getResponse().isExists();
                    if (i < e.parents()) {
                        met &= exists && e.sourceHash().equals(item.getResponse().getSourceAsMap().get(ChunkDocuments.SOURCE_HASH));
                    } else {
                        met &= !exists && !item.isFailed();
                    }
                }
                if (!met) {
                    unmet.add(e);
                }
            }
            listener.onResponse(unmet);
        }, listener::onFailure));
    }

    /** The source of {@code index/id} as stored now (realtime), or null when it does not exist. */
    public void sourceOf(String index, String id, ActionListener<Map<String, Object>> listener) {
        client.get(new GetRequest(index, id).realtime(true),
            ActionListener.wrap(r -> listener.onResponse(r.isExists() ? r.getSourceAsMap() : null), listener::onFailure));
    }

    /** Makes what was written to {@code indices} visible to search. */
    public void refresh(Collection<String> indices, ActionListener<Void> listener) {
        client.admin().indices().refresh(new RefreshRequest(indices.toArray(String[]::new)),
            ActionListener.wrap(r -> listener.onResponse(null), listener::onFailure));
    }

    /** Deletes chunks {@code from, from+1, …} of {@code sourceId} until a probe finds none. */
    public void deleteFrom(String target, String sourceId, int from, ActionListener<Void> listener) {
        MultiGetRequest probe = new MultiGetRequest().realtime(true);
        for (int i = from; i < from + PROBE; i++) {
            probe.add(new MultiGetRequest.Item(target, ChunkDocuments.chunkId(sourceId, i))
                .fetchSourceContext(FetchSourceContext.DO_NOT_FETCH_SOURCE));
        }
        client.multiGet(probe, ActionListener.wrap(response -> {
            List<String> existing = new ArrayList<>();
            for (MultiGetItemResponse item : response.getResponses()) {
                if (item.isFailed()) {
                    Exception cause = item.getFailure().getFailure();
                    if (ExceptionsHelper.unwrapCause(cause) instanceof IndexNotFoundException) {
                        continue; // no chunk index, no chunks
                    }
                    // e.g. the caller may not read the chunk index: "none found" would silently leave them behind
                    listener.onFailure(chunkWriteFailure(target, cause));
                    return;
                }
                if (item.getResponse().isExists()) {
                    existing.add(item.getId());
                }
            }
            if (existing.isEmpty()) {
                listener.onResponse(null);
                return;
            }
            BulkRequest delete = new BulkRequest();
            existing.forEach(id -> delete.add(new DeleteRequest(target, id)));
            client.bulk(delete, ActionListener.wrap(r -> {
                stats.ingest().chunksDeleted(Arrays.stream(r.getItems()).filter(item -> !item.isFailed()).count());
                if (r.hasFailures()) {
                    listener.onFailure(chunkWriteFailure(target, firstFailure(r.getItems()).getFailure().getCause()));
                } else {
                    deleteFrom(target, sourceId, from + PROBE, listener);
                }
            }, listener::onFailure));
        }, listener::onFailure));
    }

    private static BulkItemResponse firstFailure(BulkItemResponse[] items) {
        for (BulkItemResponse item : items) {
            if (item.isFailed()) {
                return item;
            }
        }
        throw new IllegalStateException("bulk response has failures but no failed item");
    }

    private static Exception chunkWriteFailure(String target, Exception cause) {
        return new ChunkWriteException(String.format(Locale.ROOT, "writing chunks to [%s] failed: %s", target,
            cause.getMessage()), cause);
    }
}
