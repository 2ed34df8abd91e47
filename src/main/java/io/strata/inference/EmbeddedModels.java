package io.strata.inference;

import ai.djl.Device;
import ai.djl.engine.Engine;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.opensearch.common.settings.Settings;

import java.io.Closeable;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The embedded engine's loaded models: each loads through DJL on first use (once, even when several inference threads ask
 * at once), on the configured device, and stays until the node closes. A node that never embeds pays nothing. Loading
 * blocks: call on inference threads only.
 */
public final class EmbeddedModels implements Closeable {
    private static final Logger logger = LogManager.getLogger(EmbeddedModels.class);

    private final Settings settings;
    private final ModelRegistry registry;
    private final Map<String, DjlEmbedder> embedders = new ConcurrentHashMap<>();
    private final Map<String, DjlCausalLm> causalLms = new ConcurrentHashMap<>();

    public EmbeddedModels(Settings settings, ModelRegistry registry) {
        this.settings = settings;
        this.registry = registry;
    }

    /** The loaded embedding model {@code name}. */
    public DjlEmbedder embedder(String name) throws Exception {
        return loadOnce(embedders, name, (d, threads, intraOp) -> {
            if (d.isCausalLm()) {
                throw new IllegalArgumentException("[model] [" + name + "] is a causal language model, not an embedding model");
            }
            Device device = device(d);
            // CPU: each call's texts on cores/threads single-threaded lanes (faster than intra-op threads for single-text
            // passes); a GPU runs one pass at a time per caller, the device parallelises inside it
            int lanes = device.isGpu() ? 1 : intraOp;
            return DjlEmbedder.load(d, device, threads, lanes, 1, InferenceSettings.QUERY_THREADS.get(settings));
        });
    }

    /** The loaded causal LM {@code name}. */
    public DjlCausalLm causalLm(String name) throws Exception {
        return loadOnce(causalLms, name, (d, threads, intraOp) -> DjlCausalLm.load(d, device(d), threads, intraOp));
    }

    /** For each loaded model: its inputs cut to {@code max_tokens} since it loaded. */
    public Map<String, Long> truncations() {
        Map<String, Long> truncations = new TreeMap<>();
        embedders.forEach((name, embedder) -> truncations.put(name, embedder.truncatedCount()));
        causalLms.keySet().forEach(name -> truncations.put(name, 0L)); // causal LMs score whole texts in windows: nothing is cut
        return truncations;
    }

    /** How a kind of model loads from its descriptor, with its parallelism and engine threads per call. */
    private interface Loader<M> {
        M load(ModelDescriptor d, int parallelism, int intraOpThreads) throws Exception;
    }

    /**
     * The model {@code name} from {@code cache}, loaded on first use with {@link InferenceSettings#THREADS} calls in
     * parallel, each using its share of the cores.
     */
    private <M> M loadOnce(Map<String, M> cache, String name, Loader<M> loader) throws Exception {
        M model = cache.get(name);
        if (model != null) {
            return model;
        }
        synchronized (cache) {
            model = cache.get(name);
            if (model == null) {
                ModelDescriptor d = registry.descriptor(name);
                int threads = InferenceSettings.THREADS.get(settings);
                int cores = Runtime.getRuntime().availableProcessors();
                long start = System.nanoTime();
                model = Privileged.run(() -> loader.load(d, threads, Math.max(1, cores / threads)));
                logger.info("loaded model [{}] ({}, {}) in {} ms", name, d.engine(),
                    d.isCausalLm() ? "causal LM, context " + d.maxTokens() : d.dimension() + " dims", (System.nanoTime() - start) / 1_000_000);
                cache.put(name, model);
            }
            return model;
        }
    }

    /**
     * {@code plugins.strata.inference.device}: {@code cpu}; {@code gpu} (fails when the engine sees no GPU);
     * {@code auto} (GPU when the engine sees one). A GPU needs the engine's GPU natives on the node: for ONNX
     * Runtime the {@code onnxruntime_gpu} jar in place of {@code onnxruntime}, for PyTorch the CUDA build of
     * {@code pytorch-native-cu*} (see docs/operations.md).
     */
    private Device device(ModelDescriptor d) {
        String setting = InferenceSettings.DEVICE.get(settings);
        if (setting.equals("cpu")) {
            return Device.cpu();
        }
        int gpus = Engine.getEngine(d.engine().djlName).getGpuCount();
        if (gpus > 0) {
            return Device.gpu();
        }
        if (setting.equals("gpu")) {
            throw new IllegalArgumentException(String.format(Locale.ROOT,
                "[%s] is [gpu] but engine [%s] sees no GPU on this node; install the engine's GPU natives or set [auto] or [cpu]",
                InferenceSettings.DEVICE.getKey(), d.engine().djlName));
        }
        return Device.cpu();
    }

    @Override
    public void close() {
        embedders.values().forEach(DjlEmbedder::close);
        embedders.clear();
        causalLms.values().forEach(DjlCausalLm::close);
        causalLms.clear();
    }
}
