package io.strata.inference.mlcommons;

import org.opensearch.OpenSearchStatusException;
import org.opensearch.core.rest.RestStatus;
import org.opensearch.ml.common.FunctionName;
import org.opensearch.ml.common.dataset.remote.RemoteInferenceInputDataSet;
import org.opensearch.ml.common.input.MLInput;
import org.opensearch.ml.common.output.MLOutput;
import org.opensearch.ml.common.output.model.ModelTensor;
import org.opensearch.ml.common.output.model.ModelTensorOutput;
import org.opensearch.ml.common.output.model.ModelTensors;
import org.opensearch.ml.common.transport.MLTaskResponse;
import org.opensearch.ml.common.transport.prediction.MLPredictionTaskRequest;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Predict requests to, and answers from, an ml-commons REMOTE model whose connector calls an OpenAI-compatible
 * completions API ({@code POST /v1/completions}: OpenAI's legacy API, vLLM, llama.cpp's server, TGI).
 *
 * <p><b>Request.</b> Every call sends the same five connector parameters, so one connector template serves all of
 * them: {@code prompt}, {@code max_tokens}, {@code temperature} (always 0), {@code echo} and {@code logprobs}. ml-commons
 * JSON-escapes parameter values that are not themselves JSON before substituting them into the connector's
 * {@code request_body} ({@code ConnectorUtils.escapeRemoteInferenceInputData}), so the template quotes the prompt and not
 * the others. (A prompt that is itself valid JSON, e.g. a JSON document, is left unescaped by ml-commons and breaks
 * the body: a known limit of this route.)
 * <pre>{"model": "...", "prompt": "${parameters.prompt}", "max_tokens": ${parameters.max_tokens},
 *  "temperature": ${parameters.temperature}, "echo": ${parameters.echo}, "logprobs": ${parameters.logprobs}}</pre>
 *
 * <p><b>Answer.</b> Without a post-process function ml-commons returns the API's JSON as one tensor's
 * {@code dataAsMap}: {@code choices[0].text}, {@code choices[0].finish_reason} and {@code choices[0].logprobs} with
 * parallel lists {@code tokens}, {@code token_logprobs} (null for a text's first token), {@code text_offset} (offsets of
 * the tokens into prompt + completion, in Unicode code points as the Python servers count them) and
 * {@code top_logprobs} (per token, the most likely tokens at that place with their log-probabilities, i.e. the
 * model's next-token distribution given everything before the token; null for the first). Anything else is a
 * malformed answer and fails with a message naming the model id.
 */
final class Completions {
    static final String CHOICES = "choices";

    private Completions() {}

    /** One token of a completion response: its offset (UTF-16, into what was sent + generated), log-prob, alternatives. */
    record Token(String text, int start, double logProb, Map<String, Double> top) {}

    /**
     * A parsed completion. {@code tokens} holds the echoed tokens of what was sent (when echo was asked) followed by the
     * generated ones; {@code echoed} counts the former.
     */
    record Completion(String text, String finishReason, List<Token> tokens, int echoed) {
        List<Token> generated() {
            return tokens.subList(echoed, tokens.size());
        }

        /** Where token {@code i} ends: where the next one starts, or {@code end} for the last echoed one. */
        int end(int i, int end) {
            return i + 1 < echoed ? tokens.get(i + 1).start() : end;
        }
    }

    static MLPredictionTaskRequest request(String modelId, String prompt, int maxTokens, boolean echo, int logprobs) {
        Map<String, String> parameters = new LinkedHashMap<>();
        parameters.put("prompt", prompt);
        parameters.put("max_tokens", Integer.toString(maxTokens));
        parameters.put("temperature", "0");
        parameters.put("echo", Boolean.toString(echo));
        parameters.put("logprobs", Integer.toString(logprobs));
        MLInput input = MLInput.builder().algorithm(FunctionName.REMOTE)
            .inputDataset(RemoteInferenceInputDataSet.builder().parameters(parameters).build()).build();
        return new MLPredictionTaskRequest(modelId, input);
    }

    /** The completions API's JSON inside the answer: the first tensor whose map has {@code choices}. */
    static Map<String, ?> body(String modelId, MLTaskResponse response) {
        MLOutput output = response == null ? null : response.getOutput();
        if (!(output instanceof ModelTensorOutput tensorOutput)) {
            throw malformed(modelId, "it answered " + (output == null ? "no output" : "[" + output.getClass().getSimpleName() + "]")
                + " instead of model tensors");
        }
        Set<String> seen = new LinkedHashSet<>();
        for (ModelTensors tensors : tensorOutput.getMlModelOutputs() == null ? List.<ModelTensors>of() : tensorOutput.getMlModelOutputs()) {
            for (ModelTensor tensor : tensors == null || tensors.getMlModelTensors() == null ? List.<ModelTensor>of()
                : tensors.getMlModelTensors()) {
                Map<String, ?> map = tensor.getDataAsMap();
                if (map != null && map.containsKey(CHOICES)) {
                    return map;
                }
                seen.add(tensor.getName() + (map == null ? "" : map.keySet().toString()));
            }
        }
        throw malformed(modelId, "no tensor holds a completions answer with [" + CHOICES + "] (tensors: " + seen + ")");
    }

    /**
     * Parses the first choice of {@code body}, the answer to {@code sent}.
     *
     * @param needLogProbs whether the call asked for log-probabilities (then they must be there)
     * @param echo whether the call asked to echo {@code sent} (then its tokens must be there, from offset 0)
     */
    static Completion parse(String modelId, Map<String, ?> body, String sent, boolean needLogProbs, boolean echo) {
        Map<?, ?> choice = firstChoice(modelId, body);
        Object text = choice.get("text");
        if (text == null && choice.get("message") instanceof Map<?, ?> message) {
            text = message.get("content"); // a chat completions answer: usable for generation only
        }
        if (!(text instanceof String answered)) {
            throw malformed(modelId, "[choices][0] has no [text] string (keys: " + choice.keySet() + ")");
        }
        // with echo, OpenAI's text is prompt + completion (some servers answer the completion only)
        String all = echo && answered.startsWith(sent) ? answered : sent + answered;
        String generatedText = all.substring(sent.length());
        String finishReason = choice.get("finish_reason") instanceof String s ? s : null;
        if (!needLogProbs) {
            return new Completion(generatedText, finishReason, List.of(), 0);
        }
        if (!(choice.get("logprobs") instanceof Map<?, ?> logprobs)) {
            throw malformed(modelId, "[choices][0] has no [logprobs] object; its connector must send [logprobs] as "
                + "${parameters.logprobs} to a completions API that returns them");
        }
        List<?> tokens = list(modelId, logprobs, "tokens", true);
        List<?> tokenLogProbs = list(modelId, logprobs, "token_logprobs", true);
        List<?> offsets = list(modelId, logprobs, "text_offset", true);
        List<?> tops = list(modelId, logprobs, "top_logprobs", false);
        int n = tokens.size();
        if (tokenLogProbs.size() != n || offsets.size() != n || (tops != null && tops.size() != n)) {
            throw malformed(modelId, String.format(Locale.ROOT, "[logprobs] lists differ in length: %d tokens, %d token_logprobs, "
                + "%d text_offset, %s top_logprobs", n, tokenLogProbs.size(), offsets.size(), tops == null ? "no" : tops.size()));
        }
        Offsets toUtf16 = new Offsets(all);
        List<Token> parsed = new ArrayList<>(n);
        int echoed = 0;
        int previous = 0;
        for (int i = 0; i < n; i++) {
            if (!(tokens.get(i) instanceof String token)) {
                throw malformed(modelId, "[logprobs][tokens][" + i + "] is not a string: " + tokens.get(i));
            }
            if (!(offsets.get(i) instanceof Number o) || o.doubleValue() != Math.rint(o.doubleValue()) || o.longValue() < previous) {
                throw malformed(modelId, String.format(Locale.ROOT, "[logprobs][text_offset][%d] is [%s]; expected a whole number ≥ %d "
                    + "(offsets ascend)", i, offsets.get(i), previous));
            }
            previous = (int) Math.min(Integer.MAX_VALUE, o.longValue());
            int start = toUtf16.utf16(previous);
            if (start < 0) {
                throw malformed(modelId, String.format(Locale.ROOT, "[logprobs][text_offset][%d] is [%d], beyond the %d characters of "
                    + "prompt and completion", i, previous, toUtf16.codePoints()));
            }
            double logProb;
            Object lp = tokenLogProbs.get(i);
            if (lp == null && i == 0) {
                logProb = Double.NaN; // the first token has no context to be scored in
            } else if (lp instanceof Number p && Double.isFinite(p.doubleValue()) && p.doubleValue() <= 1e-6) {
                logProb = Math.min(0, p.doubleValue());
            } else {
                throw malformed(modelId, "[logprobs][token_logprobs][" + i + "] is [" + lp + "]; expected a log-probability ≤ 0");
            }
            Map<String, Double> top = tops == null ? null : top(modelId, tops.get(i), i);
            if (start < sent.length()) {
                echoed++;
            }
            parsed.add(new Token(token, start, logProb, top));
        }
        if (echo && !sent.isEmpty() && (echoed == 0 || parsed.get(0).start() != 0)) {
            throw malformed(modelId, "it did not echo the prompt's tokens; its connector must send [echo] as ${parameters.echo}");
        }
        return new Completion(generatedText, finishReason, Collections.unmodifiableList(parsed), echoed);
    }

    private static Map<?, ?> firstChoice(String modelId, Map<String, ?> body) {
        if (!(body.get(CHOICES) instanceof List<?> choices) || choices.isEmpty() || !(choices.get(0) instanceof Map<?, ?> choice)) {
            throw malformed(modelId, "[choices] is not a non-empty list of objects: " + abbreviate(body.get(CHOICES)));
        }
        return choice;
    }

    private static List<?> list(String modelId, Map<?, ?> logprobs, String key, boolean required) {
        Object value = logprobs.get(key);
        if (value instanceof List<?> l) {
            return l;
        }
        if (value == null && !required) {
            return null;
        }
        throw malformed(modelId, "[choices][0][logprobs][" + key + "] is not a list: " + abbreviate(value));
    }

    /**
     * One entry of {@code top_logprobs}: OpenAI's {@code {"token": logprob, ...}}, or a list of
     * {@code {"token": ..., "logprob": ...}} as in the chat API; null (no alternatives: the first token) stays null.
     */
    private static Map<String, Double> top(String modelId, Object entry, int i) {
        if (entry == null) {
            return null;
        }
        Map<String, Double> top = new LinkedHashMap<>();
        if (entry instanceof Map<?, ?> m) {
            m.forEach((k, v) -> top.put(String.valueOf(k), topLogProb(modelId, v, i)));
        } else if (entry instanceof List<?> l) {
            for (Object o : l) {
                if (!(o instanceof Map<?, ?> m) || !(m.get("token") instanceof String token)) {
                    throw malformed(modelId, "[logprobs][top_logprobs][" + i + "] has an entry without a [token]: " + abbreviate(o));
                }
                top.put(token, topLogProb(modelId, m.get("logprob"), i));
            }
        } else {
            throw malformed(modelId, "[logprobs][top_logprobs][" + i + "] is neither an object nor a list: " + abbreviate(entry));
        }
        return top;
    }

    private static double topLogProb(String modelId, Object v, int i) {
        if (v instanceof Number p && !Double.isNaN(p.doubleValue()) && p.doubleValue() <= 1e-6) {
            return Math.min(0, p.doubleValue()); // -Infinity allowed: a probability of 0
        }
        throw malformed(modelId, "[logprobs][top_logprobs][" + i + "] has [" + v + "]; expected a log-probability ≤ 0");
    }

    static OpenSearchStatusException malformed(String modelId, String what) {
        return new OpenSearchStatusException(String.format(Locale.ROOT,
            "[model_id] [%s] is not an LLM Strata can use: %s; expected an ml-commons remote model whose connector calls an "
                + "OpenAI-compatible completions API (POST /v1/completions) without post-processing", modelId, what),
            RestStatus.BAD_REQUEST);
    }

    private static String abbreviate(Object o) {
        String s = String.valueOf(o);
        return s.length() > 200 ? s.substring(0, 200) + "..." : s;
    }

    /** Code-point offsets (as the servers count) to UTF-16 offsets (as Java strings index) of one string. */
    private static final class Offsets {
        private final String text;
        private final int codePoints;

        Offsets(String text) {
            this.text = text;
            this.codePoints = text.codePointCount(0, text.length());
        }

        int codePoints() {
            return codePoints;
        }

        /** The UTF-16 offset of code point {@code cp}, or -1 beyond the end. */
        int utf16(int cp) {
            if (cp > codePoints) {
                return -1;
            }
            return codePoints == text.length() ? cp : text.offsetByCodePoints(0, cp);
        }
    }
}
