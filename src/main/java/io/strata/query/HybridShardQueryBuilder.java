package io.strata.query;

import org.apache.lucene.search.Query;
import org.opensearch.common.lucene.search.Queries;
import org.opensearch.core.common.io.stream.StreamInput;
import org.opensearch.core.common.io.stream.StreamOutput;
import org.opensearch.core.xcontent.XContentBuilder;
import org.opensearch.core.xcontent.XContentParser;
import org.opensearch.index.query.AbstractQueryBuilder;
import org.opensearch.index.query.QueryBuilder;
import org.opensearch.index.query.QueryRewriteContext;
import org.opensearch.index.query.QueryShardContext;
import org.opensearch.index.query.QueryShardException;

import java.io.IOException;
import java.util.Arrays;
import java.util.Locale;
import java.util.Objects;

/**
 * The hybrid form of {@code multi_granular} for a request of one shard in all (on any node) that nothing
 * restricts ({@link QueryPlanner#oneLocalShard}): the lexical window, searched while the question was embedded, comes with
 * the query; the shard runs the dense window's graph search itself and fuses both ({@link HybridShardQuery}). One shard's
 * windows are the global ones, so the parents and scores are the planned path's (a dense sub-search and a lookup by
 * {@code _id}), without the sub-search and the fetch of its window's ids (bin/strata-bench query: ~4 ms of 100 stored-field
 * reads). Internal: refused when written by users.
 */
public final class HybridShardQueryBuilder extends AbstractQueryBuilder<HybridShardQueryBuilder> {
    public static final String NAME = "strata_hybrid_shard";

    /** This shard's dense window: its {@code k} is the window. */
    private final DenseParentsQueryBuilder dense;
    /** The lexical window, best first: each parent's {@code _seq_no} on this shard, and its score. */
    private final long[] lexicalSeqNos;
    private final float[] lexicalScores;
    private final Fusion fusion;
    private final int k;
    private final String lexicalText;

    HybridShardQueryBuilder(DenseParentsQueryBuilder dense, long[] lexicalSeqNos, float[] lexicalScores, Fusion fusion, int k,
                            String lexicalText) {
        if (lexicalSeqNos.length != lexicalScores.length) {
            throw new IllegalArgumentException("one score per lexical parent");
        }
        this.dense = dense;
        this.lexicalSeqNos = lexicalSeqNos.clone();
        this.lexicalScores = lexicalScores.clone();
        this.fusion = fusion;
        this.k = k;
        this.lexicalText = lexicalText;
    }

    public HybridShardQueryBuilder(StreamInput in) throws IOException {
        super(in);
        this.dense = new DenseParentsQueryBuilder(in);
        this.lexicalSeqNos = in.readLongArray();
        this.lexicalScores = in.readFloatArray();
        this.fusion = new Fusion(in);
        this.k = in.readVInt();
        this.lexicalText = in.readString();
    }

    @Override
    protected void doWriteTo(StreamOutput out) throws IOException {
        dense.writeTo(out);
        out.writeLongArray(lexicalSeqNos);
        out.writeFloatArray(lexicalScores);
        fusion.writeTo(out);
        out.writeVInt(k);
        out.writeString(lexicalText);
    }

    public static HybridShardQueryBuilder fromXContent(XContentParser parser) {
        throw new IllegalArgumentException("[" + NAME + "] is internal to [" + MultiGranularQueryBuilder.NAME + "]; use ["
            + MultiGranularQueryBuilder.NAME + "] with [query_text]");
    }

    @Override
    protected void doXContent(XContentBuilder builder, Params params) throws IOException {
        builder.startObject(NAME);
        builder.field("k", k);
        builder.field("dense", dense);
        builder.field("lexical_window", lexicalSeqNos.length);
        builder.field("fusion", fusion);
        printBoostAndQueryName(builder);
        builder.endObject();
    }

    @Override
    protected QueryBuilder doRewrite(QueryRewriteContext context) throws IOException {
        QueryBuilder rewritten = dense.rewrite(context);
        return rewritten == dense ? this
            : new HybridShardQueryBuilder((DenseParentsQueryBuilder) rewritten, lexicalSeqNos, lexicalScores, fusion, k, lexicalText).boost(boost)
                .queryName(queryName);
    }

    @Override
    protected Query doToQuery(QueryShardContext context) throws IOException {
        if (!(dense.toQuery(context) instanceof MultiGranularQuery graph)) {
            throw new QueryShardException(context, String.format(Locale.ROOT, "[%s] the dense side of [%s] did not build its graph "
                + "search on index [%s]", MultiGranularQueryBuilder.NAME, NAME, context.index().getName()));
        }
        return new HybridShardQuery(graph, lexicalSeqNos, lexicalScores, fusion, k, context.bitsetFilter(Queries.newNonNestedFilter()),
            LexicalForm.textAndHeader("", lexicalText).toQuery(context));
    }

    @Override
    protected boolean doEquals(HybridShardQueryBuilder o) {
        return dense.equals(o.dense) && Arrays.equals(lexicalSeqNos, o.lexicalSeqNos) && Arrays.equals(lexicalScores, o.lexicalScores)
            && fusion.equals(o.fusion) && k == o.k
            && lexicalText.equals(o.lexicalText);
    }

    @Override
    protected int doHashCode() {
        return Objects.hash(dense, Arrays.hashCode(lexicalSeqNos), Arrays.hashCode(lexicalScores), fusion, k, lexicalText);
    }

    @Override
    public String getWriteableName() {
        return NAME;
    }
}
