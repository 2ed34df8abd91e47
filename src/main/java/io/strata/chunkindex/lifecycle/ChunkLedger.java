package io.strata.chunkindex.lifecycle;

import io.strata.chunkindex.WriteScope;
import io.strata.chunkindex.setup.WriteChecks;
import io.strata.chunkindex.write.PreparedChunks;

import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * The chunks prepared while one bulk request ran its pipelines, not yet written. {@link ChunkLifecycleFilter} puts a ledger
 * into the thread context of every bulk request; processors record each document's prepared chunks; after the bulk the
 * filter writes the chunks of each document whose source write succeeded, versioned with its {@code _seq_no}. Its presence
 * also tells a processor that it runs for a real write and not in {@code _simulate}, and tells the filter that a nested
 * bulk (Strata's own writes) is not to be handled again.
 */
public final class ChunkLedger implements WriteScope {
    /**
     * The chunks of document {@code id}, written to {@code index} as the request named it (perhaps an alias), prepared for
     * chunk index {@code target} (from the concrete index the pipeline expected, {@code concreteIndex}).
     */
    public record Entry(String index, String id, String concreteIndex, String target, PreparedChunks chunks) {}

    private final Queue<Entry> entries = new ConcurrentLinkedQueue<>();
    /** The same entries by document id: every stored item of a bulk looks its own up (a scan of all was quadratic). */
    private final Map<String, Queue<Entry>> byId = new ConcurrentHashMap<>();
    private final WriteChecks writeChecks;

    public ChunkLedger(WriteChecks writeChecks) {
        this.writeChecks = writeChecks;
    }

    /**
     * The ledger of Strata's own source writes (a summary stored after re-chunking): the filter lets them through and
     * processors (a final pipeline still runs) leave the document as it is, its summary already computed.
     */
    public static ChunkLedger ownWrites() {
        return new ChunkLedger(null);
    }

    @Override
    public boolean isOwnWrites() {
        return writeChecks == null;
    }

    /** The checks that the caller may write each chunk index, shared by the whole bulk. */
    public WriteChecks writeChecks() {
        return writeChecks;
    }

    public void record(Entry entry) {
        byId.computeIfAbsent(entry.id(), id -> new ConcurrentLinkedQueue<>()).add(entry);
        entries.add(entry);
    }

    /** The entries of document {@code id}. */
    public List<Entry> entriesFor(String id) {
        Queue<Entry> of = byId.get(id);
        return of == null ? List.of() : List.copyOf(of);
    }

    /** Every entry recorded (matched to a stored item or not). */
    public List<Entry> all() {
        return List.copyOf(entries);
    }

    public boolean isEmpty() {
        return entries.isEmpty();
    }
}
