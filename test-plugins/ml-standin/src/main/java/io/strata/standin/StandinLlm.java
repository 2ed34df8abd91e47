package io.strata.standin;

import org.opensearch.OpenSearchStatusException;
import org.opensearch.core.rest.RestStatus;
import org.opensearch.ml.common.dataset.remote.RemoteInferenceInputDataSet;
import org.opensearch.ml.common.input.MLInput;
import org.opensearch.ml.common.output.model.ModelTensor;
import org.opensearch.ml.common.output.model.ModelTensorOutput;
import org.opensearch.ml.common.output.model.ModelTensors;
import org.opensearch.ml.common.transport.MLTaskResponse;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A remote LLM behind a connector to an OpenAI-compatible completions API, as ml-commons answers for it (the API's JSON
 * as the {@code dataAsMap} of one {@code response} tensor), with a deterministic built-in "model":
 * <ul>
 * <li>tokens: a word or a single punctuation mark, with the whitespace before it; trailing whitespace is a token;</li>
 * <li>log p(token | before) = ln 0.5 when the same word (case-insensitive) occurred before, else ln 0.05;</li>
 * <li>p(EOS | before) = {@link #EOS_AFTER_SENTENCE} when the text before (ignoring trailing whitespace) ends with
 *     {@code .}, {@code !} or {@code ?}, else {@link #EOS_ELSEWHERE};</li>
 * <li>greedy generation: after the first token, EOS when p(EOS) &gt; 0.5 (answered as {@code <|endoftext|>} in the log-probs, not in the
 *     text, {@code finish_reason: stop}), else the next token of the prompt's longest line (so a "summary" repeats the
 *     document's first words), {@code finish_reason: length} after {@code max_tokens}.</li>
 * </ul>
 * Parameters as a completions connector passes them: {@code prompt}, {@code max_tokens}, {@code echo}, {@code logprobs}
 * (top alternatives per token: EOS, the actual token, then fillers of probability 0.005). Offsets count code points, as
 * Python servers do.
 */
final class StandinLlm {
    static final String EOS = "<|endoftext|>";
    static final double EOS_AFTER_SENTENCE = 0.6;
    static final double EOS_ELSEWHERE = 0.01;
    static final double SEEN = 0.5;
    static final double UNSEEN = 0.05;
    private static final Pattern TOKEN = Pattern.compile("\\s*[\\p{L}\\p{N}]+|\\s*[^\\s\\p{L}\\p{N}]|\\s+");
    private static final List<String> FILLERS = List.of(" the", ",", " and", " of", " a");

    private StandinLlm() {}

    /** The answer to a predict call; {@code withLogProbs} false plays a connector whose template drops echo/logprobs. */
    static MLTaskResponse predict(MLInput input, boolean withLogProbs) {
        return predict(input, withLogProbs, true);
    }

    /** {@code listsEos} false plays a server whose top alternatives never include the end-of-sequence token. */
    static MLTaskResponse predict(MLInput input, boolean withLogProbs, boolean listsEos) {
        return predict(input, withLogProbs, listsEos, Integer.MAX_VALUE);
    }

    /**
     * {@code context}: the served model's context in tokens; a prompt whose tokens plus {@code max_tokens} exceed it is
     * refused as OpenAI-compatible servers refuse it (HTTP 400, reported by ml-commons as an error from the remote service).
     */
    static MLTaskResponse predict(MLInput input, boolean withLogProbs, boolean listsEos, int context) {
        Map<String, String> p = ((RemoteInferenceInputDataSet) input.getInputDataset()).getParameters();
        String prompt = p.getOrDefault("prompt", "");
        int maxTokens = Integer.parseInt(p.getOrDefault("max_tokens", "16"));
        int promptLength = tokens(prompt).size();
        if ((long) promptLength + maxTokens > context) {
            throw new OpenSearchStatusException(String.format(Locale.ROOT, "Error from remote service: {\"error\":{\"message\":\"This model's "
                + "maximum context length is %d tokens. However, you requested %d tokens (%d in your prompt; %d for the completion).\","
                + "\"type\":\"invalid_request_error\"}}", context, promptLength + maxTokens, promptLength, maxTokens), RestStatus.BAD_REQUEST);
        }
        boolean echo = withLogProbs && Boolean.parseBoolean(p.getOrDefault("echo", "false"));
        int logprobs = withLogProbs && p.get("logprobs") != null ? Integer.parseInt(p.get("logprobs")) : -1;

        List<String> promptTokens = tokens(prompt);
        List<String> tokens = new ArrayList<>(promptTokens);
        List<String> longestLine = tokens(Arrays.stream(prompt.split("\n")).reduce("", (a, b) -> b.strip().length() > a.length() ? b.strip() : a));
        StringBuilder completion = new StringBuilder();
        String finish = "length";
        int firstGenerated = tokens.size();
        for (int g = 0; g < maxTokens; g++) {
            // like a real completion model, answer with at least one token even after a finished sentence
            if (g > 0 && eos(String.join("", tokens)) > 0.5) {
                tokens.add(EOS);
                finish = "stop";
                break;
            }
            if (g >= longestLine.size()) {
                finish = "stop";
                break;
            }
            String next = longestLine.get(g);
            if (g == 0) {
                next = (!prompt.isEmpty() && !Character.isWhitespace(prompt.charAt(prompt.length() - 1)) ? " " : "") + next.strip();
            }
            tokens.add(next);
            completion.append(next);
        }

        Map<String, Object> choice = new LinkedHashMap<>();
        choice.put("text", echo ? prompt + completion : completion.toString());
        choice.put("index", 0);
        choice.put("finish_reason", finish);
        if (logprobs >= 0) {
            int from = echo ? 0 : firstGenerated;
            List<Object> texts = new ArrayList<>(), lps = new ArrayList<>(), offsets = new ArrayList<>(), tops = new ArrayList<>();
            String before = "";
            for (int i = 0; i < tokens.size(); i++) {
                String t = tokens.get(i);
                if (i >= from) {
                    texts.add(t);
                    offsets.add(before.codePointCount(0, before.length()));
                    lps.add(i == 0 ? null : logProb(before, t));
                    tops.add(i == 0 || logprobs == 0 ? null : top(before, t, logprobs, listsEos));
                }
                before += t.equals(EOS) ? "" : t;
            }
            Map<String, Object> lp = new LinkedHashMap<>();
            lp.put("tokens", texts);
            lp.put("token_logprobs", lps);
            lp.put("top_logprobs", tops);
            lp.put("text_offset", offsets);
            choice.put("logprobs", lp);
        }
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("id", "cmpl-standin");
        body.put("object", "text_completion");
        body.put("model", "standin-llm");
        body.put("choices", List.of(choice));
        return new MLTaskResponse(new ModelTensorOutput(List.of(new ModelTensors(List.of(
            ModelTensor.builder().name("response").dataAsMap(body).build())))));
    }

    static List<String> tokens(String text) {
        List<String> out = new ArrayList<>();
        Matcher m = TOKEN.matcher(text);
        while (m.find()) {
            out.add(m.group());
        }
        return out;
    }

    static double eos(String before) {
        String s = before.stripTrailing();
        return s.endsWith(".") || s.endsWith("!") || s.endsWith("?") ? EOS_AFTER_SENTENCE : EOS_ELSEWHERE;
    }

    static double logProb(String before, String token) {
        if (token.equals(EOS)) {
            return Math.log(eos(before));
        }
        Set<String> seen = new HashSet<>();
        for (String t : tokens(before)) {
            seen.add(t.strip().toLowerCase(Locale.ROOT));
        }
        String word = token.strip().toLowerCase(Locale.ROOT);
        return Math.log(!word.isEmpty() && seen.contains(word) ? SEEN : UNSEEN);
    }

    /** The {@code k} most likely next tokens after {@code before}: EOS, the actual token, then fillers. */
    private static Map<String, Double> top(String before, String actual, int k, boolean listsEos) {
        Map<String, Double> top = new LinkedHashMap<>();
        if (listsEos) {
            top.put(EOS, Math.log(eos(before)));
        }
        top.putIfAbsent(actual, logProb(before, actual));
        for (String f : FILLERS) {
            top.putIfAbsent(f, Math.log(0.005)); // below EOS_ELSEWHERE: EOS is always among the top 2..5
        }
        Map<String, Double> sorted = new LinkedHashMap<>();
        top.entrySet().stream().sorted(Map.Entry.<String, Double>comparingByValue().reversed()).limit(k)
            .forEach(e -> sorted.put(e.getKey(), e.getValue()));
        return sorted;
    }
}
