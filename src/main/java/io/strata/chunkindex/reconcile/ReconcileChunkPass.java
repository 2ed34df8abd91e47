package io.strata.chunkindex.reconcile;

import io.strata.chunkindex.ChunkDocuments;
import io.strata.chunkindex.ChunkKey;
import io.strata.chunkindex.SourceSummary;
import io.strata.chunkindex.ServingIndex;
import io.strata.chunkindex.registry.ChunkIndexRegistry;
import io.strata.chunkindex.setup.ChunkIndexSetup;

import org.opensearch.action.bulk.BulkItemResponse;
import org.opensearch.action.bulk.BulkRequest;
import org.opensearch.action.delete.DeleteRequest;
import org.opensearch.action.get.MultiGetItemResponse;
import org.opensearch.action.get.MultiGetRequest;
import org.opensearch.action.search.SearchRequest;
import org.opensearch.cluster.metadata.IndexMetadata;
import org.opensearch.cluster.metadata.Metadata;
import org.opensearch.cluster.routing.OperationRouting;
import org.opensearch.core.action.ActionListener;
import org.opensearch.index.VersionType;
import org.opensearch.index.engine.VersionConflictEngineException;
import org.opensearch.index.query.QueryBuilders;
import org.opensearch.search.SearchHit;
import org.opensearch.search.builder.SearchSourceBuilder;
import org.opensearch.search.fetch.subphase.FetchSourceContext;
import org.opensearch.transport.client.Client;
import org.opensearch.ExceptionsHelper;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The chunk side of {@code _reconcile}: every chunk document of one chunk index is an <b>orphan</b> when its source
 * document (its {@code source_id} on the shard its {@code source_routing} sends it to) is gone or no longer carries a
 * summary naming this chunk index (or the name a restore renamed it from, or an alias it is the write index of: a served
 * generation), or when its id is not its document's ({@link ChunkKey}), a
 * <b>duplicate</b> when its ordinal is at or beyond the summary's {@code parents} — unless a served generation's build cut
 * the document (its summary's count is then from before the build). A page's candidates (found with a
 * search of their sources) are confirmed with a realtime read of those sources, with their routing, and deleted with the
 * chunk's own version as read ({@code external_gte}): a chunk rewritten since by a newer write is not touched.
 */
final class ReconcileChunkPass {
    private static final String SUMMARY = SourceSummary.FIELD;

    private final Client client;
    private final ShardPages pages;
    private final ChunkIndexSetup setup;

    ReconcileChunkPass(Client client, ShardPages pages, ChunkIndexSetup setup) {
        this.client = client;
        this.pages = pages;
        this.setup = setup;
    }

    /** @param before the name the chunk index had before a restore renamed it (summaries restored with it name that), or null */
    void run(ReconcileReport report, String chunkIndex, String before, ActionListener<Void> listener) {
        Set<String> names = new HashSet<>(before == null ? Set.of(chunkIndex) : Set.of(chunkIndex, before));
        // a served generation: the summaries name the alias whose write index it is (the pipeline's target_index)
        Metadata metadata = setup.clusterState().metadata();
        IndexMetadata index = metadata.index(chunkIndex);
        if (index != null) {
            index.getAliases().keySet().stream().filter(a -> chunkIndex.equals(ServingIndex.of(metadata, a))).forEach(names::add);
        }
        report.phase = "chunks of [" + chunkIndex + "]";
        pages.forEach(chunkIndex, QueryBuilders.matchAllQuery(),
            new String[] { ChunkDocuments.SOURCE_ID, ChunkDocuments.ORDINAL, ChunkDocuments.SOURCE_ROUTING }, Reconciler.CHUNK_PAGE,
            (hits, l) -> {
                if (report.cancelled()) {
                    l.onFailure(report.cancellation());
                } else {
                    checkPage(report, chunkIndex, names, hits, l);
                }
            }, listener);
    }

    /** The id of chunk 0 of the source document {@code id} stored with {@code routing}: what one document's chunks share. */
    private String keyOf(ReconcileReport report, String id, String routing) {
        return setup.keyOf(report.sourceIndex, id, routing).chunkId(0);
    }

    /**
     * A chunk document as a page shows it; {@code key}: the chunk key of its source document (from its {@code source_id}
     * and {@code source_routing}), {@code misplaced}: its id is not that document's chunk id for its ordinal (written
     * before chunk ids carried the source shard, or by hand) — an orphan whatever its source holds.
     */
    private record Chunk(String id, String sourceId, int ordinal, String routing, long version, String key, boolean misplaced) {}

    private Chunk chunkOf(ReconcileReport report, SearchHit hit) {
        Map<String, Object> source = hit.getSourceAsMap();
        String sourceId = source != null && source.get(ChunkDocuments.SOURCE_ID) instanceof String s ? s : idPrefix(hit.getId());
        int ordinal = source != null && source.get(ChunkDocuments.ORDINAL) instanceof Number n ? n.intValue() : ordinalOf(hit.getId());
        String routing = source != null && source.get(ChunkDocuments.SOURCE_ROUTING) instanceof String r ? r : null;
        ChunkKey key = setup.keyOf(report.sourceIndex, sourceId, routing);
        boolean misplaced = ordinal != Integer.MAX_VALUE && !key.chunkId(ordinal).equals(hit.getId());
        return new Chunk(hit.getId(), sourceId, ordinal, routing, hit.getVersion(), key.chunkId(0), misplaced);
    }

    private void checkPage(ReconcileReport report, String chunkIndex, Set<String> names, SearchHit[] hits, ActionListener<Void> listener) {
        List<Chunk> chunks = new ArrayList<>(hits.length);
        Set<String> sourceIds = new LinkedHashSet<>();
        for (SearchHit hit : hits) {
            Chunk c = chunkOf(report, hit);
            chunks.add(c);
            sourceIds.add(c.sourceId());
        }
        // the summaries of the page's sources, whatever their routing (a search asks every shard)
        // (one _id can be a document on every shard; a summary left out of the page only costs its chunks a realtime read)
        int size = Math.min(sourceIds.size() * setup.shardsOf(report.sourceIndex), Math.max(sourceIds.size(), 10_000));
        SearchRequest search = new SearchRequest(report.sourceIndex).source(new SearchSourceBuilder().size(size)
            .query(QueryBuilders.idsQuery().addIds(sourceIds.toArray(String[]::new))).fetchSource(new String[] { SUMMARY }, null));
        client.search(search, ActionListener.wrap(response -> {
            Map<String, Map<?, ?>> summaries = new HashMap<>();
            for (SearchHit hit : response.getHits().getHits()) {
                Map<?, ?> s = summaryFor(hit.getSourceAsMap(), names);
                if (s != null) {
                    // one _id may be stored on several shards (custom routing): each document its own key
                    summaries.put(keyOf(report, hit.getId(), routingOf(hit)), s);
                }
            }
            List<Chunk> candidates = chunks.stream().filter(c -> drift(c, summaries.get(c.key())) != null).toList();
            confirm(report, chunkIndex, names, candidates, listener);
        }, listener::onFailure));
    }

    /** Candidates confirmed against their sources as stored now (realtime, with routing), counted, and deleted. */
    private void confirm(ReconcileReport report, String chunkIndex, Set<String> names, List<Chunk> candidates,
                         ActionListener<Void> listener) {
        if (candidates.isEmpty()) {
            listener.onResponse(null);
            return;
        }
        MultiGetRequest mget = new MultiGetRequest().realtime(true);
        FetchSourceContext summaryOnly = new FetchSourceContext(true, new String[] { SUMMARY }, null);
        Map<String, Chunk> byKey = new LinkedHashMap<>();
        candidates.forEach(c -> byKey.putIfAbsent(c.key(), c));
        List<String> keys = new ArrayList<>(byKey.keySet());
        byKey.values().forEach(c -> mget.add(new MultiGetRequest.Item(report.sourceIndex, c.sourceId()).routing(c.routing())
            .fetchSourceContext(summaryOnly)));
        client.multiGet(mget, ActionListener.wrap(response -> {
            Map<String, Map<?, ?>> summaries = new HashMap<>();
            Set<String> built = new HashSet<>();
            Metadata metadata = setup.clusterState().metadata();
            ChunkIndexRegistry.Served served = ChunkIndexRegistry.servedOf(metadata.index(chunkIndex));
            IndexMetadata sourceIndex = metadata.index(report.sourceIndex);
            MultiGetItemResponse[] items = response.getResponses();
            for (int i = 0; i < items.length; i++) {
                MultiGetItemResponse item = items[i];
                if (item.isFailed()) {
                    throw item.getFailure().getFailure();
                }
                if (item.getResponse().isExists()) {
                    Map<?, ?> s = summaryFor(item.getResponse().getSourceAsMap(), names);
                    if (s != null) {
                        summaries.put(keys.get(i), s); // the answers come in the order asked
                    }
                    Chunk c = byKey.get(keys.get(i));
                    if (cutByBuild(served, sourceIndex, c, item.getResponse().getSeqNo())) {
                        built.add(keys.get(i));
                    }
                }
            }
            List<Chunk> delete = new ArrayList<>();
            for (Chunk c : candidates) {
                String kind = drift(c, summaries.get(c.key()));
                if ("duplicate".equals(kind) && built.contains(c.key())) {
                    kind = null; // its summary's count is from before the build that cut its chunks here
                }
                if ("orphan".equals(kind)) {
                    report.orphans.incrementAndGet();
                    delete.add(c);
                } else if ("duplicate".equals(kind)) {
                    report.duplicates.incrementAndGet();
                    delete.add(c);
                }
            }
            deleteChunks(report, chunkIndex, delete, listener);
        }, listener::onFailure));
    }

    /**
     * Whether the chunks of {@code c}'s document in a served generation were cut by the generation's build, not by the write
     * its summary records (a build does not rewrite summaries): the document, at {@code seqNo}, is at or below the per-shard
     * checkpoints the swap recorded. The summary's {@code parents} then says nothing of how many chunks are here.
     */
    private static boolean cutByBuild(ChunkIndexRegistry.Served served, IndexMetadata source, Chunk c, long seqNo) {
        if (served == null || served.checkpoints() == null || source == null || seqNo < 0) {
            return false;
        }
        int shard = OperationRouting.generateShardId(source, c.sourceId(), c.routing());
        return shard < served.checkpoints().length && seqNo <= served.checkpoints()[shard];
    }

    /** "orphan", "duplicate", or null when the chunk belongs to its source's summary. */
    private static String drift(Chunk c, Map<?, ?> summary) {
        if (summary == null || c.misplaced()) {
            return "orphan";
        }
        return c.ordinal() >= (summary.get("parents") instanceof Number n ? n.intValue() : 0) ? "duplicate" : null;
    }

    /** The summary of {@code source} when it names this chunk index (under one of its {@code names}), else null. */
    private static Map<?, ?> summaryFor(Map<String, Object> source, Set<String> names) {
        return source != null && source.get(SUMMARY) instanceof Map<?, ?> s && s.get("target_index") instanceof String t
            && names.contains(t) ? s : null;
    }

    /** Deletes with each chunk's version as read: a chunk written again since (a newer version) stays. */
    private void deleteChunks(ReconcileReport report, String chunkIndex, List<Chunk> chunks, ActionListener<Void> listener) {
        if (chunks.isEmpty() || report.dryRun) {
            listener.onResponse(null);
            return;
        }
        BulkRequest bulk = new BulkRequest();
        chunks.forEach(c -> bulk.add(new DeleteRequest(chunkIndex, c.id()).version(c.version()).versionType(VersionType.EXTERNAL_GTE)));
        client.bulk(bulk, ActionListener.wrap(response -> {
            for (BulkItemResponse item : response.getItems()) {
                if (!item.isFailed()) {
                    report.fixed.incrementAndGet();
                } else if (!(ExceptionsHelper.unwrapCause(item.getFailure().getCause()) instanceof VersionConflictEngineException)) {
                    report.fail(chunkIndex, item.getId(), "deleting the chunk failed: " + item.getFailureMessage(),
                        item.getFailure().getStatus());
                }
            }
            listener.onResponse(null);
        }, listener::onFailure));
    }

    private static String idPrefix(String chunkId) {
        int colon = chunkId.lastIndexOf(':');
        return colon < 0 ? chunkId : chunkId.substring(0, colon);
    }

    private static int ordinalOf(String chunkId) {
        int ordinal = ChunkDocuments.ordinalOf(chunkId);
        return ordinal < 0 ? Integer.MAX_VALUE : ordinal; // not a chunk id of ours: beyond every summary
    }

    private static String routingOf(SearchHit hit) {
        org.opensearch.common.document.DocumentField routing = hit.field("_routing");
        return routing == null ? null : String.valueOf((Object) routing.getValue());
    }
}
