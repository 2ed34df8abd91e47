package io.strata.it.secured;

import org.opensearch.client.Response;

import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code _compare} under the real security plugin: a caller without read on one side gets a 403 and no search runs (the
 * chunk indices' search stats of the compare group do not move); with document-level security the searches run as the
 * caller, so the comparison is of what that caller can read — a red-tenant reader never has a blue parent ranked, and
 * its questions about blue documents score 0 on both sides, while an unrestricted reader finds them.
 */
@SuppressWarnings("unchecked")
public class SecuredCompareIT extends SecuredRestTestCase {
    private static final String A = "sec-cmp-a-chunks";
    private static final String B = "sec-cmp-b-chunks";
    private static final String PATH = "/_plugins/_strata/_compare";
    private static boolean ingested;

    /** Red documents are about Hartfield and Randalls, blue ones about Donwell Abbey and Box Hill: each its own place. */
    private static String text(String tenant, int doc) {
        String place = switch (tenant + "-" + doc) {
            case "red-0" -> "Hartfield, where Mr. Woodhouse sat by the fire";
            case "red-1" -> "Randalls, where Mrs. Weston walked in the garden";
            case "blue-0" -> "Donwell Abbey, where the strawberries grew";
            default -> "Box Hill, where the picnic was held";
        };
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < 8; i++) {
            b.append("Letter ").append(doc).append(", line ").append(i).append(": the ").append(tenant)
                .append(" party went to ").append(place).append(", and everyone spoke of the weather there. ");
        }
        return b.toString().strip();
    }

    private static synchronized void ingestOnce() throws IOException {
        if (ingested) {
            return;
        }
        putPipeline("sec-cmp-40", "{\"field\": \"body\", \"target_index\": \"" + A + "\", \"copy_fields\": [\"tenant\"], "
            + "\"strategy\": {\"type\": \"recursive\", \"max_words\": 40}}");
        putPipeline("sec-cmp-15", "{\"field\": \"body\", \"target_index\": \"" + B + "\", \"copy_fields\": [\"tenant\"], "
            + "\"strategy\": {\"type\": \"recursive\", \"max_words\": 15}}");
        Map<String, Map<String, Object>> docs = new LinkedHashMap<>();
        for (String tenant : List.of("red", "blue")) {
            for (int d = 0; d < 2; d++) {
                docs.put(tenant + "-" + d, Map.of("body", text(tenant, d), "tenant", tenant));
            }
        }
        assertEquals(false, bulk("sec-cmp-src-a", "sec-cmp-40", docs).get("errors"));
        assertEquals(false, bulk("sec-cmp-src-b", "sec-cmp-15", docs).get("errors"));
        refresh(A);
        refresh(B);
        ingested = true;
    }

    private static String body() {
        return json(Map.of("a", A, "b", B, "k", 3, "questions", List.of(
            Map.of("question", "Who sat by the fire at Hartfield?", "source_id", "red-0"),
            Map.of("question", "Where was the picnic held on Box Hill?", "source_id", "blue-1"))));
    }

    private static long compareSearches(String index) throws IOException {
        Map<String, Object> stats = call("GET", "/" + index + "/_stats/search?groups=strata_compare");
        Map<String, Object> total = (Map<String, Object>) ((Map<String, Object>) ((Map<String, Object>) stats.get("_all")).get("total"))
            .get("search");
        Map<String, Object> groups = (Map<String, Object>) total.get("groups");
        Object group = groups == null ? null : groups.get("strata_compare");
        return group == null ? 0 : ((Number) ((Map<String, Object>) group).get("query_total")).longValue();
    }

    public void testACallerWithoutReadOnOneSide_gets403_andNoSearchRuns() throws Exception {
        ingestOnce();
        putRole("sec-cmp-a-only", List.of(), List.of(indexPermission(List.of(A), List.of("read"))));
        putUser("sec-cmp-a-only", "sec-cmp-a-only");
        long beforeA = compareSearches(A);
        long beforeB = compareSearches(B);
        Response refused = as("sec-cmp-a-only", "POST", PATH, body());
        assertEquals(bodyOf(refused), 403, status(refused));
        assertTrue(bodyOf(refused), bodyOf(refused).contains("no permissions for [indices:data/read/strata/compare]"));
        assertFalse(bodyOf(refused), bodyOf(refused).contains("per_question"));
        assertEquals("no search of [a] ran", beforeA, compareSearches(A));
        assertEquals("no search of [b] ran", beforeB, compareSearches(B));

        putRole("sec-cmp-reader", List.of(), List.of(indexPermission(List.of(A, B), List.of("read"))));
        putUser("sec-cmp-reader", "sec-cmp-reader");
        Response allowed = as("sec-cmp-reader", "POST", PATH, body());
        assertEquals(bodyOf(allowed), 200, status(allowed));
        assertEquals("one search per question and side", beforeA + 2, compareSearches(A));
        assertEquals("one search per question and side", beforeB + 2, compareSearches(B));
    }

    public void testUnderDocumentLevelSecurity_theComparisonIsOfWhatTheCallerCanRead() throws Exception {
        ingestOnce();
        putRole("sec-cmp-red", List.of(), List.of(Map.of("index_patterns", List.of(A, B), "allowed_actions", List.of("read"),
            "dls", "{\"term\": {\"tenant\": \"red\"}}")));
        putUser("sec-cmp-red", "sec-cmp-red");
        putRole("sec-cmp-all", List.of(), List.of(indexPermission(List.of(A, B), List.of("read"))));
        putUser("sec-cmp-all", "sec-cmp-all");

        Response all = as("sec-cmp-all", "POST", PATH, body());
        assertEquals(bodyOf(all), 200, status(all));
        List<Map<String, Object>> seenByAll = (List<Map<String, Object>>) entityAsMap(all).get("per_question");
        for (String side : List.of("a", "b")) {
            assertEquals(seenByAll.toString(), 1, ((Map<String, Object>) seenByAll.get(1).get(side)).get("rank"));
        }

        Response red = as("sec-cmp-red", "POST", PATH, body());
        assertEquals(bodyOf(red), 200, status(red));
        List<Map<String, Object>> seenByRed = (List<Map<String, Object>>) entityAsMap(red).get("per_question");
        for (String side : List.of("a", "b")) {
            Map<String, Object> redQuestion = (Map<String, Object>) seenByRed.get(0).get(side);
            Map<String, Object> blueQuestion = (Map<String, Object>) seenByRed.get(1).get(side);
            assertEquals(seenByRed.toString(), 0, blueQuestion.get("rank"));
            for (Map<String, Object> q : List.of(redQuestion, blueQuestion)) {
                Map<String, Object> top = (Map<String, Object>) q.get("top");
                assertTrue("only red parents: " + top, ((String) top.get("source_id")).startsWith("red-"));
            }
            assertTrue(seenByRed.toString(), ((Number) redQuestion.get("rank")).intValue() >= 1);
        }
    }
}
