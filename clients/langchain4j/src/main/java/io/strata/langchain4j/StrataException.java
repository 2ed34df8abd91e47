package io.strata.langchain4j;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.nio.charset.StandardCharsets;

/** A search that failed: the HTTP status (0 when none came back) and, in the message, the server's own reason. */
public final class StrataException extends RuntimeException {
    private static final ObjectMapper JSON = new ObjectMapper();

    private final int status;

    StrataException(int status, String message, Throwable cause) {
        super(message, cause);
        this.status = status;
    }

    /** The HTTP status of the response, or 0 when the request got none (connection refused, time-out). */
    public int status() {
        return status;
    }

    /** OpenSearch's {@code error.reason} (the one a user reads), else the body as it came. */
    static String reason(byte[] body) {
        String text = new String(body, StandardCharsets.UTF_8);
        try {
            JsonNode error = JSON.readTree(body).path("error");
            if (error.isTextual()) {
                return error.asText();
            }
            JsonNode reason = error.path("reason");
            if (reason.isTextual()) {
                String type = error.path("type").asText("");
                return type.isEmpty() ? reason.asText() : type + ": " + reason.asText();
            }
        } catch (IOException e) {
            // not JSON (a proxy's page): the body itself is the best message there is
        }
        return text;
    }
}
