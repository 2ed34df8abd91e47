package io.strata.query;

import org.opensearch.action.search.SearchRequest;
import org.opensearch.action.search.SearchType;
import org.opensearch.cluster.ClusterState;
import org.opensearch.cluster.metadata.ClusterNameExpressionResolver;
import org.opensearch.common.settings.Settings;
import org.opensearch.search.builder.SearchSourceBuilder;
import org.opensearch.transport.ProxyConnectionStrategy;
import org.opensearch.transport.RemoteClusterAware;
import org.opensearch.transport.RemoteConnectionStrategy;
import org.opensearch.transport.SniffConnectionStrategy;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Supplier;

/**
 * The clusters a search reads (cross-cluster search): the local one and the remote clusters its index expressions name
 * ({@code cluster:index}), grouped as OpenSearch groups them — the part before the first {@code :} is a cluster alias
 * when it matches (wildcards included) a configured remote cluster, else the expression is a local one (a date-math name
 * such as {@code <logs-{now/d{yyyy.MM.dd|+12:00}}>} holds a {@code :} too).
 *
 * <p>A query is planned on the cluster that holds its chunk indices: their model, mappings and shards are that cluster's.
 * A search of one remote cluster that OpenSearch forwards whole (round trips minimised, its default) is planned by that
 * cluster's coordinator; anything else would plan against indices this node cannot see, or rank parents of several
 * clusters by scores no one compared (the hybrid fusion normalises each side over the candidates it saw).
 */
record ClusterScope(boolean local, Set<String> remotes) {

    static ClusterScope of(String[] indices, Set<String> remoteClusterNames) {
        ClusterNameExpressionResolver resolver = new ClusterNameExpressionResolver();
        boolean local = indices.length == 0;
        Set<String> remotes = new TreeSet<>();
        for (String expression : indices) {
            int colon = expression.indexOf(RemoteClusterAware.REMOTE_CLUSTER_INDEX_SEPARATOR);
            List<String> clusters = colon < 0 ? List.of()
                : resolver.resolveClusterNames(remoteClusterNames, expression.substring(0, colon));
            if (clusters.isEmpty()) {
                local = true;
            } else {
                remotes.addAll(clusters);
            }
        }
        return new ClusterScope(local, remotes);
    }

    /** The remote clusters configured on this node: its settings overridden by the cluster's persistent, then transient ones. */
    static Set<String> remoteClusterNames(Settings nodeSettings, ClusterState state) {
        Settings settings = Settings.builder().put(nodeSettings).put(state.metadata().persistentSettings())
            .put(state.metadata().transientSettings()).build();
        Set<String> names = new TreeSet<>(SniffConnectionStrategy.REMOTE_CLUSTER_SEEDS.getNamespaces(settings));
        names.addAll(ProxyConnectionStrategy.PROXY_ADDRESS.getNamespaces(settings));
        names.removeIf(name -> RemoteConnectionStrategy.isConnectionEnabled(name, settings) == false);
        return names;
    }

    /**
     * Whether this node plans the query of {@code search}: true when it reads only local indices; false when OpenSearch
     * forwards the whole request to the one remote cluster it reads, which plans it. Anything else is a 400 that says why.
     */
    static boolean plannedHere(SearchRequest search, Supplier<Set<String>> remoteClusterNames) {
        if (Arrays.stream(search.indices()).noneMatch(i -> i.indexOf(RemoteClusterAware.REMOTE_CLUSTER_INDEX_SEPARATOR) >= 0)) {
            return true; // no expression can name a remote cluster (the common case: nothing to look up)
        }
        ClusterScope scope = of(search.indices(), remoteClusterNames.get());
        if (scope.remotes().isEmpty()) {
            return true;
        }
        if (scope.local() || scope.remotes().size() > 1) {
            throw new IllegalArgumentException(String.format(Locale.ROOT, "[%s] searches the chunk indices of one cluster at a time, "
                + "and this request reads %s: each cluster ranks its own parents (its model, its chunk indices), and scores of "
                + "different clusters are not comparable; search each cluster on its own", MultiGranularQueryBuilder.NAME,
                scope.describe()));
        }
        String refused = unforwarded(search);
        if (refused != null) {
            throw new IllegalArgumentException(String.format(Locale.ROOT, "[%s] on remote cluster [%s] is planned by that cluster, "
                + "which needs the whole request forwarded to it; %s keeps it here: leave [ccs_minimize_roundtrips] at true and "
                + "search without it", MultiGranularQueryBuilder.NAME, scope.remotes().iterator().next(), refused));
        }
        return false;
    }

    /** What keeps OpenSearch from forwarding a one-remote-cluster search whole (its own rule for minimising round trips). */
    private static String unforwarded(SearchRequest search) {
        if (search.isCcsMinimizeRoundtrips() == false) {
            return "[ccs_minimize_roundtrips=false]";
        }
        if (search.scroll() != null) {
            return "[scroll]";
        }
        if (search.pointInTimeBuilder() != null) {
            return "[pit]";
        }
        if (search.searchType() == SearchType.DFS_QUERY_THEN_FETCH) {
            return "[search_type=dfs_query_then_fetch]";
        }
        SearchSourceBuilder source = search.source();
        if (source != null && source.collapse() != null && source.collapse().getInnerHits() != null
            && source.collapse().getInnerHits().isEmpty() == false) {
            return "[collapse] with [inner_hits]";
        }
        return null;
    }

    private String describe() {
        StringBuilder out = new StringBuilder();
        if (local) {
            out.append("the local cluster and ");
        }
        out.append(remotes.size() == 1 ? "remote cluster " : "remote clusters ").append(remotes);
        return out.toString();
    }
}
