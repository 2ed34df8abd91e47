package io.strata.chunkindex;

import io.strata.chunking.Chunk;
import io.strata.chunking.ChunkContext;
import io.strata.chunking.ChunkedParent;
import io.strata.chunking.Section;
import io.strata.model.ModelInfo;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The chunk-index contract: one document per parent chunk, id {@code <source _id>:<ordinal>} (with
 * {@code @<shard>} after it for a document stored off the shard its {@code _id} alone routes to: {@link ChunkKey}), its
 * children in a {@code nested} array. One chunk index holds the chunks of one concrete source index (recorded in the
 * registry, {@code ChunkIndexRegistry}), so a chunk id names exactly one source document.
 *
 * <p>Format 2 (recorded as {@code _meta.strata.format}): a parent with vectors also appears in its own
 * {@code children} array as a level-0 entry holding only {@code level: 0} and its {@code embedding} (its text and
 * offsets are the parent's own), so a single nested HNSW search over {@code children.embedding} scores a parent by
 * the MAX over itself and its children. The parent keeps its top-level {@code embedding} too: a plain k-NN over
 * parents, {@code levels: [0]}, vector reuse and readers of format 1 use it. Readers of {@code children} that want the
 * chunking's children skip the level-0 entry ({@link #isSelfEntry}). A parent above the embedding model's window
 * ({@link io.strata.chunking.ParentSize}) has neither a top-level {@code embedding} nor a level-0 entry: the nested search
 * scores it by the MAX over its children alone, which cover every word of it; {@code levels: [0]} does not find it.
 */
public final class ChunkDocuments {
    public static final String META_KEY = "strata";
    /** Recorded by formats 1–2 only (read for nothing the node acts on; see {@code ChunkIndexRegistry}). */
    public static final String META_SOURCE_INDEX = "source_index";
    /** Recorded by formats 1–2 only. */
    public static final String META_SOURCE_UUID = "source_index_uuid";
    /**
     * Format 3: chunk documents are versioned with their source operation's {@code _seq_no} ({@code ChunkCommit}); the
     * source index is recorded in the registry, not in {@code _meta}.
     */
    public static final int FORMAT_VERSION = 3;
    /** The first format whose chunk documents carry their source operation's sequence number as their version. */
    public static final int FORMAT_VERSIONED = 3;
    /** The first format whose parents with vectors have a level-0 entry in {@code children}. */
    public static final int FORMAT_SELF_IN_CHILDREN = 2;
    public static final String META_FORMAT = "format";

    public static final String SOURCE_ID = "source_id";
    /** The hit field in which a search of a chunk index explains a parent's score ({@code explain_child}). */
    public static final String BEST_CHILD = "strata_best_child";
    /** The hit field of a parent's evidence pack ({@code multi_granular}'s {@code evidence}). */
    public static final String EVIDENCE = "strata_evidence";
    public static final String SOURCE_INDEX = "source_index";
    public static final String ORDINAL = "ordinal";
    public static final String TEXT = "text";
    public static final String START = "start";
    public static final String END = "end";
    public static final String STRATEGY = "strategy";
    public static final String CHILDREN = "children";
    public static final String LEVEL = "level";
    public static final String EMBEDDING = "embedding";
    /** Hash of what a parent's vectors depend on (its text, the child sizes, the model): equal hash, reusable vectors. */
    public static final String TEXT_HASH = "text_hash";
    /**
     * Per chunk (the parent's, each child's): a hash of what its vector is a function of — the model, how children are
     * embedded and the exact text the model saw (header included; late: the parent's text and the chunk's span in it). A
     * rebuild reuses a stored vector under an equal key ({@code generations.VectorReuse}) whatever else changed.
     */
    public static final String VECTOR_KEY = "vector_key";
    public static final String META_MODEL = "model";
    /** Hash of the whole source text the chunks were cut from (also in the source's summary): what reconciling compares. */
    public static final String SOURCE_HASH = "source_hash";
    /** The custom routing of the source document (absent without one): what reads of the source from a chunk need. */
    public static final String SOURCE_ROUTING = "source_routing";

    /** {@code format: markdown | html}: the heading titles above a chunk, outermost first (see {@link Section}). */
    public static final String SECTION = "section";
    /** The level of the last heading of {@link #SECTION} (1 for h1), 0 before the first heading. */
    public static final String SECTION_LEVEL = "section_level";
    /** Titles of the sub-sections merged whole into a chunk because together they fit its size. */
    public static final String MERGED_SECTIONS = "merged_sections";
    /**
     * Where the table header that a table piece repeats sits in the source: the chunk's {@code text} is that header, a line
     * break, then the source from {@code start} to {@code end}.
     */
    public static final String HEADER_START = "header_start";
    public static final String HEADER_END = "header_end";
    /**
     * {@code context.lexical}: the chunk's contextual header, indexed as a text field of its own that the lexical side of
     * {@code multi_granular} matches beside {@link #TEXT} (the sum of both BM25 scores), while {@code text} stays the source
     * text. Not {@code copy_to} into {@code text}: in OpenSearch 3.4 any {@code copy_to} into a field stops highlighting of
     * that field (every highlighter returned nothing, even for documents without the copied field — QueryConformanceIT).
     */
    public static final String CONTEXT_HEADER = "context_header";

    /** Names a copied source field may not take. */
    public static final Set<String> RESERVED = Set.of(SOURCE_ID, SOURCE_INDEX, ORDINAL, TEXT, START, END, STRATEGY, CHILDREN,
        EMBEDDING, TEXT_HASH, VECTOR_KEY, SOURCE_HASH, SOURCE_ROUTING, SECTION, SECTION_LEVEL, MERGED_SECTIONS, HEADER_START, HEADER_END, CONTEXT_HEADER);

    private ChunkDocuments() {}

    /** The chunk id of a document on the shard its {@code _id} alone routes to ({@link ChunkKey} has the other form). */
    public static String chunkId(String sourceId, int ordinal) {
        return sourceId + ":" + ordinal;
    }

    /** The ordinal of a chunk id ({@code <_id>:<ordinal>} or {@code <_id>:<ordinal>@<shard>}), or -1 when it is none. */
    public static int ordinalOf(String chunkId) {
        int colon = chunkId == null ? -1 : chunkId.lastIndexOf(':');
        if (colon < 0) {
            return -1;
        }
        String tail = chunkId.substring(colon + 1);
        int at = tail.indexOf('@');
        try {
            int ordinal = Integer.parseInt(at < 0 ? tail : tail.substring(0, at));
            if (at >= 0) {
                Integer.parseInt(tail.substring(at + 1));
            }
            return ordinal;
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /** The id of chunk {@code ordinal} of the same source document as chunk id {@code chunkId} (same shard form). */
    public static String siblingId(String chunkId, int ordinal) {
        int colon = chunkId.lastIndexOf(':');
        int at = chunkId.indexOf('@', colon);
        return chunkId.substring(0, colon + 1) + ordinal + (at < 0 ? "" : chunkId.substring(at));
    }

    /** What the chunks of one source document (one {@link ChunkKey}) have in common: the id of their chunk 0. */
    public static String keyOf(String chunkId) {
        return chunkId.lastIndexOf(':') < 0 ? chunkId : siblingId(chunkId, 0);
    }

    /** OpenSearch's limit on a document's {@code _id}, in UTF-8 bytes ({@code IndexRequest#validate}). */
    static final int MAX_ID_BYTES = 512;

    /**
     * Fails with a 400 when the chunk ids of a source document with {@code parents} parents would exceed OpenSearch's id
     * limit: checked before the source is written, since no later step could write its chunks.
     */
    public static void checkChunkIdsFit(String sourceId, int parents) {
        int longest = chunkId(sourceId, Math.max(0, parents - 1)).getBytes(StandardCharsets.UTF_8).length;
        if (longest > MAX_ID_BYTES) {
            int idBytes = sourceId.getBytes(StandardCharsets.UTF_8).length;
            throw new IllegalArgumentException(String.format(Locale.ROOT, "[_id] of %d bytes is too long for this document's chunk ids "
                + "(<_id>:<ordinal>, up to :%d) to fit OpenSearch's %d-byte limit on ids; use an [_id] of at most %d bytes",
                idBytes, parents - 1, MAX_ID_BYTES, idBytes - (longest - MAX_ID_BYTES)));
        }
    }

    /**
     * The source's text at a chunk's {@code [start, end)} from its stored {@value #TEXT}: a table piece stores its table's
     * header row (which sits elsewhere in the source) before its own text, so the source's part is the rest; null when the
     * stored text is shorter (not this chunk's, or cut by field-level security).
     */
    public static String sourcePart(String stored, int start, int end) {
        int length = end - start;
        return length < 0 || stored.length() < length ? null : stored.substring(stored.length() - length);
    }

    /** The chunk document of one parent and its children. */
    public static Map<String, Object> toSource(String sourceIndex, String sourceId, String strategy, ChunkedParent parent,
                                               Map<String, Object> copiedFields) {
        return toSource(sourceIndex, sourceId, strategy, parent, copiedFields, null, null, null);
    }

    /**
     * The chunk document of one parent and its children; {@code vectors} (null: none) holds the parent's
     * vector followed by its children's, in {@link ChunkedParent#all()} order (the parent's null when it has none of its
     * own: no top-level {@code embedding}, no level-0 entry, its children score it); {@code lexicalHeaders} (null: none) give
     * every chunk's {@value #CONTEXT_HEADER}.
     */
    public static Map<String, Object> toSource(String sourceIndex, String sourceId, String strategy, ChunkedParent parent,
                                               Map<String, Object> copiedFields, List<float[]> vectors, String textHash,
                                               ChunkContext.Headers lexicalHeaders) {
        return toSource(sourceIndex, sourceId, strategy, parent, copiedFields, vectors, textHash, lexicalHeaders, null);
    }

    /**
     * {@link #toSource(String, String, String, ChunkedParent, Map, List, String, ChunkContext.Headers)} with each chunk's
     * {@value #VECTOR_KEY}: {@code vectorKeys} (null: none) in {@link ChunkedParent#all()} order, null where a chunk's vector
     * is not the model's answer to one text (a parent without a vector, or with the mean of its children's).
     */
    public static Map<String, Object> toSource(String sourceIndex, String sourceId, String strategy, ChunkedParent parent,
                                               Map<String, Object> copiedFields, List<float[]> vectors, String textHash,
                                               ChunkContext.Headers lexicalHeaders, List<String> vectorKeys) {
        Chunk p = parent.parent();
        Map<String, Object> doc = new LinkedHashMap<>();
        doc.put(SOURCE_ID, sourceId);
        doc.put(SOURCE_INDEX, sourceIndex);
        doc.put(ORDINAL, p.ordinal());
        doc.put(STRATEGY, strategy);
        doc.put(TEXT, p.text());
        doc.put(START, p.start());
        doc.put(END, p.end());
        putStructure(doc, p);
        putHeader(doc, p, lexicalHeaders);
        doc.putAll(copiedFields);
        if (textHash != null) {
            doc.put(TEXT_HASH, textHash);
        }
        if (vectors != null && vectors.get(0) != null) {
            doc.put(EMBEDDING, vectors.get(0));
            putKey(doc, vectorKeys, 0);
        }
        List<Map<String, Object>> children = new ArrayList<>(parent.children().size() + 1);
        if (vectors != null && vectors.get(0) != null) {
            // the parent itself as a level-0 child: one nested k-NN then covers every level (format 2)
            Map<String, Object> self = new LinkedHashMap<>();
            self.put(LEVEL, 0);
            self.put(EMBEDDING, vectors.get(0));
            children.add(self);
        }
        for (int i = 0; i < parent.children().size(); i++) {
            Chunk c = parent.children().get(i);
            Map<String, Object> child = new LinkedHashMap<>();
            child.put(LEVEL, c.level());
            child.put(ORDINAL, c.ordinal());
            child.put(TEXT, c.text());
            child.put(START, c.start());
            child.put(END, c.end());
            putStructure(child, c);
            putHeader(child, c, lexicalHeaders);
            if (vectors != null) {
                child.put(EMBEDDING, vectors.get(i + 1));
                putKey(child, vectorKeys, i + 1);
            }
            children.add(child);
        }
        doc.put(CHILDREN, children);
        return doc;
    }

    private static void putKey(Map<String, Object> doc, List<String> vectorKeys, int chunk) {
        if (vectorKeys != null && vectorKeys.get(chunk) != null) {
            doc.put(VECTOR_KEY, vectorKeys.get(chunk));
        }
    }

    /** The section and repeated table header of a chunk of a structured document ({@code format: markdown | html}). */
    private static void putStructure(Map<String, Object> doc, Chunk chunk) {
        Section section = chunk.section();
        if (section != null) {
            doc.put(SECTION, section.path());
            doc.put(SECTION_LEVEL, section.level());
            if (!section.merged().isEmpty()) {
                doc.put(MERGED_SECTIONS, section.merged());
            }
        }
        if (chunk.header() != null) {
            doc.put(HEADER_START, chunk.header().start());
            doc.put(HEADER_END, chunk.header().end());
        }
    }

    private static void putHeader(Map<String, Object> doc, Chunk chunk, ChunkContext.Headers headers) {
        String header = headers == null ? "" : headers.of(chunk);
        if (!header.isEmpty()) {
            doc.put(CONTEXT_HEADER, header);
        }
    }

    /** The mapping of the structure fields, the same at the parent and the child level. */
    private static void structureMapping(Map<String, Object> props) {
        props.put(SECTION, Map.of("type", "keyword"));
        props.put(SECTION_LEVEL, Map.of("type", "integer"));
        props.put(MERGED_SECTIONS, Map.of("type", "keyword"));
        props.put(HEADER_START, Map.of("type", "integer", "index", false));
        props.put(HEADER_END, Map.of("type", "integer", "index", false));
    }

    /**
     * Mapping of a chunk index embedded by {@code model} (null: no vectors). Its {@code _meta.strata} records the format and
     * the model, for queries only: which source index a chunk index serves is Strata's own record
     * ({@code ChunkIndexRegistry}), never the user-editable {@code _meta}.
     */
    public static Map<String, Object> mapping(ModelInfo model) {
        return mapping(model, VectorOptions.DEFAULT);
    }

    /** {@link #mapping(ModelInfo)} with both vector fields indexed as {@code vectors} says. */
    public static Map<String, Object> mapping(ModelInfo model, VectorOptions vectors) {
        Map<String, Object> child = new LinkedHashMap<>();
        child.put(LEVEL, Map.of("type", "integer"));
        child.put(ORDINAL, Map.of("type", "integer"));
        child.put(TEXT, Map.of("type", "text"));
        child.put(START, Map.of("type", "integer", "index", false));
        child.put(END, Map.of("type", "integer", "index", false));
        child.put(CONTEXT_HEADER, Map.of("type", "text"));
        child.put(VECTOR_KEY, VECTOR_KEY_MAPPING);
        structureMapping(child);

        Map<String, Object> props = new LinkedHashMap<>();
        props.put(SOURCE_ID, Map.of("type", "keyword"));
        props.put(SOURCE_INDEX, Map.of("type", "keyword"));
        props.put(ORDINAL, Map.of("type", "integer"));
        props.put(STRATEGY, Map.of("type", "keyword"));
        props.put(TEXT, Map.of("type", "text"));
        props.put(START, Map.of("type", "integer", "index", false));
        props.put(END, Map.of("type", "integer", "index", false));
        props.put(CONTEXT_HEADER, Map.of("type", "text"));
        structureMapping(props);
        props.put(TEXT_HASH, Map.of("type", "keyword", "index", false));
        props.put(VECTOR_KEY, VECTOR_KEY_MAPPING);
        props.put(SOURCE_HASH, Map.of("type", "keyword", "index", false));
        props.put(SOURCE_ROUTING, Map.of("type", "keyword", "index", false));
        if (model != null) {
            props.put(EMBEDDING, vectors.vectorField(model.dimension()));
            child.put(EMBEDDING, vectors.vectorField(model.dimension()));
        }
        props.put(CHILDREN, Map.of("type", "nested", "properties", child));

        Map<String, Object> strata = new LinkedHashMap<>();
        strata.put(META_FORMAT, FORMAT_VERSION);
        if (model != null) {
            strata.put(META_MODEL, modelMeta(model));
        }
        Map<String, Object> mapping = new LinkedHashMap<>();
        mapping.put("_meta", Map.of(META_KEY, strata));
        mapping.put("properties", props);
        return mapping;
    }

    /** Read from {@code _source} only: neither searched nor sorted on. */
    static final Map<String, Object> VECTOR_KEY_MAPPING = Map.of("type", "keyword", "index", false, "doc_values", false);

    /** What the mapping records about the model, so queries embed with the same one. */
    public static Map<String, Object> modelMeta(ModelInfo model) {
        Map<String, Object> meta = new LinkedHashMap<>();
        if (model.ref().isEmbedded()) {
            meta.put("model", model.ref().model());
        } else {
            meta.put("model_id", model.ref().modelId());
        }
        meta.put("name", model.name());
        meta.put("dimension", model.dimension());
        return meta;
    }

    /** Whether an entry of {@code children} is the parent's own level-0 entry (format 2), not a chunk of the chunking. */
    public static boolean isSelfEntry(Object child) {
        return child instanceof Map<?, ?> c && c.get(LEVEL) instanceof Number level && level.intValue() == 0;
    }

    /**
     * The parent's and children's vectors of a stored chunk document (the parent's, then its children's in order, without
     * the level-0 entry, which repeats the parent's; the parent's null when it has none of its own), or null when any
     * child's is missing.
     */
    public static List<float[]> vectorsOf(Map<String, Object> source) {
        List<float[]> out = new ArrayList<>();
        if (source.get(EMBEDDING) instanceof List<?> parent) {
            out.add(toFloats(parent));
        } else if (source.get(CHILDREN) instanceof List<?> children && !children.isEmpty()) {
            out.add(null); // a parent without a vector of its own (above the model's window): its children's only
        } else {
            return null;
        }
        if (source.get(CHILDREN) instanceof List<?> children) {
            for (Object child : children) {
                if (isSelfEntry(child)) {
                    if (out.get(0) == null) {
                        return null;
                    }
                    continue;
                }
                if (!(child instanceof Map<?, ?> c) || !(c.get(EMBEDDING) instanceof List<?> v)) {
                    return null;
                }
                out.add(toFloats(v));
            }
        }
        return out;
    }

    /** A rough size of a chunk document as JSON, for cutting bulk slices (text characters, ~10 bytes a vector component). */
    public static long estimatedBytes(Object value) {
        if (value instanceof String s) {
            return s.length() + 2;
        }
        if (value instanceof float[] v) {
            return 10L * v.length;
        }
        if (value instanceof Map<?, ?> m) {
            long sum = 2;
            for (Map.Entry<?, ?> e : m.entrySet()) {
                sum += String.valueOf(e.getKey()).length() + 4 + estimatedBytes(e.getValue());
            }
            return sum;
        }
        if (value instanceof List<?> l) {
            long sum = 2;
            for (Object o : l) {
                sum += 1 + estimatedBytes(o);
            }
            return sum;
        }
        return 8;
    }

    private static float[] toFloats(List<?> values) {
        float[] out = new float[values.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = ((Number) values.get(i)).floatValue();
        }
        return out;
    }

}
