package io.strata.chunkindex;

import io.strata.chunking.Chunk;
import io.strata.chunking.ChunkContext;
import io.strata.chunking.ChunkedParent;
import io.strata.chunking.Embedder;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The vectors of one document's chunks while they are computed and written. Per parent: the parent's vector then its
 * children's ({@link ChunkedParent#all()} order), either reused from the stored chunk with the same {@code text_hash} or
 * embedded in {@link Slice slices} of bounded size: separately (one text per chunk, {@link #texts(Slice)}) or late (one text
 * per parent with its children's spans, {@link #spannedTexts(Slice)}, whose answer expands to the parent's and children's
 * vectors). Slices count vectors either way, so a late slice holds the same parents as a separate one. Kept as {@code float[]} only (384 dims: 1.5 KB a text, ~48 MB for a
 * 5 MB book), and released parent by parent as their chunk documents are written. With contextual headers every chunk is
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

    /** @param reused per parent, its stored vectors when reusable, else null */
    DocumentVectors(List<ChunkedParent> parents, List<List<float[]>> reused) {
        this(parents, reused, ChunkContext.Headers.NONE);
    }

    /**
     * @param reused  per parent, its stored vectors when reusable, else null
     * @param headers the document's contextual headers
     */
    @SuppressWarnings("unchecked")
    DocumentVectors(List<ChunkedParent> parents, List<List<float[]>> reused, ChunkContext.Headers headers) {
        this.headers = headers;
        if (reused.size() != parents.size()) {
            throw new IllegalArgumentException("one entry per parent expected: " + reused.size() + " for " + parents.size());
        }
        this.parents = parents;
        this.vectors = new List[parents.size()];
        this.toEmbed = new boolean[parents.size()];
        int all = 0;
        int kept = 0;
        for (int i = 0; i < parents.size(); i++) {
            int n = parents.get(i).children().size() + 1;
            all += n;
            List<float[]> r = reused.get(i);
            if (r != null && r.size() == n) {
                vectors[i] = r;
                kept += n;
            } else {
                toEmbed[i] = true;
            }
        }
        this.texts = all;
        this.textsReused = kept;
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
            counts[i] = toEmbed[i] ? parents.get(i).children().size() + 1 : 0;
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
                for (Chunk c : parents.get(i).all()) {
                    out.add(headers.embedded(c));
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
        for (List<float[]> perParent : embedded) {
            flat.addAll(perParent);
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
                int n = parents.get(i).children().size() + 1;
                vectors[i] = List.copyOf(embedded.subList(next, next + n));
                next += n;
            }
        }
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
