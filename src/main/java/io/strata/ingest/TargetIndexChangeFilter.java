package io.strata.ingest;

import io.strata.chunkindex.registry.ChunkIndexRegistry;
import io.strata.chunkindex.write.ChunkWriter;
import io.strata.chunkindex.ServingIndex;
import org.opensearch.action.ActionRequest;
import org.opensearch.action.ingest.PutPipelineAction;
import org.opensearch.action.ingest.PutPipelineRequest;
import org.opensearch.action.support.ActionFilter;
import org.opensearch.action.support.ActionFilterChain;
import org.opensearch.cluster.metadata.IndexMetadata;
import org.opensearch.cluster.service.ClusterService;
import org.opensearch.common.xcontent.XContentHelper;
import org.opensearch.core.action.ActionListener;
import org.opensearch.core.action.ActionResponse;
import org.opensearch.ingest.IngestService;
import org.opensearch.tasks.Task;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Supplier;

/**
 * Refuses, with a 400, a pipeline update that points a {@code multi_granular_chunking} processor's {@code target_index}
 * away from a chunk index holding the chunks it wrote: each later write of a document would move that document's chunks,
 * emptying the old chunk index document by document while the new one fills, and searches of either would see part of
 * the index. The message says how to chunk into a new index instead.
 *
 * <p>A chunk index "holds the chunks this pipeline wrote" for source index {@code s} when it is registered to {@code s}
 * ({@link ChunkIndexRegistry}, Strata's own record, never a mapping's {@code _meta}) and the stored pipeline's processor
 * writes documents of {@code s} there; the updated pipeline moves it when a processor of the same field names another
 * index for {@code s}. Reads only cluster state and the request: nothing is done as the node.
 */
public final class TargetIndexChangeFilter implements ActionFilter {
    private final Supplier<IngestService> ingestService;
    private final Supplier<ClusterService> clusterService;
    private final ChunkIndexRegistry registry;

    public TargetIndexChangeFilter(Supplier<IngestService> ingestService, Supplier<ClusterService> clusterService,
                                   ChunkIndexRegistry registry) {
        this.ingestService = ingestService;
        this.clusterService = clusterService;
        this.registry = registry;
    }

    @Override
    public int order() {
        return Integer.MAX_VALUE; // after security filters: only updates the caller may send are looked at
    }

    @Override
    public <Request extends ActionRequest, Response extends ActionResponse> void apply(Task task, String action, Request request,
                                                                                       ActionListener<Response> listener,
                                                                                       ActionFilterChain<Request, Response> chain) {
        if (!PutPipelineAction.NAME.equals(action) || !(request instanceof PutPipelineRequest put) || ingestService.get() == null
            || clusterService.get() == null) {
            chain.proceed(task, action, request, listener);
            return;
        }
        String problem;
        try {
            problem = problem(put);
        } catch (RuntimeException e) {
            problem = null; // a body OpenSearch cannot parse: its own validation answers
        }
        if (problem != null) {
            listener.onFailure(new IllegalArgumentException(problem));
            return;
        }
        chain.proceed(task, action, request, listener);
    }

    private String problem(PutPipelineRequest put) {
        List<MultiGranularChunkingProcessor> stored = ChunkProcessors.processorsIn(ingestService.get(), put.getId());
        if (stored.isEmpty()) {
            return null;
        }
        Map<String, Object> body = XContentHelper.convertToMap(put.getSource(), false, put.getMediaType()).v2();
        List<Map<?, ?>> updated = new ArrayList<>();
        collect(body.get("processors"), updated);
        for (MultiGranularChunkingProcessor processor : stored) {
            ChunkWriter writer = processor.writer();
            List<String> sameField = updated.stream().filter(c -> writer.field().equals(c.get("field")))
                .map(c -> c.get("target_index")).filter(String.class::isInstance).map(String.class::cast).toList();
            if (sameField.isEmpty()) {
                continue; // no longer chunked (or another field): not a move
            }
            for (IndexMetadata index : clusterService.get().state().metadata()) {
                ChunkIndexRegistry.Registration registration = registry.ofChunkIndex(index.getIndex().getName());
                if (registration == null) {
                    continue;
                }
                String source = registration.source().getName();
                String chunkIndex = index.getIndex().getName();
                if (!ServingIndex.same(clusterService.get().state().metadata(), writer.targetFor(source), chunkIndex)
                    || sameField.stream().anyMatch(t -> ServingIndex.same(clusterService.get().state().metadata(),
                        t.replace(ChunkWriter.INDEX_PLACEHOLDER, source), chunkIndex))) {
                    continue;
                }
                String moved = sameField.get(0).replace(ChunkWriter.INDEX_PLACEHOLDER, source);
                return String.format(Locale.ROOT, "[%s] pipeline [%s] would change [target_index] of field [%s] from [%s] to [%s], "
                    + "but [%s] holds the chunks this pipeline wrote for index [%s]: each later write of a document would move its "
                    + "chunks, emptying [%s] document by document. To chunk [%s] into a new index, keep this pipeline, create "
                    + "another pipeline with the new [target_index], and _reindex [%s] into a new source index through it: its "
                    + "chunks go to the new chunk index, and [%s] keeps serving until you switch", MultiGranularChunkingProcessor.TYPE,
                    put.getId(), writer.field(), writer.targetFor(source), moved, chunkIndex, source, chunkIndex, source, source,
                    chunkIndex);
            }
        }
        return null;
    }

    /** The configs of every chunking processor in a pipeline's processors, {@code on_failure} and {@code foreach} included. */
    private static void collect(Object node, List<Map<?, ?>> out) {
        if (node instanceof List<?> list) {
            list.forEach(n -> collect(n, out));
        } else if (node instanceof Map<?, ?> map) {
            map.forEach((k, v) -> {
                if (MultiGranularChunkingProcessor.TYPE.equals(k) && v instanceof Map<?, ?> config) {
                    out.add(config);
                }
                collect(v, out);
            });
        }
    }
}
