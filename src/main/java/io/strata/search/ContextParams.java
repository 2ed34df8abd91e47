package io.strata.search;

import io.strata.chunking.ConfigMap;
import io.strata.context.ContextOptions;
import io.strata.model.ModelRef;

import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The options of {@code strata_context}: the processor's configuration sets defaults, a request's
 * {@code ext.strata_context} overrides them key by key. One parse place for both; errors name the key and what it allows.
 *
 * @param tokenizer the embedded model whose tokenizer counts the budget; null: the searched chunk index's model
 * @param neighbours whether passages may grow into the parents before and after a hit's parent (one more lookup)
 * @param seeds      what each hit's passage starts from: {@code chunk}, its matched chunk ({@code explain_child}), skipped
 *                   when it does not fit; {@code evidence} (the default: bin/strata-eval --context, both sets), the same,
 *                   but a hit whose matched chunk does not fit starts from the best of its other matched chunks that does
 *                   ({@code multi_granular}'s {@code evidence}) — for the best hit, one inside its matched chunk only
 */
public record ContextParams(int budget, String tokenizer, ContextOptions.Order order, String separator, boolean neighbours,
                            Seeds seeds) {
    public enum Seeds { CHUNK, EVIDENCE }

    public static final int MAX_BUDGET = 100_000;

    public static final ContextParams DEFAULTS = new ContextParams(512, null, ContextOptions.Order.RANK, ContextOptions.DEFAULT_SEPARATOR,
        true, Seeds.EVIDENCE);

    /** {@code base} with the keys of {@code config} applied; {@code owner} names the object in errors (e.g. {@code ext.strata_context}). */
    public static ContextParams parse(String owner, Map<String, Object> config, ContextParams base) {
        ConfigMap c = new ConfigMap(owner, "", new HashMap<>(config));
        int budget = c.intValue("budget", base.budget(), 1, MAX_BUDGET);
        String tokenizer = c.stringValue("tokenizer", base.tokenizer());
        if (tokenizer != null && !ModelRef.FOLDER_NAME.matcher(tokenizer).matches()) {
            throw c.error("tokenizer", "must name an embedded model (a folder of config/strata/models, e.g. [e5-small-v2]), got ["
                + tokenizer + "]");
        }
        ContextOptions.Order order = ContextOptions.Order.valueOf(c.enumValue("order", List.of("rank", "document"),
            base.order().name().toLowerCase(Locale.ROOT)).toUpperCase(Locale.ROOT));
        Object sep = c.remove("separator");
        if (sep != null && (!(sep instanceof String s) || s.length() > 100)) {
            throw c.error("separator", "must be a string of at most 100 characters, got [" + sep + "]");
        }
        boolean neighbours = c.booleanValue("neighbours", base.neighbours());
        Seeds seeds = Seeds.valueOf(c.enumValue("seeds", List.of("chunk", "evidence"), base.seeds().name().toLowerCase(Locale.ROOT))
            .toUpperCase(Locale.ROOT));
        c.rejectUnknown();
        return new ContextParams(budget, tokenizer, order, sep == null ? base.separator() : (String) sep, neighbours, seeds);
    }
}
