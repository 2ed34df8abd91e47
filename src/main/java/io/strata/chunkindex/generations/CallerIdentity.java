package io.strata.chunkindex.generations;

import org.opensearch.common.settings.Settings;
import org.opensearch.common.util.concurrent.ThreadContext;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Who started a rebuild, as the security plugin (opensearch-security 3.4) tells plugins: the thread-context transient
 * {@value #USER_INFO}, {@code user|backend roles|roles|tenant|…}, each field's own pipes escaped as {@code \|} and the roles
 * (the caller's mapped security roles) joined by commas; absent on a cluster without the plugin. An automatic resume runs
 * with these roles through the plugin's roles injection ({@value #INJECTED_ROLES}, {@code user|role1,role2}), nothing else.
 *
 * <p>The injection string cannot carry a name holding {@code |} or {@code ,}, and the plugin answers a malformed one by not
 * injecting at all, which would run the request as the node: such an identity is not injected ({@link #problem}). A role
 * whose own name holds a comma is indistinguishable, in the user info, from two roles; the plugin's other users of roles
 * injection (alerting) share that limit.
 */
record CallerIdentity(String user, List<String> roles, boolean secured) {
    static final String USER_INFO = "_opendistro_security_user_info";
    static final String INJECTED_ROLES = "opendistro_security_injected_roles";
    /** Set by the security plugin for every request it authenticated or let through: the cluster is secured. */
    private static final List<String> SECURITY_TRANSIENTS = List.of("_opendistro_security_user", "_opendistro_security_origin");

    /** Nobody: a plain cluster. */
    static final CallerIdentity NONE = new CallerIdentity(null, List.of(), false);

    CallerIdentity {
        roles = List.copyOf(roles);
    }

    /** The caller of the request whose thread context this is. */
    static CallerIdentity of(ThreadContext context) {
        boolean secured = SECURITY_TRANSIENTS.stream().anyMatch(k -> context.getTransient(k) != null);
        return context.getTransient(USER_INFO) instanceof String info ? parse(info) : new CallerIdentity(null, List.of(), secured);
    }

    /** The user and roles of a user info string. */
    static CallerIdentity parse(String info) {
        List<String> fields = new ArrayList<>();
        StringBuilder field = new StringBuilder();
        for (int i = 0; i < info.length(); i++) {
            char c = info.charAt(i);
            if (c == '\\' && i + 1 < info.length() && info.charAt(i + 1) == '|') {
                field.append('|'); // an escaped pipe inside a field
                i++;
            } else if (c == '|') {
                fields.add(field.toString());
                field.setLength(0);
            } else {
                field.append(c);
            }
        }
        fields.add(field.toString());
        String user = fields.get(0).isBlank() ? null : fields.get(0);
        List<String> roles = fields.size() < 3 || fields.get(2).isBlank() ? List.of()
            : java.util.Arrays.stream(fields.get(2).split(",")).filter(r -> !r.isBlank()).toList();
        return new CallerIdentity(user, roles, true);
    }

    /** Whether the node runs with the security plugin configured: an automatic resume without an identity must not run there. */
    static boolean securedNode(Settings settings) {
        return !settings.getByPrefix("plugins.security.").isEmpty() && !settings.getAsBoolean("plugins.security.disabled", false);
    }

    /** Why this identity cannot be injected (a secured cluster's resume then does not run), or null. */
    String problem() {
        if (!secured) {
            return null; // a plain cluster: nothing to inject, no permissions to check
        }
        if (user == null || roles.isEmpty()) {
            return "the security plugin gave no user and roles for the caller of the rebuild (e.g. the super admin by certificate)";
        }
        for (String name : concat()) {
            if (name.isBlank() || name.contains("|") || name.contains(",")) {
                return String.format(Locale.ROOT, "the name [%s] cannot be injected: roles injection takes no [|] or [,] in names", name);
            }
        }
        return null;
    }

    private List<String> concat() {
        List<String> all = new ArrayList<>(roles);
        all.add(0, user);
        return all;
    }

    /** The value of {@value #INJECTED_ROLES} that runs a request with these roles; only for an identity without a {@link #problem}. */
    String injected() {
        return user + "|" + String.join(",", roles);
    }
}
