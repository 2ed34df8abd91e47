package io.strata.ingest;

import org.opensearch.cluster.metadata.IndexMetadata;
import org.opensearch.cluster.service.ClusterService;
import org.opensearch.index.IndexSettings;
import org.opensearch.ingest.IngestService;
import org.opensearch.ingest.PipelineConfiguration;

import java.util.ArrayList;
import java.util.List;

/**
 * Finds the {@link MultiGranularChunkingProcessor} that wrote (or should rewrite) a source document's chunks, from
 * the node's live pipelines. Used by repairs outside an ingest run: {@code _reconcile} and the write/delete race checks
 * of {@link ChunkLifecycleFilter}.
 */
public final class ChunkProcessors {
    private final ClusterService clusterService;
    private final IngestService ingestService;

    public ChunkProcessors(ClusterService clusterService, IngestService ingestService) {
        this.clusterService = clusterService;
        this.ingestService = ingestService;
    }

    /**
     * The processor writing to {@code target} in the pipeline the document's summary names, else in the index's
     * default or final pipeline, else the first one in any pipeline writing to {@code target}; null when none does.
     */
    public MultiGranularChunkingProcessor resolve(String sourceIndex, Object pipeline, String target) {
        List<String> candidates = new ArrayList<>();
        if (pipeline instanceof String p) {
            candidates.add(p);
        }
        IndexMetadata index = clusterService.state().metadata().index(sourceIndex);
        if (index != null) {
            candidates.add(IndexSettings.DEFAULT_PIPELINE.get(index.getSettings()));
            candidates.add(IndexSettings.FINAL_PIPELINE.get(index.getSettings()));
        }
        for (String id : candidates) {
            MultiGranularChunkingProcessor found = inPipeline(id, target);
            if (found != null) {
                return found;
            }
        }
        return all().stream().filter(p -> p.targetIndex().equals(target)).findFirst().orElse(null);
    }

    /** Every chunking processor of every pipeline this node has parsed. */
    public List<MultiGranularChunkingProcessor> all() {
        List<MultiGranularChunkingProcessor> out = new ArrayList<>();
        for (PipelineConfiguration config : IngestService.getPipelines(clusterService.state())) {
            if (ingestService.getPipeline(config.getId()) != null) {
                out.addAll(ingestService.getProcessorsInPipeline(config.getId(), MultiGranularChunkingProcessor.class));
            }
        }
        return out;
    }

    private MultiGranularChunkingProcessor inPipeline(String pipelineId, String target) {
        if (pipelineId == null || IngestService.NOOP_PIPELINE_NAME.equals(pipelineId) || ingestService.getPipeline(pipelineId) == null) {
            return null;
        }
        return ingestService.getProcessorsInPipeline(pipelineId, MultiGranularChunkingProcessor.class).stream()
            .filter(p -> p.targetIndex().equals(target)).findFirst().orElse(null);
    }
}
