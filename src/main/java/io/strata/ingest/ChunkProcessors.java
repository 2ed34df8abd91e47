package io.strata.ingest;

import io.strata.chunkindex.lifecycle.ChunkLifecycleFilter;
import io.strata.chunkindex.store.ChunkStore;
import io.strata.chunkindex.write.ChunkWriter;
import io.strata.chunkindex.write.ChunkWriters;
import io.strata.chunkindex.ServingIndex;

import org.opensearch.cluster.metadata.IndexMetadata;
import org.opensearch.cluster.service.ClusterService;
import org.opensearch.index.IndexSettings;
import org.opensearch.ingest.ConditionalProcessor;
import org.opensearch.ingest.IngestDocument;
import org.opensearch.ingest.IngestService;
import org.opensearch.ingest.Pipeline;
import org.opensearch.ingest.PipelineConfiguration;
import org.opensearch.ingest.Processor;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

/**
 * Finds the {@link MultiGranularChunkingProcessor} that wrote (or should rewrite) a source document's chunks, from
 * the node's live pipelines, and hands out its {@link ChunkWriter}. Used outside an ingest run: {@code _reconcile} and the
 * re-chunking of updated documents by {@link ChunkLifecycleFilter}.
 */
public final class ChunkProcessors implements ChunkWriters {
    private final ClusterService clusterService;
    private final Supplier<IngestService> ingestService;

    /** @param ingestService the node's ingest service, known once the plugin's processors are created */
    public ChunkProcessors(ClusterService clusterService, Supplier<IngestService> ingestService) {
        this.clusterService = clusterService;
        this.ingestService = ingestService;
    }

    @Override
    public ChunkWriter resolve(String sourceIndex, Map<?, ?> summary, String target) {
        List<String> candidates = new ArrayList<>();
        if (summary != null && summary.get("pipeline") instanceof String p) {
            candidates.add(p);
        }
        IndexMetadata index = clusterService.state().metadata().index(sourceIndex);
        if (index != null) {
            candidates.add(IndexSettings.DEFAULT_PIPELINE.get(index.getSettings()));
            candidates.add(IndexSettings.FINAL_PIPELINE.get(index.getSettings()));
        }
        for (String id : candidates) {
            ChunkWriter found = inPipeline(id, sourceIndex, summary, target);
            if (found != null) {
                return found;
            }
        }
        return all().stream().filter(w -> writes(w, sourceIndex, summary, target)).findFirst().orElse(null);
    }

    @Override
    public ChunkWriter ofPipeline(String pipeline, String sourceIndex, String target) {
        return processorsIn(ingestService.get(), pipeline).stream().map(MultiGranularChunkingProcessor::writer)
            .filter(w -> ServingIndex.same(clusterService.state().metadata(), w.targetFor(sourceIndex), target)).findFirst().orElse(null);
    }

    @Override
    public List<ChunkWriter> all() {
        IngestService ingestService = this.ingestService.get();
        List<ChunkWriter> out = new ArrayList<>();
        for (PipelineConfiguration config : IngestService.getPipelines(clusterService.state())) {
            if (ingestService.getPipeline(config.getId()) != null) {
                ingestService.getProcessorsInPipeline(config.getId(), MultiGranularChunkingProcessor.class)
                    .forEach(p -> out.add(p.writer()));
            }
        }
        return out;
    }

    /**
     * Runs the {@code if} condition that wraps {@code writer}'s processor in its pipeline (a top-level processor's) on
     * {@code doc} as OpenSearch runs it — the condition's own script, language and parameters — with a probe in the ingest
     * metadata that tells the processor, should the condition let it run, to mark the probe and do nothing else.
     */
    @Override
    public boolean runsOn(ChunkWriter writer, ChunkStore.StoredSource doc) {
        ConditionalProcessor condition = conditionOf(writer);
        if (condition == null) {
            return true;
        }
        IngestDocument probe = new IngestDocument(doc.index(), doc.id(), doc.routing(), null, null, new HashMap<>(doc.source()));
        AtomicBoolean ran = new AtomicBoolean();
        probe.getIngestMetadata().put(MultiGranularChunkingProcessor.CONDITION_PROBE, ran);
        Exception[] failed = { null };
        condition.execute(probe, (d, e) -> failed[0] = e); // synchronous: a condition script, then the probe's no-op
        if (failed[0] != null) {
            throw failed[0] instanceof RuntimeException r ? r : new IllegalStateException(failed[0]);
        }
        return ran.get();
    }

    /** The {@code if} condition around the processor whose writer is {@code writer}, or null when it has none. */
    private ConditionalProcessor conditionOf(ChunkWriter writer) {
        IngestService ingestService = this.ingestService.get();
        for (PipelineConfiguration config : IngestService.getPipelines(clusterService.state())) {
            Pipeline pipeline = ingestService.getPipeline(config.getId());
            if (pipeline == null) {
                continue;
            }
            for (Processor p : pipeline.getProcessors()) {
                if (p instanceof ConditionalProcessor c && c.getInnerProcessor() instanceof MultiGranularChunkingProcessor m
                    && m.writer() == writer) {
                    return c;
                }
            }
        }
        return null;
    }

    private ChunkWriter inPipeline(String pipelineId, String sourceIndex, Map<?, ?> summary, String target) {
        return processorsIn(ingestService.get(), pipelineId).stream()
            .map(MultiGranularChunkingProcessor::writer).filter(w -> writes(w, sourceIndex, summary, target)).findFirst().orElse(null);
    }

    /** The chunking processors of pipeline {@code pipelineId} (none for null, {@code _none} or a pipeline not parsed here). */
    static List<MultiGranularChunkingProcessor> processorsIn(IngestService ingestService, String pipelineId) {
        if (pipelineId == null || IngestService.NOOP_PIPELINE_NAME.equals(pipelineId) || ingestService.getPipeline(pipelineId) == null) {
            return List.of();
        }
        return ingestService.getProcessorsInPipeline(pipelineId, MultiGranularChunkingProcessor.class);
    }

    /**
     * The id of the stored pipeline that holds {@code processor} (this very instance: every pipeline parses its own), or
     * null (an inline {@code _simulate} pipeline). A processor is not told its pipeline, and a batched bulk runs pipelines
     * without naming them in the ingest metadata, so the summary's {@code pipeline} is found this way.
     */
    static String pipelineOf(IngestService ingestService, MultiGranularChunkingProcessor processor) {
        for (PipelineConfiguration config : IngestService.getPipelines(ingestService.getClusterService().state())) {
            for (MultiGranularChunkingProcessor p : processorsIn(ingestService, config.getId())) {
                if (p == processor) {
                    return config.getId();
                }
            }
        }
        return null;
    }

    private boolean writes(ChunkWriter writer, String sourceIndex, Map<?, ?> summary, String target) {
        // target: a registered (concrete) chunk index or a summary's name (an alias over the serving generation)
        return (target == null || ServingIndex.same(clusterService.state().metadata(), writer.targetFor(sourceIndex), target))
            && writer.agreesWith(summary);
    }
}
