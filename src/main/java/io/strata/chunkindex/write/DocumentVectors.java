package io.strata.chunkindex.write;

import io.strata.chunking.Chunk;
import io.strata.chunking.ChunkContext;
import io.strata.chunking.ChunkedParent;
import io.strata.chunking.Embedder;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The vectors of one document's chunks while they are computed and written. Per parent: the parent's vector then its
 * children's ({@link ChunkedParent#all()} order), either reused from the stored chunk with the same {@code text_hash}, or
 * chunk by chunk from stored chunks with the same {@link VectorKeys vector key} (a rebuild's), or
 * embedded in {@link Slice slices} of bounded size: separately (one text per chunk, {@link #texts(Slice)}) or late (one text
 * per parent with its children's spans, {@link #spannedTexts(Slice)}, whose answer expands to the parent's and children's
 * vectors). Slices count vectors either way, so a late slice holds the same parents as a separate one. Kept as {@code float[]} only (384 dims: 1.5 KB a text, ~48 MB for a
 * 5 MB book), and released parent by parent as their chunk documents are written. A parent above the model's window
 * ({@link ChunkedParent#parentEmbedded()} false) has no vector: its entry is null and it costs no text. With contextual headers every chunk is
 * embedded as its header, a blank line, then its text ({@link ChunkContext}); late, the parent's header opens the one
 * pass and the children's spans move past it, so they still pool their own tokens only.
 */
final class DocumentVectors {
    /** Parents {@code [from, to)} whose texts (those not reused) go to the model in one call: {@code texts} of them. */
    record Slice(int from, int to, int texts) {}

    private final List<ChunkedParent> parents;
    /** Per parent its vectors; null until embedded, and again once released. */
    private final List<float[]>[] vectors;
    private final boolean[] toEmbed;
    private final int texts;
    private final int textsReused;
    private final ChunkContext.Headers headers;
    /** Whether a parent without a vector of its own gets the mean of its finest children's ({@code parents.vector: mean}). */
    private final boolean meanParents;
    /** Per parent embedded in part: its chunks' stored vectors ({@link ChunkedParent#all()} order), null where one is embedded. */
    private final List<float[]>[] partial;
    /** Per parent to embed: the vectors it still needs. */
    private final int[] missing;

    /** @param reused per parent, its stored vectors when reusable, else null */
    DocumentVectors(List<ChunkedParent> parents, List<List<float[]>> reused) {
        this(parents, reused, ChunkContext.Headers.NONE, false);
    }

    DocumentVectors(List<ChunkedParent> parents, List<List<float[]>> reused, ChunkContext.Headers headers) {
        this(parents, reused, headers, false);
    }

    /**
     * @param reused  per parent, its stored vectors when reusable, else null
     * @param headers the document's contextual headers
     */
    DocumentVectors(List<ChunkedParent> parents, List<List<float[]>> reused, ChunkContext.Headers headers, boolean meanParents) {
        this(parents, reused, null, headers, meanParents, false);
    }

    /**
     * @param reused       per parent, its stored vectors when reusable whole (the same {@code text_hash}), else null
     * @param reusedChunks null, or per parent null or per chunk ({@link ChunkedParent#all()} order) a stored vector of the same
     *                     {@link VectorKeys vector key}, else null: a parent whose every embedded chunk has one is reused whole,
     *                     one with some is sent with the others only — unless {@code late}: one pass gives all of a parent's
     *                     vectors, so a late parent missing any is embedded whole
     * @param headers      the document's contextual headers
     */
    @SuppressWarnings("unchecked")
    DocumentVectors(List<ChunkedParent> parents, List<List<float[]>> reused, List<List<float[]>> reusedChunks,
                    ChunkContext.Headers headers, boolean meanParents, boolean late) {
        this.headers = headers;
        this.meanParents = meanParents;
        if (reused.size() != parents.size() || (reusedChunks != null && reusedChunks.size() != parents.size())) {
            throw new IllegalArgumentException("one entry per parent expected: " + reused.size() + " for " + parents.size());
        }
        this.parents = parents;
        this.vectors = new List[parents.size()];
        this.toEmbed = new boolean[parents.size()];
        this.partial = new List[parents.size()];
        this.missing = new int[parents.size()];
        int all = 0;
        int kept = 0;
        for (int i = 0; i < parents.size(); i++) {
            ChunkedParent p = parents.get(i);
            int n = vectorCount(p);
            all += n;
            List<float[]> r = reused.get(i);
            List<float[]> found = reusedChunks == null ? null : reusedChunks.get(i);
            int have = found == null ? 0 : found(p, found);
            // stored with as many vectors, and with a parent vector exactly when this parent gets one
            if (r != null && r.size() == p.children().size() + 1 && (r.get(0) != null) == (p.parentEmbedded() || meanParents)) {
                vectors[i] = r;
                kept += n;
            } else if (have == n) {
                vectors[i] = assemble(p, found, List.of(), 0);
                kept += n;
            } else {
                toEmbed[i] = true;
                missing[i] = n;
                if (have > 0 && !late) {
                    partial[i] = found;
                    missing[i] = n - have;
                    kept += have;
                }
            }
        }
        this.texts = all;
        this.textsReused = kept;
    }

    /** How many of {@code p}'s embedded chunks have a vector in {@code found}. */
    private static int found(ChunkedParent p, List<float[]> found) {
        if (found.size() != p.children().size() + 1) {
            throw new IllegalArgumentException("one entry per chunk expected: " + found.size() + " for " + (p.children().size() + 1));
        }
        int have = 0;
        for (int j = p.parentEmbedded() ? 0 : 1; j < found.size(); j++) {
            have += found.get(j) == null ? 0 : 1;
        }
        return have;
    }

    /** Whether chunk {@code j} of parent {@code i} ({@link ChunkedParent#all()} order) goes to the model. */
    private boolean sent(int i, int j) {
        return (j > 0 || parents.get(i).parentEmbedded()) && (partial[i] == null || partial[i].get(j) == null);
    }

    /**
     * The vectors of {@code p} ({@link ChunkedParent#all()} order): those of {@code stored} (null: none), the others taken in
     * order from {@code embedded} at {@code from}; the parent's null without a vector of its own, or its children's mean.
     */
    private List<float[]> assemble(ChunkedParent p, List<float[]> stored, List<float[]> embedded, int from) {
        List<float[]> v = new ArrayList<>(p.children().size() + 1);
        int next = from;
        for (int j = 0; j <= p.children().size(); j++) {
            float[] have = stored == null ? null : stored.get(j);
            if (j == 0 && !p.parentEmbedded()) {
                v.add(null);
            } else {
                v.add(have != null ? have : embedded.get(next++));
            }
        }
        if (!p.parentEmbedded() && meanParents) {
            v.set(0, finestMean(p, v));
        }
        return java.util.Collections.unmodifiableList(v);
    }

    /** The vectors of {@code p}: its children's, and its own unless it is above the model's window. */
    private static int vectorCount(ChunkedParent p) {
        return p.embedded().size();
    }

    /** Every text of the document: parents and children. */
    int texts() {
        return texts;
    }

    int textsReused() {
        return textsReused;
    }

    int textsToEmbed() {
        return texts - textsReused;
    }

    /** The embedding calls: consecutive parents with at most {@code maxTexts} texts to embed each (one larger parent alone). */
    List<Slice> slices(int maxTexts) {
        int[] counts = new int[parents.size()];
        for (int i = 0; i < counts.length; i++) {
            counts[i] = toEmbed[i] ? missing[i] : 0;
        }
        return slices(counts, maxTexts);
    }

    /**
     * Cuts parents with {@code textsToEmbed[i]} texts to embed (0: reused) into slices of at most {@code maxTexts} texts,
     * never splitting a parent; slices hold at least one text, and parents with nothing to embed belong to no slice.
     */
    static List<Slice> slices(int[] textsToEmbed, int maxTexts) {
        if (maxTexts < 1) {
            throw new IllegalArgumentException("maxTexts must be positive, got " + maxTexts);
        }
        List<Slice> out = new ArrayList<>();
        int from = -1;
        int sum = 0;
        int last = -1;
        for (int i = 0; i < textsToEmbed.length; i++) {
            int n = textsToEmbed[i];
            if (n == 0) {
                continue;
            }
            if (from >= 0 && sum + n > maxTexts) {
                out.add(new Slice(from, last + 1, sum));
                from = -1;
                sum = 0;
            }
            if (from < 0) {
                from = i;
            }
            sum += n;
            last = i;
        }
        if (from >= 0) {
            out.add(new Slice(from, last + 1, sum));
        }
        return out;
    }

    /** The texts of {@code slice} to send to the model, in order. */
    List<String> texts(Slice slice) {
        List<String> out = new ArrayList<>(slice.texts());
        for (int i = slice.from(); i < slice.to(); i++) {
            if (toEmbed[i]) {
                List<Chunk> all = parents.get(i).all();
                for (int j = 0; j < all.size(); j++) {
                    if (sent(i, j)) {
                        out.add(headers.embedded(all.get(j)));
                    }
                }
            }
        }
        return out;
    }

    /**
     * Late chunking: per parent of {@code slice} to embed, its text with its children's spans (relative to the parent
     * text, in {@link ChunkedParent#children()} order).
     */
    List<Embedder.SpannedText> spannedTexts(Slice slice) {
        List<Embedder.SpannedText> out = new ArrayList<>();
        for (int i = slice.from(); i < slice.to(); i++) {
            if (toEmbed[i]) {
                out.add(headers.spanned(parents.get(i)));
            }
        }
        return out;
    }

    /** Takes the model's late answer for {@code slice}: per text of {@link #spannedTexts(Slice)}, the parent's vector then its children's. */
    void fillSpans(Slice slice, List<List<float[]>> embedded) {
        List<float[]> flat = new ArrayList<>(slice.texts());
        int next = 0;
        for (int i = slice.from(); i < slice.to(); i++) {
            if (toEmbed[i]) {
                List<float[]> perParent = embedded.get(next++);
                // a parent above the window keeps no vector: the pass's own (of its first window) would stand for its start only
                flat.addAll(parents.get(i).parentEmbedded() ? perParent : perParent.subList(1, perParent.size()));
            }
        }
        fill(slice, flat);
    }

    /** Takes the model's answer for {@code slice}: one vector per text of {@link #texts(Slice)}, in order. */
    void fill(Slice slice, List<float[]> embedded) {
        if (embedded.size() != slice.texts()) {
            throw new IllegalStateException(String.format(Locale.ROOT, "the model returned %d vectors for %d texts", embedded.size(),
                slice.texts()));
        }
        int next = 0;
        for (int i = slice.from(); i < slice.to(); i++) {
            if (toEmbed[i]) {
                vectors[i] = assemble(parents.get(i), partial[i], embedded, next);
                next += missing[i];
                partial[i] = null;
            }
        }
    }

    /** The mean of the finest children's vectors (weighted by length, L2-normalised): they partition the parent's words. */
    private static float[] finestMean(ChunkedParent p, List<float[]> v) {
        int finest = p.children().stream().mapToInt(Chunk::level).max().orElseThrow();
        double[] sum = null;
        for (int c = 0; c < p.children().size(); c++) {
            Chunk child = p.children().get(c);
            if (child.level() != finest) {
                continue;
            }
            float[] x = v.get(c + 1);
            sum = sum == null ? new double[x.length] : sum;
            for (int d = 0; d < x.length; d++) {
                sum[d] += (double) x[d] * child.span().length();
            }
        }
        double norm = 0;
        for (double s : sum) {
            norm += s * s;
        }
        norm = Math.sqrt(norm);
        float[] out = new float[sum.length];
        for (int d = 0; d < out.length; d++) {
            out[d] = (float) (norm == 0 ? sum[d] : sum[d] / norm);
        }
        return out;
    }

    /** The vectors of parent {@code i}, which are dropped here: each chunk document is built once. */
    List<float[]> take(int i) {
        List<float[]> v = vectors[i];
        if (v == null) {
            throw new IllegalStateException("no vectors for parent " + i + " (not embedded, or already written)");
        }
        vectors[i] = null;
        return v;
    }
}
