package io.strata.standin;

import org.opensearch.OpenSearchSecurityException;
import org.opensearch.action.ActionRequest;
import org.opensearch.action.IndicesRequest;
import org.opensearch.action.support.ActionFilter;
import org.opensearch.action.support.ActionFilterChain;
import org.opensearch.common.util.concurrent.ThreadContext;
import org.opensearch.core.action.ActionListener;
import org.opensearch.core.action.ActionResponse;
import org.opensearch.core.rest.RestStatus;
import org.opensearch.tasks.Task;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.function.Supplier;
import java.util.stream.Collectors;

/**
 * TEST ONLY: a stand-in for the security plugin's index permissions. The request headers {@value #DENY_WRITE} and
 * {@value #DENY_READ} (comma-separated index names; the REST layer copies them into the thread context, see
 * {@link MlStandinPlugin#getRestHeaders}, and transport requests carry them to other nodes) deny the caller:
 * <ul>
 *   <li>{@value #DENY_WRITE}: every {@code indices:data/write/*} action (bulk shard, index, delete, update) and index
 *       creation, mapping updates and index deletion on those indices;</li>
 *   <li>{@value #DENY_READ}: every {@code indices:data/read/*} action (get, multi-get shard, search) on them.</li>
 * </ul>
 * Like the security plugin's filter it runs first and answers 403 ({@link OpenSearchSecurityException}, FORBIDDEN) on the
 * concrete request — for a bulk that is the shard-level {@code indices:data/write/bulk[s]}, so each item of the denied
 * index fails and the others proceed. A write that runs with a stashed (system) thread context loses the headers and
 * is allowed: exactly what a plugin must not do with a caller's writes.
 */
public final class StandinSecurityFilter implements ActionFilter {
    public static final String DENY_WRITE = "standin-deny-write";
    public static final String DENY_READ = "standin-deny-read";
    private static final List<String> WRITE_ADMIN = List.of("indices:admin/create", "indices:admin/mapping/put",
        "indices:admin/delete", "indices:admin/auto_create");

    private final Supplier<ThreadContext> threadContext;

    public StandinSecurityFilter(Supplier<ThreadContext> threadContext) {
        this.threadContext = threadContext;
    }

    @Override
    public int order() {
        return Integer.MIN_VALUE; // first, like the security plugin
    }

    @Override
    public <Request extends ActionRequest, Response extends ActionResponse> void apply(Task task, String action, Request request,
                                                                                       ActionListener<Response> listener,
                                                                                       ActionFilterChain<Request, Response> chain) {
        ThreadContext context = threadContext.get();
        String header = null;
        if (action.startsWith("indices:data/write/") || WRITE_ADMIN.stream().anyMatch(action::startsWith)) {
            header = DENY_WRITE;
        } else if (action.startsWith("indices:data/read/")) {
            header = DENY_READ;
        }
        String value = context == null || header == null ? null : context.getHeader(header);
        if (value != null && request instanceof IndicesRequest indices && indices.indices() != null) {
            Set<String> denied = Arrays.stream(value.split(",")).map(String::strip).collect(Collectors.toSet());
            for (String index : indices.indices()) {
                if (denied.contains(index)) {
                    listener.onFailure(new OpenSearchSecurityException(String.format(Locale.ROOT,
                        "no permissions for [%s] on index [%s] (%s)", action, index, header), RestStatus.FORBIDDEN));
                    return;
                }
            }
        }
        chain.proceed(task, action, request, listener);
    }
}
