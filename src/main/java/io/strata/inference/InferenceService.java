package io.strata.inference;

import io.strata.chunking.BoundaryScorer;
import io.strata.chunking.CausalLm;
import io.strata.chunking.Embedder;
import io.strata.chunking.TextGenerator;
import io.strata.context.TokenCounter;
import io.strata.inference.boundary.BoundaryHead;
import io.strata.inference.boundary.HeadBoundaryScorer;
import io.strata.model.ModelInfo;
import io.strata.model.ModelRef;
import io.strata.stats.StrataStats;
import org.opensearch.action.support.PlainActionFuture;
import org.opensearch.common.CheckedSupplier;
import io.strata.chunking.structure.NestingLimit;
import org.opensearch.common.settings.Settings;
import org.opensearch.core.action.ActionListener;
import org.opensearch.threadpool.ThreadPool;

import java.io.Closeable;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Runs model work for ingest, query and the REST endpoints: embedded models ({@link ModelRegistry} finds and checks them,
 * {@link EmbeddedModels} loads them) on the inference pools through {@link InferenceExecutor} (query embeddings on the
 * query lane, everything else on {@code strata_inference}), ml-commons models ({@code model_id}) through
 * {@link RemoteEmbeddings} and {@link RemoteLlms}. Every model call is counted in {@link StrataStats} under its model.
 * ml-commons calls pass through no Strata queue (a query's predict call never waits behind Strata's ingest work; it
 * shares ml-commons' own predict pool with ingest's) and are not counted against the admission limit (ml-commons'
 * pools reject on their own), but are bounded in time by {@link InferenceSettings#REMOTE_TIMEOUT}.
 */
public final class InferenceService implements Closeable {
    /** The boundary model strategies use when their config names none (shipped in the plugin's config folder). */
    public static final String DEFAULT_BOUNDARY_MODEL = "bertchunker-bge-small";

    private final ModelRegistry registry;
    private final EmbeddedModels embedded;
    private final InferenceExecutor executor;
    private final RemoteEmbeddings remote;
    private final RemoteLlms remoteLlms;
    private final StrataStats stats;
    private final NestingLimit nestingLimit;

    /** @param remote, remoteLlms ml-commons models ({@code model_id}); null where a test needs none */
    /**
     * @param threadPool the node's thread pool with the {@code strata_inference} and {@code strata_inference_query} pools,
     *                   looked up on use; null where nothing runs on it
     */
    public InferenceService(Settings settings, Path modelsDir, Supplier<ThreadPool> threadPool, RemoteEmbeddings remote,
                            RemoteLlms remoteLlms, StrataStats stats) {
        this.registry = new ModelRegistry(settings, modelsDir);
        this.embedded = new EmbeddedModels(settings, registry);
        this.executor = new InferenceExecutor(threadPool, InferenceSettings.MAX_PENDING.get(settings),
            InferenceSettings.QUERY_QUEUE_TIMEOUT.get(settings), stats);
        this.remote = remote;
        this.remoteLlms = remoteLlms;
        this.stats = stats;
        this.nestingLimit = new NestingLimit(Chunkers.MAX_NESTING_DEPTH.get(settings));
    }

    /** How deep a document's structure may nest ({@link Chunkers#MAX_NESTING_DEPTH}). */
    public NestingLimit nestingLimit() {
        return nestingLimit;
    }

    public ModelRegistry registry() {
        return registry;
    }

    public EmbeddedModels embedded() {
        return embedded;
    }

    public InferenceExecutor executor() {
        return executor;
    }

    /** The reference used when a configuration names no model. */
    public ModelRef defaultRef() {
        return registry.defaultRef();
    }

    /** See {@link ModelRegistry#validate}. */
    public void validate(String owner, ModelRef ref) {
        registry.validate(owner, ref);
    }

    /**
     * Runs blocking model work (model-guided chunking, previews) on the {@code strata_inference} pool, never on the caller's
     * transport or write thread; beyond the admission limit, or with a full queue, fails the listener with 429.
     */
    public <T> void run(CheckedSupplier<T, Exception> work, ActionListener<T> listener) {
        executor.run(work, listener);
    }

    /**
     * Counts tokens with embedded model {@code model}'s tokenizer (loading the model on first use). Blocking: call it on an
     * inference thread ({@link #runQuery}).
     */
    public TokenCounter tokenCounter(String model) throws Exception {
        DjlEmbedder embedder = embedded.embedder(model);
        TokenCounter words = embedder.wordCounter();
        return new TokenCounter() {
            @Override
            public int count(String text) {
                return tokenize(() -> words != null ? words.count(text) : embedder.textTokens(text));
            }

            @Override
            public int[] starts(String text) {
                // the tokens starting in a span cut at whitespace are its tokens for a tokenizer that splits at whitespace
                // first (WordPiece: every bundled model); for another one the packer's final count of each passage and of
                // the whole text keeps its figures exact and the budget kept
                return tokenize(() -> words != null ? words.starts(text) : embedder.tokenStarts(text));
            }
        };
    }

    private static <T> T tokenize(Privileged.Call<T> work) {
        try {
            return Privileged.run(work);
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** Runs short blocking work of a search (a few texts) on the query lane; see {@link InferenceExecutor#runQuery}. */
    public <T> void runQuery(CheckedSupplier<T, Exception> work, ActionListener<T> listener) {
        executor.runQuery(work, listener);
    }

    public void describe(ModelRef ref, ActionListener<ModelInfo> listener) {
        if (ref.isEmbedded()) {
            ModelDescriptor d;
            try {
                d = registry.descriptor(ref.model());
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
     * Each call is counted for its model; an embedded call is timed from when an inference thread takes it. Embedded
     * calls with purpose query and at most {@link InferenceSettings#QUERY_LANE_MAX_TEXTS} texts take the query lane.
     */
    public void embed(ModelRef ref, List<String> texts, Embedder.Purpose purpose, ActionListener<List<float[]>> listener) {
        if (!ref.isEmbedded()) {
            remote.embed(ref.modelId(), texts, purpose, stats.model(ref).counting(texts.size(), listener));
            return;
        }
        // timed from when an inference thread takes it; a rejected call is not a call of the model
        if (purpose == Embedder.Purpose.QUERY && texts.size() <= InferenceSettings.QUERY_LANE_MAX_TEXTS) {
            executor.runQuery(() -> stats.model(ref).count(texts.size(), () -> {
                DjlEmbedder embedder = embedded.embedder(ref.model());
                return Privileged.run(() -> embedder.embedQuery(texts, purpose));
            }), listener);
            return;
        }
        executor.run(() -> stats.model(ref).count(texts.size(), () -> {
            DjlEmbedder embedder = embedded.embedder(ref.model());
            return Privileged.run(() -> embedder.embed(texts, purpose));
        }), listener);
    }

    /**
     * Late chunking ({@link Embedder#embedSpans}): per text its vector and its spans' vectors, one forward pass (series) per
     * text, on {@code strata_inference}; counted as one text per text. Embedded models only (see {@link #lateChunkingProblem}).
     */
    public void embedSpans(ModelRef ref, List<Embedder.SpannedText> texts, Embedder.Purpose purpose,
                           ActionListener<List<List<float[]>>> listener) {
        String problem = lateChunkingProblem(ref);
        if (problem != null) {
            listener.onFailure(new IllegalArgumentException(problem));
            return;
        }
        executor.run(() -> stats.model(ref).count(texts.size(), () -> {
            DjlEmbedder embedder = embedded.embedder(ref.model());
            return Privileged.run(() -> embedder.embedSpans(texts, purpose));
        }), listener);
    }

    /**
     * Why {@code ref} cannot embed late-chunked children, or null when it can: only embedded mean-pooling models give
     * their token states here (an ml-commons model answers with one vector per text).
     */
    public String lateChunkingProblem(ModelRef ref) {
        if (!ref.isEmbedded()) {
            return "ml-commons model [" + ref.modelId() + "] gives one vector per text, not token states; late chunking needs an "
                + "embedded mean-pooling model ([model])";
        }
        return DjlEmbedder.spanPoolingProblem(registry.descriptor(ref.model()));
    }

    /**
     * Embeds on the calling thread, which must be an inference thread (see {@link #run}): an embedded model runs right
     * here (submitting to the pool and waiting could starve it); an ml-commons model is awaited up to {@code timeout}.
     * Counted like {@link #embed}.
     */
    public List<float[]> embedNow(ModelRef ref, List<String> texts, Embedder.Purpose purpose, Duration timeout) throws Exception {
        var future = new PlainActionFuture<List<float[]>>();
        ActionListener<List<float[]>> counted = stats.model(ref).counting(texts.size(), future);
        if (ref.isEmbedded()) {
            try {
                DjlEmbedder embedder = embedded.embedder(ref.model());
                counted.onResponse(Privileged.run(() -> embedder.embed(texts, purpose)));
            } catch (Exception e) {
                counted.onFailure(e);
            }
        } else {
            remote.embed(ref.modelId(), texts, purpose, counted);
        }
        return future.actionGet(timeout.toMillis());
    }

    /**
     * An embedded causal LM for a strategy: validated now ({@link ModelRegistry#validateCausalLm}), loaded on its first
     * call. Its methods block and run the engine on the calling thread, so strategies call it from inference threads.
     */
    public CausalLm lazyCausalLm(String field, String name) {
        registry.validateCausalLm(field, name);
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

            private <T> T call(Function<DjlCausalLm, T> f) {
                return counted(ModelRef.embedded(name), () -> {
                    DjlCausalLm lm = embedded.causalLm(name);
                    return Privileged.run(() -> f.apply(lm));
                });
            }
        };
    }

    /**
     * BertChunker's model for a strategy: the head folder {@code name} ({@code task: boundary_head}) read and checked now,
     * its encoder (an embedding model folder) checked now and loaded on the first call.
     */
    public BoundaryScorer boundaryScorer(String field, String name) {
        BoundaryHead head = registry.boundaryHead(name);
        registry.validate("[" + field + "]", ModelRef.embedded(head.encoder()));
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
                        DjlEmbedder encoder = embedded.embedder(head.encoder());
                        s = scorer = new HeadBoundaryScorer(new DjlTokenEncoder(encoder, head.windowTokens() + 2), head);
                    }
                    HeadBoundaryScorer loaded = s;
                    return Privileged.run(() -> loaded.score(text));
                });
            }
        };
    }

    /**
     * The causal LM of an ml-commons model ({@code model_id}): blocking, for inference threads. Does not contact the
     * model; an unknown or undeployed id fails on first use with a message naming it.
     */
    public CausalLm causalLm(ModelRef ref) {
        return remoteLlm(ref);
    }

    /** The text generator of an ml-commons model ({@code model_id}); as {@link #causalLm(ModelRef)}. */
    public TextGenerator generator(ModelRef ref) {
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
                return counted(ref, () -> llm.logProbs(text));
            }

            @Override
            public double[] eosProbabilities(String prompt, String text, int[] positions) {
                return counted(ref, () -> llm.eosProbabilities(prompt, text, positions));
            }

            @Override
            public double[] continuationLogProbs(String prompt, List<String> candidates) {
                return counted(ref, () -> llm.continuationLogProbs(prompt, candidates));
            }

            @Override
            public String generate(String prompt, int maxTokens) {
                return counted(ref, () -> llm.generate(prompt, maxTokens));
            }
        };
    }

    /** One blocking model call of a strategy, counted for {@code ref}; checked failures surface unchecked, naming the model. */
    private <T> T counted(ModelRef ref, Callable<T> call) {
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
        embedded.close();
    }
}
