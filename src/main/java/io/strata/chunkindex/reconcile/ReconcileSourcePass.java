package io.strata.chunkindex.reconcile;

import io.strata.chunkindex.ChunkDocuments;
import io.strata.chunkindex.ChunkKey;
import io.strata.chunkindex.SourceSummary;
import io.strata.chunkindex.lifecycle.Rechunker;
import io.strata.chunkindex.registry.ChunkIndexRegistry;
import io.strata.chunkindex.setup.ChunkIndexSetup;
import io.strata.chunkindex.setup.WriteChecks;
import io.strata.chunkindex.store.ChunkCommit;
import io.strata.chunkindex.store.ChunkStore;
import io.strata.chunkindex.write.ChunkWriter;
import io.strata.chunkindex.write.ChunkWriters;

import org.opensearch.ExceptionsHelper;
import org.opensearch.action.get.MultiGetItemResponse;
import org.opensearch.action.get.MultiGetRequest;
import org.opensearch.common.document.DocumentField;
import org.opensearch.core.action.ActionListener;
import org.opensearch.core.index.Index;
import org.opensearch.index.query.QueryBuilders;
import org.opensearch.search.SearchHit;
import org.opensearch.search.fetch.subphase.FetchSourceContext;
import org.opensearch.transport.client.Client;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Supplier;

/**
 * The source side of {@code _reconcile}: every source document with a summary is <b>missing</b> chunks when one of
 * {@code 0..parents-1} is absent (realtime), its summary names another source index's chunk index (a clone's) or records a
 * chunking that failed (an {@code on_failure} handler stored the document without chunks), else
 * <b>stale</b> when its text (read at the processor's field path, objects and dotted keys alike) no longer hashes to the
 * summary's {@code source_hash}, or a chunk carries another {@code source_hash}. A page's drifted documents are collected
 * first and then fixed one by one ({@link Rechunker}: the document read again, realtime with its routing, its chunks
 * rewritten with its {@code _seq_no}, its summary stored if it changed, guarded by that sequence number). Chunks written
 * before {@code source_hash} existed are compared by content: each parent's text must equal the source text at its
 * offsets. A summary naming a chunk index that a restore renamed reads as naming it under its new name.
 *
 * <p>A document whose summary records another config than its writer's ({@link ChunkWriter#configDrifted}) is counted as
 * {@code config_drift}, and not rewritten for that: its chunks match its text, and rewriting documents one by one would
 * leave the chunk index holding two configs until the last one is done.
 */
final class ReconcileSourcePass {
    private static final String SUMMARY = SourceSummary.FIELD;

    private final Client client;
    private final ShardPages pages;
    private final ChunkStore store;
    private final Rechunker rechunker;
    private final Supplier<ChunkWriters> writers;
    private final ChunkIndexRegistry registry;
    private final ChunkIndexSetup setup;

    ReconcileSourcePass(Client client, ShardPages pages, ChunkStore store, Rechunker rechunker, Supplier<ChunkWriters> writers,
                        ChunkIndexSetup setup) {
        this.client = client;
        this.pages = pages;
        this.store = store;
        this.rechunker = rechunker;
        this.writers = writers;
        this.registry = setup.registry();
        this.setup = setup;
    }

    /** What the pass knows about one source document of a page. */
    private static final class SourceDoc {
        final String id;
        final String routing;
        /** Its chunk key ({@link ChunkKey}): one _id may be a document on several shards. */
        ChunkKey key;
        final String target;
        final int parents;
        final String summaryHash;
        final ChunkWriter writer;
        /** Hash of the text as stored now; null when the processor is unknown or the text is gone. */
        final String currentHash;
        final String text;
        /**
         * Its summary names a chunk index registered to another source index: a document of a clone, shrink or split, which
         * copied the original's documents with their summaries. That index's chunks are the original's; this one has none.
         */
        final boolean elsewhere;
        /** Its summary records a chunking that failed after the text was accepted ({@link SourceSummary#isFailed}): no chunks. */
        final boolean failed;
        int present;
        boolean mismatch;

        SourceDoc(String id, String routing, String target, int parents, String summaryHash, ChunkWriter writer, String text,
                  boolean elsewhere, boolean failed) {
            this.id = id;
            this.elsewhere = elsewhere;
            this.failed = failed;
            this.routing = routing;
            this.target = target;
            this.parents = parents;
            this.summaryHash = summaryHash;
            this.writer = writer;
            this.text = text;
            this.currentHash = text == null ? null : SourceSummary.sourceHash(text);
        }

        boolean stale() {
            if (mismatch) {
                return true;
            }
            if (writer == null) {
                return false; // the text field is unknown: only the chunks' own hashes were compared
            }
            return currentHash == null ? parents > 0 : summaryHash != null && !summaryHash.equals(currentHash);
        }
    }

    /** @param renamed chunk indices a restore renamed, by the name their documents' summaries still give them */
    void run(ReconcileReport report, Index source, WriteChecks checks, Map<String, String> renamed, ActionListener<Void> listener) {
        Set<String> includes = new TreeSet<>(Set.of(SUMMARY));
        ChunkWriters lookup = writers.get();
        if (lookup != null) {
            for (ChunkWriter w : lookup.all()) {
                includes.add(w.field());
            }
        }
        Map<String, Object> resolved = new HashMap<>();
        report.phase = "source documents";
        // every document, not an exists query on the summary: a mapping with "dynamic": false (or the summary mapped with
        // "enabled": false, as a strict mapping needs) does not index it, and such a query found no document to check
        pages.forEach(source.getName(), QueryBuilders.matchAllQuery(), includes.toArray(String[]::new),
            Reconciler.SOURCE_PAGE, (hits, l) -> checkPage(report, source, hits, resolved, renamed, checks, l), listener);
    }

    /**
     * Whether the chunks of {@code hit} in {@code target} were cut under {@code writer}'s config by the build of a swapped-in
     * generation, whatever its summary (which a build does not rewrite) records: the generation was built and caught up under
     * that config to the per-shard checkpoints the node recorded at the swap, and the document is at or below its shard's.
     */
    private boolean cutByServedBuild(String target, ChunkWriter writer, SearchHit hit) {
        ChunkIndexRegistry.Served served = ChunkIndexRegistry.servedOf(setup.clusterState().metadata().index(target));
        if (served == null || served.config() == null || served.checkpoints() == null || !served.config().equals(writer.configHash())
            || hit.getShard() == null) {
            return false;
        }
        int shard = hit.getShard().getShardId().id();
        return shard < served.checkpoints().length && hit.getSeqNo() >= 0 && hit.getSeqNo() <= served.checkpoints()[shard];
    }

    private void checkPage(ReconcileReport report, Index source, SearchHit[] hits, Map<String, Object> resolved,
                           Map<String, String> renamed, WriteChecks checks, ActionListener<Void> listener) {
        if (report.cancelled()) {
            listener.onFailure(report.cancellation());
            return;
        }
        report.seen.addAndGet(hits.length);
        Map<String, SourceDoc> docs = new LinkedHashMap<>();
        List<MultiGetRequest.Item> items = new ArrayList<>();
        for (SearchHit hit : hits) {
            Map<String, Object> stored = hit.getSourceAsMap();
            if (!(stored.get(SUMMARY) instanceof Map<?, ?> summary) || !(summary.get("target_index") instanceof String named)) {
                continue;
            }
            String target = setup.servingIndex(renamed.getOrDefault(named, named));
            report.checked.incrementAndGet();
            report.countConfig(summary.get(SourceSummary.CONFIG));
            ChunkIndexRegistry.Registration owner = registry.ofChunkIndex(target);
            boolean elsewhere = owner != null && !owner.source().getUUID().equals(source.getUUID());
            // a clone's document is rewritten by the writer of this index, into whichever chunk index it writes this index's to
            ChunkWriter writer = resolve(source.getName(), summary, elsewhere ? null : target, resolved);
            String text = writer == null ? null : writer.textIn(stored);
            String hash = summary.get(ChunkDocuments.SOURCE_HASH) instanceof String h ? h : null;
            DocumentField routing = hit.field("_routing");
            SourceDoc doc = new SourceDoc(hit.getId(), routing == null ? null : String.valueOf((Object) routing.getValue()), target,
                summary.get("parents") instanceof Number n ? n.intValue() : 0, hash, writer, text, elsewhere,
                SourceSummary.isFailed(summary));
            // a writer of the summary's pipeline and target that no longer agrees with it (another strategy): drifted too
            ChunkWriter current = writer != null || elsewhere || !(summary.get("pipeline") instanceof String p) || writers.get() == null
                ? writer : writers.get().ofPipeline(p, source.getName(), target);
            if (!elsewhere && current != null && current.configDrifted(summary) && !cutByServedBuild(target, current, hit)) {
                // reported, not fixed: re-chunking in place would mix configs in the index while it runs
                report.configDrift.incrementAndGet();
            }
            doc.key = setup.keyOf(source.getName(), doc.id, doc.routing);
            docs.put(doc.key.chunkId(0), doc);
            if (doc.elsewhere) {
                continue; // missing here, whatever the other index holds: not probed
            }
            FetchSourceContext fields = new FetchSourceContext(true, hash != null
                ? new String[] { ChunkDocuments.SOURCE_HASH }
                : new String[] { ChunkDocuments.SOURCE_HASH, ChunkDocuments.TEXT, ChunkDocuments.START, ChunkDocuments.END }, null);
            for (int i = 0; i < doc.parents; i++) {
                items.add(new MultiGetRequest.Item(target, doc.key.chunkId(i)).fetchSourceContext(fields));
            }
        }
        probe(docs, items, 0, ActionListener.wrap(v -> {
            List<SourceDoc> drifted = new ArrayList<>();
            for (SourceDoc doc : docs.values()) {
                if (doc.elsewhere || doc.failed || doc.present < doc.parents) {
                    report.missing.incrementAndGet();
                    drifted.add(doc);
                } else if (doc.stale()) {
                    report.stale.incrementAndGet();
                    drifted.add(doc);
                }
            }
            fix(report, source, drifted.iterator(), checks, listener);
        }, listener::onFailure));
    }

    /** Realtime multi-gets of the expected chunks, {@link Reconciler#MGET_BATCH} ids at a time. */
    private void probe(Map<String, SourceDoc> docs, List<MultiGetRequest.Item> items, int from, ActionListener<Void> listener) {
        if (from >= items.size()) {
            listener.onResponse(null);
            return;
        }
        MultiGetRequest mget = new MultiGetRequest().realtime(true);
        items.subList(from, Math.min(items.size(), from + Reconciler.MGET_BATCH)).forEach(mget::add);
        client.multiGet(mget, ActionListener.wrap(response -> {
            for (MultiGetItemResponse item : response.getResponses()) {
                // a failed item (e.g. the chunk index is gone) counts as an absent chunk
                if (item.isFailed() || !item.getResponse().isExists()) {
                    continue;
                }
                String chunkId = item.getId();
                SourceDoc doc = docs.get(ChunkDocuments.keyOf(chunkId));
                doc.present++;
                Map<String, Object> chunk = item.getResponse().getSourceAsMap();
                String expected = doc.currentHash != null ? doc.currentHash : doc.summaryHash;
                if (chunk.get(ChunkDocuments.SOURCE_HASH) instanceof String h) {
                    doc.mismatch |= expected != null && !expected.equals(h);
                } else if (doc.text != null) {
                    doc.mismatch |= !matchesText(doc.text, chunk);
                }
            }
            probe(docs, items, from + Reconciler.MGET_BATCH, listener);
        }, listener::onFailure));
    }

    /** A chunk without {@code source_hash} matches when its text is the source text at its offsets. */
    private static boolean matchesText(String text, Map<String, Object> chunk) {
        if (!(chunk.get(ChunkDocuments.START) instanceof Number s) || !(chunk.get(ChunkDocuments.END) instanceof Number e)) {
            return false;
        }
        int start = s.intValue();
        int end = e.intValue();
        return 0 <= start && start <= end && end <= text.length() && text.substring(start, end).equals(chunk.get(ChunkDocuments.TEXT));
    }

    /** One document at a time: a fix may embed, and the inference queue is shared with ingest. */
    private void fix(ReconcileReport report, Index source, Iterator<SourceDoc> docs, WriteChecks checks, ActionListener<Void> listener) {
        if (!docs.hasNext()) {
            listener.onResponse(null);
            return;
        }
        if (report.cancelled()) {
            listener.onFailure(report.cancellation());
            return;
        }
        SourceDoc doc = docs.next();
        ActionListener<Void> next = ActionListener.wrap(v -> fix(report, source, docs, checks, listener), listener::onFailure);
        if (report.dryRun) {
            next.onResponse(null);
            return;
        }
        if (doc.writer == null) {
            report.fail(report.sourceIndex, doc.id, String.format(Locale.ROOT,
                "no pipeline has a [%s] processor writing to [%s]; cannot rewrite the chunks", "multi_granular_chunking", doc.target));
            next.onResponse(null);
            return;
        }
        ActionListener<Rechunker.Outcome> done = ActionListener.wrap(outcome -> {
            if (outcome == Rechunker.Outcome.DONE) {
                report.fixed.incrementAndGet(); // superseded: a newer write of the document carries its own chunks
            }
            next.onResponse(null);
        }, e -> {
            report.fail(report.sourceIndex, doc.id, e.getMessage(), ExceptionsHelper.status(ExceptionsHelper.unwrapCause(e)));
            next.onResponse(null);
        });
        store.sourceOf(source.getName(), doc.id, doc.routing, ActionListener.wrap(stored -> {
            if (stored == null) {
                next.onResponse(null); // deleted meanwhile: its chunks went with it
            } else {
                rewrite(stored, source, doc, false, checks, done);
            }
        }, done::onFailure));
    }

    /**
     * Rewrites the chunks of {@code stored}; when that loses to a newer chunk version while the document is still the
     * version read, the loser was a chunk edited by hand: once more at the repair version, then it is an error.
     */
    private void rewrite(ChunkStore.StoredSource stored, Index source, SourceDoc doc, boolean repair, WriteChecks checks,
                         ActionListener<Rechunker.Outcome> done) {
        // never the other source index's chunk index: its chunks of this id are that index's document's
        List<String> targets = doc.elsewhere ? List.of() : List.of(doc.target);
        rechunker.reconcile(stored, source, targets, checks, repair, ActionListener.wrap(outcome -> {
            if (outcome == Rechunker.Outcome.DONE) {
                done.onResponse(outcome);
                return;
            }
            // superseded: by a newer write of the document (which carries its own chunks), or by chunk versions that did
            // not come from versioned writes, when the document is still the version read
            store.sourceOf(source.getName(), doc.id, doc.routing, ActionListener.wrap(now -> {
                if (now == null || now.seqNo() != stored.seqNo()) {
                    done.onResponse(outcome);
                } else if (!repair) {
                    rewrite(stored, source, doc, true, checks, done);
                } else {
                    done.onFailure(ChunkCommit.foreignVersions(doc.target, source.getName(), doc.id, stored.seqNo()));
                }
            }, done::onFailure));
        }, done::onFailure));
    }

    /** {@link ChunkWriters#resolve}, cached per run. */
    private ChunkWriter resolve(String sourceIndex, Map<?, ?> summary, String target, Map<String, Object> cache) {
        String key = summary.get("pipeline") + "|" + summary.get("field") + "|" + summary.get("strategy") + "|" + target;
        Object hit = cache.computeIfAbsent(key, k -> {
            ChunkWriters lookup = writers.get();
            ChunkWriter found = lookup == null ? null : lookup.resolve(sourceIndex, summary, target);
            return found == null ? Boolean.FALSE : found;
        });
        return hit instanceof ChunkWriter w ? w : null;
    }
}
