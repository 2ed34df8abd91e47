package io.strata.query;

import org.opensearch.core.ParseField;
import org.opensearch.core.common.io.stream.StreamInput;
import org.opensearch.core.common.io.stream.StreamOutput;
import org.opensearch.core.common.io.stream.Writeable;
import org.opensearch.core.xcontent.ObjectParser;
import org.opensearch.core.xcontent.ToXContentFragment;
import org.opensearch.core.xcontent.XContentBuilder;
import org.opensearch.core.xcontent.XContentParser;

import java.io.IOException;
import java.util.Locale;

/**
 * {@code rescore}: full-precision rescoring of the dense side. The graph search collects {@code oversample_factor} times
 * its candidates, and each parent it found is scored again by the exact MAX over its own and its children's float vectors
 * (Lucene's {@code FullPrecisionFloatVectorSimilarityValuesSource}: a quantized field keeps its raw vectors on disk); the
 * best of those are kept. Written {@code "rescore": {"oversample_factor": 3}}, {@code true} (the default factor) or
 * {@code false}; absent, it is on with the default factor where the vector field is quantized ({@code vectors.encoder}
 * {@code sq}) and off on a float field, whose graph scores are already exact.
 *
 * @param enabled          whether the candidates are rescored
 * @param oversampleFactor how many times the candidates the graph search collects (1 without rescoring)
 */
public record Rescore(boolean enabled, double oversampleFactor) implements Writeable, ToXContentFragment {
    /** recall@10 1.000 at 20,000 parents of sq 7 bits, where 2 gave 0.995 and no rescoring 0.844 (bin/strata-bench vectors). */
    public static final double DEFAULT_OVERSAMPLE_FACTOR = 3;
    public static final double MAX_OVERSAMPLE_FACTOR = 10;
    public static final Rescore OFF = new Rescore(false, 1);
    public static final Rescore DEFAULT = new Rescore(true, DEFAULT_OVERSAMPLE_FACTOR);

    public Rescore {
        if (!enabled) {
            oversampleFactor = 1;
        } else if (!(oversampleFactor >= 1 && oversampleFactor <= MAX_OVERSAMPLE_FACTOR)) {
            throw new IllegalArgumentException(String.format(Locale.ROOT, "[%s] [rescore.oversample_factor] must be in [1, %s], got [%s]",
                MultiGranularQueryBuilder.NAME, fmt(MAX_OVERSAMPLE_FACTOR), oversampleFactor));
        }
    }

    /** The parents the graph search collects for {@code candidates} kept: {@code ceil(candidates × factor)}, at most {@code max}. */
    int graphCandidates(int candidates, int max) {
        return enabled ? (int) Math.min(max, Math.ceil(candidates * oversampleFactor)) : candidates;
    }

    /** What a query without {@code rescore} gets on a vector field that is (or is not) quantized. */
    static Rescore auto(boolean quantized) {
        return quantized ? DEFAULT : OFF;
    }

    static final ParseField FIELD = new ParseField("rescore");
    private static final ParseField OVERSAMPLE_FACTOR = new ParseField("oversample_factor");

    private static final class Parsed {
        Double factor;
    }

    private static final ObjectParser<Parsed, Void> PARSER = new ObjectParser<>(FIELD.getPreferredName(), Parsed::new);

    static {
        PARSER.declareDouble((p, v) -> p.factor = v, OVERSAMPLE_FACTOR);
    }

    /** Parses {@code true}, {@code false} or {@code {"oversample_factor": F}}. */
    public static Rescore fromXContent(XContentParser parser) throws IOException {
        if (parser.currentToken() == XContentParser.Token.VALUE_BOOLEAN) {
            return parser.booleanValue() ? DEFAULT : OFF;
        }
        if (parser.currentToken() != XContentParser.Token.START_OBJECT) {
            throw new IllegalArgumentException(allowed("must be true, false or an object, got [" + parser.currentToken() + "]"));
        }
        Parsed p;
        try {
            p = PARSER.apply(parser, null);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(allowed(e.getMessage()), e);
        }
        return new Rescore(true, p.factor == null ? DEFAULT_OVERSAMPLE_FACTOR : p.factor);
    }

    private static String allowed(String problem) {
        return String.format(Locale.ROOT, "[%s] [rescore] %s; allowed: true, false, or {\"oversample_factor\": F} with F in [1, %s] "
            + "(default %s)", MultiGranularQueryBuilder.NAME, problem, fmt(MAX_OVERSAMPLE_FACTOR), fmt(DEFAULT_OVERSAMPLE_FACTOR));
    }

    private static String fmt(double d) {
        return d == Math.rint(d) ? String.valueOf((long) d) : String.valueOf(d);
    }

    public Rescore(StreamInput in) throws IOException {
        this(in.readBoolean(), in.readDouble());
    }

    @Override
    public void writeTo(StreamOutput out) throws IOException {
        out.writeBoolean(enabled);
        out.writeDouble(oversampleFactor);
    }

    /** The value of {@code rescore}: {@code false}, or the object with its factor. */
    @Override
    public XContentBuilder toXContent(XContentBuilder builder, Params params) throws IOException {
        return enabled ? builder.startObject().field(OVERSAMPLE_FACTOR.getPreferredName(), oversampleFactor).endObject()
            : builder.value(false);
    }
}
