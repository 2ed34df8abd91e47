package io.strata.compare;

import io.strata.chunkindex.ChunkDocuments;
import io.strata.transport.ProgressTask;
import org.opensearch.ExceptionsHelper;
import org.opensearch.OpenSearchStatusException;
import org.opensearch.action.search.SearchRequest;
import org.opensearch.action.search.SearchResponse;
import org.opensearch.action.support.ContextPreservingActionListener;
import org.opensearch.common.util.concurrent.ThreadContext;
import org.opensearch.core.action.ActionListener;
import org.opensearch.core.rest.RestStatus;
import org.opensearch.core.tasks.TaskCancelledException;
import org.opensearch.core.tasks.TaskId;
import org.opensearch.search.SearchHit;
import org.opensearch.search.builder.SearchSourceBuilder;
import org.opensearch.transport.client.Client;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * The searches of one {@code _compare}: every question on both sides, as the caller (the thread context it runs in),
 * as child tasks of the compare task, each with the request's timeout, at most {@value #IN_FLIGHT} at a time. The two
 * sides take turns question by question, so a cancel or a failure stops both at the same point. One failed search fails
 * the whole comparison (no partial result).
 */
final class CompareRun {
    /** Searches in flight: enough to overlap one side's embedding with the other's search, little next to users' searches. */
    static final int IN_FLIGHT = 4;
    /** One shard copy per shard for every question, so a run repeats on the same copies. */
    static final String PREFERENCE = "strata-compare";
    /** The search-stats group of the questions' searches ({@code _stats/search?groups=strata_compare}). */
    static final String STATS_GROUP = "strata_compare";

    /** A parent in a side's ranking. */
    record Hit(String id, String sourceId, int start, int end, float score) {}

    private final Client client;
    private final TaskId parent;
    private final ProgressTask task;
    private final CompareRequest request;
    private final String[] names;
    private final QueryTemplate template;
    private final List<List<List<Hit>>> rankings = new ArrayList<>(); // [side][question]
    private final AtomicInteger next = new AtomicInteger();
    private final AtomicInteger done = new AtomicInteger();
    private final AtomicBoolean finished = new AtomicBoolean();
    private final int total;
    /** The caller's thread context, restored for each next search whatever thread the last one answered on. */
    private final Supplier<ThreadContext.StoredContext> callerContext;

    CompareRun(Client client, TaskId parent, ProgressTask task, CompareRequest request, String[] names, QueryTemplate template) {
        this.client = client;
        this.parent = parent;
        this.task = task;
        this.request = request;
        this.names = names;
        this.template = template;
        this.total = 2 * request.questions().size();
        this.callerContext = client.threadPool().getThreadContext().newRestorableContext(false);
        for (int side = 0; side < 2; side++) {
            List<List<Hit>> slots = new ArrayList<>();
            for (int q = 0; q < request.questions().size(); q++) {
                slots.add(null);
            }
            rankings.add(slots);
        }
        if (task != null) {
            task.progress(() -> Map.of("questions", request.questions().size(), "searches_done", done.get(), "searches_total", total));
        }
    }

    /** Runs every search; {@code listener} gets the rankings [side][question], or the first failure. */
    void start(ActionListener<List<List<List<Hit>>>> listener) {
        for (int i = 0; i < Math.min(IN_FLIGHT, total); i++) {
            launch(listener);
        }
    }

    private void launch(ActionListener<List<List<List<Hit>>>> listener) {
        int job = next.getAndIncrement();
        if (job >= total || finished.get()) {
            return;
        }
        if (task != null && task.isCancelled()) {
            fail(listener, new TaskCancelledException("[" + CompareRequest.OWNER + "] cancelled: " + task.getReasonCancelled()));
            return;
        }
        int q = job / 2;
        int side = job % 2;
        SearchRequest search;
        try {
            search = search(names[side], q);
        } catch (RuntimeException e) {
            fail(listener, e);
            return;
        }
        client.search(search, new ContextPreservingActionListener<>(callerContext, ActionListener.wrap(response -> {
            if (response.getFailedShards() > 0 || response.isTimedOut()) {
                boolean timedOut = response.isTimedOut() || response.getShardFailures().length == 0;
                fail(listener, failure(side, q, timedOut ? "timed out after [" + request.timeout() + "]; raise [timeout]"
                    : "failed on [" + response.getFailedShards() + "] shards: " + response.getShardFailures()[0].reason(),
                    timedOut ? RestStatus.GATEWAY_TIMEOUT : response.getShardFailures()[0].status(), null));
                return;
            }
            rankings.get(side).set(q, hits(response));
            if (done.incrementAndGet() == total) {
                if (finished.compareAndSet(false, true)) {
                    listener.onResponse(rankings);
                }
            } else {
                launch(listener);
            }
        }, e -> fail(listener, failure(side, q, e.getMessage(), ExceptionsHelper.status(e), e)))));
    }

    private SearchRequest search(String index, int q) {
        SearchSourceBuilder source = new SearchSourceBuilder().query(template.build(request.questions().get(q).question()))
            .size(request.k()).fetchSource(new String[] { ChunkDocuments.SOURCE_ID, ChunkDocuments.START, ChunkDocuments.END }, null)
            .trackTotalHits(false).timeout(request.timeout()).stats(List.of(STATS_GROUP));
        SearchRequest search = new SearchRequest(index).source(source).allowPartialSearchResults(false).preference(PREFERENCE);
        search.setCancelAfterTimeInterval(request.timeout());
        if (parent != null) {
            search.setParentTask(parent);
        }
        return search;
    }

    private static List<Hit> hits(SearchResponse response) {
        List<Hit> out = new ArrayList<>();
        for (SearchHit hit : response.getHits().getHits()) {
            Map<String, Object> source = hit.getSourceAsMap();
            out.add(new Hit(hit.getId(), String.valueOf(source.get(ChunkDocuments.SOURCE_ID)), offset(source.get(ChunkDocuments.START)),
                offset(source.get(ChunkDocuments.END)), hit.getScore()));
        }
        return out;
    }

    private static int offset(Object v) {
        return v instanceof Number n ? n.intValue() : -1;
    }

    private OpenSearchStatusException failure(int side, int q, String reason, RestStatus status, Exception cause) {
        return new OpenSearchStatusException(String.format(Locale.ROOT, "[%s] the search of [questions[%d]] on [%s] [%s] failed, so "
            + "nothing is compared: %s", CompareRequest.OWNER, q, side == 0 ? "a" : "b", names[side], reason),
            status, cause);
    }

    private void fail(ActionListener<?> listener, Exception e) {
        if (finished.compareAndSet(false, true)) {
            listener.onFailure(e);
        }
    }
}
