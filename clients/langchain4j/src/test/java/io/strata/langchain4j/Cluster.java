package io.strata.langchain4j;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;

/**
 * The test cluster, as {@code bin/strata-node env} describes it: {@code STRATA_URL}, and on a secured cluster
 * {@code STRATA_USER}, {@code STRATA_PASSWORD}, {@code STRATA_CA}. Plain REST with the JSON a user writes: the oracle.
 */
final class Cluster {
    static final ObjectMapper JSON = new ObjectMapper();
    static final String URL = require("STRATA_URL");
    static final String USER = System.getenv("STRATA_USER");
    static final String PASSWORD = System.getenv("STRATA_PASSWORD");
    static final String CA = System.getenv("STRATA_CA");

    private static final HttpClient HTTP = client();

    private Cluster() {}

    private static String require(String name) {
        String v = System.getenv(name);
        if (v == null || v.isBlank()) {
            throw new IllegalStateException(name + " is not set: run `eval \"$(bin/strata-node env --name NAME)\"` first");
        }
        return v;
    }

    private static HttpClient client() {
        HttpClient.Builder b = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(30));
        if (CA != null && !CA.isBlank()) {
            b.sslContext(Tls.trusting(Path.of(CA)));
        }
        return b.build();
    }

    /** A retriever on this cluster, with its credentials and CA when it is secured. */
    static StrataContentRetriever.Builder retriever(String index) {
        StrataContentRetriever.Builder b = StrataContentRetriever.builder().url(URL).index(index);
        if (USER != null && !USER.isBlank()) {
            b.basicAuth(USER, PASSWORD);
        }
        if (CA != null && !CA.isBlank()) {
            b.caCertificate(Path.of(CA));
        }
        return b;
    }

    /** Sends a request; returns the status and the parsed body. */
    static Response call(String method, String path, String body) throws Exception {
        HttpRequest.Builder rb = HttpRequest.newBuilder(URI.create(URL + path)).timeout(Duration.ofMinutes(2))
            .header("Content-Type", path.contains("_bulk") ? "application/x-ndjson" : "application/json")
            .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        if (USER != null && !USER.isBlank()) {
            rb.header("Authorization", "Basic " + Base64.getEncoder()
                .encodeToString((USER + ":" + PASSWORD).getBytes(StandardCharsets.UTF_8)));
        }
        HttpResponse<String> r = HTTP.send(rb.build(), HttpResponse.BodyHandlers.ofString());
        return new Response(r.statusCode(), r.body().isEmpty() ? JSON.nullNode() : JSON.readTree(r.body()));
    }

    /** Like {@link #call}, failing the test on a non-2xx status. */
    static JsonNode ok(String method, String path, String body) throws Exception {
        Response r = call(method, path, body);
        if (r.status() / 100 != 2) {
            throw new AssertionError(method + " " + path + " -> " + r.status() + ": " + r.body());
        }
        return r.body();
    }

    record Response(int status, JsonNode body) {}
}
