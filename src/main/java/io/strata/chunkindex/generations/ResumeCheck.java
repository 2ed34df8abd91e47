package io.strata.chunkindex.generations;

import io.strata.chunkindex.store.ChunkCommit;
import io.strata.chunkindex.ChunkDocuments;
import io.strata.chunkindex.ChunkKey;
import org.opensearch.OpenSearchStatusException;
import org.opensearch.action.admin.cluster.node.tasks.list.ListTasksRequest;
import org.opensearch.action.get.MultiGetItemResponse;
import org.opensearch.action.get.MultiGetRequest;
import org.opensearch.action.search.SearchRequest;
import org.opensearch.action.support.ContextPreservingActionListener;
import org.opensearch.common.util.concurrent.ThreadContext;
import org.opensearch.core.action.ActionListener;
import org.opensearch.core.rest.RestStatus;
import org.opensearch.index.query.QueryBuilders;
import org.opensearch.search.SearchHit;
import org.opensearch.search.builder.SearchSourceBuilder;
import org.opensearch.search.fetch.subphase.FetchSourceContext;
import org.opensearch.tasks.TaskInfo;
import org.opensearch.transport.client.Client;

import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

/**
 * What a re-issued {@code _rebuild} of an interrupted generation ({@link GenerationRecord}) checks: that no live task builds
 * the source, that the generation was built under the pipeline's config now, and, page by page of its first pass, which
 * source documents already have their complete, current chunks in it — skipped, neither cut nor embedded nor written.
 *
 * <p><b>Complete and current</b> ({@link #complete}): chunk 0 (the commit of {@link ChunkCommit}, written after chunks
 * {@code 1 … n-1}) is stored at the version of the document's {@code _seq_no} now ({@code 2s}, or a repair's {@code 2s + 1}),
 * read realtime; and the document's chunk documents are exactly ordinals {@code 0 … k-1}, every one at that same version.
 * The first half alone is not enough: a writer killed after its commit and before its sweep leaves the chunks of an older
 * operation of the same document past its own (an earlier pass met the document before it was rewritten), at a lower
 * version; and one killed mid-sweep leaves them past a gap. Either fails the second half, and the document is redone: its
 * write sweeps them. The second half is read by a search of the generation refreshed when the resume started: the killed
 * build wrote nothing after that, and the resumed one writes only documents it does not skip. A document whose chunk
 * documents are more than a search returns ({@link #MAX_CHUNKS} for a page) is redone rather than skipped.
 */
final class ResumeCheck {
    /** The most chunk documents one page's check reads; beyond it the page's candidates are redone. */
    static final int MAX_CHUNKS = 10_000;

    private final Client client;

    ResumeCheck(Client client) {
        this.client = client;
    }

    /**
     * Whether a document at {@code seqNo} has its complete chunks: {@code first} is chunk 0's version read realtime (null:
     * absent), {@code versions} every chunk document of it found, by ordinal.
     */
    static boolean complete(long seqNo, Long first, Map<Integer, Long> versions) {
        if (first == null || versions.isEmpty()) {
            return false;
        }
        long v = ChunkCommit.versionOf(seqNo);
        if (first != v && first != v + 1) {
            return false; // written for another operation of it (or by hand): its chunks are not those of the stored text
        }
        for (int ordinal = 0; ordinal < versions.size(); ordinal++) {
            if (!first.equals(versions.get(ordinal))) {
                return false; // a gap, or a chunk of another operation
            }
        }
        return true;
    }

    /** A source document as a page met it: its chunk key and {@code _seq_no}. */
    record Met(ChunkKey key, long seqNo) {}

    /** Which of {@code docs} have their complete, current chunks in {@code target}, as the caller reads it. */
    void completed(String target, List<Met> docs, ActionListener<Set<ChunkKey>> listener) {
        MultiGetRequest firsts = new MultiGetRequest().realtime(true);
        for (Met doc : docs) {
            firsts.add(new MultiGetRequest.Item(target, doc.key().chunkId(0)).fetchSourceContext(FetchSourceContext.DO_NOT_FETCH_SOURCE));
        }
        client.multiGet(firsts, ActionListener.wrap(r -> {
            MultiGetItemResponse[] items = r.getResponses();
            Map<String, Long> first = new HashMap<>();
            Set<String> sourceIds = new HashSet<>();
            for (int i = 0; i < items.length; i++) {
                if (items[i].isFailed()) {
                    listener.onFailure(items[i].getFailure().getFailure());
                    return;
                }
                Met doc = docs.get(i);
                long v = ChunkCommit.versionOf(doc.seqNo());
                if (items[i].getResponse().isExists() && (items[i].getResponse().getVersion() == v || items[i].getResponse().getVersion() == v + 1)) {
                    first.put(doc.key().chunkId(0), items[i].getResponse().getVersion());
                    sourceIds.add(doc.key().sourceId());
                }
            }
            if (first.isEmpty()) {
                listener.onResponse(Set.of());
                return;
            }
            SearchSourceBuilder chunks = new SearchSourceBuilder().size(MAX_CHUNKS).trackTotalHits(true).version(true).fetchSource(false)
                .query(QueryBuilders.termsQuery(ChunkDocuments.SOURCE_ID, sourceIds));
            client.search(new SearchRequest(target).source(chunks), ActionListener.wrap(found -> {
                if (found.getHits().getTotalHits() == null || found.getHits().getTotalHits().value() > found.getHits().getHits().length) {
                    listener.onResponse(Set.of()); // more than one search reads: redone, never skipped unseen
                    return;
                }
                // chunk id of ordinal 0 (names the key) → ordinal → version
                Map<String, Map<Integer, Long>> byKey = new HashMap<>();
                for (SearchHit hit : found.getHits().getHits()) {
                    int ordinal = ChunkDocuments.ordinalOf(hit.getId());
                    if (ordinal >= 0) {
                        byKey.computeIfAbsent(ChunkDocuments.siblingId(hit.getId(), 0), k -> new HashMap<>()).put(ordinal, hit.getVersion());
                    }
                }
                Set<ChunkKey> complete = new HashSet<>();
                for (Met doc : docs) {
                    String id = doc.key().chunkId(0);
                    if (complete(doc.seqNo(), first.get(id), byKey.getOrDefault(id, Map.of()))) {
                        complete.add(doc.key());
                    }
                }
                listener.onResponse(complete);
            }, listener::onFailure));
        }, listener::onFailure));
    }

    /**
     * The 400 when interrupted generation {@code unfinished} was built under another config than {@code config}, the
     * config of {@code pipeline} now; null when it may be resumed.
     */
    static String configProblem(GenerationRecord.Unfinished unfinished, String source, String pipeline, String config) {
        if (unfinished.config() == null || unfinished.config().equals(config)) {
            return null;
        }
        return String.format(Locale.ROOT, "[_rebuild] generation [%s] of [%s] is an interrupted build under config [%s], but "
            + "pipeline [%s] now chunks under config [%s]: a resume would mix configs. Put the pipeline back to config [%s] and "
            + "re-issue the rebuild to resume it, or delete it (DELETE %s) to rebuild under [%s]", unfinished.index(), source,
            unfinished.config(), pipeline, config, unfinished.config(), unfinished.index(), config);
    }

    /**
     * The id of a live rebuild task of {@code source} on any node other than {@code own} (null: none), as the node: whether
     * a build runs is the node's to know whatever the caller may list, and the answer names a task id only.
     */
    void liveTask(String source, String own, ActionListener<String> listener) {
        ThreadContext threadContext = client.threadPool().getThreadContext();
        Supplier<ThreadContext.StoredContext> caller = threadContext.newRestorableContext(false);
        String description = "rebuild [" + source + "]";
        try (ThreadContext.StoredContext ignored = threadContext.stashContext()) {
            client.admin().cluster().listTasks(new ListTasksRequest().setActions(RebuildAction.NAME).setDetailed(true),
                new ContextPreservingActionListener<>(caller, ActionListener.wrap(r -> {
                    for (TaskInfo info : r.getTasks()) {
                        String d = info.getDescription();
                        String id = info.getTaskId().toString();
                        if (d != null && (d.equals(description) || d.startsWith(description + " ")) && !id.equals(own)) {
                            listener.onResponse(id);
                            return;
                        }
                    }
                    listener.onResponse(null);
                }, listener::onFailure)));
        }
    }

    /** The 409 for a rebuild of {@code source} that task {@code task} runs already. */
    static OpenSearchStatusException running(String source, String task) {
        return new OpenSearchStatusException(String.format(Locale.ROOT, "[_rebuild] of [%s] is already running as task [%s]; "
            + "wait for it (GET _tasks/%s) or cancel it (POST _tasks/%s/_cancel)", source, task, task, task), RestStatus.CONFLICT);
    }
}
