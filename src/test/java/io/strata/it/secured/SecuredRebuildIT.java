package io.strata.it.secured;

import org.opensearch.client.Response;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code _rebuild} runs with the caller's permissions under the real security plugin: document-level security, field-level
 * security or masking on the source is a 403 before anything is read, and no generation index exists after it; a caller
 * who may not create the generation index gets a 403 and none is left; an unrestricted caller with the rights on the
 * generation's name builds it. Oracle: the source's documents, counted as admin, and chunk 0 of each in the generation.
 */
@SuppressWarnings("unchecked")
public class SecuredRebuildIT extends SecuredRestTestCase {
    private static final String SOURCE = "sec-rb-src";
    private static final String CHUNKS = "sec-rb-chunks";
    private static final String GENERATION = CHUNKS + "-g2";
    private static final List<String> CLUSTER = List.of("indices:data/write/bulk", "indices:data/read/mget",
        "indices:data/read/msearch");
    private static final List<String> ON_SOURCE = List.of("read", "indices:admin/strata/rebuild", "indices:admin/refresh*",
        "indices:monitor/stats");
    private static final List<String> ON_GENERATIONS = List.of("crud", "create_index", "indices:admin/refresh*",
        "indices:admin/mapping/put", "indices:admin/delete");

    public void testRebuild_runsAsTheCaller_refusingRestrictedViewsAndMissingRights() throws Exception {
        putPipeline("sec-rb", "{\"field\": \"body\", \"target_index\": \"" + CHUNKS + "\", \"embed\": false, "
            + "\"strategy\": {\"type\": \"recursive\", \"max_words\": 20}}");
        Map<String, Map<String, Object>> docs = new LinkedHashMap<>();
        for (int i = 0; i < 12; i++) {
            docs.put("d" + i, Map.of("body", "Document " + i + " tells how Emma walked from Hartfield to Highbury and talked with "
                + "Harriet about the weather, the vicar and the ball.", "tenant", i % 2 == 0 ? "red" : "blue"));
        }
        assertEquals(false, bulk(SOURCE, "sec-rb", docs).get("errors"));
        Map<String, Map<String, Object>> onSource = new LinkedHashMap<>();
        onSource.put("dls", Map.of("dls", "{\"term\": {\"tenant\": \"red\"}}"));
        onSource.put("fls", Map.of("fls", List.of("~tenant")));
        onSource.put("masked", Map.of("masked_fields", List.of("body")));
        for (var e : onSource.entrySet()) {
            String user = "sec-rb-" + e.getKey();
            putRole(user, CLUSTER, List.of(restricted(SOURCE, e.getValue(), ON_SOURCE),
                indexPermission(List.of(CHUNKS + "*"), ON_GENERATIONS)));
            putUser(user, user);
            Response r = as(user, "POST", "/_plugins/_strata/_rebuild?index=" + SOURCE + "&pipeline=sec-rb", null);
            String body = bodyOf(r);
            assertEquals(user + ": " + body, 403, status(r));
            assertTrue(user + ": " + body, body.contains("[_rebuild]") && body.contains("nothing was read or written"));
            assertFalse(user + ": no generation", exists("/" + GENERATION));
        }

        putRole("sec-rb-nocreate", CLUSTER, List.of(indexPermission(List.of(SOURCE), ON_SOURCE),
            indexPermission(List.of(CHUNKS + "*"), List.of("read"))));
        putUser("sec-rb-nocreate", "sec-rb-nocreate");
        Response refused = as("sec-rb-nocreate", "POST", "/_plugins/_strata/_rebuild?index=" + SOURCE + "&pipeline=sec-rb", null);
        assertEquals(bodyOf(refused), 403, status(refused));
        assertFalse("nothing created as the node", exists("/" + GENERATION));

        putRole("sec-rb-whole", CLUSTER, List.of(indexPermission(List.of(SOURCE), ON_SOURCE),
            indexPermission(List.of(CHUNKS + "*"), ON_GENERATIONS)));
        putUser("sec-rb-whole", "sec-rb-whole");
        Response built = as("sec-rb-whole", "POST", "/_plugins/_strata/_rebuild?index=" + SOURCE + "&pipeline=sec-rb", null);
        assertEquals(bodyOf(built), 200, status(built));
        assertEquals(bodyOf(built), GENERATION, entityAsMap(built).get("generation_index"));
        refresh(GENERATION);
        Map<String, Object> firsts = call("POST", "/" + GENERATION + "/_count", "{\"query\": {\"term\": {\"ordinal\": 0}}}");
        assertEquals(docs.size(), ((Number) firsts.get("count")).intValue());
    }
}
