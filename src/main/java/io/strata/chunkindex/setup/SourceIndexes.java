package io.strata.chunkindex.setup;

import org.opensearch.cluster.ClusterState;
import org.opensearch.cluster.metadata.AliasMetadata;
import org.opensearch.cluster.metadata.DataStream;
import org.opensearch.cluster.metadata.IndexAbstraction;
import org.opensearch.cluster.metadata.IndexMetadata;
import org.opensearch.cluster.metadata.IndexNameExpressionResolver;
import org.opensearch.cluster.metadata.Metadata;
import org.opensearch.cluster.metadata.MetadataIndexTemplateService;
import org.opensearch.cluster.service.ClusterService;
import org.opensearch.common.settings.Settings;
import org.opensearch.index.IndexSettings;
import org.opensearch.ingest.IngestService;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * What chunking needs of a source index, as it is or, before it exists, as the index templates will create it from the
 * name a write gives: the concrete index a write lands in, its final pipeline, its mapping and analysis settings, whether
 * that mapping keeps the chunked field, and the aliases templates would share with its chunk index.
 */
public final class SourceIndexes {
    private final ClusterService clusterService;
    private final Supplier<IndexNameExpressionResolver> dateMath;

    /**
     * @param dateMath resolves an index name's date math ({@code <logs-{now/d}>}) as a write does; a supplier, since the
     *                 node's resolver may not exist yet when the ingest processors are built
     */
    SourceIndexes(ClusterService clusterService, Supplier<IndexNameExpressionResolver> dateMath) {
        this.clusterService = clusterService;
        this.dateMath = dateMath;
    }

    /** {@code name} as a write resolves it: its date math ({@code <logs-{now/d}>} → {@code logs-2026.11.27}) evaluated now. */
    public String resolvedName(String name) {
        return name != null && name.startsWith("<") && name.endsWith(">") ? dateMath.get().resolveDateMathExpression(name) : name;
    }

    /**
     * A source index's mappings (its own, or its templates' in order) and its analysis and similarity settings
     * ({@code index.analysis.*}, {@code index.similarity.*}).
     */
    record SourceMapping(List<Map<String, Object>> mappings, Settings analysis) {}

    /**
     * The mapping and analysis settings of {@code sourceIndex}, or before it exists, those the index templates that will
     * create it give (a data stream's first backing index: its stream's templates).
     */
    SourceMapping sourceMapping(String sourceIndex) {
        ClusterState state = clusterService.state();
        IndexMetadata index = state.metadata().index(sourceIndex);
        try {
            if (index != null) {
                return new SourceMapping(index.mapping() == null ? List.of() : List.of(index.mapping().sourceAsMap()),
                    index.getSettings().filter(SourceIndexes::analysisSetting));
            }
            String named = streamOf(sourceIndex);
            return new SourceMapping(ChunkIndexMappings.ofTemplates(state, named),
                templateSettings(named).filter(SourceIndexes::analysisSetting));
        } catch (Exception e) {
            return new SourceMapping(List.of(), Settings.EMPTY); // a template the source's own write will report
        }
    }

    private static boolean analysisSetting(String key) {
        return key.startsWith("index.analysis.") || key.startsWith("index.similarity.");
    }

    /** The data stream whose first backing index {@code index} will be (its templates match the stream's name), else itself. */
    private static String streamOf(String index) {
        return index.startsWith(DataStream.BACKING_INDEX_PREFIX) && index.matches(".+-\\d{6}")
            ? index.substring(DataStream.BACKING_INDEX_PREFIX.length(), index.length() - 7) : index;
    }

    /** The settings the index templates give a new index named {@code name}. */
    Settings templateSettings(String name) {
        Metadata metadata = clusterService.state().metadata();
        String v2 = MetadataIndexTemplateService.findV2Template(metadata, name, false);
        return v2 != null ? MetadataIndexTemplateService.resolveSettings(metadata, v2)
            : MetadataIndexTemplateService.resolveSettings(MetadataIndexTemplateService.findV1Templates(metadata, name, null));
    }

    /**
     * The concrete index a write naming {@code name} lands in, as the cluster state says now: the write index of an alias or
     * data stream, the index itself; when nothing of that name exists yet, the index the write creates: the first backing
     * index of the data stream a data-stream template makes of it, else {@code name} itself.
     */
    public String concreteIndexFor(String name) {
        Metadata metadata = clusterService.state().metadata();
        IndexAbstraction found = metadata.getIndicesLookup().get(name);
        if (found == null) {
            // chunks named after the data stream itself went into an index that served nothing, or failed every write when
            // the stream's template pattern matched the chunk index's name too (`logs-*` and `{{_index}}-chunks`)
            String template = MetadataIndexTemplateService.findV2Template(metadata, name, false);
            return template != null && metadata.templatesV2().get(template).getDataStreamTemplate() != null
                ? DataStream.getDefaultBackingIndexName(name, 1) : name;
        }
        IndexMetadata write = found.getWriteIndex();
        return write == null ? name : write.getIndex().getName();
    }

    /**
     * What is wrong with the aliases index templates would give chunk index {@code target} when it is created: those its
     * source index has too (one template's pattern matching both, e.g. {@code docs-*} with an alias for every document
     * index), through which plain searches of the documents would return chunk documents; null when there are none.
     */
    static String sharedTemplateAliases(Metadata metadata, String target, String sourceIndex) {
        Set<String> ofChunks = templateAliases(metadata, target);
        if (ofChunks.isEmpty()) {
            return null;
        }
        IndexMetadata source = metadata.index(sourceIndex);
        Set<String> ofSource = new TreeSet<>(source != null ? source.getAliases().keySet() : templateAliases(metadata, sourceIndex));
        ofSource.retainAll(ofChunks);
        if (ofSource.isEmpty()) {
            return null;
        }
        return String.format(Locale.ROOT, "[target_index] [%s] would get the aliases %s of its source index [%s] from the index "
            + "templates matching both names: searches of those aliases would return chunk documents among the documents. Name "
            + "the chunk index outside the templates' patterns (e.g. [target_index] [chunks-{{_index}}]), or create it first "
            + "without those aliases", target, ofSource, sourceIndex);
    }

    private static Set<String> templateAliases(Metadata metadata, String name) {
        String v2 = MetadataIndexTemplateService.findV2Template(metadata, name, false);
        List<Map<String, AliasMetadata>> aliases = v2 != null ? MetadataIndexTemplateService.resolveAliases(metadata, v2)
            : MetadataIndexTemplateService.resolveAliases(MetadataIndexTemplateService.findV1Templates(metadata, name, null));
        Set<String> out = new TreeSet<>();
        aliases.forEach(a -> out.addAll(a.keySet()));
        return out;
    }

    /**
     * The final pipeline of {@code concreteIndex} (its setting, or before it exists, that of the index templates that will
     * create it from {@code writtenAs}, the name the write gives — a data stream's for its first backing index — as the
     * write resolves it); null when it has none.
     */
    public String finalPipelineOf(String concreteIndex, String writtenAs) {
        Metadata metadata = clusterService.state().metadata();
        IndexMetadata index = metadata.index(concreteIndex);
        Settings settings = index != null ? index.getSettings() : templateSettings(writtenAs);
        String pipeline = IndexSettings.FINAL_PIPELINE.get(settings);
        return pipeline == null || IngestService.NOOP_PIPELINE_NAME.equals(pipeline) ? null : pipeline;
    }

    /** "index uuid|mapping version|field" → what the mapping refuses ("" for nothing): mappings are parsed once each. */
    private final Map<String, String> mappingProblems = new ConcurrentHashMap<>();

    /**
     * Fails with a 400 when {@code concreteIndex}'s mapping (or, before it exists, the index templates that will create it
     * from {@code writtenAs}, as {@link #finalPipelineOf}) cannot hold what chunking needs: {@code field} kept out of
     * {@code _source} ({@code _source.enabled: false}, {@code excludes}, {@code includes}: chunks of a text that is not
     * stored cannot be kept in step with updates of the document nor checked by {@code _reconcile}), or a strict mapping
     * ({@code "dynamic": "strict"}) without the summary's field, which OpenSearch would refuse with an error that names
     * neither Strata nor the remedy.
     */
    public void checkSourceMapping(String processor, String concreteIndex, String writtenAs, String field) {
        ClusterState state = clusterService.state();
        IndexMetadata index = state.metadata().index(concreteIndex);
        List<Map<String, Object>> mappings = new ArrayList<>();
        String key;
        if (index != null) {
            key = index.getIndexUUID() + "|" + index.getMappingVersion() + "|" + field;
            String known = mappingProblems.get(key);
            if (known != null) {
                if (!known.isEmpty()) {
                    throw new IllegalArgumentException("[" + processor + "] " + known);
                }
                return;
            }
            if (index.mapping() != null) {
                mappings.add(index.mapping().sourceAsMap());
            }
        } else {
            key = null;
            try {
                mappings.addAll(ChunkIndexMappings.ofTemplates(state, writtenAs));
            } catch (Exception e) {
                return; // the write itself reports a template it cannot apply
            }
        }
        String problem = ChunkIndexMappings.problem(mappings, concreteIndex, field);
        if (key != null) {
            mappingProblems.put(key, problem == null ? "" : problem);
        }
        if (problem != null) {
            throw new IllegalArgumentException("[" + processor + "] " + problem);
        }
    }
}
