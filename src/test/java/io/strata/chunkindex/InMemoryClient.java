package io.strata.chunkindex;

import org.apache.lucene.search.TotalHits;
import org.opensearch.action.ActionRequest;
import org.opensearch.action.DocWriteRequest;
import org.opensearch.action.admin.indices.create.CreateIndexAction;
import org.opensearch.action.admin.indices.create.CreateIndexRequest;
import org.opensearch.action.admin.indices.create.CreateIndexResponse;
import org.opensearch.action.admin.indices.delete.DeleteIndexAction;
import org.opensearch.action.admin.indices.delete.DeleteIndexRequest;
import org.opensearch.action.admin.indices.mapping.put.PutMappingAction;
import org.opensearch.action.admin.indices.mapping.put.PutMappingRequest;
import org.opensearch.action.admin.indices.refresh.RefreshAction;
import org.opensearch.action.bulk.BulkAction;
import org.opensearch.action.bulk.BulkItemResponse;
import org.opensearch.action.bulk.BulkRequest;
import org.opensearch.action.bulk.BulkResponse;
import org.opensearch.action.delete.DeleteRequest;
import org.opensearch.action.delete.DeleteResponse;
import org.opensearch.action.get.GetAction;
import org.opensearch.action.get.GetRequest;
import org.opensearch.action.get.GetResponse;
import org.opensearch.action.get.MultiGetAction;
import org.opensearch.action.get.MultiGetItemResponse;
import org.opensearch.action.get.MultiGetRequest;
import org.opensearch.action.get.MultiGetResponse;
import org.opensearch.action.index.IndexAction;
import org.opensearch.action.index.IndexRequest;
import org.opensearch.action.index.IndexResponse;
import org.opensearch.action.search.ClearScrollAction;
import org.opensearch.action.search.ClearScrollResponse;
import org.opensearch.action.search.SearchAction;
import org.opensearch.action.search.SearchRequest;
import org.opensearch.action.search.SearchResponse;
import org.opensearch.action.search.SearchScrollAction;
import org.opensearch.action.search.SearchScrollRequest;
import org.opensearch.action.search.ShardSearchFailure;
import org.opensearch.action.support.clustermanager.AcknowledgedResponse;
import org.opensearch.cluster.ClusterState;
import org.opensearch.cluster.metadata.IndexMetadata;
import org.opensearch.cluster.metadata.Metadata;
import org.opensearch.common.UUIDs;
import org.opensearch.common.xcontent.XContentFactory;
import org.opensearch.common.xcontent.XContentHelper;
import org.opensearch.common.xcontent.json.JsonXContent;
import org.opensearch.core.action.ActionListener;
import org.opensearch.core.action.ActionResponse;
import org.opensearch.core.common.bytes.BytesReference;
import org.opensearch.core.index.shard.ShardId;
import org.opensearch.action.ActionType;
import org.opensearch.index.IndexNotFoundException;
import org.opensearch.index.VersionType;
import org.opensearch.index.engine.VersionConflictEngineException;
import org.opensearch.index.get.GetResult;
import org.opensearch.index.mapper.MapperService;
import org.opensearch.index.query.ExistsQueryBuilder;
import org.opensearch.index.query.IdsQueryBuilder;
import org.opensearch.index.query.MatchAllQueryBuilder;
import org.opensearch.index.query.QueryBuilder;
import org.opensearch.index.query.TermQueryBuilder;
import org.opensearch.index.seqno.SequenceNumbers;
import org.opensearch.search.DocValueFormat;
import org.opensearch.search.SearchHit;
import org.opensearch.search.SearchHits;
import org.opensearch.search.builder.SearchSourceBuilder;
import org.opensearch.search.sort.FieldSortBuilder;
import org.opensearch.search.internal.InternalSearchResponse;
import org.opensearch.test.client.NoOpNodeClient;
import org.opensearch.threadpool.ThreadPool;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.function.Function;

/**
 * A node client over in-memory indices, answering at once in the caller's thread: bulk (item by item, with
 * {@code external_gte} versions and delete tombstones), get, multi-get, index (with {@code if_seq_no}), searches (match_all, ids, term and exists queries; scrolls; pages sorted by
 * {@code _seq_no} after a {@code search_after}, hits with their versions; one shard per index), refresh, create index, put mapping and
 * delete index. Index creation and mapping updates change the {@link TestClusterService}'s state as the cluster manager
 * would. Every request is recorded; a test replaces the answer to one action with {@link #on}, and fails single bulk or
 * multi-get items with {@link #failBulkItem} / {@link #failGetItem}.
 */
public final class InMemoryClient extends NoOpNodeClient {
    /** Answers one request of an action. */
    public interface Handler {
        void handle(ActionRequest request, ActionListener<ActionResponse> listener) throws Exception;
    }

    /** A document (source null: a delete's tombstone, kept for versioned writes) with its sequence number and version. */
    private record Stored(Map<String, Object> source, long seqNo, long version) {}

    private record Scroll(List<Map.Entry<String, Stored>> hits, int size, int[] at) {}

    private final TestClusterService clusterService;
    /** index → id → document, in insertion order (the order of {@code _doc}). */
    private final Map<String, Map<String, Stored>> indices = new TreeMap<>();
    private final Map<String, Scroll> scrolls = new HashMap<>();
    private final Map<String, Handler> handlers = new HashMap<>();
    private long seqNo;
    public final List<ActionRequest> requests = new ArrayList<>();
    public Function<DocWriteRequest<?>, Exception> failBulkItem = r -> null;
    public Function<MultiGetRequest.Item, Exception> failGetItem = i -> null;

    public InMemoryClient(ThreadPool threadPool, TestClusterService clusterService) {
        super(threadPool);
        this.clusterService = clusterService;
    }

    /** Answers {@code action} with {@code handler} from now on (it may call {@link #answer} for the usual answer). */
    public void on(ActionType<?> action, Handler handler) {
        handlers.put(action.name(), handler);
    }

    public void put(String index, String id, Map<String, Object> source) {
        indices.computeIfAbsent(index, k -> new LinkedHashMap<>()).put(id, new Stored(new LinkedHashMap<>(source), ++seqNo, 1));
    }

    /** The document as stored, or null. */
    public Map<String, Object> get(String index, String id) {
        Stored doc = indices.getOrDefault(index, Map.of()).get(id);
        return doc == null ? null : doc.source();
    }

    /** The version of a document or tombstone, or -1. */
    public long version(String index, String id) {
        Stored doc = indices.getOrDefault(index, Map.of()).get(id);
        return doc == null ? -1 : doc.version();
    }

    /** The ids of {@code index}, in insertion order. */
    public List<String> ids(String index) {
        return indices.getOrDefault(index, Map.of()).entrySet().stream().filter(e -> e.getValue().source() != null).map(Map.Entry::getKey)
            .toList();
    }

    @SuppressWarnings("unchecked")
    public <R extends ActionRequest> List<R> requests(Class<R> type) {
        return requests.stream().filter(type::isInstance).map(r -> (R) r).toList();
    }

    @Override
    @SuppressWarnings("unchecked")
    public <Request extends ActionRequest, Response extends ActionResponse> void doExecute(ActionType<Response> action,
                                                                                          Request request,
                                                                                          ActionListener<Response> listener) {
        requests.add(request);
        ActionListener<ActionResponse> l = (ActionListener<ActionResponse>) listener;
        Handler handler = handlers.getOrDefault(action.name(), (req, lst) -> answer(action, req, lst));
        try {
            handler.handle(request, l);
        } catch (Exception e) {
            l.onFailure(e);
        }
    }

    /** The usual answer to {@code request}. */
    public void answer(ActionType<?> action, ActionRequest request, ActionListener<ActionResponse> listener) throws Exception {
        String name = action.name();
        ActionResponse response;
        if (name.equals(BulkAction.NAME)) {
            response = doBulk((BulkRequest) request);
        } else if (name.equals(MultiGetAction.NAME)) {
            response = doMultiGet((MultiGetRequest) request);
        } else if (name.equals(GetAction.NAME)) {
            GetRequest get = (GetRequest) request;
            if (!indices.containsKey(get.index())) {
                throw new IndexNotFoundException(get.index());
            }
            response = getResponse(get.index(), get.id());
        } else if (name.equals(IndexAction.NAME)) {
            response = doIndex((IndexRequest) request);
        } else if (name.equals(SearchAction.NAME)) {
            response = doSearch((SearchRequest) request);
        } else if (name.equals(SearchScrollAction.NAME)) {
            response = page(((SearchScrollRequest) request).scrollId());
        } else if (name.equals(ClearScrollAction.NAME)) {
            response = new ClearScrollResponse(true, 1);
        } else if (name.equals(RefreshAction.NAME)) {
            response = null; // nobody reads it
        } else if (name.equals(CreateIndexAction.NAME)) {
            response = create((CreateIndexRequest) request);
        } else if (name.equals(PutMappingAction.NAME)) {
            response = putMapping((PutMappingRequest) request);
        } else if (name.equals(DeleteIndexAction.NAME)) {
            response = deleteIndex((DeleteIndexRequest) request);
        } else if (name.equals(org.opensearch.action.admin.cluster.state.ClusterStateAction.NAME)) {
            response = new org.opensearch.action.admin.cluster.state.ClusterStateResponse(clusterService.state().getClusterName(),
                clusterService.state(), false); // the cluster manager's state is this one
        } else if (name.equals(org.opensearch.action.admin.indices.stats.IndicesStatsAction.NAME)) {
            response = stats((org.opensearch.action.admin.indices.stats.IndicesStatsRequest) request);
        } else {
            throw new UnsupportedOperationException("no in-memory answer to [" + name + "]");
        }
        listener.onResponse(response);
    }

    /** One primary per index: its live documents, and its last operation's sequence number (-1: never written). */
    private ActionResponse stats(org.opensearch.action.admin.indices.stats.IndicesStatsRequest request) {
        List<org.opensearch.action.admin.indices.stats.ShardStats> shards = new ArrayList<>();
        for (String index : request.indices()) {
            org.opensearch.cluster.metadata.IndexMetadata meta = clusterService.state().metadata().index(index);
            if (meta == null) {
                throw new IndexNotFoundException(index);
            }
            long max = indices.getOrDefault(index, Map.of()).values().stream().mapToLong(Stored::seqNo).max().orElse(-1);
            org.opensearch.action.admin.indices.stats.CommonStats common = new org.opensearch.action.admin.indices.stats.CommonStats();
            common.docs = new org.opensearch.index.shard.DocsStats(ids(index).size(), 0, 0);
            ShardId shard = new ShardId(meta.getIndex(), 0);
            java.nio.file.Path path = java.nio.file.Path.of("data", "indices", meta.getIndexUUID(), "0");
            shards.add(new org.opensearch.action.admin.indices.stats.ShardStats(
                org.opensearch.cluster.routing.TestShardRouting.newShardRouting(shard, "node", true,
                    org.opensearch.cluster.routing.ShardRoutingState.STARTED),
                new org.opensearch.index.shard.ShardPath(false, path, path, shard), common,
                null, new org.opensearch.index.seqno.SeqNoStats(max, max, max), null, null));
        }
        return new org.opensearch.action.admin.indices.stats.IndicesStatsResponse(
            shards.toArray(org.opensearch.action.admin.indices.stats.ShardStats[]::new), shards.size(), shards.size(), 0, List.of());
    }

    private BulkResponse doBulk(BulkRequest bulk) {
        BulkItemResponse[] items = new BulkItemResponse[bulk.requests().size()];
        for (int i = 0; i < items.length; i++) {
            DocWriteRequest<?> r = bulk.requests().get(i);
            Exception failure = failBulkItem.apply(r);
            try {
                if (failure != null) {
                    throw failure;
                } else if (r instanceof IndexRequest index) {
                    items[i] = new BulkItemResponse(i, r.opType(), doIndex(index));
                } else if (r instanceof DeleteRequest delete) {
                    items[i] = new BulkItemResponse(i, r.opType(), doDelete(delete));
                } else {
                    throw new UnsupportedOperationException(r.toString());
                }
            } catch (Exception e) {
                items[i] = new BulkItemResponse(i, r.opType(), new BulkItemResponse.Failure(r.index(), r.id(), e));
            }
        }
        return new BulkResponse(items, 1);
    }

    /** Whether an external_gte operation at {@code version} loses to what is stored. */
    private static boolean olderThanStored(DocWriteRequest<?> r, Stored current) {
        return r.versionType() == VersionType.EXTERNAL_GTE && current != null && current.version() > r.version();
    }

    private DeleteResponse doDelete(DeleteRequest delete) {
        Map<String, Stored> docs = indices.computeIfAbsent(delete.index(), k -> new LinkedHashMap<>());
        Stored current = docs.get(delete.id());
        if (olderThanStored(delete, current)) {
            throw new VersionConflictEngineException(shard(delete.index()), delete.id(), "a newer version is stored");
        }
        boolean found = current != null && current.source() != null;
        long version = delete.versionType() == VersionType.EXTERNAL_GTE ? delete.version() : (current == null ? 1 : current.version() + 1);
        if (delete.versionType() == VersionType.EXTERNAL_GTE) {
            docs.put(delete.id(), new Stored(null, ++seqNo, version)); // a tombstone
        } else {
            docs.remove(delete.id());
            ++seqNo;
        }
        return new DeleteResponse(shard(delete.index()), delete.id(), seqNo, 1, version, found);
    }

    private IndexResponse doIndex(IndexRequest index) {
        Map<String, Stored> docs = indices.computeIfAbsent(index.index(), k -> new LinkedHashMap<>());
        Stored current = docs.get(index.id());
        boolean live = current != null && current.source() != null;
        if (index.ifSeqNo() != SequenceNumbers.UNASSIGNED_SEQ_NO && (!live || current.seqNo() != index.ifSeqNo())) {
            throw new VersionConflictEngineException(shard(index.index()), index.id(), "seq_no changed");
        }
        if (olderThanStored(index, current)) {
            throw new VersionConflictEngineException(shard(index.index()), index.id(), "a newer version is stored");
        }
        long version = index.versionType() == VersionType.EXTERNAL_GTE ? index.version() : (current == null ? 1 : current.version() + 1);
        docs.put(index.id(), new Stored(new LinkedHashMap<>(index.sourceAsMap()), ++seqNo, version));
        return new IndexResponse(shard(index.index()), index.id(), seqNo, 1, version, !live);
    }

    private MultiGetResponse doMultiGet(MultiGetRequest mget) {
        MultiGetItemResponse[] items = new MultiGetItemResponse[mget.getItems().size()];
        for (int i = 0; i < items.length; i++) {
            MultiGetRequest.Item item = mget.getItems().get(i);
            Exception failure = failGetItem.apply(item);
            if (failure == null && !indices.containsKey(item.index())) {
                failure = new IndexNotFoundException(item.index());
            }
            items[i] = failure != null ? new MultiGetItemResponse(null, new MultiGetResponse.Failure(item.index(), item.id(), failure))
                : new MultiGetItemResponse(getResponse(item.index(), item.id()), null);
        }
        return new MultiGetResponse(items);
    }

    private GetResponse getResponse(String index, String id) {
        Stored doc = indices.getOrDefault(index, Map.of()).get(id);
        if (doc == null || doc.source() == null) {
            return new GetResponse(new GetResult(index, id, SequenceNumbers.UNASSIGNED_SEQ_NO, 0, -1, false, null, null, null));
        }
        return new GetResponse(new GetResult(index, id, doc.seqNo(), 1, doc.version(), true, json(doc.source()), null, null));
    }

    private SearchResponse doSearch(SearchRequest search) {
        if (search.indices().length != 1) {
            throw new UnsupportedOperationException("searches of one index only");
        }
        SearchSourceBuilder source = search.source();
        QueryBuilder query = source == null ? null : source.query();
        List<Map.Entry<String, Stored>> hits = new ArrayList<>();
        // every in-memory index has one shard: a preference for another shard finds nothing
        boolean otherShard = search.preference() != null && search.preference().startsWith("_shards:") && !search.preference().equals("_shards:0");
        for (Map.Entry<String, Stored> doc : indices.getOrDefault(search.indices()[0], Map.of()).entrySet()) {
            if (!otherShard && doc.getValue().source() != null && matches(query, doc.getKey(), doc.getValue().source())) {
                hits.add(Map.entry(doc.getKey(), doc.getValue()));
            }
        }
        boolean bySeqNo = source != null && source.sorts() != null && source.sorts().stream()
            .anyMatch(sort -> sort instanceof FieldSortBuilder f && f.getFieldName().equals("_seq_no"));
        if (bySeqNo) {
            hits.sort((x, y) -> Long.compare(x.getValue().seqNo(), y.getValue().seqNo()));
            if (source.searchAfter() != null) {
                long after = ((Number) source.searchAfter()[0]).longValue();
                hits.removeIf(h -> h.getValue().seqNo() <= after);
            }
        }
        int size = source == null || source.size() < 0 ? 10 : source.size();
        Scroll scroll = new Scroll(hits, size, new int[1]);
        if (search.scroll() == null) {
            return response(scroll, null);
        }
        String id = "scroll-" + scrolls.size();
        scrolls.put(id, scroll);
        return page(id);
    }

    private SearchResponse page(String scrollId) {
        Scroll scroll = scrolls.get(scrollId);
        if (scroll == null) {
            throw new IllegalArgumentException("no scroll [" + scrollId + "]");
        }
        return response(scroll, scrollId);
    }

    private SearchResponse response(Scroll scroll, String scrollId) {
        int from = scroll.at()[0];
        int to = Math.min(scroll.hits().size(), from + scroll.size());
        scroll.at()[0] = to;
        SearchHit[] hits = new SearchHit[to - from];
        for (int i = from; i < to; i++) {
            Map.Entry<String, Stored> doc = scroll.hits().get(i);
            SearchHit hit = new SearchHit(i, doc.getKey(), Map.of(), Map.of()).sourceRef(json(doc.getValue().source()));
            hit.version(doc.getValue().version());
            hit.setSeqNo(doc.getValue().seqNo());
            hit.setPrimaryTerm(1);
            hit.sortValues(new Object[] { doc.getValue().seqNo() }, new DocValueFormat[] { DocValueFormat.RAW });
            hits[i - from] = hit;
        }
        SearchHits searchHits = new SearchHits(hits, new TotalHits(scroll.hits().size(), TotalHits.Relation.EQUAL_TO), 1f);
        return new SearchResponse(new InternalSearchResponse(searchHits, null, null, null, false, null, 1), scrollId, 1, 1, 0, 1,
            ShardSearchFailure.EMPTY_ARRAY, SearchResponse.Clusters.EMPTY);
    }

    private static boolean matches(QueryBuilder query, String id, Map<String, Object> source) {
        if (query == null || query instanceof MatchAllQueryBuilder) {
            return true;
        }
        if (query instanceof IdsQueryBuilder ids) {
            return ids.ids().contains(id);
        }
        if (query instanceof TermQueryBuilder term) {
            return Objects.equals(valueAt(source, term.fieldName()), term.value());
        }
        if (query instanceof ExistsQueryBuilder exists) {
            return valueAt(source, exists.fieldName()) != null;
        }
        throw new UnsupportedOperationException("no in-memory evaluation of " + query);
    }

    private static Object valueAt(Map<String, Object> source, String path) {
        Object at = source;
        for (String key : path.split("\\.")) {
            if (!(at instanceof Map<?, ?> map)) {
                return null;
            }
            at = map.get(key);
        }
        return at;
    }

    // ---- the cluster manager's side: indices and mappings

    private CreateIndexResponse create(CreateIndexRequest create) {
        ClusterState state = clusterService.state();
        if (state.metadata().hasIndex(create.index())) {
            throw new org.opensearch.ResourceAlreadyExistsException(state.metadata().index(create.index()).getIndex());
        }
        IndexMetadata index = TestClusterService.index(create.index(), UUIDs.randomBase64UUID(), parse(create.mappings()),
            create.settings());
        clusterService.setState(ClusterState.builder(state).metadata(Metadata.builder(state.metadata()).put(index, false)).build());
        indices.computeIfAbsent(create.index(), k -> new LinkedHashMap<>());
        return new CreateIndexResponse(true, true, create.index());
    }

    /** Replaces the {@code _meta} (as OpenSearch does) and adds the properties; bumps the mapping version. */
    @SuppressWarnings("unchecked")
    private AcknowledgedResponse putMapping(PutMappingRequest put) {
        ClusterState state = clusterService.state();
        Metadata.Builder metadata = Metadata.builder(state.metadata());
        for (String name : put.indices()) {
            IndexMetadata current = state.metadata().index(name);
            if (current == null) {
                throw new IndexNotFoundException(name);
            }
            Map<String, Object> mapping = current.mapping() == null ? new LinkedHashMap<>()
                : new LinkedHashMap<>(current.mapping().sourceAsMap());
            Map<String, Object> update = parse(put.source());
            if (update.containsKey("_meta")) {
                mapping.put("_meta", update.get("_meta"));
            }
            if (update.get("properties") instanceof Map<?, ?> props) {
                Map<String, Object> merged = new LinkedHashMap<>((Map<String, Object>) mapping.getOrDefault("properties", Map.of()));
                merged.putAll((Map<String, Object>) props);
                mapping.put("properties", merged);
            }
            IndexMetadata updated = IndexMetadata.builder(TestClusterService.index(name, current.getIndexUUID(), mapping,
                current.getSettings())).mappingVersion(current.getMappingVersion() + 1).build();
            metadata.put(updated, false);
        }
        clusterService.setState(ClusterState.builder(state).metadata(metadata).build());
        return new AcknowledgedResponse(true);
    }

    private AcknowledgedResponse deleteIndex(DeleteIndexRequest delete) {
        ClusterState state = clusterService.state();
        Metadata.Builder metadata = Metadata.builder(state.metadata());
        for (String name : delete.indices()) {
            if (!state.metadata().hasIndex(name)) {
                throw new IndexNotFoundException(name);
            }
            metadata.remove(name);
            indices.remove(name);
        }
        clusterService.setState(ClusterState.builder(state).metadata(metadata).build());
        return new AcknowledgedResponse(true);
    }

    /** A mapping as a request carries it, with or without the {@code _doc} wrapper. */
    @SuppressWarnings("unchecked")
    public static Map<String, Object> parse(String mapping) {
        if (mapping == null || mapping.isEmpty()) {
            return null;
        }
        Map<String, Object> map = XContentHelper.convertToMap(JsonXContent.jsonXContent, mapping, true);
        if (map.size() == 1 && map.get(MapperService.SINGLE_MAPPING_NAME) instanceof Map<?, ?> inner) {
            return (Map<String, Object>) inner;
        }
        return map;
    }

    private static BytesReference json(Map<String, Object> source) {
        try {
            return BytesReference.bytes(XContentFactory.jsonBuilder().map(source));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static ShardId shard(String index) {
        return new ShardId(index, "_na_", 0);
    }
}
