package io.strata.chunkindex.registry;

import org.opensearch.cluster.ClusterChangedEvent;
import org.opensearch.cluster.ClusterStateListener;
import org.opensearch.cluster.metadata.IndexMetadata;
import org.opensearch.cluster.metadata.Metadata;
import org.opensearch.core.index.Index;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Which chunk index serves which concrete source index: Strata's own record, kept in the chunk index's
 * {@link IndexMetadata} custom data under {@value #CUSTOM_KEY} ({@code source_index}, {@code source_index_uuid}). Only
 * the node writes it ({@link TransportRegisterChunkIndexAction}, a cluster-state update on the cluster manager after a
 * caller's authorised chunk write); no user API edits index custom data, unlike a mapping's {@code _meta}. So the node
 * acts on it as itself (the janitor deletes chunk indices of deleted sources, a source's delete takes its chunk indices)
 * without trusting anything a user wrote.
 *
 * <p>Look-ups are O(1) from an in-memory index of the registrations, kept on every node by applying each cluster-state
 * change incrementally: only indices whose metadata object changed are read again, and reading one is a map look-up
 * (no mapping is parsed). One chunk index serves one concrete source index (by UUID); one source index may have several
 * chunk indices (several processors).
 */
public final class ChunkIndexRegistry implements ClusterStateListener {
    /** The key of the chunk index's custom metadata. */
    public static final String CUSTOM_KEY = "strata";
    static final String SOURCE_INDEX = "source_index";
    static final String SOURCE_UUID = "source_index_uuid";
    /** The source's creation date: a snapshot restore keeps it (and the name) while it gives the index a new UUID. */
    static final String SOURCE_CREATED = "source_index_created";

    /** A served generation's record ({@code _swap}, {@code _rollback}): the generation served before it. */
    static final String PREVIOUS = "previous";
    /** A served generation's config identity, as its build recorded it. */
    static final String GENERATION_CONFIG = "generation_config";
    /** The per-shard source checkpoints (comma-separated) up to which a served generation's chunks were cut by its build. */
    static final String GENERATION_CHECKPOINTS = "generation_checkpoints";

    /**
     * What the node recorded when it registered a swapped-in generation: the one served before ({@code _rollback}'s way
     * back), and the config and per-shard source checkpoints it was caught up to at the swap (documents at or below them
     * were cut under that config, whatever their summaries say). Fields are null when not known.
     */
    public record Served(String previous, String config, long[] checkpoints) {
        /** The custom metadata entries of this record. */
        public Map<String, String> custom() {
            Map<String, String> out = new HashMap<>();
            if (previous != null) {
                out.put(PREVIOUS, previous);
            }
            if (config != null) {
                out.put(GENERATION_CONFIG, config);
            }
            if (checkpoints != null) {
                out.put(GENERATION_CHECKPOINTS, String.join(",", java.util.Arrays.stream(checkpoints).mapToObj(Long::toString).toList()));
            }
            return out;
        }
    }

    /** The served-generation record of registered chunk index {@code index}, or null when it is not a swapped-in generation. */
    public static Served servedOf(IndexMetadata index) {
        Map<String, String> custom = index == null ? null : index.getCustomData(CUSTOM_KEY);
        if (custom == null || registrationOf(index) == null || (custom.get(PREVIOUS) == null && custom.get(GENERATION_CONFIG) == null)) {
            return null;
        }
        String cp = custom.get(GENERATION_CHECKPOINTS);
        long[] checkpoints = cp == null || cp.isEmpty() ? null
            : java.util.Arrays.stream(cp.split(",")).mapToLong(Long::parseLong).toArray();
        return new Served(custom.get(PREVIOUS), custom.get(GENERATION_CONFIG), checkpoints);
    }

    /** {@code chunks} registered to {@code source} as a served generation, one metadata version on. */
    static IndexMetadata registeredServing(IndexMetadata chunks, IndexMetadata source, Served served) {
        Map<String, String> custom = new HashMap<>(customData(source.getIndex(), source.getCreationDate()));
        custom.putAll(served.custom());
        return IndexMetadata.builder(chunks).putCustom(CUSTOM_KEY, custom).version(chunks.getVersion() + 1).build();
    }

    /** {@code chunks} no longer registered to any source index, one metadata version on. */
    static IndexMetadata unregistered(IndexMetadata chunks) {
        IndexMetadata.Builder builder = IndexMetadata.builder(chunks).version(chunks.getVersion() + 1);
        builder.removeCustom(CUSTOM_KEY);
        return builder.build();
    }

    /** {@code chunkIndex} holds the chunks of {@code source} (both concrete, with their UUIDs). */
    public record Registration(Index chunkIndex, Index source) {}

    private record Snapshot(Map<String, Registration> byChunkIndex, Map<String, List<Registration>> bySourceUuid) {
        static final Snapshot EMPTY = new Snapshot(Map.of(), Map.of());
    }

    private volatile Snapshot snapshot = Snapshot.EMPTY;
    /** The metadata last applied (written on the cluster applier thread only). */
    private Metadata applied;

    @Override
    public void clusterChanged(ClusterChangedEvent event) {
        if (event.metadataChanged() || applied == null) {
            apply(event.state().metadata());
        }
    }

    /** Brings the registrations up to {@code metadata}, reading only the indices whose metadata changed. */
    public synchronized void apply(Metadata metadata) {
        Metadata before = applied;
        applied = metadata;
        Map<String, Registration> byChunk = null;
        Snapshot current = snapshot;
        if (before != null) {
            for (String name : current.byChunkIndex().keySet()) {
                if (!metadata.hasIndex(name)) {
                    byChunk = byChunk == null ? new HashMap<>(current.byChunkIndex()) : byChunk;
                    byChunk.remove(name);
                }
            }
        }
        for (IndexMetadata index : metadata.indices().values()) {
            String name = index.getIndex().getName();
            if (before != null && before.index(name) == index) {
                continue; // unchanged: the same immutable object
            }
            Registration now = registrationOf(index);
            Registration was = (byChunk == null ? current.byChunkIndex() : byChunk).get(name);
            if (now == null ? was == null : now.equals(was)) {
                continue;
            }
            byChunk = byChunk == null ? new HashMap<>(current.byChunkIndex()) : byChunk;
            if (now == null) {
                byChunk.remove(name);
            } else {
                byChunk.put(name, now);
            }
        }
        if (byChunk != null) {
            Map<String, List<Registration>> bySource = new HashMap<>();
            for (Registration r : byChunk.values()) {
                bySource.computeIfAbsent(r.source().getUUID(), k -> new ArrayList<>()).add(r);
            }
            bySource.replaceAll((k, v) -> List.copyOf(v));
            snapshot = new Snapshot(Map.copyOf(byChunk), Map.copyOf(bySource));
        }
    }

    /** The registration recorded in {@code index}'s custom metadata, or null. */
    public static Registration registrationOf(IndexMetadata index) {
        Map<String, String> custom = index == null ? null : index.getCustomData(CUSTOM_KEY);
        if (custom == null || custom.get(SOURCE_INDEX) == null || custom.get(SOURCE_UUID) == null) {
            return null;
        }
        return new Registration(index.getIndex(), new Index(custom.get(SOURCE_INDEX), custom.get(SOURCE_UUID)));
    }

    /** The custom metadata that registers a chunk index to {@code source}, created at {@code created} (epoch ms; ≤ 0: unknown). */
    public static Map<String, String> customData(Index source, long created) {
        return created > 0 ? Map.of(SOURCE_INDEX, source.getName(), SOURCE_UUID, source.getUUID(), SOURCE_CREATED, Long.toString(created))
            : Map.of(SOURCE_INDEX, source.getName(), SOURCE_UUID, source.getUUID());
    }

    /** {@code chunks} registered to {@code source}, one metadata version on. */
    static IndexMetadata registered(IndexMetadata chunks, IndexMetadata source) {
        return IndexMetadata.builder(chunks).putCustom(CUSTOM_KEY, customData(source.getIndex(), source.getCreationDate()))
            .version(chunks.getVersion() + 1).build();
    }

    /**
     * What a snapshot restore means for the registration of {@code chunks}, an index it just created ({@code created}: the
     * indices that restore created, in one cluster-state update). A restore copies the registration with the index and
     * gives every index it creates a new UUID, so the copy named a UUID that is gone (writes were refused, deletes reached
     * no chunk) or, restored under another name next to the live pair, the live source's: writes to the live source then
     * deleted the copy's chunks, and its delete or {@code _reconcile} would have taken the copy.
     * <ul>
     *   <li>its source came back in the same restore — by name, or renamed, by the creation date the registration
     *       recorded (registrations before 2026-11-27 recorded none: by name only): registered to that restored source;</li>
     *   <li>else, while the registered source is the live one: not registered at all ({@code source} null): a copy, not
     *       the live index's chunk index.</li>
     * </ul>
     * Null: nothing to change. Only a restore's own created indices count: a creation date can be given to any new index.
     */
    static Restored afterRestore(IndexMetadata chunks, Metadata metadata, Set<String> created) {
        Registration r = registrationOf(chunks);
        if (r == null || !created.contains(chunks.getIndex().getName())) {
            return null;
        }
        String date = chunks.getCustomData(CUSTOM_KEY).get(SOURCE_CREATED);
        List<IndexMetadata> counterparts = new ArrayList<>();
        for (String name : created) {
            IndexMetadata source = metadata.index(name);
            if (source != null && !name.equals(chunks.getIndex().getName()) && registrationOf(source) == null
                && (date != null ? source.getCreationDate() == Long.parseLong(date) : name.equals(r.source().getName()))) {
                counterparts.add(source);
            }
        }
        if (counterparts.size() > 1) { // created in the same millisecond: the one of the recorded name, if any
            counterparts.removeIf(source -> !source.getIndex().getName().equals(r.source().getName()));
        }
        if (counterparts.size() == 1) {
            Index source = counterparts.get(0).getIndex();
            return source.equals(r.source()) ? null : new Restored(chunks.getIndex(), source);
        }
        IndexMetadata live = metadata.index(r.source().getName());
        return live != null && live.getIndexUUID().equals(r.source().getUUID()) ? new Restored(chunks.getIndex(), null) : null;
    }

    /**
     * The name {@code chunkIndex} was created under, when a restore renamed it ({@code index.provided_name} survives a
     * restore): the summaries of the documents restored with it still name that one. Null when it was not renamed.
     */
    public static String restoredFrom(IndexMetadata chunkIndex) {
        String provided = chunkIndex == null ? null : chunkIndex.getSettings().get(IndexMetadata.SETTING_INDEX_PROVIDED_NAME);
        return provided == null || provided.startsWith("<") || provided.equals(chunkIndex.getIndex().getName()) ? null : provided;
    }

    /** A restored chunk index and the source it is registered to from now on; null: none (no longer a registered chunk index). */
    record Restored(Index chunkIndex, Index source) {}

    /** {@code chunks} as {@code restored} says: registered to its restored source, or no longer registered. */
    static IndexMetadata apply(IndexMetadata chunks, Restored restored, Metadata metadata) {
        if (restored.source() != null) {
            return registered(chunks, metadata.index(restored.source().getName()));
        }
        IndexMetadata.Builder builder = IndexMetadata.builder(chunks).version(chunks.getVersion() + 1);
        builder.removeCustom(CUSTOM_KEY);
        return builder.build();
    }

    /** The error for a chunk index that already serves {@code owner}. */
    public static IllegalArgumentException takenBy(String target, Index owner, Metadata metadata) {
        IndexMetadata now = metadata.index(owner.getName());
        if (now == null || !now.getIndexUUID().equals(owner.getUUID())) {
            return new IllegalArgumentException(String.format(Locale.ROOT,
                "[target_index] [%s] holds the chunks of index [%s] (uuid [%s]), which no longer exists; its documents carry that "
                    + "index's sequence numbers, so a new index cannot share it: delete [%s] and the pipeline creates it afresh",
                target, owner.getName(), owner.getUUID(), target));
        }
        return new IllegalArgumentException(String.format(Locale.ROOT,
            "[target_index] [%s] already holds the chunks of index [%s]; one chunk index serves one concrete index. For a "
                + "rolling alias or several indices, name the chunk index after the index written to: "
                + "\"target_index\": \"{{_index}}-chunks\"", target, owner.getName()));
    }

    /** The registration of chunk index {@code name}, or null when it is not a registered chunk index. */
    public Registration ofChunkIndex(String name) {
        return snapshot.byChunkIndex().get(name);
    }

    /** The chunk indices registered to the source index of UUID {@code sourceUuid}. */
    public List<Registration> ofSource(String sourceUuid) {
        return snapshot.bySourceUuid().getOrDefault(sourceUuid, List.of());
    }

    /** The names of the chunk indices registered to the source index of UUID {@code sourceUuid}. */
    public List<String> namesOf(String sourceUuid) {
        return ofSource(sourceUuid).stream().map(r -> r.chunkIndex().getName()).toList();
    }

    /**
     * The chunk indices (→ their source's name) registered to the concrete indices {@code named} that {@code named} does not
     * hold itself: O(1) per named index, whatever the number of indices in the cluster.
     */
    public Map<String, String> chunkIndicesBeside(Index[] named) {
        Set<String> names = new HashSet<>();
        for (Index index : named) {
            names.add(index.getName());
        }
        Map<String, String> out = new TreeMap<>();
        for (Index source : named) {
            for (Registration chunkIndex : ofSource(source.getUUID())) {
                if (!names.contains(chunkIndex.chunkIndex().getName())) {
                    out.put(chunkIndex.chunkIndex().getName(), source.getName());
                }
            }
        }
        return out;
    }

    /** The chunk indices registered to source index {@code source}, by name, when it exists in {@code metadata}. */
    public List<Registration> ofSource(Metadata metadata, String source) {
        IndexMetadata index = metadata.index(source);
        return index == null ? List.of() : ofSource(index.getIndexUUID());
    }

    /** Registrations whose source index no longer exists under its recorded UUID ({@code _reconcile} of a deleted source). */
    public List<Registration> ofDeletedSource(Metadata metadata, String sourceName) {
        List<Registration> out = new ArrayList<>();
        for (Registration r : snapshot.byChunkIndex().values()) {
            IndexMetadata now = metadata.index(sourceName);
            if (r.source().getName().equals(sourceName) && (now == null || !now.getIndexUUID().equals(r.source().getUUID()))) {
                out.add(r);
            }
        }
        out.sort((a, b) -> a.chunkIndex().getName().compareTo(b.chunkIndex().getName()));
        return out;
    }
}
