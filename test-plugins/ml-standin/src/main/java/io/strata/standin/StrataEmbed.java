package io.strata.standin;

import org.opensearch.action.ActionRequest;
import org.opensearch.action.ActionRequestValidationException;
import org.opensearch.action.ActionType;
import org.opensearch.common.io.stream.BytesStreamOutput;
import org.opensearch.core.action.ActionListener;
import org.opensearch.core.action.ActionResponse;
import org.opensearch.core.common.io.stream.StreamInput;
import org.opensearch.core.common.io.stream.StreamOutput;
import org.opensearch.transport.client.Client;
import org.opensearch.common.util.concurrent.ThreadContext;
import org.opensearch.action.support.ContextPreservingActionListener;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * This plugin's own copy of Strata's {@code cluster:admin/strata/embed} wire format (Strata's EmbedRequest and
 * EmbedResponse; this plugin does not see Strata's classes). Always asks for Strata's default embedded model.
 */
final class StrataEmbed {
    static final String NAME = "cluster:admin/strata/embed";
    static final ActionType<Response> ACTION = new ActionType<>(NAME, Response::new);

    private StrataEmbed() {}

    static final class Request extends ActionRequest {
        final String purpose;
        final List<String> texts;

        Request(String purpose, List<String> texts) {
            this.purpose = purpose;
            this.texts = texts;
        }

        @Override
        public ActionRequestValidationException validate() {
            return null;
        }

        @Override
        public void writeTo(StreamOutput out) throws IOException {
            super.writeTo(out);
            out.writeOptionalString(null); // model: the node's default
            out.writeOptionalString(null); // model_id
            out.writeString(purpose);
            out.writeStringCollection(texts);
        }
    }

    static final class Response extends ActionResponse {
        final String model;
        final List<float[]> vectors;

        Response(StreamInput in) throws IOException {
            super(in);
            model = in.readOptionalString();
            in.readOptionalString(); // model_id
            int count = in.readVInt();
            vectors = new ArrayList<>(count);
            for (int i = 0; i < count; i++) {
                vectors.add(in.readFloatArray());
            }
        }

        @Override
        public void writeTo(StreamOutput out) {
            throw new UnsupportedOperationException("read only");
        }

        /** Strata answers with its own class: written out by it, read back here. */
        static Response from(ActionResponse response) throws IOException {
            if (response instanceof Response own) {
                return own;
            }
            try (BytesStreamOutput out = new BytesStreamOutput()) {
                response.writeTo(out);
                try (StreamInput in = out.bytes().streamInput()) {
                    return new Response(in);
                }
            }
        }
    }

    static void call(Client client, Request request, ActionListener<Response> listener) {
        // the model's own work, as ml-commons runs it: not the caller's (whose predict permission was checked already);
        // with the security plugin the caller need not hold Strata's embed action
        ThreadContext threadContext = client.threadPool().getThreadContext();
        ActionListener<Response> inCallersContext = ContextPreservingActionListener.wrapPreservingContext(listener, threadContext);
        try (ThreadContext.StoredContext ignored = threadContext.stashContext()) {
            client.execute(ACTION, request, converting(inCallersContext));
        }
    }

    /** {@code T} erases to {@link ActionResponse}: nothing casts Strata's object to our class before conversion. */
    private static <T extends ActionResponse> ActionListener<T> converting(ActionListener<Response> listener) {
        return new ActionListener<>() {
            @Override
            public void onResponse(T response) {
                Response converted;
                try {
                    converted = Response.from(response);
                } catch (Exception e) {
                    listener.onFailure(e);
                    return;
                }
                listener.onResponse(converted);
            }

            @Override
            public void onFailure(Exception e) {
                listener.onFailure(e);
            }
        };
    }
}
