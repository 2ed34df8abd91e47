package io.strata.query;

import org.opensearch.core.ParseField;
import org.opensearch.core.common.io.stream.StreamInput;
import org.opensearch.core.common.io.stream.StreamOutput;
import org.opensearch.core.common.io.stream.Writeable;
import org.opensearch.core.xcontent.ObjectParser;
import org.opensearch.core.xcontent.ToXContentObject;
import org.opensearch.core.xcontent.XContentBuilder;
import org.opensearch.core.xcontent.XContentParser;

import java.io.IOException;
import java.util.Locale;

/**
 * {@code evidence}: what {@code multi_granular} returns per parent besides its score, as the hit field
 * {@value io.strata.chunkindex.ChunkDocuments#EVIDENCE} — the top {@code chunks} chunks of each side (any counted level,
 * with offsets, raw score and, in the hybrid {@code min_max} fusion, the score normalised as the fusion normalises its
 * side) and the best {@code sentences} sentences of the parent for the query's words (offsets in the source document,
 * scored by Lucene's unified highlighter: BM25 over sentences).
 */
public record Evidence(int chunks, int sentences) implements Writeable, ToXContentObject {
    public static final int DEFAULT_CHUNKS = 3;
    public static final int DEFAULT_SENTENCES = 3;
    public static final int MAX_CHUNKS = 20;
    public static final int MAX_SENTENCES = 10;

    public Evidence {
        if (chunks < 1 || chunks > MAX_CHUNKS) {
            throw new IllegalArgumentException(String.format(Locale.ROOT, "[%s] [evidence.chunks] must be in [1, %d], got [%d]",
                MultiGranularQueryBuilder.NAME, MAX_CHUNKS, chunks));
        }
        if (sentences < 0 || sentences > MAX_SENTENCES) {
            throw new IllegalArgumentException(String.format(Locale.ROOT, "[%s] [evidence.sentences] must be in [0, %d], got [%d]",
                MultiGranularQueryBuilder.NAME, MAX_SENTENCES, sentences));
        }
    }

    private static final ParseField CHUNKS = new ParseField("chunks");
    private static final ParseField SENTENCES = new ParseField("sentences");

    private static final class Parsed {
        Integer chunks;
        Integer sentences;
    }

    private static final ObjectParser<Parsed, Void> PARSER = new ObjectParser<>("evidence", Parsed::new);

    static {
        PARSER.declareInt((p, v) -> p.chunks = v, CHUNKS);
        PARSER.declareInt((p, v) -> p.sentences = v, SENTENCES);
    }

    public static Evidence fromXContent(XContentParser parser) {
        Parsed p;
        try {
            p = PARSER.apply(parser, null);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(String.format(Locale.ROOT, "[%s] [evidence] %s; allowed: [chunks] (1–%d, default %d), "
                + "[sentences] (0–%d, default %d)", MultiGranularQueryBuilder.NAME, e.getMessage(), MAX_CHUNKS, DEFAULT_CHUNKS,
                MAX_SENTENCES, DEFAULT_SENTENCES), e);
        }
        return new Evidence(p.chunks == null ? DEFAULT_CHUNKS : p.chunks, p.sentences == null ? DEFAULT_SENTENCES : p.sentences);
    }

    public Evidence(StreamInput in) throws IOException {
        this(in.readVInt(), in.readVInt());
    }

    @Override
    public void writeTo(StreamOutput out) throws IOException {
        out.writeVInt(chunks);
        out.writeVInt(sentences);
    }

    @Override
    public XContentBuilder toXContent(XContentBuilder builder, Params params) throws IOException {
        return builder.startObject().field(CHUNKS.getPreferredName(), chunks).field(SENTENCES.getPreferredName(), sentences).endObject();
    }
}
