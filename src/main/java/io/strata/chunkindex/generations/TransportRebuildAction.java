package io.strata.chunkindex.generations;

import io.strata.chunkindex.ChunkIndexMeta;
import io.strata.chunkindex.registry.ChunkIndexRegistry;
import io.strata.chunkindex.write.ChunkWriter;
import io.strata.chunkindex.write.ChunkWriters;
import io.strata.transport.RenderedResponse;
import org.opensearch.action.support.ActionFilters;
import org.opensearch.action.support.HandledTransportAction;
import org.opensearch.action.support.TransportIndicesResolvingAction;
import org.opensearch.cluster.metadata.IndexAbstraction;
import org.opensearch.cluster.metadata.IndexMetadata;
import org.opensearch.cluster.metadata.Metadata;
import org.opensearch.cluster.metadata.OptionallyResolvedIndices;
import org.opensearch.cluster.metadata.ResolvedIndices;
import org.opensearch.cluster.service.ClusterService;
import org.opensearch.common.inject.Inject;
import org.opensearch.core.action.ActionListener;
import org.opensearch.index.IndexNotFoundException;
import org.opensearch.index.IndexSettings;
import org.opensearch.ingest.IngestService;
import org.opensearch.tasks.CancellableTask;
import org.opensearch.tasks.Task;
import org.opensearch.transport.TransportService;

import java.util.Locale;
import java.util.Map;

/**
 * Runs {@link RebuildAction} on the node that received it: finds the chunking processor whose config to build (the named
 * pipeline's, else the source index's default or final pipeline's) and hands the work to {@link GenerationBuilder}, which
 * makes every read and write as the caller.
 */
public final class TransportRebuildAction extends HandledTransportAction<RebuildRequest, RenderedResponse>
    implements TransportIndicesResolvingAction<RebuildRequest> {
    private final ClusterService clusterService;
    private final GenerationBuilder builder;
    private final ChunkIndexRegistry registry;

    @Inject
    public TransportRebuildAction(TransportService transportService, ActionFilters actionFilters, ClusterService clusterService,
                                  GenerationBuilder builder, ChunkIndexRegistry registry) {
        super(RebuildAction.NAME, transportService, actionFilters, RebuildRequest::new);
        this.clusterService = clusterService;
        this.builder = builder;
        this.registry = registry;
    }

    @Override
    public OptionallyResolvedIndices resolveIndices(RebuildRequest request) {
        return ResolvedIndices.of(request.index());
    }

    @Override
    protected void doExecute(Task task, RebuildRequest request, ActionListener<RenderedResponse> listener) {
        Resolved resolved = resolve(registry, clusterService.state().metadata(), builder.writers(), request.index(), request.pipeline(),
            "_rebuild", listener);
        if (resolved != null) {
            builder.build(resolved.source().getIndex(), resolved.writer(), resolved.pipeline(), request.requestsPerSecond(),
                task instanceof CancellableTask c ? c : null, ActionListener.wrap(
                    report -> listener.onResponse(RenderedResponse.of(report, org.opensearch.core.rest.RestStatus.OK)), listener::onFailure));
        }
    }

    /** What a request names: the source index, the pipeline and its chunking processor. */
    record Resolved(IndexMetadata source, String pipeline, ChunkWriter writer) {}

    /**
     * The source index {@code index} names, the pipeline ({@code pipeline}, else its default or final one) and that
     * pipeline's chunking processor, for {@code action}; null after failing {@code listener} with the 400 that says which.
     */
    static Resolved resolve(ChunkIndexRegistry registry, Metadata metadata, ChunkWriters writers, String index, String pipeline,
                            String action, ActionListener<?> listener) {
        try {
            IndexMetadata source = sourceIndex(registry, metadata, index, action);
            String id = pipelineOf(source, pipeline, action);
            return new Resolved(source, id, writerOf(writers, source, id, action));
        } catch (Exception e) {
            listener.onFailure(e);
            return null;
        }
    }

    /** The source index {@code index} names, for {@code action}; a 400 for an alias, a data stream or a chunk index. */
    static IndexMetadata sourceIndex(ChunkIndexRegistry registry, Metadata metadata, String index, String action) {
        IndexMetadata source = metadata.index(index);
        if (source == null) {
            if (metadata.getIndicesLookup().get(index) instanceof IndexAbstraction alias) {
                throw new IllegalArgumentException(String.format(Locale.ROOT,
                    "[%s] [index] must name one source index, got [%s], %s of %s: name each by its own name", action, index,
                    alias.getType().getDisplayName(), alias.getIndices().stream().map(i -> i.getIndex().getName()).sorted().toList()));
            }
            throw new IndexNotFoundException(index);
        }
        ChunkIndexRegistry.Registration registered = registry.ofChunkIndex(index);
        if (registered != null || ChunkIndexMeta.of(source) != null) {
            throw new IllegalArgumentException(String.format(Locale.ROOT,
                "[%s] [%s] is a chunk index; name its source index%s", action, index,
                registered == null ? "" : " [" + registered.source().getName() + "]"));
        }
        return source;
    }

    /** {@code pipeline}, else the index's default pipeline, else its final pipeline. */
    static String pipelineOf(IndexMetadata source, String pipeline, String action) {
        String index = source.getIndex().getName();
        String id = pipeline;
        if (id == null) {
            String def = IndexSettings.DEFAULT_PIPELINE.get(source.getSettings());
            String fin = IndexSettings.FINAL_PIPELINE.get(source.getSettings());
            id = !IngestService.NOOP_PIPELINE_NAME.equals(def) ? def : !IngestService.NOOP_PIPELINE_NAME.equals(fin) ? fin : null;
            if (id == null) {
                throw new IllegalArgumentException(String.format(Locale.ROOT, "[%s] [%s] has no default or final pipeline: "
                    + "name the pipeline whose [multi_granular_chunking] processor to use, e.g. "
                    + "POST _plugins/_strata/%s?index=%s&pipeline=<id>", action, index, action, index));
            }
        }
        return id;
    }

    /** The chunking processor of pipeline {@code id}. */
    static ChunkWriter writerOf(ChunkWriters writers, IndexMetadata source, String id, String action) {
        String index = source.getIndex().getName();
        ChunkWriter found = writers == null ? null : writers.resolve(index, Map.of("pipeline", id), null);
        if (found == null || writers.ofPipeline(id, index, found.targetFor(index)) != found) {
            throw new IllegalArgumentException(String.format(Locale.ROOT,
                "[%s] [pipeline] [%s] has no [multi_granular_chunking] processor (or does not exist on this node)", action, id));
        }
        return found;
    }
}
