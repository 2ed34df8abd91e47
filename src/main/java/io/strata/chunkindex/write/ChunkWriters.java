package io.strata.chunkindex.write;

import io.strata.chunkindex.store.ChunkStore;

import java.util.List;
import java.util.Map;

/**
 * The chunk writers of the node's live ingest pipelines (one per {@code multi_granular_chunking} processor): what the bulk
 * filter's re-chunking and {@code _reconcile} rewrite a source document's chunks with, the way its pipeline would.
 * Implemented by the ingest adapter, so this package needs no ingest types.
 */
public interface ChunkWriters {
    /**
     * The writer that chunks documents of concrete index {@code sourceIndex} into {@code target} and agrees with the
     * document's {@code summary} ({@link ChunkWriter#agreesWith}: same field, same strategy): of the pipeline the summary
     * names (summaries written by batched bulks before 2026-11-27 name none), else of the index's default or final
     * pipeline, else the first of any pipeline; null when none does. A null {@code target}: whatever chunk index the writer
     * writes documents of {@code sourceIndex} to.
     */
    ChunkWriter resolve(String sourceIndex, Map<?, ?> summary, String target);

    /**
     * The writer of pipeline {@code pipeline} that chunks documents of {@code sourceIndex} into {@code target}, whatever its
     * strategy (a changed strategy is a changed config, not another processor), or null.
     */
    default ChunkWriter ofPipeline(String pipeline, String sourceIndex, String target) {
        return null;
    }

    /** Every writer of every pipeline this node has parsed. */
    List<ChunkWriter> all();

    /**
     * Whether {@code writer}'s processor runs on {@code doc} as stored: false when the processor's {@code if} condition is
     * false for it, as a write of that document through its pipeline would skip the processor (an update that made a
     * document fail the condition — no longer public, no longer in the language — leaves it without chunks). Throws what
     * the condition throws.
     */
    default boolean runsOn(ChunkWriter writer, ChunkStore.StoredSource doc) {
        return true;
    }
}
