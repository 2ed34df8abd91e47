package io.strata.ingest;

import io.strata.chunkindex.SourceSummary;
import io.strata.model.ModelRef;
import io.strata.chunkindex.ChunkDocuments;
import io.strata.chunkindex.setup.ChunkIndexSetup;
import io.strata.chunkindex.lifecycle.ChunkLedger;
import io.strata.chunkindex.write.ChunkWriter;
import io.strata.chunkindex.VectorOptions;
import io.strata.chunking.ChildEmbedding;
import io.strata.chunking.ParentSize;
import io.strata.chunking.ChunkContext;
import io.strata.chunking.ChunkedParent;
import io.strata.chunking.ConfigMap;
import io.strata.chunking.ConfigException;
import io.strata.chunking.InputLimitException;
import io.strata.inference.Chunkers;
import io.strata.inference.InferenceService;
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
import org.opensearch.ingest.IngestService;
import org.opensearch.ingest.Processor;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiConsumer;

/**
 * {@code multi_granular_chunking}: splits a text field (a path: {@code doc.body} reads an object's field or a dotted key)
 * into parent chunks and their multi-granular children (LGMGC §3.2) and embeds them; the source document gains a summary
 * under {@code strata}. It writes nothing: the chunks wait in the bulk's {@link ChunkLedger}, and the bulk filter writes one
 * chunk document per parent into {@code target_index} after the source write succeeded, versioned with its
 * {@code _seq_no} ({@code ChunkCommit}). Here it only checks, as the caller, that the chunk index exists with its mapping
 * and that the caller may write it, so that a caller without that right gets a 403 with nothing written.
 *
 * <p>Runs asynchronously and never blocks the write thread on I/O. In {@code _simulate} nothing is checked or written: the
 * chunk documents are shown under {@code strata.chunks} instead.
 */
public final class MultiGranularChunkingProcessor extends AbstractProcessor {
    public static final String TYPE = "multi_granular_chunking";
    /** Default limit of the text length, in characters. */
    public static final int DEFAULT_MAX_CHARS = 10_000_000;
    /** Ingest-metadata key (never stored): what a processor of this pipeline run chunked (see {@link #refuseASecondChunking}). */
    static final String CHUNKED_BY = "_strata_chunked";

    private final ChunkWriter writer;
    private final boolean ignoreMissing;
    private final int maxChars;
    private final ThreadContext threadContext;
    private final StrataStats stats;
    private final ChunkIndexSetup setup;
    /** The node's ingest service, for the pipelines this processor sits in and runs before; null in unit tests. */
    private final IngestService ingestService;
    /** The id of the pipeline holding this processor, once found ({@link ChunkProcessors#pipelineOf}). */
    private volatile String pipelineId;

    MultiGranularChunkingProcessor(String tag, String description, ChunkWriter writer, boolean ignoreMissing, int maxChars,
                                   ChunkWriter.Services services, IngestService ingestService) {
        super(tag, description);
        this.ingestService = ingestService;
        this.writer = writer;
        this.ignoreMissing = ignoreMissing;
        this.maxChars = maxChars;
        this.threadContext = services.threadContext();
        this.stats = services.stats();
        this.setup = services.setup();
    }

    @Override
    public String getType() {
        return TYPE;
    }

    /** Prepares this processor's chunks; also used by the bulk filter's re-chunking and {@code _reconcile}. */
    public ChunkWriter writer() {
        return writer;
    }

    @Override
    public IngestDocument execute(IngestDocument document) {
        throw new UnsupportedOperationException("[" + TYPE + "] runs asynchronously only");
    }

    /**
     * The ingest-metadata key of {@link ChunkProcessors#runsOn}'s probe: an {@link AtomicBoolean} the processor sets, doing
     * nothing else, when its {@code if} condition let it run.
     */
    static final String CONDITION_PROBE = "_strata_condition_probe";

    @Override
    public void execute(IngestDocument document, BiConsumer<IngestDocument, Exception> handler) {
        if (document.getIngestMetadata().get(CONDITION_PROBE) instanceof AtomicBoolean ran) {
            ran.set(true);
            handler.accept(document, null);
            return;
        }
        final String text;
        final String concreteIndex;
        final String target;
        final ChunkWriter.SourceFields fields;
        final ChunkLedger ledger = threadContext.getTransient(ChunkLedger.TRANSIENT);
        if (ledger != null && ledger.isOwnWrites()) {
            handler.accept(document, null); // Strata storing a summary it computed (a final pipeline still runs)
            return;
        }
        try {
            Object value = writer.valueIn(document.getSourceAndMetadata());
            if (value == null || (ignoreMissing && value instanceof String blank && blank.isBlank())) {
                // nothing to chunk: with ignore_missing a blank text is stored without chunks, as an update that blanks it is
                if (ignoreMissing) {
                    handler.accept(document, null);
                    return;
                }
                throw new IllegalArgumentException(String.format(Locale.ROOT,
                    "[%s] field [%s] is missing from the document; set [ignore_missing] to skip such documents", TYPE, writer.field()));
            }
            text = validText(value, document.getSourceAndMetadata());
            Object summary = document.getSourceAndMetadata().get(SourceSummary.FIELD);
            if (summary != null && !SourceSummary.isSummary(summary)) {
                throw new IllegalArgumentException(String.format(Locale.ROOT, "[%s] the document's field [%s] holds data of its own, "
                    + "but [%s] is where the document's chunk summary is kept and chunking would overwrite it: rename the field",
                    TYPE, SourceSummary.FIELD, SourceSummary.FIELD));
            }
            fields = sourceFields(document);
            // the name as the write resolves it (date math: `{{_index}}` of `<logs-{now/d}>` was not an index name)
            String requestIndex = setup.sources().resolvedName(
                (String) document.getSourceAndMetadata().get(IngestDocument.Metadata.INDEX.getFieldName()));
            // an alias or data stream: its write index (the document's chunk index follows the index it lands in)
            concreteIndex = setup.sources().concreteIndexFor(requestIndex);
            target = writer.targetFor(concreteIndex);
            if (target.equals(concreteIndex) || target.equals(requestIndex)) {
                throw new IllegalArgumentException(String.format(Locale.ROOT,
                    "[%s] [target_index] [%s] is the index being written; chunks need an index of their own", TYPE, target));
            }
            refuseASecondChunking(document, requestIndex, concreteIndex, target);
            if (ledger != null) {
                setup.sources().checkSourceMapping(TYPE, concreteIndex, requestIndex, writer.field());
            }
        } catch (Exception e) {
            failed(handler, IngestFailures.of(e), e);
            return;
        }
        // every path below ends in the handler exactly once: that is where a tracked document leaves the report
        StrataStats.Progress progress = stats.track(concreteIndex,
            (String) document.getSourceAndMetadata().get(IngestDocument.Metadata.ID.getFieldName()), text.length());
        // a document whose chunks were prepared stays in the report until the bulk filter has written them
        BiConsumer<IngestDocument, Exception> done = (d, e) -> {
            if (e != null || ledger == null) {
                progress.done();
            }
            handler.accept(d, e);
        };
        writer.chunk(text, ActionListener.wrap(parents -> chunked(document, ledger, concreteIndex, target, text, fields, parents, progress, done),
            e -> {
                if (e instanceof InputLimitException) {
                    failed(done, StrataStats.Failure.BAD_INPUT, e); // the text itself is refused: cutting again fails again, no summary
                } else {
                    failedChunking(document, target, done, IngestFailures.ofModel(e), e);
                }
            }));
    }

    private void chunked(IngestDocument document, ChunkLedger ledger, String concreteIndex, String target, String text,
                         ChunkWriter.SourceFields fields, List<ChunkedParent> parents, StrataStats.Progress progress,
                         BiConsumer<IngestDocument, Exception> handler) {
        final String sourceId;
        final String requestIndex;
        final Map<String, Object> summary;
        final String sourceHash = SourceSummary.sourceHash(text); // one pass over the text, for the summary and every chunk document
        try {
            String id = (String) document.getSourceAndMetadata().get(IngestDocument.Metadata.ID.getFieldName());
            if (id == null) {
                // chunk ids derive from the source id, so the id is fixed here instead of at write time
                id = UUIDs.base64UUID();
                document.setFieldValue(IngestDocument.Metadata.ID.getFieldName(), id);
            }
            ChunkDocuments.checkChunkIdsFit(id, parents.size());
            sourceId = id;
            requestIndex = (String) document.getSourceAndMetadata().get(IngestDocument.Metadata.INDEX.getFieldName());
            progress.id(id);
            summary = writer.summary(target, parents, sourceHash, pipelineId(document));
            if (ledger == null) {
                // _simulate: show what would be written (without vectors), write nothing
                List<Map<String, Object>> preview = new ArrayList<>(parents.size());
                for (ChunkedParent p : parents) {
                    preview.add(writer.preview(concreteIndex, sourceId, p, fields));
                }
                summary.put("chunks", preview);
                document.setFieldValue(SourceSummary.FIELD, summary);
                markChunked(document, target);
                handler.accept(document, null);
                return;
            }
        } catch (Exception e) {
            failed(handler, IngestFailures.of(e), e);
            return;
        }
        // cut and embedded here; written by the bulk filter once the source write succeeded, versioned with its _seq_no
        writer.prepare(target, concreteIndex, sourceId, parents, fields, sourceHash, ledger.writeChecks(), progress,
            ActionListener.wrap(prepared -> {
                try {
                    document.setFieldValue(SourceSummary.FIELD, summary);
                    markChunked(document, target);
                    ledger.record(new ChunkLedger.Entry(requestIndex, sourceId, concreteIndex, target, prepared));
                } catch (Exception e) {
                    failed(handler, IngestFailures.of(e), e);
                    return;
                }
                stats.ingest().chunked(parents);
                handler.accept(document, null);
            }, e -> failedChunking(document, target, handler, IngestFailures.of(e), e)),
            e -> failedChunking(document, target, handler, IngestFailures.ofModel(e), e));
    }

    /**
     * A document has one summary, which its updates, deletes and {@code _reconcile} follow: a second chunking processor on
     * it would leave the first one's chunks to be deleted by the next update, so it is refused — one that already ran in
     * this pipeline run (the {@link #CHUNKED_BY} mark), or one of the index's final pipeline that runs next (OpenSearch
     * gives the final pipeline a new ingest document, so no mark reaches it) and finds its field in the document.
     */
    private void refuseASecondChunking(IngestDocument document, String requestIndex, String concreteIndex, String target) {
        String finalPipeline = setup.sources().finalPipelineOf(concreteIndex, requestIndex);
        Object current = document.getIngestMetadata().get("pipeline");
        if (finalPipeline != null && !finalPipeline.equals(current) && ingestService != null
            && ChunkProcessors.processorsIn(ingestService, finalPipeline).stream()
            .anyMatch(p -> p.writer.valueIn(document.getSourceAndMetadata()) != null)) {
            throw new IllegalArgumentException(String.format(Locale.ROOT, "[%s] index [%s] chunks its documents in its final "
                + "pipeline [%s] too, after pipeline [%s]; one [%s] processor per document (its updates, deletes and _reconcile "
                + "follow one summary): chunk in one of the two pipelines", TYPE, concreteIndex, finalPipeline, current, TYPE));
        }
        if (document.getIngestMetadata().get(CHUNKED_BY) instanceof String earlier) {
            throw new IllegalArgumentException(String.format(Locale.ROOT, "[%s] the document was already chunked by this write "
                + "(%s); one [%s] processor per document (its updates, deletes and _reconcile follow one summary), so field [%s]"
                + " into [%s] cannot be chunked too: join the texts into one field first (e.g. a [script] processor) or chunk "
                + "them in separate source indices", TYPE, earlier, TYPE, writer.field(), target));
        }
    }

    /**
     * The pipeline the summary names, by which updates without a pipeline and {@code _reconcile} find this processor again:
     * the stored pipeline holding this processor; else ({@code _simulate} of an inline pipeline) the one the ingest metadata
     * names, if any. Not the ingest metadata first: a batched bulk names no pipeline there, and a summary without one was
     * re-chunked by the first pipeline that agreed on field, strategy and target, whatever its θ or model.
     */
    private String pipelineId(IngestDocument document) {
        String id = pipelineId;
        if (id == null && ingestService != null) {
            id = ChunkProcessors.pipelineOf(ingestService, this);
            pipelineId = id;
        }
        if (id != null) {
            return id;
        }
        return document.getIngestMetadata().get("pipeline") instanceof String s ? s : null;
    }

    /** Set once the document holds this processor's summary (not before: a failure handled by [on_failure] chunked nothing). */
    private void markChunked(IngestDocument document, String target) {
        document.getIngestMetadata().put(CHUNKED_BY, "field [" + writer.field() + "] into [" + target + "]");
    }

    /**
     * A failure after the text was accepted (cutting, embedding, preparing the chunk writes): the document is given a
     * failed summary ({@link ChunkWriter#failedSummary}) before the failure goes on. Without a handler the write fails and
     * the summary goes with it; with an {@code on_failure} handler or {@code ignore_failure} the document is stored with
     * it, so {@code _reconcile} counts it as missing and cuts its chunks once the cause is gone (it used to be stored
     * without a summary, which {@code _reconcile} does not see). Failures of the input itself (a text above
     * {@code max_chars}, an id too long for its chunk ids) get no summary: cutting again would fail again.
     */
    private void failedChunking(IngestDocument document, String target, BiConsumer<IngestDocument, Exception> handler,
                                StrataStats.Failure reason, Exception e) {
        try {
            String why = e.getMessage() != null ? e.getMessage() : e.getClass().getSimpleName();
            document.setFieldValue(SourceSummary.FIELD, writer.failedSummary(target, pipelineId(document), why));
        } catch (RuntimeException marking) {
            e.addSuppressed(marking); // the document's failure is what the caller must see
        }
        failed(handler, reason, e);
    }

    private void failed(BiConsumer<IngestDocument, Exception> handler, StrataStats.Failure reason, Exception e) {
        stats.ingest().failed(reason);
        handler.accept(null, e);
    }

    private ChunkWriter.SourceFields sourceFields(IngestDocument document) {
        try {
            return writer.sourceFields(document.getSourceAndMetadata());
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("[" + TYPE + "] " + e.getMessage(), e);
        }
    }

    /** The JSON type of a source value, as the caller wrote it (not the Java class it was parsed into). */
    private static String jsonType(Object value) {
        return value instanceof List ? "array" : value instanceof Map ? "object" : value instanceof Number ? "number"
            : value instanceof Boolean ? "boolean" : value.getClass().getSimpleName();
    }

    private String validText(Object value, Map<String, Object> source) {
        if (!(value instanceof String text)) {
            // a list of paragraphs is the common case: say how to make it one text (the chunks' offsets are into one string)
            String remedy = value instanceof List<?> ? "; a document has one chunked text: join the elements in a processor before "
                + "this one, e.g. " + joinScript(source) : "";
            throw new IllegalArgumentException(String.format(Locale.ROOT,
                "[%s] field [%s] must be a string, got [%s]%s", TYPE, writer.field(), jsonType(value), remedy));
        }
        if (text.isBlank()) {
            throw new IllegalArgumentException(String.format(Locale.ROOT,
                "[%s] field [%s] is empty; set [ignore_missing] to store such documents without chunks", TYPE, writer.field()));
        }
        if (text.length() > maxChars) {
            throw new IllegalArgumentException(String.format(Locale.ROOT,
                "[%s] field [%s] has %d characters, more than [max_chars] = %d", TYPE, writer.field(), text.length(), maxChars));
        }
        return text;
    }

    /**
     * A script processor that makes the array at {@code field} one text: the field's own array of strings joined in place,
     * or, when the path crosses an array of objects ({@code sections: [{text}, …]} for {@code sections.text}), their texts
     * joined into a new field to chunk instead. Tried with {@code _ingest/pipeline/_simulate}.
     */
    private String joinScript(Map<String, Object> source) {
        String field = writer.field();
        String[] path = field.split("\\.");
        Object at = source;
        for (int i = 0; i < path.length - 1 && at instanceof Map<?, ?> map; i++) {
            at = map.get(path[i]);
            if (at instanceof List<?>) {
                String objects = String.join(".", Arrays.copyOfRange(path, 0, i + 1));
                String inner = String.join(".", Arrays.copyOfRange(path, i + 1, path.length));
                String joined = field.replace('.', '_');
                return "{\"script\": {\"source\": \"ctx." + joined + " = ctx." + objects + ".stream().map(e -> e." + inner
                    + ").filter(t -> t != null).collect(Collectors.joining('\\n\\n'))\"}}, then chunk field [" + joined + "]";
            }
        }
        return "{\"script\": {\"source\": \"ctx." + field + " = String.join('\\n\\n', ctx." + field + ")\"}}";
    }

    /** Reads and validates the processor configuration once, at pipeline creation. */
    public static final class Factory implements Processor.Factory {
        static final Set<String> KEYS = Set.of("field", "target_index", "format", "strategy", "granularities", "copy_fields",
            "ignore_missing", "max_chars", "model", "model_id", "embed", ChildEmbedding.FIELD, ChunkContext.FIELD, VectorOptions.FIELD, ParentSize.FIELD);

        private final ChunkWriter.Services services;
        private final SentenceSegmenter segmenter;
        private final IngestService ingestService;

        public Factory(ChunkWriter.Services services, SentenceSegmenter segmenter, IngestService ingestService) {
            this.services = services;
            this.segmenter = segmenter;
            this.ingestService = ingestService;
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

        private static String withoutPrefix(String message, String prefix) {
            return message.startsWith(prefix) ? message.substring(prefix.length()) : message;
        }

        private MultiGranularChunkingProcessor parse(String tag, String description, Map<String, Object> config) {
            ConfigMap c = new ConfigMap(null, "", config).expect(KEYS);
            String unknown = c.firstUnknown();
            if (unknown != null) {
                throw new ConfigException(unknown, "unknown option [" + unknown + "]; supported: " + c.known());
            }
            String field = c.requiredString("field", "the source field holding the text");
            if (field.equals(IngestDocument.INGEST_KEY) || field.startsWith(IngestDocument.INGEST_KEY + ".")) {
                // inside a foreach ([_ingest._value]) it would chunk each element as the whole document, each replacing the
                // last one's chunks and summary: a document has one chunked text
                throw c.error("field", "must name a field of the document, not ingest metadata, got [" + field + "]: a document "
                    + "has one chunked text, so the processor cannot run per element in a [foreach]; join the elements into one "
                    + "field first (a [join] processor) and chunk that");
            }
            String targetIndex = c.requiredString("target_index", "the index the chunk documents go to");
            String templateProblem = ChunkWriter.templateProblem(targetIndex);
            if (templateProblem != null) {
                throw c.error("target_index", templateProblem);
            }
            // a template names a valid index for any concrete index name (which is valid itself)
            validateIndexName(c, targetIndex.replace(ChunkWriter.INDEX_PLACEHOLDER, "x"));
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
                // the model layer names its owner; OpenSearch names the processor itself (and ConfigException drops the key)
                throw new ConfigException(modelField, withoutPrefix(e.getMessage(), "[" + TYPE + "] "));
            }
            ChildEmbedding.Options children = childOptions(config.remove(ChildEmbedding.FIELD), embed ? model : null, services.inference());
            ChildEmbedding childEmbedding = children.embedding();
            // copied before parsing consumes them: the config identity hashes the options as written
            Object strategyOptions = ChunkConfigIdentity.canonical(config.get("strategy"));
            Object contextOptions = ChunkConfigIdentity.canonical(config.get(ChunkContext.FIELD));
            MultiGranularChunker chunker = new Chunkers(services.inference(), segmenter).parse(config, embed ? model : null);
            if (children.keepRedundant()) {
                chunker = chunker.keepingRedundantChildren();
            }
            ChunkContext context = ChunkContext.parse(config.remove(ChunkContext.FIELD), chunker.format(), embed);
            VectorOptions vectors = VectorOptions.parse(config.remove(VectorOptions.FIELD));
            if (!embed && !vectors.isDefault()) {
                throw new ConfigException(VectorOptions.FIELD, "[" + VectorOptions.FIELD + "] is set but [embed] is false: there are no "
                    + "vectors to index; remove one of them");
            }
            // the vector options shape the chunk index, not the chunks: they are no part of the config identity
            String configHash = ChunkConfigIdentity.hash(field, chunker, strategyOptions, embed ? model : null, childEmbedding,
                contextOptions);
            ChunkWriter writer = new ChunkWriter(field, targetIndex, chunker, copyFields, embed ? model : null, childEmbedding, context,
                vectors, services, configHash);
            return new MultiGranularChunkingProcessor(tag, description, writer, ignoreMissing, maxChars, services, ingestService);
        }

        /**
         * {@code children}, and whether {@code model} can embed children that way (null model: no vectors); {@code _chunk}
         * reads its {@code children} here too, so both answer with the same errors.
         */
        static ChildEmbedding.Options childOptions(Object children, ModelRef model, InferenceService inference) {
            ChildEmbedding.Options options = ChildEmbedding.parseOptions(children);
            if (options.embedding() == ChildEmbedding.LATE) {
                String problem = model == null ? "[embed] is false: there are no vectors to pool" : inference.lateChunkingProblem(model);
                if (problem != null) {
                    String reason = "[late] cannot be used: " + problem + "; use [separate]";
                    throw new ConfigException(ChildEmbedding.FIELD + ".embedding", "[" + ChildEmbedding.FIELD + ".embedding] " + reason, reason);
                }
            }
            return options;
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
