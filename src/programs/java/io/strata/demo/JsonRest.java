package io.strata.demo;

import org.opensearch.client.Request;
import org.opensearch.client.Response;
import org.opensearch.client.RestClient;
import org.opensearch.common.xcontent.XContentFactory;
import org.opensearch.common.xcontent.XContentHelper;
import org.opensearch.core.common.bytes.BytesArray;
import org.opensearch.core.common.bytes.BytesReference;
import org.opensearch.core.xcontent.MediaTypeRegistry;

import java.io.IOException;
import java.util.Map;

/** JSON over the low-level REST client, for the demo and the benchmarks (the ITs use the test framework's). */
public final class JsonRest {
    private JsonRest() {}

    /** Performs a request with an optional JSON body; returns the parsed response body. */
    public static Map<String, Object> call(RestClient client, String method, String path, String body) throws IOException {
        Request request = new Request(method, path);
        if (body != null) {
            request.setJsonEntity(body);
        }
        Response response = client.performRequest(request);
        byte[] bytes = response.getEntity().getContent().readAllBytes();
        return XContentHelper.convertToMap(new BytesArray(bytes), true, MediaTypeRegistry.JSON).v2();
    }

    public static String json(Map<String, ?> map) throws IOException {
        return BytesReference.bytes(XContentFactory.jsonBuilder().map(map)).utf8ToString();
    }
}
