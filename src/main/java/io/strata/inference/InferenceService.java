package io.strata.inference;

import ai.djl.Device;
import ai.djl.engine.Engine;
import io.strata.chunking.CausalLm;
import io.strata.chunking.BoundaryScorer;
import io.strata.chunking.Embedder;
import io.strata.inference.boundary.BoundaryHead;
import io.strata.inference.boundary.HeadBoundaryScorer;
import io.strata.stats.StrataStats;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.opensearch.common.settings.Settings;
import org.opensearch.OpenSearchStatusException;
import org.opensearch.core.action.ActionListener;
import org.opensearch.core.rest.RestStatus;

import java.io.Closeable;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.function.Supplier;

/**
 * Resolves model references and runs embeddings: embedded models on this node's {@code strata_inference}
 * thread pool (never on transport, search or write threads), ml-commons models through {@link RemoteEmbeddings}.
 *
 * <p><b>Back-pressure.</b> Work for the pool passes an admission limit first ({@link InferenceSettings#MAX_PENDING},
 * dynamic): beyond it, or when the pool's queue is full, the caller gets 429 at once and retries later. ml-commons calls
 * are not counted against it (they run on ml-commons' pools, which reject on their own), but are bounded in time by
 * {@link InferenceSettings#REMOTE_TIMEOUT}. An embedded model call in flight cannot be interrupted (ONNX Runtime and
 * PyTorch run it to its end on the inference thread), so embedded work has no timeout: its bound is the input limits
 * ({@code max_tokens}, batch size) and the admission limit.
 *
 * <p>Embedded models are folders under {@code <config>/strata/models/}; nothing outside that folder is
 * ever read. Engines and models load on first use, so a node that never embeds pays nothing.
 */
public final class InferenceService implements Closeable {
    private static final Logger logger = LogManager.getLogger(InferenceService.class);

    private final Settings settings;
    private final Path modelsDir;
    private final Supplier<ExecutorService> executor;
    private final RemoteEmbeddings remote;
    private final RemoteLlms remoteLlms;
    private final StrataStats stats;
    private final Map<String, ModelDescriptor> descriptors = new ConcurrentHashMap<>();
    private final Map<String, DjlEmbedder> loaded = new ConcurrentHashMap<>();
    private final Map<String, BoundaryHead> heads = new ConcurrentHashMap<>();
    private final Map<String, DjlCausalLm> loadedLms = new ConcurrentHashMap<>();
    private final Admission admission;

    /** @param remote, remoteLlms ml-commons models ({@code model_id}); null where a test needs none */
    public InferenceService(Settings settings, Path modelsDir, Supplier<ExecutorService> executor, RemoteEmbeddings remote,
                            RemoteLlms remoteLlms, StrataStats stats) {
        this.settings = settings;
        this.remoteLlms = remoteLlms;
        this.modelsDir = modelsDir.toAbsolutePath().normalize();
        this.executor = executor;
        this.remote = remote;
        this.stats = stats;
        this.admission = new Admission(InferenceSettings.MAX_PENDING.get(settings));
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

    /**
     * A causal LM for a strategy: validated now ({@link #validateCausalLm}), loaded on its first call. Its methods block
     * and run the engine on the calling thread, so strategies call it from inference threads.
     */
    public CausalLm lazyCausalLm(String field, String name) {
        validateCausalLm(field, name);
        return new CausalLm() {
            @Override
            public String name() {
                return name;
            }

            @Override
            public TokenLogProbs logProbs(String text) {
                return call(lm -> lm.logProbs(text));
            }

            @Override
            public double[] eosProbabilities(String prompt, String text, int[] positions) {
                return call(lm -> lm.eosProbabilities(prompt, text, positions));
            }

            @Override
            public double[] continuationLogProbs(String prompt, List<String> candidates) {
                return call(lm -> lm.continuationLogProbs(prompt, candidates));
            }

            private <T> T call(java.util.function.Function<DjlCausalLm, T> f) {
                return counted(ModelRef.embedded(name), () -> {
                    DjlCausalLm lm = causalLm(name);
                    return Privileged.run(() -> f.apply(lm));
                });
            }
        };
    }

    /** The boundary model strategies use when their config names none (shipped in the plugin's config folder). */
    public static final String DEFAULT_BOUNDARY_MODEL = "bertchunker-bge-small";

    /**
     * BertChunker's model for a strategy: the head folder {@code name} ({@code task: boundary_head}) read and checked now,
     * its encoder (an embedding model folder) checked now and loaded on the first call.
     */
    public BoundaryScorer boundaryScorer(String field, String name) {
        BoundaryHead head = heads.computeIfAbsent(name, n -> {
            Path dir = modelDir(n);
            try {
                return BoundaryHead.read(n, dir);
            } catch (java.io.IOException e) {
                throw new IllegalArgumentException("[model] [" + n + "] cannot be read: " + e.getMessage(), e);
            }
        });
        validate("[" + field + "]", ModelRef.embedded(head.encoder()));
        return new BoundaryScorer() {
            private volatile HeadBoundaryScorer scorer;

            @Override
            public String name() {
                return head.name();
            }

            @Override
            public int windowTokens() {
                return head.windowTokens();
            }

            @Override
            public Scores score(String text) {
                return counted(ModelRef.embedded(head.name()), () -> {
                    HeadBoundaryScorer s = scorer;
                    if (s == null) {
                        DjlEmbedder encoder = embedder(head.encoder());
                        s = scorer = new HeadBoundaryScorer(new DjlTokenEncoder(encoder, head.windowTokens() + 2), head);
                    }
                    HeadBoundaryScorer loaded = s;
                    return Privileged.run(() -> loaded.score(text));
                });
            }
        };
    }

    /** The loaded causal LM (loading it on first use). Blocking: call on inference threads only. */
    public DjlCausalLm causalLm(String name) throws Exception {
        return loadOnce(loadedLms, name, (d, threads, intraOp) -> DjlCausalLm.load(d, device(d), threads, intraOp));
    }

    public void describe(ModelRef ref, ActionListener<ModelInfo> listener) {
        if (ref.isEmbedded()) {
            ModelDescriptor d;
            try {
                d = descriptor(ref.model());
            } catch (Exception e) {
                listener.onFailure(e);
                return;
            }
            listener.onResponse(new ModelInfo(ref, d.name(), d.dimension()));
        } else {
            remote.describe(ref.modelId(), listener);
        }
    }

    /**
     * Embeds {@code texts}; the listener is called on an inference thread (embedded) or a transport thread (remote).
     * Each call is counted for its model; an embedded call is timed from when an inference thread takes it.
     */
    public void embed(ModelRef ref, List<String> texts, Embedder.Purpose purpose, ActionListener<List<float[]>> listener) {
        if (!ref.isEmbedded()) {
            remote.embed(ref.modelId(), texts, purpose, stats.model(ref).counting(texts.size(), listener));
            return;
        }
        // timed from when an inference thread takes it; a rejected call is not a call of the model
        submit(() -> stats.model(ref).count(texts.size(), () -> {
            DjlEmbedder embedder = embedder(ref.model());
            return Privileged.run(() -> embedder.embed(texts, purpose));
        }), listener);
    }

    /**
     * Runs blocking model work (model-guided chunking) on the {@code strata_inference} pool, never on the caller's
     * transport or write thread; beyond the admission limit, or with a full queue, fails the listener with 429.
     */
    public <T> void run(org.opensearch.common.CheckedSupplier<T, Exception> work, ActionListener<T> listener) {
        submit(work, listener);
    }

    /**
     * Hands {@code work} to the pool if the admission limit ({@link InferenceSettings#MAX_PENDING}) lets it in, else fails
     * the listener at once with 429. The task is released when the work is done, before the listener runs.
     */
    private <T> void submit(org.opensearch.common.CheckedSupplier<T, Exception> work, ActionListener<T> listener) {
        if (!admission.tryAcquire()) {
            stats.inferenceRejected();
            listener.onFailure(rejection(admission.limit()));
            return;
        }
        try {
            executor.get().execute(() -> {
                T result = null;
                Exception failure = null;
                try {
                    result = work.get();
                } catch (Exception e) {
                    failure = e;
                } finally {
                    admission.release();
                }
                if (failure != null) {
                    listener.onFailure(failure);
                } else {
                    listener.onResponse(result);
                }
            });
        } catch (RuntimeException rejected) {
            // the pool's own queue is full (or the node is closing): 429 as well, and the caller retries later
            admission.release();
            listener.onFailure(rejected);
        }
    }

    /** The 429 of a task refused by the admission limit: names the setting, the limit, and what to do. */
    static OpenSearchStatusException rejection(int limit) {
        return new OpenSearchStatusException(String.format(Locale.ROOT,
            "[%s] inference rejected: [%d] inference tasks are already running or queued on this node, the limit set by [%s]; "
                + "retry later", InferenceSettings.THREAD_POOL, limit, InferenceSettings.MAX_PENDING.getKey()),
            RestStatus.TOO_MANY_REQUESTS);
    }

    /** Changes the admission limit (the dynamic {@link InferenceSettings#MAX_PENDING}); pending tasks are not affected. */
    public void setMaxPending(int limit) {
        admission.setLimit(limit);
    }

    /** Inference tasks admitted and not yet done on this node. */
    public int pending() {
        return admission.pending();
    }

    /**
     * Embeds on the calling thread, which must be an inference thread (see {@link #run}): an embedded model runs right
     * here (submitting to the pool and waiting could starve it); an ml-commons model is awaited up to {@code timeout}.
     * Counted like {@link #embed}.
     */
    public List<float[]> embedNow(ModelRef ref, List<String> texts, Embedder.Purpose purpose, java.time.Duration timeout)
        throws Exception {
        var future = new org.opensearch.action.support.PlainActionFuture<List<float[]>>();
        ActionListener<List<float[]>> counted = stats.model(ref).counting(texts.size(), future);
        if (ref.isEmbedded()) {
            try {
                DjlEmbedder embedder = embedder(ref.model());
                counted.onResponse(Privileged.run(() -> embedder.embed(texts, purpose)));
            } catch (Exception e) {
                counted.onFailure(e);
            }
        } else {
            remote.embed(ref.modelId(), texts, purpose, counted);
        }
        return future.actionGet(timeout.toMillis());
    }

    /** The loaded embedded model (loading it on first use). Blocking: call on inference threads only. */
    public DjlEmbedder embedder(String name) throws Exception {
        return loadOnce(loaded, name, (d, threads, intraOp) -> {
            if (d.isCausalLm()) {
                throw new IllegalArgumentException("[model] [" + name + "] is a causal language model, not an embedding model");
            }
            Device device = device(d);
            // CPU: each call's texts on cores/threads single-threaded lanes (faster than intra-op threads for single-text
            // passes); a GPU runs one pass at a time per caller, the device parallelises inside it
            int lanes = device.isGpu() ? 1 : intraOp;
            return DjlEmbedder.load(d, device, threads, lanes, 1);
        });
    }

    /** How a kind of model loads from its descriptor, with its parallelism and engine threads per call. */
    private interface Loader<M> {
        M load(ModelDescriptor d, int parallelism, int intraOpThreads) throws Exception;
    }

    /**
     * The model {@code name} from {@code cache}, loaded on first use (once, even when several inference threads ask
     * at the same time) with {@code threads} calls in parallel, each using its share of the cores.
     */
    private <M> M loadOnce(Map<String, M> cache, String name, Loader<M> loader) throws Exception {
        M model = cache.get(name);
        if (model != null) {
            return model;
        }
        synchronized (cache) {
            model = cache.get(name);
            if (model == null) {
                ModelDescriptor d = descriptor(name);
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

    /** For each loaded embedded model: its inputs cut to {@code max_tokens} since it loaded. */
    public Map<String, Long> truncations() {
        Map<String, Long> truncations = new TreeMap<>();
        loaded.forEach((name, embedder) -> truncations.put(name, embedder.truncatedCount()));
        loadedLms.keySet().forEach(name -> truncations.put(name, 0L)); // causal LMs score whole texts in windows: nothing is cut
        return truncations;
    }

    /** The folder of model {@code name}: checked to be a folder name inside the models directory, and to exist. */
    private Path modelDir(String name) {
        if (!ModelDescriptor.NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("[model] [" + name + "] is not a model folder name (" + ModelDescriptor.NAME.pattern() + ")");
        }
        Path dir = modelsDir.resolve(name).normalize();
        if (!dir.startsWith(modelsDir) || !Files.isDirectory(dir)) {
            throw new IllegalArgumentException(String.format(Locale.ROOT,
                "[model] unknown model [%s]: no folder [%s]; available: %s", name, dir, available(null)));
        }
        return dir;
    }

    ModelDescriptor descriptor(String name) {
        return descriptors.computeIfAbsent(name, n -> {
            Path dir = modelDir(n);
            try {
                return ModelDescriptor.read(n, dir);
            } catch (java.io.IOException e) {
                throw new IllegalArgumentException("[model] [" + n + "] cannot be read: " + e.getMessage(), e);
            }
        });
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

    /**
     * {@code plugins.strata.inference.device}: {@code cpu}; {@code gpu} (fails when the engine sees no GPU);
     * {@code auto} (GPU when the engine sees one). A GPU needs the engine's GPU natives on the node: for ONNX
     * Runtime the {@code onnxruntime_gpu} jar in place of {@code onnxruntime}, for PyTorch the CUDA build of
     * {@code pytorch-native-cu*} (see README).
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

    /** One blocking model call of a strategy, counted for {@code ref}; checked failures surface unchecked, naming the model. */
    private <T> T counted(ModelRef ref, java.util.concurrent.Callable<T> call) {
        try {
            return stats.model(ref).count(1, call);
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException(ref + " failed: " + e.getMessage(), e);
        }
    }

        @Override
    public void close() {
        loaded.values().forEach(DjlEmbedder::close);
        loaded.clear();
        loadedLms.values().forEach(DjlCausalLm::close);
        loadedLms.clear();
    }

    // ---- ml-commons LLMs (model_id references); embedded causal LMs are resolved by name above ----

    /**
     * The causal LM of an ml-commons model ({@code model_id}): blocking, for inference threads. Does not contact the
     * model; an unknown or undeployed id fails on first use with a message naming it.
     */
    public io.strata.chunking.CausalLm causalLm(ModelRef ref) {
        return remoteLlm(ref);
    }

    /** The text generator of an ml-commons model ({@code model_id}); as {@link #causalLm(ModelRef)}. */
    public io.strata.chunking.TextGenerator generator(ModelRef ref) {
        return remoteLlm(ref);
    }

    private RemoteLlms.Llm remoteLlm(ModelRef ref) {
        if (ref.isEmbedded()) {
            throw new IllegalArgumentException("[model] [" + ref.model() + "] is an embedded model; only [model_id] LLMs are served here");
        }
        if (remoteLlms == null) {
            throw new IllegalStateException("[model_id] [" + ref.modelId() + "] ml-commons LLMs are not wired on this node");
        }
        RemoteLlms.Llm llm = remoteLlms.llm(ref.modelId());
        return new RemoteLlms.Llm() { // every call counted under the model id, like embeddings
            @Override
            public String name() {
                return llm.name();
            }

            @Override
            public TokenLogProbs logProbs(String text) {
                return counted(() -> llm.logProbs(text));
            }

            @Override
            public double[] eosProbabilities(String prompt, String text, int[] positions) {
                return counted(() -> llm.eosProbabilities(prompt, text, positions));
            }

            @Override
            public double[] continuationLogProbs(String prompt, List<String> candidates) {
                return counted(() -> llm.continuationLogProbs(prompt, candidates));
            }

            @Override
            public String generate(String prompt, int maxTokens) {
                return counted(() -> llm.generate(prompt, maxTokens));
            }

            private <T> T counted(java.util.concurrent.Callable<T> call) {
                return InferenceService.this.counted(ref, call);
            }
        };
    }
}
