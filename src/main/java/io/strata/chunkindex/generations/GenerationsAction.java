package io.strata.chunkindex.generations;

import io.strata.transport.RenderedResponse;
import org.opensearch.action.ActionRequest;
import org.opensearch.action.ActionRequestValidationException;
import org.opensearch.action.ActionType;
import org.opensearch.action.IndicesRequest;
import org.opensearch.action.support.IndicesOptions;
import org.opensearch.core.common.io.stream.StreamInput;
import org.opensearch.core.common.io.stream.StreamOutput;

import java.io.IOException;
import java.util.Arrays;

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
    public static final class Request extends ActionRequest implements IndicesRequest.Replaceable {
        private String index;

        public Request(String index) {
            this.index = index;
        }

        public Request(StreamInput in) throws IOException {
            super(in);
            this.index = in.readString();
        }

        @Override
        public void writeTo(StreamOutput out) throws IOException {
            super.writeTo(out);
            out.writeString(index);
        }

        public String index() {
            return index;
        }

        @Override
        public String[] indices() {
            return new String[] { index };
        }

        @Override
        public Request indices(String... indices) {
            if (indices == null || indices.length != 1) {
                throw new IllegalArgumentException("[generations] takes exactly one source index, got " + Arrays.toString(indices));
            }
            this.index = indices[0];
            return this;
        }

        @Override
        public IndicesOptions indicesOptions() {
            return IndicesOptions.strictSingleIndexNoExpandForbidClosed();
        }

        @Override
        public ActionRequestValidationException validate() {
            if (index == null || index.isBlank()) {
                ActionRequestValidationException e = new ActionRequestValidationException();
                e.addValidationError("[generations] needs [index]: the source index, e.g. GET _plugins/_strata/generations?index=books");
                return e;
            }
            return null;
        }
    }
}
