package io.strata.stats;

import org.opensearch.core.common.io.stream.StreamInput;
import org.opensearch.core.common.io.stream.StreamOutput;
import org.opensearch.core.common.io.stream.Writeable;
import org.opensearch.core.xcontent.ToXContentFragment;
import org.opensearch.core.xcontent.XContentBuilder;

import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * One node's counters at one moment, as sent between nodes and shown by {@code GET _plugins/_strata/stats}:
 * <pre>
 * "ingest": {"documents", "parents", "children", "chunk_documents_written", "chunk_documents_deleted", "vectors_embedded",
 *            "vectors_reused", "limit_splits", "failures": {"bad_input", "rejected", "model", "write", "other"},
 *            "in_progress": [{"index", "id", "chars", "stage", "texts", "texts_reused", "texts_embedded", "chunk_documents",
 *                             "chunk_documents_written", "elapsed_ms"}]},
 * "inference": {"queue": {"size", "active", "rejected"}, "query_lane": {"size", "active", "rejected", "timed_out"},
 *               "models": {"&lt;name or model_id&gt;": {"type", "calls", "texts", "errors", "time_ms"[, "truncated", "loaded"]}}},
 * "query": {"multi_granular", "embedded_queries"}
 * </pre>
 * Every count is since the node started; {@code in_progress} lists the large documents in flight now (see
 * {@link StrataStats#track}), oldest first. Wire format: the fields in this order (all nodes run the same plugin version).
 */
public record NodeStats(Ingest ingest, Queue queue, QueryLane queryLane, Map<String, Model> models, Query query, List<InProgress> inProgress)
    implements Writeable, ToXContentFragment {

    public NodeStats {
        models = Map.copyOf(models);
        inProgress = List.copyOf(inProgress);
    }

    public static NodeStats read(StreamInput in) throws IOException {
        return new NodeStats(Ingest.read(in), Queue.read(in), QueryLane.read(in), in.readMap(StreamInput::readString, Model::read),
            Query.read(in), in.readList(InProgress::read));
    }

    @Override
    public void writeTo(StreamOutput out) throws IOException {
        ingest.writeTo(out);
        queue.writeTo(out);
        queryLane.writeTo(out);
        out.writeMap(models, StreamOutput::writeString, (o, m) -> m.writeTo(o));
        query.writeTo(out);
        out.writeList(inProgress);
    }

    @Override
    public XContentBuilder toXContent(XContentBuilder builder, Params params) throws IOException {
        builder.startObject("ingest");
        ingest.toXContent(builder);
        builder.startArray("in_progress");
        for (InProgress p : inProgress) {
            p.toXContent(builder);
        }
        builder.endArray();
        builder.endObject();
        builder.startObject("inference");
        builder.startObject("queue").field("size", queue.size).field("active", queue.active).field("rejected", queue.rejected).endObject();
        builder.startObject("query_lane").field("size", queryLane.size).field("active", queryLane.active)
            .field("rejected", queryLane.rejected).field("timed_out", queryLane.timedOut).endObject();
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
                         long vectorsEmbedded, long vectorsReused, Map<String, Long> failures, long limitSplits) implements Writeable {
        public Ingest {
            failures = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(failures));
        }

        public Ingest(long documents, long parents, long children, long chunkDocumentsWritten, long chunkDocumentsDeleted,
                      long vectorsEmbedded, long vectorsReused, Map<String, Long> failures) {
            this(documents, parents, children, chunkDocumentsWritten, chunkDocumentsDeleted, vectorsEmbedded, vectorsReused, failures, 0);
        }

        static Ingest read(StreamInput in) throws IOException {
            long documents = in.readVLong(), parents = in.readVLong(), children = in.readVLong(), written = in.readVLong();
            long deleted = in.readVLong(), embedded = in.readVLong(), reused = in.readVLong();
            Map<String, Long> failures = new LinkedHashMap<>();
            for (int n = in.readVInt(); n > 0; n--) {
                failures.put(in.readString(), in.readVLong());
            }
            return new Ingest(documents, parents, children, written, deleted, embedded, reused, failures, in.readVLong());
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
            out.writeVLong(limitSplits);
        }

        void toXContent(XContentBuilder builder) throws IOException {
            builder.field("documents", documents).field("parents", parents).field("children", children)
                .field("chunk_documents_written", chunkDocumentsWritten).field("chunk_documents_deleted", chunkDocumentsDeleted)
                .field("vectors_embedded", vectorsEmbedded).field("vectors_reused", vectorsReused)
                .field("limit_splits", limitSplits);
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
     * The query lane ({@code strata_inference_query} thread pool): query embeddings waiting, running, rejected by its full
     * queue, and timed out before a thread took them ({@code plugins.strata.inference.query_queue_timeout}), since start.
     */
    public record QueryLane(int size, int active, long rejected, long timedOut) implements Writeable {
        static QueryLane read(StreamInput in) throws IOException {
            return new QueryLane(in.readVInt(), in.readVInt(), in.readVLong(), in.readVLong());
        }

        @Override
        public void writeTo(StreamOutput out) throws IOException {
            out.writeVInt(size);
            out.writeVInt(active);
            out.writeVLong(rejected);
            out.writeVLong(timedOut);
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

    /**
     * One large document in flight: its stage, its texts to vectorise (parents and children; {@code texts_reused} taken from
     * its stored chunks, {@code texts_embedded} so far), its chunk documents (one per parent) and those written so far, and
     * the time since its processor started.
     */
    public record InProgress(String index, String id, long chars, String stage, int texts, int textsReused, int textsEmbedded,
                             int chunkDocuments, int chunkDocumentsWritten, long elapsedMillis) implements Writeable {
        static InProgress read(StreamInput in) throws IOException {
            return new InProgress(in.readString(), in.readString(), in.readVLong(), in.readString(), in.readVInt(), in.readVInt(),
                in.readVInt(), in.readVInt(), in.readVInt(), in.readVLong());
        }

        @Override
        public void writeTo(StreamOutput out) throws IOException {
            out.writeString(index);
            out.writeString(id);
            out.writeVLong(chars);
            out.writeString(stage);
            out.writeVInt(texts);
            out.writeVInt(textsReused);
            out.writeVInt(textsEmbedded);
            out.writeVInt(chunkDocuments);
            out.writeVInt(chunkDocumentsWritten);
            out.writeVLong(elapsedMillis);
        }

        void toXContent(XContentBuilder builder) throws IOException {
            builder.startObject().field("index", index).field("id", id).field("chars", chars).field("stage", stage)
                .field("texts", texts).field("texts_reused", textsReused).field("texts_embedded", textsEmbedded)
                .field("chunk_documents", chunkDocuments).field("chunk_documents_written", chunkDocumentsWritten)
                .field("elapsed_ms", elapsedMillis).endObject();
        }
    }
}
