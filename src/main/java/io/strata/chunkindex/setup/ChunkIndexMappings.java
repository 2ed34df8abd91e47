package io.strata.chunkindex.setup;

import io.strata.chunkindex.ChunkDocuments;
import io.strata.chunkindex.SourceSummary;
import io.strata.chunkindex.VectorOptions;

import org.opensearch.cluster.ClusterState;
import org.opensearch.cluster.metadata.IndexTemplateMetadata;
import org.opensearch.cluster.metadata.MetadataIndexTemplateService;
import org.opensearch.common.compress.CompressedXContent;
import org.opensearch.common.xcontent.XContentHelper;
import org.opensearch.common.xcontent.support.XContentMapValues;
import org.opensearch.core.xcontent.MediaTypeRegistry;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.function.UnaryOperator;

/**
 * What mappings mean for chunking, as plain functions over mapping maps: whether a source index's mapping can hold what
 * chunking needs ({@link #problem}), the mappings index templates give a new index ({@link #ofTemplates}), and the chunk
 * mapping put over a chunk index's own or its templates' definitions ({@link #over}).
 */
final class ChunkIndexMappings {

    /** What {@code mappings} (an index's, or the templates' in the order they apply) refuse of chunking; null: nothing. */
    static String problem(List<Map<String, Object>> mappings, String index, String field) {
        boolean kept = true;
        Object dynamic = null;
        boolean summaryMapped = false;
        for (Map<String, Object> mapping : mappings) {
            kept &= keptInSource(mapping, field);
            dynamic = mapping.get("dynamic") != null ? mapping.get("dynamic") : dynamic;
            summaryMapped |= mapping.get("properties") instanceof Map<?, ?> properties && properties.containsKey(SourceSummary.FIELD);
        }
        if (!kept) {
            return String.format(Locale.ROOT, "field [%s] is kept out of [_source] in index [%s] (its mapping's _source "
                + "enabled/includes/excludes); chunks of a text that is not stored cannot be kept in step with updates nor checked "
                + "by _reconcile. Keep the field in _source (leave it out of search responses with _source filtering instead)",
                field, index);
        }
        if ("strict".equals(String.valueOf(dynamic)) && !summaryMapped) {
            return String.format(Locale.ROOT, "index [%s] has a strict mapping (\"dynamic\": \"strict\") without field [%s], "
                + "where each document's chunk summary is kept; add it to the mapping, stored but not indexed: "
                + "{\"properties\": {\"%s\": {\"type\": \"object\", \"enabled\": false}}}", index, SourceSummary.FIELD,
                SourceSummary.FIELD);
        }
        return null;
    }

    /** The mappings the index templates give a new index named {@code name}, in the order they apply. */
    static List<Map<String, Object>> ofTemplates(ClusterState state, String name) throws Exception {
        List<Map<String, Object>> mappings = new ArrayList<>();
        String v2 = MetadataIndexTemplateService.findV2Template(state.metadata(), name, false);
        if (v2 != null) {
            for (CompressedXContent m : MetadataIndexTemplateService.collectMappings(state, v2, name)) {
                mappings.add(unwrap(XContentHelper.convertToMap(m.compressedReference(), true, MediaTypeRegistry.JSON).v2()));
            }
        } else {
            for (IndexTemplateMetadata t : MetadataIndexTemplateService.findV1Templates(state.metadata(), name, null)) {
                if (t.mappings() != null) {
                    mappings.add(unwrap(XContentHelper.convertToMap(t.mappings().compressedReference(), true, MediaTypeRegistry.JSON)
                        .v2()));
                }
            }
        }
        return mappings;
    }

    /**
     * The chunk mapping {@code ours} with the definitions that {@code existing} (the chunk index's own mapping, or the
     * mappings of the templates that create it, in order) gives its fields, where the type agrees: an analyzer on the text
     * fields, graph parameters on the vectors. A chunk index made by hand or by a template for another language or another
     * graph keeps them (a put of our plain definitions failed on the conflict before, and a template's analyzer was
     * overridden). A field of another type, or vectors of another dimension: a 400 naming the field when {@code existing}
     * is the index's own ({@code templates} false: a mapping cannot change a field's type); our definition when it comes
     * from templates, which the create request overrides as it always did (a broad template with a {@code text} keyword
     * must not stop chunking).
     */
    @SuppressWarnings("unchecked")
    static Map<String, Object> over(Map<String, Object> ours, List<Map<String, Object>> existing, String target, boolean templates) {
        Map<String, Object> given = new LinkedHashMap<>();
        for (Map<String, Object> mapping : existing) {
            if (mapping.get("properties") instanceof Map<?, ?> props) {
                given.putAll((Map<String, Object>) props); // a later template's definition of a field replaces an earlier one
            }
        }
        Map<String, Object> out = new LinkedHashMap<>(ours);
        out.put("properties", propertiesOver((Map<String, Object>) ours.get("properties"), given, target, "", templates));
        return out;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> propertiesOver(Map<String, Object> ours, Map<String, Object> given, String target, String path,
                                                      boolean templates) {
        Map<String, Object> out = new LinkedHashMap<>();
        for (Map.Entry<String, Object> field : ours.entrySet()) {
            Map<String, Object> mine = (Map<String, Object>) field.getValue();
            Object theirs = given.get(field.getKey());
            if (!(theirs instanceof Map<?, ?> t)) {
                out.put(field.getKey(), mine);
                continue;
            }
            String name = path + field.getKey();
            Object type = t.get("type") != null ? t.get("type") : t.get("properties") != null ? "object" : null;
            if (!Objects.equals(type, mine.get("type")) || (mine.get("dimension") != null
                && !String.valueOf(mine.get("dimension")).equals(String.valueOf(t.get("dimension"))))) {
                if (templates) {
                    out.put(field.getKey(), mine);
                    continue;
                }
                throw new IllegalArgumentException(String.format(Locale.ROOT, "[target_index] [%s] maps [%s] as %s; chunk documents "
                    + "need it as %s (parameters such as an analyzer or graph settings may be your own)", target, name,
                    describeField(t), describeField(mine)));
            }
            if (mine.get("properties") instanceof Map<?, ?> nested) {
                Map<String, Object> merged = new LinkedHashMap<>(mine);
                merged.put("properties", propertiesOver((Map<String, Object>) nested,
                    t.get("properties") instanceof Map<?, ?> tp ? (Map<String, Object>) tp : Map.of(), target, name + ".", templates));
                out.put(field.getKey(), merged);
            } else {
                out.put(field.getKey(), t);
            }
        }
        return out;
    }

    /** The analysis parameters of a text field (how it is analysed and scored): the chunk index takes them from the chunked field. */
    static final List<String> ANALYSIS_PARAMETERS = List.of("analyzer", "search_analyzer", "search_quote_analyzer", "similarity");

    /**
     * The analysis parameters that {@code mappings} (the source index's own, or its templates' in the order they apply)
     * give {@code field} (a dotted path through objects), when it is a text field ({@code text}, {@code match_only_text});
     * empty when it has none (the index's
     * default analyzer applies).
     */
    static Map<String, Object> analysisOf(List<Map<String, Object>> mappings, String field) {
        Map<String, Object> definition = definition(mappings, field);
        Map<String, Object> out = new LinkedHashMap<>();
        if (definition != null && ("text".equals(definition.get("type")) || "match_only_text".equals(definition.get("type")))) {
            for (String parameter : ANALYSIS_PARAMETERS) {
                if (definition.get(parameter) != null) {
                    out.put(parameter, definition.get(parameter));
                }
            }
        }
        return out;
    }

    /** The definition {@code mappings} give the field at {@code path} (dotted, through objects), the last one's; or null. */
    @SuppressWarnings("unchecked")
    private static Map<String, Object> definition(List<Map<String, Object>> mappings, String path) {
        Map<String, Object> definition = null;
        for (Map<String, Object> mapping : mappings) {
            Object node = mapping;
            for (String part : path.split("\\.")) {
                node = node instanceof Map<?, ?> m && m.get("properties") instanceof Map<?, ?> props ? props.get(part) : null;
            }
            if (node instanceof Map<?, ?> m) {
                definition = (Map<String, Object>) m; // a later template's definition of the field replaces an earlier one
            }
        }
        return definition;
    }

    /**
     * The definitions {@code mappings} give the fields at {@code paths} (the {@code copy_fields}), as a properties tree
     * for the chunk mapping; fields they do not map are left out (mapped dynamically, as in the source), so are alias
     * fields (their targets are not copied) and {@code copy_to} (its targets are not in chunk documents).
     */
    @SuppressWarnings("unchecked")
    static Map<String, Object> definitionsOf(List<Map<String, Object>> mappings, List<String> paths) {
        Map<String, Object> tree = new LinkedHashMap<>();
        for (String path : paths) {
            Map<String, Object> definition = definition(mappings, path);
            if (definition == null || "alias".equals(definition.get("type"))) {
                continue;
            }
            String[] parts = path.split("\\.");
            Map<String, Object> properties = tree;
            for (int i = 0; i < parts.length - 1; i++) {
                Map<String, Object> object = (Map<String, Object>) properties.computeIfAbsent(parts[i], k -> new LinkedHashMap<>(
                    Map.of("properties", new LinkedHashMap<>())));
                properties = (Map<String, Object>) object.get("properties");
            }
            properties.put(parts[parts.length - 1], withoutCopyTo(definition));
        }
        return tree;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> withoutCopyTo(Map<String, Object> definition) {
        Map<String, Object> out = new LinkedHashMap<>(definition);
        out.remove("copy_to");
        if (out.get("properties") instanceof Map<?, ?> props) {
            Map<String, Object> inner = new LinkedHashMap<>();
            ((Map<String, Object>) props).forEach((k, v) -> inner.put(k, v instanceof Map<?, ?> m ? withoutCopyTo((Map<String, Object>) m) : v));
            out.put("properties", inner);
        }
        return out;
    }

    /** The fields of {@code tree} (a properties tree) that {@code mapping} does not map yet. */
    @SuppressWarnings("unchecked")
    static Map<String, Object> missingFrom(Map<String, Object> mapping, Map<String, Object> tree) {
        Map<String, Object> have = mapping.get("properties") instanceof Map<?, ?> p ? (Map<String, Object>) p : Map.of();
        Map<String, Object> out = new LinkedHashMap<>();
        for (Map.Entry<String, Object> e : tree.entrySet()) {
            Map<String, Object> wanted = (Map<String, Object>) e.getValue();
            if (!(have.get(e.getKey()) instanceof Map<?, ?> existing)) {
                out.put(e.getKey(), wanted);
            } else if (wanted.get("properties") instanceof Map<?, ?> && existing.get("properties") instanceof Map<?, ?>) {
                Map<String, Object> inner = missingFrom((Map<String, Object>) existing, wanted);
                if (!inner.isEmpty()) {
                    out.put(e.getKey(), Map.of("properties", inner));
                }
            }
        }
        return out;
    }

    /** The chunk mapping {@code ours} with the fields of {@code tree} it does not have (the copied fields' definitions). */
    static Map<String, Object> withFields(Map<String, Object> ours, Map<String, Object> tree) {
        return tree.isEmpty() ? ours : withProperties(ours, properties -> {
            Map<String, Object> out = new LinkedHashMap<>(properties);
            tree.forEach(out::putIfAbsent);
            return out;
        });
    }

    /** The chunk mapping {@code ours} with {@code analysis} on every text field of the chunks (parents' and children's). */
    static Map<String, Object> withAnalysis(Map<String, Object> ours, Map<String, Object> analysis) {
        return analysis.isEmpty() ? ours : withProperties(ours, properties -> textFieldsWith(properties, analysis));
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> withProperties(Map<String, Object> mapping,
                                                      UnaryOperator<Map<String, Object>> change) {
        Map<String, Object> out = new LinkedHashMap<>(mapping);
        out.put("properties", change.apply((Map<String, Object>) mapping.get("properties")));
        return out;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> textFieldsWith(Map<String, Object> properties, Map<String, Object> analysis) {
        Map<String, Object> out = new LinkedHashMap<>();
        for (Map.Entry<String, Object> e : properties.entrySet()) {
            Map<String, Object> field = new LinkedHashMap<>((Map<String, Object>) e.getValue());
            if ("text".equals(field.get("type"))) {
                field.putAll(analysis);
            } else if (field.get("properties") instanceof Map<?, ?> nested) {
                field.put("properties", textFieldsWith((Map<String, Object>) nested, analysis));
            }
            out.put(e.getKey(), field);
        }
        return out;
    }

    /** The chunk mapping {@code mapping} with the vector fields ({@code embedding}, {@code children.embedding}) of {@code ours}. */
    @SuppressWarnings("unchecked")
    static Map<String, Object> withVectors(Map<String, Object> mapping, Map<String, Object> ours) {
        Map<String, Object> oursProps = (Map<String, Object>) ours.get("properties");
        return withProperties(mapping, properties -> {
            Map<String, Object> out = new LinkedHashMap<>(properties);
            out.put(ChunkDocuments.EMBEDDING, oursProps.get(ChunkDocuments.EMBEDDING));
            Map<String, Object> children = new LinkedHashMap<>((Map<String, Object>) out.get(ChunkDocuments.CHILDREN));
            Map<String, Object> childProps = new LinkedHashMap<>((Map<String, Object>) children.get("properties"));
            childProps.put(ChunkDocuments.EMBEDDING, ((Map<String, Object>) ((Map<String, Object>) oursProps.get(ChunkDocuments.CHILDREN))
                .get("properties")).get(ChunkDocuments.EMBEDDING));
            children.put("properties", childProps);
            out.put(ChunkDocuments.CHILDREN, children);
            return out;
        });
    }

    /**
     * What keeps an existing chunk index (its mapping {@code existing}) from indexing vectors as {@code vectors} says, naming
     * the option (null: nothing, or no vector field mapped yet, which the chunk mapping then adds with the options).
     */
    static String vectorsDiffer(Map<String, Object> existing, VectorOptions vectors, String target) {
        if (vectors.isDefault() || !(existing.get("properties") instanceof Map<?, ?> props)) {
            return null;
        }
        if (props.get(ChunkDocuments.EMBEDDING) instanceof Map<?, ?> parent) {
            String problem = vectors.differenceFrom(parent, target, ChunkDocuments.EMBEDDING);
            if (problem != null) {
                return problem;
            }
        }
        if (props.get(ChunkDocuments.CHILDREN) instanceof Map<?, ?> children && children.get("properties") instanceof Map<?, ?> cp
            && cp.get(ChunkDocuments.EMBEDDING) instanceof Map<?, ?> child) {
            return vectors.differenceFrom(child, target, ChunkDocuments.CHILDREN + "." + ChunkDocuments.EMBEDDING);
        }
        return null;
    }

    private static String describeField(Map<?, ?> field) {
        return "[" + field.get("type") + "]" + (field.get("dimension") != null ? " of " + field.get("dimension") + " dimensions" : "");
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> unwrap(Map<String, Object> mapping) {
        return mapping.size() == 1 && mapping.get("_doc") instanceof Map<?, ?> inner ? (Map<String, Object>) inner : mapping;
    }

    /** Whether a mapping's {@code _source} settings keep {@code field}, decided by OpenSearch's own source filtering. */
    static boolean keptInSource(Map<String, Object> mapping, String field) {
        if (!(mapping.get("_source") instanceof Map<?, ?> source)) {
            return true;
        }
        if (Boolean.FALSE.equals(source.get("enabled")) || "false".equals(String.valueOf(source.get("enabled")))) {
            return false;
        }
        String[] includes = strings(source.get("includes"));
        String[] excludes = strings(source.get("excludes"));
        if (includes.length == 0 && excludes.length == 0) {
            return true;
        }
        Map<String, Object> probe = new HashMap<>();
        probe.put(field, "x");
        return XContentMapValues.extractValue(field, XContentMapValues.filter(probe, includes, excludes)) != null;
    }

    private static String[] strings(Object value) {
        if (value instanceof List<?> l) {
            return l.stream().map(String::valueOf).toArray(String[]::new);
        }
        return value instanceof String s ? new String[] { s } : new String[0];
    }

    private ChunkIndexMappings() {}
}
