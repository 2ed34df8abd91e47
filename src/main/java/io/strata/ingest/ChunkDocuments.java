package io.strata.ingest;

import io.strata.chunking.Chunk;
import io.strata.chunking.ChunkedParent;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The chunk-index contract: one document per parent chunk, id {@code <source _id>:<ordinal>}, its
 * children in a {@code nested} array. One chunk index holds the chunks of one source index (recorded in the
 * mapping's {@code _meta}), so a chunk id names exactly one source document.
 */
public final class ChunkDocuments {
    public static final String META_KEY = "strata";
    public static final String META_SOURCE_INDEX = "source_index";
    public static final int FORMAT_VERSION = 1;

    public static final String SOURCE_ID = "source_id";
    public static final String SOURCE_INDEX = "source_index";
    public static final String ORDINAL = "ordinal";
    public static final String TEXT = "text";
    public static final String START = "start";
    public static final String END = "end";
    public static final String STRATEGY = "strategy";
    public static final String CHILDREN = "children";
    public static final String LEVEL = "level";

    /** Names a copied source field may not take. */
    public static final Set<String> RESERVED = Set.of(SOURCE_ID, SOURCE_INDEX, ORDINAL, TEXT, START, END, STRATEGY, CHILDREN,
        "embedding");

    private ChunkDocuments() {}

    public static String chunkId(String sourceId, int ordinal) {
        return sourceId + ":" + ordinal;
    }

    /** The chunk document of one parent and its children. */
    public static Map<String, Object> toSource(String sourceIndex, String sourceId, String strategy, ChunkedParent parent,
                                               Map<String, Object> copiedFields) {
        Chunk p = parent.parent();
        Map<String, Object> doc = new LinkedHashMap<>();
        doc.put(SOURCE_ID, sourceId);
        doc.put(SOURCE_INDEX, sourceIndex);
        doc.put(ORDINAL, p.ordinal());
        doc.put(STRATEGY, strategy);
        doc.put(TEXT, p.text());
        doc.put(START, p.start());
        doc.put(END, p.end());
        doc.putAll(copiedFields);
        List<Map<String, Object>> children = new ArrayList<>(parent.children().size());
        for (Chunk c : parent.children()) {
            Map<String, Object> child = new LinkedHashMap<>();
            child.put(LEVEL, c.level());
            child.put(ORDINAL, c.ordinal());
            child.put(TEXT, c.text());
            child.put(START, c.start());
            child.put(END, c.end());
            children.add(child);
        }
        doc.put(CHILDREN, children);
        return doc;
    }

    /** Mapping of a chunk index whose chunks come from {@code sourceIndex}. */
    public static Map<String, Object> mapping(String sourceIndex) {
        Map<String, Object> child = new LinkedHashMap<>();
        child.put(LEVEL, Map.of("type", "integer"));
        child.put(ORDINAL, Map.of("type", "integer"));
        child.put(TEXT, Map.of("type", "text"));
        child.put(START, Map.of("type", "integer", "index", false));
        child.put(END, Map.of("type", "integer", "index", false));

        Map<String, Object> props = new LinkedHashMap<>();
        props.put(SOURCE_ID, Map.of("type", "keyword"));
        props.put(SOURCE_INDEX, Map.of("type", "keyword"));
        props.put(ORDINAL, Map.of("type", "integer"));
        props.put(STRATEGY, Map.of("type", "keyword"));
        props.put(TEXT, Map.of("type", "text"));
        props.put(START, Map.of("type", "integer", "index", false));
        props.put(END, Map.of("type", "integer", "index", false));
        props.put(CHILDREN, Map.of("type", "nested", "properties", child));

        Map<String, Object> mapping = new LinkedHashMap<>();
        mapping.put("_meta", Map.of(META_KEY, Map.of("format", FORMAT_VERSION, META_SOURCE_INDEX, sourceIndex)));
        mapping.put("properties", props);
        return mapping;
    }

    /** The source index recorded in a chunk index mapping, or null when the mapping is not a chunk index's. */
    @SuppressWarnings("unchecked")
    public static String sourceIndexOf(Map<String, Object> mapping) {
        if (mapping == null || !(mapping.get("_meta") instanceof Map<?, ?> meta)) {
            return null;
        }
        if (!(meta.get(META_KEY) instanceof Map<?, ?> strata)) {
            return null;
        }
        Object source = ((Map<String, Object>) strata).get(META_SOURCE_INDEX);
        return source instanceof String s ? s : null;
    }
}
