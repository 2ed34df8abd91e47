package io.strata.inference.mlcommons;

import io.strata.chunking.CausalLm;
import io.strata.inference.RemoteLlms;
import io.strata.inference.mlcommons.Completions.Completion;
import io.strata.inference.mlcommons.Completions.Token;
import org.opensearch.OpenSearchStatusException;
import org.opensearch.common.unit.TimeValue;
import org.opensearch.core.action.ActionListener;
import org.opensearch.ml.common.transport.MLTaskResponse;
import org.opensearch.ml.common.transport.prediction.MLPredictionTaskAction;
import org.opensearch.transport.Transports;
import org.opensearch.transport.client.Client;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/**
 * A causal LM and text generator served by an ml-commons REMOTE model ({@code model_id}) whose connector calls an
 * OpenAI-compatible completions API (request and answer: {@link Completions}). Blocking: every method sends its
 * predict calls through the node client at once, then waits for all of them, together at most the timeout
 * ({@code plugins.strata.inference.remote_timeout})
 * (a late answer is dropped; the ml-commons task is not cancelled). Never call it on a transport thread.
 *
 * <p><b>Calls per method</b> (all with temperature 0):
 * <ul>
 * <li>{@link #logProbs}: one call, {@code echo: true, logprobs: 1, max_tokens: 1} (the one generated token is ignored;
 *     {@code max_tokens: 0} is not accepted by every server). Token spans come from {@code text_offset}.</li>
 * <li>{@link #eosProbabilities}: one echo call on {@code prompt + text} with {@code logprobs: k}: the
 *     {@code top_logprobs} of the token that starts at position p are the model's next-token distribution given
 *     everything before p, and p(EOS) is read there; for p = the end of the text, from the first generated token's.
 *     A position inside a token (the tokenizer merged across it, e.g. {@code ".\n\n"}) is not a place the echo
 *     scored, so it costs one more call: {@code prompt + text[0, p)} without echo, {@code max_tokens: 1}, reading the
 *     generated token's {@code top_logprobs}. So 1 + (positions inside tokens) calls, the extra ones concurrent.
 *     p(EOS) is the summed probability of the end-of-sequence tokens found among the top k (k = 5, OpenAI's limit);
 *     none there means it is below the least listed probability, which is all that is answered
 *     ({@link CausalLm#unknownBelow}; the logits-guided strategy decides a window only when that cannot change its argmax,
 *     else it fails naming the model). When the model generated nothing
 *     because it stopped at once ({@code finish_reason: stop}, on a server that does not list the EOS token itself),
 *     ending was its greedy choice and reads as 1.</li>
 * <li>{@link #continuationLogProbs}: one echo call per candidate on {@code prompt + candidate} (concurrent), summing the
 *     log-probabilities of the tokens that overlap the candidate: a token merging the prompt's last characters with the
 *     candidate's first (e.g. {@code " 1"}) is the candidate's.</li>
 * <li>{@link #generate}: one call, {@code echo: false}; {@code choices[0].text}.</li>
 * </ul>
 * This class sends texts whole: the strategies wrap it in {@link io.strata.chunking.WindowedCausalLm}, which scores long
 * texts in windows of the strategy's {@code llm_max_tokens}; a prompt the server still refuses fails naming the model.
 */
public final class MlCommonsLlm implements RemoteLlms.Llm {
    /** How many alternatives to ask for per position: OpenAI's completions API allows at most 5. */
    static final int TOP_LOGPROBS = 5;
    /** End-of-sequence tokens as completions servers spell them (GPT/Qwen, Llama 2/Mistral, Llama 3, ChatML, Gemma). */
    static final Set<String> EOS_TOKENS = Set.of("<|endoftext|>", "</s>", "<|end_of_text|>", "<|eot_id|>", "<|im_end|>", "<eos>",
        "<|end|>");

    private final Client client;
    private final String modelId;
    private final Supplier<TimeValue> timeout;

    MlCommonsLlm(Client client, String modelId, Supplier<TimeValue> timeout) {
        this.client = client;
        this.modelId = modelId;
        this.timeout = timeout;
    }

    MlCommonsLlm(Client client, String modelId, TimeValue timeout) {
        this(client, modelId, () -> timeout);
    }

    /** The ml-commons models of the node client {@code client}; each method call waits at most {@code timeout.get()}. */
    public static RemoteLlms models(Client client, Supplier<TimeValue> timeout) {
        return modelId -> new MlCommonsLlm(client, modelId, timeout);
    }

    @Override
    public String name() {
        return modelId;
    }

    @Override
    public TokenLogProbs logProbs(String text) {
        if (text.isEmpty()) {
            return new TokenLogProbs(new int[0], new int[0], new double[0]);
        }
        Completion c = await(List.of(echo(text, 1))).get(0);
        int n = c.echoed();
        int[] starts = new int[n];
        int[] ends = new int[n];
        double[] logProbs = new double[n];
        for (int i = 0; i < n; i++) {
            Token t = c.tokens().get(i);
            starts[i] = t.start();
            ends[i] = c.end(i, text.length());
            logProbs[i] = t.logProb();
        }
        return new TokenLogProbs(starts, ends, logProbs);
    }

    @Override
    public double[] eosProbabilities(String prompt, String text, int[] positions) {
        for (int i = 0; i < positions.length; i++) {
            if (positions[i] <= 0 || positions[i] > text.length() || (i > 0 && positions[i] <= positions[i - 1])) {
                throw new IllegalArgumentException(String.format(Locale.ROOT,
                    "positions must ascend within (0, %d]; position %d is %d", text.length(), i, positions[i]));
            }
        }
        double[] eos = new double[positions.length];
        if (positions.length == 0) {
            return eos;
        }
        String all = prompt + text;
        Completion whole = await(List.of(call(all, 1, true, TOP_LOGPROBS))).get(0);
        Map<Integer, Token> byStart = new HashMap<>();
        for (Token t : whole.tokens().subList(0, whole.echoed())) {
            byStart.putIfAbsent(t.start(), t);
        }
        List<Integer> inside = new ArrayList<>();
        List<CompletableFuture<Completion>> prefixes = new ArrayList<>();
        for (int i = 0; i < positions.length; i++) {
            int at = prompt.length() + positions[i];
            if (at == all.length()) {
                eos[i] = nextEos(whole, "after the text");
            } else if (byStart.containsKey(at)) {
                Token t = byStart.get(at);
                if (t.top() == null) {
                    throw Completions.malformed(modelId, "the echoed token at offset " + at + " has no [top_logprobs]");
                }
                eos[i] = eos(t.top());
            } else {
                inside.add(i);
                prefixes.add(call(prompt + text.substring(0, positions[i]), 1, false, TOP_LOGPROBS));
            }
        }
        List<Completion> answers = await(prefixes);
        for (int j = 0; j < inside.size(); j++) {
            eos[inside.get(j)] = nextEos(answers.get(j), "after position " + positions[inside.get(j)]);
        }
        return eos;
    }

    @Override
    public double[] continuationLogProbs(String prompt, List<String> candidates) {
        List<CompletableFuture<Completion>> calls = new ArrayList<>(candidates.size());
        for (String candidate : candidates) {
            calls.add(candidate.isEmpty() ? CompletableFuture.completedFuture(null) : echo(prompt + candidate, 1));
        }
        List<Completion> answers = await(calls);
        double[] out = new double[candidates.size()];
        for (int k = 0; k < candidates.size(); k++) {
            Completion c = answers.get(k);
            if (c == null) {
                continue; // the empty continuation: log 1
            }
            int end = prompt.length() + candidates.get(k).length();
            double sum = 0;
            for (int i = 0; i < c.echoed(); i++) {
                if (c.end(i, end) > prompt.length()) {
                    sum += c.tokens().get(i).logProb();
                }
            }
            out[k] = sum;
        }
        return out;
    }

    @Override
    public String generate(String prompt, int maxTokens) {
        if (maxTokens <= 0) {
            throw new IllegalArgumentException("maxTokens must be positive, got " + maxTokens);
        }
        return await(List.of(call(prompt, maxTokens, false, 0))).get(0).text();
    }

    /** p(EOS) at the first generated token of {@code c}. */
    private double nextEos(Completion c, String where) {
        List<Token> generated = c.generated();
        if (generated.isEmpty()) {
            if ("stop".equals(c.finishReason()) && c.text().isEmpty()) {
                return 1; // stopped at once: ending was the greedy choice (the EOS token itself is not listed)
            }
            throw Completions.malformed(modelId, "it generated no token " + where + " (finish_reason [" + c.finishReason() + "])");
        }
        if (generated.get(0).top() == null) {
            throw Completions.malformed(modelId, "the generated token " + where + " has no [top_logprobs]");
        }
        return eos(generated.get(0).top());
    }

    /**
     * The summed probability of the EOS tokens among {@code top}; when none is listed, p(EOS) is not known, only that it is
     * below the least listed alternative ({@link CausalLm#unknownBelow}) — reading it as 0 would make every position
     * equally unlikely and the logits-guided argmax cut after the first sentence.
     */
    private static double eos(Map<String, Double> top) {
        double p = 0;
        boolean listed = false;
        double least = 1;
        for (Map.Entry<String, Double> e : top.entrySet()) {
            least = Math.min(least, Math.exp(e.getValue()));
            if (EOS_TOKENS.contains(e.getKey().strip())) {
                p += Math.exp(e.getValue());
                listed = true;
            }
        }
        return listed ? Math.min(1, p) : CausalLm.unknownBelow(least);
    }

    private CompletableFuture<Completion> echo(String text, int logprobs) {
        return call(text, 1, true, logprobs);
    }

    /** Sends one predict call; the future completes with the parsed answer or the translated failure. */
    private CompletableFuture<Completion> call(String prompt, int maxTokens, boolean echo, int logprobs) {
        CompletableFuture<Completion> result = new CompletableFuture<>();
        // a parse failure thrown in onResponse reaches onFailure, where translate keeps it (it names the model)
        ActionListener<MLTaskResponse> onAnswer = ActionListener.wrap(
            response -> result.complete(Completions.parse(modelId, Completions.body(modelId, response), prompt, logprobs > 0, echo)),
            e -> result.completeExceptionally(MlCommonsErrors.translate(modelId, e)));
        try {
            client.execute(MLPredictionTaskAction.INSTANCE, Completions.request(modelId, prompt, maxTokens, echo, logprobs),
                MlCommonsEmbeddings.converting(onAnswer));
        } catch (Exception e) {
            // the node client throws at once when no plugin registered the action (ml-commons not installed)
            onAnswer.onFailure(e);
        }
        return result;
    }

    /** Waits for every call, all within one timeout from now. */
    private List<Completion> await(List<CompletableFuture<Completion>> calls) {
        assert Transports.assertNotTransportThread("a blocking ml-commons LLM call");
        TimeValue timeout = this.timeout.get();
        long deadline = System.nanoTime() + timeout.nanos();
        List<Completion> answers = new ArrayList<>(calls.size());
        for (CompletableFuture<Completion> call : calls) {
            try {
                answers.add(call.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS));
            } catch (TimeoutException e) {
                throw MlCommonsErrors.timeout(modelId, timeout);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new OpenSearchStatusException("[model_id] [" + modelId + "] interrupted while waiting for ml-commons",
                    org.opensearch.core.rest.RestStatus.SERVICE_UNAVAILABLE, e);
            } catch (ExecutionException e) {
                throw e.getCause() instanceof RuntimeException r ? r : MlCommonsErrors.translate(modelId, e.getCause());
            }
        }
        return answers;
    }
}
