package io.strata.bench;

import ai.djl.huggingface.tokenizers.HuggingFaceTokenizer;
import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtSession;
import io.strata.inference.ModelDescriptor;

import java.nio.LongBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The benchmarks' baseline: the same model embedding the same texts straight through {@code OrtSession.run}, with
 * the model's recipe (passage prefix, tokenizer truncation, CLS or mean pooling, L2 norm) and nothing else — no
 * DJL, no plugin. Either one text per pass on {@code threads} parallel callers (what Strata does), or length-sorted
 * batches on one caller (what batching would buy, at the price of batch-dependent vectors).
 */
final class RawOrt implements AutoCloseable {
    private final ModelDescriptor d;
    private final OrtEnvironment env = OrtEnvironment.getEnvironment();
    private final OrtSession session;
    private final HuggingFaceTokenizer tokenizer;
    private final boolean typeIds;

    RawOrt(ModelDescriptor d, int intraOpThreads) throws Exception {
        this.d = d;
        OrtSession.SessionOptions options = new OrtSession.SessionOptions();
        options.setIntraOpNumThreads(intraOpThreads);
        options.setInterOpNumThreads(1);
        this.session = env.createSession(d.dir().resolve(d.modelFile()).toString(), options);
        this.typeIds = session.getInputNames().contains("token_type_ids");
        this.tokenizer = HuggingFaceTokenizer.builder().optTokenizerPath(d.dir().resolve(d.tokenizerFile())).optTruncation(true)
            .optMaxLength(d.maxTokens()).optPadding(false).build();
    }

    /** Vectors of {@code texts}, one pass per text, on {@code threads} callers pulling from one cursor. */
    List<float[]> embedSingly(List<String> texts, int threads) throws Exception {
        float[][] out = new float[texts.size()][];
        AtomicInteger cursor = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<?>> lanes = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                lanes.add(pool.submit(() -> {
                    for (int i; (i = cursor.getAndIncrement()) < out.length; ) {
                        out[i] = batch(List.of(ids(texts.get(i))))[0];
                    }
                    return null;
                }));
            }
            for (Future<?> f : lanes) {
                f.get();
            }
        } finally {
            pool.shutdown();
        }
        return Arrays.asList(out);
    }

    /** Vectors of {@code texts} in length-sorted batches of {@code size} on the calling thread. */
    List<float[]> embedBatched(List<String> texts, int size) throws OrtException {
        long[][] ids = new long[texts.size()][];
        Integer[] order = new Integer[ids.length];
        for (int i = 0; i < ids.length; i++) {
            ids[i] = ids(texts.get(i));
            order[i] = i;
        }
        Arrays.sort(order, (a, b) -> Integer.compare(ids[a].length, ids[b].length));
        float[][] out = new float[ids.length][];
        for (int from = 0; from < order.length; from += size) {
            List<long[]> rows = new ArrayList<>();
            for (int b = from; b < Math.min(order.length, from + size); b++) {
                rows.add(ids[order[b]]);
            }
            float[][] v = batch(rows);
            for (int b = 0; b < v.length; b++) {
                out[order[from + b]] = v[b];
            }
        }
        return Arrays.asList(out);
    }

    private long[] ids(String text) {
        return tokenizer.encode(d.passagePrefix() + text).getIds();
    }

    private float[][] batch(List<long[]> rows) throws OrtException {
        int n = rows.size();
        int len = rows.stream().mapToInt(r -> r.length).max().orElse(0);
        long[] in = new long[n * len];
        long[] mask = new long[n * len];
        for (int b = 0; b < n; b++) {
            System.arraycopy(rows.get(b), 0, in, b * len, rows.get(b).length);
            Arrays.fill(mask, b * len, b * len + rows.get(b).length, 1L);
        }
        long[] shape = { n, len };
        try (OnnxTensor a = OnnxTensor.createTensor(env, LongBuffer.wrap(in), shape);
             OnnxTensor m = OnnxTensor.createTensor(env, LongBuffer.wrap(mask), shape);
             OnnxTensor t = OnnxTensor.createTensor(env, LongBuffer.wrap(new long[n * len]), shape)) {
            Map<String, OnnxTensor> inputs = typeIds ? Map.of("input_ids", a, "attention_mask", m, "token_type_ids", t)
                : Map.of("input_ids", a, "attention_mask", m);
            try (OrtSession.Result result = session.run(inputs)) {
                float[][][] hidden = (float[][][]) result.get(0).getValue();
                float[][] out = new float[n][];
                for (int b = 0; b < n; b++) {
                    out[b] = pool(hidden[b], rows.get(b).length);
                }
                return out;
            }
        }
    }

    private float[] pool(float[][] tokens, int real) {
        float[] v;
        if (d.pooling() == ModelDescriptor.Pooling.MEAN) {
            v = new float[tokens[0].length];
            for (int t = 0; t < real; t++) {
                for (int k = 0; k < v.length; k++) {
                    v[k] += tokens[t][k];
                }
            }
            for (int k = 0; k < v.length; k++) {
                v[k] /= real;
            }
        } else {
            v = tokens[0].clone();
        }
        double norm = 0;
        for (float x : v) {
            norm += x * x;
        }
        for (int k = 0; k < v.length; k++) {
            v[k] = (float) (v[k] / Math.sqrt(norm));
        }
        return v;
    }

    @Override
    public void close() throws Exception {
        session.close();
        tokenizer.close();
    }
}
