package io.strata.ingest;

import io.strata.stats.StrataStats.Failure;
import io.strata.chunkindex.ChunkWriteException;
import org.opensearch.ExceptionsHelper;
import org.opensearch.core.rest.RestStatus;

/**
 * Why a document failed in the processor, for the stats. Back-pressure (429) first, wherever it came from: the client
 * should retry, whatever was full. The processor knows which failures came from the inference layer ({@link #ofModel}).
 */
final class IngestFailures {
    private IngestFailures() {}

    static Failure of(Exception e) {
        Throwable write = ExceptionsHelper.unwrap(e, ChunkWriteException.class);
        RestStatus status = status(write != null ? write.getCause() : e);
        if (status == RestStatus.TOO_MANY_REQUESTS) {
            return Failure.REJECTED;
        }
        if (write != null) {
            return Failure.WRITE;
        }
        return status.getStatus() >= 400 && status.getStatus() < 500 ? Failure.BAD_INPUT : Failure.OTHER;
    }

    /** A failure of the inference layer (the embedded engine or ml-commons). */
    static Failure ofModel(Exception e) {
        return status(e) == RestStatus.TOO_MANY_REQUESTS ? Failure.REJECTED : Failure.MODEL;
    }

    private static RestStatus status(Throwable e) {
        return ExceptionsHelper.status(ExceptionsHelper.unwrapCause(e));
    }
}
