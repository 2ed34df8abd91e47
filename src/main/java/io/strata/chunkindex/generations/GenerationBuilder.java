package io.strata.chunkindex.generations;

import io.strata.chunkindex.SourceSummary;
import io.strata.chunkindex.reconcile.CallerView;
import io.strata.chunkindex.store.ChunkCommit;
import io.strata.chunkindex.setup.ChunkIndexSetup;
import io.strata.chunkindex.lifecycle.ChunkLedger;
import io.strata.chunkindex.write.ChunkWriter;
import io.strata.chunkindex.write.ChunkWriters;
import io.strata.chunkindex.setup.WriteChecks;
import io.strata.transport.ProgressTask;
import org.opensearch.ExceptionsHelper;
import org.opensearch.OpenSearchSecurityException;
import org.opensearch.action.admin.indices.delete.DeleteIndexRequest;
import org.opensearch.action.admin.indices.stats.ShardStats;
import org.opensearch.action.search.SearchRequest;
import org.opensearch.action.support.IndicesOptions;
import org.opensearch.cluster.metadata.IndexMetadata;
import org.opensearch.cluster.metadata.Metadata;
import org.opensearch.cluster.service.ClusterService;
import org.opensearch.common.unit.TimeValue;
import org.opensearch.common.util.concurrent.ThreadContext;
import org.opensearch.core.action.ActionListener;
import org.opensearch.core.index.Index;
import org.opensearch.core.rest.RestStatus;
import org.opensearch.index.query.QueryBuilders;
import org.opensearch.index.seqno.SeqNoStats;
import org.opensearch.persistent.PersistentTasksService;
import org.opensearch.search.SearchHit;
import org.opensearch.search.builder.SearchSourceBuilder;
import org.opensearch.search.sort.SortBuilders;
import org.opensearch.search.sort.SortOrder;
import org.opensearch.tasks.CancellableTask;
import org.opensearch.threadpool.ThreadPool;
import org.opensearch.transport.client.Client;

import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * Builds generation {@code k} of a source index's chunk index ({@link GenerationNames}): every source document's chunks,
 * cut and embedded under one chunking processor's current config, written into a new concrete index with the versions of
 * {@link ChunkCommit} ({@code 2 × _seq_no}, {@code external_gte}). Every read and write is the caller's (the node client in
 * the caller's thread context): a view of the source that document- or field-level security or masking restricts is a 403
 * before anything is read ({@link CallerView}), and creating and writing the generation needs the caller's rights on it.
 *
 * <p>Writes to the source during the build are caught up by {@code _seq_no}: pass 1 pages every shard in {@code _seq_no}
 * order up to its primary's local checkpoint (read before a refresh) and keeps that as the shard's checkpoint; each later
 * pass takes the operations above the checkpoint, until a pass finds none. A document written again is met again with a higher {@code _seq_no}, and its chunks
 * are written at a higher version, which no write of an earlier operation can beat; a document deleted after a pass wrote it
 * is found by the orphan pass (chunk 0 whose source document is gone), whose deletes are versioned at or above that chunk's
 * version, so a document re-created meanwhile (a higher {@code _seq_no}, met by the last pass) wins over them. When the last
 * pass finds nothing, every chunk set in the generation is that of its document's last stored operation: the same as
 * {@code _chunk} of each stored text under the config. Writes after the last pass are not in it.
 *
 * <p>A cancel or a failure deletes the generation (as the caller): it never serves half-built; a failed resume leaves it
 * {@code interrupted}. A build whose node dies leaves it, recorded {@code building} ({@link GenerationRecord}); a re-issue of
 * {@code _rebuild} under the same config resumes it: a first pass over every document that skips those whose chunks are
 * complete and current ({@link ResumeCheck}), then the catch-up and orphan passes as a build's. The build's persistent task
 * ({@link RebuildResumes}) re-issues it on another node by itself, with the caller's stored roles only.
 */
public final class GenerationBuilder {
    /** The longest single wait of the throttle: a cancel is noticed within it. */
    private static final long THROTTLE_SLICE_NANOS = 1_000_000_000L;
    static final int PAGE = 100;
    /** The key of a built generation's mapping {@code _meta} that {@code GET generations} shows. */
    public static final String GENERATION_META = "strata_generation";
    /** The key, in {@link #GENERATION_META}, of the per-shard source checkpoints the generation was brought up to. */
    public static final String CHECKPOINTS = "checkpoints";
    /**
     * Catch-up passes, and the least time they span, before a build gives up on a source that never stops being written;
     * passes at most one a second: a burst of writes (clients resending after a node left) can end before the count does.
     */
    static final int MAX_PASSES = 20;
    private static final long MIN_CATCH_UP_NANOS = 120_000_000_000L;
    private static final long PASS_INTERVAL_NANOS = 1_000_000_000L;

    private final Client client;
    private final ClusterService clusterService;
    private final ChunkIndexSetup setup;
    private final ChunkCommit commit;
    private final Supplier<ChunkWriters> writers;
    private final CallerView view;
    private final OrphanPass orphanPass;
    private final VectorReuse vectorReuse;
    private final GenerationRecord record;
    private final ResumeCheck resumeCheck;
    private final RebuildResumes resumes;
    /** The builds running on this node, by source index UUID: one at a time per source. */
    private final Map<String, Running> running = new ConcurrentHashMap<>();

    /** A build under way: its task ({@code <node>:<id>}, null without one) and its counters. */
    public record Running(String task, RebuildReport report) {}

    public GenerationBuilder(Client client, ClusterService clusterService, ChunkIndexSetup setup, ChunkCommit commit,
                             Supplier<ChunkWriters> writers, CallerView view) {
        this.client = client;
        this.clusterService = clusterService;
        this.setup = setup;
        this.commit = commit;
        this.writers = writers;
        this.view = view;
        this.orphanPass = new OrphanPass(client, clusterService, setup, commit);
        this.vectorReuse = new VectorReuse(client);
        this.record = new GenerationRecord(client);
        this.resumeCheck = new ResumeCheck(client);
        this.resumes = new RebuildResumes(new PersistentTasksService(clusterService, client.threadPool(), client), clusterService);
    }

    public RebuildResumes resumes() {
        return resumes;
    }

    public ChunkWriters writers() {
        return writers.get();
    }

    /** The build running on this node for source index {@code sourceUuid}, or null. */
    public Running running(String sourceUuid) {
        return running.get(sourceUuid);
    }

    /**
     * Builds the next generation of {@code writer}'s chunk index for {@code source} ({@code pipeline} is the writer's
     * pipeline), or resumes the generation an interrupted build of it left ({@link GenerationRecord#unfinished}) when it was
     * built under the same config: a 400 when under another, a 409 while a rebuild task of the source lives on any node.
     */
    public void build(Index source, ChunkWriter writer, String pipeline, float rps, CancellableTask task,
                      ActionListener<RebuildReport> listener) {
        String chunkIndex = writer.targetFor(source.getName());
        resumeCheck.liveTask(source.getName(), taskId(task), ActionListener.wrap(live -> {
            if (live != null) {
                listener.onFailure(ResumeCheck.running(source.getName(), live));
                return;
            }
            Metadata metadata = clusterService.state().metadata();
            GenerationRecord.Unfinished unfinished = GenerationRecord.unfinished(metadata, chunkIndex, source.getUUID());
            String problem = unfinished == null ? null : ResumeCheck.configProblem(unfinished, source.getName(), pipeline,
                writer.configHash());
            if (problem != null) {
                listener.onFailure(new IllegalArgumentException(problem));
                return;
            }
            int generation = unfinished != null ? unfinished.generation() : GenerationNames.next(chunkIndex, metadata.getIndicesLookup().keySet());
            String target = GenerationNames.name(chunkIndex, generation);
            RebuildReport report = new RebuildReport(source.getName(), chunkIndex, target, generation, writer.configHash(), pipeline, rps,
                task);
            report.resumed = unfinished != null;
            report.caller = CallerIdentity.of(client.threadPool().getThreadContext());
            run(source, writer, target, report, null, true, rps, task, listener);
        }, listener::onFailure));
    }

    private String taskId(CancellableTask task) {
        return task == null ? null : clusterService.localNode().getId() + ":" + task.getId();
    }

    /**
     * Brings existing generation {@code target} (number {@code generation}) up to the source's writes: the passes of a build
     * from per-shard checkpoints {@code from} (null: from the start, every document again, reusing the vectors already in
     * it), then the orphan pass. Run by {@code _swap} and {@code _rollback} under a write block on the source, so the passes
     * end; a failure leaves {@code target} as it is (it is a complete generation, not a build's).
     */
    public void catchUp(Index source, ChunkWriter writer, String pipeline, String target, int generation, long[] from,
                        ActionListener<RebuildReport> listener) {
        String chunkIndex = writer.targetFor(source.getName());
        RebuildReport report = new RebuildReport(source.getName(), chunkIndex, target, generation, writer.configHash(), pipeline,
            Float.POSITIVE_INFINITY, null);
        run(source, writer, target, report, from, false, Float.POSITIVE_INFINITY, null, listener);
    }

    private void run(Index source, ChunkWriter writer, String target, RebuildReport report, long[] from, boolean discardOnFailure,
                     float rps, CancellableTask task, ActionListener<RebuildReport> listener) {
        Running other = running.putIfAbsent(source.getUUID(), new Running(taskId(task), report));
        if (other != null) {
            listener.onFailure(ResumeCheck.running(source.getName(), other.task() == null ? "a _swap or _rollback" : other.task()));
            return;
        }
        if (task instanceof ProgressTask progress) {
            progress.progress(report::progress);
        }
        // released before the caller hears the result: who lists generations right after the answer sees it ended
        ActionListener<RebuildReport> done = resumes.endingFirst(report, source.getUUID(),
            ActionListener.runBefore(listener, () -> running.remove(source.getUUID())));
        ActionListener<Void> end = ActionListener.wrap(v -> done.onResponse(report),
            e -> {
                if (discardOnFailure && (!report.resumed || report.cancelled())) {
                    discard(target, e, done);
                } else {
                    done.onFailure(e);
                }
            });
        ThreadContext threadContext = client.threadPool().getThreadContext();
        // the chunk writes are Strata's own: the bulk filter leaves them alone, as it does _reconcile's
        try (ThreadContext.StoredContext ignored = threadContext.newStoredContext(true, List.of(ChunkLedger.TRANSIENT))) {
            threadContext.putTransient(ChunkLedger.TRANSIENT, ChunkLedger.ownWrites());
            start(source, writer, target, report, new Run(source, writer, target, report, rps, from), end);
        }
    }

    private void start(Index source, ChunkWriter writer, String target, RebuildReport report, Run run, ActionListener<Void> end) {
        String name = source.getName();
        // refreshed first: the view check compares the caller's search counts with the node's own, which must see the same
        // operations (every copy refreshed; under a swap's write block nothing moves after it)
        client.admin().indices().prepareRefresh(name).execute(ActionListener.wrap(
            refreshed -> view.requireWhole(Map.of(name, List.of(writer.field(), SourceSummary.FIELD)), ActionListener.wrap(
                whole -> client.search(new SearchRequest(name).source(new SearchSourceBuilder().size(0).trackTotalHits(true)),
                    ActionListener.wrap(count -> {
                        report.total = count.getHits().getTotalHits().value();
                        prepared(writer, report, run, ActionListener.wrap(v -> run.pass(end), end::onFailure));
                    }, end::onFailure)),
                e -> end.onFailure(restricted(name, e)))),
            end::onFailure));
    }

    /**
     * The generation ready for the passes: a build's created and recorded {@value GenerationRecord#BUILDING} (so that, should
     * its node die, a re-issue finds and resumes it), a resumed one refreshed (what the resume check searches is then
     * everything the interrupted build wrote), then the build's persistent task registered; a catch-up's as it is.
     */
    private void prepared(ChunkWriter writer, RebuildReport report, Run run, ActionListener<Void> next) {
        ActionListener<Void> listener = report.task() == null ? next
            : ActionListener.wrap(v -> resumes.started(report, run.source, next), next::onFailure); // resumable from here on
        if (report.resumed) {
            client.admin().indices().prepareRefresh(report.generationIndex).execute(ActionListener.map(listener, r -> null));
        } else if (report.task() != null) {
            writer.ready(report.generationIndex, report.sourceIndex, run.checks, ActionListener.wrap(v -> {
                IndexMetadata generation = clusterService.state().metadata().index(report.generationIndex);
                if (generation == null) {
                    listener.onFailure(new IllegalStateException("[_rebuild] generation [" + report.generationIndex + "] was not created"));
                    return;
                }
                record.put(generation, GenerationRecord.about(report.generation, run.source, report.config, report.pipeline,
                    GenerationRecord.BUILDING), listener);
            }, listener::onFailure));
        } else {
            listener.onResponse(null);
        }
    }

    /** CallerView's refusal, in this action's words. */
    private static Exception restricted(String source, Exception e) {
        if (ExceptionsHelper.unwrapCause(e) instanceof OpenSearchSecurityException s && s.status() == RestStatus.FORBIDDEN
            && !String.valueOf(s.getMessage()).contains(CallerView.NO_PERMISSION)) {
            return new OpenSearchSecurityException(String.format(Locale.ROOT, "[_rebuild] builds the chunks of every document of "
                + "[%s] from what you read, but document-level security, field-level security or field masking restricts your view "
                + "of it: the generation would lack or alter what is hidden. Run it as a user without such restrictions on [%s]; "
                + "nothing was read or written", source, source), RestStatus.FORBIDDEN);
        }
        return e;
    }

    /** Deletes the unfinished generation (as the caller), then fails with {@code cause}. */
    private void discard(String target, Exception cause, ActionListener<RebuildReport> done) {
        client.admin().indices().delete(new DeleteIndexRequest(target).indicesOptions(IndicesOptions.lenientExpandOpen()),
            ActionListener.wrap(r -> done.onFailure(cause), e -> {
                cause.addSuppressed(e);
                done.onFailure(cause);
            }));
    }

    /** One build's passes. */
    private final class Run {
        private final Index source;
        private final ChunkWriter writer;
        private final String target;
        private final RebuildReport report;
        private final float rps;
        private final long[] checkpoints;
        private final WriteChecks checks = new WriteChecks(setup);
        private final PageWrites writes;
        private int found;
        private long passStarted;
        private long catchUpStarted;
        /** Whether the orphan pass ran since the last pass that found operations. */
        private boolean orphansChecked;

        Run(Index source, ChunkWriter writer, String target, RebuildReport report, float rps, long[] from) {
            this.source = source;
            this.writer = writer;
            this.target = target;
            this.report = report;
            this.rps = rps;
            this.writes = new PageWrites(setup, commit, writers, vectorReuse, source, writer, target, report, checks);
            IndexMetadata metadata = clusterService.state().metadata().index(source.getName());
            this.checkpoints = new long[metadata == null ? 1 : metadata.getNumberOfShards()];
            java.util.Arrays.fill(checkpoints, -1);
            if (from != null && from.length == checkpoints.length) {
                System.arraycopy(from, 0, checkpoints, 0, from.length);
            }
        }

        /**
         * One pass over every shard: the operations above its checkpoint up to its primary's local checkpoint, read before
         * a refresh (every operation at or below it is indexed on the primary, so the refresh makes all of them searchable,
         * while one above it may still be in flight behind a later one already visible); then another pass while one found
         * operations, then the orphans.
         */
        void pass(ActionListener<Void> end) {
            report.passes++;
            passStarted = System.nanoTime();
            catchUpStarted = report.passes == 2 ? passStarted : catchUpStarted;
            report.phase = report.passes == 1 ? "source documents" : "catch-up";
            found = 0;
            client.admin().indices().prepareStats(source.getName()).clear().setDocs(true).execute(ActionListener.wrap(stats -> {
                long[] ceilings = new long[checkpoints.length];
                java.util.Arrays.fill(ceilings, Long.MIN_VALUE);
                for (ShardStats shard : stats.getShards()) {
                    SeqNoStats seqNos = shard.getSeqNoStats();
                    if (shard.getShardRouting().primary() && seqNos != null && shard.getShardRouting().id() < ceilings.length) {
                        ceilings[shard.getShardRouting().id()] = seqNos.getLocalCheckpoint();
                    }
                }
                for (int i = 0; i < ceilings.length; i++) {
                    if (ceilings[i] == Long.MIN_VALUE) {
                        end.onFailure(new org.opensearch.OpenSearchStatusException(String.format(Locale.ROOT, "[_rebuild] of [%s]: "
                            + "shard [%d] has no started primary; rebuild when the index is green or yellow", source.getName(), i),
                            RestStatus.SERVICE_UNAVAILABLE));
                        return;
                    }
                }
                client.admin().indices().prepareRefresh(source.getName()).execute(ActionListener.wrap(
                    r -> shard(0, ceilings, ActionListener.wrap(v -> passed(ceilings, end), end::onFailure)), end::onFailure));
            }, end::onFailure));
        }

        private void passed(long[] ceilings, ActionListener<Void> end) {
            for (int i = 0; i < checkpoints.length; i++) {
                checkpoints[i] = Math.max(checkpoints[i], ceilings[i]);
            }
            if (found == 0 && orphansChecked) {
                refreshed(end);
            } else if (found == 0) {
                orphansChecked = true;
                orphans(ActionListener.wrap(o -> pass(end), end::onFailure));
            } else if (report.passes >= MAX_PASSES && System.nanoTime() - catchUpStarted >= MIN_CATCH_UP_NANOS) {
                end.onFailure(new org.opensearch.OpenSearchStatusException(String.format(Locale.ROOT, "[_rebuild] of [%s] still "
                    + "found new writes after %d passes in %d s; rebuild while the index is written less", source.getName(),
                    report.passes, (System.nanoTime() - catchUpStarted) / 1_000_000_000L), RestStatus.CONFLICT));
            } else {
                orphansChecked = false;
                long wait = PASS_INTERVAL_NANOS - (System.nanoTime() - passStarted);
                client.threadPool().schedule(client.threadPool().getThreadContext().preserveContext(() -> pass(end)),
                    TimeValue.timeValueNanos(Math.max(0, wait)), ThreadPool.Names.GENERIC);
            }
        }

        private void shard(int shard, long[] ceilings, ActionListener<Void> listener) {
            if (shard == checkpoints.length) {
                listener.onResponse(null);
                return;
            }
            if (report.cancelled()) {
                listener.onFailure(report.cancellation());
                return;
            }
            if (checkpoints[shard] >= ceilings[shard]) {
                shard(shard + 1, ceilings, listener); // nothing new on it
                return;
            }
            long pageStart = System.nanoTime();
            SearchSourceBuilder page = new SearchSourceBuilder().size(PAGE)
                .query(QueryBuilders.rangeQuery("_seq_no").gt(checkpoints[shard]).lte(ceilings[shard]))
                .sort(SortBuilders.fieldSort("_seq_no").order(SortOrder.ASC).unmappedType("long")).seqNoAndPrimaryTerm(true);
            if (checkpoints[shard] >= 0) {
                page.searchAfter(new Object[] { checkpoints[shard] });
            }
            SearchRequest search = new SearchRequest(source.getName()).preference("_shards:" + shard + "|_primary").source(page);
            client.search(search, ActionListener.wrap(r -> {
                SearchHit[] hits = r.getHits().getHits();
                if (hits.length == 0) {
                    shard(shard + 1, ceilings, listener);
                    return;
                }
                documents(shard, hits, ActionListener.wrap(v -> {
                    checkpoints[shard] = hits[hits.length - 1].getSeqNo();
                    found += hits.length;
                    throttled(pageStart, hits.length, () -> shard(shard, ceilings, listener));
                }, listener::onFailure));
            }, listener::onFailure));
        }

        /** Runs {@code next} once {@code docs} documents took at least {@code docs / rps} seconds since {@code start}. */
        private void throttled(long start, int docs, Runnable next) {
            if (!Float.isFinite(rps)) {
                next.run();
                return;
            }
            long wait = (long) (docs / (double) rps * 1e9) - (System.nanoTime() - start);
            if (wait <= 0 || report.cancelled()) {
                next.run(); // next stops a cancelled build before its next page
                return;
            }
            // waited in slices, each checking for a cancel: a low rate (any positive one is legal) can mean hours of waiting
            ThreadContext context = client.threadPool().getThreadContext();
            client.threadPool().schedule(context.preserveContext(() -> throttled(start, docs, next)),
                TimeValue.timeValueNanos(Math.min(wait, THROTTLE_SLICE_NANOS)), ThreadPool.Names.GENERIC);
        }

        /** The page's documents written ({@link PageWrites}), but for those a resume finds complete ({@link ResumeCheck}). */
        private void documents(int shard, SearchHit[] hits, ActionListener<Void> listener) {
            if (!report.resumed || report.passes > 1) {
                writes.write(shard, List.of(hits), listener);
                return;
            }
            // a resume's first pass: what the interrupted build finished is skipped (later passes meet newer writes only)
            List<ResumeCheck.Met> met = java.util.Arrays.stream(hits)
                .map(h -> new ResumeCheck.Met(setup.keyOf(source.getName(), h.getId(), shard), h.getSeqNo())).toList();
            resumeCheck.completed(target, met, ActionListener.wrap(complete -> {
                List<SearchHit> left = new java.util.ArrayList<>();
                for (int i = 0; i < hits.length; i++) {
                    if (complete.contains(met.get(i).key())) {
                        report.skipped.incrementAndGet();
                        report.done.incrementAndGet();
                    } else {
                        left.add(hits[i]);
                    }
                }
                writes.write(shard, left, listener);
            }, listener::onFailure));
        }

        private void orphans(ActionListener<Void> end) {
            report.phase = "deleted documents";
            orphanPass.run(source, target, report, end);
        }

        /** The generation refreshed: what it holds is searchable when the build answers. */
        private void refreshed(ActionListener<Void> end) {
            report.phase = "refresh";
            IndexMetadata generation = clusterService.state().metadata().index(target);
            if (generation == null) {
                end.onResponse(null); // no document had chunks: nothing was created
                return;
            }
            // what GET generations shows of it, and what a re-issued _rebuild resumes while it is building (a mapping's
            // _meta is anyone with the right to map it to write: so is the generation itself)
            Map<String, Object> about = GenerationRecord.about(report.generation, source, report.config, report.pipeline,
                GenerationRecord.COMPLETE);
            // where the next catch-up (_swap, _rollback) starts: every operation up to these was met
            about.put(CHECKPOINTS, java.util.Arrays.stream(checkpoints).boxed().toList());
            record.put(generation, about, ActionListener.wrap(
                put -> client.admin().indices().prepareRefresh(target).execute(ActionListener.wrap(r -> end.onResponse(null),
                    end::onFailure)), end::onFailure));
        }
    }
}
