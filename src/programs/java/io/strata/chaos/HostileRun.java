package io.strata.chaos;

import io.strata.demo.Connection;
import io.strata.demo.RunArgs;
import org.apache.hc.core5.util.Timeout;
import org.opensearch.client.RestClient;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Hostile documents and queries, longer and seeded ({@code bin/strata-chaos hostile}): the checks of {@code HostileDocumentsIT}
 * ({@link HostileChecks}) over {@link HostileDocuments} of {@code rounds} seeds from {@code seed} on, at {@code scale}
 * (1: nestings 10^5 deep, a 10^6-character token, 10^5 paragraphs; above 1 the texts pass {@code _chunk}'s limit of 10^6
 * characters, which must then be its 400). Prints every document's answers and times; exits 1 when any check failed.
 *
 * <p>Arguments ({@code key=value}): {@code port} (STRATA_URL's, else 10500; a secured node's scheme, CA and credentials
 * from the environment, see {@link Connection}), {@code seed} (44), {@code scale} (1), {@code rounds} (3), {@code embed}
 * (false: the pipelines write the same chunk documents without vectors; true adds the embedding work, ~1 min per 10^5
 * words on 2 cores), {@code queries} (rounds of {@link HostileQueryChecks} after the documents, one seed each from {@code seed}
 * on; default {@code rounds}, 0: none).
 */
public final class HostileRun {
    private HostileRun() {}

    public static void main(String[] args) throws Exception {
        RunArgs a = RunArgs.parse(args, "port", "seed", "scale", "rounds", "embed", "queries");
        String url = Connection.nodes(a.string("port", null), 10500, 1).get(0);
        long seed = a.longValue("seed", 44);
        double scale = a.decimal("scale", 1);
        int rounds = a.integer("rounds", 3);
        if (scale <= 0 || scale > 9 || rounds < 1) {
            throw new IllegalArgumentException("scale in (0, 9] (the processor's max_chars is 10M characters), rounds >= 1");
        }
        List<String> failed = new ArrayList<>();
        int documents = 0;
        long start = System.nanoTime();
        try (RestClient client = Connection.builder(url)
            .setRequestConfigCallback(c -> c.setConnectTimeout(Timeout.ofSeconds(5)).setResponseTimeout(Timeout.ofMinutes(5))).build()) {
            HostileChecks checks = new HostileChecks(client, "hostile", a.bool("embed", false));
            checks.setUp();
            for (int round = 0; round < rounds; round++) {
                long s = seed + round;
                System.out.printf(Locale.ROOT, "hostile: seed %d, scale %s%n", s, scale);
                for (HostileDocuments.Doc doc : HostileDocuments.generate(s, scale)) {
                    HostileChecks.Outcome outcome = checks.check(doc, doc.name() + "-" + s);
                    System.out.println("  " + outcome);
                    documents++;
                    if (!outcome.problems().isEmpty()) {
                        failed.add("seed " + s + ": " + outcome);
                    }
                }
            }
            int queryRounds = a.integer("queries", rounds);
            if (queryRounds > 0) {
                HostileQueryChecks queries = new HostileQueryChecks(checks);
                queries.setUp(seed);
                for (int round = 0; round < queryRounds; round++) {
                    long s = seed + round;
                    System.out.printf(Locale.ROOT, "hostile queries: seed %d%n", s);
                    queries.run(s).forEach(p -> failed.add("queries, seed " + s + ": " + p));
                }
            }
        }
        System.out.printf(Locale.ROOT, "hostile: %d documents in %.1f s, %d problems%n", documents,
            (System.nanoTime() - start) / 1e9, failed.size());
        failed.forEach(f -> System.out.println("FAILED " + f));
        System.exit(failed.isEmpty() ? 0 : 1);
    }
}
