package io.strata.chunkindex.generations;

import io.strata.chunkindex.registry.ChunkIndexRegistry;
import io.strata.chunkindex.write.ChunkWriter;
import io.strata.chunkindex.registry.RegisterChunkIndexAction;
import io.strata.chunkindex.registry.RegisterChunkIndexRequest;
import io.strata.chunkindex.ServingIndex;
import org.opensearch.action.admin.indices.alias.IndicesAliasesRequest;
import org.opensearch.action.admin.indices.alias.IndicesAliasesRequest.AliasActions;
import org.opensearch.action.admin.indices.delete.DeleteIndexRequest;
import org.opensearch.action.admin.indices.shrink.ResizeType;
import org.opensearch.action.support.ContextPreservingActionListener;
import org.opensearch.cluster.metadata.IndexAbstraction;
import org.opensearch.cluster.metadata.IndexMetadata;
import org.opensearch.cluster.metadata.Metadata;
import org.opensearch.cluster.service.ClusterService;
import org.opensearch.common.settings.Settings;
import org.opensearch.common.util.concurrent.ThreadContext;
import org.opensearch.core.action.ActionListener;
import org.opensearch.core.index.Index;
import org.opensearch.transport.client.Client;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalInt;
import java.util.function.Supplier;

/**
 * Serves a generation under the chunk index's name {@code X} (the pipeline's {@code target_index}, which applications
 * search): {@code X} becomes an alias whose write index is the generation, changed in ONE {@code _aliases} call, so a
 * search of {@code X} reads the old generation whole until that call and the new one whole after it.
 *
 * <p>No write is lost: the source gets a write block ({@code index.blocks.write}; adding it waits for the source operations
 * in flight on its shards), the generation is caught up by {@code _seq_no} ({@link GenerationBuilder#catchUp}) to every
 * operation the source holds, then the alias moves, then the block goes. A write refused by the block is a 403
 * {@code cluster_block_exception} the client sees, never a silent loss. The block was chosen over the pipeline also writing
 * the new generation: two writers per document would need a second ledger entry and a second config per bulk, and a
 * failure of either write would leave the generations apart; the block costs the swap's last pass of writes only.
 *
 * <p>A concrete {@code X} (written before generations) cannot carry an alias of its own name: under a write block it is
 * cloned to {@code X-g1}, and the one {@code _aliases} call removes {@code X} and adds the alias ({@code remove_index} +
 * {@code add}), so at every instant {@code X} names either the old index or the new generation.
 *
 * <p>Every request is the caller's (the node client in the caller's thread context): the block, the reads and writes of
 * the catch-up, the clone and the aliases need the caller's rights on the source, the generations and the name. Only the
 * registry update is the node's own bookkeeping (after the caller's {@code _aliases} call succeeded): the served generation
 * registered to the source (so lifecycle deletes, {@code _reconcile} and stats follow it), the one it replaces no longer.
 */
public final class GenerationSwap {
    private static final String BLOCK = IndexMetadata.INDEX_BLOCKS_WRITE_SETTING.getKey();

    private final Client client;
    private final ClusterService clusterService;
    private final GenerationBuilder builder;
    private final ChunkIndexRegistry registry;

    public GenerationSwap(Client client, ClusterService clusterService, GenerationBuilder builder, ChunkIndexRegistry registry) {
        this.client = client;
        this.clusterService = clusterService;
        this.builder = builder;
        this.registry = registry;
    }

    /** {@code generation} (a number or an index name) of {@code writer}'s chunk index served; fails with a 400 before anything changes. */
    public void swap(IndexMetadata source, ChunkWriter writer, String pipeline, String generation, ActionListener<Map<String, Object>> listener) {
        String name = writer.targetFor(source.getIndex().getName());
        String target;
        try {
            target = generationIndex(name, generation);
        } catch (IllegalArgumentException e) {
            listener.onFailure(e);
            return;
        }
        serve("_swap", source, writer, pipeline, name, target, listener);
    }

    /** The generation served before the serving one, served again. */
    public void rollback(IndexMetadata source, ChunkWriter writer, String pipeline, ActionListener<Map<String, Object>> listener) {
        String name = writer.targetFor(source.getIndex().getName());
        Metadata metadata = clusterService.state().metadata();
        String serving = ServingIndex.of(metadata, name);
        ChunkIndexRegistry.Served served = ChunkIndexRegistry.servedOf(metadata.index(serving));
        if (served == null || served.previous() == null) {
            listener.onFailure(new IllegalArgumentException(String.format(Locale.ROOT, "[_rollback] [%s] serves no swapped-in "
                + "generation of [%s]: there is nothing to roll back to (POST _plugins/_strata/_swap?index=%s&generation=<k> serves "
                + "one)", name, source.getIndex().getName(), source.getIndex().getName())));
            return;
        }
        serve("_rollback", source, writer, pipeline, name, served.previous(), listener);
    }

    /** The index of generation {@code generation} of {@code name}: {@code k} or the index name itself. */
    static String generationIndex(String name, String generation) {
        if (generation == null || generation.isBlank()) {
            throw new IllegalArgumentException(String.format(Locale.ROOT, "[_swap] needs [generation]: the generation number of [%s] "
                + "(or its index name) to serve, as GET _plugins/_strata/generations lists them", name));
        }
        OptionalInt named = GenerationNames.generationOf(name, generation);
        if (named.isPresent() && !generation.equals(name)) {
            return generation;
        }
        try {
            return GenerationNames.name(name, Integer.parseInt(generation));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(String.format(Locale.ROOT, "[_swap] [generation] must be a generation number or the "
                + "index [%s-g<k>], got [%s]", name, generation));
        }
    }

    private void serve(String action, IndexMetadata sourceMeta, ChunkWriter writer, String pipeline, String name, String target,
                       ActionListener<Map<String, Object>> listener) {
        Metadata metadata = clusterService.state().metadata();
        Index source = sourceMeta.getIndex();
        IndexMetadata generation = metadata.index(target);
        IndexAbstraction current = metadata.getIndicesLookup().get(name);
        String serving = ServingIndex.of(metadata, name);
        Map<?, ?> about = generation == null ? null : TransportGenerationsAction.aboutOf(generation);
        ChunkIndexRegistry.Registration owner = registry.ofChunkIndex(target);
        String problem = null;
        if (generation == null) {
            problem = String.format(Locale.ROOT, "[%s] generation [%s] does not exist; GET _plugins/_strata/generations?index=%s "
                + "lists those of [%s]", action, target, source.getName(), source.getName());
        } else if (current == null) {
            problem = String.format(Locale.ROOT, "[%s] [%s] does not exist: nothing is served under that name yet", action, name);
        } else if (target.equals(serving)) {
            problem = String.format(Locale.ROOT, "[%s] [%s] already serves [%s]", action, target, name);
        } else if ((owner != null && !owner.source().equals(source))
            || (about != null && !source.getUUID().equals(about.get("source_index_uuid")))) {
            problem = String.format(Locale.ROOT, "[%s] [%s] holds the chunks of another source index than [%s]", action, target,
                source.getName());
        } else if (GenerationRecord.BUILDING.equals(GenerationRecord.stateOf(about))) {
            problem = String.format(Locale.ROOT, "[%s] [%s] is an unfinished build (its rebuild is running or was interrupted): "
                + "wait for it, or re-issue POST _plugins/_strata/_rebuild?index=%s to resume it, then %s", action, target,
                source.getName(), action);
        } else if (about != null && about.get("config") != null && !about.get("config").equals(writer.configHash())) {
            problem = String.format(Locale.ROOT, "[%s] [%s] was built under config [%s], but pipeline [%s] now chunks under config "
                + "[%s]: its writes after the %s would mix configs in [%s]. Put the pipeline back to the config [%s] was built "
                + "with, or rebuild (POST _plugins/_strata/_rebuild?index=%s)", action, target, about.get("config"), pipeline,
                writer.configHash(), action.substring(1), target, target, source.getName());
        } else if (current.getType() == IndexAbstraction.Type.CONCRETE_INDEX && metadata.hasIndex(GenerationNames.name(name, 1))) {
            problem = String.format(Locale.ROOT, "[%s] [%s] is a concrete index, and [%s], where it would be kept, exists already",
                action, name, GenerationNames.name(name, 1));
        }
        if (problem != null) {
            listener.onFailure(new IllegalArgumentException(problem));
            return;
        }
        boolean migrate = current.getType() == IndexAbstraction.Type.CONCRETE_INDEX;
        String previous = migrate ? GenerationNames.name(name, 1) : serving;
        boolean blockedBefore = IndexMetadata.INDEX_BLOCKS_WRITE_SETTING.get(sourceMeta.getSettings());
        long[] from = checkpointsOf(about);
        long started = System.nanoTime();
        Map<String, Object> report = new LinkedHashMap<>();
        report.put("source_index", source.getName());
        report.put("chunk_index", name);
        report.put("serving", target);
        report.put("previous", previous);
        // the source's block comes off whatever happens (unless it was there before): the caller's writes resume
        // lifted before the caller is answered, so a write sent after the answer is not refused
        ActionListener<Map<String, Object>> done = blockedBefore ? listener : ActionListener.wrap(
            r -> unblock(source.getName(), () -> listener.onResponse(r)), e -> unblock(source.getName(), () -> listener.onFailure(e)));
        Step start = next -> {
            if (blockedBefore) {
                next.run();
            } else {
                client.admin().indices().prepareAddBlock(IndexMetadata.APIBlock.WRITE, source.getName()).execute(
                    ActionListener.wrap(r -> next.run(), done::onFailure));
            }
        };
        start.then(() -> builder.catchUp(source, writer, pipeline, target, GenerationNames.generationOf(name, target).orElse(0), from,
            ActionListener.wrap(caughtUp -> {
                report.put("caught_up", Map.of("passes", caughtUp.passes, "documents", caughtUp.done.get(),
                    "orphans_deleted", caughtUp.orphans.get()));
                long[] upTo = checkpointsOf(TransportGenerationsAction.aboutOf(clusterService.state().metadata().index(target)));
                ChunkIndexRegistry.Served served = new ChunkIndexRegistry.Served(previous, writer.configHash(), upTo);
                // registered beside the serving one before the move and the serving one unregistered after it: at every
                // instant the index the name resolves to is registered (a pipeline checks its target while the source is
                // blocked, and a write must then be refused by the block, not by an unregistered chunk index)
                // a concrete name is gone with its registration; its clone must not be registered either, should resize copy it
                ActionListener<Void> moved = ActionListener.wrap(v -> register(target, source, previous, served, ActionListener.wrap(r -> {
                    report.put("took_ms", (System.nanoTime() - started) / 1_000_000);
                    done.onResponse(report);
                }, done::onFailure)), e -> register(serving, source, target, null, ActionListener.wrap(r -> done.onFailure(e), e2 -> {
                    e.addSuppressed(e2);
                    done.onFailure(e);
                })));
                register(target, source, null, served, ActionListener.wrap(registered -> {
                    if (migrate) {
                        migrate(source, name, previous, from, target, moved);
                    } else {
                        record(previous, aboutKept(source, GenerationNames.generationOf(name, previous).orElse(0), from),
                            ActionListener.wrap(v -> aliases(List.of(AliasActions.remove().index(serving).alias(name),
                                AliasActions.add().index(target).alias(name).writeIndex(true)), moved), moved::onFailure));
                    }
                }, done::onFailure));
            }, done::onFailure)));
    }

    /**
     * {@code name}, a concrete index, kept as {@code kept} (a clone made under a write block on it, with the generation record
     * of generation 1: the source, and where a rollback's catch-up starts) and replaced by the alias over {@code target} in
     * one {@code _aliases} call. A failure before that call deletes the clone and lifts the block: {@code name} serves as before.
     */
    private void migrate(Index source, String name, String kept, long[] from, String target, ActionListener<Void> listener) {
        ActionListener<Void> undo = ActionListener.wrap(listener::onResponse, e -> client.admin().indices().delete(
            new DeleteIndexRequest(kept).indicesOptions(org.opensearch.action.support.IndicesOptions.lenientExpandOpen()),
            ActionListener.wrap(r -> unblockThen(name, e, listener), e2 -> unblockThen(name, e, listener))));
        Map<String, Object> about = aboutKept(source, 1, from);
        Step block = next -> client.admin().indices().prepareAddBlock(IndexMetadata.APIBlock.WRITE, name).execute(
            ActionListener.wrap(r -> next.run(), listener::onFailure));
        block.then(() -> client.admin().indices().prepareResizeIndex(name, kept).setResizeType(ResizeType.CLONE).execute(
            ActionListener.wrap(cloned -> client.admin().indices().prepareUpdateSettings(kept).setSettings(Settings.builder().putNull(BLOCK))
                .execute(ActionListener.wrap(unblocked -> record(kept, about, ActionListener.wrap(
                        mapped -> aliases(List.of(AliasActions.removeIndex().index(name),
                            AliasActions.add().index(target).alias(name).writeIndex(true)), undo), undo::onFailure)),
                    undo::onFailure)),
                undo::onFailure)));
    }

    /**
     * The generation record of the generation no longer served: its source, and where a rollback's catch-up starts. That is
     * the new generation's checkpoints before the swap's last pass ({@code from}), not the block's: a chunk write of a source
     * write made just before the block may still have been under way (refused by a block on the kept index, or landing after
     * the move), and the rollback cuts such documents again. Null {@code from}: none recorded, a rollback cuts every document.
     */
    private Map<String, Object> aboutKept(Index source, int generation, long[] from) {
        Map<String, Object> about = new LinkedHashMap<>();
        about.put("generation", generation);
        about.put("source_index", source.getName());
        about.put("source_index_uuid", source.getUUID());
        if (from != null) {
            about.put(GenerationBuilder.CHECKPOINTS, java.util.Arrays.stream(from).boxed().toList());
        }
        return about;
    }

    /** {@code index}'s generation record set to {@code about} (kept: its config and pipeline), as the caller. */
    private void record(String index, Map<String, Object> about, ActionListener<Void> listener) {
        IndexMetadata metadata = clusterService.state().metadata().index(index);
        Map<?, ?> known = metadata == null ? null : TransportGenerationsAction.aboutOf(metadata);
        Map<String, Object> merged = new LinkedHashMap<>();
        if (known != null) {
            known.forEach((k, v) -> merged.put(String.valueOf(k), v));
        }
        merged.putAll(about);
        if (!about.containsKey(GenerationBuilder.CHECKPOINTS)) {
            merged.remove(GenerationBuilder.CHECKPOINTS);
        }
        client.admin().indices().preparePutMapping(index).setSource(Map.of("_meta", metaWith(metadata, merged))).execute(
            ActionListener.wrap(r -> listener.onResponse(null), listener::onFailure));
    }

    private void unblockThen(String index, Exception cause, ActionListener<Void> listener) {
        client.admin().indices().prepareUpdateSettings(index).setSettings(Settings.builder().putNull(BLOCK)).execute(
            ActionListener.wrap(r -> listener.onFailure(cause), e -> {
                cause.addSuppressed(e);
                listener.onFailure(cause);
            }));
    }

    /** {@code index}'s mapping {@code _meta} with the generation record {@code about}. */
    private static Map<String, Object> metaWith(IndexMetadata index, Map<String, Object> about) {
        Map<String, Object> meta = new LinkedHashMap<>();
        if (index != null && index.mapping() != null && index.mapping().sourceAsMap().get("_meta") instanceof Map<?, ?> m) {
            m.forEach((k, v) -> meta.put(String.valueOf(k), v));
        }
        meta.put(GenerationBuilder.GENERATION_META, about);
        return meta;
    }

    /** One {@code _aliases} request: its actions apply in one cluster-state update. */
    private void aliases(List<AliasActions> actions, ActionListener<Void> listener) {
        IndicesAliasesRequest request = new IndicesAliasesRequest();
        actions.forEach(request::addAliasAction);
        client.admin().indices().aliases(request, ActionListener.wrap(r -> listener.onResponse(null), listener::onFailure));
    }

    /**
     * The registry as the node: {@code target} registered to {@code source} (as served, with {@code served}; null: as it is),
     * {@code replaces} (null: none) no longer.
     */
    private void register(String target, Index source, String replaces, ChunkIndexRegistry.Served served, ActionListener<Void> listener) {
        IndexMetadata generation = clusterService.state().metadata().index(target);
        ThreadContext threadContext = client.threadPool().getThreadContext();
        Supplier<ThreadContext.StoredContext> caller = threadContext.newRestorableContext(false);
        try (ThreadContext.StoredContext ignored = threadContext.stashContext()) {
            client.execute(RegisterChunkIndexAction.INSTANCE, new RegisterChunkIndexRequest(generation.getIndex(), source, replaces, served),
                new ContextPreservingActionListener<>(caller, ActionListener.wrap(r -> listener.onResponse(null), listener::onFailure)));
        }
    }

    private void unblock(String index, Runnable then) {
        client.admin().indices().prepareUpdateSettings(index).setSettings(Settings.builder().putNull(BLOCK)).execute(
            ActionListener.wrap(r -> then.run(), e -> {
                org.apache.logging.log4j.LogManager.getLogger(GenerationSwap.class).warn(
                    "could not lift the write block of [{}] after a swap; lift it with PUT {}/_settings {{\"{}\": null}}", index, index,
                    BLOCK, e);
                then.run();
            }));
    }

    /** The per-shard checkpoints a generation record holds, or null (a catch-up then starts from the beginning). */
    static long[] checkpointsOf(Map<?, ?> about) {
        if (about == null || !(about.get(GenerationBuilder.CHECKPOINTS) instanceof List<?> list)) {
            return null;
        }
        List<Long> out = new ArrayList<>();
        for (Object o : list) {
            if (!(o instanceof Number n)) {
                return null;
            }
            out.add(n.longValue());
        }
        return out.stream().mapToLong(Long::longValue).toArray();
    }

    /** A step that continues with {@code next} when it succeeded (and fails its own listener otherwise). */
    @FunctionalInterface
    private interface Step {
        void run(Runnable next);

        default void then(Runnable next) {
            run(next);
        }
    }
}
