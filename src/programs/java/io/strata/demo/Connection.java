package io.strata.demo;

import org.apache.hc.client5.http.auth.AuthScope;
import org.apache.hc.client5.http.auth.UsernamePasswordCredentials;
import org.apache.hc.client5.http.impl.auth.BasicCredentialsProvider;
import org.apache.hc.client5.http.impl.nio.PoolingAsyncClientConnectionManagerBuilder;
import org.apache.hc.client5.http.ssl.ClientTlsStrategyBuilder;
import org.apache.hc.core5.http.HttpHost;
import org.apache.hc.core5.reactor.ssl.TlsDetails;
import org.opensearch.client.RestClient;
import org.opensearch.client.RestClientBuilder;

import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * How the programs (demo, benchmarks, evaluation, chaos and load runs) reach a node, plain or secured, from what
 * {@code bin/strata-node env --name NAME} prints: the URL comes from the program's argument, else {@code STRATA_URL},
 * else the program's default; for {@code https} the node's certificate is checked against the CA in the PEM file
 * {@code STRATA_CA} (the JVM's trust store without it), host name included, and requests carry basic auth from
 * {@code STRATA_USER} / {@code STRATA_PASSWORD} when set.
 */
public final class Connection {
    /** Connections per node and in all, as {@link RestClientBuilder} sets them when it builds its own connection manager. */
    private static final int MAX_CONN_PER_ROUTE = RestClientBuilder.DEFAULT_MAX_CONN_PER_ROUTE;
    private static final int MAX_CONN_TOTAL = RestClientBuilder.DEFAULT_MAX_CONN_TOTAL;

    private Connection() {}

    /** The node's URL: {@code given} (the program's argument, may be null), else {@code STRATA_URL}, else {@code fallback}. */
    public static String url(String given, String fallback) {
        return url(given, fallback, System.getenv());
    }

    static String url(String given, String fallback, Map<String, String> env) {
        if (given != null && !given.isBlank()) {
            return given;
        }
        String fromEnv = env.get("STRATA_URL");
        return fromEnv != null && !fromEnv.isBlank() ? fromEnv : fallback;
    }

    /**
     * URLs of {@code count} nodes of one local cluster, on ports {@code port}, {@code port + 1}, ...: the scheme and host
     * of {@code STRATA_URL} (else {@code http://127.0.0.1}); the first port is {@code port} (the program's argument, may be
     * null), else {@code STRATA_URL}'s, else {@code defaultPort}.
     */
    public static List<String> nodes(String port, int defaultPort, int count) {
        return nodes(port, defaultPort, count, System.getenv());
    }

    static List<String> nodes(String port, int defaultPort, int count, Map<String, String> env) {
        URI base = URI.create(url(null, "http://127.0.0.1:" + defaultPort, env));
        int first = port != null && !port.isBlank() ? Integer.parseInt(port) : base.getPort() > 0 ? base.getPort() : defaultPort;
        List<String> urls = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            urls.add(base.getScheme() + "://" + base.getHost() + ":" + (first + i));
        }
        return List.copyOf(urls);
    }

    /** A client builder for the node at {@code url}, with TLS and credentials from the environment (see the class). */
    public static RestClientBuilder builder(String url) {
        return builder(url, System.getenv());
    }

    static RestClientBuilder builder(String url, Map<String, String> env) {
        HttpHost host;
        try {
            host = HttpHost.create(url);
        } catch (Exception e) {
            throw new IllegalArgumentException("not a node URL: [" + url + "]", e);
        }
        RestClientBuilder builder = RestClient.builder(host);
        boolean https = "https".equalsIgnoreCase(host.getSchemeName());
        String ca = env.get("STRATA_CA");
        SSLContext ssl = https && ca != null && !ca.isBlank() ? trusting(Path.of(ca)) : null;
        String user = env.get("STRATA_USER");
        String password = env.getOrDefault("STRATA_PASSWORD", "");
        boolean auth = user != null && !user.isBlank();
        if (ssl == null && !auth) {
            return builder; // exactly what the programs built before: plain http, or https trusting the JVM's CAs
        }
        return builder.setHttpClientConfigCallback(b -> {
            if (ssl != null) {
                b.setConnectionManager(PoolingAsyncClientConnectionManagerBuilder.create()
                    .setMaxConnPerRoute(MAX_CONN_PER_ROUTE)
                    .setMaxConnTotal(MAX_CONN_TOTAL)
                    .setTlsStrategy(ClientTlsStrategyBuilder.create()
                        .setSslContext(ssl) // host name verification stays on (the default verifier)
                        // as RestClientBuilder does, see HTTPCLIENT-2219
                        .setTlsDetailsFactory(e -> new TlsDetails(e.getSession(), e.getApplicationProtocol()))
                        .build())
                    .build());
            }
            if (auth) {
                BasicCredentialsProvider credentials = new BasicCredentialsProvider();
                credentials.setCredentials(new AuthScope(host), new UsernamePasswordCredentials(user, password.toCharArray()));
                b.setDefaultCredentialsProvider(credentials);
            }
            return b;
        });
    }

    /** An SSL context trusting the certificates of the PEM file {@code caPem} (and only those); the secured ITs use it too. */
    public static SSLContext trusting(Path caPem) {
        try (InputStream in = Files.newInputStream(caPem)) {
            KeyStore trust = KeyStore.getInstance(KeyStore.getDefaultType());
            trust.load(null, null);
            int n = 0;
            for (Certificate cert : CertificateFactory.getInstance("X.509").generateCertificates(in)) {
                trust.setCertificateEntry("strata-ca-" + n++, cert);
            }
            if (n == 0) {
                throw new IllegalArgumentException("no certificate in STRATA_CA [" + caPem + "]");
            }
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(trust);
            SSLContext ctx = SSLContext.getInstance("TLS");
            ctx.init(null, tmf.getTrustManagers(), null);
            return ctx;
        } catch (IOException | GeneralSecurityException e) {
            throw new IllegalArgumentException("cannot read the CA of STRATA_CA [" + caPem + "]: " + e.getMessage(), e);
        }
    }
}
