package io.strata.inference;

import org.opensearch.common.settings.Setting;
import org.opensearch.common.settings.Setting.Property;
import org.opensearch.common.settings.Settings;
import org.opensearch.common.util.concurrent.OpenSearchExecutors;

import java.util.List;
import java.util.Locale;

/** Node settings of the inference layer (opensearch.yml). */
public final class InferenceSettings {
    public static final String THREAD_POOL = "strata_inference";

    public static final Setting<Boolean> EMBEDDED_ENABLED = Setting.boolSetting("plugins.strata.inference.embedded.enabled", true,
        Property.NodeScope);
    public static final Setting<String> DEFAULT_MODEL = Setting.simpleString("plugins.strata.inference.default_model",
        "bge-small-en-v15-q", v -> {
            if (!ModelDescriptor.NAME.matcher(v).matches()) {
                throw new IllegalArgumentException("[plugins.strata.inference.default_model] must be a model folder name, got [" + v + "]");
            }
        }, Property.NodeScope);
    public static final Setting<String> DEVICE = Setting.simpleString("plugins.strata.inference.device", "auto", v -> {
        if (!List.of("auto", "cpu", "gpu").contains(v)) {
            throw new IllegalArgumentException("[plugins.strata.inference.device] must be one of [auto, cpu, gpu], got [" + v + "]");
        }
    }, Property.NodeScope);
    /** Embedding calls that run at once on this node (each on its own engine predictor). */
    public static final Setting<Integer> THREADS = new Setting<>("plugins.strata.inference.threads",
        s -> Integer.toString(Math.max(1, OpenSearchExecutors.allocatedProcessors(s) / 2)),
        s -> Setting.parseInt(s, 1, 64, "plugins.strata.inference.threads"), Property.NodeScope);
    /** Waiting calls beyond which new ones are rejected (429), so ingest gets back-pressure instead of memory growth. */
    public static final Setting<Integer> QUEUE_SIZE = Setting.intSetting("plugins.strata.inference.queue_size", 1000, 1, 100_000,
        Property.NodeScope);
    public static final Setting<Integer> BATCH_SIZE = Setting.intSetting("plugins.strata.inference.batch_size", 8, 1, 1024,
        Property.NodeScope);

    public static List<Setting<?>> all() {
        return List.of(EMBEDDED_ENABLED, DEFAULT_MODEL, DEVICE, THREADS, QUEUE_SIZE, BATCH_SIZE);
    }

    private InferenceSettings() {}

    static String describe(Settings settings) {
        return String.format(Locale.ROOT, "embedded=%s device=%s threads=%d batch=%d", EMBEDDED_ENABLED.get(settings),
            DEVICE.get(settings), THREADS.get(settings), BATCH_SIZE.get(settings));
    }
}
