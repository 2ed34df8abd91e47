package io.strata.inference;

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
import java.util.concurrent.atomic.LongAdder;
import java.util.function.BiFunction;

/**
 * A transformer encoder run by DJL (ONNX Runtime or PyTorch) with its Hugging Face tokenizer, following
 * the model's recipe from its descriptor: instruction prefix, truncation to {@code max_tokens}, CLS or
 * mean pooling, L2 normalisation. Pooling runs in plain Java on the output array (ONNX Runtime NDArrays
 * have few operators, and falling back to another engine for them would load a second native library).
 *
 * <p>Texts are sorted by token length before batching, so a batch of mixed parents and children pads
 * little. Thread-safe: the engine session is shared, predictors come from a pool.
 */
public final class DjlEmbedder implements Embedder, Closeable {
    private final ModelDescriptor descriptor;
    private final HuggingFaceTokenizer tokenizer;
    private final Model model;
    private final BlockingQueue<Predictor<NDList, NDList>> predictors;
    private final int batchSize;
    private final LongAdder truncated = new LongAdder();

    private DjlEmbedder(ModelDescriptor descriptor, HuggingFaceTokenizer tokenizer, Model model, int parallelism, int batchSize) {
        this.descriptor = descriptor;
        this.tokenizer = tokenizer;
        this.model = model;
        this.batchSize = batchSize;
        this.predictors = new ArrayBlockingQueue<>(parallelism);
        for (int i = 0; i < parallelism; i++) {
            predictors.add(model.newPredictor(new NoopTranslator()));
        }
    }

    /**
     * Loads the model. Call through {@link Privileged} inside the node.
     *
     * @param parallelism   how many threads may embed at once (one predictor each)
     * @param intraOpThreads engine threads per call; parallelism × intraOpThreads should not exceed the cores
     */
    public static DjlEmbedder load(ModelDescriptor d, Device device, int parallelism, int intraOpThreads, int batchSize)
        throws Exception {
        HuggingFaceTokenizer tokenizer = DjlModels.tokenizer(d, true); // truncation is ours, to count what was cut
        Model model = null;
        try {
            model = DjlModels.network(d, device, intraOpThreads);
            return new DjlEmbedder(d, tokenizer, model, parallelism, batchSize);
        } catch (RuntimeException | Error e) {
            tokenizer.close();
            if (model != null) {
                model.close();
            }
            throw e;
        }
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

    @Override
    public List<float[]> embed(List<String> texts, Purpose purpose) {
        long[][] ids = new long[texts.size()][];
        long[][] types = new long[texts.size()][];
        for (int i = 0; i < ids.length; i++) {
            Encoding e = tokenizer.encode(prefixed(texts.get(i), purpose));
            ids[i] = truncate(e.getIds());
            types[i] = Arrays.copyOf(e.getTypeIds(), ids[i].length);
        }
        Integer[] order = new Integer[ids.length];
        for (int i = 0; i < order.length; i++) {
            order[i] = i;
        }
        Arrays.sort(order, Comparator.comparingInt(i -> ids[i].length));
        float[][] out = new float[ids.length][];
        for (int from = 0; from < order.length; from += batchSize) {
            int[] batch = new int[Math.min(batchSize, order.length - from)];
            for (int b = 0; b < batch.length; b++) {
                batch[b] = order[from + b];
            }
            float[][] vectors = run(ids, types, batch);
            for (int b = 0; b < batch.length; b++) {
                out[batch[b]] = vectors[b];
            }
        }
        return Arrays.asList(out);
    }

    private String prefixed(String text, Purpose purpose) {
        String prefix = purpose == Purpose.QUERY ? descriptor.queryPrefix() : descriptor.passagePrefix();
        return prefix.isEmpty() ? text : prefix + text;
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

    private float[][] run(long[][] ids, long[][] types, int[] batch) {
        int rows = batch.length;
        int len = 0;
        for (int i : batch) {
            len = Math.max(len, ids[i].length);
        }
        long[] inputIds = new long[rows * len];
        long[] mask = new long[rows * len];
        long[] typeIds = new long[rows * len];
        for (int r = 0; r < rows; r++) {
            long[] row = ids[batch[r]];
            System.arraycopy(row, 0, inputIds, r * len, row.length);
            System.arraycopy(types[batch[r]], 0, typeIds, r * len, row.length);
            Arrays.fill(mask, r * len, r * len + row.length, 1L);
        }
        int length = len;
        return forward(inputIds, mask, typeIds, rows, len, (values, shape) -> pool(values, shape, mask, rows, length));
    }

    /** One forward pass; {@code read} turns the first output (the last hidden state) into the result. */
    private <T> T forward(long[] inputIds, long[] mask, long[] typeIds, int rows, int len, BiFunction<float[], Shape, T> read) {
        Predictor<NDList, NDList> predictor = takePredictor();
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
            predictors.add(predictor);
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
        return forward(inputIds, mask, typeIds, 1, len, (values, shape) -> {
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

    private Predictor<NDList, NDList> takePredictor() {
        try {
            return predictors.take();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for model [" + descriptor.name() + "]", e);
        }
    }

    @Override
    public void close() {
        List<Predictor<NDList, NDList>> all = new ArrayList<>();
        predictors.drainTo(all);
        all.forEach(Predictor::close);
        model.close();
        tokenizer.close();
    }
}
