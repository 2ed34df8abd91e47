package io.strata.model;

import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * Which model embeds: {@code {"model": "<embedded model name>"}} (a folder under the plugin's config
 * directory, run by the embedded engine) or {@code {"model_id": "<ml-commons model id>"}}. Neither means the
 * node's default embedded model.
 */
public record ModelRef(String model, String modelId) {
    /** An embedded model's folder name under the plugin's config directory: no separators, so no path leaves it. */
    public static final Pattern FOLDER_NAME = Pattern.compile("[a-z0-9][a-z0-9._-]{0,99}");

    /**
     * How messages name the folder of embedded model {@code name}: relative to the node's home, as the docs do, never the
     * node's absolute path (which callers have no business learning).
     */
    public static String shownFolder(String name) {
        return SHOWN_MODELS_DIR + "/" + name;
    }

    /** How messages name the node's models directory (see {@link #shownFolder}). */
    public static final String SHOWN_MODELS_DIR = "config/strata/models";

    public ModelRef {
        if ((model == null) == (modelId == null)) {
            throw new IllegalArgumentException("exactly one of [model] and [model_id]");
        }
    }

    public static ModelRef embedded(String name) {
        return new ModelRef(name, null);
    }

    public boolean isEmbedded() {
        return model != null;
    }

    /**
     * Reads (and removes) {@code model} / {@code model_id} from a configuration map.
     *
     * @param owner names the configuration in error messages, e.g. {@code [multi_granular_chunking]}
     * @return the reference, or null when neither key is present
     */
    public static ModelRef parse(String owner, Map<String, Object> config) {
        Object model = config.remove("model");
        Object modelId = config.remove("model_id");
        if (model != null && modelId != null) {
            throw new IllegalArgumentException(String.format(Locale.ROOT,
                "%s [model] and [model_id] cannot be combined: [model] names an embedded model, [model_id] an ml-commons model", owner));
        }
        if (model != null) {
            if (!(model instanceof String name) || !FOLDER_NAME.matcher(name).matches()) {
                throw new IllegalArgumentException(String.format(Locale.ROOT,
                    "%s [model] must be the name of a model folder in the plugin's config directory (%s), got [%s]", owner,
                    FOLDER_NAME.pattern(), model));
            }
            return new ModelRef(name, null);
        }
        if (modelId != null) {
            if (!(modelId instanceof String id) || id.isBlank()) {
                throw new IllegalArgumentException(String.format(Locale.ROOT, "%s [model_id] must be an ml-commons model id, got [%s]",
                    owner, modelId));
            }
            return new ModelRef(null, id);
        }
        return null;
    }

    @Override
    public String toString() {
        return model != null ? "model [" + model + "]" : "model_id [" + modelId + "]";
    }
}
