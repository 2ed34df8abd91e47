package io.strata.inference;

import ai.djl.Device;
import io.strata.chunking.CausalLm;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;
import org.opensearch.common.xcontent.XContentHelper;
import org.opensearch.common.xcontent.json.JsonXContent;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

/**
 * The committed strata-tiny-gpt fixture (tools/causal-lm-fixture) through DJL + ONNX Runtime, checked against the
 * numbers PyTorch computed for it (reference.json).
 */
public class DjlCausalLmTests {
    static final Path FIXTURE = Path.of(System.getProperty("strata.lm.fixture", "src/test/resources/models/strata-tiny-gpt"));
    private static final double TOLERANCE = 1e-4;
    private static DjlCausalLm lm;
    private static Map<String, Object> reference;

    @BeforeClass
    public static void load() throws Exception {
        lm = DjlCausalLm.load(ModelDescriptor.read("strata-tiny-gpt", FIXTURE), Device.cpu(), 2, 1);
        try (InputStream in = Files.newInputStream(FIXTURE.resolve("reference.json"))) {
            reference = XContentHelper.convertToMap(JsonXContent.jsonXContent, in, false);
        }
    }

    @AfterClass
    public static void close() {
        lm.close();
    }

    @SuppressWarnings("unchecked")
    private static <T> T ref(String... path) {
        Object o = reference;
        for (String key : path) {
            o = ((Map<String, Object>) o).get(key);
        }
        return (T) o;
    }

    private static double[] doubles(List<?> values) {
        return values.stream().mapToDouble(v -> ((Number) v).doubleValue()).toArray();
    }

    @Test
    public void testTokenize_givesUtf8BytesWithCharacterOffsets() {
        String text = "café — naïve 😀";
        DjlCausalLm.Tokens t = lm.tokenize(text);
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        assertEquals(bytes.length, t.size());
        int b = 0;
        for (int c = 0; c < text.length(); c = text.offsetByCodePoints(c, 1)) {
            int end = text.offsetByCodePoints(c, 1);
            int n = text.substring(c, end).getBytes(StandardCharsets.UTF_8).length;
            for (int k = 0; k < n; k++, b++) {
                assertEquals("byte " + b, Byte.toUnsignedLong(bytes[b]), t.ids()[b]);
                assertEquals("start of byte " + b, c, t.starts()[b]);
                assertEquals("end of byte " + b, end, t.ends()[b]);
            }
        }
    }

    @Test
    public void testTokenize_theEosTokenIsOneSpecialId() {
        assertArrayEquals(new long[] {256}, lm.tokenize("<|endoftext|>").ids());
    }

    @Test
    public void testLogProbs_matchPyTorch_includingTheSlidingWindowOverLongText() {
        List<Map<String, Object>> cases = ref("log_probs");
        for (Map<String, Object> c : cases) {
            String text = (String) c.get("text");
            double[] expected = doubles((List<?>) c.get("log_probs"));
            CausalLm.TokenLogProbs actual = lm.logProbs(text);
            assertEquals(text, expected.length, actual.size());
            for (int i = 0; i < expected.length; i++) {
                assertEquals(text + " token " + i, expected[i], actual.logProbs()[i], TOLERANCE);
            }
            assertEquals(text.length(), actual.tokenEnds()[actual.size() - 1]);
        }
        String longest = (String) cases.get(cases.size() - 1).get("text");
        assertTrue("the long case must slide", longest.length() > 2 * lm.descriptor().maxTokens());
    }

    /**
     * With BOS, a window holds context - 1 text tokens and advances by half of that: the first window's tokens are scored
     * as if the text stopped there, and the tokens of the last half window as if the text started where that window does.
     */
    @Test
    public void testLogProbs_slidingScoresEachTokenWithinOneFullWindow() {
        int window = lm.descriptor().maxTokens() - 1;
        int n = window + 3 * (window / 2); // the last window then starts at n - window
        String text = "The configuration file lists one option per line; comments start with a hash sign. ".repeat(5).substring(0, n);
        double[] whole = lm.logProbs(text).logProbs();
        double[] head = lm.logProbs(text.substring(0, window)).logProbs();
        for (int i = 0; i < window; i++) {
            assertEquals("token " + i, head[i], whole[i], 1e-5);
        }
        double[] tail = lm.logProbs(text.substring(n - window)).logProbs();
        for (int i = n - window / 2 + 1; i < n; i++) { // scored from rows of the last window only
            assertEquals("token " + i, tail[i - (n - window)], whole[i], 1e-5);
        }
        // a middle token is not scored from the window start: it keeps at least half a window of context
        int mid = window + window / 4;
        assertTrue(Math.abs(whole[mid] - lm.logProbs(text.substring(mid)).logProbs()[0]) > 1e-3);
        for (double lp : whole) {
            assertTrue(lp <= 0 && Double.isFinite(lp));
        }
    }

    @Test
    public void testEosProbabilities_matchPyTorch() {
        List<?> positions = ref("eos", "positions");
        double[] expected = doubles(ref("eos", "probabilities"));
        double[] actual = lm.eosProbabilities(ref("eos", "prompt"), ref("eos", "text"),
            positions.stream().mapToInt(p -> ((Number) p).intValue()).toArray());
        for (int i = 0; i < expected.length; i++) {
            assertEquals("position " + positions.get(i), expected[i], actual[i], TOLERANCE);
        }
    }

    @Test
    public void testEosProbabilities_rejectPositionsOutsideTheTextOrOutOfOrder() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> lm.eosProbabilities("", "Short text.", new int[] {5, 3}));
        assertTrue(e.getMessage(), e.getMessage().contains("model [strata-tiny-gpt]") && e.getMessage().contains("ascending"));
        assertThrows(IllegalArgumentException.class, () -> lm.eosProbabilities("", "Short text.", new int[] {0}));
        assertThrows(IllegalArgumentException.class, () -> lm.eosProbabilities("", "Short text.", new int[] {12}));
    }

    @Test
    public void testContinuationLogProbs_matchPyTorch_forSingleAndMultiTokenCandidates() {
        String prompt = ref("continuations", "prompt");
        List<String> candidates = ref("continuations", "candidates");
        double[] expected = doubles(ref("continuations", "log_probs"));
        assertArrayEquals(expected, lm.continuationLogProbs(prompt, candidates), TOLERANCE);
        // "1" and "2" alone take the one-pass path for single tokens
        assertArrayEquals(new double[] {expected[0], expected[1]}, lm.continuationLogProbs(prompt, List.of("1", "2")), TOLERANCE);
    }

    /** A {@code chat_template} wraps the instruction whose answers are scored, as the Meta-Chunking authors' code does. */
    @Test
    public void testContinuationLogProbs_withAChatTemplate_scoreTheInstructionInsideIt() throws Exception {
        ModelDescriptor plain = lm.descriptor();
        String template = "<|endoftext|>user: {prompt}\nassistant: ";
        ModelDescriptor chat = new ModelDescriptor(plain.name(), plain.dir(), plain.engine(), plain.modelFile(), plain.tokenizerFile(), 0,
            plain.maxTokens(), plain.pooling(), false, "", "", plain.task(), plain.eosToken(), plain.bosToken(), template);
        String prompt = "Please answer 1 or 2.";
        try (DjlCausalLm chatLm = DjlCausalLm.load(chat, Device.cpu(), 1, 1)) {
            double[] wrapped = chatLm.continuationLogProbs(prompt, List.of("1", "2"));
            assertArrayEquals(lm.continuationLogProbs("<|endoftext|>user: " + prompt + "\nassistant: ", List.of("1", "2")), wrapped, 1e-6);
            double[] bare = lm.continuationLogProbs(prompt, List.of("1", "2"));
            assertTrue("the template changes what the model sees", Math.abs(bare[0] - wrapped[0]) > 1e-4);
            // texts scored for perplexity are not instructions: unchanged
            assertArrayEquals(lm.logProbs(prompt).logProbs(), chatLm.logProbs(prompt).logProbs(), 1e-6);
        }
    }

    @Test
    public void testCalls_fromSeveralThreadsGiveTheSameAnswers() throws Exception {
        String text = "Thread-safe answers do not depend on who else is asking. ".repeat(4);
        double[] expected = lm.logProbs(text).logProbs();
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<double[]>> futures = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                futures.add(pool.submit(() -> lm.logProbs(text).logProbs()));
            }
            for (Future<double[]> f : futures) {
                assertArrayEquals(expected, f.get(), 1e-6);
            }
        } finally {
            pool.shutdown();
        }
    }

    /**
     * The fixture learnt that paragraphs end with EOS: on held-out documentation, p(EOS) at the end of each paragraph is
     * far above p(EOS) after words inside sentences.
     */
    @Test
    public void testEosProbabilities_onHeldOutText_areHigherAtParagraphEndsThanMidSentence() {
        List<String> paragraphs = ref("held_out", "paragraphs");
        String text = String.join("\n\n", paragraphs);
        List<Integer> ends = new ArrayList<>();
        List<Integer> mid = new ArrayList<>();
        int offset = 0;
        for (String p : paragraphs) {
            for (int i = 1; i < p.length() - 1; i++) {
                if (p.charAt(i) == ' ' && Character.isLetter(p.charAt(i - 1))) {
                    mid.add(offset + i); // after a word that does not end a sentence
                }
            }
            ends.add(offset + p.length());
            offset += p.length() + 2;
        }
        double[] atEnds = eos(text, ends);
        double[] atMid = eos(text, mid);
        double meanEnd = mean(atEnds);
        double meanMid = mean(atMid);
        System.out.printf("held-out [%s]: mean p(EOS) at %d paragraph ends %.4f, after %d mid-sentence words %.5f (ratio %.1f)%n",
            ref("held_out", "source"), atEnds.length, meanEnd, atMid.length, meanMid, meanEnd / meanMid);
        assertTrue(meanEnd + " vs " + meanMid, meanEnd > 5 * meanMid);
    }

    private static double[] eos(String text, List<Integer> positions) {
        return lm.eosProbabilities("", text, positions.stream().mapToInt(Integer::intValue).sorted().toArray());
    }

    private static double mean(double[] values) {
        double s = 0;
        for (double v : values) {
            s += v;
        }
        return s / values.length;
    }
}
