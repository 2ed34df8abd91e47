package io.strata.query;

import io.strata.model.ModelRef;
import io.strata.stats.StrataStats;
import org.junit.Test;
import org.opensearch.common.io.stream.BytesStreamOutput;
import org.opensearch.common.settings.Settings;
import org.opensearch.common.xcontent.XContentFactory;
import org.opensearch.common.xcontent.json.JsonXContent;
import org.opensearch.core.common.bytes.BytesReference;
import org.opensearch.core.common.io.stream.NamedWriteableAwareStreamInput;
import org.opensearch.core.common.io.stream.NamedWriteableRegistry;
import org.opensearch.core.xcontent.DeprecationHandler;
import org.opensearch.core.xcontent.NamedXContentRegistry;
import org.opensearch.core.xcontent.XContentParser;
import org.opensearch.index.query.QueryBuilders;
import org.opensearch.search.SearchModule;

import java.util.List;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotEquals;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

/** JSON and wire round trips, equality and validation of the query builder. */
public class MultiGranularQueryBuilderTests {
    private static final SearchModule SEARCH = new SearchModule(Settings.EMPTY, List.of());
    private static final NamedWriteableRegistry WRITEABLES = new NamedWriteableRegistry(SEARCH.getNamedWriteables());
    private static final NamedXContentRegistry XCONTENT = new NamedXContentRegistry(SEARCH.getNamedXContents());
    private static final QueryServices SERVICES = new QueryServices(() -> null, () -> null, () -> null, new StrataStats(), () -> null);

    private static MultiGranularQueryBuilder parse(String json) throws Exception {
        try (XContentParser p = JsonXContent.jsonXContent.createParser(XCONTENT, DeprecationHandler.THROW_UNSUPPORTED_OPERATION, json)) {
            p.nextToken(); // {
            p.nextToken(); // multi_granular
            p.nextToken(); // {
            return MultiGranularQueryBuilder.fromXContent(p, SERVICES);
        }
    }

    private static List<MultiGranularQueryBuilder> samples() {
        return List.of(
            MultiGranularQueryBuilder.of("why?", null, null, null, null, null, null, null, SERVICES),
            MultiGranularQueryBuilder.of("why?", null, null, 7, List.of(0, 2), QueryBuilders.termQuery("title", "Emma"), true,
                ModelRef.embedded("bge-small-en-v15-q"), SERVICES),
            MultiGranularQueryBuilder.of("why?", null, null, 3, null, null, false, new ModelRef(null, "abc"), SERVICES),
            MultiGranularQueryBuilder.of(null, new float[] { 0.5f, -0.25f, 1f }, null, 20, List.of(1), null, true, null, SERVICES),
            MultiGranularQueryBuilder.of(null, new float[] { 0.5f, -0.25f, 1f }, null, 20, List.of(1), null, true, null, SERVICES)
                .numCandidates(100),
            MultiGranularQueryBuilder.of(null, null, "Hannah", null, List.of(0, 1, 2), null, true, null, SERVICES),
            MultiGranularQueryBuilder.of("why?", null, null, null, null, null, null, null, SERVICES).mode(MultiGranularQueryBuilder.Mode.DENSE),
            MultiGranularQueryBuilder.of("why?", null, null, null, null, null, null, null, SERVICES).mode(MultiGranularQueryBuilder.Mode.LEXICAL),
            MultiGranularQueryBuilder.of("why?", null, null, null, null, null, null, null, SERVICES).mode(MultiGranularQueryBuilder.Mode.HYBRID),
            MultiGranularQueryBuilder.of("why?", null, null, null, null, null, null, null, SERVICES)
                .fusion(new Fusion(Fusion.Method.RRF, 0.3, 50, 10)),
            MultiGranularQueryBuilder.of("why?", null, null, null, null, null, null, null, SERVICES)
                .fusion(new Fusion(Fusion.Method.MIN_MAX, 0.7, null, Fusion.DEFAULT_RANK_CONSTANT)),
            MultiGranularQueryBuilder.of("why?", null, null, null, null, null, null, null, SERVICES).evidence(new Evidence(3, 3)),
            MultiGranularQueryBuilder.of("why?", null, null, null, null, null, true, null, SERVICES).evidence(new Evidence(1, 0)),
            MultiGranularQueryBuilder.of("why?", null, null, null, null, null, null, null, SERVICES).rescore(Rescore.OFF),
            MultiGranularQueryBuilder.of(null, new float[] { 0.5f, -0.25f, 1f }, null, 20, null, null, null, null, SERVICES)
                .rescore(new Rescore(true, 2.5)));
    }

    @Test
    public void testRescore_parsesTrueFalseAndTheFactor_andRefusesTheRest() throws Exception {
        assertEquals(Rescore.DEFAULT, parse("{\"multi_granular\": {\"query_text\": \"why?\", \"rescore\": true}}").rescore());
        assertEquals(Rescore.OFF, parse("{\"multi_granular\": {\"query_text\": \"why?\", \"rescore\": false}}").rescore());
        assertEquals(new Rescore(true, 1.5), parse("{\"multi_granular\": {\"query_text\": \"why?\", \"rescore\": "
            + "{\"oversample_factor\": 1.5}}}").rescore());
        assertEquals(Rescore.DEFAULT, parse("{\"multi_granular\": {\"query_text\": \"why?\", \"rescore\": {}}}").rescore());
        assertEquals(null, parse("{\"multi_granular\": {\"query_text\": \"why?\"}}").rescore());
        assertEquals(60, Rescore.DEFAULT.graphCandidates(20, 10_000));
        assertEquals(30, new Rescore(true, 1.5).graphCandidates(20, 10_000));
        assertEquals(27, new Rescore(true, 1.25).graphCandidates(21, 10_000)); // ceil(26.25)
        assertEquals(10_000, new Rescore(true, 10).graphCandidates(5_000, 10_000));
        assertEquals(20, Rescore.OFF.graphCandidates(20, 10_000));
        for (String[] bad : new String[][] {
            { "{\"oversample_factor\": 0.99}", "[rescore.oversample_factor] must be in [1, 10], got [0.99]" },
            { "{\"oversample_factor\": 10.5}", "[rescore.oversample_factor] must be in [1, 10]" },
            { "{\"factor\": 2}", "[rescore]" },
            { "\"on\"", "[rescore] must be true, false or an object" },
            { "[2]", "[rescore] must be true, false or an object" } }) {
            Exception e = assertThrows(bad[0], Exception.class, () -> parse("{\"multi_granular\": {\"query_text\": \"why?\", "
                + "\"rescore\": " + bad[0] + "}}"));
            StringBuilder messages = new StringBuilder();
            for (Throwable t = e; t != null; t = t.getCause()) {
                messages.append(t.getMessage()).append(" | ");
            }
            assertTrue(bad[0] + ": " + messages, messages.toString().contains(bad[1]));
        }
        Exception lexical = assertThrows(IllegalArgumentException.class, () -> parse("{\"multi_granular\": {\"match\": \"why\", "
            + "\"rescore\": true}}"));
        assertTrue(lexical.getMessage(), lexical.getMessage().contains("[rescore]") && lexical.getMessage().contains("[match]"));
    }

    @Test
    public void testJsonRoundTrip_givesAnEqualBuilder() throws Exception {
        for (MultiGranularQueryBuilder b : samples()) {
            String json = BytesReference.bytes(b.toXContent(XContentFactory.jsonBuilder(), null)).utf8ToString();
            MultiGranularQueryBuilder parsed = parse("{" + json.substring(1));
            assertEquals(json, b, parsed);
            assertEquals(b.hashCode(), parsed.hashCode());
        }
    }

    @Test
    public void testWireRoundTrip_givesAnEqualBuilder() throws Exception {
        for (MultiGranularQueryBuilder b : samples()) {
            try (BytesStreamOutput out = new BytesStreamOutput()) {
                b.writeTo(out);
                var in = new NamedWriteableAwareStreamInput(out.bytes().streamInput(), WRITEABLES);
                assertEquals(b, new MultiGranularQueryBuilder(in, SERVICES));
            }
        }
    }

    @Test
    public void testEquality_dependsOnEveryParameter() {
        List<MultiGranularQueryBuilder> s = samples();
        for (int i = 0; i < s.size(); i++) {
            for (int j = 0; j < s.size(); j++) {
                if (i != j) {
                    assertNotEquals(s.get(i), s.get(j));
                }
            }
        }
    }

    @Test
    public void testParse_rejectsBadCombinationsWithTheFieldName() {
        assertTrue(assertThrows(Exception.class, () -> parse("{\"multi_granular\": {\"k\": 2}}")).getMessage()
            .contains("needs exactly one of [query_text], [vector] and [match]"));
        assertTrue(assertThrows(Exception.class, () -> parse("{\"multi_granular\": {\"match\": \"x\", \"vector\": [1]}}")).getMessage()
            .contains("not allowed together"));
        assertTrue(assertThrows(Exception.class, () -> parse("{\"multi_granular\": {\"query_text\": \"x\", \"levels\": [1, 1]}}"))
            .getMessage().contains("[levels] must be distinct levels in [0, 4]"));
        assertTrue(assertThrows(Exception.class, () -> parse("{\"multi_granular\": {\"query_text\": \"x\", \"k\": 10001}}"))
            .getMessage().contains("[k] must be in [1, 10000]"));
        assertTrue(assertThrows(Exception.class, () -> parse("{\"multi_granular\": {\"query_text\": \"x\", \"k\": 20, \"num_candidates\": 19}}"))
            .getMessage().contains("[num_candidates] must be in [k, 10000] = [20, 10000], got [19]"));
        assertTrue(assertThrows(Exception.class, () -> parse("{\"multi_granular\": {\"match\": \"x\", \"num_candidates\": 50}}"))
            .getMessage().contains("[num_candidates] sizes the dense graph search: not with [match] or [mode: lexical]"));
        assertTrue(assertThrows(Exception.class, () -> parse("{\"multi_granular\": {\"query_text\": \" \"}}")).getMessage()
            .contains("[query_text] must not be empty"));
        assertTrue(assertThrows(Exception.class,
            () -> parse("{\"multi_granular\": {\"query_text\": \"x\", \"model\": \"a\", \"model_id\": \"b\"}}")).getMessage()
            .contains("not allowed together: [model, model_id]"));
    }

    private static String parseError(String body) {
        Exception e = assertThrows(Exception.class, () -> parse("{\"multi_granular\": " + body + "}"));
        StringBuilder all = new StringBuilder();
        for (Throwable t = e; t != null; t = t.getCause()) {
            all.append(t.getMessage()).append(" | ");
        }
        return all.toString();
    }

    private static void assertRejected(String body, String expected) {
        String message = parseError(body);
        assertTrue("expected [" + expected + "] in " + message, message.contains(expected));
    }

    @Test
    public void testParse_rejectsBadModesAndFusionsWithTheFieldAndWhatIsAllowed() {
        assertRejected("{\"query_text\": \"x\", \"mode\": \"sparse\"}", "[mode] must be one of [hybrid, dense, lexical], got [sparse]");
        assertRejected("{\"vector\": [1], \"mode\": \"hybrid\"}", "[vector] is the dense mode; [mode: hybrid] needs [query_text]");
        assertRejected("{\"match\": \"x\", \"mode\": \"dense\"}", "[match] is the lexical mode; [mode: dense] needs [query_text]");
        assertRejected("{\"query_text\": \"x\", \"mode\": \"lexical\", \"model\": \"m\"}", "not with [mode: lexical]");
        assertRejected("{\"query_text\": \"x\", \"mode\": \"lexical\", \"num_candidates\": 20}",
            "[num_candidates] sizes the dense graph search");
        assertRejected("{\"query_text\": \"x\", \"mode\": \"dense\", \"fusion\": {}}", "[fusion] goes with the hybrid mode");
        assertRejected("{\"match\": \"x\", \"fusion\": {}}", "[fusion] goes with the hybrid mode");
        assertRejected("{\"query_text\": \"x\", \"fusion\": {\"method\": \"sum\"}}", "[fusion.method] must be one of [min_max, rrf], got [sum]");
        assertRejected("{\"query_text\": \"x\", \"fusion\": {\"dense_weight\": 1.5}}", "[fusion.dense_weight] must be in [0, 1], got [1.5]");
        assertRejected("{\"query_text\": \"x\", \"fusion\": {\"window\": 0}}", "[fusion.window] must be in [1, 10000], got [0]");
        assertRejected("{\"query_text\": \"x\", \"k\": 30, \"fusion\": {\"window\": 20}}", "[fusion.window] must be at least [k] = 30, got [20]");
        assertRejected("{\"query_text\": \"x\", \"fusion\": {\"rank_constant\": 5}}", "[fusion.rank_constant] goes with [method: rrf] only");
        assertRejected("{\"query_text\": \"x\", \"fusion\": {\"method\": \"rrf\", \"rank_constant\": -1}}",
            "[fusion.rank_constant] must be >= 0, got [-1]");
        assertRejected("{\"query_text\": \"x\", \"fusion\": {\"weight\": 0.5}}", "unknown field [weight]");
    }

    @Test
    public void testParse_evidence_defaultsAndRejectsWithTheFieldAndWhatIsAllowed() throws Exception {
        assertEquals(new Evidence(Evidence.DEFAULT_CHUNKS, Evidence.DEFAULT_SENTENCES),
            parse("{\"multi_granular\": {\"query_text\": \"x\", \"evidence\": {}}}").evidence());
        assertEquals(new Evidence(5, 0), parse("{\"multi_granular\": {\"query_text\": \"x\", \"evidence\": {\"chunks\": 5, \"sentences\": 0}}}")
            .evidence());
        assertRejected("{\"query_text\": \"x\", \"evidence\": {\"chunks\": 0}}", "[evidence.chunks] must be in [1, 20], got [0]");
        assertRejected("{\"query_text\": \"x\", \"evidence\": {\"sentences\": 11}}", "[evidence.sentences] must be in [0, 10], got [11]");
        assertRejected("{\"query_text\": \"x\", \"evidence\": {\"spans\": 1}}", "allowed: [chunks] (1–20, default 3), [sentences]");
    }

    @Test
    public void testRewrite_withEvidenceButNoCoordinator_isA400SayingSo() {
        MultiGranularQueryBuilder b = MultiGranularQueryBuilder.of(null, null, "Hannah", null, null, null, false, null, SERVICES)
            .evidence(new Evidence(2, 1));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> b.rewrite(null)).getMessage()
            .contains("[evidence] needs the planning of the request's coordinating node"));
    }

    @Test
    public void testRewrite_ofLexicalMode_isADisMaxOfParentAndNestedChildren() throws Exception {
        MultiGranularQueryBuilder b = MultiGranularQueryBuilder.of(null, null, "Hannah", null, List.of(0, 2), null, false, null, SERVICES);
        var rewritten = b.rewrite(null);
        String json = BytesReference.bytes(rewritten.toXContent(XContentFactory.jsonBuilder(), null)).utf8ToString();
        assertTrue(json, json.startsWith("{\"dis_max\""));
        assertTrue(json, json.contains("\"nested\"") && json.contains("\"score_mode\":\"max\"") && json.contains("\"children.level\":[2]"));
    }
}
