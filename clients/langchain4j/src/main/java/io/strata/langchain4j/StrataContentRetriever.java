package io.strata.langchain4j;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.langchain4j.data.document.Metadata;
import dev.langchain4j.data.segment.TextSegment;
import dev.langchain4j.rag.content.Content;
import dev.langchain4j.rag.content.retriever.ContentRetriever;
import dev.langchain4j.rag.query.Query;

import javax.net.ssl.SSLContext;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Objects;

/**
 * A langchain4j {@link ContentRetriever} that lets the cluster assemble the context: one search of a Strata chunk index
 * with the {@code multi_granular} query and the {@code strata_context} response processor, one {@link Content} per
 * passage of {@code ext.strata_context.passages}, in the response's order (the order meant for the prompt).
 *
 * <p>Each content's text is the passage's text (the source document's text at {@code [start, end)}); its metadata
 * is the citation: {@code index}, {@code source_index}, {@code source_id} (strings), {@code start}, {@code end},
 * {@code tokens} (integers), {@code hits} (the hits' {@code _id}s, comma-separated: langchain4j metadata holds no lists)
 * and {@code truncated} ({@code "true"}, only on a passage cut to fit the budget).
 *
 * <p>Thread-safe: the settings are fixed at {@link Builder#build()}, and {@link HttpClient} may be shared.
 */
public final class StrataContentRetriever implements ContentRetriever {
    private static final ObjectMapper JSON = new ObjectMapper();

    private final HttpClient http;
    private final URI searchUri;
    private final String authorization;
    private final Duration timeout;
    private final int k;
    private final int budget;
    private final String mode;
    private final JsonNode filter;
    private final String tokenizer;
    private final String order;
    private final Boolean neighbours;
    private final String pipeline;

    private StrataContentRetriever(Builder b) {
        this.k = b.k;
        this.budget = b.budget;
        this.mode = b.mode;
        this.filter = b.filter;
        this.tokenizer = b.tokenizer;
        this.order = b.order;
        this.neighbours = b.neighbours;
        this.pipeline = b.pipeline;
        this.timeout = b.timeout;
        String base = b.url.endsWith("/") ? b.url.substring(0, b.url.length() - 1) : b.url;
        String query = pipeline == null ? "" : "?search_pipeline=" + encode(pipeline);
        this.searchUri = URI.create(base + "/" + encode(b.index) + "/_search" + query);
        this.authorization = b.user == null ? null
            : "Basic " + Base64.getEncoder().encodeToString((b.user + ":" + b.password).getBytes(StandardCharsets.UTF_8));
        HttpClient.Builder hb = HttpClient.newBuilder().connectTimeout(b.timeout);
        if (b.sslContext != null) {
            hb.sslContext(b.sslContext);
        }
        this.http = hb.build();
    }

    public static Builder builder() {
        return new Builder();
    }

    @Override
    public List<Content> retrieve(Query query) {
        JsonNode response = search(requestBody(query.text()));
        List<Content> contents = new ArrayList<>();
        for (JsonNode p : response.path("ext").path("strata_context").path("passages")) {
            contents.add(Content.from(TextSegment.from(p.path("text").asText(), citation(p))));
        }
        return contents;
    }

    /** The search body: exactly what a user would send by hand (docs/query.md), nothing the REST API does not take. */
    ObjectNode requestBody(String queryText) {
        ObjectNode body = JSON.createObjectNode();
        body.put("size", k);
        ObjectNode mg = body.putObject("query").putObject("multi_granular");
        mg.put("query_text", queryText);
        mg.put("k", k);
        // the seeds of the context are the matched chunks (without them the processor seeds with whole parents), and the
        // other matched chunks and best sentences of each hit its default seeds fall back on when a matched chunk does not
        // fit the budget
        mg.put("explain_child", true);
        mg.putObject("evidence").put("chunks", 3).put("sentences", 3);
        if (mode != null) {
            mg.put("mode", mode);
        }
        if (filter != null) {
            mg.set("filter", filter);
        }
        ObjectNode context = JSON.createObjectNode();
        context.put("budget", budget);
        if (tokenizer != null) {
            context.put("tokenizer", tokenizer);
        }
        if (order != null) {
            context.put("order", order);
        }
        if (neighbours != null) {
            context.put("neighbours", neighbours);
        }
        if (pipeline == null) {
            // an inline pipeline: nothing to create on the cluster first
            body.putObject("search_pipeline").putArray("response_processors").addObject().set("strata_context", context);
        } else {
            body.putObject("ext").set("strata_context", context);
        }
        return body;
    }

    private JsonNode search(ObjectNode body) {
        HttpRequest.Builder rb = HttpRequest.newBuilder(searchUri)
            .timeout(timeout)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json")
            .POST(HttpRequest.BodyPublishers.ofByteArray(write(body)));
        if (authorization != null) {
            rb.header("Authorization", authorization);
        }
        HttpResponse<byte[]> response;
        try {
            response = http.send(rb.build(), HttpResponse.BodyHandlers.ofByteArray());
        } catch (IOException e) {
            throw new StrataException(0, "[strata] search of " + searchUri + " failed: " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StrataException(0, "[strata] search of " + searchUri + " interrupted", e);
        }
        int status = response.statusCode();
        if (status / 100 != 2) {
            throw new StrataException(status, "[strata] search of " + searchUri + " failed (" + status + "): "
                + StrataException.reason(response.body()), null);
        }
        try {
            return JSON.readTree(response.body());
        } catch (IOException e) {
            throw new StrataException(status, "[strata] search of " + searchUri + " returned no JSON: " + e.getMessage(), e);
        }
    }

    private static Metadata citation(JsonNode p) {
        Metadata m = new Metadata();
        m.put("index", p.path("index").asText());
        m.put("source_index", p.path("source_index").asText());
        m.put("source_id", p.path("source_id").asText());
        m.put("start", p.path("start").asInt());
        m.put("end", p.path("end").asInt());
        m.put("tokens", p.path("tokens").asInt());
        List<String> hits = new ArrayList<>();
        p.path("hits").forEach(h -> hits.add(h.asText()));
        m.put("hits", String.join(",", hits));
        if (p.path("truncated").asBoolean(false)) {
            m.put("truncated", "true");
        }
        return m;
    }

    private static byte[] write(JsonNode node) {
        try {
            return JSON.writeValueAsBytes(node);
        } catch (IOException e) {
            throw new IllegalStateException(e); // a tree of plain nodes always serialises
        }
    }

    private static String encode(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
    }

    /** Settings, checked at {@link #build()}; everything but {@code url} and {@code index} has the server's default. */
    public static final class Builder {
        private String url;
        private String index;
        private int k = 10;
        private int budget = 512;
        private String mode;
        private JsonNode filter;
        private String tokenizer;
        private String order;
        private Boolean neighbours;
        private String pipeline;
        private String user;
        private String password;
        private SSLContext sslContext;
        private Duration timeout = Duration.ofSeconds(60);

        private Builder() {}

        /** The cluster, e.g. {@code https://127.0.0.1:9200}. */
        public Builder url(String url) {
            this.url = url;
            return this;
        }

        /** The chunk index (or an alias of it), e.g. {@code books-chunks}. */
        public Builder index(String index) {
            this.index = index;
            return this;
        }

        /** The parents the query returns (multi_granular's {@code k}, and the search's {@code size}); default 10. */
        public Builder k(int k) {
            this.k = k;
            return this;
        }

        /** At most this many tokens in the context (strata_context's {@code budget}); default 512. */
        public Builder budget(int budget) {
            this.budget = budget;
            return this;
        }

        /** {@code hybrid}, {@code dense} or {@code lexical}; default: the index's (hybrid with vectors). */
        public Builder mode(String mode) {
            this.mode = mode;
            return this;
        }

        /**
         * A query on parent fields, as JSON, e.g. {@code {"term": {"title.keyword": "Emma"}}} (an exact {@code keyword}; a
         * {@code term} on a {@code text} field matches whole tokens only): multi_granular's {@code filter}.
         */
        public Builder filter(String json) {
            try {
                this.filter = json == null ? null : JSON.readTree(json);
            } catch (IOException e) {
                throw new IllegalArgumentException("[strata] [filter] is not JSON: " + e.getMessage(), e);
            }
            return this;
        }

        /** The embedded model whose tokenizer counts the budget; default: the chunk index's model. */
        public Builder tokenizer(String tokenizer) {
            this.tokenizer = tokenizer;
            return this;
        }

        /** {@code rank} (best hit's passage first, the default) or {@code document} (reading order per document). */
        public Builder order(String order) {
            this.order = order;
            return this;
        }

        /** Whether passages may grow into the neighbouring parents of a hit's parent; default true. */
        public Builder neighbours(boolean neighbours) {
            this.neighbours = neighbours;
            return this;
        }

        /**
         * Use the named search pipeline (created beforehand, with a {@code strata_context} processor) instead of an
         * inline one; the options above then go in {@code ext.strata_context} and override the pipeline's.
         */
        public Builder pipeline(String pipeline) {
            this.pipeline = pipeline;
            return this;
        }

        /** HTTP basic authentication (the security plugin's internal users). */
        public Builder basicAuth(String user, String password) {
            this.user = user;
            this.password = password;
            return this;
        }

        /** Trust the certificates of this PEM file (and only those) for HTTPS, e.g. the cluster's root CA. */
        public Builder caCertificate(Path pem) {
            this.sslContext = Tls.trusting(pem);
            return this;
        }

        /** The TLS context for HTTPS, when a PEM file is not enough (client certificates, a key store). */
        public Builder sslContext(SSLContext sslContext) {
            this.sslContext = sslContext;
            return this;
        }

        /** Connect and request time-out; default 60 s (the first query of a model may load it). */
        public Builder timeout(Duration timeout) {
            this.timeout = Objects.requireNonNull(timeout, "timeout");
            return this;
        }

        public StrataContentRetriever build() {
            if (url == null || url.isBlank()) {
                throw new IllegalArgumentException("[strata] [url] is required");
            }
            if (index == null || index.isBlank()) {
                throw new IllegalArgumentException("[strata] [index] is required");
            }
            if (k < 1) {
                throw new IllegalArgumentException("[strata] [k] must be at least 1, got [" + k + "]");
            }
            if ((user == null) != (password == null)) {
                throw new IllegalArgumentException("[strata] [basicAuth] needs both a user and a password");
            }
            // budget, mode, order, tokenizer are checked by the server, whose 400 names what is allowed
            return new StrataContentRetriever(this);
        }
    }
}
