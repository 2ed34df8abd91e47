package io.strata.chunkindex;

import io.strata.chunkindex.registry.ChunkIndexJanitor;

import org.opensearch.Version;
import org.opensearch.cluster.ClusterName;
import org.opensearch.cluster.ClusterState;
import org.opensearch.cluster.ClusterStateTaskConfig;
import org.opensearch.cluster.ClusterStateTaskExecutor;
import org.opensearch.cluster.ClusterStateTaskListener;
import org.opensearch.cluster.ClusterStateUpdateTask;
import org.opensearch.cluster.metadata.IndexMetadata;
import org.opensearch.cluster.metadata.MappingMetadata;
import org.opensearch.cluster.metadata.Metadata;
import org.opensearch.cluster.node.DiscoveryNode;
import org.opensearch.cluster.node.DiscoveryNodeRole;
import org.opensearch.cluster.node.DiscoveryNodes;
import org.opensearch.cluster.service.ClusterService;
import org.opensearch.common.settings.ClusterSettings;
import org.opensearch.common.settings.Setting;
import org.opensearch.common.settings.Settings;
import org.opensearch.core.common.transport.TransportAddress;
import org.opensearch.index.mapper.MapperService;
import org.opensearch.threadpool.ThreadPool;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A cluster service whose state the test sets by hand and whose submitted update tasks are kept for the test to run
 * against a state of its choosing: what the cluster manager's update thread would do, one step at a time.
 */
public final class TestClusterService extends ClusterService {
    private volatile ClusterState state;
    public final List<ClusterStateUpdateTask> submitted = new ArrayList<>();

    public TestClusterService(Settings settings, ThreadPool threadPool) {
        super(settings, clusterSettings(settings), threadPool);
        this.state = state(Metadata.builder().build(), true);
    }

    private static ClusterSettings clusterSettings(Settings settings) {
        Set<Setting<?>> known = new HashSet<>(ClusterSettings.BUILT_IN_CLUSTER_SETTINGS);
        known.add(ChunkIndexJanitor.DELETE_WITH_SOURCE);
        return new ClusterSettings(settings, known);
    }

    @Override
    public ClusterState state() {
        return state;
    }

    public void setState(ClusterState state) {
        this.state = state;
    }

    @Override
    public <T extends ClusterStateTaskConfig & ClusterStateTaskExecutor<T> & ClusterStateTaskListener> void submitStateUpdateTask(
        String source, T task) {
        submitted.add((ClusterStateUpdateTask) task);
    }

    // ---- building cluster states

    private static final DiscoveryNode LOCAL = new DiscoveryNode("local", new TransportAddress(InetAddress.getLoopbackAddress(), 9300),
        Map.of(), Set.of(DiscoveryNodeRole.CLUSTER_MANAGER_ROLE, DiscoveryNodeRole.DATA_ROLE), Version.CURRENT);

    /** A cluster of one node holding {@code metadata}; the node is the elected cluster manager or not. */
    public static ClusterState state(Metadata metadata, boolean localIsClusterManager) {
        DiscoveryNodes.Builder nodes = DiscoveryNodes.builder().add(LOCAL).localNodeId(LOCAL.getId());
        if (localIsClusterManager) {
            nodes.clusterManagerNodeId(LOCAL.getId());
        }
        return ClusterState.builder(ClusterName.DEFAULT).metadata(metadata).nodes(nodes).build();
    }

    /** A cluster (this node elected) holding {@code indices}. */
    public static ClusterState state(IndexMetadata... indices) {
        Metadata.Builder metadata = Metadata.builder();
        for (IndexMetadata index : indices) {
            metadata.put(index, false);
        }
        return state(metadata.build(), true);
    }

    /** An index without a mapping (a source index, or an index a user created). */
    public static IndexMetadata index(String name, String uuid) {
        return index(name, uuid, null, Settings.EMPTY);
    }

    /** A chunk index whose mapping is {@code mapping}, with {@code index.knn: true}. */
    public static IndexMetadata chunkIndex(String name, String uuid, Map<String, Object> mapping) {
        return index(name, uuid, mapping, Settings.builder().put("index.knn", true).build());
    }

    public static IndexMetadata index(String name, String uuid, Map<String, Object> mapping, Settings settings) {
        IndexMetadata.Builder b = IndexMetadata.builder(name).settings(Settings.builder().put(settings)
            .put(IndexMetadata.SETTING_VERSION_CREATED, Version.CURRENT).put(IndexMetadata.SETTING_INDEX_UUID, uuid))
            .numberOfShards(1).numberOfReplicas(0);
        if (mapping != null) {
            b.putMapping(new MappingMetadata(MapperService.SINGLE_MAPPING_NAME, mapping));
        }
        return b.build();
    }
}
