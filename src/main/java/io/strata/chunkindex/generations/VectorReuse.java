package io.strata.chunkindex.generations;

import io.strata.chunkindex.ChunkDocuments;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.opensearch.action.search.SearchRequest;
import org.opensearch.action.support.IndicesOptions;
import org.opensearch.core.action.ActionListener;
import org.opensearch.index.query.QueryBuilders;
import org.opensearch.search.SearchHit;
import org.opensearch.search.builder.SearchSourceBuilder;
import org.opensearch.search.sort.SortBuilders;
import org.opensearch.search.sort.SortOrder;
import org.opensearch.transport.client.Client;

import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The stored vectors a rebuild reuses per chunk: those of chunks of the same source documents, in the chunk index the
 * pipeline serves and in the generation itself, whose {@link ChunkDocuments#VECTOR_KEY} a chunk of the new cut has (the same
 * model, mode and embedded text: {@code chunkindex.VectorKeys}). One search per page of source documents (by
 * {@code source_id}), paged by {@value #HITS} chunk documents, keeping only the wanted vectors.
 *
 * <p>Read as the caller (the builder's client in the caller's thread context). Reuse only saves work: a chunk document
 * the caller cannot read (document-level security), a vector or key field-level security hides, or a search that fails
 * leaves those vectors to the model; it never fails the build.
 */
final class VectorReuse {
    private static final Logger LOG = LogManager.getLogger(VectorReuse.class);
    /** Chunk documents a response (~30 KB each with 8 vectors of 384 dimensions as JSON). */
    static final int HITS = 200;
    private static final String[] FIELDS = { ChunkDocuments.VECTOR_KEY, ChunkDocuments.EMBEDDING,
        ChunkDocuments.CHILDREN + "." + ChunkDocuments.VECTOR_KEY, ChunkDocuments.CHILDREN + "." + ChunkDocuments.EMBEDDING };

    private final Client client;

    VectorReuse(Client client) {
        this.client = client;
    }

    /** The vectors under {@code wanted} keys of the chunks of {@code sourceIds} in {@code indices} (missing ones skipped). */
    void lookup(List<String> indices, Collection<String> sourceIds, Set<String> wanted, ActionListener<Map<String, float[]>> listener) {
        Map<String, float[]> found = new HashMap<>();
        if (wanted.isEmpty() || sourceIds.isEmpty()) {
            listener.onResponse(found);
            return;
        }
        page(indices, sourceIds, wanted, null, found, listener);
    }

    private void page(List<String> indices, Collection<String> sourceIds, Set<String> wanted, Object[] after, Map<String, float[]> found,
                      ActionListener<Map<String, float[]>> listener) {
        // a total order to page by: a document's chunks, each index's copy (serving, generation); _seq_no parts two copies
        // of one _id on two shards (custom routing), short of an equal _seq_no, which only costs a vector computed again
        SearchSourceBuilder source = new SearchSourceBuilder().size(HITS).fetchSource(FIELDS, null).trackTotalHits(false)
            .query(QueryBuilders.boolQuery().filter(QueryBuilders.termsQuery(ChunkDocuments.SOURCE_ID, sourceIds)))
            .sort(SortBuilders.fieldSort(ChunkDocuments.SOURCE_ID).order(SortOrder.ASC))
            .sort(SortBuilders.fieldSort(ChunkDocuments.ORDINAL).order(SortOrder.ASC))
            .sort(SortBuilders.fieldSort("_index").order(SortOrder.ASC))
            .sort(SortBuilders.fieldSort("_seq_no").order(SortOrder.ASC));
        if (after != null) {
            source.searchAfter(after);
        }
        SearchRequest search = new SearchRequest(indices.toArray(String[]::new)).source(source)
            .indicesOptions(IndicesOptions.lenientExpandOpen());
        client.search(search, ActionListener.wrap(r -> {
            SearchHit[] hits = r.getHits().getHits();
            for (SearchHit hit : hits) {
                collect(hit.getSourceAsMap(), wanted, found);
            }
            if (hits.length < HITS) {
                listener.onResponse(found);
            } else {
                page(indices, sourceIds, wanted, hits[hits.length - 1].getSortValues(), found, listener);
            }
        }, e -> {
            LOG.debug(() -> "no vectors reused from " + indices + ": their search failed", e);
            listener.onResponse(found);
        }));
    }

    /** The wanted vectors of one chunk document: its own and its children's (the level-0 entry repeats the parent's, keyless). */
    static void collect(Map<String, Object> doc, Set<String> wanted, Map<String, float[]> found) {
        take(doc, wanted, found);
        if (doc.get(ChunkDocuments.CHILDREN) instanceof List<?> children) {
            for (Object child : children) {
                if (child instanceof Map<?, ?> c) {
                    take(c, wanted, found);
                }
            }
        }
    }

    private static void take(Map<?, ?> chunk, Set<String> wanted, Map<String, float[]> found) {
        if (chunk.get(ChunkDocuments.VECTOR_KEY) instanceof String key && wanted.contains(key) && !found.containsKey(key)
            && chunk.get(ChunkDocuments.EMBEDDING) instanceof List<?> vector && !vector.isEmpty()) {
            float[] out = new float[vector.size()];
            for (int i = 0; i < out.length; i++) {
                if (!(vector.get(i) instanceof Number n)) {
                    return;
                }
                out[i] = n.floatValue();
            }
            found.put(key, out);
        }
    }
}
