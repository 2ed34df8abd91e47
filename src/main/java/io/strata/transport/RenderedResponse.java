package io.strata.transport;

import org.opensearch.core.action.ActionResponse;
import org.opensearch.core.common.bytes.BytesReference;
import org.opensearch.core.common.io.stream.StreamInput;
import org.opensearch.core.common.io.stream.StreamOutput;
import org.opensearch.core.rest.RestStatus;
import org.opensearch.core.xcontent.MediaTypeRegistry;
import org.opensearch.core.xcontent.ToXContent;
import org.opensearch.core.xcontent.XContentBuilder;
import org.opensearch.common.xcontent.XContentHelper;
import org.opensearch.common.xcontent.XContentType;
import org.opensearch.common.xcontent.StatusToXContentObject;

import java.io.IOException;

/**
 * The answer of a Strata transport action whose result is a JSON document built once on the node that did the work
 * ({@code _chunk}, {@code _reconcile}): the rendered body and its HTTP status, so the REST layer passes it through and the
 * transport layer can carry it between nodes.
 */
public final class RenderedResponse extends ActionResponse implements StatusToXContentObject {
    private final BytesReference body;
    private final RestStatus status;

    public RenderedResponse(BytesReference body, RestStatus status) {
        this.body = body;
        this.status = status;
    }

    /** Renders {@code content} (a complete object) as JSON. */
    public static RenderedResponse of(ToXContent content, RestStatus status) throws IOException {
        return new RenderedResponse(XContentHelper.toXContent(content, XContentType.JSON, false), status);
    }

    public RenderedResponse(StreamInput in) throws IOException {
        super(in);
        this.body = in.readBytesReference();
        this.status = RestStatus.readFrom(in);
    }

    @Override
    public void writeTo(StreamOutput out) throws IOException {
        out.writeBytesReference(body);
        RestStatus.writeTo(out, status);
    }

    public BytesReference body() {
        return body;
    }

    @Override
    public RestStatus status() {
        return status;
    }

    @Override
    public XContentBuilder toXContent(XContentBuilder builder, Params params) throws IOException {
        try (var parser = XContentHelper.createParser(org.opensearch.core.xcontent.NamedXContentRegistry.EMPTY,
            org.opensearch.common.xcontent.LoggingDeprecationHandler.INSTANCE, body, MediaTypeRegistry.JSON)) {
            return builder.copyCurrentStructure(parser);
        }
    }
}
