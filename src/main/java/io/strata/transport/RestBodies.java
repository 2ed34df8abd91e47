package io.strata.transport;

import org.opensearch.core.xcontent.XContentParser;
import org.opensearch.rest.RestRequest;

import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.Map;

/** Reading the JSON object body of a Strata REST endpoint, the one way every handler does it. */
public final class RestBodies {
    private RestBodies() {}

    /**
     * The body as a mutable map (parsers consume the keys they read); a request without a body is a 400 whose message is
     * {@code usage}, which says what the body should hold.
     */
    public static Map<String, Object> jsonObject(RestRequest request, String usage) throws IOException {
        if (!request.hasContent()) {
            throw new IllegalArgumentException(usage);
        }
        try (XContentParser parser = request.contentParser()) {
            return new LinkedHashMap<>(parser.map());
        }
    }
}
