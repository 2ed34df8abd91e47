package io.strata.inference.transport;

import io.strata.model.ModelRef;
import io.strata.chunking.Embedder;
import org.opensearch.action.ActionRequest;
import org.opensearch.action.ActionRequestValidationException;
import org.opensearch.core.action.ActionResponse;
import org.opensearch.core.common.io.stream.StreamOutput;
import org.junit.Test;

import java.io.IOException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

/** Another plugin calls the embed action with its own classes of the same wire format (see the stand-in plugin). */
public class EmbedWireTests {

    /** What another plugin's copy of the request looks like: a different class, written by hand from the documented format. */
    private static final class MirrorRequest extends ActionRequest {
        @Override
        public ActionRequestValidationException validate() {
            return null;
        }

        @Override
        public void writeTo(StreamOutput out) throws IOException {
            super.writeTo(out);
            out.writeOptionalString(null);
            out.writeOptionalString("standin-embed");
            out.writeString("QUERY");
            out.writeStringCollection(List.of("what is a cat?", "kittens"));
        }
    }

    @Test
    public void testFromActionRequest_readsAnotherClassOfTheSameFormat() {
        EmbedRequest r = EmbedRequest.fromActionRequest(new MirrorRequest());
        assertEquals(new ModelRef(null, "standin-embed"), r.ref());
        assertEquals(Embedder.Purpose.QUERY, r.purpose());
        assertEquals(List.of("what is a cat?", "kittens"), r.texts());
        assertNull(r.validate());
    }

    @Test
    public void testFromActionResponse_readsAnotherClassOfTheSameFormat() {
        EmbedResponse ours = new EmbedResponse(ModelRef.embedded("bge-small-en-v15-q"), List.of(new float[] {0.6f, 0.8f}, new float[] {1, 0}));
        ActionResponse foreign = new ActionResponse() {
            @Override
            public void writeTo(StreamOutput out) throws IOException {
                ours.writeTo(out);
            }
        };
        EmbedResponse back = EmbedResponse.fromActionResponse(foreign);
        assertEquals(ModelRef.embedded("bge-small-en-v15-q"), back.ref());
        assertEquals(2, back.dimension());
        assertArrayEquals(new float[] {0.6f, 0.8f}, back.vectors().get(0), 0);
        assertArrayEquals(new float[] {1, 0}, back.vectors().get(1), 0);
    }

    @Test
    public void testValidate_rejectsEmptyAndOversizedBatches() {
        assertNotNull(new EmbedRequest(null, Embedder.Purpose.PASSAGE, List.of()).validate());
        ActionRequestValidationException e = new EmbedRequest(null, Embedder.Purpose.PASSAGE,
            java.util.Collections.nCopies(EmbedRequest.MAX_TEXTS + 1, "x")).validate();
        assertTrue(e.getMessage(), e.getMessage().contains("[texts] has 1001 texts; at most 1000 per request"));
    }

    @Test
    public void testRestParse_defaultsAndErrors() {
        EmbedRequest r = RestEmbedAction.parse(new HashMap<>(Map.of("texts", List.of("a"))));
        assertNull("no model: the node's default", r.ref());
        assertEquals(Embedder.Purpose.PASSAGE, r.purpose());
        assertEquals(new ModelRef(null, "abc"), RestEmbedAction.parse(new HashMap<>(Map.of("texts", List.of("a"), "model_id", "abc",
            "purpose", "query"))).ref());

        assertParseError(Map.of("texts", List.of("a"), "colour", 1), "[_embed] unknown field [colour]; supported: [model, model_id, purpose, texts]");
        assertParseError(Map.of("texts", "a"), "[_embed] [texts] must be a non-empty list of strings");
        assertParseError(Map.of("texts", List.of(1)), "[_embed] [texts] must contain strings only, got [1]");
        assertParseError(Map.of("texts", List.of("a"), "purpose", "search"), "[_embed] [purpose] must be one of [query, passage], got [search]");
        assertParseError(Map.of("texts", List.of("a"), "model", "m", "model_id", "x"), "[_embed] [model] and [model_id] cannot be combined");
    }

    private static void assertParseError(Map<String, Object> body, String expected) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> RestEmbedAction.parse(new HashMap<>(body)));
        assertTrue("expected [" + expected + "] in " + e.getMessage(), e.getMessage().contains(expected));
    }
}
