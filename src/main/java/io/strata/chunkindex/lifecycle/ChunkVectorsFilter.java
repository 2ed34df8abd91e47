package io.strata.chunkindex.lifecycle;

import io.strata.chunkindex.ChunkDocuments;
import io.strata.chunkindex.registry.ChunkIndexRegistry;

import org.opensearch.action.ActionRequest;
import org.opensearch.action.search.SearchAction;
import org.opensearch.action.search.SearchRequest;
import org.opensearch.action.support.ActionFilter;
import org.opensearch.action.support.ActionFilterChain;
import org.opensearch.core.action.ActionListener;
import org.opensearch.core.action.ActionResponse;
import org.opensearch.core.common.Strings;
import org.opensearch.core.index.Index;
import org.opensearch.index.query.InnerHitBuilder;
import org.opensearch.index.query.InnerHitContextBuilder;
import org.opensearch.search.builder.SearchSourceBuilder;
import org.opensearch.search.fetch.subphase.FetchSourceContext;
import org.opensearch.tasks.Task;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A search of chunk indices returns lean hits unless it asks for more: a request that says nothing about {@code _source}
 * (nor {@code stored_fields}) gets {@code _source} without {@code embedding}, {@code children.embedding} and
 * {@code children.text}. Each hit carried 8 vectors of 384 floats as JSON (≈ 20 KB), ten times its text; and the children's
 * texts, spans of the parent's, repeated the parent's text once per level. The hit keeps the parent's {@code text} and each
 * child's offsets, from which a client slices a child's text (docs/query.md); {@code explain_child} and {@code evidence}
 * still quote the chunks they name, since they read the stored fields themselves. With the k-NN plugin's derived source
 * (on for every chunk index) the vectors are not in the stored {@code _source} at all: they were rebuilt from the vector
 * files for every hit, so leaving them out also spares that work. Any {@code _source} in the request (e.g.
 * {@code "_source": true} or {@code "includes": ["embedding"]}) is kept as written; so is a search that names any index
 * that is not a registered chunk index, or a remote one, and a scroll or point-in-time search: those read documents
 * whole, to copy or rewrite them ({@code _reindex} and {@code _update_by_query} scroll; a copy without vectors would lose
 * them). A nested query's inner hits are children: when neither they nor the request say anything of {@code _source},
 * they keep their texts and leave out their vector (the k-NN plugin derives vectors into the root's {@code _source} only
 * when the root reads them, so an inner hit would otherwise show its stored placeholder, {@code "embedding": 1}); an
 * inner hit that names its own {@code _source} leaves the whole request as written, so the vectors it asks for are there.
 */
public final class ChunkVectorsFilter implements ActionFilter {
    /** What a hit leaves out by default: the vectors, and the children's texts (the parent's text at their offsets). */
    static final String[] LEFT_OUT = { ChunkDocuments.EMBEDDING, ChunkDocuments.CHILDREN + "." + ChunkDocuments.EMBEDDING,
        ChunkDocuments.CHILDREN + "." + ChunkDocuments.TEXT };
    /** What a nested query's inner hit (a child) leaves out by default: its vector (paths are the root's). */
    static final String[] INNER_LEFT_OUT = { ChunkDocuments.CHILDREN + "." + ChunkDocuments.EMBEDDING };

    private final SourceIndexLookup node;

    public ChunkVectorsFilter(SourceIndexLookup node) {
        this.node = node;
    }

    @Override
    public int order() {
        return Integer.MAX_VALUE; // after security filters: only searches the caller may send
    }

    @Override
    public <Request extends ActionRequest, Response extends ActionResponse> void apply(Task task, String action, Request request,
                                                                                       ActionListener<Response> listener,
                                                                                       ActionFilterChain<Request, Response> chain) {
        List<InnerHitBuilder> innerHits;
        // the query is walked for inner hits only once the search is known to read chunk indices alone
        if (SearchAction.NAME.equals(action) && request instanceof SearchRequest search && node.ready() && saysNothingOfSource(search)
            && onlyChunkIndices(search) && (innerHits = innerHitsSayingNothingOfSource(search)) != null) {
            if (search.source() == null) {
                search.source(new SearchSourceBuilder());
            }
            search.source().fetchSource(new FetchSourceContext(true, Strings.EMPTY_ARRAY, LEFT_OUT));
            for (InnerHitBuilder inner : innerHits) {
                inner.setFetchSourceContext(new FetchSourceContext(true, Strings.EMPTY_ARRAY, INNER_LEFT_OUT));
            }
        }
        chain.proceed(task, action, request, listener);
    }

    private static boolean saysNothingOfSource(SearchRequest search) {
        SearchSourceBuilder source = search.source();
        // a scroll reads documents to write them elsewhere or back (_reindex, _update_by_query): all of each
        return search.pointInTimeBuilder() == null && search.scroll() == null
            && (source == null || (source.fetchSource() == null && source.storedFields() == null && source.pointInTimeBuilder() == null));
    }

    /** The query's inner hits when none names its own {@code _source} or stored fields, else null (the request is left as written). */
    private static List<InnerHitBuilder> innerHitsSayingNothingOfSource(SearchRequest search) {
        if (search.source() == null || search.source().query() == null) {
            return List.of();
        }
        Map<String, InnerHitContextBuilder> found = new HashMap<>();
        try {
            InnerHitContextBuilder.extractInnerHits(search.source().query(), found);
        } catch (RuntimeException e) {
            return null; // e.g. two inner hits of one name: the search itself says so
        }
        List<InnerHitBuilder> out = new ArrayList<>();
        for (InnerHitContextBuilder context : found.values()) {
            InnerHitBuilder inner = context.innerHitBuilder();
            if (inner.getFetchSourceContext() != null || inner.getStoredFieldsContext() != null) {
                return null;
            }
            out.add(inner);
        }
        return out;
    }

    private boolean onlyChunkIndices(SearchRequest search) {
        for (String expression : search.indices()) {
            if (expression.indexOf(':') >= 0) {
                return false; // a remote cluster's indices: that cluster decides
            }
        }
        Index[] indices;
        try {
            indices = node.resolver().get().concreteIndices(node.clusterService().get().state(), search);
        } catch (RuntimeException e) {
            return false; // a remote or missing index: the search reports or handles it as it did
        }
        if (indices.length == 0) {
            return false;
        }
        for (Index index : indices) {
            ChunkIndexRegistry.Registration registration = node.registry().get().ofChunkIndex(index.getName());
            if (registration == null || !registration.chunkIndex().getUUID().equals(index.getUUID())) {
                return false;
            }
        }
        return true;
    }
}
