package io.strata.search;

import io.strata.context.ContextOptions;
import org.junit.Test;
import org.opensearch.common.xcontent.json.JsonXContent;
import org.opensearch.core.xcontent.DeprecationHandler;
import org.opensearch.core.xcontent.NamedXContentRegistry;
import org.opensearch.core.xcontent.XContentParser;

import java.util.Map;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

public class ContextParamsTests {
    @Test
    public void testParse_requestOptions_overrideTheProcessorsKeyByKey() {
        ContextParams processor = ContextParams.parse("strata_context", Map.of("budget", 300, "order", "document"), ContextParams.DEFAULTS);
        ContextParams request = ContextParams.parse("ext.strata_context", Map.of("budget", 64, "separator", "\n---\n"), processor);
        assertEquals(64, request.budget());
        assertEquals(ContextOptions.Order.DOCUMENT, request.order());
        assertEquals("\n---\n", request.separator());
        assertTrue(request.neighbours());
        assertEquals(null, request.tokenizer());
        assertEquals(ContextParams.Seeds.EVIDENCE, request.seeds()); // the default: bin/strata-eval --context, both sets
        assertEquals(ContextParams.Seeds.CHUNK, ContextParams.parse("ext.strata_context", Map.of("seeds", "chunk"), processor).seeds());
    }

    @Test
    public void testParse_badValues_failNamingTheOptionAndWhatIsAllowed() {
        assertMessage(Map.of("budget", 0), "[ext.strata_context] [budget] must be an integer in [1, 100000]");
        assertMessage(Map.of("budget", "many"), "[ext.strata_context] [budget]");
        assertMessage(Map.of("order", "random"), "[ext.strata_context] [order] must be one of [rank, document], got [random]");
        assertMessage(Map.of("neighbours", "yes"), "[ext.strata_context] [neighbours]");
        assertMessage(Map.of("tokenizer", "../etc"), "[ext.strata_context] [tokenizer] must name an embedded model");
        assertMessage(Map.of("separator", 3), "[ext.strata_context] [separator] must be a string");
        assertMessage(Map.of("seeds", "words"), "[ext.strata_context] [seeds] must be one of [chunk, evidence], got [words]");
        assertMessage(Map.of("budgett", 3), "[ext.strata_context] unknown field [budgett]; supported: [budget, neighbours, order, "
            + "seeds, separator, tokenizer]");
    }

    @Test
    public void testExt_thatIsNotAnObject_isRefusedNamingIt_notReadAsNoOptions() throws Exception {
        for (String notAnObject : java.util.List.of("\"512\"", "null", "[512]", "512", "true")) {
            try (XContentParser parser = JsonXContent.jsonXContent.createParser(NamedXContentRegistry.EMPTY,
                DeprecationHandler.THROW_UNSUPPORTED_OPERATION, notAnObject)) {
                parser.nextToken(); // where OpenSearch's ext parsing hands over: at the value
                IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ContextExt.parse(parser));
                assertTrue(e.getMessage(), e.getMessage().startsWith("[ext.strata_context] must be an object of options"));
            }
        }
        try (XContentParser parser = JsonXContent.jsonXContent.createParser(NamedXContentRegistry.EMPTY,
            DeprecationHandler.THROW_UNSUPPORTED_OPERATION, "{\"budget\": 64}")) {
            parser.nextToken();
            assertEquals(64, ContextExt.parse(parser).options(ContextParams.DEFAULTS).budget());
        }
    }

    private static void assertMessage(Map<String, Object> config, String expected) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> ContextParams.parse("ext.strata_context", config, ContextParams.DEFAULTS));
        assertTrue(e.getMessage(), e.getMessage().startsWith(expected));
    }
}
