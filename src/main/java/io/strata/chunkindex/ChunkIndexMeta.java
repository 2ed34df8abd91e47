package io.strata.chunkindex;

import org.opensearch.cluster.metadata.IndexMetadata;
import org.opensearch.cluster.metadata.MappingMetadata;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The {@code _meta.strata} of a chunk index mapping, parsed once into a typed value: its format and the embedding model of
 * its vectors, which queries read. Formats 1–2 also recorded a source index here; nothing the node does trusts that (a
 * user with put-mapping rights can write {@code _meta}): the source of a chunk index is {@code ChunkIndexRegistry}'s.
 *
 * @param sourceIndex the source index's name, or null in a malformed entry
 * @param sourceUuid  the UUID of the source index incarnation the chunks belong to ({@code _na_} before it exists), or null
 * @param format      the chunk document format (1 when not recorded: the first indices did not)
 * @param model       the model entry ({@code model} or {@code model_id}, {@code name}, {@code dimension}), null without vectors
 * @param fields      every key of {@code _meta.strata} as stored, for rewriting it with one key changed
 */
public record ChunkIndexMeta(String sourceIndex, String sourceUuid, int format, Map<String, Object> model, Map<String, Object> fields) {

    /** The metadata of a chunk index, or null when {@code index} is not one (no {@code _meta.strata}). */
    public static ChunkIndexMeta of(IndexMetadata index) {
        return index == null ? null : of(index.mapping());
    }

    public static ChunkIndexMeta of(MappingMetadata mapping) {
        return mapping == null ? null : ofMapping(mapping.sourceAsMap());
    }

    /** From a mapping's source ({@code {"_meta": {"strata": …}, "properties": …}}). */
    public static ChunkIndexMeta ofMapping(Map<String, Object> mapping) {
        return mapping == null || !(mapping.get("_meta") instanceof Map<?, ?> meta) ? null : ofMeta(cast(meta));
    }

    /** From a mapping's {@code _meta} object (what a shard's document mapper holds). */
    public static ChunkIndexMeta ofMeta(Map<String, Object> meta) {
        if (meta == null || !(meta.get(ChunkDocuments.META_KEY) instanceof Map<?, ?> raw)) {
            return null;
        }
        Map<String, Object> strata = cast(raw);
        return new ChunkIndexMeta(
            strata.get(ChunkDocuments.META_SOURCE_INDEX) instanceof String s ? s : null,
            strata.get(ChunkDocuments.META_SOURCE_UUID) instanceof String u ? u : null,
            strata.get(ChunkDocuments.META_FORMAT) instanceof Number n ? n.intValue() : 1,
            strata.get(ChunkDocuments.META_MODEL) instanceof Map<?, ?> m ? Collections.unmodifiableMap(cast(m)) : null,
            Collections.unmodifiableMap(new LinkedHashMap<>(strata)));
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> cast(Map<?, ?> map) {
        return (Map<String, Object>) map;
    }

    /** Whether the chunks carry vectors (a pipeline with a model wrote them). */
    public boolean hasVectors() {
        return model != null;
    }

    /** The vectors' dimension as recorded, or null. */
    public Integer dimension() {
        return model != null && model.get("dimension") instanceof Integer d ? d : null;
    }

    /** Format 2 and later: every parent is also its own level-0 entry of {@code children}. */
    public boolean selfInChildren() {
        return format >= ChunkDocuments.FORMAT_SELF_IN_CHILDREN;
    }

    /** Format 3 and later: chunk documents are versioned by their source operation's sequence number ({@code ChunkCommit}). */
    public boolean versioned() {
        return format >= ChunkDocuments.FORMAT_VERSIONED;
    }
}
