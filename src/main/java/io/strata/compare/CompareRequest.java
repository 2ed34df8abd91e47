package io.strata.compare;

import io.strata.chunking.ConfigMap;
import io.strata.transport.ProgressTask;
import org.opensearch.action.ActionRequest;
import org.opensearch.action.ActionRequestValidationException;
import org.opensearch.action.IndicesRequest;
import org.opensearch.action.support.IndicesOptions;
import org.opensearch.common.unit.TimeValue;
import org.opensearch.core.common.io.stream.StreamInput;
import org.opensearch.core.common.io.stream.StreamOutput;
import org.opensearch.core.tasks.TaskId;
import org.opensearch.core.rest.RestStatus;

import java.io.IOException;
import java.util.ArrayList;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Collection;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.IntSupplier;

/**
 * Compare chunk indices {@code a} and {@code b} on the same {@code questions}: each question is searched on both with one
 * {@code multi_granular} query ({@code query}: its options besides the text and {@code k}); see {@link TransportCompareAction}.
 */
public final class CompareRequest extends ActionRequest implements IndicesRequest.Replaceable {
    public static final String OWNER = "_compare";
    static final String USAGE = "[_compare] needs a body: {\"a\": \"<chunk index>\", \"b\": \"<chunk index>\", \"questions\": "
        + "[{\"question\": \"...\", \"source_id\": \"...\", \"span\": [start, end], \"cluster\": \"...\"}], \"k\": 10, "
        + "\"query\": {\"mode\": \"hybrid\"}, \"timeout\": \"30s\"}";
    /** What {@code query} may not hold: each question sets the text, the body sets {@code k}. */
    static final List<String> PER_QUESTION = List.of("query_text", "vector", "match", "k");
    static final int DEFAULT_K = 10;
    static final TimeValue DEFAULT_TIMEOUT = TimeValue.timeValueSeconds(30);

    private String a;
    private String b;
    private final List<CompareQuestion> questions;
    private final int k;
    private final Map<String, Object> query;
    private final TimeValue timeout;

    public CompareRequest(String a, String b, List<CompareQuestion> questions, int k, Map<String, Object> query, TimeValue timeout) {
        this.a = a;
        this.b = b;
        this.questions = List.copyOf(questions);
        this.k = k;
        this.query = query;
        this.timeout = timeout;
    }

    public CompareRequest(StreamInput in) throws IOException {
        super(in);
        this.a = in.readString();
        this.b = in.readString();
        this.questions = in.readList(CompareQuestion::readFrom);
        this.k = in.readVInt();
        this.query = in.readMap();
        this.timeout = in.readTimeValue();
    }

    @Override
    public void writeTo(StreamOutput out) throws IOException {
        super.writeTo(out);
        out.writeString(a);
        out.writeString(b);
        out.writeList(questions);
        out.writeVInt(k);
        out.writeMap(query);
        out.writeTimeValue(timeout);
    }

    /**
     * Reads a body; {@code maxQuestions} is checked before a question is parsed, so an oversized body costs one list length.
     * Every error names its field.
     */
    public static CompareRequest parse(Map<String, Object> body, IntSupplier maxQuestions) {
        ConfigMap config = new ConfigMap(OWNER, "", body).expect(List.of("a", "b", "questions", "k", "query", "timeout"));
        config.rejectUnknown();
        String a = config.requiredString("a", "a chunk index");
        String b = config.requiredString("b", "a chunk index");
        Object raw = config.remove("questions");
        if (!(raw instanceof List<?> list) || list.isEmpty()) {
            throw config.error("questions", "must be a non-empty list of {\"question\", \"source_id\", \"span\"?, \"cluster\"?} "
                + "objects, got [" + (raw instanceof List<?> ? "[]" : raw) + "]");
        }
        checkCount(list.size(), maxQuestions.getAsInt());
        List<CompareQuestion> questions = new ArrayList<>(list.size());
        for (int i = 0; i < list.size(); i++) {
            questions.add(CompareQuestion.parse(list.get(i), OWNER, "questions[" + i + "]"));
        }
        int k = config.intValue("k", DEFAULT_K, 1, Integer.MAX_VALUE);
        Object query = config.remove("query");
        Map<String, Object> options = new LinkedHashMap<>();
        if (query != null) {
            if (!(query instanceof Map<?, ?> m)) {
                throw config.error("query", "must be an object of [multi_granular] options (e.g. {\"mode\": \"dense\"}), got [" + query + "]");
            }
            m.forEach((key, v) -> options.put(String.valueOf(key), v));
        }
        for (String key : PER_QUESTION) {
            if (options.containsKey(key)) {
                throw new ConfigMap(OWNER, "query", new LinkedHashMap<>()).error(key, key.equals("k")
                    ? "is the body's [k]: set it there" : "is set by each question: leave it out of [query]");
            }
        }
        String timeoutText = config.stringValue("timeout", DEFAULT_TIMEOUT.getStringRep());
        TimeValue timeout;
        try {
            timeout = TimeValue.parseTimeValue(timeoutText, "timeout");
        } catch (RuntimeException e) {
            throw config.error("timeout", "must be a time value such as [30s], got [" + timeoutText + "]");
        }
        if (timeout.millis() <= 0) {
            throw config.error("timeout", "must be positive, got [" + timeoutText + "]");
        }
        return new CompareRequest(a, b, questions, k, options, timeout);
    }

    /** A 400 naming the setting when a body holds more questions than the node allows. */
    static void checkCount(int count, int max) {
        if (count > max) {
            throw new IllegalArgumentException(String.format(Locale.ROOT, "[%s] [questions] may hold at most [%d] questions on this "
                + "cluster ([%s]), got [%d]", OWNER, max, CompareLimits.MAX_QUESTIONS.getKey(), count));
        }
    }

    /**
     * A 400 naming the setting when the {@code query} options nest deeper than {@code max} JSON levels (the options object
     * is level 1), counted without recursion before anything parses them.
     */
    static void checkQueryDepth(Map<String, Object> query, int max) {
        Deque<Object> open = new ArrayDeque<>();
        Deque<Integer> depths = new ArrayDeque<>();
        open.push(query);
        depths.push(1);
        while (!open.isEmpty()) {
            Object node = open.pop();
            int depth = depths.pop();
            if (depth > max) {
                throw new IllegalArgumentException(String.format(Locale.ROOT, "[%s] [query] nests deeper than [%d] levels of objects "
                    + "and arrays; the limit is the node setting [%s] (at most %d)", OWNER, max, CompareLimits.MAX_QUERY_DEPTH.getKey(),
                    CompareLimits.QUERY_DEPTH_CEILING));
            }
            Collection<?> children = node instanceof Map<?, ?> m ? m.values() : (Collection<?>) node;
            for (Object child : children) {
                if (child instanceof Map<?, ?> || child instanceof Collection<?>) {
                    open.push(child);
                    depths.push(depth + 1);
                }
            }
        }
    }

    public String a() {
        return a;
    }

    public String b() {
        return b;
    }

    public List<CompareQuestion> questions() {
        return questions;
    }

    public int k() {
        return k;
    }

    /** The {@code multi_granular} options every question's query starts from. */
    public Map<String, Object> query() {
        return query;
    }

    public TimeValue timeout() {
        return timeout;
    }

    /** Both chunk indices: the caller needs read on each (one name when both sides are the same index). */
    @Override
    public String[] indices() {
        return a.equals(b) ? new String[] { a } : new String[] { a, b };
    }

    /**
     * Replaceable so that a security plugin resolves exactly the names this request gives (a plain {@link IndicesRequest}
     * of a plugin is evaluated against every index); the names come back in order, one per name given.
     */
    @Override
    public CompareRequest indices(String... indices) {
        if (indices == null || indices.length != indices().length) {
            throw new org.opensearch.OpenSearchStatusException(String.format(Locale.ROOT, "[%s] needs read on both [a] [%s] and [b] "
                + "[%s], got %s", OWNER, a, b, Arrays.toString(indices)), RestStatus.FORBIDDEN);
        }
        boolean same = a.equals(b);
        this.a = indices[0];
        this.b = same ? indices[0] : indices[1];
        return this;
    }

    @Override
    public IndicesOptions indicesOptions() {
        // each side one index (an alias of one index is fine): no wildcards, no lists
        return IndicesOptions.strictSingleIndexNoExpandForbidClosed();
    }

    /** Cancellable ({@code _tasks/<id>/_cancel}); the questions' searches are its child tasks, and its status the progress. */
    @Override
    public ProgressTask createTask(long id, String type, String action, TaskId parentTaskId, Map<String, String> headers) {
        return new ProgressTask(id, type, action, getDescription(), parentTaskId, headers);
    }

    @Override
    public String getDescription() {
        return String.format(Locale.ROOT, "compare [%s] and [%s] on [%d] questions, k [%d]", a, b, questions.size(), k);
    }

    @Override
    public ActionRequestValidationException validate() {
        return null;
    }
}
