package io.strata.transport;

import org.opensearch.core.common.bytes.BytesReference;
import org.opensearch.core.xcontent.DeprecationHandler;
import org.opensearch.core.xcontent.MediaType;
import org.opensearch.core.xcontent.NamedXContentRegistry;
import org.opensearch.core.xcontent.XContentParser;
import org.opensearch.rest.RestRequest;

import java.io.IOException;
import java.io.InputStream;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Reading the JSON object body of a Strata REST endpoint, the one way every handler does it: the handler takes the bytes
 * on the network thread ({@link #content}) and parses them where the work runs ({@link #map}), since a body may be large
 * (up to {@code http.max_content_length}). The bytes stay readable until the response is sent.
 */
public final class RestBodies {
    private RestBodies() {}

    /** The body as sent; a request without one is a 400 whose message is {@code usage}, which says what it should hold. */
    public static BytesReference content(RestRequest request, String usage) {
        if (!request.hasContent()) {
            throw new IllegalArgumentException(usage);
        }
        return request.content();
    }

    /**
     * A body parsed into a mutable map (parsers consume the keys they read); a body that is not an object, or not valid,
     * is a 400 whose message is {@code usage} (with the parser's reason).
     */
    public static Map<String, Object> map(BytesReference content, MediaType mediaType, String usage) {
        try (InputStream in = content.streamInput();
             XContentParser parser = mediaType.xContent().createParser(NamedXContentRegistry.EMPTY,
                 DeprecationHandler.THROW_UNSUPPORTED_OPERATION, in)) {
            if (parser.nextToken() != XContentParser.Token.START_OBJECT) {
                throw new IllegalArgumentException(usage);
            }
            return new LinkedHashMap<>(parser.map());
        } catch (IOException | RuntimeException e) {
            if (e instanceof IllegalArgumentException iae && usage.equals(iae.getMessage())) {
                throw iae;
            }
            throw new IllegalArgumentException(usage + "; the body is not valid: " + e.getMessage(), e);
        }
    }
}
