package io.strata.it.secured;

import org.opensearch.client.Request;
import org.opensearch.client.Response;
import org.opensearch.client.ResponseException;

import java.util.List;
import java.util.Map;

/**
 * Strata's REST endpoints are governed by named transport actions that a role grants or denies under the real security
 * plugin: {@code cluster:admin/strata/chunk} ({@code _chunk}), {@code cluster:admin/strata/embed} ({@code _embed}),
 * {@code cluster:monitor/strata/stats} (stats) and {@code indices:admin/strata/reconcile} on the source index
 * ({@code _reconcile}). Each is tried by a user holding exactly that permission (200) and by one holding all the others
 * (403 naming the action), so a grant that covered more than its action, or a check that did not run, fails here.
 */
public class SecuredActionsIT extends SecuredRestTestCase {
    private record Endpoint(String action, boolean indexLevel, String method, String path, String body) {}

    private static final String SOURCE = "sec-act-src";

    private static final List<Endpoint> ENDPOINTS = List.of(
        new Endpoint("cluster:admin/strata/chunk", false, "POST", "/_plugins/_strata/_chunk",
            "{\"text\": \"Emma Woodhouse, handsome, clever, and rich. She had lived nearly twenty-one years in the world.\"}"),
        new Endpoint("cluster:admin/strata/embed", false, "POST", "/_plugins/_strata/_embed", "{\"texts\": [\"Emma Woodhouse\"]}"),
        new Endpoint("cluster:monitor/strata/stats", false, "GET", "/_plugins/_strata/stats", null),
        new Endpoint("indices:admin/strata/reconcile", true, "POST", "/_plugins/_strata/_reconcile?index=" + SOURCE + "&dry_run=true",
            null));

    private static void grant(String role, List<Endpoint> endpoints) throws Exception {
        List<String> cluster = endpoints.stream().filter(e -> !e.indexLevel()).map(Endpoint::action).toList();
        List<String> index = endpoints.stream().filter(Endpoint::indexLevel).map(Endpoint::action).toList();
        // _reconcile also refreshes and reads the source and chunk indices as the caller
        List<String> onIndex = new java.util.ArrayList<>(index);
        if (!index.isEmpty()) {
            onIndex.add("read");
            onIndex.add("indices:admin/refresh");
        }
        putRole(role, cluster, onIndex.isEmpty() ? List.of() : List.of(indexPermission(List.of(SOURCE, "sec-act-chunks"), onIndex)));
        putUser(role, role);
    }

    public void testEachEndpoint_isAllowedByItsOwnAction_andDeniedWithoutIt() throws Exception {
        putPipeline("sec-act", "{\"field\": \"body\", \"target_index\": \"sec-act-chunks\", \"embed\": false}");
        assertEquals(false, bulk(SOURCE, "sec-act", Map.of("a", Map.of("body", "Emma Woodhouse, handsome, clever, and rich."))).get("errors"));
        for (Endpoint endpoint : ENDPOINTS) {
            String name = endpoint.action().replaceAll("[^a-z]", "-");
            grant("sec-only-" + name, List.of(endpoint));
            grant("sec-all-but-" + name, ENDPOINTS.stream().filter(e -> e != endpoint).toList());

            Response allowed = as("sec-only-" + name, endpoint.method(), endpoint.path(), endpoint.body());
            assertEquals(endpoint.action() + ": " + bodyOf(allowed), 200, status(allowed));

            Response denied = as("sec-all-but-" + name, endpoint.method(), endpoint.path(), endpoint.body());
            String body = bodyOf(denied);
            assertEquals(endpoint.action() + ": " + body, 403, status(denied));
            assertTrue(endpoint.action() + ": " + body, body.contains("no permissions for [" + endpoint.action() + "]"));
        }
    }

    public void testStudioPage_needsAnAuthenticatedUser() throws Exception {
        Request anonymous = new Request("GET", "/_plugins/_strata/studio");
        anonymous.setOptions(anonymous.getOptions().toBuilder().addHeader("Authorization", ""));
        ResponseException e = expectThrows(ResponseException.class, () -> client().performRequest(anonymous));
        assertEquals(401, e.getResponse().getStatusLine().getStatusCode());
        // a user without any Strata action may load the page (it holds no data); what it then calls is checked per action
        putRole("sec-studio", List.of(), List.of());
        putUser("sec-studio", "sec-studio");
        Response page = as("sec-studio", "GET", "/_plugins/_strata/studio", null);
        assertEquals(200, status(page));
        assertTrue(bodyOf(page).contains("Strata Studio"));
        assertEquals(403, status(as("sec-studio", "POST", ENDPOINTS.get(0).path(), ENDPOINTS.get(0).body())));
    }
}
