package io.strata.it.secured;

import org.opensearch.client.Response;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Vectors and the children's texts stay out of chunk hits under the real security plugin as they do without it, whatever
 * restriction the caller's role puts on the chunk index, and a search through an alias of it too: the filter runs after
 * the security plugin's, in the caller's context, and reads nothing but the cluster state; leaving fields out shows
 * nothing new. A search that asks for {@code _source} gets what it asked for, within what the caller may see. Oracle: the
 * chunk documents read as admin with {@code _source: true}, minus the vector fields and the children's texts, minus what
 * each restriction hides (DLS: other tenants' chunks; FLS: the hidden fields; masking: the field's value replaced).
 */
@SuppressWarnings("unchecked")
public class SecuredChunkVectorsIT extends SecuredRestTestCase {
    private static final String SOURCE = "sec-vec-src";
    private static final String CHUNKS = "sec-vec-chunks";
    private static final String ALIAS = "sec-vec-alias";
    private static final List<String> READ = List.of("read", "indices:admin/refresh");

    private static String text(String tenant, int doc) {
        return ("Letter " + doc + " of the " + tenant + " party: they walked from Hartfield to Highbury and spoke of the weather. ")
            .repeat(5).strip();
    }

    /** Each hit's {@code _source} by id, of a search for every chunk as {@code user}. */
    private static Map<String, Map<String, Object>> sources(String user, String index, String sourceClause) throws IOException {
        String body = "{\"size\": 100" + sourceClause + ", \"query\": {\"match_all\": {}}}";
        Map<String, Object> response;
        if (user == null) {
            response = call("POST", "/" + index + "/_search", body); // as admin
        } else {
            Response r = as(user, "POST", "/" + index + "/_search", body);
            assertEquals(user + ": " + bodyOf(r), 200, status(r));
            response = entityAsMap(r);
        }
        Map<String, Map<String, Object>> out = new TreeMap<>();
        for (Object hit : (List<Object>) ((Map<String, Object>) response.get("hits")).get("hits")) {
            Map<String, Object> h = (Map<String, Object>) hit;
            out.put((String) h.get("_id"), (Map<String, Object>) h.get("_source"));
        }
        return out;
    }

    /** {@code source} without the parent's and each child's vector and the children's texts: what a hit carries by default. */
    private static Map<String, Object> lean(Map<String, Object> source) {
        Map<String, Object> out = new LinkedHashMap<>(source);
        out.remove("embedding");
        List<Object> children = new ArrayList<>();
        for (Object c : (List<Object>) source.get("children")) {
            Map<String, Object> child = new LinkedHashMap<>((Map<String, Object>) c);
            child.remove("embedding");
            child.remove("text");
            children.add(child);
        }
        out.put("children", children);
        return out;
    }

    private static Map<String, Object> role(Map<String, Object> indexPermission) {
        return Map.of("cluster_permissions", List.of(), "index_permissions", List.of(indexPermission));
    }

    private static boolean hasVector(Map<String, Object> source) {
        if (source.containsKey("embedding")) {
            return true;
        }
        Object children = source.get("children");
        return children instanceof List<?> list && list.stream().anyMatch(c -> ((Map<String, Object>) c).containsKey("embedding"));
    }

    public void testChunkHits_carryNoVectorsByDefault_underEveryRestrictionAndThroughAnAlias() throws Exception {
        putPipeline("sec-vec", "{\"field\": \"body\", \"target_index\": \"" + CHUNKS + "\", \"copy_fields\": [\"tenant\"], "
            + "\"strategy\": {\"type\": \"recursive\", \"max_words\": 30}}");
        Map<String, Map<String, Object>> docs = new LinkedHashMap<>();
        for (String tenant : List.of("red", "blue")) {
            docs.put(tenant + "-1", Map.of("body", text(tenant, 1), "tenant", tenant));
        }
        assertEquals(false, bulk(SOURCE, "sec-vec", docs).get("errors"));
        refresh(CHUNKS);
        call("POST", "/_aliases", json(Map.of("actions", List.of(Map.of("add", Map.of("index", CHUNKS, "alias", ALIAS))))));

        Map<String, Map<String, Object>> whole = sources(null, CHUNKS, ", \"_source\": true");
        assertTrue("chunks of both tenants: " + whole.keySet(), whole.size() >= 4);
        for (Map<String, Object> s : whole.values()) {
            assertTrue("an explicit _source keeps the vectors: " + s.keySet(), hasVector(s));
        }

        Map<String, Map<String, Object>> roles = new LinkedHashMap<>();
        roles.put("sec-vec-whole", role(indexPermission(List.of(CHUNKS, ALIAS), READ)));
        roles.put("sec-vec-dls", role(restricted(CHUNKS, Map.of("dls", "{\"term\": {\"tenant\": \"red\"}}"), READ)));
        roles.put("sec-vec-fls-include", role(restricted(CHUNKS, Map.of("fls", List.of("text", "source_id", "ordinal",
            "children", "children.*", "embedding")), READ)));
        roles.put("sec-vec-fls-exclude", role(restricted(CHUNKS, Map.of("fls", List.of("~tenant")), READ)));
        roles.put("sec-vec-masked", role(restricted(CHUNKS, Map.of("masked_fields", List.of("tenant")), READ)));
        roles.put("sec-vec-fls-notext", role(restricted(CHUNKS, Map.of("fls", List.of("~text")), READ)));
        putRolesAndUsers(roles);

        // unrestricted, on the index and through the alias: exactly the documents without their vectors and child texts
        Map<String, Map<String, Object>> expected = new TreeMap<>();
        whole.forEach((id, s) -> expected.put(id, lean(s)));
        assertEquals(expected, sources("sec-vec-whole", CHUNKS, ""));
        assertEquals(expected, sources("sec-vec-whole", ALIAS, ""));
        // ... and an explicit _source is kept as written
        assertEquals(whole, sources("sec-vec-whole", CHUNKS, ", \"_source\": true"));

        // DLS: the red tenant's chunks only, lean
        Map<String, Map<String, Object>> red = new TreeMap<>();
        expected.forEach((id, s) -> {
            if ("red".equals(s.get("tenant"))) {
                red.put(id, s);
            }
        });
        assertFalse(red.isEmpty());
        assertEquals(red, sources("sec-vec-dls", CHUNKS, ""));

        // FLS and masking: the visible fields, no vector (the include list grants `embedding`: the default leaves it out)
        for (String user : List.of("sec-vec-fls-include", "sec-vec-fls-exclude", "sec-vec-masked")) {
            Map<String, Map<String, Object>> seen = sources(user, CHUNKS, "");
            assertEquals(user, expected.keySet(), seen.keySet());
            for (var e : seen.entrySet()) {
                Map<String, Object> s = e.getValue();
                Map<String, Object> oracle = expected.get(e.getKey());
                assertFalse(user + " got a vector: " + s.keySet(), hasVector(s));
                assertEquals(user, oracle.get("text"), s.get("text"));
                assertEquals(user, oracle.get("children"), s.get("children"));
                switch (user) {
                    case "sec-vec-fls-include" -> assertEquals(user, List.of("children", "ordinal", "source_id", "text"),
                        s.keySet().stream().sorted().toList());
                    case "sec-vec-fls-exclude" -> assertFalse(user, s.containsKey("tenant"));
                    default -> assertNotEquals(user + " saw the tenant unmasked", oracle.get("tenant"), s.get("tenant"));
                }
            }
        }
        // FLS hiding the parent's text: a lean hit then has no text at all; asked for, the children's texts the role shows
        for (var e : sources("sec-vec-fls-notext", CHUNKS, "").entrySet()) {
            Map<String, Object> oracle = new LinkedHashMap<>(expected.get(e.getKey()));
            oracle.remove("text");
            assertEquals(oracle, e.getValue());
        }
        for (var e : sources("sec-vec-fls-notext", CHUNKS, ", \"_source\": {\"excludes\": [\"embedding\", \"children.embedding\"]}")
            .entrySet()) {
            Map<String, Object> s = e.getValue();
            assertFalse(s.containsKey("text"));
            List<Object> texts = ((List<Object>) s.get("children")).stream().map(c -> ((Map<String, Object>) c).get("text")).toList();
            List<Object> oracle = ((List<Object>) whole.get(e.getKey()).get("children")).stream()
                .map(c -> ((Map<String, Object>) c).get("text")).toList();
            assertEquals(oracle, texts);
            assertTrue(texts.stream().anyMatch(java.util.Objects::nonNull));
        }
        // the include list grants the vector: asked for, it comes
        for (Map<String, Object> s : sources("sec-vec-fls-include", CHUNKS, ", \"_source\": true").values()) {
            assertTrue(hasVector(s));
        }
    }
}
