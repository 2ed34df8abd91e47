package io.strata.stats;

import io.strata.model.ModelRef;
import io.strata.chunking.ChunkedParent;
import org.opensearch.core.action.ActionListener;
import org.opensearch.threadpool.ThreadPoolStats;

import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * This node's operational counters, since it started. One instance per node, created by the plugin and passed to
 * whatever counts; counting is a few {@link LongAdder} increments, cheap enough for every document and query.
 * {@link #snapshot} turns them into the {@link NodeStats} that {@code GET _plugins/_strata/stats} reports.
 */
public final class StrataStats {
    static final int MAX_MODELS = 256;
    /** Documents with at least this many characters of text are shown while in flight ({@code ingest.in_progress}). */
    public static final int PROGRESS_MIN_CHARS = 100_000;
    /** At most this many documents are tracked at once (beyond, further ones run untracked), so the report stays small. */
    static final int MAX_IN_PROGRESS = 32;

    private final Ingest ingest = new Ingest();
    private final Query query = new Query();
    private final Map<ModelRef, Model> models = new ConcurrentHashMap<>();
    /** Where calls of models beyond {@link #MAX_MODELS} go: never reported. */
    private final Model uncounted = new Model();
    /** Inference tasks refused by the admission limit (the pool counts its own rejections). */
    private final LongAdder inferenceRejected = new LongAdder();
    /** Query embeddings that waited for the query lane longer than its time-out. */
    private final LongAdder queryLaneTimedOut = new LongAdder();
    /** Large documents in flight on this node, by tracking number (start order). */
    private final Map<Long, Progress> inProgress = new ConcurrentHashMap<>();
    private final AtomicLong tracked = new AtomicLong();

    public Ingest ingest() {
        return ingest;
    }

    public Query query() {
        return query;
    }

    /**
     * The counters of one model, embedded (by name) or ml-commons (by model id). Embedded models are folders on the node,
     * but any caller can name any model id: beyond {@link #MAX_MODELS} models, further model ids are not counted.
     */
    public Model model(ModelRef ref) {
        Model m = models.get(ref);
        if (m == null) {
            m = ref.isEmbedded() || models.size() < MAX_MODELS ? models.computeIfAbsent(ref, r -> new Model()) : uncounted;
        }
        return m;
    }

    /** An inference task refused by the admission limit ({@code plugins.strata.inference.max_pending}) with 429. */
    public void inferenceRejected() {
        inferenceRejected.increment();
    }

    /** A query embedding that no query-lane thread took within {@code plugins.strata.inference.query_queue_timeout} (429). */
    public void queryLaneTimedOut() {
        queryLaneTimedOut.increment();
    }

    /**
     * The counters as they are now, with what only the caller knows: the stats of the {@code strata_inference} thread pool
     * and of the query lane's (null when there is none) and, for each embedded model loaded on this node, its truncation
     * count.
     */
    public NodeStats snapshot(ThreadPoolStats.Stats pool, ThreadPoolStats.Stats queryPool, Map<String, Long> loadedTruncations) {
        Map<String, NodeStats.Model> byName = new TreeMap<>();
        models.forEach((ref, m) -> byName.put(ref.isEmbedded() ? ref.model() : ref.modelId(),
            m.snapshot(ref.isEmbedded(), ref.isEmbedded() ? loadedTruncations.get(ref.model()) : null)));
        loadedTruncations.forEach((name, truncated) -> byName.putIfAbsent(name, new NodeStats.Model(true, 0, 0, 0, 0, truncated, true)));
        // rejected: by the pool's full queue or, before it, by the admission limit
        NodeStats.Queue queue = pool == null ? new NodeStats.Queue(0, 0, inferenceRejected.sum())
            : new NodeStats.Queue(pool.getQueue(), pool.getActive(), pool.getRejected() + inferenceRejected.sum());
        NodeStats.QueryLane lane = queryPool == null ? new NodeStats.QueryLane(0, 0, 0, queryLaneTimedOut.sum())
            : new NodeStats.QueryLane(queryPool.getQueue(), queryPool.getActive(), queryPool.getRejected(), queryLaneTimedOut.sum());
        long now = System.nanoTime();
        List<NodeStats.InProgress> inFlight = new TreeMap<>(inProgress).values().stream().map(p -> p.snapshot(now)).toList();
        return new NodeStats(ingest.snapshot(), queue, lane, byName, new NodeStats.Query(query.multiGranular.sum(), query.embedded.sum()),
            inFlight);
    }

    /**
     * Starts tracking one document of {@code index} ({@code id} may be null until it is assigned) while its chunks are cut,
     * embedded and written. Only documents of at least {@link #PROGRESS_MIN_CHARS} characters, and at most
     * {@link #MAX_IN_PROGRESS} at once, are tracked; the others get {@link Progress#UNTRACKED}, whose updates do nothing.
     * The caller must call {@link Progress#done()} when the document is finished, whatever the outcome.
     */
    public Progress track(String index, String id, int chars) {
        if (chars < PROGRESS_MIN_CHARS || inProgress.size() >= MAX_IN_PROGRESS) {
            return Progress.UNTRACKED;
        }
        Progress p = new Progress(this, tracked.incrementAndGet(), index, id, chars);
        inProgress.put(p.key, p);
        return p;
    }

    /** What a tracked document is doing. */
    public enum Stage {
        /** cutting parents and children (model-guided strategies: on the inference pool) */
        CHUNKING,
        /** reading reusable vectors of the stored chunks, then embedding the rest slice by slice */
        EMBEDDING,
        /** writing the chunk documents bulk slice by bulk slice, then deleting leftover chunks of earlier versions */
        WRITING;

        public String key() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    /** One large document in flight; updated by the thread working on it, read by stats requests. */
    public static final class Progress {
        /** The handle of documents that are not tracked: every update is ignored. */
        public static final Progress UNTRACKED = new Progress(null, 0, "", null, 0);

        private final StrataStats owner;
        private final long key;
        private final String index;
        private final int chars;
        private final long startNanos = System.nanoTime();
        private volatile String id;
        private volatile Stage stage = Stage.CHUNKING;
        private volatile int texts;
        private volatile int textsReused;
        private volatile int chunkDocuments;
        private final AtomicInteger textsEmbedded = new AtomicInteger();
        private final AtomicInteger chunkDocumentsWritten = new AtomicInteger();

        private Progress(StrataStats owner, long key, String index, String id, int chars) {
            this.owner = owner;
            this.key = key;
            this.index = index;
            this.id = id;
            this.chars = chars;
        }

        public boolean isTracked() {
            return owner != null;
        }

        /** The document's id, once known (auto-generated ids are assigned after chunking). */
        public void id(String id) {
            if (owner != null) {
                this.id = id;
            }
        }

        public void stage(Stage stage) {
            if (owner != null) {
                this.stage = stage;
            }
        }

        /** The document's chunk documents (one per parent) and texts to vectorise (parents and children), of which reused. */
        public void planned(int chunkDocuments, int texts, int textsReused) {
            if (owner != null) {
                this.chunkDocuments = chunkDocuments;
                this.texts = texts;
                this.textsReused = textsReused;
            }
        }

        public void embedded(int n) {
            if (owner != null) {
                textsEmbedded.addAndGet(n);
            }
        }

        public void written(int n) {
            if (owner != null) {
                chunkDocumentsWritten.addAndGet(n);
            }
        }

        /** The document is finished (written, failed or dropped): it leaves the report. */
        public void done() {
            if (owner != null) {
                owner.inProgress.remove(key, this);
            }
        }

        NodeStats.InProgress snapshot(long now) {
            return new NodeStats.InProgress(index, id == null ? "" : id, chars, stage.key(), texts, textsReused, textsEmbedded.get(),
                chunkDocuments, chunkDocumentsWritten.get(), TimeUnit.NANOSECONDS.toMillis(now - startNanos));
        }
    }

    /** Why a document failed in the {@code multi_granular_chunking} processor. */
    public enum Failure {
        /** the document or its pipeline is wrong (4xx): missing or empty field, text too long, wrong target index … */
        BAD_INPUT,
        /** back-pressure (429): a full inference queue or a rejected chunk write; retry later */
        REJECTED,
        /** the model failed: the embedded engine, or ml-commons (unknown, undeployed, timed out) */
        MODEL,
        /** the chunk documents could not be written */
        WRITE,
        OTHER;

        public String key() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    /** Counters of the {@code multi_granular_chunking} processor and the chunk store. */
    public static final class Ingest {
        private final LongAdder documents = new LongAdder();
        private final LongAdder parents = new LongAdder();
        private final LongAdder children = new LongAdder();
        private final LongAdder chunksWritten = new LongAdder();
        private final LongAdder chunksDeleted = new LongAdder();
        private final LongAdder vectorsEmbedded = new LongAdder();
        private final LongAdder vectorsReused = new LongAdder();
        private final LongAdder limitSplits = new LongAdder();
        private final Map<Failure, LongAdder> failures = new EnumMap<>(Failure.class);

        Ingest() {
            for (Failure f : Failure.values()) {
                failures.put(f, new LongAdder());
            }
        }

        /** A source document whose chunks were written. */
        public void chunked(List<ChunkedParent> chunks) {
            documents.increment();
            parents.add(chunks.size());
            children.add(chunks.stream().mapToInt(p -> p.children().size()).sum());
        }

        public void chunksWritten(long n) {
            chunksWritten.add(n);
        }

        public void chunksDeleted(long n) {
            chunksDeleted.add(n);
        }

        /** Chunk vectors of one document: computed by the model, or taken from its stored chunks (unchanged parents). */
        public void vectors(int embedded, int reused) {
            vectorsEmbedded.add(embedded);
            vectorsReused.add(reused);
        }

        /** Cuts made so that no chunk exceeds the embedding model's token limit (chunks that would have been truncated). */
        public void limitSplits(int n) {
            limitSplits.add(n);
        }

        public void failed(Failure reason) {
            failures.get(reason).increment();
        }

        NodeStats.Ingest snapshot() {
            Map<String, Long> failed = new LinkedHashMap<>();
            failures.forEach((reason, n) -> failed.put(reason.key(), n.sum()));
            return new NodeStats.Ingest(documents.sum(), parents.sum(), children.sum(), chunksWritten.sum(), chunksDeleted.sum(),
                vectorsEmbedded.sum(), vectorsReused.sum(), failed, limitSplits.sum());
        }
    }

    /** Counters of the {@code multi_granular} query on this (coordinating) node. */
    public static final class Query {
        private final LongAdder multiGranular = new LongAdder();
        private final LongAdder embedded = new LongAdder();

        /** A {@code multi_granular} query received in a request. */
        public void received() {
            multiGranular.increment();
        }

        /** A {@code query_text} embedded during the coordinator's rewrite. */
        public void embedded() {
            embedded.increment();
        }
    }

    /** Calls of one model on this node: embeddings, and the causal-LM and boundary-model calls of chunking strategies. */
    public static final class Model {
        private final LongAdder calls = new LongAdder();
        private final LongAdder texts = new LongAdder();
        private final LongAdder errors = new LongAdder();
        private final LongAdder nanos = new LongAdder();

        /**
         * Wraps the listener of one call of {@code texts} texts: the call is counted, and timed from now, when it
         * answers.
         */
        public <T> ActionListener<T> counting(int texts, ActionListener<T> listener) {
            long start = System.nanoTime();
            return new ActionListener<>() {
                @Override
                public void onResponse(T response) {
                    done(texts, start, false);
                    listener.onResponse(response);
                }

                @Override
                public void onFailure(Exception e) {
                    done(texts, start, true);
                    listener.onFailure(e);
                }
            };
        }

        /** Runs one blocking call of {@code texts} texts (a causal-LM or boundary-model call of a strategy), counted and timed. */
        public <T> T count(int texts, java.util.concurrent.Callable<T> call) throws Exception {
            long start = System.nanoTime();
            try {
                T result = call.call();
                done(texts, start, false);
                return result;
            } catch (Exception | Error e) {
                done(texts, start, true);
                throw e;
            }
        }

        private void done(int n, long start, boolean failed) {
            calls.increment();
            texts.add(n);
            nanos.add(System.nanoTime() - start);
            if (failed) {
                errors.increment();
            }
        }

        NodeStats.Model snapshot(boolean embedded, Long truncated) {
            return new NodeStats.Model(embedded, calls.sum(), texts.sum(), errors.sum(), TimeUnit.NANOSECONDS.toMillis(nanos.sum()),
                truncated == null ? 0 : truncated, truncated != null);
        }
    }
}
