package io.strata.compare;

import io.strata.chunking.ConfigMap;
import org.opensearch.core.common.io.stream.StreamInput;
import org.opensearch.core.common.io.stream.StreamOutput;
import org.opensearch.core.common.io.stream.Writeable;

import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * One question of a {@code _compare} (a body's {@code questions[i]}, a line of {@code bin/strata-eval --compare}'s JSONL):
 * its text, the id of the source document that answers it, optionally the answer's {@code [start, end)} character offsets
 * in that document's text, and the cluster it is resampled with (questions of one passage are not independent; default:
 * its source id).
 */
public record CompareQuestion(String question, String sourceId, int spanStart, int spanEnd, String cluster) implements Writeable {
    public static final List<String> KEYS = List.of("question", "source_id", "span", "cluster");
    /** No span: the whole document is relevant. */
    public static final int NO_SPAN = -1;

    public boolean hasSpan() {
        return spanStart != NO_SPAN;
    }

    /**
     * A parent of the chunk index is relevant to this question when it comes from the expected source document and, with
     * a span, its {@code [start, end)} overlaps the span.
     */
    public boolean relevant(String parentSourceId, int start, int end) {
        return sourceId.equals(parentSourceId) && (!hasSpan() || Math.max(start, spanStart) < Math.min(end, spanEnd));
    }

    /**
     * Reads one question object; errors name {@code owner} and the key under {@code prefix} ({@code [_compare]
     * [questions[3].span] …}, or {@code [span] …} for a JSONL line).
     */
    public static CompareQuestion parse(Object value, String owner, String prefix) {
        if (!(value instanceof Map<?, ?> raw)) {
            throw new ConfigMap(owner, "", new LinkedHashMap<>()).error(prefix.isEmpty() ? "question" : prefix,
                "must be an object with [question] and [source_id] (and optionally [span] and [cluster]), got [" + value + "]");
        }
        Map<String, Object> copy = new LinkedHashMap<>();
        raw.forEach((k, v) -> copy.put(String.valueOf(k), v));
        ConfigMap config = new ConfigMap(owner, prefix, copy).expect(KEYS);
        String question = config.requiredString("question", "the question's text");
        String sourceId = config.requiredString("source_id", "the id of the source document that answers it");
        int start = NO_SPAN;
        int end = NO_SPAN;
        Object span = config.remove("span");
        if (span != null) {
            if (!(span instanceof List<?> list) || list.size() != 2 || !isOffset(list.get(0)) || !isOffset(list.get(1))
                || ((Number) list.get(0)).longValue() >= ((Number) list.get(1)).longValue()) {
                throw config.error("span", String.format(Locale.ROOT, "must be [start, end]: two integers with 0 <= start < end "
                    + "(character offsets into the source document's text), got [%s]", span));
            }
            start = ((Number) list.get(0)).intValue();
            end = ((Number) list.get(1)).intValue();
        }
        String cluster = config.stringValue("cluster", sourceId);
        String unknown = config.firstUnknown();
        if (unknown != null) {
            throw config.error(unknown, "is not a field of a question; supported: " + KEYS);
        }
        return new CompareQuestion(question, sourceId, start, end, cluster);
    }

    private static boolean isOffset(Object v) {
        return v instanceof Number n && n.doubleValue() == Math.rint(n.doubleValue()) && n.doubleValue() >= 0
            && n.doubleValue() <= Integer.MAX_VALUE;
    }

    public static CompareQuestion readFrom(StreamInput in) throws IOException {
        return new CompareQuestion(in.readString(), in.readString(), in.readInt(), in.readInt(), in.readString());
    }

    @Override
    public void writeTo(StreamOutput out) throws IOException {
        out.writeString(question);
        out.writeString(sourceId);
        out.writeInt(spanStart);
        out.writeInt(spanEnd);
        out.writeString(cluster);
    }

    /** The question as a body's or a JSONL line's object. */
    public Map<String, Object> asMap() {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("question", question);
        out.put("source_id", sourceId);
        if (hasSpan()) {
            out.put("span", List.of(spanStart, spanEnd));
        }
        out.put("cluster", cluster);
        return out;
    }
}
