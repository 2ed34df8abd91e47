package io.strata.ingest;

import io.strata.chunking.Chunk;
import io.strata.chunking.ChildEmbedding;
import io.strata.chunking.ChunkContext;
import io.strata.chunking.ChunkedParent;
import io.strata.chunking.ConfigMap;
import io.strata.chunking.Embedder;
import io.strata.inference.InferenceService;
import io.strata.model.ModelRef;
import org.opensearch.core.action.ActionListener;
import org.opensearch.core.xcontent.XContentBuilder;

import java.io.IOException;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * What {@code _chunk} shows of the chunks' vectors: the options {@code children} (the processor's, read and refused the
 * same way), {@code vectors}, {@code query_text} and {@code compare_embedding}; the vectors, computed by the pipeline's own
 * paths ({@link InferenceService#embed} one text per chunk for {@code separate}, {@link InferenceService#embedSpans} one
 * pass per parent for {@code late}, each chunk with its context header as a pipeline embeds it); and how they render.
 * <ul>
 *   <li>{@code vectors: true}: every chunk's {@code vectors: {"<mode>": [...]}}, the vector a pipeline with that
 *       {@code children} mode stores for it;</li>
 *   <li>{@code query_text}: every chunk's {@code scores: {"<mode>": s}} with {@code s = (1 + cos) / 2} against the query
 *       (embedded as a query), the score of a {@code knn_vector} with {@code cosinesimil}; every parent's
 *       {@code best: {"<mode>": {level, ordinal, score}}}, the chunk that scores it (itself or a child), and the answer's
 *       {@code embedding.best}, the best chunk of the text;</li>
 *   <li>{@code compare_embedding: true}: both modes at once ({@code separate} and {@code late}, whatever {@code children}
 *       says), and every chunk's {@code separate_late_cosine}.</li>
 * </ul>
 * Without these options {@code children} is only checked. At most {@value #MAX_CHUNKS} chunks are embedded per request.
 */
final class PreviewEmbeddings {
    static final String VECTORS = "vectors";
    static final String QUERY_TEXT = "query_text";
    static final String COMPARE = "compare_embedding";
    static final Set<String> KEYS = Set.of(ChildEmbedding.FIELD, VECTORS, QUERY_TEXT, COMPARE);
    /** Chunks embedded per request at most, as {@code _embed}'s texts. */
    static final int MAX_CHUNKS = 1000;

    /**
     * @param modes  the modes shown: {@code children}'s, or both with {@code compare_embedding}
     * @param model  the model the chunks are embedded with
     * @param query  {@code query_text}, or null
     */
    record Options(ChildEmbedding children, List<ChildEmbedding> modes, boolean vectors, String query, ModelRef model,
                   boolean keepRedundant) {
        /** Whether anything is embedded. */
        boolean embeds() {
            return vectors || query != null || modes.size() > 1;
        }
    }

    /** The vectors of a preview: per mode, per parent, its chunks' in {@link ChunkedParent#all()} order; the query's vector. */
    record Vectors(Map<ChildEmbedding, List<List<float[]>>> chunks, float[] query) {}

    private PreviewEmbeddings() {}

    /**
     * Reads the options from {@code config} (consuming them).
     *
     * @param model the request's model, or null for the node's default
     */
    static Options parse(ConfigMap config, ModelRef model, InferenceService inference) {
        ModelRef ref = model == null ? inference.defaultRef() : model;
        ChildEmbedding.Options childOptions = MultiGranularChunkingProcessor.Factory.childOptions(config.remove(ChildEmbedding.FIELD),
            ref, inference);
        ChildEmbedding children = childOptions.embedding();
        boolean vectors = config.booleanValue(VECTORS, false);
        String query = config.stringValue(QUERY_TEXT, null);
        boolean compare = config.booleanValue(COMPARE, false);
        if (compare) {
            String problem = inference.lateChunkingProblem(ref);
            if (problem != null) {
                throw config.error(COMPARE, "compares [separate] with [late] children, and [late] cannot be used: " + problem);
            }
        }
        List<ChildEmbedding> modes = compare ? List.of(ChildEmbedding.SEPARATE, ChildEmbedding.LATE) : List.of(children);
        return new Options(children, modes, vectors, query, ref, childOptions.keepRedundant());
    }

    /** Embeds the chunks in every mode of {@code options}, then the query; fails with a 400 beyond {@value #MAX_CHUNKS} chunks. */
    static void compute(Options options, List<ChunkedParent> parents, ChunkContext.Headers headers, InferenceService inference,
                        ActionListener<Vectors> listener) {
        int chunks = parents.stream().mapToInt(p -> p.embedded().size()).sum();
        if (chunks > MAX_CHUNKS) {
            listener.onFailure(new IllegalArgumentException(String.format(Locale.ROOT,
                "[_chunk] [text] gives %d chunks; [%s], [%s] and [%s] embed at most %d: preview a shorter text", chunks, VECTORS,
                QUERY_TEXT, COMPARE, MAX_CHUNKS)));
            return;
        }
        embedModes(options, parents, headers, inference, 0, new EnumMap<>(ChildEmbedding.class), ActionListener.wrap(vectors -> {
            if (options.query() == null) {
                listener.onResponse(new Vectors(vectors, null));
                return;
            }
            inference.embed(options.model(), List.of(options.query()), Embedder.Purpose.QUERY,
                ActionListener.wrap(q -> listener.onResponse(new Vectors(vectors, q.get(0))), listener::onFailure));
        }, listener::onFailure));
    }

    private static void embedModes(Options options, List<ChunkedParent> parents, ChunkContext.Headers headers,
                                   InferenceService inference, int k, Map<ChildEmbedding, List<List<float[]>>> done,
                                   ActionListener<Map<ChildEmbedding, List<List<float[]>>>> listener) {
        if (k == options.modes().size()) {
            listener.onResponse(done);
            return;
        }
        ChildEmbedding mode = options.modes().get(k);
        ActionListener<List<List<float[]>>> next = ActionListener.wrap(vectors -> {
            done.put(mode, vectors);
            embedModes(options, parents, headers, inference, k + 1, done, listener);
        }, listener::onFailure);
        if (parents.isEmpty()) { // a blank text: nothing to send to the model
            next.onResponse(List.of());
            return;
        }
        if (mode == ChildEmbedding.LATE) {
            List<Embedder.SpannedText> texts = new ArrayList<>(parents.size());
            parents.forEach(p -> texts.add(headers.spanned(p)));
            inference.embedSpans(options.model(), texts, Embedder.Purpose.PASSAGE, ActionListener.wrap(perParent -> {
                List<List<float[]>> out = new ArrayList<>(perParent.size());
                for (int i = 0; i < perParent.size(); i++) {
                    out.add(withoutOwnVector(parents.get(i), perParent.get(i)));
                }
                next.onResponse(out);
            }, listener::onFailure));
            return;
        }
        List<String> texts = new ArrayList<>();
        for (ChunkedParent p : parents) {
            p.embedded().forEach(c -> texts.add(headers.embedded(c)));
        }
        inference.embed(options.model(), texts, Embedder.Purpose.PASSAGE, ActionListener.wrap(flat -> {
            List<List<float[]>> perParent = new ArrayList<>(parents.size());
            int at = 0;
            for (ChunkedParent p : parents) {
                int n = p.embedded().size();
                List<float[]> v = new ArrayList<>(p.children().size() + 1);
                if (!p.parentEmbedded()) {
                    v.add(null);
                }
                v.addAll(flat.subList(at, at + n));
                perParent.add(v);
                at += n;
            }
            next.onResponse(perParent);
        }, listener::onFailure));
    }

    /** {@code vectors} ({@link ChunkedParent#all()} order) with null for a parent without a vector of its own, as stored. */
    private static List<float[]> withoutOwnVector(ChunkedParent p, List<float[]> vectors) {
        if (p.parentEmbedded()) {
            return vectors;
        }
        List<float[]> out = new ArrayList<>(vectors);
        out.set(0, null);
        return out;
    }

    /** The score of a {@code knn_vector} field with {@code cosinesimil} (Lucene's COSINE): {@code (1 + cos) / 2}. */
    static double score(float[] a, float[] b) {
        return (1 + io.strata.chunking.Vectors.cosine(a, b)) / 2;
    }

    /** The answer's {@code embedding}: the model, the modes shown, the query and, with one, the best chunk of the text per mode. */
    static void renderSummary(XContentBuilder b, Options options, Vectors vectors, List<ChunkedParent> parents) throws IOException {
        b.startObject("embedding");
        ModelRef ref = options.model();
        b.field(ref.isEmbedded() ? "model" : "model_id", ref.isEmbedded() ? ref.model() : ref.modelId());
        b.startObject(ChildEmbedding.FIELD).field("embedding", options.children().label()).endObject();
        b.field("modes", options.modes().stream().map(ChildEmbedding::label).toList());
        if (vectors.query() != null) {
            b.field(QUERY_TEXT, options.query());
            b.startObject("best");
            for (ChildEmbedding mode : options.modes()) {
                int bestParent = 0;
                int bestChunk = 0;
                double bestScore = Double.NEGATIVE_INFINITY;
                for (int p = 0; p < parents.size(); p++) {
                    int c = best(vectors, mode, p);
                    double s = score(vectors.chunks().get(mode).get(p).get(c), vectors.query());
                    if (s > bestScore) {
                        bestScore = s;
                        bestParent = p;
                        bestChunk = c;
                    }
                }
                if (!parents.isEmpty()) {
                    Chunk chunk = parents.get(bestParent).all().get(bestChunk);
                    b.startObject(mode.label()).field("parent", parents.get(bestParent).parent().ordinal()).field("level", chunk.level())
                        .field("ordinal", chunk.ordinal()).field("score", bestScore).endObject();
                }
            }
            b.endObject();
        }
        b.endObject();
    }

    /** Parent {@code p}'s {@code best}: per mode, the chunk that scores it. */
    static void renderBest(XContentBuilder b, Options options, Vectors vectors, ChunkedParent parent, int p) throws IOException {
        if (vectors.query() == null) {
            return;
        }
        b.startObject("best");
        for (ChildEmbedding mode : options.modes()) {
            int c = best(vectors, mode, p);
            Chunk chunk = parent.all().get(c);
            b.startObject(mode.label()).field("level", chunk.level()).field("ordinal", chunk.ordinal())
                .field("score", score(vectors.chunks().get(mode).get(p).get(c), vectors.query())).endObject();
        }
        b.endObject();
    }

    /** The chunk {@code c} of parent {@code p} ({@link ChunkedParent#all()} order): its scores, vectors and cosine per mode. */
    static void renderChunk(XContentBuilder b, Options options, Vectors vectors, int p, int c) throws IOException {
        if (vectors.chunks().get(options.modes().get(0)).get(p).get(c) == null) {
            return; // a parent without a vector of its own
        }
        if (vectors.query() != null) {
            b.startObject("scores");
            for (ChildEmbedding mode : options.modes()) {
                b.field(mode.label(), score(vectors.chunks().get(mode).get(p).get(c), vectors.query()));
            }
            b.endObject();
        }
        if (options.modes().size() > 1) {
            b.field("separate_late_cosine", io.strata.chunking.Vectors.cosine(vectors.chunks().get(ChildEmbedding.SEPARATE).get(p).get(c),
                vectors.chunks().get(ChildEmbedding.LATE).get(p).get(c)));
        }
        if (options.vectors()) {
            b.startObject(VECTORS);
            for (ChildEmbedding mode : options.modes()) {
                b.startArray(mode.label());
                for (float x : vectors.chunks().get(mode).get(p).get(c)) {
                    b.value(x);
                }
                b.endArray();
            }
            b.endObject();
        }
    }

    /** Parent {@code p}'s best chunk under {@code mode} ({@link ChunkedParent#all()} index; the first of equals: the parent first). */
    private static int best(Vectors vectors, ChildEmbedding mode, int p) {
        List<float[]> chunks = vectors.chunks().get(mode).get(p);
        int best = chunks.get(0) == null ? 1 : 0;
        double bestScore = Double.NEGATIVE_INFINITY;
        for (int c = best; c < chunks.size(); c++) {
            double s = score(chunks.get(c), vectors.query());
            if (s > bestScore) {
                bestScore = s;
                best = c;
            }
        }
        return best;
    }
}
