package io.strata.studio;

import org.opensearch.core.rest.RestStatus;
import org.opensearch.rest.BaseRestHandler;
import org.opensearch.rest.BytesRestResponse;
import org.opensearch.rest.RestRequest;
import org.opensearch.transport.client.node.NodeClient;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Map;

/**
 * {@code GET _plugins/_strata/studio}: Strata Studio, a page to see and tune chunking and retrieval. Static files from
 * the plugin jar, served same-origin so the page calls the cluster's own REST API with the browser's credentials (no
 * CORS, no CDN, no other network). Only the files named here are served (no path from the request reaches the class
 * loader), under a strict Content-Security-Policy: scripts and styles from this origin only, no inline code, no eval,
 * no framing; the page itself inserts every text as text, never as HTML.
 */
public final class RestStudioAction extends BaseRestHandler {
    public static final String PATH = "/_plugins/_strata/studio";
    static final String CSP = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; "
        + "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
    /**
     * File name → content type; the page is served for the bare path, with or without a trailing slash (the page names
     * its script and style by absolute path, so both resolve alike).
     */
    static final Map<String, String> FILES = Map.of(
        "index.html", "text/html; charset=UTF-8",
        "studio.js", "text/javascript; charset=UTF-8",
        "studio.css", "text/css; charset=UTF-8");

    private final Map<String, byte[]> contents;

    public RestStudioAction() {
        this.contents = FILES.keySet().stream().collect(java.util.stream.Collectors.toUnmodifiableMap(f -> f, RestStudioAction::read));
    }

    private static byte[] read(String file) {
        try (InputStream in = RestStudioAction.class.getResourceAsStream(file)) {
            if (in == null) {
                throw new IllegalStateException("studio file [" + file + "] missing from the plugin jar");
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public String getName() {
        return "strata_studio_action";
    }

    @Override
    public List<Route> routes() {
        return List.of(new Route(RestRequest.Method.GET, PATH), new Route(RestRequest.Method.GET, PATH + "/{file}"));
    }

    @Override
    protected RestChannelConsumer prepareRequest(RestRequest request, NodeClient client) {
        String file = request.param("file", "index.html");
        request.param("index"); // the chunk index the page is pointed at (?index=): read by the page's script only
        return channel -> {
            byte[] body = contents.get(file);
            BytesRestResponse response = body == null
                ? new BytesRestResponse(RestStatus.NOT_FOUND, "text/plain; charset=UTF-8",
                    "no studio file [" + file + "]; files: " + new java.util.TreeSet<>(FILES.keySet()))
                : new BytesRestResponse(RestStatus.OK, FILES.get(file), body);
            response.addHeader("Content-Security-Policy", CSP);
            response.addHeader("X-Content-Type-Options", "nosniff");
            response.addHeader("X-Frame-Options", "DENY");
            response.addHeader("Referrer-Policy", "no-referrer");
            response.addHeader("Cache-Control", "no-cache");
            channel.sendResponse(response);
        };
    }
}
