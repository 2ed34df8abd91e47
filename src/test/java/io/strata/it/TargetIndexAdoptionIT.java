package io.strata.it;

import org.opensearch.client.ResponseException;

import java.io.IOException;
import java.util.Map;

/**
 * The node never acts as itself on an index Strata did not create or register: a pipeline's {@code target_index} may name a
 * new index, an empty one, or one registered to the source — an ordinary index that holds documents is a 400 before
 * anything is written, and it survives the delete of the source index; a mapping {@code _meta} that claims an index is an
 * old chunk index of the source does not make {@code _reconcile} register (or clean) it. Written first against the code
 * before the fix: the write succeeded ("Expected exception ResponseException but no exception was thrown"), and
 * {@code _reconcile} registered the forged index ("not registered: … expected null, but was:<…uuid…>") after deleting the
 * user's document in it as an orphan ({@code orphans=1, fixed=1}).
 */
@SuppressWarnings("unchecked")
public class TargetIndexAdoptionIT extends StrataRestTestCase {

    private static void pipeline(String name, String target) throws IOException {
        putPipeline(name, "{\"field\": \"body\", \"target_index\": \"" + target + "\", \"embed\": false, "
            + "\"strategy\": {\"type\": \"recursive\", \"max_words\": 25}}");
    }

    private static Object registeredSource(String index) throws IOException {
        Map<String, Object> indices = (Map<String, Object>) ((Map<String, Object>) call("GET", "/_cluster/state/metadata/" + index)
            .get("metadata")).get("indices");
        Object strata = ((Map<String, Object>) indices.get(index)).get("strata");
        return strata == null ? null : ((Map<String, Object>) strata).get("source_index_uuid");
    }

    public void testATargetIndexHoldingUserData_is400BeforeAnythingIsWritten_andSurvivesTheSourceDelete() throws Exception {
        call("PUT", "/ad-users", "{\"mappings\": {\"properties\": {\"name\": {\"type\": \"keyword\"}}}}");
        call("PUT", "/ad-users/_doc/u1?refresh=true", "{\"name\": \"Harriet Smith\"}");
        Map<String, Object> mappingBefore = call("GET", "/ad-users/_mapping");
        pipeline("ad-a", "ad-users");

        ResponseException e = callFailing("PUT", "/ad-a-src/_doc/1?pipeline=ad-a&refresh=true",
            json(Map.of("body", "Emma Woodhouse, handsome, clever, and rich, seemed to unite some of the best blessings.")));
        assertEquals(e.getMessage(), 400, e.getResponse().getStatusLine().getStatusCode());
        assertTrue(e.getMessage(), e.getMessage().contains("[target_index] [ad-users] is an existing index"));
        assertEquals("nothing written to the source", 0, indexExists("ad-a-src") ? count("ad-a-src") : 0);
        assertEquals("the user's index untouched", 1, count("ad-users"));
        assertEquals(mappingBefore, call("GET", "/ad-users/_mapping"));
        assertNull(registeredSource("ad-users"));

        call("PUT", "/ad-a-src/_doc/2?refresh=true", json(Map.of("title", "no pipeline")));
        call("DELETE", "/ad-a-src");
        assertTrue("the user's index stays", indexExists("ad-users"));
        assertEquals(1, count("ad-users"));
    }

    public void testAnEmptyExistingIndex_isAdoptedAndRegistered() throws Exception {
        call("PUT", "/ad-empty", "{}");
        pipeline("ad-b", "ad-empty");
        call("PUT", "/ad-b-src/_doc/1?pipeline=ad-b&refresh=true",
            json(Map.of("body", "Emma Woodhouse, handsome, clever, and rich, seemed to unite some of the best blessings.")));
        assertEquals(1, count("ad-empty"));
        assertNotNull(registeredSource("ad-empty"));
        // a second write into the registered index (which holds chunks now) is its own chunk index's write
        call("PUT", "/ad-b-src/_doc/2?pipeline=ad-b&refresh=true", json(Map.of("body", "Mr. Knightley was a sensible man.")));
        assertEquals(2, count("ad-empty"));
        call("DELETE", "/ad-b-src");
        assertFalse("deleted with its source", indexExists("ad-empty"));
    }

    public void testAMappingMetaClaimingAnOldChunkIndex_isNotRegisteredByReconcile_norDeletedWithTheSource() throws Exception {
        // any user who may map an index can write its _meta: this one says "chunk index of format 2 of ad-c-src"
        call("PUT", "/ad-forged", "{\"mappings\": {\"_meta\": {\"strata\": {\"format\": 2, \"source_index\": \"ad-c-src\"}}, "
            + "\"properties\": {\"name\": {\"type\": \"keyword\"}}}}");
        call("PUT", "/ad-forged/_doc/u1?refresh=true", "{\"name\": \"Jane Fairfax\"}");
        pipeline("ad-c", "ad-forged");
        call("PUT", "/ad-c-src/_doc/1?refresh=true", json(Map.of("title", "written without the pipeline")));

        // reported (409: what the run could not do), neither registered nor checked
        ResponseException refused = callFailing("POST", "/_plugins/_strata/_reconcile?index=ad-c-src", null);
        String report = refused.getMessage();
        assertEquals(report, 409, refused.getResponse().getStatusLine().getStatusCode());
        assertTrue(report, report.contains("[ad-forged] is not registered to [ad-c-src]"));
        assertTrue(report, report.contains("\"orphans\":0"));
        assertNull("not registered: " + report, registeredSource("ad-forged"));
        assertEquals("nothing of it deleted as an orphan: " + report, 1, count("ad-forged"));

        call("DELETE", "/ad-c-src");
        assertTrue("the forged index stays", indexExists("ad-forged"));
        assertEquals(1, count("ad-forged"));
    }
}
