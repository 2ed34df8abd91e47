package io.strata.query;

import org.junit.Test;
import org.opensearch.action.search.SearchRequest;
import org.opensearch.action.search.SearchType;
import org.opensearch.cluster.ClusterName;
import org.opensearch.cluster.ClusterState;
import org.opensearch.cluster.metadata.Metadata;
import org.opensearch.common.settings.Settings;
import org.opensearch.common.unit.TimeValue;

import java.util.List;
import java.util.Set;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

/** Which clusters a search reads, grouped as OpenSearch's cross-cluster search groups index expressions. */
public class ClusterScopeTests {
    private static final Set<String> REMOTES = Set.of("eu", "us", "asia");

    @Test
    public void testOf_aClusterAliasBeforeTheColon_isRemote_wildcardsExpand_otherColonsAreLocalNames() {
        assertEquals(new ClusterScope(true, Set.of()), ClusterScope.of(new String[] {"docs-chunks", "logs-*"}, REMOTES));
        assertEquals(new ClusterScope(false, Set.of("eu")), ClusterScope.of(new String[] {"eu:docs-chunks"}, REMOTES));
        assertEquals(new ClusterScope(false, Set.of("eu", "us")), ClusterScope.of(new String[] {"eu:a", "us:b"}, REMOTES));
        assertEquals(new ClusterScope(false, Set.of("eu", "us", "asia")), ClusterScope.of(new String[] {"*:docs-chunks"}, REMOTES));
        assertEquals(new ClusterScope(true, Set.of("us")), ClusterScope.of(new String[] {"docs-chunks", "u*:docs-chunks"}, REMOTES));
        // a date-math name holds a colon in its time zone; an unknown alias is a (missing) local name, as OpenSearch reads it
        assertEquals(new ClusterScope(true, Set.of()), ClusterScope.of(new String[] {"<logs-{now/d{yyyy.MM.dd|+12:00}}>"}, REMOTES));
        assertEquals(new ClusterScope(true, Set.of()), ClusterScope.of(new String[] {"mars:docs-chunks"}, REMOTES));
        assertEquals(new ClusterScope(true, Set.of()), ClusterScope.of(new String[0], REMOTES)); // all local indices
    }

    @Test
    public void testPlannedHere_localSearches_withoutLookingUpRemotes_oneRemoteClusterForwardedWhole_isPlannedThere() {
        assertTrue(ClusterScope.plannedHere(new SearchRequest("docs-chunks", "<logs-{now/d}>"), () -> {
            throw new AssertionError("no expression names a cluster: nothing to look up");
        }));
        assertTrue(ClusterScope.plannedHere(new SearchRequest("mars:docs-chunks"), () -> REMOTES));
        assertFalse(ClusterScope.plannedHere(new SearchRequest("eu:docs-chunks", "eu:more-chunks"), () -> REMOTES));
    }

    @Test
    public void testPlannedHere_severalClusters_orAOneClusterSearchOpenSearchWouldNotForward_isA400ThatSaysWhy() {
        IllegalArgumentException mixed = assertThrows(IllegalArgumentException.class,
            () -> ClusterScope.plannedHere(new SearchRequest("docs-chunks", "eu:docs-chunks"), () -> REMOTES));
        assertTrue(mixed.getMessage(), mixed.getMessage().contains("one cluster at a time, and this request reads the local cluster and "
            + "remote cluster [eu]"));
        IllegalArgumentException two = assertThrows(IllegalArgumentException.class,
            () -> ClusterScope.plannedHere(new SearchRequest("*:docs-chunks"), () -> REMOTES));
        assertTrue(two.getMessage(), two.getMessage().contains("reads remote clusters [asia, eu, us]"));
        SearchRequest notMinimised = new SearchRequest("eu:docs-chunks");
        notMinimised.setCcsMinimizeRoundtrips(false);
        for (var c : List.of(
            new Object[] {notMinimised, "[ccs_minimize_roundtrips=false]"},
            new Object[] {new SearchRequest("eu:docs-chunks").scroll(TimeValue.timeValueMinutes(1)), "[scroll]"},
            new Object[] {new SearchRequest("eu:docs-chunks").searchType(SearchType.DFS_QUERY_THEN_FETCH),
                "[search_type=dfs_query_then_fetch]"})) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> ClusterScope.plannedHere((SearchRequest) c[0], () -> REMOTES));
            assertTrue(e.getMessage(), e.getMessage().contains("remote cluster [eu] is planned by that cluster")
                && e.getMessage().contains((String) c[1]));
        }
    }

    @Test
    public void testRemoteClusterNames_nodeSettingsOverriddenByPersistentThenTransientOnes_disabledOnesLeftOut() {
        Settings node = Settings.builder().putList("cluster.remote.eu.seeds", "10.0.0.1:9300")
            .putList("cluster.remote.us.seeds", "10.0.0.2:9300").build();
        Metadata metadata = Metadata.builder()
            .persistentSettings(Settings.builder().put("cluster.remote.asia.mode", "proxy").put("cluster.remote.asia.proxy_address",
                "10.0.0.3:9300").build())
            .transientSettings(Settings.builder().putList("cluster.remote.us.seeds").build()) // seeds emptied: disabled
            .build();
        ClusterState state = ClusterState.builder(new ClusterName("test")).metadata(metadata).build();
        assertEquals(Set.of("eu", "asia"), ClusterScope.remoteClusterNames(node, state));
    }
}
