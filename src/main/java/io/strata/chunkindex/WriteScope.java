package io.strata.chunkindex;

/**
 * What a request's thread context holds under {@link #TRANSIENT} while chunks are written for it: the bulk filter's ledger
 * of a caller's bulk, or the mark of Strata's own writes (a summary stored after re-chunking, a generation caught up by
 * {@code _swap}). Lets a chunk index check tell the two apart without knowing the ledger.
 */
public interface WriteScope {
    /** Thread-context transient key. */
    String TRANSIENT = "_strata_chunk_ledger";

    /** Whether the writes are Strata's own, not a caller's bulk. */
    boolean isOwnWrites();
}
