package io.strata.chunkindex.generations;

import io.strata.transport.RenderedResponse;
import io.strata.transport.SourceIndexRequest;
import org.opensearch.action.ActionRequestValidationException;
import org.opensearch.action.ActionType;
import org.opensearch.core.common.io.stream.StreamInput;

import java.io.IOException;

/**
 * {@code GET _plugins/_strata/generations?index=<source>} as a named action on the source index (a read: what the
 * generations of its chunk indices are; their documents are counted with the caller's searches).
 */
public final class GenerationsAction extends ActionType<RenderedResponse> {
    public static final String NAME = "indices:monitor/strata/generations";
    public static final GenerationsAction INSTANCE = new GenerationsAction();

    private GenerationsAction() {
        super(NAME, RenderedResponse::new);
    }

    /** The one source index whose generations to list. */
    public static final class Request extends SourceIndexRequest {
        public Request(String index) {
            super("generations", index);
        }

        public Request(StreamInput in) throws IOException {
            super("generations", in);
        }

        @Override
        public ActionRequestValidationException validate() {
            return validateIndex("whose generations to list", "GET _plugins/_strata/generations?index=books");
        }
    }
}
