package io.strata.inference;

import io.strata.inference.boundary.BoundaryHead;
import io.strata.model.ModelRef;
import org.opensearch.common.settings.Settings;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The embedded models this node offers: folders under {@code <config>/strata/models/} (nothing outside that folder is
 * ever read), their descriptors read once, and the checks a pipeline or query gets when it names one (exists, right
 * kind, engine enabled). Reads files only; loading a model's network is {@link EmbeddedModels}' job.
 */
public final class ModelRegistry {
    private final Settings settings;
    private final Path modelsDir;
    private final Map<String, ModelDescriptor> descriptors = new ConcurrentHashMap<>();
    private final Map<String, BoundaryHead> heads = new ConcurrentHashMap<>();

    public ModelRegistry(Settings settings, Path modelsDir) {
        this.settings = settings;
        this.modelsDir = modelsDir.toAbsolutePath().normalize();
    }

    /** The reference used when a configuration names no model. */
    public ModelRef defaultRef() {
        return ModelRef.embedded(InferenceSettings.DEFAULT_MODEL.get(settings));
    }

    /**
     * Checks a reference when a pipeline or query is created: an embedded model must exist and have a valid
     * descriptor, and the embedded engine must be enabled.
     */
    public void validate(String owner, ModelRef ref) {
        if (ref.isEmbedded()) {
            if (!InferenceSettings.EMBEDDED_ENABLED.get(settings)) {
                throw new IllegalArgumentException(String.format(Locale.ROOT,
                    "%s the embedded inference engine is disabled on this node ([%s] is false); use [model_id] with an ml-commons model",
                    owner, InferenceSettings.EMBEDDED_ENABLED.getKey()));
            }
            if (descriptor(ref.model()).isCausalLm()) {
                throw new IllegalArgumentException(String.format(Locale.ROOT,
                    "%s [model] [%s] is a causal language model, not an embedding model; available: %s", owner, ref.model(),
                    available(false)));
            }
        }
    }

    /**
     * Checks when a pipeline is created that the embedded model {@code name}, given in config field {@code field}
     * (e.g. a strategy's {@code llm}), exists and is a causal LM ({@code "task": "causal_lm"} in its model.json).
     */
    public void validateCausalLm(String field, String name) {
        if (!InferenceSettings.EMBEDDED_ENABLED.get(settings)) {
            throw new IllegalArgumentException(String.format(Locale.ROOT,
                "[%s] the embedded inference engine is disabled on this node ([%s] is false)", field, InferenceSettings.EMBEDDED_ENABLED.getKey()));
        }
        ModelDescriptor d;
        try {
            d = descriptor(name);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(String.format(Locale.ROOT, "[%s] %s; causal language models: %s", field, e.getMessage(),
                available(true)), e);
        }
        if (!d.isCausalLm()) {
            throw new IllegalArgumentException(String.format(Locale.ROOT,
                "[%s] model [%s] is an embedding model, not a causal language model (its model.json has no [task] [causal_lm]); "
                    + "causal language models: %s", field, name, available(true)));
        }
    }

    /** The descriptor (model.json) of model folder {@code name}, read once. */
    public ModelDescriptor descriptor(String name) {
        return readOnce(descriptors, name, ModelDescriptor::read);
    }

    /** BertChunker's head folder {@code name} ({@code task: boundary_head}), read once. */
    public BoundaryHead boundaryHead(String name) {
        return readOnce(heads, name, BoundaryHead::read);
    }

    private interface Reader<T> {
        T read(String name, Path dir) throws java.io.IOException;
    }

    private <T> T readOnce(Map<String, T> cache, String name, Reader<T> reader) {
        return cache.computeIfAbsent(name, n -> {
            Path dir = modelDir(n);
            try {
                return reader.read(n, dir);
            } catch (java.io.IOException e) {
                throw new IllegalArgumentException("[model] [" + n + "] cannot be read: " + shown(e.toString()), e);
            }
        });
    }

    /** The folder of model {@code name}: checked to be a folder name inside the models directory, and to exist. */
    private Path modelDir(String name) {
        if (!ModelRef.FOLDER_NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("[model] [" + name + "] is not a model folder name (" + ModelRef.FOLDER_NAME.pattern() + ")");
        }
        Path dir = modelsDir.resolve(name).normalize();
        if (!dir.startsWith(modelsDir) || !Files.isDirectory(dir)) {
            throw new IllegalArgumentException(String.format(Locale.ROOT,
                "[model] unknown model [%s]: no folder [%s]; available: %s", name, ModelRef.shownFolder(name), available(null)));
        }
        return dir;
    }

    /** {@code message} with this node's models directory named as the docs name it, never by its absolute path. */
    String shown(String message) {
        return message.replace(modelsDir.toString(), ModelRef.SHOWN_MODELS_DIR);
    }

    /** Model folders with a model.json; {@code causalLm} null for all, else only those whose task matches. */
    private List<String> available(Boolean causalLm) {
        try (var files = Files.list(modelsDir)) {
            return files.filter(p -> Files.isRegularFile(p.resolve("model.json"))).map(p -> p.getFileName().toString()).sorted()
                .filter(n -> causalLm == null || isCausalLm(n) == causalLm).toList();
        } catch (java.io.IOException e) {
            return List.of();
        }
    }

    private boolean isCausalLm(String name) {
        try {
            return descriptor(name).isCausalLm();
        } catch (RuntimeException e) {
            return false;
        }
    }
}
