package io.strata.chunkindex.generations;

import org.opensearch.cluster.metadata.IndexMetadata;
import org.opensearch.cluster.metadata.Metadata;
import org.opensearch.core.action.ActionListener;
import org.opensearch.core.index.Index;
import org.opensearch.transport.client.Client;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.OptionalInt;

/**
 * The generation record a build keeps in its generation's mapping {@code _meta} ({@link GenerationBuilder#GENERATION_META}):
 * the source index (name and UUID), the generation number, the config identity and pipeline, and its {@value #STATE} —
 * {@value #BUILDING} from the moment the build created the index, {@value #COMPLETE} once its last pass and the orphan pass
 * ended. A generation left {@value #BUILDING} with no rebuild task of its source alive is one whose build was interrupted
 * (its node died or restarted): {@code GET generations} lists it as {@value #INTERRUPTED}, {@code _swap} refuses it, and a
 * re-issued {@code _rebuild} under the same config resumes it ({@link ResumeCheck}), as the build's persistent task does by
 * itself when the build's node left ({@link RebuildResumeExecutor}).
 */
final class GenerationRecord {
    static final String STATE = "state";
    static final String BUILDING = "building";
    static final String COMPLETE = "complete";
    /** What {@code GET generations} shows for a {@value #BUILDING} generation that no live task builds. */
    static final String INTERRUPTED = "interrupted";

    private final Client client;

    GenerationRecord(Client client) {
        this.client = client;
    }

    /** A generation left {@value #BUILDING}: its index, number and record. */
    record Unfinished(String index, int generation, Map<?, ?> about) {
        String config() {
            return about.get("config") == null ? null : String.valueOf(about.get("config"));
        }
    }

    /** The record of generation {@code generation} of {@code source} built under {@code config} by {@code pipeline}, in {@code state}. */
    static Map<String, Object> about(int generation, Index source, String config, String pipeline, String state) {
        Map<String, Object> about = new LinkedHashMap<>();
        about.put("generation", generation);
        about.put("source_index", source.getName());
        about.put("source_index_uuid", source.getUUID());
        if (config != null) {
            about.put("config", config);
        }
        if (pipeline != null) {
            about.put("pipeline", pipeline);
        }
        about.put(STATE, state);
        return about;
    }

    /** {@value #BUILDING} or {@value #COMPLETE} (a record without a state: a generation built, or kept by a swap, before states). */
    static String stateOf(Map<?, ?> about) {
        return about != null && BUILDING.equals(about.get(STATE)) ? BUILDING : COMPLETE;
    }

    /**
     * The highest-numbered generation of {@code chunkIndex} whose record names source index {@code sourceUuid} and is
     * {@value #BUILDING}, or null. Only the source's own incarnation counts: chunk versions are its sequence numbers.
     */
    static Unfinished unfinished(Metadata metadata, String chunkIndex, String sourceUuid) {
        Unfinished found = null;
        for (IndexMetadata index : metadata.indices().values()) {
            String name = index.getIndex().getName();
            OptionalInt number = GenerationNames.generationOf(chunkIndex, name);
            Map<?, ?> about = number.isPresent() ? TransportGenerationsAction.aboutOf(index) : null;
            if (about != null && sourceUuid.equals(about.get("source_index_uuid")) && BUILDING.equals(stateOf(about))
                && (found == null || number.getAsInt() > found.generation())) {
                found = new Unfinished(name, number.getAsInt(), about);
            }
        }
        return found;
    }

    /** {@code index}'s generation record set to {@code about} (the rest of its {@code _meta} kept), as the caller. */
    void put(IndexMetadata index, Map<String, Object> about, ActionListener<Void> listener) {
        Map<String, Object> meta = new LinkedHashMap<>();
        if (index.mapping() != null && index.mapping().sourceAsMap().get("_meta") instanceof Map<?, ?> m) {
            m.forEach((k, v) -> meta.put(String.valueOf(k), v));
        }
        meta.put(GenerationBuilder.GENERATION_META, about);
        client.admin().indices().preparePutMapping(index.getIndex().getName()).setSource(Map.of("_meta", meta)).execute(
            ActionListener.wrap(r -> listener.onResponse(null), listener::onFailure));
    }
}
