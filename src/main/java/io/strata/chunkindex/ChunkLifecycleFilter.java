package io.strata.chunkindex;

import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.opensearch.action.ActionRequest;
import org.opensearch.action.DocWriteRequest;
import org.opensearch.action.bulk.BulkAction;
import org.opensearch.action.bulk.BulkItemResponse;
import org.opensearch.action.bulk.BulkRequest;
import org.opensearch.action.bulk.BulkResponse;
import org.opensearch.action.support.WriteRequest;
import org.opensearch.action.support.ActionFilter;
import org.opensearch.action.support.ActionFilterChain;
import org.opensearch.action.support.ContextPreservingActionListener;
import org.opensearch.cluster.ClusterState;
import org.opensearch.cluster.metadata.IndexMetadata;
import org.opensearch.cluster.service.ClusterService;
import org.opensearch.common.util.concurrent.ThreadContext;
import org.opensearch.core.action.ActionListener;
import org.opensearch.core.action.ActionResponse;
import org.opensearch.tasks.Task;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * Keeps chunk indices in step with their source documents around every bulk request (single-document
 * index and delete requests run as one-item bulks):
 * <ul>
 *   <li>before: puts a {@link ChunkLedger} into the thread context, in which processors record the chunks
 *       they write;</li>
 *   <li>after, before the client sees the response: a source document whose write failed after its chunks
 *       were written gets its chunks repaired to match what is stored (deleted when nothing is); a deleted
 *       source document loses its chunks in every chunk index of its index.</li>
 *   <li>and closes the races between writes and deletes of the same id that run at the same time on different
 *       nodes: a written document whose chunks are not, after its own write, exactly the ones cut from its text (a
 *       concurrent delete removed them between our chunk write and source write, or another version's chunks
 *       landed after ours) gets them rewritten from what is stored; a deleted document that exists again after its
 *       chunks were removed (re-created concurrently) gets them rewritten too. Each side checks after its last write,
 *       so whichever order the two requests' steps interleave in, the side that finishes last sees the drift.</li>
 * </ul>
 * All of it runs in the caller's thread context (restored explicitly, whatever thread answers the bulk), so with the
 * security plugin the chunk writes and deletes are checked against the caller's own permissions. A delete whose chunks
 * the caller may not delete is answered as a failure of that item, with the chunk write's status (e.g. 403) — the
 * source document is gone by then, so the caller learns that its chunks remain instead of getting a silent success.
 */
public final class ChunkLifecycleFilter implements ActionFilter {
    private static final Logger logger = LogManager.getLogger(ChunkLifecycleFilter.class);

    private final Supplier<ThreadContext> threadContext;
    private final Supplier<ClusterService> clusterService;
    private final Supplier<ChunkStore> store;
    private final Supplier<ChunkWriters> writers;
    private volatile ChunkIndices chunkIndices = new ChunkIndices(-1, Map.of());

    /** Suppliers because the node creates action filters before plugin components. */
    public ChunkLifecycleFilter(Supplier<ThreadContext> threadContext, Supplier<ClusterService> clusterService,
                                Supplier<ChunkStore> store, Supplier<ChunkWriters> writers) {
        this.threadContext = threadContext;
        this.clusterService = clusterService;
        this.store = store;
        this.writers = writers;
    }

    @Override
    public int order() {
        return Integer.MAX_VALUE; // after security filters: only requests that are allowed to run
    }

    @Override
    @SuppressWarnings("unchecked")
    public <Request extends ActionRequest, Response extends ActionResponse> void apply(Task task, String action, Request request,
                                                                                       ActionListener<Response> listener,
                                                                                       ActionFilterChain<Request, Response> chain) {
        ThreadContext context = threadContext.get();
        if (!BulkAction.NAME.equals(action) || context == null || context.getTransient(ChunkLedger.TRANSIENT) != null) {
            // not a bulk, or our own chunk writes inside an outer bulk
            chain.proceed(task, action, request, listener);
            return;
        }
        ChunkLedger ledger = new ChunkLedger();
        try (ThreadContext.StoredContext restore = context.newStoredContext(true)) {
            context.putTransient(ChunkLedger.TRANSIENT, ledger);
            // the caller's context (with the ledger) for the chunk work after the bulk, whichever thread answers it
            ActionListener<Response> after = ContextPreservingActionListener.wrapPreservingContext(ActionListener.wrap(
                response -> afterBulk(ledger, ((BulkRequest) request).getRefreshPolicy(), (BulkResponse) response,
                    r -> listener.onResponse((Response) r)),
                listener::onFailure), context);
            chain.proceed(task, action, request, after);
        }
    }

    private void afterBulk(ChunkLedger ledger, WriteRequest.RefreshPolicy refresh, BulkResponse response,
                           Consumer<BulkResponse> reply) {
        List<Consumer<ActionListener<Void>>> work = new ArrayList<>();
        Set<String> touched = new TreeSet<>(ledger.targetIndices());
        List<ChunkLedger.Entry> written = new ArrayList<>();
        // items whose source was deleted but whose chunks could not be: answered as failures (see the class Javadoc)
        Map<Integer, Exception> chunksKept = new ConcurrentHashMap<>();
        for (BulkItemResponse item : response.getItems()) {
            if (item.isFailed()) {
                for (ChunkLedger.Entry entry : ledger.entriesFor(item.getIndex(), item.getId())) {
                    work.add(l -> entry.writer().repair(entry.index(), entry.id(), l));
                }
            } else if (item.getOpType() == DocWriteRequest.OpType.DELETE) {
                for (String chunkIndex : chunkIndicesOf(item.getIndex())) {
                    touched.add(chunkIndex);
                    work.add(l -> store.get().deleteFrom(chunkIndex, item.getId(), 0,
                        ActionListener.wrap(v -> recreated(item.getIndex(), item.getId(), chunkIndex, l), e -> {
                            chunksKept.merge(item.getItemId(), chunksKept(item, chunkIndex, e), (x, y) -> x);
                            l.onFailure(e);
                        })));
                }
            } else {
                written.addAll(ledger.entriesFor(item.getIndex(), item.getId()));
            }
        }
        if (!written.isEmpty()) {
            work.add(l -> checkWritten(written, l));
        }
        Runnable respond = () -> reply.accept(withChunkFailures(response, chunksKept));
        if (refresh != WriteRequest.RefreshPolicy.NONE && !touched.isEmpty()) {
            // a client that asked for its writes to be visible sees the chunks too
            Runnable unrefreshed = respond;
            respond = () -> store.get().refresh(touched, ActionListener.wrap(v -> unrefreshed.run(), e -> {
                logger.warn("refreshing chunk indices " + touched + " failed", e);
                unrefreshed.run();
            }));
        }
        runAll(work, "keeping chunks in step with a source document failed", respond);
    }

    /**
     * Runs {@code steps} at once and {@code done} when all have answered. A failed step is logged: the source write stands,
     * and the drift it leaves is what {@code _reconcile} finds.
     */
    private static void runAll(List<Consumer<ActionListener<Void>>> steps, String failed, Runnable done) {
        if (steps.isEmpty()) {
            done.run();
            return;
        }
        AtomicInteger pending = new AtomicInteger(steps.size());
        Runnable one = () -> {
            if (pending.decrementAndGet() == 0) {
                done.run();
            }
        };
        for (Consumer<ActionListener<Void>> step : steps) {
            step.accept(ActionListener.wrap(v -> one.run(), e -> {
                logger.warn(failed, e);
                one.run();
            }));
        }
    }

    /** Rewrites, from what is stored, the chunks of written documents that are not exactly theirs any more. */
    private void checkWritten(List<ChunkLedger.Entry> written, ActionListener<Void> listener) {
        List<ChunkStore.Expected> expected = written.stream()
            .map(e -> new ChunkStore.Expected(e.writer().targetIndex(), e.id(), e.sourceHash(), e.parents())).toList();
        store.get().unmet(expected, ActionListener.wrap(unmet -> {
            Set<ChunkStore.Expected> drifted = new HashSet<>(unmet);
            List<Consumer<ActionListener<Void>>> repairs = new ArrayList<>();
            for (int i = 0; i < expected.size(); i++) {
                if (drifted.contains(expected.get(i))) {
                    ChunkLedger.Entry e = written.get(i);
                    repairs.add(l -> e.writer().repair(e.index(), e.id(), l));
                }
            }
            if (!repairs.isEmpty()) {
                logger.debug("chunks of {} documents changed under their write (a concurrent write or delete of the same id); "
                    + "rewriting", repairs.size());
            }
            runAll(repairs, "rewriting chunks that changed under their write failed", () -> listener.onResponse(null));
        }, listener::onFailure));
    }

    /**
     * After the chunks of a deleted document were removed: if the document exists again (written concurrently, after our
     * delete), its chunks are rewritten from it by the processor its summary names.
     */
    private void recreated(String index, String id, String chunkIndex, ActionListener<Void> listener) {
        store.get().sourceOf(index, id, ActionListener.wrap(source -> {
            Object summary = source == null ? null : source.get(ChunkWriter.SUMMARY_FIELD);
            ChunkWriters lookup = writers.get();
            if (!(summary instanceof Map<?, ?> s) || !chunkIndex.equals(s.get("target_index")) || lookup == null) {
                listener.onResponse(null);
                return;
            }
            ChunkWriter writer = lookup.resolve(index, s.get("pipeline"), chunkIndex);
            if (writer == null) {
                listener.onResponse(null); // no pipeline writes there any more: _reconcile reports it
                return;
            }
            writer.rewrite(index, id, source, ActionListener.map(listener, written -> null));
        }, listener::onFailure));
    }

    private static Exception chunksKept(BulkItemResponse item, String chunkIndex, Exception cause) {
        return new ChunkWriteException(String.format(Locale.ROOT,
            "[%s][%s] was deleted, but deleting its chunks from [%s] failed, so they remain (POST _plugins/_strata/_reconcile?index=%s "
                + "removes them, run by a user allowed to delete from [%s]): %s", item.getIndex(), item.getId(), chunkIndex,
            item.getIndex(), chunkIndex, cause.getMessage()), cause);
    }

    /** The response with the items of {@code failures} answered as failures (status from their cause). */
    private static BulkResponse withChunkFailures(BulkResponse response, Map<Integer, Exception> failures) {
        if (failures.isEmpty()) {
            return response;
        }
        BulkItemResponse[] items = response.getItems().clone();
        for (int i = 0; i < items.length; i++) {
            Exception failure = failures.get(items[i].getItemId());
            if (failure != null) {
                items[i] = new BulkItemResponse(items[i].getItemId(), items[i].getOpType(),
                    new BulkItemResponse.Failure(items[i].getIndex(), items[i].getId(), failure));
            }
        }
        return new BulkResponse(items, response.getTook().millis(), response.getIngestTookInMillis());
    }

    /** Chunk indices whose mapping names {@code sourceIndex}, from the local cluster state (cached per version). */
    List<String> chunkIndicesOf(String sourceIndex) {
        ClusterState state = clusterService.get().state();
        ChunkIndices current = chunkIndices;
        if (current.version() != state.metadata().version()) {
            Map<String, List<String>> bySource = new HashMap<>();
            for (IndexMetadata index : state.metadata().indices().values()) {
                ChunkIndexMeta meta = ChunkIndexMeta.of(index);
                String source = meta == null ? null : meta.sourceIndex();
                if (source != null) {
                    bySource.computeIfAbsent(source, k -> new ArrayList<>()).add(index.getIndex().getName());
                }
            }
            current = new ChunkIndices(state.metadata().version(), bySource);
            chunkIndices = current;
        }
        return current.bySource().getOrDefault(sourceIndex, List.of());
    }

    private record ChunkIndices(long version, Map<String, List<String>> bySource) {}
}
