package io.strata.chunkindex.store;

import io.strata.chunkindex.ChunkKey;

import org.opensearch.core.action.ActionListener;
import org.opensearch.test.OpenSearchTestCase;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The commit protocol against a fake chunk index that applies every document operation as a step of its own, in an order
 * the test draws: several writers and deletes of one source document, of different versions, interleaved every way a
 * random schedule finds. Whatever the interleaving, the chunks left are exactly those of the newest version (none when it
 * is a delete). The fake keeps tombstones forever: it models the window of {@code index.gc_deletes}, not what follows.
 */
public class ChunkCommitTests extends OpenSearchTestCase {
    private static final String INDEX = "chunks";
    private static final ChunkKey SOURCE = ChunkKey.home("doc");

    /** A document or a tombstone, with its version. */
    private record Stored(long version, Map<String, Object> source) {
        boolean live() {
            return source != null;
        }
    }

    /** Applies each document operation as one step, run when the test's schedule picks it. */
    private static final class FakeChunks implements VersionedChunks {
        final Map<String, Stored> docs = new HashMap<>();
        final List<Runnable> pending = new ArrayList<>();
        /** Ids whose writes fail (not a conflict): a rejected item. */
        final java.util.Set<String> failing = new java.util.HashSet<>();
        /** Delete operations applied to ids that held no live document: the tombstones a protocol step adds. */
        int tombstonesOfAbsent;

        @Override
        public void index(String index, List<Map.Entry<String, Map<String, Object>>> batch, long version,
                          ActionListener<List<ItemResult>> listener) {
            ItemResult[] results = new ItemResult[batch.size()];
            AtomicInteger left = new AtomicInteger(batch.size());
            for (int i = 0; i < batch.size(); i++) {
                int k = i;
                Map.Entry<String, Map<String, Object>> doc = batch.get(i);
                pending.add(() -> {
                    Stored current = docs.get(doc.getKey());
                    if (failing.contains(doc.getKey())) {
                        results[k] = new ItemResult(doc.getKey(), Outcome.FAILED, new IllegalStateException("rejected"));
                    } else if (current != null && current.version() > version) {
                        results[k] = new ItemResult(doc.getKey(), Outcome.CONFLICT, null);
                    } else {
                        docs.put(doc.getKey(), new Stored(version, doc.getValue()));
                        results[k] = ItemResult.applied(doc.getKey());
                    }
                    if (left.decrementAndGet() == 0) {
                        listener.onResponse(List.of(results));
                    }
                });
            }
        }

        @Override
        public void delete(String index, List<String> ids, long version, ActionListener<List<ItemResult>> listener) {
            ItemResult[] results = new ItemResult[ids.size()];
            AtomicInteger left = new AtomicInteger(ids.size());
            for (int i = 0; i < ids.size(); i++) {
                int k = i;
                String id = ids.get(i);
                pending.add(() -> {
                    Stored current = docs.get(id);
                    if (current != null && current.version() > version) {
                        results[k] = new ItemResult(id, Outcome.CONFLICT, null);
                    } else {
                        docs.put(id, new Stored(version, null)); // a tombstone, also for an absent id
                        if (current == null || !current.live()) {
                            tombstonesOfAbsent++;
                        }
                        results[k] = current != null && current.live() ? ItemResult.applied(id) : ItemResult.absent(id);
                    }
                    if (left.decrementAndGet() == 0) {
                        listener.onResponse(List.of(results));
                    }
                });
            }
        }

        /** One index only: other indices hold no chunks. */
        @Override
        public void versions(List<String> indices, String id, ActionListener<Map<String, Long>> listener) {
            pending.add(() -> {
                Stored current = docs.get(id);
                Map<String, Long> out = new HashMap<>();
                if (indices.contains(INDEX) && current != null && current.live()) {
                    out.put(INDEX, current.version());
                }
                listener.onResponse(out);
            });
        }

        /** Runs the pending steps in a random order until none is left. */
        void runAll(Random random) {
            while (!pending.isEmpty()) {
                pending.remove(random.nextInt(pending.size())).run();
            }
        }

        /** Live chunk documents: id → the writer's mark. */
        Map<String, Object> live() {
            Map<String, Object> out = new TreeMap<>();
            docs.forEach((id, d) -> {
                if (d.live()) {
                    out.put(id, d.source().get("by"));
                }
            });
            return out;
        }
    }

    /** One writer of the source document: version, and its chunk count ({@code -1}: a delete of the document). */
    private record Op(long version, int chunks) {
        Map<String, Object> expected() {
            Map<String, Object> out = new TreeMap<>();
            for (int i = 0; i < chunks; i++) {
                out.put(SOURCE.chunkId(i), "v" + version);
            }
            return out;
        }
    }

    private static ChunkCommit commit(FakeChunks store, int bulkDocs) {
        return new ChunkCommit(store, new Slicing(1, bulkDocs, 1L << 20));
    }

    private static void start(ChunkCommit commit, Op op, List<Object> outcomes) {
        ActionListener<ChunkCommit.Result> record = ActionListener.wrap(outcomes::add, outcomes::add);
        if (op.chunks() < 0) {
            commit.delete(INDEX, SOURCE, op.version(), record);
        } else {
            commit.write(INDEX, SOURCE, op.version(), op.chunks(), i -> Map.of("by", "v" + op.version(), "ordinal", i), record);
        }
    }

    public void testWritersOfOneDocument_inAnyInterleaving_leaveExactlyTheNewestVersionsChunks() {
        for (int run = 0; run < 3000; run++) {
            Random random = new Random(random().nextLong());
            FakeChunks store = new FakeChunks();
            // what an earlier, finished version left: now and then more than a delete window of 64 beyond the newer counts
            Op earlier = new Op(1, random.nextInt(4) == 0 ? random.nextInt(160) : random.nextInt(8));
            List<Object> outcomes = new ArrayList<>();
            start(commit(store, 1 + random.nextInt(3)), earlier, outcomes);
            store.runAll(random);
            assertEquals(earlier.expected(), store.live());

            int writers = 2 + random.nextInt(3);
            List<Op> ops = new ArrayList<>();
            for (int w = 0; w < writers; w++) {
                // distinct versions, newer than the earlier one; a delete now and then
                int chunks = random.nextInt(4) == 0 ? random.nextInt(80) : random.nextInt(10);
                ops.add(new Op(10 + w * 10 + random.nextInt(5), random.nextInt(5) == 0 ? -1 : chunks));
            }
            outcomes.clear();
            for (Op op : ops) {
                start(commit(store, 1 + random.nextInt(4)), op, outcomes);
            }
            store.runAll(random);
            Op newest = ops.stream().max((a, b) -> Long.compare(a.version(), b.version())).orElseThrow();
            Map<String, Object> expected = newest.chunks() < 0 ? Map.of() : newest.expected();
            assertEquals("run " + run + ": " + ops + " outcomes " + outcomes, expected, store.live());
            assertEquals(writers, outcomes.size());
            assertFalse(outcomes.toString(), outcomes.stream().anyMatch(o -> o instanceof Exception));
        }
    }

    public void testAnOlderWriterAfterTheNewerOneFinished_isSupersededAndLeavesNothing() {
        FakeChunks store = new FakeChunks();
        List<Object> outcomes = new ArrayList<>();
        start(commit(store, 2), new Op(20, 2), outcomes);
        store.runAll(random());
        start(commit(store, 2), new Op(10, 6), outcomes);
        store.runAll(random());
        assertEquals(List.of(ChunkCommit.Result.DONE, ChunkCommit.Result.SUPERSEDED), outcomes);
        assertEquals(new Op(20, 2).expected(), store.live());
        // its first slice (ids 1, 2) met the newer chunk and tombstone: it wrote no further
        assertFalse(store.docs.get(SOURCE.chunkId(2)).live());
        assertNull("never written", store.docs.get(SOURCE.chunkId(3)));
    }

    public void testAnOlderWriterAfterADelete_isSuperseded_soTheDeletedDocumentHasNoChunks() {
        FakeChunks store = new FakeChunks();
        List<Object> outcomes = new ArrayList<>();
        start(commit(store, 3), new Op(5, 4), outcomes);
        store.runAll(random());
        start(commit(store, 3), new Op(30, -1), outcomes);
        store.runAll(random());
        assertEquals(Map.of(), store.live());
        start(commit(store, 3), new Op(20, 7), outcomes);
        store.runAll(random());
        assertEquals(List.of(ChunkCommit.Result.DONE, ChunkCommit.Result.DONE, ChunkCommit.Result.SUPERSEDED), outcomes);
        assertEquals(Map.of(), store.live());
    }

    public void testAnOlderWritersLateWritesBeyondTheNewerChunks_areRolledBackWhenItsCommitConflicts() {
        FakeChunks store = new FakeChunks();
        List<Object> outcomes = new ArrayList<>();
        // the newer version (2 chunks) finishes while the older one (6 chunks, one id per bulk) has written ids 1..5 but not
        // committed: the newer's probe removes them; had any landed after the probe, the older's failed commit removes it
        ChunkCommit older = commit(store, 5);
        start(older, new Op(10, 6), outcomes);
        for (int i = 0; i < 5; i++) {
            store.pending.remove(0).run(); // ids 1..5 land; the older writer's commit is queued
        }
        start(commit(store, 5), new Op(20, 2), outcomes);
        while (!store.pending.isEmpty()) {
            store.pending.remove(store.pending.size() - 1).run(); // the newer writer's steps first: the older commits last
        }
        assertEquals(new Op(20, 2).expected(), store.live());
        assertTrue(outcomes.toString(), outcomes.contains(ChunkCommit.Result.SUPERSEDED));
    }

    public void testAShorterNewVersion_deletesTheOlderChunksBeyondIt_andTombstonesTheFirstIdPastItsChunks() {
        FakeChunks store = new FakeChunks();
        List<Object> outcomes = new ArrayList<>();
        start(commit(store, 2), new Op(3, 150), outcomes); // beyond one probe window of 64 ids
        store.runAll(random());
        start(commit(store, 2), new Op(4, 2), outcomes);
        store.runAll(random());
        assertEquals(new Op(4, 2).expected(), store.live());
        assertEquals(ChunkCommit.versionOf(4), store.docs.get(SOURCE.chunkId(2)).version());
    }

    public void testARewriteOfTheSameCount_addsOneTombstone_theFirstIdPastItsChunks() {
        FakeChunks store = new FakeChunks();
        List<Object> outcomes = new ArrayList<>();
        start(commit(store, 4), new Op(3, 10), outcomes);
        store.runAll(random());
        int before = store.tombstonesOfAbsent;
        start(commit(store, 4), new Op(4, 10), outcomes);
        store.runAll(random());
        assertEquals(new Op(4, 10).expected(), store.live());
        assertEquals("tombstones of absent ids", 1, store.tombstonesOfAbsent - before);
        assertFalse(store.docs.get(SOURCE.chunkId(10)).live());
    }

    public void testAShrink_tombstonesFewerAbsentIdsThanTheOlderChunksItDeleted_plusOne() {
        for (int older : new int[] {3, 4, 10, 13, 40, 70, 150}) {
            FakeChunks store = new FakeChunks();
            List<Object> outcomes = new ArrayList<>();
            start(commit(store, 4), new Op(3, older), outcomes);
            store.runAll(random());
            int before = store.tombstonesOfAbsent;
            start(commit(store, 4), new Op(4, 2), outcomes);
            store.runAll(random());
            assertEquals(new Op(4, 2).expected(), store.live());
            int deleted = older - 2;
            assertTrue("older " + older + ": tombstones of absent ids " + (store.tombstonesOfAbsent - before),
                store.tombstonesOfAbsent - before <= deleted + 1);
        }
    }

    /**
     * An older writer that overwrote part of a still older version's chunks and then rolled back leaves a gap of tombstones
     * where the newer writer's sweep starts: the older version's chunks past the gap must go all the same.
     */
    public void testARollbackThatCutsAnOlderVersionsChunksShort_leavesNoneOfThemBehind() {
        FakeChunks store = new FakeChunks();
        List<Object> outcomes = new ArrayList<>();
        start(commit(store, 200), new Op(1, 100), outcomes);
        store.runAll(random());
        // the newest writer (10 chunks) writes ids 1..9; its commit waits
        start(commit(store, 200), new Op(30, 10), outcomes);
        runFirst(store, 9);
        // an older writer (50 chunks, one slice): ids 1..9 conflict, 10..49 overwrite version 1; it rolls back at once
        start(commit(store, 200), new Op(20, 50), outcomes);
        Runnable newestCommit = store.pending.remove(0);
        store.runAll(random());
        assertEquals(List.of(ChunkCommit.Result.DONE, ChunkCommit.Result.SUPERSEDED), outcomes);
        newestCommit.run();
        store.runAll(random());
        assertEquals(List.of(ChunkCommit.Result.DONE, ChunkCommit.Result.SUPERSEDED, ChunkCommit.Result.DONE), outcomes);
        assertEquals(new Op(30, 10).expected(), store.live());
    }

    /** A write that fails after a newer version committed removes what it wrote all the same (the newer chunks stay). */
    public void testAFailedWriteThatMetANewerCommit_removesWhatItWrote() {
        FakeChunks store = new FakeChunks();
        List<Object> outcomes = new ArrayList<>();
        start(commit(store, 20), new Op(1, 3), outcomes);
        store.runAll(random());
        // the newer writer (3 chunks) finishes first but for its sweep
        start(commit(store, 20), new Op(30, 3), outcomes);
        runFirst(store, 2); // ids 1, 2
        runFirst(store, 1); // its commit; its sweep of id 3 waits
        Runnable newerSweep = store.pending.remove(0);
        // the older writer (12 chunks, one slice): id 5 rejected, ids 1, 2 conflict, the rest overwrite or add
        store.failing.add(SOURCE.chunkId(5));
        AtomicReference<Exception> failure = new AtomicReference<>();
        commit(store, 20).write(INDEX, SOURCE, 20, 12, i -> Map.of("by", "v20"), ActionListener.wrap(r -> fail("wrote " + r), failure::set));
        newerSweep.run();
        while (!store.pending.isEmpty()) {
            store.pending.remove(0).run(); // in order: whatever else the newer writer deletes lands before the older writes
        }
        assertEquals("rejected", failure.get().getMessage());
        assertEquals(new Op(30, 3).expected(), store.live());
    }

    /** Runs the first {@code k} pending steps in order. */
    private static void runFirst(FakeChunks store, int k) {
        for (int i = 0; i < k; i++) {
            store.pending.remove(0).run();
        }
    }

    public void testAFailedWrite_leavesNoMixOfVersions_andFailsWithItsCause() {
        FakeChunks store = new FakeChunks();
        List<Object> outcomes = new ArrayList<>();
        start(commit(store, 2), new Op(3, 5), outcomes);
        store.runAll(random());
        store.failing.add(SOURCE.chunkId(3));
        AtomicReference<Exception> failure = new AtomicReference<>();
        commit(store, 2).write(INDEX, SOURCE, 7, 6, i -> Map.of("by", "v7"), ActionListener.wrap(r -> fail("wrote " + r), failure::set));
        store.runAll(random());
        assertEquals("rejected", failure.get().getMessage());
        assertEquals("every chunk of the document removed at the failed version", Map.of(), store.live());
    }

    public void testAChunkDeletedByHand_blocksARewriteOfTheSameOperation_butNotItsRepair_whichStillLosesToANewerOperation() {
        FakeChunks store = new FakeChunks();
        List<Object> outcomes = new ArrayList<>();
        start(commit(store, 2), new Op(5, 3), outcomes);
        store.runAll(random());
        // DELETE /chunks/_doc/<id>:0 without a version: the engine tombstones it at the next internal version
        String first = SOURCE.chunkId(0);
        store.docs.put(first, new Stored(store.docs.get(first).version() + 1, null));
        start(commit(store, 2), new Op(5, 3), outcomes);
        store.runAll(random());
        assertEquals(ChunkCommit.Result.SUPERSEDED, outcomes.get(1));
        assertEquals("the plain rewrite rolled back what it wrote", Map.of(), store.live());

        commit(store, 2).repairing().write(INDEX, SOURCE, 5, 3, i -> Map.of("by", "v5", "ordinal", i),
            ActionListener.wrap(outcomes::add, outcomes::add));
        store.runAll(random());
        assertEquals(ChunkCommit.Result.DONE, outcomes.get(2));
        assertEquals(new Op(5, 3).expected(), store.live());

        // the next operation of the document (seq_no 6) wins over the repair, and a late repair of 5 loses to it
        start(commit(store, 2), new Op(6, 2), outcomes);
        store.runAll(random());
        commit(store, 2).repairing().write(INDEX, SOURCE, 5, 3, i -> Map.of("by", "v5", "ordinal", i),
            ActionListener.wrap(outcomes::add, outcomes::add));
        store.runAll(random());
        assertEquals(List.of(ChunkCommit.Result.DONE, ChunkCommit.Result.SUPERSEDED), outcomes.subList(3, 5));
        assertEquals(new Op(6, 2).expected(), store.live());
    }

    private static boolean inStep(FakeChunks store, List<String> indices, String target, long seqNo) {
        AtomicReference<Object> answer = new AtomicReference<>();
        commit(store, 2).inStep(indices, target, SOURCE, seqNo, ActionListener.wrap(answer::set, answer::set));
        store.runAll(random());
        assertTrue(String.valueOf(answer.get()), answer.get() instanceof Boolean);
        return (Boolean) answer.get();
    }

    public void testInStep_holdsOnlyWhenTheCommitIsOfTheOperationOrNewer_andNoOtherIndexHoldsChunks() {
        FakeChunks store = new FakeChunks();
        List<Object> outcomes = new ArrayList<>();
        start(commit(store, 2), new Op(3, 4), outcomes);
        store.runAll(random());
        assertTrue(inStep(store, List.of(INDEX), INDEX, 3));
        assertTrue("a newer operation's chunks are its own", inStep(store, List.of(INDEX), INDEX, 2));
        assertFalse("the chunks of an older operation", inStep(store, List.of(INDEX), INDEX, 4));
        assertFalse("chunks where the summary names none", inStep(store, List.of(INDEX), null, 3));
        assertTrue("another index holds none", inStep(store, List.of("other", INDEX), INDEX, 3));

        // operation 8 stored, its chunk write failed: what it wrote is removed, the commit of 3 is gone too
        store.failing.add(SOURCE.chunkId(2));
        commit(store, 2).write(INDEX, SOURCE, 8, 5, i -> Map.of("by", "v8"), ActionListener.wrap(r -> fail("wrote " + r), e -> {}));
        store.runAll(random());
        assertFalse(inStep(store, List.of(INDEX), INDEX, 8));
        store.failing.clear();
        start(commit(store, 2), new Op(8, 5), outcomes);
        store.runAll(random());
        assertTrue(inStep(store, List.of(INDEX), INDEX, 8));
        commit(store, 2).repairing().write(INDEX, SOURCE, 8, 5, i -> Map.of("by", "v8"), ActionListener.wrap(outcomes::add, outcomes::add));
        store.runAll(random());
        assertTrue("a repair's version counts", inStep(store, List.of(INDEX), INDEX, 8));
        assertFalse(inStep(store, List.of(INDEX), INDEX, 9));
        start(commit(store, 2), new Op(9, -1), outcomes);
        store.runAll(random());
        assertTrue("deleted: none anywhere", inStep(store, List.of(INDEX), null, 9));
    }
}
