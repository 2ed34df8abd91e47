package io.strata.query;

import org.apache.lucene.search.MatchNoDocsQuery;
import org.apache.lucene.search.Query;
import org.opensearch.common.lucene.search.Queries;
import org.opensearch.core.common.io.stream.StreamInput;
import org.opensearch.core.common.io.stream.StreamOutput;
import org.opensearch.core.xcontent.XContentBuilder;
import org.opensearch.core.xcontent.XContentParser;
import org.opensearch.index.query.AbstractQueryBuilder;
import org.opensearch.index.query.QueryShardContext;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * What a hybrid {@code multi_granular} query becomes once the coordinator has fused its two sides (see {@link HybridSearch}):
 * the k fused parents, each with its fused score, and what {@code explain_child} needs to show which chunk of which side
 * scored. Shards only look the parents up by id; every score was computed once, from the global lists. Internal: it is
 * registered so it can travel to the shards, and refuses to be written by users.
 */
public final class FusedParentsQueryBuilder extends AbstractQueryBuilder<FusedParentsQueryBuilder> {
    public static final String NAME = "strata_fused_parents";

    /** The chunk of one side that scored a parent: level 0 is the parent itself. */
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

    /** A fused parent and, with {@code explain_child}, the lexical side's best chunk (null when none or not asked). */
    public record Parent(Fusion.Fused fused, SideChunk lexicalChunk) {}

    private final List<Parent> parents;
    /** The dense side's query vector, for {@code explain_child} (the dense best chunk is computed from stored vectors). */
    private final float[] vector;
    private final List<Integer> levels;
    private final boolean explainChild;

    FusedParentsQueryBuilder(List<Parent> parents, float[] vector, List<Integer> levels, boolean explainChild) {
        this.parents = List.copyOf(parents);
        this.vector = vector;
        this.levels = List.copyOf(levels);
        this.explainChild = explainChild;
    }

    public FusedParentsQueryBuilder(StreamInput in) throws IOException {
        super(in);
        int n = in.readVInt();
        List<Parent> read = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            Fusion.Fused f = new Fusion.Fused(in.readString(), in.readString(), in.readFloat(), in.readFloat(), in.readFloat(),
                in.readDouble(), in.readDouble());
            read.add(new Parent(f, in.readBoolean() ? new SideChunk(in) : null));
        }
        this.parents = List.copyOf(read);
        this.vector = in.readBoolean() ? in.readFloatArray() : null;
        this.levels = in.readList(StreamInput::readVInt);
        this.explainChild = in.readBoolean();
    }

    @Override
    protected void doWriteTo(StreamOutput out) throws IOException {
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
            out.writeBoolean(p.lexicalChunk() != null);
            if (p.lexicalChunk() != null) {
                p.lexicalChunk().writeTo(out);
            }
        }
        out.writeBoolean(vector != null);
        if (vector != null) {
            out.writeFloatArray(vector);
        }
        out.writeCollection(levels, StreamOutput::writeVInt);
        out.writeBoolean(explainChild);
    }

    public List<Parent> parents() {
        return parents;
    }

    /** Users write {@code multi_granular}; this form exists only between the coordinator and the shards. */
    public static FusedParentsQueryBuilder fromXContent(XContentParser parser) {
        throw new IllegalArgumentException("[" + NAME + "] is internal to [" + MultiGranularQueryBuilder.NAME + "]; use ["
            + MultiGranularQueryBuilder.NAME + "] with [query_text]");
    }

    @Override
    protected void doXContent(XContentBuilder builder, Params params) throws IOException {
        builder.startObject(NAME);
        builder.startArray("parents");
        for (Parent p : parents) {
            Fusion.Fused f = p.fused();
            builder.startObject().field("_index", f.index()).field("_id", f.id()).field("score", f.score());
            if (!Float.isNaN(f.dense())) {
                builder.field("dense", f.dense());
            }
            if (!Float.isNaN(f.lexical())) {
                builder.field("lexical", f.lexical());
            }
            builder.endObject();
        }
        builder.endArray();
        builder.field("levels", levels);
        builder.field("explain_child", explainChild);
        printBoostAndQueryName(builder);
        builder.endObject();
    }

    @Override
    protected Query doToQuery(QueryShardContext context) {
        Map<String, Parent> here = new HashMap<>();
        String index = context.index().getName();
        for (Parent p : parents) {
            if (p.fused().index().equals(index)) {
                here.put(p.fused().id(), p);
            }
        }
        if (here.isEmpty()) {
            return new MatchNoDocsQuery("no fused parent in index [" + index + "]");
        }
        return new FusedParentsQuery(here, context.bitsetFilter(Queries.newNonNestedFilter()), vector, levels, explainChild);
    }

    @Override
    protected boolean doEquals(FusedParentsQueryBuilder o) {
        return parents.equals(o.parents) && Arrays.equals(vector, o.vector) && levels.equals(o.levels) && explainChild == o.explainChild;
    }

    @Override
    protected int doHashCode() {
        return Objects.hash(parents, Arrays.hashCode(vector), levels, explainChild);
    }

    @Override
    public String getWriteableName() {
        return NAME;
    }
}
