package io.strata.query;

import org.apache.lucene.search.MatchNoDocsQuery;
import org.apache.lucene.search.Query;
import org.opensearch.common.lucene.search.Queries;
import org.opensearch.core.common.io.stream.StreamInput;
import org.opensearch.core.common.io.stream.StreamOutput;
import org.opensearch.core.index.Index;
import org.opensearch.core.rest.RestStatus;
import org.opensearch.core.xcontent.XContentBuilder;
import org.opensearch.core.xcontent.XContentParser;
import org.opensearch.index.query.AbstractQueryBuilder;
import org.opensearch.index.query.QueryBuilder;
import org.opensearch.index.query.QueryRewriteContext;
import org.opensearch.index.query.QueryShardContext;
import org.opensearch.index.query.QueryShardException;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * What a {@code multi_granular} query becomes once the coordinator has planned it ({@link QueryPlanner}): its global top
 * {@code k} parents, each with its score — the dense MAX, the lexical MAX or the fused score, by mode — and what
 * {@code explain_child} needs to show the chunk that scored. The shards of the user's search only look the parents up by
 * {@code _id} ({@link PlannedParentsQuery}); every score was computed once, from global lists, so hits, totals,
 * aggregations, paging and collapsing all see exactly these parents. Internal: registered so it can travel to the shards,
 * refused when written by users.
 *
 * <p>It is pinned to the concrete indices the planning searched ({@link Planned}): OpenSearch resolves the request's
 * names again after the rewrite, so a shard of another index — an alias moved to another generation in between — fails
 * the search with a retryable 503 instead of answering nothing (its parents were planned elsewhere).
 */
public final class PlannedParentsQueryBuilder extends AbstractQueryBuilder<PlannedParentsQueryBuilder> {
    public static final String NAME = "strata_planned_parents";

    /** The chunk of the lexical side that scored a parent: level 0 is the parent itself. */
    public record SideChunk(int level, int ordinal, float score) {
        SideChunk(StreamInput in) throws IOException {
            this(in.readVInt(), in.readVInt(), in.readFloat());
        }

        void writeTo(StreamOutput out) throws IOException {
            out.writeVInt(level);
            out.writeVInt(ordinal);
            out.writeFloat(score);
        }
    }

    /**
     * A planned parent: its score and each side's raw score and share of it ({@link Fusion.Fused}; in the dense or lexical
     * mode one side holds the whole score) and, with {@code explain_child} or {@code evidence}, the lexical side's best
     * chunks, best first (empty when none or not asked).
     */
    public record Parent(Fusion.Fused fused, List<SideChunk> lexicalChunks) {
        public Parent {
            lexicalChunks = lexicalChunks == null ? List.of() : List.copyOf(lexicalChunks);
        }

        static Parent dense(String index, String id, float score) {
            return new Parent(new Fusion.Fused(index, id, score, score, Float.NaN, 1, 0), null);
        }

        static Parent lexical(String index, String id, float score, List<SideChunk> chunks) {
            return new Parent(new Fusion.Fused(index, id, score, Float.NaN, score, 0, 1), chunks);
        }

        /** The lexical side's best chunk, or null. */
        public SideChunk lexicalChunk() {
            return lexicalChunks.isEmpty() ? null : lexicalChunks.get(0);
        }
    }

    /**
     * What {@code evidence} needs on the shards: the request's {@link Evidence}, the text its sentences are scored for, and
     * each side's window bounds (its top and its last raw score; NaN when the side did not run or the fusion does not
     * normalise by them), with which a chunk's raw score is normalised as the {@code min_max} fusion normalises a parent's.
     */
    public record EvidenceSpec(Evidence evidence, String text, float denseTop, float denseFloor, float lexicalTop, float lexicalFloor) {
        EvidenceSpec(StreamInput in) throws IOException {
            this(new Evidence(in), in.readString(), in.readFloat(), in.readFloat(), in.readFloat(), in.readFloat());
        }

        void writeTo(StreamOutput out) throws IOException {
            evidence.writeTo(out);
            out.writeString(text);
            out.writeFloat(denseTop);
            out.writeFloat(denseFloor);
            out.writeFloat(lexicalTop);
            out.writeFloat(lexicalFloor);
        }

        /** {@code raw} mapped as the fusion maps its side's window onto [0, 1] (clamped: a chunk can score below the window's last parent); NaN when unknown. */
        static float normalise(float raw, float top, float floor) {
            if (Float.isNaN(top) || Float.isNaN(floor) || Float.isNaN(raw)) {
                return Float.NaN;
            }
            if (!(top > floor)) {
                return 1f;
            }
            return (float) Math.max(0, Math.min(1, (raw - floor) / (double) (top - floor)));
        }

        float dense(float raw) {
            return normalise(raw, denseTop, denseFloor);
        }

        float lexical(float raw) {
            return normalise(raw, lexicalTop, lexicalFloor);
        }
    }

    /**
     * Where the parents were planned: the concrete indices (name and UUID) every sub-search read, and the request's index
     * expression (its names and aliases, or empty for a point in time), for the error that names them.
     */
    public record Planned(List<Index> indices, List<String> expressions) {
        public Planned {
            indices = List.copyOf(indices);
            expressions = List.copyOf(expressions);
        }

        Planned(StreamInput in) throws IOException {
            this(in.readList(Index::new), in.readStringList());
        }

        void writeTo(StreamOutput out) throws IOException {
            out.writeList(indices);
            out.writeStringCollection(expressions);
        }

        /** Fails with a retryable 503 when {@code index} is not one the planning searched. */
        void check(Index index) {
            if (!indices.contains(index)) {
                throw new IndexMovedException(index, String.format(Locale.ROOT, "[%s] the chunk index behind %s moved during this "
                    + "search: its parents were planned in %s and this shard is of [%s]; retry the search", MultiGranularQueryBuilder.NAME,
                    expressions, indices.stream().map(Index::getName).toList(), index.getName()));
            }
        }
    }

    /**
     * A shard of an index the planning did not search. A {@link QueryShardException}, because the shard builds its query
     * inside a catch that turns every other exception into a 400 "failed to create query"; its status is 503, which stays
     * when it crosses nodes (an unregistered exception travels wrapped with its status).
     */
    static final class IndexMovedException extends QueryShardException {
        IndexMovedException(Index index, String message) {
            super(index, message, null);
        }

        @Override
        public RestStatus status() {
            return RestStatus.SERVICE_UNAVAILABLE;
        }
    }

    private final MultiGranularQueryBuilder.Mode mode;
    private final List<Parent> parents;
    private final Planned planned;
    /** The query vector, for the dense side of {@code explain_child} (its best chunk is found from the stored vectors). */
    private final float[] vector;
    private final List<Integer> levels;
    private final boolean explainChild;
    /** Null: no evidence packs. */
    private final EvidenceSpec evidence;
    /** The text the lexical side matched, for a {@code highlight} without {@code highlight_query}; null when no lexical side ran. */
    private final String lexicalText;

    PlannedParentsQueryBuilder(MultiGranularQueryBuilder.Mode mode, List<Parent> parents, Planned planned, float[] vector,
                               List<Integer> levels, boolean explainChild, EvidenceSpec evidence, String lexicalText) {
        this.mode = mode;
        this.parents = List.copyOf(parents);
        this.planned = Objects.requireNonNull(planned);
        this.vector = vector;
        this.levels = List.copyOf(levels);
        this.explainChild = explainChild;
        this.evidence = evidence;
        this.lexicalText = lexicalText;
    }

    public PlannedParentsQueryBuilder(StreamInput in) throws IOException {
        super(in);
        this.mode = in.readEnum(MultiGranularQueryBuilder.Mode.class);
        int n = in.readVInt();
        List<Parent> read = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            Fusion.Fused f = new Fusion.Fused(in.readString(), in.readString(), in.readFloat(), in.readFloat(), in.readFloat(),
                in.readDouble(), in.readDouble());
            read.add(new Parent(f, in.readList(SideChunk::new)));
        }
        this.parents = List.copyOf(read);
        this.planned = new Planned(in);
        this.vector = in.readBoolean() ? in.readFloatArray() : null;
        this.levels = in.readList(StreamInput::readVInt);
        this.explainChild = in.readBoolean();
        this.evidence = in.readBoolean() ? new EvidenceSpec(in) : null;
        this.lexicalText = in.readOptionalString();
    }

    @Override
    protected void doWriteTo(StreamOutput out) throws IOException {
        out.writeEnum(mode);
        out.writeVInt(parents.size());
        for (Parent p : parents) {
            Fusion.Fused f = p.fused();
            out.writeString(f.index());
            out.writeString(f.id());
            out.writeFloat(f.score());
            out.writeFloat(f.dense());
            out.writeFloat(f.lexical());
            out.writeDouble(f.denseShare());
            out.writeDouble(f.lexicalShare());
            out.writeCollection(p.lexicalChunks(), (o, c) -> c.writeTo(o));
        }
        planned.writeTo(out);
        out.writeBoolean(vector != null);
        if (vector != null) {
            out.writeFloatArray(vector);
        }
        out.writeCollection(levels, StreamOutput::writeVInt);
        out.writeBoolean(explainChild);
        out.writeBoolean(evidence != null);
        if (evidence != null) {
            evidence.writeTo(out);
        }
        out.writeOptionalString(lexicalText);
    }

    public MultiGranularQueryBuilder.Mode mode() {
        return mode;
    }

    public List<Parent> parents() {
        return parents;
    }

    public Planned planned() {
        return planned;
    }

    /** Users write {@code multi_granular}; this form exists only between the coordinator and the shards. */
    public static PlannedParentsQueryBuilder fromXContent(XContentParser parser) {
        throw new IllegalArgumentException("[" + NAME + "] is internal to [" + MultiGranularQueryBuilder.NAME + "]; use ["
            + MultiGranularQueryBuilder.NAME + "]");
    }

    @Override
    protected void doXContent(XContentBuilder builder, Params params) throws IOException {
        builder.startObject(NAME);
        builder.field("mode", mode.key());
        builder.startArray("parents");
        for (Parent p : parents) {
            Fusion.Fused f = p.fused();
            builder.startObject().field("_index", f.index()).field("_id", f.id()).field("score", f.score());
            if (mode == MultiGranularQueryBuilder.Mode.HYBRID) {
                if (!Float.isNaN(f.dense())) {
                    builder.field("dense", f.dense());
                }
                if (!Float.isNaN(f.lexical())) {
                    builder.field("lexical", f.lexical());
                }
            }
            builder.endObject();
        }
        builder.endArray();
        builder.field("planned_in", planned.indices().stream().map(Index::getName).toList());
        builder.field("levels", levels);
        builder.field("explain_child", explainChild);
        if (evidence != null) {
            builder.field("evidence", evidence.evidence());
        }
        if (lexicalText != null) {
            builder.field("lexical_text", lexicalText);
        }
        printBoostAndQueryName(builder);
        builder.endObject();
    }

    /**
     * On a shard, refuses an index the planning did not search. Checked in the shard's rewrite, which runs before the query
     * is built: an error from {@link #doToQuery} reaches the caller as a 400 "failed to create query", not as the 503.
     */
    @Override
    protected QueryBuilder doRewrite(QueryRewriteContext context) throws IOException {
        QueryShardContext shard = context.convertToShardContext();
        if (shard != null) {
            planned.check(shard.index());
        }
        return this;
    }

    @Override
    protected Query doToQuery(QueryShardContext context) {
        planned.check(context.index()); // any path that builds the query without the shard's rewrite

        Map<String, Parent> here = new HashMap<>();
        String index = context.index().getName();
        for (Parent p : parents) {
            if (p.fused().index().equals(index)) {
                here.put(p.fused().id(), p);
            }
        }
        if (here.isEmpty()) {
            return new MatchNoDocsQuery("no planned parent in index [" + index + "]");
        }
        return new PlannedParentsQuery(mode, here, context.bitsetFilter(Queries.newNonNestedFilter()), vector, levels, explainChild,
            evidence, lexicalText == null ? null : words(lexicalText, context));
    }

    /**
     * The lexical side's words as a {@code match} on the parent's text (and its contextual header) finds them: what a
     * {@code highlight} without {@code highlight_query} marks, as it would for a {@code match} query. Only visited, never run.
     */
    private static Query words(String text, QueryShardContext context) {
        try {
            return LexicalForm.textAndHeader("", text).toQuery(context);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    protected boolean doEquals(PlannedParentsQueryBuilder o) {
        return mode == o.mode && parents.equals(o.parents) && planned.equals(o.planned) && Arrays.equals(vector, o.vector) && levels.equals(o.levels)
            && explainChild == o.explainChild && Objects.equals(evidence, o.evidence) && Objects.equals(lexicalText, o.lexicalText);
    }

    @Override
    protected int doHashCode() {
        return Objects.hash(mode, parents, planned, Arrays.hashCode(vector), levels, explainChild, evidence, lexicalText);
    }

    @Override
    public String getWriteableName() {
        return NAME;
    }
}
