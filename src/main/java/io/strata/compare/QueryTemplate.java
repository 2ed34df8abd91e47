package io.strata.compare;

import io.strata.query.MultiGranularQueryBuilder;
import org.opensearch.ExceptionsHelper;
import org.opensearch.common.xcontent.json.JsonXContent;
import org.opensearch.core.common.bytes.BytesReference;
import org.opensearch.core.xcontent.DeprecationHandler;
import org.opensearch.core.xcontent.NamedXContentRegistry;
import org.opensearch.core.xcontent.XContentBuilder;
import org.opensearch.core.xcontent.XContentParser;
import org.opensearch.index.query.AbstractQueryBuilder;
import org.opensearch.index.query.QueryBuilder;

import java.io.IOException;
import java.io.InputStream;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The {@code multi_granular} query of every question: the request's options with the question's text and {@code k},
 * parsed by the node's own query parser (so every option, its defaults and its errors are the query's).
 */
final class QueryTemplate {
    private final NamedXContentRegistry registry;
    private final Map<String, Object> options;
    private final int k;

    /** Fails with a 400 naming {@code query} when the options do not make a valid query. */
    QueryTemplate(NamedXContentRegistry registry, Map<String, Object> options, int k) {
        this.registry = registry;
        this.options = options;
        this.k = k;
        try {
            build("validation");
        } catch (RuntimeException e) {
            Throwable cause = ExceptionsHelper.unwrapCause(e);
            while (cause.getCause() != null && cause.getCause() != cause && cause.getMessage() != null
                && cause.getMessage().contains("failed to parse")) {
                cause = cause.getCause();
            }
            throw new IllegalArgumentException("[" + CompareRequest.OWNER + "] [query] is not a valid [" + MultiGranularQueryBuilder.NAME
                + "] query: " + cause.getMessage(), e);
        }
    }

    QueryBuilder build(String questionText) {
        Map<String, Object> query = new LinkedHashMap<>(options);
        query.put("query_text", questionText);
        query.put("k", k);
        try {
            XContentBuilder json = JsonXContent.contentBuilder().map(Map.of(MultiGranularQueryBuilder.NAME, query));
            try (InputStream in = BytesReference.bytes(json).streamInput();
                 XContentParser parser = JsonXContent.jsonXContent.createParser(registry, DeprecationHandler.THROW_UNSUPPORTED_OPERATION, in)) {
                return AbstractQueryBuilder.parseInnerQueryBuilder(parser);
            }
        } catch (IOException e) {
            throw new IllegalArgumentException(e);
        }
    }
}
