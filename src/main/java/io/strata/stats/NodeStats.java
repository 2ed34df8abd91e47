package io.strata.stats;

import org.opensearch.core.common.io.stream.StreamInput;
import org.opensearch.core.common.io.stream.StreamOutput;
import org.opensearch.core.common.io.stream.Writeable;
import org.opensearch.core.xcontent.ToXContentFragment;
import org.opensearch.core.xcontent.XContentBuilder;

import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * One node's counters at one moment, as sent between nodes and shown by {@code GET _plugins/_strata/stats}:
 * <pre>
 * "ingest": {"documents", "parents", "children", "chunk_documents_written", "chunk_documents_deleted", "vectors_embedded",
 *            "vectors_reused", "failures": {"bad_input", "rejected", "model", "write", "other"}},
 * "inference": {"queue": {"size", "active", "rejected"},
 *               "models": {"&lt;name or model_id&gt;": {"type", "calls", "texts", "errors", "time_ms"[, "truncated", "loaded"]}}},
 * "query": {"multi_granular", "embedded_queries"}
 * </pre>
 * Every count is since the node started. Wire format: the fields in this order (all nodes run the same plugin version).
 */
public record NodeStats(Ingest ingest, Queue queue, Map<String, Model> models, Query query) implements Writeable, ToXContentFragment {

    public NodeStats {
        models = Map.copyOf(models);
    }

    public static NodeStats read(StreamInput in) throws IOException {
        return new NodeStats(Ingest.read(in), Queue.read(in), in.readMap(StreamInput::readString, Model::read), Query.read(in));
    }

    @Override
    public void writeTo(StreamOutput out) throws IOException {
        ingest.writeTo(out);
        queue.writeTo(out);
        out.writeMap(models, StreamOutput::writeString, (o, m) -> m.writeTo(o));
        query.writeTo(out);
    }

    @Override
    public XContentBuilder toXContent(XContentBuilder builder, Params params) throws IOException {
        builder.startObject("ingest");
        ingest.toXContent(builder);
        builder.endObject();
        builder.startObject("inference");
        builder.startObject("queue").field("size", queue.size).field("active", queue.active).field("rejected", queue.rejected).endObject();
        builder.startObject("models");
        for (Map.Entry<String, Model> e : new TreeMap<>(models).entrySet()) {
            builder.startObject(e.getKey());
            e.getValue().toXContent(builder);
            builder.endObject();
        }
        builder.endObject();
        builder.endObject();
        builder.startObject("query").field("multi_granular", query.multiGranular).field("embedded_queries", query.embeddedQueries)
            .endObject();
        return builder;
    }

    /** Ingest counters; {@code failures} holds every reason, in a fixed order. */
    public record Ingest(long documents, long parents, long children, long chunkDocumentsWritten, long chunkDocumentsDeleted,
                         long vectorsEmbedded, long vectorsReused, Map<String, Long> failures) implements Writeable {
        public Ingest {
            failures = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(failures));
        }

        static Ingest read(StreamInput in) throws IOException {
            long documents = in.readVLong(), parents = in.readVLong(), children = in.readVLong(), written = in.readVLong();
            long deleted = in.readVLong(), embedded = in.readVLong(), reused = in.readVLong();
            Map<String, Long> failures = new LinkedHashMap<>();
            for (int n = in.readVInt(); n > 0; n--) {
                failures.put(in.readString(), in.readVLong());
            }
            return new Ingest(documents, parents, children, written, deleted, embedded, reused, failures);
        }

        @Override
        public void writeTo(StreamOutput out) throws IOException {
            out.writeVLong(documents);
            out.writeVLong(parents);
            out.writeVLong(children);
            out.writeVLong(chunkDocumentsWritten);
            out.writeVLong(chunkDocumentsDeleted);
            out.writeVLong(vectorsEmbedded);
            out.writeVLong(vectorsReused);
            out.writeMap(failures, StreamOutput::writeString, StreamOutput::writeVLong);
        }

        void toXContent(XContentBuilder builder) throws IOException {
            builder.field("documents", documents).field("parents", parents).field("children", children)
                .field("chunk_documents_written", chunkDocumentsWritten).field("chunk_documents_deleted", chunkDocumentsDeleted)
                .field("vectors_embedded", vectorsEmbedded).field("vectors_reused", vectorsReused);
            builder.startObject("failures");
            for (Map.Entry<String, Long> e : failures.entrySet()) {
                builder.field(e.getKey(), e.getValue());
            }
            builder.endObject();
        }
    }

    /** The {@code strata_inference} thread pool: calls waiting, calls running, calls rejected since start. */
    public record Queue(int size, int active, long rejected) implements Writeable {
        static Queue read(StreamInput in) throws IOException {
            return new Queue(in.readVInt(), in.readVInt(), in.readVLong());
        }

        @Override
        public void writeTo(StreamOutput out) throws IOException {
            out.writeVInt(size);
            out.writeVInt(active);
            out.writeVLong(rejected);
        }
    }

    /**
     * Embedding calls of one model: calls and texts, failed calls, time in the model (embedded: on the inference thread,
     * the first call including the model load; ml-commons: the round trip). {@code truncated} (inputs cut to the
     * model's {@code max_tokens}) and {@code loaded} are known for embedded models only.
     */
    public record Model(boolean embedded, long calls, long texts, long errors, long timeMillis, long truncated, boolean loaded)
        implements Writeable {
        static Model read(StreamInput in) throws IOException {
            return new Model(in.readBoolean(), in.readVLong(), in.readVLong(), in.readVLong(), in.readVLong(), in.readVLong(),
                in.readBoolean());
        }

        @Override
        public void writeTo(StreamOutput out) throws IOException {
            out.writeBoolean(embedded);
            out.writeVLong(calls);
            out.writeVLong(texts);
            out.writeVLong(errors);
            out.writeVLong(timeMillis);
            out.writeVLong(truncated);
            out.writeBoolean(loaded);
        }

        void toXContent(XContentBuilder builder) throws IOException {
            builder.field("type", embedded ? "embedded" : "ml_commons").field("calls", calls).field("texts", texts)
                .field("errors", errors).field("time_ms", timeMillis);
            if (embedded) {
                builder.field("truncated", truncated).field("loaded", loaded);
            }
        }
    }

    /** {@code multi_granular} queries received by this node, and those whose {@code query_text} it embedded. */
    public record Query(long multiGranular, long embeddedQueries) implements Writeable {
        static Query read(StreamInput in) throws IOException {
            return new Query(in.readVLong(), in.readVLong());
        }

        @Override
        public void writeTo(StreamOutput out) throws IOException {
            out.writeVLong(multiGranular);
            out.writeVLong(embeddedQueries);
        }
    }
}
