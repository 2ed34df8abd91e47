package io.strata.chunkindex;

import org.opensearch.ExceptionsHelper;
import org.opensearch.OpenSearchException;
import org.opensearch.core.rest.RestStatus;

import java.util.Locale;

/** Chunk documents could not be written; the status is the underlying one so clients can retry 429/503. */
public final class ChunkWriteException extends OpenSearchException {
    public ChunkWriteException(String message, Exception cause) {
        super(message, cause);
    }

    /** "writing chunks to [target] failed: cause" (a cause that already is one is returned as it is). */
    public static ChunkWriteException of(String target, Exception cause) {
        if (cause instanceof ChunkWriteException c) {
            return c;
        }
        return new ChunkWriteException(String.format(Locale.ROOT, "writing chunks to [%s] failed: %s", target, cause.getMessage()), cause);
    }

    @Override
    public RestStatus status() {
        return ExceptionsHelper.status(getCause());
    }
}
