package io.strata.search;

import io.strata.chunkindex.ChunkDocuments;
import io.strata.context.Seed;
import io.strata.context.SourceText;
import org.opensearch.common.document.DocumentField;
import org.opensearch.index.query.BoolQueryBuilder;
import org.opensearch.index.query.QueryBuilder;
import org.opensearch.index.query.QueryBuilders;
import org.opensearch.search.SearchHit;
import org.opensearch.transport.RemoteClusterAware;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The hits of a search on a chunk index as {@link io.strata.context.ContextPacker} inputs: which parent documents to read
 * (the hits' parents, and with {@code neighbours} the parents numbered one before and one after each), then, from what the
 * caller could read of them, each hit's seed and each source document's known text.
 */
final class HitChunks {
    /** Where a passage comes from: the chunk index, and the source document its chunks were cut from. */
    record Citation(String document, String index, String sourceIndex, String sourceId) {
        static Citation of(String document, List<Citation> all) {
            for (Citation c : all) {
                if (c.document().equals(document)) {
                    return c;
                }
            }
            throw new IllegalStateException("no citation for [" + document + "]");
        }
    }

    /**
     * A hit: its parent, the chunk that matched ({@code explain_child}; null when not given) and the other chunks that matched
     * ({@code evidence}, best first; empty when not given) and the parent's best sentences ({@code evidence.sentences}).
     */
    private record Hit(String index, String id, int ordinal, float score, int[] matched, List<int[]> evidence,
                       List<int[]> sentences) {}

    private final List<Hit> hits;
    /** The parents to read, by the index that holds them: one id in two chunk indices is two parents. */
    private final Map<String, Set<String>> ids = new LinkedHashMap<>();
    private final List<Citation> citations = new ArrayList<>();

    private HitChunks(List<Hit> hits, boolean neighbours) {
        this.hits = hits;
        for (Hit h : hits) {
            Set<String> of = ids.computeIfAbsent(h.index(), i -> new LinkedHashSet<>());
            of.add(h.id());
            if (neighbours) {
                if (h.ordinal() > 0) {
                    of.add(ChunkDocuments.siblingId(h.id(), h.ordinal() - 1));
                }
                of.add(ChunkDocuments.siblingId(h.id(), h.ordinal() + 1));
            }
        }
    }

    static HitChunks of(SearchHit[] searchHits, boolean neighbours) {
        List<Hit> hits = new ArrayList<>(searchHits.length);
        for (SearchHit hit : searchHits) {
            String id = hit.getId();
            if (id == null) { // the parents are read by their ids: a hit without one cannot be quoted
                throw new IllegalArgumentException(String.format(Locale.ROOT, "[%s] needs the hits' [_id], which [stored_fields] "
                    + "[_none_] leaves out; ask for the hits' metadata (leave out [stored_fields] or name fields in it)",
                    StrataContextProcessor.TYPE));
            }
            int ordinal = ChunkDocuments.ordinalOf(id); // <source id>:<ordinal>, or with @<shard> after it
            if (ordinal < 0) {
                throw new IllegalArgumentException(String.format(Locale.ROOT, "[%s] hit [%s] of index [%s] is not a parent chunk (ids "
                    + "are <source id>:<ordinal>); search a chunk index", StrataContextProcessor.TYPE, id, indexOf(hit)));
            }
            hits.add(new Hit(indexOf(hit), id, ordinal, hit.getScore(), matched(hit), evidence(hit),
                sentences(hit)));
        }
        return new HitChunks(hits, neighbours);
    }

    /** The offsets of the chunk that gave the hit its score ({@code explain_child}), or null. */
    private static int[] matched(SearchHit hit) {
        DocumentField f = hit.field(ChunkDocuments.BEST_CHILD);
        return f == null ? null : span(f.getValue());
    }

    /** {@code {start, end}} of a chunk or sentence of the response ({@code start} and {@code end} fields), or null. */
    private static int[] span(Object o) {
        if (o instanceof Map<?, ?> m && m.get(ChunkDocuments.START) instanceof Number s && m.get(ChunkDocuments.END) instanceof Number e) {
            return new int[] {s.intValue(), e.intValue()};
        }
        return null;
    }

    /**
     * The offsets of the hit's evidence chunks ({@code multi_granular}'s {@code evidence}), best first: by normalised score
     * when every chunk has one (the hybrid mode's scale, common to both sides), else the dense side's, then the lexical's.
     */
    private static List<int[]> evidence(SearchHit hit) {
        DocumentField f = hit.field(ChunkDocuments.EVIDENCE);
        if (f == null || !(f.getValue() instanceof Map<?, ?> pack)) {
            return List.of();
        }
        List<double[]> chunks = new ArrayList<>(); // {start, end, normalised or NaN, order}
        for (String side : List.of("dense", "lexical")) {
            if (pack.get(side) instanceof List<?> list) {
                for (Object o : list) {
                    int[] span = span(o);
                    if (span != null) {
                        double n = ((Map<?, ?>) o).get("normalized") instanceof Number v ? v.doubleValue() : Double.NaN;
                        chunks.add(new double[] {span[0], span[1], n, chunks.size()});
                    }
                }
            }
        }
        if (chunks.stream().noneMatch(c -> Double.isNaN(c[2]))) {
            chunks.sort((a, b) -> a[2] != b[2] ? Double.compare(b[2], a[2]) : Double.compare(a[3], b[3]));
        }
        List<int[]> out = new ArrayList<>(chunks.size());
        for (double[] c : chunks) {
            out.add(new int[] {(int) c[0], (int) c[1]});
        }
        return out;
    }

    /** The offsets of the parent's best sentences for the query's words ({@code evidence.sentences}), best first. */
    private static List<int[]> sentences(SearchHit hit) {
        DocumentField f = hit.field(ChunkDocuments.EVIDENCE);
        List<int[]> out = new ArrayList<>();
        if (f != null && f.getValue() instanceof Map<?, ?> pack && pack.get("sentences") instanceof List<?> list) {
            for (Object o : list) {
                int[] span = span(o);
                if (span != null) {
                    out.add(span);
                }
            }
        }
        return out;
    }

    /**
     * The hit's index as the searching cluster names it: {@code cluster:index} for a remote cluster's hit (cross-cluster
     * search), so citations and the lookup name the index that was searched, not a local one of the same name.
     */
    static String indexOf(SearchHit hit) {
        return RemoteClusterAware.buildRemoteIndexName(hit.getClusterAlias(), hit.getIndex());
    }

    String[] indices() {
        return ids.keySet().toArray(String[]::new);
    }

    /** How many parents the lookup reads at most: each id of each index once. */
    int parents() {
        return ids.values().stream().mapToInt(Set::size).sum();
    }

    /**
     * The lookup's queries, each for at most {@code batch} parents (a search's size within the indices' result window): the
     * ids of each index under a filter on that index, so that a parent of the same id in another searched index neither
     * takes the place of one asked for nor is asked for. Each query's size is the number of parents it names.
     */
    List<Map.Entry<QueryBuilder, Integer>> lookups(int batch) {
        List<Map.Entry<QueryBuilder, Integer>> out = new ArrayList<>();
        BoolQueryBuilder current = null;
        int inCurrent = 0;
        for (Map.Entry<String, Set<String>> e : ids.entrySet()) {
            List<String> of = new ArrayList<>(e.getValue());
            for (int from = 0; from < of.size(); ) {
                if (current == null || inCurrent == batch) {
                    if (current != null) {
                        out.add(Map.entry(current, inCurrent));
                    }
                    current = QueryBuilders.boolQuery().minimumShouldMatch(1);
                    inCurrent = 0;
                }
                int to = Math.min(of.size(), from + batch - inCurrent);
                current.should(QueryBuilders.boolQuery().filter(QueryBuilders.termQuery("_index", e.getKey()))
                    .filter(QueryBuilders.idsQuery().addIds(of.subList(from, to).toArray(String[]::new))));
                inCurrent += to - from;
                from = to;
            }
        }
        if (current != null && inCurrent > 0) {
            out.add(Map.entry(current, inCurrent));
        }
        return out;
    }

    List<Citation> citations() {
        return citations;
    }

    /**
     * One source document's chunks in one chunk index: the key of its chunk ids ({@link ChunkDocuments#keyOf}), not its
     * {@code source_id} — with custom routing one {@code _id} is a document on each shard it is stored on.
     */
    private static String document(String index, String chunkId) {
        return index + "\u0000" + ChunkDocuments.keyOf(chunkId);
    }

    record Inputs(List<Seed> seeds, Map<String, SourceText> documents) {}

    /**
     * Seeds and texts from the parents the caller could read ({@code found}: the lookup's hits). A hit's seed is its matched
     * chunk, else its parent; with {@code alternatives}, its evidence chunks back it up (a finer one may fit where it does not),
     * and its evidence sentences (the best hit's may, where no chunk does).
     */
    @SuppressWarnings("unchecked")
    Inputs inputs(SearchHit[] found, boolean alternatives) {
        Map<String, SourceText> documents = new HashMap<>();
        Map<String, int[]> parentSpans = new HashMap<>();
        Set<String> wanted = new java.util.HashSet<>();
        for (Hit h : hits) {
            wanted.add(document(h.index(), h.id()));
        }
        for (SearchHit hit : found) {
            String index = indexOf(hit);
            Map<String, Object> source = hit.getSourceAsMap();
            if (source == null || !(source.get(ChunkDocuments.TEXT) instanceof String stored)
                || !(source.get(ChunkDocuments.START) instanceof Number start) || !(source.get(ChunkDocuments.END) instanceof Number end)
                || !(source.get(ChunkDocuments.ORDINAL) instanceof Number ordinal)
                || !(source.get(ChunkDocuments.SOURCE_ID) instanceof String sourceId) || !wanted.contains(document(index, hit.getId()))) {
                continue; // text the caller may not see (field-level security), or a document an id query matched in another index
            }
            String text = ChunkDocuments.sourcePart(stored, start.intValue(), end.intValue()); // not a table piece's header
            if (text == null) {
                continue;
            }
            String document = document(index, hit.getId());
            SourceText doc = documents.computeIfAbsent(document, d -> {
                citations.add(new Citation(d, index, (String) source.get(ChunkDocuments.SOURCE_INDEX), sourceId));
                return new SourceText();
            });
            doc.addParent(ordinal.intValue(), start.intValue(), text, finest(source, start.intValue(), text.length()));
            parentSpans.put(index + "/" + hit.getId(), new int[] {start.intValue(), start.intValue() + text.length()});
        }
        List<Seed> seeds = new ArrayList<>(hits.size());
        for (int rank = 0; rank < hits.size(); rank++) {
            Hit h = hits.get(rank);
            int[] parent = parentSpans.get(h.index() + "/" + h.id());
            if (parent == null) {
                continue; // the caller could not read it (any more)
            }
            int[] span = h.matched() != null ? h.matched() : parent;
            seeds.add(new Seed(document(h.index(), h.id()), span[0], span[1], rank, h.id(), h.score(),
                alternatives ? h.evidence() : List.of(), alternatives ? h.sentences() : List.of()));
        }
        return new Inputs(seeds, documents);
    }

    /** The spans of a parent's chunks at its finest level (the parent itself without children). */
    private static List<int[]> finest(Map<String, Object> source, int start, int length) {
        List<int[]> out = new ArrayList<>();
        int finest = 0;
        if (source.get(ChunkDocuments.CHILDREN) instanceof List<?> children) {
            for (Object c : children) {
                if (c instanceof Map<?, ?> child && child.get(ChunkDocuments.LEVEL) instanceof Number l) {
                    finest = Math.max(finest, l.intValue());
                }
            }
            for (Object c : children) {
                if (c instanceof Map<?, ?> child && child.get(ChunkDocuments.LEVEL) instanceof Number l && l.intValue() == finest
                    && finest > 0 && child.get(ChunkDocuments.START) instanceof Number s && child.get(ChunkDocuments.END) instanceof Number e) {
                    out.add(new int[] {s.intValue(), e.intValue()});
                }
            }
        }
        if (out.isEmpty()) {
            out.add(new int[] {start, start + length});
        }
        return out;
    }
}
