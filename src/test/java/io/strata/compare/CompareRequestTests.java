package io.strata.compare;

import io.strata.chunking.ConfigException;
import org.junit.Test;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

public class CompareRequestTests {
    private static Map<String, Object> body(Object questions, Object... more) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("a", "books-chunks");
        body.put("b", "books-v2-chunks");
        body.put("questions", questions);
        for (int i = 0; i < more.length; i += 2) {
            body.put((String) more[i], more[i + 1]);
        }
        return body;
    }

    private static String error(Map<String, Object> body, int maxQuestions) {
        return assertThrows(IllegalArgumentException.class, () -> CompareRequest.parse(body, () -> maxQuestions)).getMessage();
    }

    @Test
    public void testParse_aFullBody_keepsEveryField_andDefaultsTheClusterToTheSourceId() {
        CompareRequest r = CompareRequest.parse(body(List.of(
            Map.of("question", "Who married Miss Taylor?", "source_id", "emma-1", "span", List.of(3, 40), "cluster", "p1"),
            Map.of("question", "Who is Emma?", "source_id", "emma-2")), "k", 5, "query", Map.of("mode", "dense"), "timeout", "5s"),
            () -> 1000);
        assertEquals(List.of(new CompareQuestion("Who married Miss Taylor?", "emma-1", 3, 40, "p1"),
            new CompareQuestion("Who is Emma?", "emma-2", -1, -1, "emma-2")), r.questions());
        assertEquals(5, r.k());
        assertEquals(Map.of("mode", "dense"), r.query());
        assertEquals(5_000, r.timeout().millis());
        assertEquals(List.of("books-chunks", "books-v2-chunks"), List.of(r.indices()));
    }

    @Test
    public void testParse_badFields_nameTheFieldAndWhatIsAllowed() {
        Map<String, Object> ok = Map.of("question", "Who?", "source_id", "d1");
        assertEquals("[_compare] [questions[1].span] must be [start, end]: two integers with 0 <= start < end (character offsets "
            + "into the source document's text), got [[5, 5]]",
            error(body(List.of(ok, Map.of("question", "Who?", "source_id", "d1", "span", List.of(5, 5)))), 10));
        assertEquals("[_compare] [questions[0].span] must be [start, end]: two integers with 0 <= start < end (character offsets "
            + "into the source document's text), got [[-1, 5]]",
            error(body(List.of(Map.of("question", "Who?", "source_id", "d1", "span", List.of(-1, 5)))), 10));
        assertEquals("[_compare] [questions[0].question] required property is missing",
            error(body(List.of(Map.of("source_id", "d1"))), 10));
        assertTrue(error(body(List.of("Who?")), 10).startsWith("[_compare] [questions[0]] must be an object with [question]"));
        assertEquals("[_compare] [questions[0].answer] is not a field of a question; supported: [question, source_id, span, cluster]",
            error(body(List.of(Map.of("question", "Who?", "source_id", "d1", "answer", "x"))), 10));
        assertEquals("[_compare] [query.k] is the body's [k]: set it there", error(body(List.of(ok), "query", Map.of("k", 3)), 10));
        assertEquals("[_compare] [k] must be an integer in [1, 2147483647], got [0]", error(body(List.of(ok), "k", 0), 10));
        assertEquals("[_compare] [timeout] must be a time value such as [30s], got [soon]", error(body(List.of(ok), "timeout", "soon"), 10));
        assertEquals("[_compare] [questions] may hold at most [1] questions on this cluster ([plugins.strata.compare.max_questions]), "
            + "got [2]", error(body(List.of(ok, ok)), 1));
        assertThrows(ConfigException.class, () -> CompareRequest.parse(body(List.of(ok), "b", ""), () -> 10));
    }

    /** {@code {"filter": bool(filter: [bool(... match_all)])}}: 3 levels a bool, 3 for the options, the match_all and its body. */
    private static Map<String, Object> deepFilter(int bools) {
        Object inner = Map.of("match_all", Map.of());
        for (int i = 0; i < bools; i++) {
            inner = Map.of("bool", Map.of("filter", List.of(inner)));
        }
        return Map.of("mode", "lexical", "filter", inner);
    }

    @Test
    public void testCheckQueryDepth_countsObjectsAndArrays_andRefusesOneLevelPastTheLimit_namingTheSetting() {
        CompareRequest.checkQueryDepth(deepFilter(32), 99); // 3 × 32 + 3 levels
        String error = assertThrows(IllegalArgumentException.class, () -> CompareRequest.checkQueryDepth(deepFilter(32), 98)).getMessage();
        assertEquals("[_compare] [query] nests deeper than [98] levels of objects and arrays; the limit is the node setting "
            + "[plugins.strata.compare.max_query_depth] (at most 300)", error);
        // 100,000 levels are counted without recursion
        assertThrows(IllegalArgumentException.class, () -> CompareRequest.checkQueryDepth(deepFilter(100_000), 300));
        CompareRequest.checkQueryDepth(Map.of("mode", "dense"), 1);
        assertThrows(IllegalArgumentException.class, () -> CompareRequest.checkQueryDepth(Map.of("rescore", Map.of()), 1));
    }

    @Test
    public void testRelevant_sameSourceAndAnOverlappingSpan_orAnyParentOfTheSourceWithoutOne() {
        CompareQuestion spanned = new CompareQuestion("q", "d1", 100, 120, "d1");
        assertTrue(spanned.relevant("d1", 90, 101));
        assertTrue(spanned.relevant("d1", 119, 300));
        assertFalse("touching at the end: [start, end) do not overlap", spanned.relevant("d1", 120, 300));
        assertFalse(spanned.relevant("d1", 0, 100));
        assertFalse(spanned.relevant("d2", 100, 120));
        CompareQuestion whole = new CompareQuestion("q", "d1", -1, -1, "d1");
        assertTrue(whole.relevant("d1", 5000, 6000));
        assertFalse(whole.relevant("d2", 0, 10));
    }
}
