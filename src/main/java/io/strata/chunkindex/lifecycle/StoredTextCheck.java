package io.strata.chunkindex.lifecycle;

import io.strata.chunkindex.ChunkDocuments;
import io.strata.chunkindex.SourceSummary;
import io.strata.chunkindex.write.ChunkWriter;
import io.strata.chunkindex.write.PreparedChunks;

import org.opensearch.action.DocWriteRequest;
import org.opensearch.action.bulk.BulkItemRequest;
import org.opensearch.action.bulk.BulkShardRequest;
import org.opensearch.action.bulk.TransportShardBulkAction;
import org.opensearch.action.index.IndexRequest;
import org.opensearch.common.xcontent.XContentHelper;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The document a pipeline hands to the shard must hold the text its chunks were cut from, and the summary saying so.
 * Processors after the chunking one may change the document: a {@code remove} or {@code rename} of the chunked field (to
 * store the text only once, in the chunks), a {@code script} that rewrites it, one that drops the summary. Such a
 * document used to be stored with chunks of a text it no longer held: its next {@code _update} failed on the missing
 * field, and {@code _reconcile} counted it stale and deleted its chunks. It is now refused before anything is written,
 * with a 400 that says what happened: nothing is half-written, and the pipeline author learns to chunk the field as it
 * will be stored.
 *
 * A processor after it that changes the document's {@code _id} or {@code _index} (a {@code set}, a {@code date_index_name})
 * is refused alike: the chunks are named after the id and go to the chunk index of the index, and the bulk filter matches
 * them to the stored item by both, so they were lost and the document stored without them.
 *
 * <p>Runs where the bulk's shard requests are sent ({@code indices:data/write/bulk[s]} on the coordinating node, after every
 * pipeline ran), for the items the chunking processors prepared chunks for.
 */
final class StoredTextCheck {
    private StoredTextCheck() {}

    /** Aborts every item of {@code shard} whose source no longer holds the text or summary its ledger entries were cut from. */
    static void abortChanged(BulkShardRequest shard, ChunkLedger ledger) {
        Set<String> ids = new HashSet<>();
        for (BulkItemRequest item : shard.items()) {
            if (item != null && item.request().id() != null) {
                ids.add(item.request().id());
            }
        }
        // prepared under an id no item here has: a later processor may have changed that document's _id
        List<ChunkLedger.Entry> renamed = ledger.all().stream().filter(e -> !ids.contains(e.id())).toList();
        for (BulkItemRequest item : shard.items()) {
            if (item == null || !(item.request() instanceof IndexRequest indexed) || indexed.id() == null || indexed.source() == null) {
                continue;
            }
            List<ChunkLedger.Entry> byId = ledger.entriesFor(indexed.id());
            List<ChunkLedger.Entry> entries = byId.stream().filter(e -> sameIndex(e, item)).toList();
            if (entries.isEmpty()) {
                // prepared for this id in another index (a later processor may have changed its _index), or for another id
                List<ChunkLedger.Entry> moved = new ArrayList<>(byId);
                moved.addAll(renamed);
                if (!moved.isEmpty()) {
                    abortIfMoved(item, indexed, moved);
                }
                continue;
            }
            Map<String, Object> source = sourceOf(indexed);
            String problem = null;
            for (ChunkLedger.Entry entry : entries) {
                problem = problem(entry, source);
                if (problem == null) {
                    break; // the stored document is the one this entry was prepared for (an id written twice in a bulk has two)
                }
            }
            if (problem != null) {
                ChunkWriter writer = entries.get(0).chunks().writer();
                item.abort(item.index(), new IllegalArgumentException(String.format(Locale.ROOT, "[multi_granular_chunking] chunked "
                    + "field [%s] of document [%s], but %s: a processor after it in the pipeline changed the document. Strata keeps "
                    + "the chunked text in the stored document (its updates, deletes and _reconcile read it there): put the "
                    + "chunking processor after the processors that change the field, and keep the field and [%s] in the document",
                    writer.field(), indexed.id(), problem, SourceSummary.FIELD)));
            }
        }
    }

    /**
     * Aborts {@code item} when its summary is the one a chunking processor of this bulk wrote for the document under another
     * {@code _id} or {@code _index}: a processor after it changed them. The chunks are named after the id ({@code
     * <_id>:<ordinal>}) and their chunk index chosen from the index; the bulk filter matches them to the stored item by both,
     * so they were lost and the document stored without them.
     */
    private static void abortIfMoved(BulkItemRequest item, IndexRequest indexed, List<ChunkLedger.Entry> candidates) {
        Object summary = sourceOf(indexed).get(SourceSummary.FIELD);
        Object hash = summary instanceof Map<?, ?> s ? s.get(ChunkDocuments.SOURCE_HASH) : null;
        for (ChunkLedger.Entry e : candidates) {
            if (!e.chunks().sourceHash().equals(hash)) {
                continue;
            }
            boolean idChanged = !e.id().equals(indexed.id());
            if (idChanged && !sameIndex(e, item)) {
                continue; // another index's document of the same text
            }
            String change = idChanged ? String.format(Locale.ROOT, "its _id to [%s]: its chunks are named after the _id (<_id>:<ordinal>)",
                indexed.id()) : String.format(Locale.ROOT, "its _index from [%s] to [%s]: its chunk index is chosen from the index it "
                + "goes to", e.index(), item.index());
            item.abort(item.index(), new IllegalArgumentException(String.format(Locale.ROOT, "[multi_granular_chunking] chunked field "
                + "[%s] of document [%s], but a processor after it in the pipeline changed %s; set it before the chunking processor",
                e.chunks().writer().field(), e.id(), change)));
            return;
        }
    }

    private static boolean sameIndex(ChunkLedger.Entry e, BulkItemRequest item) {
        return e.concreteIndex().equals(item.index()) || e.index().equals(item.index());
    }

    /** What differs between {@code source} and the document {@code entry} was prepared for; null when nothing does. */
    private static String problem(ChunkLedger.Entry entry, Map<String, Object> source) {
        PreparedChunks chunks = entry.chunks();
        String text = chunks.writer().textIn(source);
        if (text == null) {
            return "the document as stored no longer has it";
        }
        if (!chunks.sourceHash().equals(SourceSummary.sourceHash(text))) {
            return "the document as stored holds another text in it";
        }
        Object summary = source.get(SourceSummary.FIELD);
        if (!(summary instanceof Map<?, ?> s) || !chunks.sourceHash().equals(s.get(ChunkDocuments.SOURCE_HASH))) {
            return "the document as stored lost or changed its summary [" + SourceSummary.FIELD + "]";
        }
        return null;
    }

    /** The source {@code sent} carries as the pipelines left it (an index request's, parsed), or null. */
    static Map<String, Object> sourceOf(DocWriteRequest<?> sent) {
        if (!(sent instanceof IndexRequest indexed) || indexed.source() == null) {
            return null;
        }
        return XContentHelper.convertToMap(indexed.source(), true, indexed.getContentType()).v2();
    }

    static boolean isShardBulk(String action) {
        return TransportShardBulkAction.ACTION_NAME.equals(action);
    }
}
