package io.strata.chunkindex.write;

import io.strata.chunkindex.ChunkDocuments;
import io.strata.chunking.ChildEmbedding;
import io.strata.chunking.Chunk;
import io.strata.chunking.ChunkContext;
import io.strata.chunking.ChunkedParent;
import io.strata.chunking.Embedder;
import io.strata.chunking.MultiGranularChunker;
import io.strata.chunking.Span;
import io.strata.model.ModelInfo;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HexFormat;
import java.util.List;

/**
 * What stored vectors are reused by: a parent's {@code text_hash} (all its vectors at once, on re-ingest) and each
 * chunk's {@value ChunkDocuments#VECTOR_KEY} (one vector, on a rebuild). A vector key hashes what the chunk's vector is a
 * function of, and nothing else, so a stored vector under an equal key is the one the model would give again, whatever
 * the rest of the config (θ of the children, the levels, the parent's other children) became.
 *
 * <ul>
 *   <li>Separate children ({@code children.embedding: separate}): the model's identity and the exact text the model saw —
 *       the chunk's contextual header, a blank line and its text ({@link ChunkContext.Headers#embedded}).</li>
 *   <li>Late children: one pass over the parent's text gives all its vectors, so a child's vector depends on the whole
 *       text of that pass (its header included), not only on its own: the key holds the parent's embedded text and the
 *       child's span in it. {@link Embedder#embedSpans} pools each span from the states of its own tokens only, so the
 *       other children's spans are not part of it; a parent's own vector is its text's. Keys of the two modes never meet.</li>
 *   <li>A parent without a vector of its own (above the model's window) or with the mean of its children's
 *       ({@code parents.vector: mean}): no key; the mean is computed again from its children's vectors.</li>
 * </ul>
 */
final class VectorKeys {
    private VectorKeys() {}

    /** Per chunk of {@code parent}, in {@link ChunkedParent#all()} order, its key; the parent's null when it has no vector of its own. */
    static List<String> of(ModelInfo model, ChildEmbedding mode, ChunkedParent parent, ChunkContext.Headers headers) {
        String identity = ChunkDocuments.modelMeta(model).toString();
        List<String> keys = new ArrayList<>(parent.children().size() + 1);
        if (mode == ChildEmbedding.LATE) {
            Embedder.SpannedText pass = headers.spanned(parent);
            keys.add(parent.parentEmbedded() ? hash(identity, "late", pass.text(), "parent") : null);
            for (Span span : pass.spans()) {
                keys.add(hash(identity, "late", pass.text(), span.start() + "-" + span.end()));
            }
            return Collections.unmodifiableList(keys);
        }
        for (Chunk chunk : parent.all()) {
            keys.add(chunk == parent.parent() && !parent.parentEmbedded() ? null
                : hash(identity, mode.label(), headers.embedded(chunk), ""));
        }
        return Collections.unmodifiableList(keys);
    }

    /**
     * The {@code text_hash} of a parent: what all its vectors together depend on's vectors depend on: the model, the child sizes, how children are embedded, the headers its chunks are
     * embedded with, the parent text, whether the parent has a vector of its own and where each child lies in it. A stored
     * chunk's vectors are reused only under the same hash, so late-chunked children never serve a separate-mode pipeline
     * or the reverse, a changed title re-embeds, and children cut otherwise from the same text (by another release's
     * rules: joined tiny children, dropped repeats, a parent kept whole) never take each other's vectors even when they are
     * as many. Separate mode and empty headers add nothing.
     */
    static String textHash(ModelInfo info, MultiGranularChunker chunker, ChildEmbedding childEmbedding, ChunkedParent parent,
                           ChunkContext.Headers headers) {
        List<String> chunkHeaders = new ArrayList<>(parent.children().size() + 1);
        boolean any = false;
        for (var chunk : parent.all()) {
            String h = headers.of(chunk);
            chunkHeaders.add(h);
            any |= !h.isEmpty();
        }
        StringBuilder layout = new StringBuilder(parent.parentEmbedded() ? "parent" : "parent-without-vector");
        for (var child : parent.children()) {
            layout.append(';').append(child.level()).append(':').append(child.start() - parent.parent().start()).append('-')
                .append(child.end() - parent.parent().start());
        }
        return textHash(info, chunker, childEmbedding, parent.parent().text(), layout.toString(), any ? chunkHeaders : List.of());
    }

    private static String textHash(ModelInfo info, MultiGranularChunker chunker, ChildEmbedding childEmbedding, String parentText,
                                   String layout, List<String> chunkHeaders) {
        try {
            MessageDigest digest = MessageDigest.getInstance("SHA-256");
            digest.update(ChunkDocuments.modelMeta(info).toString().getBytes(StandardCharsets.UTF_8));
            digest.update(chunker.granularities().toString().getBytes(StandardCharsets.UTF_8));
            digest.update(Integer.toString(chunker.strategy().maxWords()).getBytes(StandardCharsets.UTF_8));
            if (chunker.thetaInTokens()) { // θ = max_tokens: the same number counts other units
                digest.update("theta=tokens".getBytes(StandardCharsets.UTF_8));
            }
            if (childEmbedding != ChildEmbedding.SEPARATE) {
                digest.update(("children.embedding=" + childEmbedding.label()).getBytes(StandardCharsets.UTF_8));
            }
            if (chunker.keepsRedundantChildren()) { // other children under the same parent text: never each other's vectors
                digest.update("children.keep_redundant".getBytes(StandardCharsets.UTF_8));
            }
            for (String h : chunkHeaders) {
                // each header ends in a 0 byte, which no JSON string value can hold: the list is read back unambiguously
                digest.update(("header=" + h).getBytes(StandardCharsets.UTF_8));
                digest.update((byte) 0);
            }
            digest.update(("children=" + layout).getBytes(StandardCharsets.UTF_8));
            digest.update((byte) 0);
            digest.update(parentText.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest.digest(), 0, 16);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String hash(String model, String mode, String text, String span) {
        try {
            MessageDigest digest = MessageDigest.getInstance("SHA-256");
            // each part ends in a 0 byte: the parts are read back unambiguously (the text is last and may hold anything)
            for (String part : new String[] { model, mode, span }) {
                digest.update(part.getBytes(StandardCharsets.UTF_8));
                digest.update((byte) 0);
            }
            digest.update(text.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest.digest(), 0, 16);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
