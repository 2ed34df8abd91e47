package io.strata.search;

import io.strata.chunking.ConfigException;
import org.opensearch.action.search.SearchRequest;
import org.opensearch.core.common.io.stream.StreamInput;
import org.opensearch.core.common.io.stream.StreamOutput;
import org.opensearch.core.xcontent.XContentBuilder;
import org.opensearch.core.xcontent.XContentParser;
import org.opensearch.search.SearchExtBuilder;

import java.io.IOException;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * {@code ext.strata_context}, both ways: in a request, the options of that search's context (validated when the request is
 * parsed, so a bad option is a 400 before anything runs); in a response, the assembled context. One class for both because
 * OpenSearch registers one reader per ext name.
 */
public final class ContextExt extends SearchExtBuilder {
    public static final String NAME = "strata_context";

    private final boolean response;
    private final Map<String, Object> body;

    private ContextExt(boolean response, Map<String, Object> body) {
        this.response = response;
        this.body = body;
    }

    static ContextExt ofResponse(Map<String, Object> context) {
        return new ContextExt(true, context);
    }

    public ContextExt(StreamInput in) throws IOException {
        this.response = in.readBoolean();
        this.body = in.readMap();
    }

    public static ContextExt parse(XContentParser parser) throws IOException {
        if (parser.currentToken() != XContentParser.Token.START_OBJECT) {
            // parser.map() reads a string, null or array here as no options at all: the search ran with the defaults
            String got = parser.currentToken() == XContentParser.Token.VALUE_STRING ? "\"" + parser.text() + "\""
                : String.valueOf(parser.currentToken());
            throw new ConfigException("ext." + NAME, String.format(Locale.ROOT, "[ext.%s] must be an object of options, e.g. "
                + "{\"budget\": 512}, got [%s]", NAME, got));
        }
        Map<String, Object> options = parser.map();
        ContextParams.parse("ext." + NAME, options, ContextParams.DEFAULTS); // validate now: a 400 at parse time
        return new ContextExt(false, options);
    }

    /** The request options of {@code ext.strata_context} a search carries, or null. */
    static ContextExt requestOf(SearchRequest request) {
        if (request.source() != null && request.source().ext() != null) {
            for (SearchExtBuilder ext : request.source().ext()) {
                if (ext instanceof ContextExt c && !c.response) {
                    return c;
                }
            }
        }
        return null;
    }

    /** The request's options over {@code defaults}; null for a response's ext. */
    ContextParams options(ContextParams defaults) {
        return response ? defaults : ContextParams.parse("ext." + NAME, body, defaults);
    }

    boolean isResponse() {
        return response;
    }

    @Override
    public String getWriteableName() {
        return NAME;
    }

    @Override
    public void writeTo(StreamOutput out) throws IOException {
        out.writeBoolean(response);
        out.writeMap(body);
    }

    @Override
    public XContentBuilder toXContent(XContentBuilder builder, Params params) throws IOException {
        return builder.field(NAME, body);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ContextExt other && response == other.response && body.equals(other.body);
    }

    @Override
    public int hashCode() {
        return Objects.hash(response, body);
    }
}
