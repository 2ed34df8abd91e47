package io.strata.chunkindex.store;

import io.strata.chunkindex.ChunkDocuments;
import io.strata.chunkindex.ChunkKey;
import io.strata.chunkindex.ChunkWriteException;
import io.strata.stats.StrataStats;
import org.opensearch.ExceptionsHelper;
import org.opensearch.action.admin.indices.refresh.RefreshRequest;
import org.opensearch.action.bulk.BulkItemResponse;
import org.opensearch.action.bulk.BulkRequest;
import org.opensearch.action.delete.DeleteRequest;
import org.opensearch.action.get.GetRequest;
import org.opensearch.action.get.GetResponse;
import org.opensearch.action.get.MultiGetItemResponse;
import org.opensearch.action.get.MultiGetRequest;
import org.opensearch.action.index.IndexRequest;
import org.opensearch.core.action.ActionListener;
import org.opensearch.index.IndexNotFoundException;
import org.opensearch.index.VersionType;
import org.opensearch.ingest.IngestService;
import org.opensearch.index.engine.DocumentMissingException;
import org.opensearch.index.engine.VersionConflictEngineException;
import org.opensearch.search.fetch.subphase.FetchSourceContext;
import org.opensearch.transport.client.Client;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The chunk index's documents as the node client sees them, in the caller's thread context (so with the caller's
 * permissions): versioned writes and deletes for {@link ChunkCommit}, stored vectors for reuse, and source documents read
 * with their routing.
 *
 * <p>Chunk ids are those of {@link ChunkKey} with ordinals 0..n-1. Nothing here reads a chunk just written in realtime,
 * which would refresh the chunk shard (a segment and an HNSW graph per bulk); the only realtime read is the version of a
 * document's chunk 0 after a noop update ({@link ChunkCommit#inStep}).
 */
public final class ChunkStore implements VersionedChunks {
    private final Client client;
    private final StrataStats stats;

    public ChunkStore(Client client, StrataStats stats) {
        this.client = client;
        this.stats = stats;
    }

    @Override
    public void index(String index, List<Map.Entry<String, Map<String, Object>>> docs, long version,
                      ActionListener<List<ItemResult>> listener) {
        BulkRequest bulk = new BulkRequest();
        for (Map.Entry<String, Map<String, Object>> doc : docs) {
            // stored as written: a default pipeline the chunk index has (a matching template's) does not run
            bulk.add(new IndexRequest(index).id(doc.getKey()).source(doc.getValue()).version(version).versionType(VersionType.EXTERNAL_GTE)
                .setPipeline(IngestService.NOOP_PIPELINE_NAME));
        }
        execute(bulk, true, listener);
    }

    @Override
    public void delete(String index, List<String> ids, long version, ActionListener<List<ItemResult>> listener) {
        BulkRequest bulk = new BulkRequest();
        for (String id : ids) {
            bulk.add(new DeleteRequest(index, id).version(version).versionType(VersionType.EXTERNAL_GTE));
        }
        execute(bulk, false, listener);
    }

    private void execute(BulkRequest bulk, boolean writes, ActionListener<List<ItemResult>> listener) {
        client.bulk(bulk, ActionListener.wrap(response -> {
            List<ItemResult> out = new ArrayList<>(response.getItems().length);
            long applied = 0;
            for (BulkItemResponse item : response.getItems()) {
                if (!item.isFailed()) {
                    // a delete of an absent id leaves a tombstone but deletes no document: not counted, and not found
                    if (writes || item.getResponse().getResult() == org.opensearch.action.DocWriteResponse.Result.DELETED) {
                        applied++;
                        out.add(ItemResult.applied(item.getId()));
                    } else {
                        out.add(ItemResult.absent(item.getId()));
                    }
                    continue;
                }
                Throwable cause = ExceptionsHelper.unwrapCause(item.getFailure().getCause());
                if (cause instanceof VersionConflictEngineException) {
                    out.add(new ItemResult(item.getId(), Outcome.CONFLICT, null));
                } else if (!writes && cause instanceof IndexNotFoundException) {
                    out.add(ItemResult.absent(item.getId())); // no chunk index, no chunks
                } else {
                    out.add(new ItemResult(item.getId(), Outcome.FAILED, ChunkWriteException.of(item.getIndex(), item.getFailure().getCause())));
                }
            }
            if (writes) {
                stats.ingest().chunksWritten(applied);
            } else {
                stats.ingest().chunksDeleted(applied);
            }
            listener.onResponse(out);
        }, e -> {
            if (!writes && ExceptionsHelper.unwrapCause(e) instanceof IndexNotFoundException) {
                listener.onResponse(bulk.requests().stream().map(r -> ItemResult.absent(r.id())).toList());
            } else {
                listener.onFailure(ChunkWriteException.of(bulk.requests().get(0).index(), e));
            }
        }));
    }

    @Override
    public void versions(List<String> indices, String id, ActionListener<Map<String, Long>> listener) {
        MultiGetRequest probe = new MultiGetRequest().realtime(true);
        for (String index : indices) {
            probe.add(new MultiGetRequest.Item(index, id).fetchSourceContext(FetchSourceContext.DO_NOT_FETCH_SOURCE));
        }
        probe(probe, ActionListener.map(listener, found -> {
            Map<String, Long> out = new HashMap<>();
            found.forEach(r -> out.put(r.getIndex(), r.getVersion()));
            return out;
        }));
    }

    /** The documents of {@code probe} that exist; a missing index has none, any other failure fails the probe. */
    private void probe(MultiGetRequest probe, ActionListener<List<GetResponse>> listener) {
        client.multiGet(probe, ActionListener.wrap(response -> {
            List<GetResponse> found = new ArrayList<>();
            for (MultiGetItemResponse item : response.getResponses()) {
                if (item.isFailed()) {
                    Exception cause = item.getFailure().getFailure();
                    if (ExceptionsHelper.unwrapCause(cause) instanceof IndexNotFoundException) {
                        continue; // no chunk index, no chunks
                    }
                    // e.g. the caller may not read the chunk index: "none found" would silently leave them behind
                    listener.onFailure(ChunkWriteException.of(item.getIndex(), cause));
                    return;
                }
                if (item.getResponse().isExists()) {
                    found.add(item.getResponse());
                }
            }
            listener.onResponse(found);
        }, listener::onFailure));
    }

    /**
     * Vectors of the stored chunks {@code 0..count-1} of {@code sourceId} whose {@code text_hash} is in {@code wanted}: the
     * parent's vector followed by its children's, by hash. Not realtime (it must not refresh the chunk shard): equal
     * {@code text_hash} means equal vectors, so a chunk not yet visible is only a vector computed again. Read
     * {@link ChunkCommit#PROBE} chunks at a time, stopping at the first probe that finds no chunk. Missing index or
     * chunks: empty.
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
        MultiGetRequest probe = new MultiGetRequest().realtime(false);
        // children.level tells the parent's own level-0 entry (format 2) from the children
        FetchSourceContext fields = new FetchSourceContext(true, new String[] { ChunkDocuments.TEXT_HASH, ChunkDocuments.EMBEDDING,
            ChunkDocuments.CHILDREN + "." + ChunkDocuments.LEVEL, ChunkDocuments.CHILDREN + "." + ChunkDocuments.EMBEDDING }, null);
        for (int i = from; i < Math.min(count, from + ChunkCommit.PROBE); i++) {
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
                storedVectors(target, sourceId, from + ChunkCommit.PROBE, count, wanted, byHash, listener);
            } else {
                listener.onResponse(byHash);
            }
        }, listener::onFailure));
    }

    /** A source document as stored now (realtime, with its routing), with the sequence number that versions its chunks. */
    public record StoredSource(String index, String id, String routing, Map<String, Object> source, long seqNo, long primaryTerm) {}

    /** {@code index/id} as stored now (realtime, read with {@code routing}), or null when it does not exist. */
    public void sourceOf(String index, String id, String routing, ActionListener<StoredSource> listener) {
        client.get(new GetRequest(index, id).routing(routing).realtime(true), ActionListener.wrap((GetResponse r) -> listener.onResponse(
            r.isExists() ? new StoredSource(r.getIndex(), id, routing, r.getSourceAsMap(), r.getSeqNo(), r.getPrimaryTerm()) : null), e -> {
                if (ExceptionsHelper.unwrapCause(e) instanceof IndexNotFoundException
                    || ExceptionsHelper.unwrapCause(e) instanceof DocumentMissingException) {
                    listener.onResponse(null);
                } else {
                    listener.onFailure(e);
                }
            }));
    }

    /** Makes what was written to {@code indices} visible to search. */
    public void refresh(Collection<String> indices, ActionListener<Void> listener) {
        client.admin().indices().refresh(new RefreshRequest(indices.toArray(String[]::new)),
            ActionListener.wrap(r -> listener.onResponse(null), listener::onFailure));
    }
}
