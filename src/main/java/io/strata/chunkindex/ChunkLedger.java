package io.strata.chunkindex;

import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * The chunk writes made while one bulk request ran its pipelines. {@link ChunkLifecycleFilter} puts a
 * ledger into the thread context of every bulk request; processors record each document they wrote chunks
 * for; when the bulk response shows that a document's own write failed, the filter repairs its chunks.
 * Its presence also tells a processor that it runs for a real write and not in {@code _simulate}.
 */
public final class ChunkLedger {
    /** Thread-context transient key. */
    public static final String TRANSIENT = "_strata_chunk_ledger";

    /** {@code parents} chunks cut from the text with {@code sourceHash} were written for {@code index/id} by {@code writer}. */
    public record Entry(ChunkWriter writer, String index, String id, String sourceHash, int parents) {}

    private final Queue<Entry> entries = new ConcurrentLinkedQueue<>();

    public void record(ChunkWriter writer, String index, String id, String sourceHash, int parents) {
        entries.add(new Entry(writer, index, id, sourceHash, parents));
    }

    public List<Entry> entriesFor(String index, String id) {
        return entries.stream().filter(e -> e.index().equals(index) && e.id().equals(id)).toList();
    }

    /** Chunk indices written during this bulk. */
    public Set<String> targetIndices() {
        return entries.stream().map(e -> e.writer().targetIndex()).collect(Collectors.toSet());
    }

    public boolean isEmpty() {
        return entries.isEmpty();
    }
}
