package io.strata.query;

import io.strata.chunkindex.ChunkDocuments;
import io.strata.chunkindex.registry.ChunkIndexRegistry;
import io.strata.chunkindex.write.ChunkWriter;
import io.strata.chunkindex.write.ChunkWriters;
import io.strata.chunkindex.ServingIndex;
import org.opensearch.cluster.metadata.IndexMetadata;
import org.opensearch.cluster.metadata.Metadata;
import org.opensearch.core.index.Index;
import org.opensearch.index.mapper.IdFieldMapper;
import org.opensearch.index.query.IdsQueryBuilder;
import org.opensearch.index.query.MultiMatchQueryBuilder;
import org.opensearch.index.query.QueryBuilder;
import org.opensearch.index.query.QueryBuilderVisitor;
import org.opensearch.index.query.TermQueryBuilder;
import org.opensearch.index.query.TermsQueryBuilder;
import org.opensearch.index.query.WithFieldName;
import org.apache.lucene.search.BooleanClause;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.BiPredicate;
import java.util.function.Consumer;
import java.util.regex.Pattern;

/**
 * A filter of {@code multi_granular} (its own, or the clauses around it that restrict its top k) on a field the chunk
 * documents do not hold — a field of the source documents the pipeline does not copy — keeps no parent, and the search
 * answered nothing without saying why. Such a filter is a 400 naming the field and {@code copy_fields}. Only fields the
 * source index maps count (a field neither maps is OpenSearch's usual unmapped field, which matches nothing anywhere).
 */
final class UncopiedFields {

    /** A chunk document's {@code _id}: its source document's {@code _id}, a colon and its parent's ordinal. */
    private static final Pattern CHUNK_ID = Pattern.compile(".*:[0-9]+");

    /** As {@link #check(QueryBuilder, Index[], Metadata, ChunkWriters)} without pipelines: each chunk index's mapping decides. */
    static void check(QueryBuilder filter, Index[] chunkIndices, Metadata metadata) {
        check(filter, chunkIndices, metadata, null);
    }

    /**
     * Fails when {@code filter} names a field that none of {@code chunkIndices} holds and one of their source indices maps,
     * or requires an {@code _id} no chunk document can have (a source document's id). A chunk index holds its own fields
     * and what the live pipelines writing it copy ({@code copy_fields} of each writer whose target it is); its mapping
     * decides only when no live pipeline writes it (an index template may map a field no pipeline copies, and the filter on
     * it would keep no parent).
     */
    static void check(QueryBuilder filter, Index[] chunkIndices, Metadata metadata, ChunkWriters writers) {
        if (filter != null) {
            checkIds(filter);
        }
        List<List<String>> required = filter == null ? List.of() : requiredFields(filter);
        if (required.isEmpty()) {
            return;
        }
        List<IndexMetadata> chunks = new ArrayList<>();
        List<IndexMetadata> sources = new ArrayList<>();
        for (Index index : chunkIndices) {
            IndexMetadata chunk = metadata.index(index);
            ChunkIndexRegistry.Registration registration = ChunkIndexRegistry.registrationOf(chunk);
            IndexMetadata source = registration == null ? null : metadata.index(registration.source().getName());
            if (source != null && source.getIndexUUID().equals(registration.source().getUUID())) {
                chunks.add(chunk);
                sources.add(source);
            }
        }
        if (chunks.isEmpty()) {
            return;
        }
        // each mapping parsed once per search, and only for a filter that requires fields
        Map<IndexMetadata, Map<String, Object>> mappings = new IdentityHashMap<>();
        BiPredicate<IndexMetadata, String> maps = (index, field) -> mapped(mappings.computeIfAbsent(index,
            UncopiedFields::mappingOf), field);
        List<Set<String>> copied = new ArrayList<>();
        for (int i = 0; i < chunks.size(); i++) {
            copied.add(copiedInto(writers, metadata, chunks.get(i).getIndex().getName(), sources.get(i).getIndex().getName()));
        }
        BiPredicate<Integer, String> holds = (i, field) -> copied.get(i) == null ? maps.test(chunks.get(i), field)
            : ChunkDocuments.RESERVED.contains(field.split("\\.", 2)[0]) || copied.get(i).stream().anyMatch(c -> c.equals(field)
                || field.startsWith(c + ".") || c.startsWith(field + "."));
        for (List<String> fields : required) {
            if (fields.stream().anyMatch(f -> java.util.stream.IntStream.range(0, chunks.size()).anyMatch(i -> holds.test(i, f)))) {
                continue;
            }
            for (String field : fields) {
                IndexMetadata source = sources.stream().filter(s -> maps.test(s, field)).findFirst().orElse(null);
                if (source != null) {
                    throw new IllegalArgumentException(String.format(Locale.ROOT, "[%s] filters on field [%s], which the chunk "
                        + "documents of %s do not hold: it is a field of source index [%s] that the pipeline does not copy, so the "
                        + "filter would keep no parent. Add it to the processor's [copy_fields] and re-chunk the documents "
                        + "(POST %s/_update_by_query?pipeline=<pipeline>), or filter on a copied field", MultiGranularQueryBuilder.NAME,
                        field, chunks.stream().map(c -> c.getIndex().getName()).toList(), source.getIndex().getName(),
                        source.getIndex().getName()));
                }
            }
        }
    }

    /** The fields the live pipelines copy into chunk index {@code chunkIndex} from {@code source}; null when none writes it. */
    private static Set<String> copiedInto(ChunkWriters writers, Metadata metadata, String chunkIndex, String source) {
        if (writers == null) {
            return null;
        }
        Set<String> out = null;
        for (ChunkWriter w : writers.all()) {
            if (ServingIndex.same(metadata, w.targetFor(source), chunkIndex)) {
                out = out == null ? new HashSet<>() : out;
                out.addAll(w.copyFields());
            }
        }
        return out;
    }

    /**
     * The fields of each query that every match of {@code query} must match (reached through {@code must} and
     * {@code filter} clauses, and the query itself): one list per query, its fields (a {@code multi_match}'s several, any
     * of which may match). Clauses in {@code should} and {@code must_not} are left out: a field the documents lack there
     * does not empty the filter. Metadata fields and patterns are left out too.
     */
    static List<List<String>> requiredFields(QueryBuilder query) {
        List<List<String>> out = new ArrayList<>();
        visitRequired(query, q -> {
            List<String> fields = q instanceof WithFieldName named ? List.of(String.valueOf(named.fieldName()))
                : q instanceof MultiMatchQueryBuilder multi ? List.copyOf(multi.fields().keySet()) : List.of();
            fields = fields.stream().filter(f -> !f.isEmpty() && !f.startsWith("_") && !f.contains("*")).toList();
            if (!fields.isEmpty()) {
                out.add(fields);
            }
        });
        return out;
    }

    /**
     * An {@code ids} query, or a {@code term} / {@code terms} on {@code _id}, that every match must satisfy, with a value
     * that is not a chunk id: written for the source index (its documents' ids), it would keep no parent. Exact: a value
     * without the {@code :<ordinal>} suffix is the id of no chunk document.
     */
    static void checkIds(QueryBuilder filter) {
        visitRequired(filter, q -> {
            Collection<?> ids = q instanceof IdsQueryBuilder idsQuery ? idsQuery.ids()
                : q instanceof TermQueryBuilder term && IdFieldMapper.NAME.equals(term.fieldName()) ? List.of(term.value())
                : q instanceof TermsQueryBuilder terms && IdFieldMapper.NAME.equals(terms.fieldName()) && terms.values() != null
                ? terms.values() : List.of();
            List<String> sourceIds = ids.stream().map(String::valueOf).filter(id -> !CHUNK_ID.matcher(id).matches()).sorted().distinct()
                .toList();
            if (!sourceIds.isEmpty()) {
                throw new IllegalArgumentException(String.format(Locale.ROOT, "[%s] filters on [_id] with %s, which no chunk "
                    + "document has: a chunk document's id is its source document's id and its parent's ordinal ([<id>:0], "
                    + "[<id>:1], …), so the filter would keep no parent. To keep the parents of given source documents, filter "
                    + "on [source_id]: {\"terms\": {\"source_id\": %s}}", MultiGranularQueryBuilder.NAME, sourceIds,
                    sourceIds.stream().map(id -> '"' + id.replace("\\", "\\\\").replace("\"", "\\\"") + '"').toList()));
            }
        });
    }

    /** Visits {@code query} and the clauses every match of it must match ({@code must} and {@code filter}, nested). */
    private static void visitRequired(QueryBuilder query, Consumer<QueryBuilder> visitor) {
        query.visit(new QueryBuilderVisitor() {
            @Override
            public void accept(QueryBuilder q) {
                visitor.accept(q);
            }

            @Override
            public QueryBuilderVisitor getChildVisitor(BooleanClause.Occur occur) {
                return occur == BooleanClause.Occur.MUST || occur == BooleanClause.Occur.FILTER ? this : QueryBuilderVisitor.NO_OP_VISITOR;
            }
        });
    }

    static Map<String, Object> mappingOf(IndexMetadata index) {
        return index.mapping() == null ? Map.of() : index.mapping().sourceAsMap();
    }

    /** Whether {@code mapping} (an index's) maps {@code path}: an object's field, a multi-field, an alias or a derived field. */
    static boolean mapped(Map<String, Object> mapping, String path) {
        if (mapping.get("derived") instanceof Map<?, ?> derived && derived.containsKey(path)) {
            return true;
        }
        Object node = mapping;
        String[] parts = path.split("\\.");
        for (int i = 0; i < parts.length; i++) {
            if (!(node instanceof Map<?, ?> m)) {
                return false;
            }
            Object next = m.get("properties") instanceof Map<?, ?> props ? props.get(parts[i]) : null;
            if (next == null && i > 0 && m.get("fields") instanceof Map<?, ?> multi) {
                next = multi.get(parts[i]); // a multi-field (`tenant.keyword`)
            }
            if (next == null) {
                return false; // OpenSearch keeps a dotted field name as objects in the mapping, so each part is a level
            }
            node = next;
        }
        return true;
    }

    private UncopiedFields() {}
}
