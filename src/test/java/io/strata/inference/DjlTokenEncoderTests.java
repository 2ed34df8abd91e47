package io.strata.inference;

import io.strata.model.TokenEncoder;
import ai.djl.Device;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotEquals;
import static org.junit.Assert.assertTrue;

/** The bundled bge-small-en-v1.5 (int8 ONNX) read per token, as BertChunker's frozen backbone. */
public class DjlTokenEncoderTests {
    private static DjlEmbedder embedder;

    @BeforeClass
    public static void load() throws Exception {
        embedder = DjlEmbedder.load(ModelDescriptor.read("bge-small-en-v15-q", DjlEmbedderTests.MODELS.resolve("bge-small-en-v15-q")),
            Device.cpu(), 1, 1, 1);
    }

    @AfterClass
    public static void close() {
        embedder.close();
    }

    @Test
    public void testEncode_givesOneStateOfTheModelDimensionPerTextToken_withOffsetsIntoTheText() {
        String text = "Emma Woodhouse, handsome, clever, and rich.\n\nNaïve café owners unionised in 1848!";
        TokenEncoder.Tokens tokens = new DjlTokenEncoder(embedder).encode(text);

        assertEquals(384, new DjlTokenEncoder(embedder).dimension());
        StringBuilder covered = new StringBuilder();
        int previousEnd = 0;
        for (int i = 0; i < tokens.size(); i++) {
            assertEquals(384, tokens.hidden()[i].length);
            int start = tokens.starts()[i];
            int end = tokens.ends()[i];
            // no special tokens: [CLS] and [SEP] would have empty spans
            assertTrue("token " + i + " [" + start + ", " + end + ")", start >= previousEnd && end > start && end <= text.length());
            assertTrue(text.substring(start, end).isBlank() == false);
            covered.append(text, previousEnd, start).append(text, start, end);
            previousEnd = end;
        }
        covered.append(text.substring(previousEnd));
        assertEquals(text, covered.toString());
        // every non-whitespace character lies in a token, and words start tokens at their own offsets
        for (String word : new String[] { "Woodhouse", "Naïve", "café", "1848" }) {
            int at = text.indexOf(word);
            boolean starts = false;
            for (int i = 0; i < tokens.size(); i++) {
                starts |= tokens.starts()[i] == at;
            }
            assertTrue(word + " at " + at, starts);
        }
        assertEquals(0, tokens.starts()[0]);
        assertEquals(text.length(), tokens.ends()[tokens.size() - 1]);
        // contextual states: the same word in different contexts differs
        assertNotEquals(tokens.hidden()[0][0], tokens.hidden()[1][0], 0f);
    }

    @Test
    public void testEncode_whenTextLongerThanWindow_encodesOnlyTheWindowsTokens() {
        String text = "one two three four five six seven eight nine ten eleven twelve";
        TokenEncoder.Tokens tokens = new DjlTokenEncoder(embedder, 10).encode(text);
        assertEquals(8, tokens.size()); // 10 minus [CLS] and [SEP]
        assertEquals(text.indexOf(" nine"), tokens.ends()[7]);
    }
}
