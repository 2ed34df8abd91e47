package io.strata.inference;

import io.strata.context.TokenCounter;
import io.strata.context.WordTokenCounter;
import io.strata.model.TokenEncoder;
import ai.djl.Device;
import ai.djl.Model;
import ai.djl.huggingface.tokenizers.Encoding;
import ai.djl.huggingface.tokenizers.HuggingFaceTokenizer;
import ai.djl.inference.Predictor;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;
import ai.djl.translate.NoopTranslator;
import ai.djl.huggingface.tokenizers.jni.CharSpan;
import io.strata.chunking.Embedder;

import java.io.Closeable;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.BiFunction;

/**
 * A transformer encoder run by DJL (ONNX Runtime or PyTorch) with its Hugging Face tokenizer, following
 * the model's recipe from its descriptor: instruction prefix, truncation to {@code max_tokens}, CLS or
 * mean pooling, L2 normalisation. Pooling runs in plain Java on the output array (ONNX Runtime NDArrays
 * have few operators, and falling back to another engine for them would load a second native library).
 *
 * <p><b>One forward pass per text</b>, so a text's vector is bitwise the same whatever it is embedded with (query or
 * passage, ingest or {@code _embed}, one text or a bulk). Batching cannot promise that: the int8 models quantise
 * activations dynamically, with scales computed over the whole batch tensor, so a batch neighbour moved a vector to
 * cosine ≈ 0.995 and a passage's vector depended on which documents shared its bulk. Single-text passes also waste
 * no padding, and on CPU they are not slower: the texts of one call run on {@code lanes} parallel predictors with one
 * engine thread each (on 2 cores, 72 texts/s against 65 for batches of 8 and 49 for 32 — README, embedding bench).
 * The caller runs one lane itself and helper threads owned by this embedder run the others, so a call never waits
 * for a pool it is itself running on; the lanes pull texts longest first from a shared cursor, which balances them.
 *
 * <p><b>The query lane.</b> {@link #embedQuery} runs every text on the calling thread with predictors reserved for it,
 * so a query embedding never waits for a predictor or a helper thread that an ingest call holds; it shares only the
 * engine session (the same weights: its vectors are bitwise those of {@link #embed}).
 *
 * <p>Thread-safe: the engine session is shared, predictors come from pools sized for every caller's lanes.
 */
public final class DjlEmbedder implements Embedder, Closeable {
    private final ModelDescriptor descriptor;
    private final HuggingFaceTokenizer tokenizer;
    private final Model model;
    private final BlockingQueue<Predictor<NDList, NDList>> predictors;
    /** Reserved for {@link #embedQuery}: one per query-lane thread. */
    private final BlockingQueue<Predictor<NDList, NDList>> queryPredictors;
    private final int lanes;
    private final int ingestPredictorCount;
    private final int predictorCount;
    /** Runs the lanes beyond the caller's own; null with one lane. */
    private final ExecutorService helpers;
    private final LongAdder truncated = new LongAdder();
    /** Token counts word by word, memoised across calls, when the tokenizer allows it; else null. */
    private final WordTokenCounter words;
    /** Distinct words the memo of {@link #words} holds before it starts over: ~8 MB of English words, 20 MB at worst. */
    private static final int WORD_MEMO = 100_000;

    private DjlEmbedder(ModelDescriptor descriptor, HuggingFaceTokenizer tokenizer, Model model, int parallelism, int lanes,
                        int queryParallelism) {
        this.descriptor = descriptor;
        this.tokenizer = tokenizer;
        this.model = model;
        this.lanes = lanes;
        this.words = DjlModels.splitsWordByWord(descriptor.dir().resolve(descriptor.tokenizerFile()))
            ? new WordTokenCounter(this::tokenStarts, WORD_MEMO) : null;
        int size = parallelism * lanes;
        this.ingestPredictorCount = size;
        this.predictorCount = size + queryParallelism;
        this.predictors = new ArrayBlockingQueue<>(size);
        for (int i = 0; i < size; i++) {
            predictors.add(model.newPredictor(new NoopTranslator()));
        }
        this.queryPredictors = new ArrayBlockingQueue<>(queryParallelism);
        for (int i = 0; i < queryParallelism; i++) {
            queryPredictors.add(model.newPredictor(new NoopTranslator()));
        }
        if (lanes > 1) {
            AtomicInteger n = new AtomicInteger();
            this.helpers = Executors.newFixedThreadPool(parallelism * (lanes - 1), r -> {
                Thread t = new Thread(r, "strata-embed[" + descriptor.name() + "]-lane-" + n.incrementAndGet());
                t.setDaemon(true);
                return t;
            });
        } else {
            this.helpers = null;
        }
    }

    /** Loads the model with one query-lane predictor; see {@link #load(ModelDescriptor, Device, int, int, int, int)}. */
    public static DjlEmbedder load(ModelDescriptor d, Device device, int parallelism, int lanes, int intraOpThreads)
        throws Exception {
        return load(d, device, parallelism, lanes, intraOpThreads, 1);
    }

    /**
     * Loads the model. Call through {@link Privileged} inside the node.
     *
     * @param parallelism      how many callers may {@link #embed} at once
     * @param lanes            forward passes each {@link #embed} call runs in parallel (one predictor and one thread each)
     * @param intraOpThreads   engine threads per forward pass; parallelism × lanes × intraOpThreads should not exceed the cores
     * @param queryParallelism how many callers may {@link #embedQuery} at once (one reserved predictor each)
     */
    public static DjlEmbedder load(ModelDescriptor d, Device device, int parallelism, int lanes, int intraOpThreads,
                                   int queryParallelism) throws Exception {
        if (parallelism < 1 || lanes < 1 || intraOpThreads < 1 || queryParallelism < 1) {
            throw new IllegalArgumentException("parallelism, lanes, intra-op threads and query parallelism must be >= 1");
        }
        // special tokens added by the tokenizer; truncation is ours, to count what was cut
        return DjlModels.open(d, device, intraOpThreads, true,
            (tokenizer, model) -> new DjlEmbedder(d, tokenizer, model, parallelism, lanes, queryParallelism));
    }

    public ModelDescriptor descriptor() {
        return descriptor;
    }

    @Override
    public String name() {
        return descriptor.name();
    }

    @Override
    public int dimension() {
        return descriptor.dimension();
    }

    @Override
    public int maxTokens() {
        return descriptor.maxTokens();
    }

    /** Inputs cut to {@code max_tokens} so far. */
    public long truncatedCount() {
        return truncated.sum();
    }

    @Override
    public int[] tokenCounts(List<String> texts, Purpose purpose) {
        int[] counts = new int[texts.size()];
        for (int i = 0; i < counts.length; i++) {
            counts[i] = tokenizer.encode(prefixed(texts.get(i), purpose)).getIds().length;
        }
        return counts;
    }

    /** Tokens of {@code text} alone: no instruction prefix, no special tokens (what it costs inside a prompt). */
    public int textTokens(String text) {
        return tokenizer.encode(text, false, false).getIds().length;
    }

    /**
     * Counts tokens as {@link #textTokens} and {@link #tokenStarts} do, each distinct word tokenized once (see
     * {@link WordTokenCounter}), when the tokenizer's text counts are the sums of its words' counts; else null.
     */
    public TokenCounter wordCounter() {
        return words;
    }

    /** Tokens of {@code text} embedded as a passage: instruction prefix and special tokens included, before truncation. */
    public int passageTokens(String text) {
        return tokenizer.encode(prefixed(text, Purpose.PASSAGE)).getIds().length;
    }

    /**
     * Start offsets (UTF-16) of the tokens of {@code text} alone (no prefix, no special tokens), ascending; tokens without
     * characters are left out.
     */
    public int[] tokenStarts(String text) {
        if (text.isEmpty()) {
            return new int[0];
        }
        CharSpan[] spans = tokenizer.encode(text, false, false).getCharTokenSpans();
        int[] utf16 = DjlCausalLm.utf16Offsets(text);
        int[] out = new int[spans.length];
        int n = 0;
        for (CharSpan span : spans) {
            if (span != null && span.getEnd() > span.getStart()) {
                int start = utf16 == null ? span.getStart() : utf16[Math.min(span.getStart(), utf16.length - 1)];
                if (n == 0 || start >= out[n - 1]) {
                    out[n++] = start;
                }
            }
        }
        return Arrays.copyOf(out, n);
    }

    @Override
    public List<float[]> embed(List<String> texts, Purpose purpose) {
        return embed(texts, purpose, predictors, helpers == null ? 1 : lanes);
    }

    /**
     * Embeds {@code texts} one after the other on the calling thread with a predictor reserved for the query lane (see the
     * class comment): never waits for the predictors or helper threads of {@link #embed} calls. Meant for a few texts.
     */
    public List<float[]> embedQuery(List<String> texts, Purpose purpose) {
        return embed(texts, purpose, queryPredictors, 1);
    }

    private List<float[]> embed(List<String> texts, Purpose purpose, BlockingQueue<Predictor<NDList, NDList>> from, int callLanes) {
        int n = texts.size();
        long[][] ids = new long[n][];
        long[][] types = new long[n][];
        int[] lengths = new int[n];
        for (int i = 0; i < n; i++) {
            Encoding e = tokenizer.encode(prefixed(texts.get(i), purpose));
            ids[i] = truncate(e.getIds());
            types[i] = Arrays.copyOf(e.getTypeIds(), ids[i].length);
            lengths[i] = ids[i].length;
        }
        float[][] out = new float[n][];
        inLanes(lengths, callLanes, i -> out[i] = run(from, ids[i], types[i]));
        return Arrays.asList(out);
    }

    /**
     * Runs {@code task} for every index of {@code sizes} on up to {@code callLanes} lanes (the caller's and helpers), the
     * largest first from a shared cursor (even lanes); returns when every lane is done, rethrowing the first failure.
     */
    private void inLanes(int[] sizes, int callLanes, java.util.function.IntConsumer task) {
        int n = sizes.length;
        Integer[] order = new Integer[n];
        for (int i = 0; i < n; i++) {
            order[i] = i;
        }
        Arrays.sort(order, Comparator.comparingInt((Integer i) -> sizes[i]).reversed()); // longest first: even lanes
        AtomicInteger cursor = new AtomicInteger();
        Runnable lane = () -> {
            for (int next; (next = cursor.getAndIncrement()) < n; ) {
                try {
                    task.accept(order[next]);
                } catch (RuntimeException | Error e) {
                    cursor.set(n); // the other lanes stop after their current text
                    throw e;
                }
            }
        };
        int extra = Math.max(0, Math.min(callLanes, n) - 1);
        List<Future<?>> others = new ArrayList<>(extra);
        for (int l = 0; l < extra; l++) {
            others.add(helpers.submit(lane));
        }
        RuntimeException failure = null;
        try {
            lane.run();
        } catch (RuntimeException e) {
            failure = e;
        }
        for (Future<?> f : others) { // always wait: results must not be written after we return
            try {
                f.get();
            } catch (ExecutionException e) {
                if (failure == null) {
                    failure = e.getCause() instanceof RuntimeException r ? r : new IllegalStateException(e.getCause());
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                cursor.set(n);
                failure = new IllegalStateException("interrupted while embedding with model [" + descriptor.name() + "]", e);
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    @Override
    public String spanPoolingProblem() {
        return spanPoolingProblem(descriptor);
    }

    /** Why {@code d} cannot pool spans of its token states (late chunking), or null when it can. */
    public static String spanPoolingProblem(ModelDescriptor d) {
        if (d.isCausalLm()) {
            return "model [" + d.name() + "] is a causal language model, not an embedding model";
        }
        return switch (d.pooling()) {
            case MEAN -> null;
            // A CLS model's vector is one token's state, trained to summarise the whole input; the mean of a span's token
            // states is not a vector of that kind (the late-chunking paper pools means, and evaluates mean-pooling models
            // only), so we refuse rather than write vectors the model was never trained to give.
            case CLS -> "model [" + d.name() + "] pools the [CLS] token (pooling: cls): a span's vector would be a mean of token "
                + "states, which this model was not trained to give; late chunking needs a mean-pooling model (pooling: mean)";
            case NONE -> "model [" + d.name() + "] outputs one vector per text (pooling: none), not token states";
        };
    }

    /**
     * Late chunking (Günther et al. 2024, "Late Chunking: Contextual Chunk Embeddings Using Long-Context Embedding
     * Models"): per text one pass over the whole text (with the passage prefix, as {@link #embed}), its own vector
     * pooled exactly as {@link #embed} pools it (bitwise the same: same ids, same single-row pass), and each span's vector
     * the mean of the last hidden state of the tokens that <b>start</b> inside the span, L2-normalised when the recipe
     * normalises. Texts run on the lanes like {@link #embed}, one pass (or one series of windows) each, so a text's
     * vectors never depend on the texts it came with.
     *
     * <p>As the paper, span means leave out the special tokens and the instruction prefix (they belong to no span); a
     * token straddling a span's edge belongs to the span holding its first character (so the spans of one level
     * partition the tokens, none is counted twice). A span no token starts in (never for word-sized spans) takes the
     * tokens overlapping it, and with none of those the text's own vector.
     *
     * <p>Texts over the model's context: see {@link LateWindows}. The paper's "long late chunking" also cuts the token
     * sequence into overlapping macro chunks; we differ in taking each token's state from the window where it sits most
     * centrally (BERT's "max context" rule for long SQuAD documents) instead of from its first window.
     */
    @Override
    public List<List<float[]>> embedSpans(List<SpannedText> texts, Purpose purpose) {
        String problem = spanPoolingProblem();
        if (problem != null) {
            throw new UnsupportedOperationException(problem);
        }
        int n = texts.size();
        int[] lengths = new int[n];
        for (int i = 0; i < n; i++) {
            lengths[i] = texts.get(i).text().length();
        }
        @SuppressWarnings("unchecked")
        List<float[]>[] out = new List[n];
        inLanes(lengths, helpers == null ? 1 : lanes, i -> out[i] = late(texts.get(i), purpose));
        return Arrays.asList(out);
    }

    private List<float[]> late(SpannedText st, Purpose purpose) {
        String prefix = prefix(purpose);
        Encoding e = tokenizer.encode(prefix + st.text());
        long[] ids = e.getIds();
        long[] types = e.getTypeIds();
        long[] special = e.getSpecialTokenMask();
        CharSpan[] charSpans = e.getCharTokenSpans();
        // layout: head specials ([CLS]), prefix tokens, body tokens (the text's), tail specials ([SEP])
        int bodyFrom = 0;
        while (bodyFrom < ids.length && special[bodyFrom] != 0) {
            bodyFrom++;
        }
                while (bodyFrom < ids.length && special[bodyFrom] == 0 && (charSpans[bodyFrom] == null || charSpans[bodyFrom].getStart() < prefix.length())) {
            bodyFrom++;
        }
        int bodyTo = ids.length;
        while (bodyTo > bodyFrom && special[bodyTo - 1] != 0) {
            bodyTo--;
        }
        int bodyCount = bodyTo - bodyFrom;
        int bodyStart = bodyFrom;
        int fixed = bodyFrom + (ids.length - bodyTo); // head, prefix and tail: in every window
        int dim = descriptor.dimension();
        float[][] states = new float[bodyCount][];
        float[] parent = null;
        LateWindows windows = LateWindows.of(bodyCount, Math.max(1, descriptor.maxTokens() - fixed));
        long[] parentIds = truncate(ids); // exactly what embed runs (and counted, once, as embed counts it)
        for (int w = 0; w < windows.count(); w++) {
            int from = windows.start(w);
            int to = windows.end(w);
            long[] wIds = new long[fixed + to - from];
            long[] wTypes = new long[wIds.length];
            int k = 0;
            for (int t = 0; t < bodyFrom; t++, k++) {
                wIds[k] = ids[t];
                wTypes[k] = types[t];
            }
            for (int t = bodyFrom + from; t < bodyFrom + to; t++, k++) {
                wIds[k] = ids[t];
                wTypes[k] = types[t];
            }
            for (int t = bodyTo; t < ids.length; t++, k++) {
                wIds[k] = ids[t];
                wTypes[k] = types[t];
            }
            boolean isParentInput = w == 0 && Arrays.equals(wIds, parentIds) && Arrays.equals(wTypes, Arrays.copyOf(types, parentIds.length));
            int len = wIds.length;
            long[] mask = new long[len];
            Arrays.fill(mask, 1L);
            int window = w;
            float[] pooled = forward(predictors, wIds, mask, wTypes, 1, len, (values, shape) -> {
                if (shape.dimension() != 3 || (int) shape.get(2) != dim) {
                    throw new IllegalStateException("model [" + descriptor.name() + "] returned hidden states of shape " + shape
                        + "; late chunking needs [1, tokens, " + dim + "] (a token-level output)");
                }
                for (int b = from; b < to; b++) {
                    if (windows.owner(b) == window) {
                        int row = bodyStart + (b - from); // head and prefix come first in every window
                        states[b] = Arrays.copyOfRange(values, row * dim, (row + 1) * dim);
                    }
                }
                return isParentInput ? pool(values, shape, mask, 1, len)[0] : null;
            });
            if (isParentInput) {
                parent = pooled;
            }
        }
        if (parent == null) { // a tokenizer whose windows differ from embed's truncation: the text's own pass, as embed runs it
            parent = run(predictors, parentIds, Arrays.copyOf(types, parentIds.length));
        }
        List<float[]> out = new ArrayList<>(st.spans().size() + 1);
        out.add(parent);
        for (io.strata.chunking.Span span : st.spans()) {
            out.add(spanMean(states, charSpans, bodyFrom, prefix.length() + span.start(), prefix.length() + span.end(), parent));
        }
        return out;
    }

    /** The mean of the states of the body tokens starting in {@code [start, end)} (prefixed text offsets); see {@link #embedSpans}. */
    private float[] spanMean(float[][] states, CharSpan[] charSpans, int bodyFrom, int start, int end, float[] fallback) {
        int dim = descriptor.dimension();
        double[] sum = new double[dim];
        int n = 0;
        for (int pass = 0; pass < 2 && n == 0; pass++) {
            for (int b = 0; b < states.length; b++) {
                CharSpan c = charSpans[bodyFrom + b];
                if (c == null) {
                    continue;
                }
                boolean in = pass == 0 ? c.getStart() >= start && c.getStart() < end : c.getStart() < end && c.getEnd() > start;
                if (in) {
                    float[] s = states[b];
                    for (int d = 0; d < dim; d++) {
                        sum[d] += s[d];
                    }
                    n++;
                }
            }
        }
        if (n == 0) {
            return fallback.clone();
        }
        float[] v = new float[dim];
        for (int d = 0; d < dim; d++) {
            v[d] = (float) (sum[d] / n);
        }
        if (descriptor.normalize()) {
            normalize(v);
        }
        return v;
    }

    private String prefixed(String text, Purpose purpose) {
        String prefix = prefix(purpose);
        return prefix.isEmpty() ? text : prefix + text;
    }

    /** The model's instruction prefix for {@code purpose} (empty when it has none). */
    private String prefix(Purpose purpose) {
        return purpose == Purpose.QUERY ? descriptor.queryPrefix() : descriptor.passagePrefix();
    }

    /** Keeps the first max-1 tokens and the closing special token. */
    private long[] truncate(long[] ids) {
        int max = descriptor.maxTokens();
        if (ids.length <= max) {
            return ids;
        }
        truncated.increment();
        long[] cut = Arrays.copyOf(ids, max);
        cut[max - 1] = ids[ids.length - 1];
        return cut;
    }

    /** One text, one forward pass (no padding, no batch neighbours). */
    private float[] run(BlockingQueue<Predictor<NDList, NDList>> from, long[] ids, long[] types) {
        int len = ids.length;
        long[] mask = new long[len];
        Arrays.fill(mask, 1L);
        return forward(from, ids, mask, types, 1, len, (values, shape) -> pool(values, shape, mask, 1, len)[0]);
    }

    /** One forward pass; {@code read} turns the first output (the last hidden state) into the result. */
    private <T> T forward(BlockingQueue<Predictor<NDList, NDList>> from, long[] inputIds, long[] mask, long[] typeIds, int rows, int len,
                          BiFunction<float[], Shape, T> read) {
        Predictor<NDList, NDList> predictor = takePredictor(from);
        try (NDManager manager = model.getNDManager().newSubManager()) {
            Shape shape = new Shape(rows, len);
            NDArray a = manager.create(inputIds, shape);
            a.setName("input_ids");
            NDArray m = manager.create(mask, shape);
            m.setName("attention_mask");
            NDArray t = manager.create(typeIds, shape);
            t.setName("token_type_ids");
            NDList output = predictor.predict(new NDList(a, m, t));
            NDArray first = output.get(0);
            return read.apply(first.toFloatArray(), first.getShape());
        } catch (Exception e) {
            throw new IllegalStateException("model [" + descriptor.name() + "] inference failed: " + e.getMessage(), e);
        } finally {
            from.add(predictor);
        }
    }

    /**
     * The last hidden state of every non-special token of {@code text} (no instruction prefix), with its character
     * offsets: BertChunker's per-token features. Only the first {@code maxTokens} tokens (special tokens included)
     * are encoded; the tokens past them are left out of the result.
     */
    TokenEncoder.Tokens hiddenStates(String text, int maxTokens) {
        Encoding e = tokenizer.encode(text);
        long[] ids = e.getIds();
        long[] special = e.getSpecialTokenMask();
        CharSpan[] spans = e.getCharTokenSpans();
        long[] typeIds = e.getTypeIds();
        if (ids.length > maxTokens) {
            long[] cut = Arrays.copyOf(ids, maxTokens);
            cut[maxTokens - 1] = ids[ids.length - 1]; // keep the closing special token
            ids = cut;
            special = Arrays.copyOf(special, maxTokens);
            special[maxTokens - 1] = 1;
            typeIds = Arrays.copyOf(typeIds, maxTokens);
        }
        int len = ids.length;
        long[] mask = new long[len];
        Arrays.fill(mask, 1L);
        long[] inputIds = ids;
        long[] isSpecial = special;
        return forward(predictors, inputIds, mask, typeIds, 1, len, (values, shape) -> {
            int dim = descriptor.dimension();
            if ((int) shape.get(shape.dimension() - 1) != dim || shape.dimension() != 3) {
                throw new IllegalStateException("model [" + descriptor.name() + "] returned hidden states of shape " + shape
                    + "; expected [1, tokens, " + dim + "] (a token-level output)");
            }
            int n = 0;
            for (int i = 0; i < len; i++) {
                if (isSpecial[i] == 0 && spans[i] != null) {
                    n++;
                }
            }
            int[] starts = new int[n];
            int[] ends = new int[n];
            float[][] hidden = new float[n][];
            int k = 0;
            for (int i = 0; i < len; i++) {
                if (isSpecial[i] == 0 && spans[i] != null) {
                    starts[k] = spans[i].getStart();
                    ends[k] = spans[i].getEnd();
                    hidden[k++] = Arrays.copyOfRange(values, i * dim, (i + 1) * dim);
                }
            }
            return new TokenEncoder.Tokens(starts, ends, hidden);
        });
    }

    private float[][] pool(float[] values, Shape shape, long[] mask, int rows, int len) {
        int dim = descriptor.dimension();
        if ((int) shape.get(shape.dimension() - 1) != dim) {
            throw new IllegalStateException("model [" + descriptor.name() + "] returned vectors of dimension "
                + shape.get(shape.dimension() - 1) + " but its model.json says " + dim);
        }
        float[][] out = new float[rows][dim];
        for (int r = 0; r < rows; r++) {
            float[] v = out[r];
            switch (descriptor.pooling()) {
                case NONE -> System.arraycopy(values, r * dim, v, 0, dim);
                case CLS -> System.arraycopy(values, r * len * dim, v, 0, dim);
                case MEAN -> {
                    int n = 0;
                    for (int t = 0; t < len; t++) {
                        if (mask[r * len + t] == 0) {
                            continue;
                        }
                        int base = (r * len + t) * dim;
                        for (int d = 0; d < dim; d++) {
                            v[d] += values[base + d];
                        }
                        n++;
                    }
                    for (int d = 0; d < dim; d++) {
                        v[d] /= Math.max(1, n);
                    }
                }
            }
            if (descriptor.normalize()) {
                normalize(v);
            }
        }
        return out;
    }

    static void normalize(float[] v) {
        double norm = 0;
        for (float x : v) {
            norm += x * x;
        }
        norm = Math.sqrt(norm);
        if (norm > 0) {
            for (int i = 0; i < v.length; i++) {
                v[i] = (float) (v[i] / norm);
            }
        }
    }

    private Predictor<NDList, NDList> takePredictor(BlockingQueue<Predictor<NDList, NDList>> from) {
        try {
            return from.take();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for model [" + descriptor.name() + "]", e);
        }
    }

    /** Waits for running passes (close may come while a call is in flight: every predictor comes back), then frees the model. */
    @Override
    public void close() {
        if (helpers != null) {
            helpers.shutdown();
        }
        List<Predictor<NDList, NDList>> all = new ArrayList<>();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        try {
            drain(predictors, ingestPredictorCount, all, deadline);
            drain(queryPredictors, predictorCount - ingestPredictorCount, all, deadline);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        all.forEach(Predictor::close);
        model.close();
        tokenizer.close();
    }

    /** Takes {@code count} predictors back from {@code from} into {@code into}, or as many as come back before the deadline. */
    private static void drain(BlockingQueue<Predictor<NDList, NDList>> from, int count, List<Predictor<NDList, NDList>> into, long deadline)
        throws InterruptedException {
        for (int i = 0; i < count; i++) {
            Predictor<NDList, NDList> p = from.poll(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            if (p == null) {
                return; // a pass hung: free what we have rather than block the node's shutdown
            }
            into.add(p);
        }
    }
}
