package io.strata.it.secured;

import io.strata.demo.Connection;
import io.strata.it.StrataRestTestCase;
import org.apache.hc.client5.http.impl.nio.PoolingAsyncClientConnectionManagerBuilder;
import org.apache.hc.client5.http.ssl.ClientTlsStrategyBuilder;
import org.apache.hc.core5.http.Header;
import org.apache.hc.core5.http.HttpHost;
import org.apache.hc.core5.http.message.BasicHeader;
import org.opensearch.client.Request;
import org.opensearch.client.RequestOptions;
import org.opensearch.client.Response;
import org.opensearch.client.ResponseException;
import org.opensearch.client.RestClient;
import org.opensearch.common.settings.Settings;

import javax.net.ssl.SSLContext;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * ITs against the secured cluster {@code bin/strata-test} starts with {@code bin/strata-node start --security}: the real
 * OpenSearch security plugin, HTTPS with its demo certificates (trusted through the CA in {@code strata.security.ca}, with
 * hostname verification), {@code admin} (all_access) with {@code strata.security.password}. {@link #client()} is admin;
 * {@link #as} sends a request as a user the test created through the security REST API with the roles it needs.
 * The cluster is not wiped between tests (admin may not delete the security plugin's own index): every test uses its own
 * index names.
 */
public abstract class SecuredRestTestCase extends StrataRestTestCase {
    protected static final String USER_PASSWORD = "Strata-Us3r-pass-7319!";

    @Override
    protected String getProtocol() {
        return "https";
    }

    @Override
    protected boolean preserveClusterUponCompletion() {
        return true;
    }

    @Override
    protected RestClient buildClient(Settings settings, HttpHost[] hosts) throws IOException {
        String password = System.getProperty("strata.security.password", "");
        assertFalse("strata.security.password is not set: run the secured ITs through bin/strata-test", password.isEmpty());
        SSLContext ssl = sslContext();
        return RestClient.builder(hosts)
            .setDefaultHeaders(new Header[] { authorization("admin", password) })
            .setHttpClientConfigCallback(b -> b.setConnectionManager(PoolingAsyncClientConnectionManagerBuilder.create()
                .setTlsStrategy(ClientTlsStrategyBuilder.create().setSslContext(ssl).build()).build()))
            .build();
    }

    /** Trusts exactly the cluster's CA (the demo root CA the security plugin's tool installed). */
    private static SSLContext sslContext() {
        String ca = System.getProperty("strata.security.ca", "");
        assertFalse("strata.security.ca is not set: run the secured ITs through bin/strata-test", ca.isEmpty());
        return Connection.trusting(Path.of(ca));
    }

    private static Header authorization(String user, String password) {
        return new BasicHeader("Authorization",
            "Basic " + Base64.getEncoder().encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8)));
    }

    /** Creates (or replaces) a role through the security REST API. */
    protected static void putRole(String name, List<String> clusterPermissions, List<Map<String, Object>> indexPermissions)
        throws IOException {
        call("PUT", "/_plugins/_security/api/roles/" + name,
            json(Map.of("cluster_permissions", clusterPermissions, "index_permissions", indexPermissions)));
    }

    /** One index permission: patterns, actions and optional DLS query / FLS fields. */
    protected static Map<String, Object> indexPermission(List<String> patterns, List<String> actions) {
        return Map.of("index_patterns", patterns, "allowed_actions", actions);
    }

    /** Each role, and a user of the same name holding it: two requests (each change reloads the security configuration). */
    protected static void putRolesAndUsers(Map<String, Map<String, Object>> roles) throws IOException {
        List<Object> roleOps = new ArrayList<>();
        List<Object> userOps = new ArrayList<>();
        for (var e : roles.entrySet()) {
            roleOps.add(Map.of("op", "add", "path", "/" + e.getKey(), "value", e.getValue()));
            userOps.add(Map.of("op", "add", "path", "/" + e.getKey(), "value", Map.of("password", USER_PASSWORD,
                "opendistro_security_roles", List.of(e.getKey()))));
        }
        call("PATCH", "/_plugins/_security/api/roles", jsonList(roleOps));
        call("PATCH", "/_plugins/_security/api/internalusers", jsonList(userOps));
    }

    private static String jsonList(List<Object> ops) {
        String wrapped = json(Map.of("ops", ops));
        return wrapped.substring("{\"ops\":".length(), wrapped.length() - 1);
    }

    /** One index permission with a restriction ({@code dls}, {@code fls}, {@code masked_fields}) on {@code index}. */
    protected static Map<String, Object> restricted(String index, Map<String, Object> restriction, List<String> actions) {
        Map<String, Object> p = new LinkedHashMap<>(restriction);
        p.put("index_patterns", List.of(index));
        p.put("allowed_actions", actions);
        return p;
    }

    /** Creates (or replaces) an internal user holding exactly {@code roles}. */
    protected static void putUser(String name, String... roles) throws IOException {
        call("PUT", "/_plugins/_security/api/internalusers/" + name,
            json(Map.of("password", USER_PASSWORD, "opendistro_security_roles", List.of(roles))));
    }

    /** Performs a request as {@code user}; answers the response whatever its status. */
    protected static Response as(String user, String method, String path, String body) throws IOException {
        Request request = new Request(method, path);
        if (body != null) {
            request.setJsonEntity(body);
        }
        request.setOptions(RequestOptions.DEFAULT.toBuilder().addHeader("Authorization",
            authorization(user, USER_PASSWORD).getValue()));
        try {
            return client().performRequest(request);
        } catch (ResponseException e) {
            return e.getResponse();
        }
    }

    protected static int status(Response response) {
        return response.getStatusLine().getStatusCode();
    }

    protected static String bodyOf(Response response) throws IOException {
        return response.getEntity() == null ? "" : new String(response.getEntity().getContent().readAllBytes(), StandardCharsets.UTF_8);
    }

    protected static boolean exists(String path) throws IOException {
        Request request = new Request("HEAD", path);
        try {
            return client().performRequest(request).getStatusLine().getStatusCode() == 200;
        } catch (ResponseException e) {
            return false;
        }
    }
}
