package io.strata.chunkindex.lifecycle;

import io.strata.chunkindex.ChunkDocuments;
import io.strata.chunkindex.ChunkKey;
import io.strata.chunkindex.ChunkWriteException;
import io.strata.chunkindex.SourceSummary;
import io.strata.chunkindex.registry.ChunkIndexRegistry;
import io.strata.chunkindex.setup.WriteChecks;
import io.strata.chunkindex.store.ChunkCommit;
import io.strata.chunkindex.store.ChunkStore;
import io.strata.chunkindex.write.PreparedChunks;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.opensearch.action.DocWriteRequest;
import org.opensearch.action.DocWriteResponse;
import org.opensearch.action.bulk.BulkItemResponse;
import org.opensearch.action.bulk.BulkRequest;
import org.opensearch.action.bulk.BulkResponse;
import org.opensearch.action.index.IndexRequest;
import org.opensearch.action.support.WriteRequest;
import org.opensearch.action.update.UpdateRequest;
import org.opensearch.core.action.ActionListener;
import org.opensearch.core.index.Index;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * The chunk work of one bulk response ({@link ChunkLifecycleFilter}), after the bulk and before the client sees the
 * response: for each stored item, its prepared chunks written, its chunks deleted or re-chunked from what is stored, or
 * its noop checked; an item whose chunks could not follow its source write is answered as a failure of that item.
 */
final class AfterBulk {
    private static final Logger logger = LogManager.getLogger(AfterBulk.class);

    private final LifecycleComponents c;
    private final ChunkLedger ledger;
    private final BulkRequest request;
    private final BulkResponse response;
    private final Consumer<BulkResponse> reply;
    private final Set<String> touched = ConcurrentHashMap.newKeySet();
    /** Items whose chunks could not be kept in step: answered as failures. */
    private final Map<Integer, Exception> failures = new ConcurrentHashMap<>();

    AfterBulk(LifecycleComponents c, ChunkLedger ledger, BulkRequest request, BulkResponse response, Consumer<BulkResponse> reply) {
        this.c = c;
        this.ledger = ledger;
        this.request = request;
        this.response = response;
        this.reply = reply;
    }

    void run() {
        List<Consumer<ActionListener<Void>>> work = new ArrayList<>();
        for (BulkItemResponse item : response.getItems()) {
            if (item.isFailed() || item.getResponse() == null) {
                continue; // nothing stored: nothing prepared for it is written
            }
            try {
                plan(item, work);
            } catch (Exception e) {
                failures.put(item.getItemId(), chunkFailure(item, null, e));
            }
        }
        Runnable respond = () -> {
            // every prepared document leaves the in-progress report: written, or its source write failed
            ledger.all().forEach(e -> e.chunks().progress().done());
            reply.accept(withChunkFailures());
        };
        if (request.getRefreshPolicy() != WriteRequest.RefreshPolicy.NONE) {
            // a client that asked for its writes to be visible sees the chunks too
            Runnable unrefreshed = respond;
            respond = () -> {
                if (touched.isEmpty()) {
                    unrefreshed.run();
                    return;
                }
                c.store().refresh(new TreeSet<>(touched), ActionListener.wrap(v -> unrefreshed.run(), e -> {
                    logger.warn("refreshing chunk indices " + touched + " failed", e);
                    unrefreshed.run();
                }));
            };
        }
        runAll(work, respond);
    }

    /** The chunk work for one stored item. */
    private void plan(BulkItemResponse item, List<Consumer<ActionListener<Void>>> work) {
        DocWriteResponse written = item.getResponse();
        Index concrete = written.getShardId().getIndex();
        long seqNo = written.getSeqNo();
        // the document the item touched: its _id on the shard it was routed to (seqNo counts that shard's operations)
        ChunkKey key = c.setup().keyOf(concrete.getName(), item.getId(), written.getShardId().id());
        DocWriteRequest<?> sent = request.requests().get(item.getItemId());
        List<ChunkIndexRegistry.Registration> registered = c.setup().registry().ofSource(concrete.getUUID());
        DocWriteResponse.Result result = written.getResult();
        if (result == DocWriteResponse.Result.NOOP) {
            // nothing changed now, but an earlier attempt of the same update may have stored it and then failed on its
            // chunks (a client retrying after a 5xx or a lost connection gets a noop): check, and repair if so
            if (!registered.isEmpty()) {
                List<String> targets = c.setup().registry().namesOf(concrete.getUUID());
                work.add(l -> checkNoop(c, concrete, item.getId(), routingOf(item), targets, ledger.writeChecks(),
                    ActionListener.wrap(repaired -> {
                        if (repaired) {
                            touched.addAll(targets); // refreshed for a request that asked to see its writes
                        }
                        l.onResponse(null);
                    }, e -> l.onFailure(recordFailure(item, null, e)))));
            }
            return;
        }
        // the chunk indices registered to the index, and those this bulk's items of the same document prepared chunks for:
        // the first bulk into a new chunk index registers it only as its chunks are written, after this plan, and an item
        // may follow another of the same document (written, then updated or deleted, as change streams batch them)
        List<String> targets = targetsOf(registered, concrete, sent, item.getId());
        if (result == DocWriteResponse.Result.DELETED || (result == DocWriteResponse.Result.NOT_FOUND && seqNo >= 0)) {
            // not_found: possibly a retried delete whose first attempt removed the source but not its chunks
            for (String target : targets) {
                touched.add(target);
                work.add(l -> c.commit().delete(target, key, seqNo, ActionListener.map(failOn(item, target, l), done -> null)));
            }
            return;
        }
        boolean updated = item.getOpType() == DocWriteRequest.OpType.UPDATE && result != DocWriteResponse.Result.CREATED;
        List<ChunkLedger.Entry> entries = updated
            ? List.of() // an update of a stored document: its pipeline (if any) saw only the partial document
            : entriesOf(sent, item.getId());
        // a pipeline chunked the partial document: the index is chunked even if this node does not know its chunk index yet
        // (registered by a write on another node a moment ago), so the stored document is re-chunked regardless
        List<ChunkLedger.Entry> partial = updated ? entriesOf(sent, item.getId()) : List.of();
        boolean chunkedPartial = !partial.isEmpty();
        partial.forEach(e -> touched.add(e.target()));
        Set<String> covered = new TreeSet<>();
        for (ChunkLedger.Entry entry : entries) {
            String target = c.setup().servingIndex(entry.chunks().writer().targetFor(concrete.getName()));
            covered.add(target);
            touched.add(target);
            work.add(l -> writeEntry(item, concrete, key, seqNo, entry, target, l));
        }
        List<String> rest = new ArrayList<>();
        for (String target : targets) {
            if (!covered.contains(target)) {
                rest.add(target);
            }
        }
        if (rest.isEmpty() && !chunkedPartial) {
            return;
        }
        touched.addAll(rest);
        if (!entries.isEmpty()) {
            // a pipeline chunked it into other chunk indices: the remaining ones hold none of its chunks
            for (String target : rest) {
                work.add(l -> c.commit().delete(target, key, seqNo, ActionListener.map(failOn(item, target, l), done -> null)));
            }
        } else if (item.getOpType() == DocWriteRequest.OpType.UPDATE) {
            // partial document or script: re-chunk the document as stored now (realtime, with its routing)
            work.add(l -> c.store().sourceOf(concrete.getName(), item.getId(), routingOf(item), ActionListener.wrap(stored -> {
                if (stored == null) {
                    l.onResponse(null); // deleted meanwhile: that delete removed its chunks
                } else {
                    rechunk(item, stored, concrete, rest, l);
                }
            }, e -> l.onFailure(recordFailure(item, null, e)))));
        } else {
            // written without chunking into an index with chunk indices (an index request that ran no chunking pipeline,
            // or the inner write of a single _update): brought in step from the source as written
            Map<String, Object> source = StoredTextCheck.sourceOf(sent);
            if (source != null) {
                ChunkStore.StoredSource stored = new ChunkStore.StoredSource(concrete.getName(), item.getId(), routingOf(item), source,
                    seqNo, written.getPrimaryTerm());
                work.add(l -> rechunk(item, stored, concrete, rest, l));
            }
        }
    }

    /** The chunk indices {@code registered} to {@code concrete}, and those this bulk prepared chunks of {@code id} for. */
    private List<String> targetsOf(List<ChunkIndexRegistry.Registration> registered, Index concrete, DocWriteRequest<?> sent,
                                   String id) {
        Set<String> out = new LinkedHashSet<>();
        registered.forEach(r -> out.add(r.chunkIndex().getName()));
        for (ChunkLedger.Entry e : ledger.entriesFor(id)) {
            if (e.index().equals(sent.index()) || e.concreteIndex().equals(concrete.getName())) {
                out.add(c.setup().servingIndex(e.chunks().writer().targetFor(concrete.getName())));
            }
        }
        return List.copyOf(out);
    }

    /** The ledger entries of the request in {@code sent}'s slot: same id, same index as named, one per chunk index. */
    private List<ChunkLedger.Entry> entriesOf(DocWriteRequest<?> sent, String id) {
        List<ChunkLedger.Entry> all = ledger.entriesFor(id);
        if (all.isEmpty()) {
            return all;
        }
        IndexRequest indexed = sent instanceof UpdateRequest update ? (update.docAsUpsert() ? update.doc() : update.upsertRequest())
            : sent instanceof IndexRequest i ? i : null;
        String named = indexed == null || indexed.index() == null ? sent.index() : indexed.index();
        Map<String, ChunkLedger.Entry> byTarget = new LinkedHashMap<>();
        Map<String, Object> source = null;
        for (ChunkLedger.Entry e : all) {
            if (!e.index().equals(named) && !e.index().equals(sent.index())) {
                continue;
            }
            ChunkLedger.Entry seen = byTarget.putIfAbsent(e.target(), e);
            if (seen != null && !seen.chunks().sourceHash().equals(e.chunks().sourceHash())) {
                // the same id written twice in one bulk: the source as stored tells which text its chunks are of
                source = source == null ? StoredTextCheck.sourceOf(indexed) : source;
                Object hash = source != null && source.get(SourceSummary.FIELD) instanceof Map<?, ?> s
                    ? s.get(ChunkDocuments.SOURCE_HASH) : null;
                if (e.chunks().sourceHash().equals(hash)) {
                    byTarget.put(e.target(), e);
                }
            }
        }
        return List.copyOf(byTarget.values());
    }

    /** The prepared chunks of one written item, into the chunk index of its concrete index. */
    private void writeEntry(BulkItemResponse item, Index concrete, ChunkKey key, long seqNo, ChunkLedger.Entry entry,
                            String target, ActionListener<Void> listener) {
        ActionListener<Void> failOn = failOn(item, target, listener);
        PreparedChunks chunks = entry.chunks();
        // the name the pipeline chunked for (an alias once a generation serves it) and the one it resolves to now
        String named = chunks.writer().targetFor(concrete.getName());
        Consumer<ActionListener<Void>> ready = target.equals(c.setup().servingIndex(entry.target())) ? l -> l.onResponse(null)
            // the document landed elsewhere than the pipeline expected (a rollover in between): that index's chunk index
            : l -> c.setup().ensureIndex(target, concrete.getName(), chunks.writer().indexFields(), chunks.model(), chunks.writer().callerContext(
                ActionListener.wrap(v -> ledger.writeChecks().check(target, chunks.writer().callerContext(l)), l::onFailure)));
        ready.accept(ActionListener.wrap(v -> c.setup().register(target, concrete, chunks.writer().callerContext(ActionListener.wrap(
            r -> {
                chunks.progress().stage(io.strata.stats.StrataStats.Stage.WRITING);
                c.commit().write(target, key, seqNo, chunks.count(), chunks.documents(concrete.getName(), item.getId(), routingOf(item)),
                chunks.progress()::written, ActionListener.wrap(result -> {
                    if (result == ChunkCommit.Result.DONE && !named.equals(entry.target())) {
                        retarget(item, concrete, seqNo, named, failOn);
                    } else if (result == ChunkCommit.Result.DONE) {
                        failOn.onResponse(null);
                    } else {
                        checkSuperseded(item, concrete, target, seqNo, failOn);
                    }
                }, failOn::onFailure));
            }, failOn::onFailure))), failOn::onFailure));
    }

    /** The summary of a document that landed in another index than its pipeline expected, pointed at its chunk index. */
    private void retarget(BulkItemResponse item, Index concrete, long seqNo, String target, ActionListener<Void> listener) {
        Map<String, Object> source = StoredTextCheck.sourceOf(request.requests().get(item.getItemId()));
        if (source == null) {
            listener.onResponse(null);
            return;
        }
        ChunkStore.StoredSource written = new ChunkStore.StoredSource(concrete.getName(), item.getId(), routingOf(item), source, seqNo,
            item.getResponse().getPrimaryTerm());
        c.rechunker().retarget(written, target, ActionListener.map(listener, outcome -> null));
    }

    /**
     * A newer version of the document's chunks was found: normal when a newer write of the document exists (it writes
     * its own), an error when the document is still the version written (chunk versions from outside the protocol).
     */
    private void checkSuperseded(BulkItemResponse item, Index concrete, String target, long seqNo, ActionListener<Void> listener) {
        c.store().sourceOf(concrete.getName(), item.getId(), routingOf(item), ActionListener.wrap(now -> {
            if (now != null && now.seqNo() == seqNo) {
                listener.onFailure(ChunkCommit.foreignVersions(target, concrete.getName(), item.getId(), seqNo));
            } else {
                listener.onResponse(null);
            }
        }, listener::onFailure));
    }

    /** The routing the item's document was stored with (a pipeline may have set it). */
    private String routingOf(BulkItemResponse item) {
        DocWriteRequest<?> sent = request.requests().get(item.getItemId());
        if (sent instanceof UpdateRequest update) {
            IndexRequest upsert = update.docAsUpsert() ? update.doc() : update.upsertRequest();
            return upsert != null && upsert.routing() != null ? upsert.routing() : update.routing();
        }
        return sent.routing();
    }

    private void rechunk(BulkItemResponse item, ChunkStore.StoredSource stored, Index concrete, List<String> targets,
                         ActionListener<Void> listener) {
        c.rechunker().rechunk(stored, concrete, targets, ledger.writeChecks(), ActionListener.wrap(
            outcome -> listener.onResponse(null), e -> listener.onFailure(recordFailure(item, null, e))));
    }

    private ActionListener<Void> failOn(BulkItemResponse item, String target, ActionListener<Void> listener) {
        return ActionListener.wrap(listener::onResponse, e -> listener.onFailure(recordFailure(item, target, e)));
    }

    private Exception recordFailure(BulkItemResponse item, String target, Exception cause) {
        Exception failure = chunkFailure(item, target, cause);
        failures.merge(item.getItemId(), failure, (a, b) -> a);
        return failure;
    }

    /** The response with the items of {@link #failures} answered as failures (status from their cause). */
    private BulkResponse withChunkFailures() {
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

    /**
     * After a noop update of {@code id}: its chunks are checked against its summary ({@link ChunkCommit#inStep}) and cut
     * again from the stored text when an earlier attempt of the same update stored it and then failed on its chunks (a
     * client retrying after an error or a lost connection gets a noop). Answers whether it cut them again.
     */
    static void checkNoop(LifecycleComponents c, Index concrete, String id, String routing, List<String> targets, WriteChecks checks,
                          ActionListener<Boolean> listener) {
        c.store().sourceOf(concrete.getName(), id, routing, ActionListener.wrap(stored -> {
            if (stored == null) {
                listener.onResponse(false); // deleted meanwhile: that delete removed its chunks
                return;
            }
            Map<?, ?> summary = stored.source().get(SourceSummary.FIELD) instanceof Map<?, ?> m ? m : null;
            String target = summary != null && summary.get("target_index") instanceof String t
                && !(summary.get("parents") instanceof Number p && p.intValue() == 0) ? c.setup().servingIndex(t) : null;
            c.commit().inStep(targets, target, c.setup().keyOf(concrete.getName(), id, routing), stored.seqNo(), ActionListener.wrap(ok -> {
                if (ok) {
                    listener.onResponse(false);
                } else {
                    c.rechunker().rechunk(stored, concrete, targets, checks, ActionListener.map(listener, outcome -> true));
                }
            }, listener::onFailure));
        }, listener::onFailure));
    }

    /** What the caller is told when a source write stood but its chunks could not follow. */
    static Exception chunkFailure(BulkItemResponse item, String target, Exception cause) {
        DocWriteResponse.Result result = item.getResponse() == null ? null : item.getResponse().getResult();
        boolean deleted = result == DocWriteResponse.Result.DELETED || result == DocWriteResponse.Result.NOT_FOUND;
        String where = target == null ? "its chunks" : "its chunks " + (deleted ? "from" : "to") + " [" + target + "]";
        String what = deleted
            ? String.format(Locale.ROOT, "[%s][%s] was deleted, but deleting %s failed, so they remain", item.getIndex(), item.getId(), where)
            : String.format(Locale.ROOT, "[%s][%s] was written, but writing %s failed, so they are missing or stale", item.getIndex(),
                item.getId(), where);
        return new ChunkWriteException(String.format(Locale.ROOT,
            "%s (POST _plugins/_strata/_reconcile?index=%s fixes them once the cause is fixed, run by a user allowed to write the "
                + "chunk index): %s", what, item.getIndex(), cause.getMessage()), cause);
    }

    /**
     * Runs {@code steps} at once and {@code done} when all have answered. A failed step has recorded its failure on its
     * item (the source write stands; the caller is told what to run once the cause is fixed).
     */
    private static void runAll(List<Consumer<ActionListener<Void>>> steps, Runnable done) {
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
            try {
                step.accept(ActionListener.wrap(v -> one.run(), e -> {
                    logger.debug("keeping chunks in step with a source document failed", e);
                    one.run();
                }));
            } catch (Exception e) {
                logger.warn("keeping chunks in step with a source document failed", e);
                one.run();
            }
        }
    }
}
