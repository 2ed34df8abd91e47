package io.strata.chunkindex.generations;

import io.strata.chunkindex.SourceSummary;
import io.strata.chunkindex.store.ChunkCommit;
import io.strata.chunkindex.setup.ChunkIndexSetup;
import io.strata.chunkindex.ChunkKey;
import io.strata.chunkindex.store.ChunkStore;
import io.strata.chunkindex.write.ChunkWriter;
import io.strata.chunkindex.write.ChunkWriters;
import io.strata.chunkindex.setup.WriteChecks;
import io.strata.stats.StrataStats;
import org.opensearch.action.support.GroupedActionListener;
import org.opensearch.common.document.DocumentField;
import org.opensearch.core.action.ActionListener;
import org.opensearch.core.index.Index;
import org.opensearch.search.SearchHit;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

/**
 * The chunk writes of one page of a {@link GenerationBuilder} pass into generation {@code target}: each source document cut
 * under the writer's config, embedded (reusing stored vectors by key) and written with the versions of {@link ChunkCommit}
 * ({@code 2 × _seq_no}), as the caller; a document the processor would skip now has its chunks deleted at that version.
 */
final class PageWrites {
    private final ChunkIndexSetup setup;
    private final ChunkCommit commit;
    private final Supplier<ChunkWriters> writers;
    private final VectorReuse vectorReuse;
    private final Index source;
    private final ChunkWriter writer;
    private final String target;
    private final RebuildReport report;
    private final WriteChecks checks;

    PageWrites(ChunkIndexSetup setup, ChunkCommit commit, Supplier<ChunkWriters> writers, VectorReuse vectorReuse, Index source,
               ChunkWriter writer, String target, RebuildReport report, WriteChecks checks) {
        this.setup = setup;
        this.commit = commit;
        this.writers = writers;
        this.vectorReuse = vectorReuse;
        this.source = source;
        this.writer = writer;
        this.target = target;
        this.report = report;
        this.checks = checks;
    }

    /**
     * The page's documents, all at once (as a bulk of them through the pipeline would be): each cut, then the stored vectors
     * their chunks can reuse read in one go ({@link VectorReuse}), then each embedded and written; fails on the first failure.
     */
    void write(int shard, List<SearchHit> hits, ActionListener<Void> listener) {
        if (hits.isEmpty()) {
            listener.onResponse(null);
            return;
        }
        GroupedActionListener<Cut> cut = new GroupedActionListener<>(ActionListener.wrap(
            cuts -> reusable(cuts, ActionListener.wrap(reusable -> write(cuts, reusable, listener), listener::onFailure)),
            listener::onFailure), hits.size());
        for (SearchHit hit : hits) {
            cut(shard, hit, cut);
        }
    }

    /** The stored vectors the page's chunks can reuse, by vector key. */
    private void reusable(Collection<Cut> cuts, ActionListener<Map<String, float[]>> listener) {
        List<Cut> cut = cuts.stream().filter(c -> c.parents != null).toList();
        writer.vectorKeys(cut.stream().map(c -> c.parents).toList(), cut.stream().map(c -> c.fields).toList(), ActionListener.wrap(
            wanted -> vectorReuse.lookup(List.of(report.chunkIndex, target), cut.stream().map(c -> c.hit.getId()).distinct().toList(),
                wanted, listener), listener::onFailure));
    }

    private void write(Collection<Cut> cuts, Map<String, float[]> reusable, ActionListener<Void> listener) {
        AtomicInteger left = new AtomicInteger(cuts.size());
        AtomicReference<Exception> failed = new AtomicReference<>();
        for (Cut cut : cuts) {
            write(cut, reusable, ActionListener.wrap(v -> {
                report.done.incrementAndGet();
                if (left.decrementAndGet() == 0) {
                    finish(failed.get(), listener);
                }
            }, e -> {
                failed.compareAndSet(null, e);
                if (left.decrementAndGet() == 0) {
                    finish(failed.get(), listener);
                }
            }));
        }
    }

    private void finish(Exception failed, ActionListener<Void> listener) {
        if (failed != null) {
            listener.onFailure(failed);
        } else {
            listener.onResponse(null);
        }
    }

    /** One document as read and cut: its parents, or null when the processor would skip it now (its chunks are deleted). */
    private record Cut(SearchHit hit, ChunkKey key, String routing, String hash, ChunkWriter.SourceFields fields,
                       List<io.strata.chunking.ChunkedParent> parents) {}

    /** One document as read, cut under the config; failures as the pipeline would answer them. */
    private void cut(int shard, SearchHit hit, ActionListener<Cut> listener) {
        Map<String, Object> stored = hit.getSourceAsMap();
        DocumentField routingField = hit.field("_routing");
        String routing = routingField == null ? null : String.valueOf((Object) routingField.getValue());
        ChunkKey key = setup.keyOf(source.getName(), hit.getId(), shard);
        String text = writer.textIn(stored);
        try {
            ChunkStore.StoredSource doc = new ChunkStore.StoredSource(source.getName(), hit.getId(), routing, stored, hit.getSeqNo(),
                hit.getPrimaryTerm());
            ChunkWriters lookup = writers.get();
            if (text == null || (lookup != null && !lookup.runsOn(writer, doc))) {
                listener.onResponse(new Cut(hit, key, routing, null, null, null));
                return;
            }
        } catch (Exception e) {
            listener.onFailure(e); // the processor's condition failed on it: as the pipeline would answer
            return;
        }
        ChunkWriter.SourceFields fields;
        try {
            fields = writer.sourceFields(stored);
        } catch (IllegalArgumentException e) {
            listener.onFailure(e);
            return;
        }
        writer.chunk(text, ActionListener.map(listener, parents -> new Cut(hit, key, routing, SourceSummary.sourceHash(text), fields,
            parents)));
    }

    /** The chunks of one document as cut, at version {@code 2 × _seq_no}, reusing {@code reusable} vectors; none when skipped. */
    private void write(Cut cut, Map<String, float[]> reusable, ActionListener<Void> listener) {
        long seqNo = cut.hit.getSeqNo();
        if (cut.parents == null) {
            commit.delete(target, cut.key, seqNo, ActionListener.map(listener, result -> null));
            return;
        }
        String id = cut.hit.getId();
        writer.prepare(target, source.getName(), id, cut.parents, cut.fields, cut.hash, checks, StrataStats.Progress.UNTRACKED,
            reusable::get, ActionListener.wrap(prepared -> {
                report.vectorsReused.addAndGet(prepared.vectorsReused());
                report.textsEmbedded.addAndGet(prepared.textsEmbedded());
                commit.write(target, cut.key, seqNo, prepared.count(), prepared.documents(source.getName(), id, cut.routing),
                    ActionListener.wrap(result -> {
                        if (result == ChunkCommit.Result.DONE) {
                            report.parents.addAndGet(prepared.count());
                        }
                        listener.onResponse(null);
                    }, listener::onFailure));
            }, listener::onFailure), listener::onFailure);
    }
}
