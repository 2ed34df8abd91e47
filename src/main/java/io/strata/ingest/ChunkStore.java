package io.strata.ingest;

import org.opensearch.ExceptionsHelper;
import org.opensearch.ResourceAlreadyExistsException;
import org.opensearch.action.admin.indices.create.CreateIndexRequest;
import org.opensearch.action.admin.indices.refresh.RefreshRequest;
import org.opensearch.action.admin.indices.mapping.put.PutMappingRequest;
import org.opensearch.action.bulk.BulkItemResponse;
import org.opensearch.action.bulk.BulkRequest;
import org.opensearch.action.delete.DeleteRequest;
import org.opensearch.action.get.MultiGetItemResponse;
import org.opensearch.action.get.MultiGetRequest;
import org.opensearch.action.index.IndexRequest;
import org.opensearch.cluster.metadata.IndexMetadata;
import org.opensearch.cluster.metadata.MappingMetadata;
import org.opensearch.cluster.service.ClusterService;
import org.opensearch.common.settings.Settings;
import io.strata.inference.ModelInfo;
import io.strata.stats.StrataStats;
import org.opensearch.core.action.ActionListener;
import org.opensearch.search.fetch.subphase.FetchSourceContext;
import org.opensearch.transport.client.Client;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

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
     * "target|source" → UUID of the target index whose chunk mapping was checked. Keyed on the UUID so that
     * a deleted and re-created index is checked again.
     */
    private final Map<String, String> ready = new ConcurrentHashMap<>();
    /** Listeners waiting for an index check in progress, by "target|source". */
    private final Map<String, List<ActionListener<Void>>> inFlight = new ConcurrentHashMap<>();

    public ChunkStore(Client client, ClusterService clusterService, StrataStats stats) {
        this.client = client;
        this.clusterService = clusterService;
        this.stats = stats;
    }

    /**
     * Creates the chunk index (or adds the chunk mapping to an index the user created) on first use.
     * Concurrent first uses (a bulk request of many documents) share one check.
     */
    public void ensureIndex(String target, String sourceIndex, ModelInfo model, ActionListener<Void> listener) {
        String key = target + "|" + sourceIndex + "|" + (model == null ? "" : ChunkDocuments.modelMeta(model));
        IndexMetadata metadata = clusterService.state().metadata().index(target);
        if (metadata != null && metadata.getIndexUUID().equals(ready.get(key))) {
            listener.onResponse(null);
            return;
        }
        boolean[] first = new boolean[1];
        List<ActionListener<Void>> waiting = inFlight.compute(key, (k, list) -> {
            first[0] = list == null;
            List<ActionListener<Void>> l = list == null ? new ArrayList<>() : list;
            l.add(listener);
            return l;
        });
        if (!first[0]) {
            return;
        }
        ActionListener<Void> all = ActionListener.wrap(v -> {
            for (ActionListener<Void> l : drain(key, waiting)) {
                l.onResponse(null);
            }
        }, e -> {
            for (ActionListener<Void> l : drain(key, waiting)) {
                l.onFailure(e);
            }
        });
        try {
            check(target, sourceIndex, model, key, all);
        } catch (Exception e) {
            all.onFailure(e);
        }
    }

    /** Ends the check: later callers start a new one; everyone who joined this one is returned. */
    private List<ActionListener<Void>> drain(String key, List<ActionListener<Void>> waiting) {
        // compute() and remove() lock the same map entry, so no listener joins after the removal
        inFlight.remove(key, waiting);
        return List.copyOf(waiting);
    }

    private void check(String target, String sourceIndex, ModelInfo model, String key, ActionListener<Void> listener) {
        IndexMetadata metadata = clusterService.state().metadata().index(target);
        if (metadata == null) {
            CreateIndexRequest create = new CreateIndexRequest(target).mapping(ChunkDocuments.mapping(sourceIndex, model))
                .settings(Settings.builder().put("index.knn", true));
            client.admin().indices().create(create, ActionListener.wrap(r -> {
                markReady(target, key);
                listener.onResponse(null);
            }, e -> {
                if (ExceptionsHelper.unwrapCause(e) instanceof ResourceAlreadyExistsException) {
                    // another document created it first: check who owns it
                    checkMapping(target, sourceIndex, model, key, listener);
                } else {
                    listener.onFailure(e);
                }
            }));
        } else {
            checkMapping(target, sourceIndex, model, key, listener);
        }
    }

    private void checkMapping(String target, String sourceIndex, ModelInfo model, String key, ActionListener<Void> listener) {
        IndexMetadata metadata = clusterService.state().metadata().index(target);
        MappingMetadata mapping = metadata == null ? null : metadata.mapping();
        Map<String, Object> strata = mapping == null ? null : ChunkDocuments.strataMeta(mapping.sourceAsMap());
        String owner = strata == null ? null : ChunkDocuments.sourceIndexOf(mapping.sourceAsMap());
        Object existingModel = strata == null ? null : strata.get(ChunkDocuments.META_MODEL);
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
            PutMappingRequest put = new PutMappingRequest(target).source(ChunkDocuments.mapping(sourceIndex, model));
            client.admin().indices().putMapping(put, ActionListener.wrap(r -> {
                markReady(target, key);
                listener.onResponse(null);
            }, listener::onFailure));
        } else if (owner.equals(sourceIndex)) {
            ready.put(key, metadata.getIndexUUID());
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

    private void markReady(String target, String key) {
        // acknowledged create/put-mapping responses mean this node has applied the new state
        IndexMetadata metadata = clusterService.state().metadata().index(target);
        if (metadata != null) {
            ready.put(key, metadata.getIndexUUID());
        }
    }

    /** Writes {@code docs} as chunks 0..n-1 of {@code sourceId} and removes its chunks from earlier versions. */
    public void replace(String target, String sourceId, List<Map<String, Object>> docs, ActionListener<Void> listener) {
        if (docs.isEmpty()) {
            deleteFrom(target, sourceId, 0, listener);
            return;
        }
        BulkRequest bulk = new BulkRequest();
        for (int i = 0; i < docs.size(); i++) {
            bulk.add(new IndexRequest(target).id(ChunkDocuments.chunkId(sourceId, i)).source(docs.get(i)));
        }
        client.bulk(bulk, ActionListener.wrap(response -> {
            stats.ingest().chunksWritten(Arrays.stream(response.getItems()).filter(item -> !item.isFailed()).count());
            if (response.hasFailures()) {
                BulkItemResponse failed = firstFailure(response.getItems());
                Exception cause = failed.getFailure().getCause();
                // leave no partial set behind: the caller sees the failure and nothing of this version
                deleteFrom(target, sourceId, 0, ActionListener.wrap(
                    v -> listener.onFailure(chunkWriteFailure(target, cause)),
                    e -> {
                        cause.addSuppressed(e);
                        listener.onFailure(chunkWriteFailure(target, cause));
                    }));
            } else {
                deleteFrom(target, sourceId, docs.size(), listener);
            }
        }, listener::onFailure));
    }

    /**
     * Vectors of the chunks {@code 0..count-1} of {@code sourceId} as stored now (realtime), by
     * {@code text_hash}: the parent's vector followed by its children's. Missing index or chunks: empty.
     */
    public void storedVectors(String target, String sourceId, int count, ActionListener<Map<String, List<float[]>>> listener) {
        MultiGetRequest probe = new MultiGetRequest().realtime(true);
        // children.level tells the parent's own level-0 entry (format 2) from the children
        FetchSourceContext fields = new FetchSourceContext(true, new String[] { ChunkDocuments.TEXT_HASH, ChunkDocuments.EMBEDDING,
            ChunkDocuments.CHILDREN + "." + ChunkDocuments.LEVEL, ChunkDocuments.CHILDREN + "." + ChunkDocuments.EMBEDDING }, null);
        for (int i = 0; i < count; i++) {
            probe.add(new MultiGetRequest.Item(target, ChunkDocuments.chunkId(sourceId, i)).fetchSourceContext(fields));
        }
        client.multiGet(probe, ActionListener.wrap(response -> {
            Map<String, List<float[]>> byHash = new java.util.HashMap<>();
            for (MultiGetItemResponse item : response.getResponses()) {
                if (item.isFailed() || !item.getResponse().isExists()) {
                    continue;
                }
                Map<String, Object> source = item.getResponse().getSourceAsMap();
                List<float[]> vectors = ChunkDocuments.vectorsOf(source);
                if (source.get(ChunkDocuments.TEXT_HASH) instanceof String hash && vectors != null) {
                    byHash.put(hash, vectors);
                }
            }
            listener.onResponse(byHash);
        }, listener::onFailure));
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
                if (!item.isFailed() && item.getResponse().isExists()) {
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
