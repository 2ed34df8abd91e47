package io.strata.ingest;

import io.strata.model.ModelRef;
import io.strata.chunkindex.ChunkDocuments;
import io.strata.chunkindex.ChunkLedger;
import io.strata.chunkindex.ChunkWriter;
import io.strata.chunking.ChunkedParent;
import io.strata.chunking.ConfigMap;
import io.strata.chunking.ConfigException;
import io.strata.inference.Chunkers;
import io.strata.chunking.MultiGranularChunker;
import io.strata.chunking.SentenceSegmenter;
import io.strata.stats.StrataStats;
import org.opensearch.cluster.metadata.MetadataCreateIndexService;
import org.opensearch.common.UUIDs;
import org.opensearch.common.util.concurrent.ThreadContext;
import org.opensearch.core.action.ActionListener;
import org.opensearch.ingest.AbstractProcessor;
import org.opensearch.ingest.ConfigurationUtils;
import org.opensearch.ingest.IngestDocument;
import org.opensearch.ingest.Processor;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.BiConsumer;

/**
 * {@code multi_granular_chunking}: splits a text field into parent chunks and their multi-granular
 * children (LGMGC §3.2) and writes one chunk document per parent into {@code target_index}, before the
 * source document itself is written. The source document gains a summary under {@code strata}.
 *
 * <p>Runs asynchronously and never blocks the write thread on I/O. Chunk writes use the caller's thread
 * context (and so its permissions). In {@code _simulate} nothing is written: the chunk documents are shown
 * under {@code strata.chunks} instead.
 */
public final class MultiGranularChunkingProcessor extends AbstractProcessor {
    public static final String TYPE = "multi_granular_chunking";
    /** Default limit of the text length, in characters. */
    public static final int DEFAULT_MAX_CHARS = 10_000_000;

    private final ChunkWriter writer;
    private final boolean ignoreMissing;
    private final int maxChars;
    private final ThreadContext threadContext;
    private final StrataStats stats;

    MultiGranularChunkingProcessor(String tag, String description, ChunkWriter writer, boolean ignoreMissing, int maxChars,
                                   ChunkWriter.Services services) {
        super(tag, description);
        this.writer = writer;
        this.ignoreMissing = ignoreMissing;
        this.maxChars = maxChars;
        this.threadContext = services.threadContext();
        this.stats = services.stats();
    }

    @Override
    public String getType() {
        return TYPE;
    }

    /** Writes this processor's chunks; also used by repairs and {@code _reconcile}. */
    public ChunkWriter writer() {
        return writer;
    }

    @Override
    public IngestDocument execute(IngestDocument document) {
        throw new UnsupportedOperationException("[" + TYPE + "] runs asynchronously only");
    }

    @Override
    public void execute(IngestDocument document, BiConsumer<IngestDocument, Exception> handler) {
        final String text;
        final String sourceIndex;
        try {
            Object value = document.hasField(writer.field()) ? document.getFieldValue(writer.field(), Object.class) : null;
            if (value == null) {
                if (ignoreMissing) {
                    handler.accept(document, null);
                    return;
                }
                throw new IllegalArgumentException(String.format(Locale.ROOT,
                    "[%s] field [%s] is missing from the document; set [ignore_missing] to skip such documents", TYPE, writer.field()));
            }
            text = validText(value);
            sourceIndex = (String) document.getSourceAndMetadata().get(IngestDocument.Metadata.INDEX.getFieldName());
            if (writer.targetIndex().equals(sourceIndex)) {
                throw new IllegalArgumentException(String.format(Locale.ROOT,
                    "[%s] [target_index] [%s] is the index being written; chunks need an index of their own", TYPE, writer.targetIndex()));
            }
        } catch (Exception e) {
            failed(handler, IngestFailures.of(e), e);
            return;
        }
        // every path below ends in the handler exactly once: that is where a tracked document leaves the report
        StrataStats.Progress progress = stats.track(sourceIndex,
            (String) document.getSourceAndMetadata().get(IngestDocument.Metadata.ID.getFieldName()), text.length());
        BiConsumer<IngestDocument, Exception> done = (d, e) -> {
            progress.done();
            handler.accept(d, e);
        };
        writer.chunk(text, ActionListener.wrap(parents -> chunked(document, sourceIndex, text, parents, progress, done),
            e -> failed(done, IngestFailures.ofModel(e), e)));
    }

    private void chunked(IngestDocument document, String sourceIndex, String text, List<ChunkedParent> parents,
                         StrataStats.Progress progress, BiConsumer<IngestDocument, Exception> handler) {
        final String sourceId;
        final Map<String, Object> copied;
        final String sourceHash = ChunkWriter.sourceHash(text); // one pass over the text, for the summary and every chunk document
        try {
            String id = (String) document.getSourceAndMetadata().get(IngestDocument.Metadata.ID.getFieldName());
            if (id == null) {
                // chunk ids derive from the source id, so the id is fixed here instead of at write time
                id = UUIDs.base64UUID();
                document.setFieldValue(IngestDocument.Metadata.ID.getFieldName(), id);
            }
            sourceId = id;
            progress.id(id);
            copied = writer.copiedFields(document);
            Object pipeline = document.getIngestMetadata().get("pipeline");
            Map<String, Object> summary = writer.summary(parents, sourceHash, pipeline instanceof String s ? s : null);
            ChunkLedger ledger = threadContext.getTransient(ChunkLedger.TRANSIENT);
            if (ledger == null) {
                // _simulate: show what would be written (without vectors), write nothing
                List<Map<String, Object>> preview = new ArrayList<>(parents.size());
                for (ChunkedParent p : parents) {
                    preview.add(writer.preview(sourceIndex, sourceId, p, copied));
                }
                summary.put("chunks", preview);
                document.setFieldValue(ChunkWriter.SUMMARY_FIELD, summary);
                handler.accept(document, null);
                return;
            }
            document.setFieldValue(ChunkWriter.SUMMARY_FIELD, summary);
            ledger.record(writer, sourceIndex, sourceId, sourceHash, parents.size());
        } catch (Exception e) {
            failed(handler, IngestFailures.of(e), e);
            return;
        }
        writer.write(sourceIndex, sourceId, parents, copied, sourceHash, progress, ActionListener.wrap(v -> {
            stats.ingest().chunked(parents);
            handler.accept(document, null);
        }, e -> failed(handler, IngestFailures.of(e), e)), e -> failed(handler, IngestFailures.ofModel(e), e));
    }

    private void failed(BiConsumer<IngestDocument, Exception> handler, StrataStats.Failure reason, Exception e) {
        stats.ingest().failed(reason);
        handler.accept(null, e);
    }

    private String validText(Object value) {
        if (!(value instanceof String text)) {
            throw new IllegalArgumentException(String.format(Locale.ROOT,
                "[%s] field [%s] must be a string, got [%s]", TYPE, writer.field(), value instanceof List ? "array" : value.getClass().getSimpleName()));
        }
        if (text.isBlank()) {
            throw new IllegalArgumentException(String.format(Locale.ROOT, "[%s] field [%s] is empty", TYPE, writer.field()));
        }
        if (text.length() > maxChars) {
            throw new IllegalArgumentException(String.format(Locale.ROOT,
                "[%s] field [%s] has %d characters, more than [max_chars] = %d", TYPE, writer.field(), text.length(), maxChars));
        }
        return text;
    }

    /** Reads and validates the processor configuration once, at pipeline creation. */
    public static final class Factory implements Processor.Factory {
        static final Set<String> KEYS = Set.of("field", "target_index", "strategy", "granularities", "copy_fields",
            "ignore_missing", "max_chars", "model", "model_id", "embed");

        private final ChunkWriter.Services services;
        private final SentenceSegmenter segmenter;

        public Factory(ChunkWriter.Services services, SentenceSegmenter segmenter) {
            this.services = services;
            this.segmenter = segmenter;
        }

        @Override
        public MultiGranularChunkingProcessor create(Map<String, Processor.Factory> factories, String tag, String description,
                                                     Map<String, Object> config) {
            try {
                return parse(tag, description, config);
            } catch (ConfigException e) {
                // the one translation: OpenSearch names the property (and the processor type and tag) itself
                throw ConfigurationUtils.newConfigurationException(TYPE, tag, e.field(), e.reason());
            }
        }

        private MultiGranularChunkingProcessor parse(String tag, String description, Map<String, Object> config) {
            ConfigMap c = new ConfigMap(null, "", config).expect(KEYS);
            String unknown = c.firstUnknown();
            if (unknown != null) {
                throw new ConfigException(unknown, "unknown option [" + unknown + "]; supported: " + c.known());
            }
            String field = c.requiredString("field", "the source field holding the text");
            String targetIndex = c.requiredString("target_index", "the index the chunk documents go to");
            validateIndexName(c, targetIndex);
            boolean ignoreMissing = c.booleanValue("ignore_missing", false);
            Object maxCharsValue = c.remove("max_chars");
            int maxChars = DEFAULT_MAX_CHARS;
            if (maxCharsValue != null) {
                if (!(maxCharsValue instanceof Integer n) || n < 1) {
                    throw c.error("max_chars", "must be a positive integer (characters), got [" + maxCharsValue + "]");
                }
                maxChars = n;
            }
            List<String> copyFields = readCopyFields(c);
            boolean embed = c.booleanValue("embed", true);
            String modelField = c.has("model_id") ? "model_id" : "model";
            ModelRef model;
            try {
                model = ModelRef.parse("[" + TYPE + "]", config);
                if (!embed && model != null) {
                    throw new IllegalArgumentException("[" + TYPE + "] [embed] is false but a model is configured; remove one of them");
                }
                if (embed) {
                    model = model == null ? services.inference().defaultRef() : model;
                    services.inference().validate("[" + TYPE + "]", model);
                }
            } catch (ConfigException e) {
                throw e;
            } catch (IllegalArgumentException e) {
                throw new ConfigException(modelField, e.getMessage());
            }
            MultiGranularChunker chunker = new Chunkers(services.inference(), segmenter).parse(config, embed ? model : null);
            ChunkWriter writer = new ChunkWriter(field, targetIndex, chunker, copyFields, embed ? model : null, services);
            return new MultiGranularChunkingProcessor(tag, description, writer, ignoreMissing, maxChars, services);
        }

        private static void validateIndexName(ConfigMap c, String name) {
            String problem = null;
            if (!name.toLowerCase(Locale.ROOT).equals(name)) {
                problem = "must be lowercase";
            } else if (name.startsWith("_") || name.startsWith("-") || name.startsWith("+")) {
                problem = "must not start with '_', '-' or '+'";
            } else if (name.equals(".") || name.equals("..")) {
                problem = "must not be '.' or '..'";
            } else {
                try {
                    MetadataCreateIndexService.validateIndexOrAliasName(name, (n, msg) -> new IllegalArgumentException(msg));
                } catch (IllegalArgumentException e) {
                    problem = e.getMessage();
                }
            }
            if (problem != null) {
                throw c.error("target_index", "[" + name + "] is not a valid index name: " + problem);
            }
        }

        private static List<String> readCopyFields(ConfigMap c) {
            List<String> names = c.stringList("copy_fields", false, true, "a list of source field names, e.g. [\"title\"]");
            if (names == null) {
                return List.of();
            }
            for (String name : names) {
                String root = name.contains(".") ? name.substring(0, name.indexOf('.')) : name;
                if (ChunkDocuments.RESERVED.contains(root)) {
                    throw c.error("copy_fields", String.format(Locale.ROOT,
                        "[%s] would overwrite a chunk field; reserved: %s", name, ChunkDocuments.RESERVED.stream().sorted().toList()));
                }
            }
            return names;
        }
    }
}
