package io.strata.query;

import io.strata.stats.StrataStats;
import org.opensearch.Version;
import org.opensearch.action.search.SearchRequest;
import org.opensearch.cluster.ClusterName;
import org.opensearch.cluster.ClusterState;
import org.opensearch.cluster.metadata.IndexMetadata;
import org.opensearch.cluster.metadata.Metadata;
import org.opensearch.cluster.service.ClusterService;
import org.opensearch.common.settings.ClusterSettings;
import org.opensearch.common.settings.Setting;
import org.opensearch.common.settings.Settings;
import org.opensearch.common.util.concurrent.ThreadContext;
import org.opensearch.test.OpenSearchTestCase;

import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The one-shard shortcut of a dense {@code multi_granular} query (the shard's own top k taken for the request's) is right
 * only where no document-level security filters the shard after the graph search: it is taken on a node proven to run no
 * security plugin, and not on one that registered the security plugin's settings, whatever the request carries (the plugin
 * renaming the marks it leaves on requests — which the old check looked for — made it take the shortcut under DLS).
 */
public class OneLocalShardTests extends OpenSearchTestCase {
    private static final ClusterState ONE_SHARD = ClusterState.builder(ClusterName.DEFAULT).metadata(Metadata.builder()
        .put(IndexMetadata.builder("docs-chunks").settings(Settings.builder().put(IndexMetadata.SETTING_VERSION_CREATED, Version.CURRENT))
            .numberOfShards(1).numberOfReplicas(0))).build();

    private static QueryServices services(ClusterService cluster) {
        ThreadContext context = new ThreadContext(Settings.EMPTY);
        return new QueryServices(() -> cluster, () -> null, () -> null, new StrataStats(), () -> context);
    }

    private static ClusterService node(Setting<?>... pluginSettings) {
        Set<Setting<?>> registered = new HashSet<>(ClusterSettings.BUILT_IN_CLUSTER_SETTINGS);
        registered.addAll(Set.of(pluginSettings));
        return new ClusterService(Settings.EMPTY, new ClusterSettings(Settings.EMPTY, registered), null);
    }

    public void testOneShard_onANodeWithoutASecurityPlugin_takesTheShortcut() {
        assertTrue(QueryPlanner.oneLocalShard(new SearchRequest("docs-chunks"), ONE_SHARD, services(node())));
    }

    public void testOneShard_onANodeWithTheSecurityPlugin_neverTakesIt_evenOnARequestWithoutItsMarks() {
        // the settings it registers on every node it is installed on (the second: unless in SSL-only mode)
        for (String key : List.of("plugins.security.ssl_only", "plugins.security.disabled")) {
            ClusterService secured = node(Setting.boolSetting(key, false, Setting.Property.NodeScope));
            assertFalse(key, QueryPlanner.oneLocalShard(new SearchRequest("docs-chunks"), ONE_SHARD, services(secured)));
        }
    }

    public void testOneShard_withoutTheNodesSettings_doesNotTakeIt() {
        assertFalse(QueryPlanner.oneLocalShard(new SearchRequest("docs-chunks"), ONE_SHARD, services(null)));
    }
}
