package io.strata.inference.mlcommons;

import io.strata.chunking.CausalLm;
import org.opensearch.OpenSearchStatusException;
import org.opensearch.action.ActionRequest;
import org.opensearch.action.ActionType;
import org.opensearch.common.unit.TimeValue;
import org.opensearch.core.action.ActionListener;
import org.opensearch.core.action.ActionResponse;
import org.opensearch.core.rest.RestStatus;
import org.opensearch.ml.common.FunctionName;
import org.opensearch.ml.common.dataset.remote.RemoteInferenceInputDataSet;
import org.opensearch.ml.common.output.model.ModelTensor;
import org.opensearch.ml.common.output.model.ModelTensorOutput;
import org.opensearch.ml.common.output.model.ModelTensors;
import org.opensearch.ml.common.transport.MLTaskResponse;
import org.opensearch.ml.common.transport.prediction.MLPredictionTaskAction;
import org.opensearch.ml.common.transport.prediction.MLPredictionTaskRequest;
import org.opensearch.test.client.NoOpClient;
import org.junit.After;
import org.junit.Test;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;
import java.util.function.Supplier;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

public class MlCommonsLlmTests {
    private static final double LN = 1e-9;

    /** The node client with ml-commons behind it: answers each predict call from its parameters, as a foreign response. */
    private static final class FakeMlCommons extends NoOpClient {
        final List<Map<String, String>> calls = new CopyOnWriteArrayList<>();
        volatile Function<Map<String, String>, Object> model;
        volatile boolean installed = true;

        FakeMlCommons() {
            super("ml-commons-fake");
        }

        @Override
        @SuppressWarnings("unchecked")
        protected <Req extends ActionRequest, Resp extends ActionResponse> void doExecute(ActionType<Resp> action, Req request,
                                                                                          ActionListener<Resp> listener) {
            if (!installed) {
                throw new IllegalStateException("failed to find action [" + action + "] to execute");
            }
            assertEquals(MLPredictionTaskAction.NAME, action.name());
            MLPredictionTaskRequest r = MLPredictionTaskRequest.fromActionRequest(request);
            assertEquals(FunctionName.REMOTE, r.getMlInput().getAlgorithm());
            Map<String, String> parameters = ((RemoteInferenceInputDataSet) r.getMlInput().getInputDataset()).getParameters();
            calls.add(parameters);
            Object answer = model.apply(parameters);
            if (answer instanceof Exception e) {
                listener.onFailure(e);
            } else if (answer != null) {
                listener.onResponse((Resp) MlTensors.foreign((MLTaskResponse) answer));
            }
        }
    }

    private final FakeMlCommons client = new FakeMlCommons();
    private final MlCommonsLlm llm = new MlCommonsLlm(client, "m-1", TimeValue.timeValueMillis(300));

    @After
    public void closeClient() {
        client.close();
    }

    /** A completions API answer as ml-commons returns it for a connector without post-processing. */
    private static MLTaskResponse answer(Map<String, ?> body) {
        return new MLTaskResponse(new ModelTensorOutput(List.of(new ModelTensors(List.of(
            ModelTensor.builder().name("response").dataAsMap(body).build())))));
    }

    private static Map<String, Object> choice(String text, String finish, Map<String, Object> logprobs) {
        Map<String, Object> choice = new LinkedHashMap<>();
        choice.put("text", text);
        choice.put("index", 0);
        choice.put("finish_reason", finish);
        choice.put("logprobs", logprobs);
        return choice;
    }

    private static MLTaskResponse completion(String text, String finish, List<String> tokens, List<Double> logProbs, List<Integer> offsets,
                                             List<Map<String, Double>> tops) {
        Map<String, Object> lp = new LinkedHashMap<>();
        lp.put("tokens", tokens);
        lp.put("token_logprobs", logProbs);
        lp.put("top_logprobs", tops);
        lp.put("text_offset", offsets);
        return answer(Map.of("object", "text_completion", "choices", List.of(choice(text, finish, lp))));
    }

    private static Map<String, Double> top(Object... tokenAndProbability) {
        Map<String, Double> top = new LinkedHashMap<>();
        for (int i = 0; i < tokenAndProbability.length; i += 2) {
            top.put((String) tokenAndProbability[i], Math.log(((Number) tokenAndProbability[i + 1]).doubleValue()));
        }
        return top;
    }

    private static OpenSearchStatusException fails(Supplier<?> call) {
        return assertThrows(OpenSearchStatusException.class, call::get);
    }

    private static void assertNames(OpenSearchStatusException e, String modelId, String... parts) {
        assertTrue(e.getMessage(), e.getMessage().startsWith("[model_id] [" + modelId + "] "));
        for (String part : parts) {
            assertTrue(e.getMessage(), e.getMessage().contains(part));
        }
    }

    @Test
    public void testLogProbs_mapsEchoedTokensToCharSpansAndDropsTheGeneratedOne() {
        client.model = p -> completion("Hello world. Next", "length", List.of("Hello", " world", ".", " Next"),
            Arrays.asList(null, -1.5, -0.5, -2.0), List.of(0, 5, 11, 12), Arrays.asList(null, top(" world", 0.2), top(".", 0.6),
                top(" Next", 0.1)));
        CausalLm.TokenLogProbs lp = llm.logProbs("Hello world.");
        assertArrayEquals(new int[] {0, 5, 11}, lp.tokenStarts());
        assertArrayEquals(new int[] {5, 11, 12}, lp.tokenEnds());
        assertArrayEquals(new double[] {Double.NaN, -1.5, -0.5}, lp.logProbs(), LN);

        assertEquals(Map.of("prompt", "Hello world.", "max_tokens", "1", "temperature", "0", "echo", "true", "logprobs", "1"),
            client.calls.get(0));
    }

    @Test
    public void testLogProbs_codePointOffsets_becomeUtf16Offsets() {
        // the servers count code points: the emoji is one character there, two in Java
        client.model = p -> completion("a😀 b", "length", List.of("a", "😀", " b"), Arrays.asList(null, -3.0, -1.0), List.of(0, 1, 2),
            null);
        CausalLm.TokenLogProbs lp = llm.logProbs("a😀 b");
        assertArrayEquals(new int[] {0, 1, 3}, lp.tokenStarts());
        assertArrayEquals(new int[] {1, 3, 5}, lp.tokenEnds());
    }

    @Test
    public void testLogProbs_emptyText_callsNothing() {
        assertEquals(0, llm.logProbs("").size());
        assertEquals(0, client.calls.size());
    }

    @Test
    public void testEos_readsTopLogProbsAtTokenStarts_andAsksAgainInsideATokenAndReadsTheEndFromTheGeneratedToken() {
        String prompt = "Q ";
        String text = "Ab. Cd."; // "Q Ab. Cd.": tokens "Q" " Ab" "." " Cd" "." + one generated
        client.model = p -> {
            if (p.get("echo").equals("true")) {
                assertEquals(prompt + text, p.get("prompt"));
                return completion(prompt + text + "\n", "length", List.of("Q", " Ab", ".", " Cd", ".", "\n"),
                    Arrays.asList(null, -4.0, -1.0, -2.3, -0.7, -0.1), List.of(0, 1, 4, 5, 8, 9),
                    Arrays.asList(null, top(" Ab", 0.02), top(".", 0.4), top("<|endoftext|>", 0.6, " Cd", 0.1), top(".", 0.5),
                        top("\n", 0.2, "<|endoftext|>", 0.7, "<|im_end|>", 0.1)));
            }
            // "Q Ab. C" ends inside the token " Cd": scored by its own call, the generated token's alternatives
            assertEquals("Q Ab. C", p.get("prompt"));
            return completion("d", "length", List.of("d"), List.of(-0.1), List.of(7), List.of(top("d", 0.9, "</s>", 0.05)));
        };
        double[] eos = llm.eosProbabilities(prompt, text, new int[] {3, 5, 7});
        assertArrayEquals(new double[] {0.6, 0.05, 0.8}, eos, 1e-9);
        assertEquals(2, client.calls.size());
        Map<String, String> first = client.calls.stream().filter(c -> c.get("echo").equals("true")).findFirst().orElseThrow();
        assertEquals("5", first.get("logprobs"));
        assertEquals("1", first.get("max_tokens"));
    }

    @Test
    public void testEos_notAmongTheTopTokens_isUnknownBelowTheLeastListed_andStoppingAtOnceIsOne() {
        client.model = p -> p.get("prompt").equals("One two")
            ? completion("One two", "stop", List.of("One", " two"), Arrays.asList(null, -2.0), List.of(0, 3),
                Arrays.asList(null, top(" two", 0.1, " three", 0.05)))
            : null;
        // after "One": EOS not listed, so only below the least listed (0.05); after "One two": the model ended at once
        double[] eos = llm.eosProbabilities("", "One two", new int[] {3, 7});
        assertFalse(io.strata.chunking.CausalLm.isKnown(eos[0]));
        assertEquals(0.05, -eos[0], 1e-9);
        assertEquals(1, eos[1], 0);
    }

    @Test
    public void testEos_positionsMustAscendWithinTheText() {
        assertThrows(IllegalArgumentException.class, () -> llm.eosProbabilities("", "abc", new int[] {2, 2}));
        assertThrows(IllegalArgumentException.class, () -> llm.eosProbabilities("", "abc", new int[] {0}));
        assertThrows(IllegalArgumentException.class, () -> llm.eosProbabilities("", "abc", new int[] {4}));
        assertEquals(0, client.calls.size());
    }

    @Test
    public void testContinuations_sumTheTokensOverlappingTheCandidate_oneCallPerCandidate() {
        client.model = p -> switch (p.get("prompt")) {
            // " 1" starts in the prompt's trailing space: it is the candidate's token
            case "Answer: 1" -> completion("Answer: 1.", "length", List.of("Answer", ":", " 1", "."), Arrays.asList(null, -1.0, -0.2, -3.0),
                List.of(0, 6, 7, 9), null);
            case "Answer: 12" -> completion("Answer: 12", "length", List.of("Answer", ":", " 1", "2"), Arrays.asList(null, -1.0, -0.2, -0.3),
                List.of(0, 6, 7, 9), null);
            default -> throw new AssertionError(p);
        };
        assertArrayEquals(new double[] {-0.2, -0.5, 0}, llm.continuationLogProbs("Answer: ", List.of("1", "12", "")), 1e-9);
        assertEquals(2, client.calls.size());
    }

    @Test
    public void testGenerate_returnsTheCompletionText() {
        client.model = p -> answer(Map.of("choices", List.of(choice(" A short summary.", "stop", null))));
        assertEquals(" A short summary.", llm.generate("Summarize: ...", 40));
        Map<String, String> sent = client.calls.get(0);
        assertEquals("40", sent.get("max_tokens"));
        assertEquals("false", sent.get("echo"));
        assertEquals("0", sent.get("temperature"));
    }

    @Test
    public void testGenerate_readsAChatAnswerToo() {
        client.model = p -> answer(Map.of("choices", List.of(Map.of("message", Map.of("role", "assistant", "content", "Hi.")))));
        assertEquals("Hi.", llm.generate("Say hi", 5));
    }

    @Test
    public void testMalformedAnswers_failNamingTheModelId() {
        client.model = p -> answer(Map.of("error", "nope"));
        assertNames(fails(() -> llm.generate("x", 5)), "m-1", "no tensor holds a completions answer", "OpenAI-compatible completions");

        client.model = p -> answer(Map.of("choices", List.of()));
        assertNames(fails(() -> llm.generate("x", 5)), "m-1", "[choices] is not a non-empty list");

        client.model = p -> answer(Map.of("choices", List.of(Map.of("text", "x"))));
        assertNames(fails(() -> llm.logProbs("x y")), "m-1", "no [logprobs] object", "${parameters.logprobs}");

        client.model = p -> completion("x y", "length", List.of("x", " y"), Arrays.asList(null, -1.0), List.of(0), null);
        assertNames(fails(() -> llm.logProbs("x y")), "m-1", "lists differ in length");

        client.model = p -> completion("x y", "length", List.of("x", " y"), Arrays.asList(null, -1.0), List.of(1, 0), null);
        assertNames(fails(() -> llm.logProbs("x y")), "m-1", "[text_offset][1]", "offsets ascend");

        client.model = p -> completion("x y", "length", List.of("x", " y"), Arrays.asList(null, 2.0), List.of(0, 1), null);
        assertNames(fails(() -> llm.logProbs("x y")), "m-1", "[token_logprobs][1] is [2.0]");

        client.model = p -> completion("x y", "length", List.of("x", " y"), Arrays.asList(null, -1.0), List.of(0, 40), null);
        assertNames(fails(() -> llm.logProbs("x y")), "m-1", "beyond the");

        // a connector that ignores echo: only the generated token comes back
        client.model = p -> completion(" z", "length", List.of(" z"), List.of(-1.0), List.of(3), null);
        assertNames(fails(() -> llm.logProbs("x y")), "m-1", "did not echo", "${parameters.echo}");

        client.model = p -> completion("x y", "length", List.of("x", " y"), Arrays.asList(null, -1.0), List.of(0, 1), null);
        assertNames(fails(() -> llm.eosProbabilities("", "x y", new int[] {1})), "m-1", "no [top_logprobs]");

        client.model = p -> new MLTaskResponse(new ModelTensorOutput(List.of()));
        assertNames(fails(() -> llm.generate("x", 5)), "m-1", "no tensor holds");
    }

    @Test
    public void testFailures_unknownUndeployedMissingAndSlow_nameTheModelId() {
        client.model = p -> new OpenSearchStatusException("Failed to find model", RestStatus.NOT_FOUND);
        OpenSearchStatusException unknown = fails(() -> llm.generate("x", 5));
        assertEquals(RestStatus.NOT_FOUND, unknown.status());
        assertNames(unknown, "m-1", "unknown model");

        client.model = p -> new IllegalArgumentException("Model not ready yet. Please deploy the model first.");
        assertNames(fails(() -> llm.logProbs("x")), "m-1", "is not deployed in ml-commons");

        client.model = p -> null;
        long start = System.nanoTime();
        OpenSearchStatusException slow = fails(() -> llm.continuationLogProbs("p", List.of("a", "b")));
        assertEquals(RestStatus.GATEWAY_TIMEOUT, slow.status());
        assertEquals("[model_id] [m-1] ml-commons did not answer within [300ms] ([plugins.strata.inference.remote_timeout])", slow.getMessage());
        assertTrue("both calls share one timeout", System.nanoTime() - start < 2_000_000_000L);

        client.installed = false;
        assertNames(fails(() -> llm.generate("x", 5)), "m-1", "needs the ml-commons plugin");
    }
}
