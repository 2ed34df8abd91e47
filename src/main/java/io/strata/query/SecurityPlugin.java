package io.strata.query;

import org.opensearch.common.settings.ClusterSettings;

import java.util.List;

/**
 * Whether the node runs no security plugin, proven from what it registered: the opensearch-security plugin registers its
 * node settings on every node it is installed on (enabled or not), under the names its users write in
 * {@code opensearch.yml}. Decisions that are only right without document-level security (the one-shard shortcut of
 * {@link QueryPlanner}) need this proof; no proof (settings not known yet, one of these registered) means a security
 * plugin may filter what the caller reads.
 */
final class SecurityPlugin {
    /** Node settings the security plugin registers unconditionally or whenever it is not in SSL-only mode. */
    static final List<String> SETTINGS = List.of("plugins.security.ssl_only", "plugins.security.disabled",
        "plugins.security.authcz.admin_dn");

    /** True only when {@code settings} are the node's and none of the security plugin's settings is registered in them. */
    static boolean provenAbsent(ClusterSettings settings) {
        return settings != null && SETTINGS.stream().allMatch(key -> settings.get(key) == null);
    }

    private SecurityPlugin() {}
}
