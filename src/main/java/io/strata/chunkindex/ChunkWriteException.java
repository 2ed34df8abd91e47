package io.strata.chunkindex;

import org.opensearch.ExceptionsHelper;
import org.opensearch.OpenSearchException;
import org.opensearch.core.rest.RestStatus;

/** Chunk documents could not be written; the status is the underlying one so clients can retry 429/503. */
public final class ChunkWriteException extends OpenSearchException {
    public ChunkWriteException(String message, Exception cause) {
        super(message, cause);
    }

    @Override
    public RestStatus status() {
        return ExceptionsHelper.status(getCause());
    }
}
