package io.strata.chunkindex.store;

import io.strata.chunkindex.ChunkDocuments;
import io.strata.chunkindex.ChunkKey;
import io.strata.chunkindex.ChunkWriteException;

import org.opensearch.core.action.ActionListener;
import org.opensearch.core.index.shard.ShardId;
import org.opensearch.index.engine.VersionConflictEngineException;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.IntConsumer;
import java.util.function.IntFunction;

/**
 * Ordered, idempotent chunk writes: the chunks of one source document are written <em>after</em> the source write, every
 * chunk document versioned with {@code 2 × } the source operation's {@code _seq_no} ({@code version_type: external_gte}; the
 * odd version in between is a repair's, below), so that the
 * chunks of the newest source version win however the writers of several versions interleave — without reading the chunk
 * shards before writing (no realtime read of the chunks just written, no refresh per bulk).
 *
 * <p><b>The protocol.</b> A writer of version {@code V} with {@code n} chunks (ids {@code <src>:0 … <src>:n-1}):
 * <ol>
 *   <li>writes ids {@code 1 … n-1} at {@code V} (bulk slices, in order);</li>
 *   <li>then id {@code 0}, the <b>commit</b>, at {@code V};</li>
 *   <li>then <b>sweeps</b>: deletes, at {@code V}, id {@code n} (a tombstone if absent), and while a window deleted
 *       something the ids after it, window by window ({@link #sweep}: 1, 2, 4, … 64 ids, and 1 after a window found in part). Blind deletes, not a read then deletes: no read of the chunk index is needed,
 *       so none can miss chunks not yet refreshed (a caller with document- or field-level security on the chunk index only
 *       gets non-realtime reads).</li>
 * </ol>
 * A version conflict on any write of steps 1–2 means a newer version is stored: the writer is <b>superseded</b>, writes no
 * further, deletes at {@code V} what it wrote (external deletes only apply where the stored version is not newer, so
 * the rollback never removes the newer writer's chunks), and sweeps from the first id it did not try to write: its deletes
 * may have cut an older version's chunks short, and a sweep stops at the first window that deletes nothing. Conflicts in a
 * sweep are a newer writer's documents: left alone, and counted as found (the sweep goes on).
 * Deleting a source document's chunks ({@code n = 0}, or a source delete with the delete's {@code _seq_no}) tombstones id 0
 * first — a conflict there means a newer writer committed, and nothing is done — then sweeps from id 1.
 *
 * <p><b>Why the newest version wins</b> (W of version {@code V}, any older writer L of version {@code v < V}):
 * <ul>
 *   <li>every write of W applies (nothing stored is newer), so W's ids {@code 0 … n-1} end at {@code V} unless a still
 *       newer writer supersedes W;</li>
 *   <li>a write of L to an id that W wrote before it conflicts, and L rolls back; one that lands before W's write to the
 *       same id is overwritten by it;</li>
 *   <li>a write of L to an id {@code ≥ n} that lands after W's sweep began comes after W's commit, and L commits only
 *       after all its other writes, so L's commit comes after W's commit and conflicts (W's id 0 at {@code V}, or W's
 *       tombstone of id 0 when W deletes): L rolls back, removing that write too;</li>
 *   <li>what else lies at ids {@code ≥ n} when W's sweep begins is the chunks of writers that committed before W, ids
 *       {@code 0 … m-1} each, less what sweeps and rollbacks deleted. Every deleter sweeps on past the ids it deleted
 *       until a window deletes nothing, so the first such chunk past a deleted id is deleted by the deleter of that id,
 *       and W's delete of id {@code n} deletes the chunk there or meets such a gap;</li>
 *   <li>W's tombstone of id {@code n} makes a late write of L to the first id past W's chunks conflict at once.</li>
 * </ul>
 * Equal versions (the same source operation written twice, e.g. a retried repair) write the same chunks and both apply.
 *
 * <p><b>Repairs.</b> A chunk deleted or rewritten by hand without {@code version_type=external_gte} (a {@code DELETE} of a
 * chunk document, a {@code _delete_by_query}) gets the next internal version, {@code 2s + 1} for chunks of operation
 * {@code s}, which blocks the rewrite of that same operation's chunks at {@code 2s}. {@code _reconcile} then rewrites them
 * at {@link #repairing() 2s + 1}: it wins over that one hand edit and still loses to every newer operation of the
 * document ({@code s' ≥ s + 1}, so {@code 2s' ≥ 2s + 2}). Versions further above (several hand edits, internal versions
 * of a chunk index written before format 3) are reported by {@link #foreignVersions}. Chunk indices written with the bare
 * {@code _seq_no} as version need no migration: {@code s ≤ 2s}.
 *
 * <p><b>Limits.</b> A tombstone blocks older versions for {@code index.gc_deletes} of the chunk index (60 s by default);
 * an older writer delayed longer than that after a newer <em>delete</em> (every id tombstoned, none live) can write its
 * chunks for a source document that is gone — {@code _reconcile} removes them. A writer that dies mid-protocol (its node
 * killed) can leave a partial set; its source write stands, so {@code _reconcile} rewrites it. One that dies mid-sweep
 * leaves an older version's chunks past a gap of tombstones, where later sweeps stop: chunks whose ordinal is at or
 * beyond the document's {@code parents}, which {@code _reconcile} deletes as duplicates. A write that fails for another
 * reason (e.g. a rejection) removes every chunk of the document at {@code V} (only what it wrote, when a newer version
 * committed meanwhile) and fails: the caller is told, and {@code _reconcile} rewrites the chunks once the cause is
 * fixed. Versions are the source index's sequence numbers, so a
 * chunk index serves one incarnation of one concrete source index ({@code ChunkIndexRegistry}), and the chunks of a
 * {@link ChunkKey} — an {@code _id} on one shard — since sequence numbers count one shard's operations.
 */
public final class ChunkCommit {
    /** How a write or delete ended. */
    public enum Result {
        /** This version's chunks are in place (or, for a delete, none is left). */
        DONE,
        /** A newer version is stored; what this writer wrote was removed. */
        SUPERSEDED
    }

    /**
     * The error for chunks found superseded while their source document is still at the version written: their versions
     * did not come from this protocol.
     */
    public static ChunkWriteException foreignVersions(String target, String index, String id, long seqNo) {
        return new ChunkWriteException(String.format(Locale.ROOT,
            "[%s] holds chunks of [%s][%s] with a version above the document's _seq_no [%d]: they were written outside Strata's "
                + "versioned chunk writes (by hand without version_type=external_gte, more than once, or by Strata before chunk index "
                + "format 3), and versioned writes of this document lose to them; delete the chunk index and run _reconcile to rewrite "
                + "it", target, index, id, seqNo),
            new VersionConflictEngineException(new ShardId(target, "_na_", 0), ChunkDocuments.chunkId(id, 0), "a newer chunk version"));
    }

    /** The most consecutive ids one window of a sweep covers. */
    static final int PROBE = 64;
    /**
     * How much a sweep's window grows after a window that found every id it deleted: doubling, so the absent ids a sweep
     * tombstones stay below the chunks it found, plus one.
     */
    static final int GROWTH = 2;

    private final VersionedChunks store;
    private final Slicing slicing;
    /** 0 for writes of a source operation, 1 for repairs ({@link #repairing()}). */
    private final long offset;

    public ChunkCommit(VersionedChunks store, Slicing slicing) {
        this(store, slicing, 0);
    }

    private ChunkCommit(VersionedChunks store, Slicing slicing, long offset) {
        this.store = store;
        this.slicing = slicing;
        this.offset = offset;
    }

    /** The same protocol at the repair version {@code 2s + 1} of source operation {@code s} (see the class comment). */
    public ChunkCommit repairing() {
        return new ChunkCommit(store, slicing, 1);
    }

    /** The chunk version of source operation {@code seqNo} (a repair's: one above). */
    public static long versionOf(long seqNo) {
        return Math.multiplyExact(seqNo, 2L);
    }

    /**
     * Makes the chunks of {@code key} in {@code target} documents {@code 0 … n-1} (document {@code i} is
     * {@code docAt.apply(i)}, built once, as its slice is sent), for source operation {@code seqNo}.
     */
    public void write(String target, ChunkKey key, long seqNo, int n, IntFunction<Map<String, Object>> docAt,
                      ActionListener<Result> listener) {
        write(target, key, seqNo, n, docAt, k -> {}, listener);
    }

    /** As {@link #write}, telling {@code written} how many documents each slice (and the commit) wrote. */
    public void write(String target, ChunkKey key, long seqNo, int n, IntFunction<Map<String, Object>> docAt,
                      IntConsumer written, ActionListener<Result> listener) {
        if (n == 0) {
            delete(target, key, seqNo, listener);
            return;
        }
        new Writer(target, key, versionOf(seqNo) + offset, n, docAt, written, listener).writeFrom(1);
    }

    /**
     * Whether the chunks of {@code key} are those of source operation {@code seqNo} (or a newer one): its commit, id 0,
     * stored at that operation's version or above in {@code target} (null: the document has no chunks), and absent from
     * every other of {@code indices}. One realtime read of id 0 per index: the commit is written after ids {@code 1 … n-1}
     * and a writer that fails before it removes what it wrote, so a current commit means a complete set.
     */
    public void inStep(List<String> indices, String target, ChunkKey key, long seqNo, ActionListener<Boolean> listener) {
        List<String> all = new ArrayList<>(indices);
        if (target != null && !all.contains(target)) {
            all.add(target);
        }
        store.versions(all, key.chunkId(0), ActionListener.map(listener, versions -> {
            for (String index : all) {
                Long version = versions.get(index);
                boolean ok = index.equals(target) ? version != null && version >= versionOf(seqNo) : version == null;
                if (!ok) {
                    return false;
                }
            }
            return true;
        }));
    }

    /** Removes every chunk of {@code key} from {@code target} for source operation {@code seqNo} (id 0 first). */
    public void delete(String target, ChunkKey key, long seqNo, ActionListener<Result> listener) {
        deleteAt(target, key, versionOf(seqNo) + offset, listener);
    }

    private void deleteAt(String target, ChunkKey key, long version, ActionListener<Result> listener) {
        store.delete(target, List.of(key.chunkId(0)), version, ActionListener.wrap(results -> {
            VersionedChunks.ItemResult commit = results.get(0);
            switch (commit.outcome()) {
                case CONFLICT -> listener.onResponse(Result.SUPERSEDED);
                case FAILED -> listener.onFailure(commit.failure());
                case APPLIED -> sweep(target, key, 1, version, ActionListener.map(listener, v -> Result.DONE));
            }
        }, listener::onFailure));
    }

    /**
     * The sweep: deletes at {@code version} ids {@code from, from+1, …} of {@code key} window by window while a window
     * deleted something, blind: what each delete answers (deleted, absent, or a newer version there) says whether chunks go
     * on, so no read is needed — a read would have to be realtime to see chunks not yet refreshed, and the security plugin
     * makes every read of a caller with document- or field-level security on the chunk index non-realtime. Every delete of
     * an absent id leaves a tombstone ({@code index.gc_deletes}), so the windows follow what was found: id {@code from}
     * alone first (a rewrite of the same count, the most common, adds one tombstone), {@link #GROWTH} times as many after a
     * window found in full (up to {@link #PROBE}), and one id after a window found in part (older chunks are consecutive
     * ids, so they ended there; the one id confirms it). Conflicts are a newer writer's documents, left alone.
     */
    private void sweep(String target, ChunkKey key, int from, long version, ActionListener<Void> listener) {
        sweep(target, key, from, 1, version, listener);
    }

    private void sweep(String target, ChunkKey key, int from, int size, long version, ActionListener<Void> listener) {
        deleteWindow(target, key, from, size, version, ActionListener.wrap(found -> {
            if (found == 0) {
                listener.onResponse(null);
            } else {
                sweep(target, key, from + size, found == size ? Math.min(PROBE, size * GROWTH) : 1, version, listener);
            }
        }, listener::onFailure));
    }

    /** Deletes ids {@code [from, to)} at {@code version} whatever they hold, {@link #PROBE} at a time. */
    private void deleteRange(String target, ChunkKey key, int from, int to, long version, ActionListener<Void> listener) {
        if (from >= to) {
            listener.onResponse(null);
            return;
        }
        int size = Math.min(PROBE, to - from);
        deleteWindow(target, key, from, size, version, ActionListener.wrap(
            found -> deleteRange(target, key, from + size, to, version, listener), listener::onFailure));
    }

    /** Deletes ids {@code [from, from+size)} at {@code version}: how many were found (deleted, or a newer version there). */
    private void deleteWindow(String target, ChunkKey key, int from, int size, long version, ActionListener<Integer> listener) {
        List<String> window = new ArrayList<>(size);
        for (int i = from; i < from + size; i++) {
            window.add(key.chunkId(i));
        }
        store.delete(target, window, version, ActionListener.wrap(results -> {
            Exception failed = firstFailure(results);
            if (failed != null) {
                listener.onFailure(failed);
            } else {
                listener.onResponse((int) results.stream().filter(VersionedChunks.ItemResult::found).count());
            }
        }, listener::onFailure));
    }

    private static Exception firstFailure(List<VersionedChunks.ItemResult> results) {
        for (VersionedChunks.ItemResult r : results) {
            if (r.outcome() == VersionedChunks.Outcome.FAILED) {
                return r.failure();
            }
        }
        return null;
    }

    /** One write: its progress and what it wrote, for a rollback. */
    private final class Writer {
        private final String target;
        private final ChunkKey key;
        private final long version;
        private final int n;
        private final IntFunction<Map<String, Object>> docAt;
        private final IntConsumer progress;
        private final ActionListener<Result> listener;
        private final List<String> written = new ArrayList<>();
        /** The first id not sent yet: a rollback sweeps from there. */
        private int tried = 1;

        Writer(String target, ChunkKey key, long version, int n, IntFunction<Map<String, Object>> docAt,
               IntConsumer progress, ActionListener<Result> listener) {
            this.target = target;
            this.key = key;
            this.version = version;
            this.n = n;
            this.docAt = docAt;
            this.progress = progress;
            this.listener = listener;
        }

        /** Step 1: ids {@code from … n-1}, a bulk slice at a time; then the commit. */
        void writeFrom(int from) {
            if (from >= n) {
                commit();
                return;
            }
            List<Map.Entry<String, Map<String, Object>>> slice = new ArrayList<>();
            long bytes = 0;
            int end = from;
            try {
                while (end < n && !slicing.bulkFull(slice.size(), bytes)) {
                    Map<String, Object> doc = docAt.apply(end);
                    bytes += ChunkDocuments.estimatedBytes(doc);
                    slice.add(Map.entry(key.chunkId(end), doc));
                    end++;
                }
            } catch (Exception e) {
                abandon(e);
                return;
            }
            int next = end;
            tried = next;
            store.index(target, slice, version, ActionListener.wrap(results -> {
                boolean superseded = false;
                Exception failed = null;
                for (VersionedChunks.ItemResult r : results) {
                    switch (r.outcome()) {
                        case APPLIED -> written.add(r.id());
                        case CONFLICT -> superseded = true;
                        case FAILED -> failed = failed == null ? r.failure() : failed;
                    }
                }
                if (failed != null) {
                    abandon(failed);
                } else if (superseded) {
                    rollback();
                } else {
                    progress.accept(results.size());
                    writeFrom(next);
                }
            }, this::abandon));
        }

        /** Step 2: id 0 at {@code version}; a conflict means a newer writer committed first. */
        void commit() {
            Map<String, Object> first;
            try {
                first = docAt.apply(0);
            } catch (Exception e) {
                abandon(e);
                return;
            }
            store.index(target, List.of(Map.entry(key.chunkId(0), first)), version, ActionListener.wrap(results -> {
                VersionedChunks.ItemResult r = results.get(0);
                switch (r.outcome()) {
                    case APPLIED -> {
                        progress.accept(1);
                        sweep(target, key, n, version, ActionListener.wrap(v -> listener.onResponse(Result.DONE), listener::onFailure));
                    }
                    case CONFLICT -> rollback();
                    case FAILED -> abandon(r.failure());
                }
            }, this::abandon));
        }

        /** Superseded: removes what this writer wrote, at its own version (a newer writer's documents stay). */
        void rollback() {
            undo(ActionListener.wrap(v -> listener.onResponse(Result.SUPERSEDED), listener::onFailure));
        }

        /**
         * Deletes what this writer wrote, then sweeps from the first id it did not try: those deletes may have cut an older
         * version's chunks short, leaving a gap where the newest writer's sweep stops.
         */
        void undo(ActionListener<Void> done) {
            if (written.isEmpty()) {
                done.onResponse(null); // it deleted nothing: no gap
                return;
            }
            store.delete(target, List.copyOf(written), version, ActionListener.wrap(results -> {
                Exception failed = firstFailure(results);
                if (failed != null) {
                    done.onFailure(failed);
                } else {
                    sweep(target, key, tried, version, done);
                }
            }, done::onFailure));
        }

        /**
         * A write failed for another reason than a newer version: leaves no mix of versions behind — every chunk of the
         * document deleted at this version, or, when a newer version committed meanwhile, what this writer wrote — and fails
         * with the cause.
         */
        void abandon(Exception cause) {
            ActionListener<Void> fail = ActionListener.wrap(v -> listener.onFailure(cause), e -> {
                cause.addSuppressed(e);
                listener.onFailure(cause);
            });
            store.delete(target, List.of(key.chunkId(0)), version, ActionListener.wrap(results -> {
                VersionedChunks.ItemResult commit = results.get(0);
                switch (commit.outcome()) {
                    case CONFLICT -> undo(fail);
                    case FAILED -> fail.onFailure(commit.failure());
                    // every id it tried (its own, or an older version's where its write failed), then on as a sweep
                    case APPLIED -> deleteRange(target, key, 1, tried, version, ActionListener.wrap(
                        v -> sweep(target, key, tried, version, fail), fail::onFailure));
                }
            }, fail::onFailure));
        }
    }
}
