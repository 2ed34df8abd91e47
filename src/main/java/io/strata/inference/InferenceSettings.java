package io.strata.inference;

import org.opensearch.common.settings.Setting;
import org.opensearch.common.settings.Setting.Property;
import org.opensearch.common.settings.Settings;
import org.opensearch.common.unit.TimeValue;
import org.opensearch.common.util.concurrent.OpenSearchExecutors;

import java.util.List;
import java.util.Locale;

/** Settings of the inference layer: node settings (opensearch.yml), three of them also dynamic (cluster settings). */
public final class InferenceSettings {
    public static final String THREAD_POOL = "strata_inference";
    /** The query lane: embeddings of queries, ahead of (beside) the ingest work queued on {@link #THREAD_POOL}. */
    public static final String QUERY_THREAD_POOL = "strata_inference_query";
    /**
     * Embedding calls with purpose query and at most this many texts take the query lane ({@code multi_granular}'s
     * {@code query_text} is one; {@code _embed} with purpose query may send up to {@code EmbedRequest.MAX_TEXTS}); larger
     * ones would hold the lane as long as an ingest slice, so they run on {@link #THREAD_POOL}.
     */
    public static final int QUERY_LANE_MAX_TEXTS = 16;

    public static final Setting<Boolean> EMBEDDED_ENABLED = Setting.boolSetting("plugins.strata.inference.embedded.enabled", true,
        Property.NodeScope);
    public static final Setting<String> DEFAULT_MODEL = Setting.simpleString("plugins.strata.inference.default_model",
        "e5-small-v2-q", v -> {
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
    /**
     * Admission limit (dynamic): inference tasks running or queued on this node's {@code strata_inference} pool (embedded
     * embeddings of ingest and {@code _embed}; model-guided chunking and previews; not the query lane) beyond which new
     * ones are rejected at once with 429, before they reach the pool. Lower it to shed load early without a restart; the default, threads + queue_size, never
     * rejects before the pool's own queue would.
     */
    public static final Setting<Integer> MAX_PENDING = new Setting<>("plugins.strata.inference.max_pending",
        s -> Integer.toString(THREADS.get(s) + QUEUE_SIZE.get(s)),
        s -> Setting.parseInt(s, 1, 1_000_000, "plugins.strata.inference.max_pending"), Property.Dynamic, Property.NodeScope);
    /** Query embeddings that run at once on this node (the {@code strata_inference_query} pool; one engine thread each). */
    public static final Setting<Integer> QUERY_THREADS = new Setting<>("plugins.strata.inference.query_threads",
        s -> Integer.toString(Math.max(1, OpenSearchExecutors.allocatedProcessors(s) / 4)),
        s -> Setting.parseInt(s, 1, 64, "plugins.strata.inference.query_threads"), Property.NodeScope);
    /** Query embeddings waiting for the query lane beyond which new ones are rejected (429). */
    public static final Setting<Integer> QUERY_QUEUE_SIZE = Setting.intSetting("plugins.strata.inference.query_queue_size", 1000, 1,
        100_000, Property.NodeScope);
    /**
     * How long a query embedding may wait for a query-lane thread (dynamic): one that has not started by then fails with
     * 429 naming this setting, so a saturated node sheds queries instead of letting every one of them wait longer.
     */
    public static final Setting<TimeValue> QUERY_QUEUE_TIMEOUT = Setting.timeSetting("plugins.strata.inference.query_queue_timeout",
        TimeValue.timeValueSeconds(2), TimeValue.timeValueMillis(1), TimeValue.timeValueMinutes(10), Property.Dynamic,
        Property.NodeScope);
    /**
     * How long a call of an ml-commons model ({@code model_id}, {@code llm_model_id}) may take before it fails with 504
     * (dynamic; read per call). The predict request has no timeout of its own; without this a hung connector would hold
     * the bulk request forever.
     */
    public static final Setting<TimeValue> REMOTE_TIMEOUT = Setting.timeSetting("plugins.strata.inference.remote_timeout",
        TimeValue.timeValueSeconds(60), TimeValue.timeValueMillis(100), TimeValue.timeValueMinutes(10), Property.Dynamic,
        Property.NodeScope);
    /**
     * Deprecated and ignored: every text now runs in its own forward pass so its vector does not depend on its batch
     * (see {@code DjlEmbedder}). Still registered so that a node whose opensearch.yml sets it keeps starting.
     */
    public static final Setting<Integer> BATCH_SIZE = Setting.intSetting("plugins.strata.inference.batch_size", 8, 1, 1024,
        Property.NodeScope, Property.Deprecated);

    public static List<Setting<?>> all() {
        return List.of(EMBEDDED_ENABLED, DEFAULT_MODEL, DEVICE, THREADS, QUEUE_SIZE, MAX_PENDING, QUERY_THREADS, QUERY_QUEUE_SIZE,
            QUERY_QUEUE_TIMEOUT, REMOTE_TIMEOUT, BATCH_SIZE);
    }

    private InferenceSettings() {}

    static String describe(Settings settings) {
        return String.format(Locale.ROOT, "embedded=%s device=%s threads=%d", EMBEDDED_ENABLED.get(settings),
            DEVICE.get(settings), THREADS.get(settings));
    }
}
