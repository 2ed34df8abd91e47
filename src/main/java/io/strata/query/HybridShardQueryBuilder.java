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
 * reads); explained ({@code explain_child}, {@code evidence}) by the shard, which scores the lexical chunks of its k
 * parents instead of a second lexical sub-search. Internal: refused when written by users.
 */
public final class HybridShardQueryBuilder extends AbstractQueryBuilder<HybridShardQueryBuilder> {
    public static final String NAME = "strata_hybrid_shard";

    /** This shard's dense window: its {@code k} is the window. */
    private final DenseParentsQueryBuilder dense;
    /** The lexical window, best first: each parent's {@code _seq_no} on this shard, and its score. */
    private final long[] lexicalSeqNos;
    /**
     * Where the lexical search found each parent, -1 where unknown: the doc of a search of this node's copy of the shard,
     * a hint the shard keeps only where that doc is still the parent's version (see {@link HybridShardQuery}).
     */
    private final int[] lexicalDocHints;
    private final float[] lexicalScores;
    private final Fusion fusion;
    private final int k;
    private final String lexicalText;
    private final boolean explainChild;
    /** Null: no evidence packs. */
    private final Evidence evidence;

    HybridShardQueryBuilder(DenseParentsQueryBuilder dense, long[] lexicalSeqNos, int[] lexicalDocHints, float[] lexicalScores,
                            Fusion fusion, int k, String lexicalText, boolean explainChild, Evidence evidence) {
        if (lexicalSeqNos.length != lexicalScores.length || lexicalSeqNos.length != lexicalDocHints.length) {
            throw new IllegalArgumentException("one score and one doc hint per lexical parent");
        }
        this.dense = dense;
        this.lexicalSeqNos = lexicalSeqNos.clone();
        this.lexicalDocHints = lexicalDocHints.clone();
        this.lexicalScores = lexicalScores.clone();
        this.fusion = fusion;
        this.k = k;
        this.lexicalText = lexicalText;
        this.explainChild = explainChild;
        this.evidence = evidence;
    }

    public HybridShardQueryBuilder(StreamInput in) throws IOException {
        super(in);
        this.dense = new DenseParentsQueryBuilder(in);
        this.lexicalSeqNos = in.readLongArray();
        this.lexicalDocHints = in.readIntArray();
        this.lexicalScores = in.readFloatArray();
        this.fusion = new Fusion(in);
        this.k = in.readVInt();
        this.lexicalText = in.readString();
        this.explainChild = in.readBoolean();
        this.evidence = in.readOptionalWriteable(Evidence::new);
    }

    @Override
    protected void doWriteTo(StreamOutput out) throws IOException {
        dense.writeTo(out);
        out.writeLongArray(lexicalSeqNos);
        out.writeIntArray(lexicalDocHints);
        out.writeFloatArray(lexicalScores);
        fusion.writeTo(out);
        out.writeVInt(k);
        out.writeString(lexicalText);
        out.writeBoolean(explainChild);
        out.writeOptionalWriteable(evidence);
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
        builder.field("explain_child", explainChild);
        if (evidence != null) {
            builder.field("evidence", evidence);
        }
        printBoostAndQueryName(builder);
        builder.endObject();
    }

    @Override
    protected QueryBuilder doRewrite(QueryRewriteContext context) throws IOException {
        QueryBuilder rewritten = dense.rewrite(context);
        return rewritten == dense ? this
            : new HybridShardQueryBuilder((DenseParentsQueryBuilder) rewritten, lexicalSeqNos, lexicalDocHints, lexicalScores, fusion, k,
                lexicalText, explainChild, evidence).boost(boost)
                .queryName(queryName);
    }

    @Override
    protected Query doToQuery(QueryShardContext context) throws IOException {
        if (!(dense.toQuery(context) instanceof MultiGranularQuery graph)) {
            throw new QueryShardException(context, String.format(Locale.ROOT, "[%s] the dense side of [%s] did not build its graph "
                + "search on index [%s]", MultiGranularQueryBuilder.NAME, NAME, context.index().getName()));
        }
        HybridShardQuery.Explaining explaining = null;
        if (explainChild || evidence != null) {
            QueryBuilder children = LexicalForm.childQuery(lexicalText, dense.levels());
            explaining = new HybridShardQuery.Explaining(explainChild, evidence, lexicalText,
                children == null ? null : children.toQuery(context), evidence != null ? evidence.chunks() : 1);
        }
        return new HybridShardQuery(graph, lexicalSeqNos, lexicalDocHints, lexicalScores, fusion, k, context.bitsetFilter(Queries.newNonNestedFilter()),
            LexicalForm.textAndHeader("", lexicalText).toQuery(context), explaining);
    }

    @Override
    protected boolean doEquals(HybridShardQueryBuilder o) {
        return dense.equals(o.dense) && Arrays.equals(lexicalSeqNos, o.lexicalSeqNos)
            && Arrays.equals(lexicalDocHints, o.lexicalDocHints) && Arrays.equals(lexicalScores, o.lexicalScores)
            && fusion.equals(o.fusion) && k == o.k
            && lexicalText.equals(o.lexicalText) && explainChild == o.explainChild && Objects.equals(evidence, o.evidence);
    }

    @Override
    protected int doHashCode() {
        return Objects.hash(dense, Arrays.hashCode(lexicalSeqNos), Arrays.hashCode(lexicalDocHints),
            Arrays.hashCode(lexicalScores), fusion, k, lexicalText, explainChild, evidence);
    }

    @Override
    public String getWriteableName() {
        return NAME;
    }
}
