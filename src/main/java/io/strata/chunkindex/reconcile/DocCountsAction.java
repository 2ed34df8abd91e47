package io.strata.chunkindex.reconcile;

import org.opensearch.action.ActionType;
import org.opensearch.action.FailedNodeException;
import org.opensearch.action.support.ActionFilters;
import org.opensearch.action.support.nodes.BaseNodeResponse;
import org.opensearch.action.support.nodes.BaseNodesRequest;
import org.opensearch.action.support.nodes.BaseNodesResponse;
import org.opensearch.action.support.nodes.TransportNodesAction;
import org.opensearch.cluster.ClusterName;
import org.opensearch.cluster.metadata.IndexMetadata;
import org.opensearch.cluster.node.DiscoveryNode;
import org.opensearch.cluster.service.ClusterService;
import org.opensearch.common.inject.Inject;
import org.opensearch.common.lucene.search.Queries;
import org.opensearch.core.common.io.stream.StreamInput;
import org.opensearch.core.common.io.stream.StreamOutput;
import org.opensearch.index.IndexService;
import org.opensearch.index.engine.Engine;
import org.opensearch.index.mapper.MappedFieldType;
import org.opensearch.index.query.QueryShardContext;
import org.opensearch.index.shard.IndexShard;
import org.opensearch.indices.IndicesService;
import org.opensearch.threadpool.ThreadPool;
import org.opensearch.transport.TransportRequest;
import org.opensearch.transport.TransportService;
import org.apache.lucene.search.BooleanClause;
import org.apache.lucene.search.BooleanQuery;
import org.apache.lucene.search.Query;

import java.io.IOException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * How many documents each index holds, and how many hold each of some fields, as the node sees them: counted on every
 * started primary shard's searcher (what searches see since the last refresh), top-level documents only. An internal
 * action of the node, for {@link CallerView} to compare with what a caller's searches see; its counts are never returned
 * to a user nor used to act on documents.
 */
public final class DocCountsAction extends ActionType<DocCountsAction.Response> {
    public static final String NAME = "internal:strata/doc_counts";
    public static final DocCountsAction INSTANCE = new DocCountsAction();

    private DocCountsAction() {
        super(NAME, Response::new);
    }

    /** The key of the count of documents holding {@code field} in {@code index}; {@code index} alone counts every document. */
    static String key(String index, String field) {
        return field == null ? index : index + '\u0000' + field;
    }

    private static Map<String, List<String>> readFields(StreamInput in) throws IOException {
        return in.readMap(StreamInput::readString, StreamInput::readStringList);
    }

    private static void writeFields(StreamOutput out, Map<String, List<String>> fields) throws IOException {
        out.writeMap(fields, StreamOutput::writeString, StreamOutput::writeStringCollection);
    }

    /** The indices to count, and the fields whose holders to count in each. */
    public static final class Request extends BaseNodesRequest<Request> {
        final Map<String, List<String>> fields;

        public Request(Map<String, List<String>> fields) {
            super((String[]) null);
            this.fields = fields;
        }

        public Request(StreamInput in) throws IOException {
            super(in);
            fields = readFields(in);
        }

        @Override
        public void writeTo(StreamOutput out) throws IOException {
            super.writeTo(out);
            writeFields(out, fields);
        }
    }

    public static final class NodeRequest extends TransportRequest {
        final Map<String, List<String>> fields;

        NodeRequest(Map<String, List<String>> fields) {
            this.fields = fields;
        }

        public NodeRequest(StreamInput in) throws IOException {
            super(in);
            fields = readFields(in);
        }

        @Override
        public void writeTo(StreamOutput out) throws IOException {
            super.writeTo(out);
            writeFields(out, fields);
        }
    }

    public static final class NodeResponse extends BaseNodeResponse {
        final Map<String, Long> counts;

        NodeResponse(DiscoveryNode node, Map<String, Long> counts) {
            super(node);
            this.counts = counts;
        }

        public NodeResponse(StreamInput in) throws IOException {
            super(in);
            counts = in.readMap(StreamInput::readString, StreamInput::readLong);
        }

        @Override
        public void writeTo(StreamOutput out) throws IOException {
            super.writeTo(out);
            out.writeMap(counts, StreamOutput::writeString, StreamOutput::writeLong);
        }
    }

    public static final class Response extends BaseNodesResponse<NodeResponse> {
        public Response(ClusterName cluster, List<NodeResponse> nodes, List<FailedNodeException> failures) {
            super(cluster, nodes, failures);
        }

        public Response(StreamInput in) throws IOException {
            super(in);
        }

        @Override
        protected List<NodeResponse> readNodesFrom(StreamInput in) throws IOException {
            return in.readList(NodeResponse::new);
        }

        @Override
        protected void writeNodesTo(StreamOutput out, List<NodeResponse> nodes) throws IOException {
            out.writeList(nodes);
        }

        /** The counts summed over the nodes, by {@link #key}. */
        Map<String, Long> totals() {
            Map<String, Long> out = new HashMap<>();
            for (NodeResponse node : getNodes()) {
                node.counts.forEach((k, v) -> out.merge(k, v, Long::sum));
            }
            return out;
        }
    }

    public static final class TransportDocCountsAction extends TransportNodesAction<Request, Response, NodeRequest, NodeResponse> {
        private final IndicesService indices;

        @Inject
        public TransportDocCountsAction(ThreadPool threadPool, ClusterService clusterService, TransportService transportService,
                                        ActionFilters actionFilters, IndicesService indices) {
            super(NAME, threadPool, clusterService, transportService, actionFilters, Request::new, NodeRequest::new,
                ThreadPool.Names.MANAGEMENT, NodeResponse.class);
            this.indices = indices;
        }

        @Override
        protected Response newResponse(Request request, List<NodeResponse> responses, List<FailedNodeException> failures) {
            return new Response(clusterService.getClusterName(), responses, failures);
        }

        @Override
        protected NodeRequest newNodeRequest(Request request) {
            return new NodeRequest(request.fields);
        }

        @Override
        protected NodeResponse newNodeResponse(StreamInput in) throws IOException {
            return new NodeResponse(in);
        }

        @Override
        protected NodeResponse nodeOperation(NodeRequest request) {
            Map<String, Long> counts = new HashMap<>();
            for (var e : request.fields.entrySet()) {
                IndexMetadata metadata = clusterService.state().metadata().index(e.getKey());
                IndexService service = metadata == null ? null : indices.indexService(metadata.getIndex());
                if (service == null) {
                    continue;
                }
                for (IndexShard shard : service) {
                    if (!shard.routingEntry().primary() || !shard.routingEntry().started()) {
                        continue;
                    }
                    try (Engine.Searcher searcher = shard.acquireSearcher("strata_doc_counts")) {
                        Query topLevel = Queries.newNonNestedFilter();
                        counts.merge(key(e.getKey(), null), (long) searcher.count(topLevel), Long::sum);
                        QueryShardContext context = service.newQueryShardContext(shard.shardId().id(), searcher, () -> 0L, null);
                        for (String field : e.getValue()) {
                            MappedFieldType type = context.fieldMapper(field);
                            long n = type == null ? 0 : searcher.count(new BooleanQuery.Builder()
                                .add(type.existsQuery(context), BooleanClause.Occur.FILTER)
                                .add(topLevel, BooleanClause.Occur.FILTER).build());
                            counts.merge(key(e.getKey(), field), n, Long::sum);
                        }
                    } catch (IOException ex) {
                        throw new java.io.UncheckedIOException(ex);
                    }
                }
            }
            return new NodeResponse(clusterService.localNode(), counts);
        }
    }
}
