package io.strata.inference;

import io.strata.model.ModelRef;
import org.opensearch.common.xcontent.XContentHelper;
import org.opensearch.common.xcontent.json.JsonXContent;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * {@code model.json} of a model folder under the plugin's config directory
 * ({@code config/strata/models/<name>/model.json}):
 * <pre>
 * {"engine": "onnx", "model_file": "model.onnx", "tokenizer_file": "tokenizer.json", "dimension": 384,
 *  "max_tokens": 512, "pooling": "cls", "normalize": true,
 *  "query_prefix": "Represent this sentence for searching relevant passages: ", "passage_prefix": ""}
 * </pre>
 * {@code engine}: {@code onnx} (ONNX Runtime) or {@code pytorch} (TorchScript); {@code pooling}:
 * {@code cls}, {@code mean}, or {@code none} (the model outputs sentence vectors itself).
 *
 * <p>{@code task}: {@code embedding} (the default, above) or {@code causal_lm}, a decoder that maps
 * {@code input_ids} [batch, T] to {@code logits} [batch, T, vocabulary]:
 * <pre>
 * {"task": "causal_lm", "engine": "onnx", "model_file": "model.onnx", "tokenizer_file": "tokenizer.json",
 *  "max_tokens": 128, "eos_token": "&lt;|endoftext|&gt;", "bos_token": "&lt;|endoftext|&gt;"}
 * </pre>
 * {@code max_tokens} is then the context window (required), {@code eos_token} the end-of-sequence token as the
 * tokenizer spells it (required), {@code bos_token} the token every sequence starts with (optional; without it the
 * first token of a text has no log-probability), {@code chat_template} how an instruct model wants an instruction
 * (optional; see {@link #asChat}). The embedding keys do not apply to causal LMs and vice versa.
 */
public record ModelDescriptor(String name, Path dir, Engine engine, String modelFile, String tokenizerFile, int dimension,
                              int maxTokens, Pooling pooling, boolean normalize, String queryPrefix, String passagePrefix,
                              Task task, String eosToken, String bosToken, String chatTemplate) {

    public enum Task { EMBEDDING, CAUSAL_LM }

    public enum Engine {
        ONNX("OnnxRuntime"), PYTORCH("PyTorch");

        final String djlName;

        Engine(String djlName) {
            this.djlName = djlName;
        }
    }

    public enum Pooling { CLS, MEAN, NONE }

    /** Model names are folder names: no path separators, no leading dot. */
    public static final Pattern NAME = ModelRef.FOLDER_NAME;
    private static final Set<String> KEYS = Set.of("engine", "model_file", "tokenizer_file", "dimension", "max_tokens", "pooling",
        "normalize", "query_prefix", "passage_prefix", "description", "task", "eos_token", "bos_token", "chat_template");
    private static final Set<String> EMBEDDING_KEYS = Set.of("dimension", "pooling", "normalize", "query_prefix", "passage_prefix");
    private static final Set<String> CAUSAL_LM_KEYS = Set.of("eos_token", "bos_token", "chat_template");
    /** Where {@code chat_template} puts the instruction. */
    public static final String PROMPT_SLOT = "{prompt}";

    /** Reads and validates {@code dir/model.json}; every file it names must lie inside {@code dir}. */
    public static ModelDescriptor read(String name, Path dir) throws IOException {
        Path json = dir.resolve("model.json");
        if (!Files.isRegularFile(json)) {
            throw new IllegalArgumentException(err(name, "has no model.json in [" + ModelRef.shownFolder(dir.getFileName().toString()) + "]"));
        }
        Map<String, Object> map;
        try (InputStream in = Files.newInputStream(json)) {
            map = new HashMap<>(XContentHelper.convertToMap(JsonXContent.jsonXContent, in, false));
        } catch (RuntimeException e) {
            throw new IllegalArgumentException(err(name, "model.json is not valid JSON: " + e.getMessage()), e);
        }
        for (String key : map.keySet()) {
            if (!KEYS.contains(key)) {
                throw new IllegalArgumentException(err(name, "model.json has unknown key [" + key + "]; supported: " + KEYS.stream().sorted().toList()));
            }
        }
        Task task = enumValue(name, map, "task", Task.class, Task.EMBEDDING);
        Set<String> foreign = task == Task.EMBEDDING ? CAUSAL_LM_KEYS : EMBEDDING_KEYS;
        for (String key : map.keySet()) {
            if (foreign.contains(key)) {
                throw new IllegalArgumentException(err(name, "model.json [" + key + "] does not apply to a model with [task] ["
                    + task.name().toLowerCase(Locale.ROOT) + "]"));
            }
        }
        Engine engine = enumValue(name, map, "engine", Engine.class, null);
        String modelFile = file(name, dir, map, "model_file", true);
        String tokenizerFile = file(name, dir, map, "tokenizer_file", true);
        if (task == Task.CAUSAL_LM) {
            int context = positiveInt(name, map, "max_tokens", null);
            String eos = token(name, map, "eos_token", true);
            String bos = token(name, map, "bos_token", false);
            String template = chatTemplate(name, map);
            return new ModelDescriptor(name, dir, engine, modelFile, tokenizerFile, 0, context, Pooling.NONE, false, "", "", task, eos, bos,
                template);
        }
        Pooling pooling = enumValue(name, map, "pooling", Pooling.class, Pooling.CLS);
        int dimension = positiveInt(name, map, "dimension", null);
        int maxTokens = positiveInt(name, map, "max_tokens", 512);
        boolean normalize = !Boolean.FALSE.equals(map.get("normalize"));
        String queryPrefix = map.getOrDefault("query_prefix", "").toString();
        String passagePrefix = map.getOrDefault("passage_prefix", "").toString();
        return new ModelDescriptor(name, dir, engine, modelFile, tokenizerFile, dimension, maxTokens, pooling, normalize, queryPrefix,
            passagePrefix, task, null, null, null);
    }

    /**
     * {@code chat_template}: how an instruct model wants an instruction, with {@value #PROMPT_SLOT} once where the
     * instruction goes, e.g. Qwen's {@code "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\n{prompt}<|im_end|>\n<|im_start|>assistant\n"}
     * as the Meta-Chunking authors' code wraps its margin-sampling question. Only instructions are wrapped (the
     * answers scored by {@code continuationLogProbs}); texts scored for perplexity or EOS are not prompts.
     */
    private static String chatTemplate(String name, Map<String, Object> map) {
        Object v = map.get("chat_template");
        if (v == null) {
            return null;
        }
        if (!(v instanceof String s) || s.indexOf(PROMPT_SLOT) < 0 || s.indexOf(PROMPT_SLOT) != s.lastIndexOf(PROMPT_SLOT)) {
            throw new IllegalArgumentException(err(name, "model.json [chat_template] must be a string with [" + PROMPT_SLOT
                + "] exactly once, where the instruction goes, got [" + v + "]"));
        }
        return s;
    }

    /** {@code instruction} as the model wants it: inside its {@code chat_template}, or as it is without one. */
    public String asChat(String instruction) {
        if (chatTemplate == null) {
            return instruction;
        }
        int at = chatTemplate.indexOf(PROMPT_SLOT);
        return chatTemplate.substring(0, at) + instruction + chatTemplate.substring(at + PROMPT_SLOT.length());
    }

    public boolean isCausalLm() {
        return task == Task.CAUSAL_LM;
    }

    private static String token(String name, Map<String, Object> map, String key, boolean required) {
        Object v = map.get(key);
        if (v == null && !required) {
            return null;
        }
        if (!(v instanceof String s) || s.isEmpty()) {
            throw new IllegalArgumentException(err(name, "model.json needs [" + key + "], a token as the tokenizer spells it, got [" + v + "]"));
        }
        return s;
    }

    private static String file(String name, Path dir, Map<String, Object> map, String key, boolean required) {
        Object v = map.get(key);
        if (!(v instanceof String s) || s.isBlank()) {
            throw new IllegalArgumentException(err(name, "model.json needs [" + key + "], a file name in the model folder"));
        }
        Path resolved = dir.resolve(s).normalize();
        if (!resolved.startsWith(dir.normalize()) || !resolved.getParent().equals(dir.normalize())) {
            throw new IllegalArgumentException(err(name, "[" + key + "] [" + s + "] must name a file inside the model folder"));
        }
        if (required && !Files.isRegularFile(resolved)) {
            throw new IllegalArgumentException(err(name, "[" + key + "] [" + s + "] does not exist in ["
                + ModelRef.shownFolder(dir.getFileName().toString()) + "]"));
        }
        return s;
    }

    private static int positiveInt(String name, Map<String, Object> map, String key, Integer dflt) {
        Object v = map.get(key);
        if (v == null && dflt != null) {
            return dflt;
        }
        if (!(v instanceof Integer i) || i < 1) {
            throw new IllegalArgumentException(err(name, "model.json [" + key + "] must be a positive integer, got [" + v + "]"));
        }
        return i;
    }

    private static <E extends Enum<E>> E enumValue(String name, Map<String, Object> map, String key, Class<E> type, E dflt) {
        Object v = map.get(key);
        if (v == null && dflt != null) {
            return dflt;
        }
        try {
            return Enum.valueOf(type, String.valueOf(v).toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(err(name, "model.json [" + key + "] must be one of "
                + java.util.Arrays.stream(type.getEnumConstants()).map(c -> c.name().toLowerCase(Locale.ROOT)).toList() + ", got [" + v + "]"));
        }
    }

    private static String err(String name, String message) {
        return String.format(Locale.ROOT, "model [%s] %s", name, message);
    }
}
