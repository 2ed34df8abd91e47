package io.strata.query;

import org.opensearch.core.ParseField;
import org.opensearch.core.common.io.stream.StreamInput;
import org.opensearch.core.common.io.stream.StreamOutput;
import org.opensearch.core.common.io.stream.Writeable;
import org.opensearch.core.xcontent.ObjectParser;
import org.opensearch.core.xcontent.ToXContentObject;
import org.opensearch.core.xcontent.XContentBuilder;
import org.opensearch.core.xcontent.XContentParser;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * How the hybrid mode of {@code multi_granular} fuses its two sides into one ranking of parents. Each side is the global
 * top-{@code window} list of parents of one search over all shards: the dense multi-granular MAX (cosine, LGMGC §3.2) and
 * the lexical multi-granular MAX (BM25 with global term statistics). Fusion is a function of those two global lists only,
 * so it gives the same parents with the same scores however the index is sharded.
 *
 * <ul>
 *   <li>{@code min_max} (default): each side's scores are mapped linearly onto [0, 1] over its window (top score → 1, the
 *   window's last → 0; a parent outside a side's window gets 0 there, the value of that side's window floor), and the
 *   fused score is {@code dense_weight · dense + (1 − dense_weight) · lexical}. Cosines and BM25 live on unrelated scales
 *   (BM25 grows with query length and term rarity), so they are compared by their place in this query's spread.</li>
 *   <li>{@code rrf}: weighted reciprocal rank fusion, {@code dense_weight / (rank_constant + r_dense) + (1 − dense_weight) /
 *   (rank_constant + r_lexical)} over the 1-based ranks in each window (a parent outside a window adds nothing).</li>
 * </ul>
 * The default (min_max, dense_weight 0.5, window 100) is what {@code bin/strata-eval} measured best on both bundled sets
 * together; see the README's retrieval-quality section for the figures and their confidence intervals.
 */
public record Fusion(Method method, double denseWeight, Integer window, int rankConstant) implements Writeable, ToXContentObject {
    public static final int DEFAULT_WINDOW = 100;
    public static final int MAX_WINDOW = 10_000;
    public static final double DEFAULT_DENSE_WEIGHT = 0.5;
    public static final int DEFAULT_RANK_CONSTANT = 60;
    public static final Fusion DEFAULT = new Fusion(Method.MIN_MAX, DEFAULT_DENSE_WEIGHT, null, DEFAULT_RANK_CONSTANT);

    public enum Method {
        MIN_MAX,
        RRF;

        String key() {
            return name().toLowerCase(Locale.ROOT);
        }

        static Method of(String key) {
            for (Method m : values()) {
                if (m.key().equals(key)) {
                    return m;
                }
            }
            throw new IllegalArgumentException(String.format(Locale.ROOT, "[%s] [fusion.method] must be one of %s, got [%s]",
                MultiGranularQueryBuilder.NAME, List.of(MIN_MAX.key(), RRF.key()), key));
        }
    }

    public Fusion {
        if (!(denseWeight >= 0 && denseWeight <= 1)) {
            throw new IllegalArgumentException(String.format(Locale.ROOT, "[%s] [fusion.dense_weight] must be in [0, 1], got [%s]",
                MultiGranularQueryBuilder.NAME, denseWeight));
        }
        if (window != null && (window < 1 || window > MAX_WINDOW)) {
            throw new IllegalArgumentException(String.format(Locale.ROOT, "[%s] [fusion.window] must be in [1, %d], got [%d]",
                MultiGranularQueryBuilder.NAME, MAX_WINDOW, window));
        }
        if (method != Method.RRF) {
            rankConstant = DEFAULT_RANK_CONSTANT; // meaningless for min_max: one value, so equal fusions compare equal
        }
        if (rankConstant < 0) {
            throw new IllegalArgumentException(String.format(Locale.ROOT, "[%s] [fusion.rank_constant] must be >= 0, got [%d]",
                MultiGranularQueryBuilder.NAME, rankConstant));
        }
    }

    /** Parents each side contributes: {@code window}, else the default, never fewer than the k parents asked for. */
    int windowFor(int k) {
        return window != null ? window : Math.max(k, DEFAULT_WINDOW);
    }

    /** A parent of one side's global list: the chunk index it lives in, its id and its score on that side. */
    public record SideHit(String index, String id, float score) {}

    /**
     * A fused parent: its score and, per side, the raw score (NaN when outside that side's window) and what it added to
     * the fused score.
     */
    public record Fused(String index, String id, float score, float dense, float lexical, double denseShare, double lexicalShare) {
        /** The side that added more to the fused score (dense on a tie). */
        public String side() {
            return lexicalShare > denseShare ? "lexical" : "dense";
        }
    }

    /**
     * Fuses two global lists (each best first) into the {@code k} best parents, best first. Ties are broken by index and id,
     * and tied scores are then stepped down by one float ulp each, so that every shard layout orders them the same way.
     */
    public List<Fused> fuse(List<SideHit> dense, List<SideHit> lexical, int k) {
        Comparator<Parent> ties = Comparator.comparing(Parent::index).thenComparing(Parent::id);
        List<Keyed<Parent>> fused = fuseKeyed(keyed(dense), keyed(lexical), k, ties);
        List<Fused> out = new ArrayList<>(fused.size());
        for (Keyed<Parent> f : fused) {
            out.add(new Fused(f.key().index(), f.key().id(), f.score(), f.dense(), f.lexical(), f.denseShare(), f.lexicalShare()));
        }
        return out;
    }

    /** A side's hit or a fused parent under any key: a hit of a global list, or a document of one shard's reader. */
    public record Keyed<K>(K key, float score, float dense, float lexical, double denseShare, double lexicalShare) {
        static <K> Keyed<K> side(K key, float score) {
            return new Keyed<>(key, score, Float.NaN, Float.NaN, 0, 0);
        }
    }

    private record Parent(String index, String id) {}

    private static List<Keyed<Parent>> keyed(List<SideHit> side) {
        List<Keyed<Parent>> out = new ArrayList<>(side.size());
        for (SideHit h : side) {
            out.add(Keyed.side(new Parent(h.index(), h.id()), h.score()));
        }
        return out;
    }

    /**
     * {@link #fuse} over keys that identify a parent ({@code equals}/{@code hashCode}); {@code ties} orders parents of equal
     * fused score, and is asked only for those.
     */
    <K> List<Keyed<K>> fuseKeyed(List<Keyed<K>> dense, List<Keyed<K>> lexical, int k, Comparator<K> ties) {
        Map<K, double[]> shares = new HashMap<>(); // key → {dense share, lexical share, dense score, lexical score}
        double w = denseWeight;
        add(shares, dense, 0, w);
        add(shares, lexical, 1, 1 - w);
        List<Keyed<K>> fused = new ArrayList<>(shares.size());
        for (Map.Entry<K, double[]> e : shares.entrySet()) {
            double[] s = e.getValue();
            fused.add(new Keyed<>(e.getKey(), (float) (s[0] + s[1]), (float) s[2], (float) s[3], s[0], s[1]));
        }
        fused.sort(Comparator.comparingDouble((Keyed<K> f) -> -f.score()));
        // ties are ordered only where they decide the k best (a run of equal scores that starts among them): on a shard the
        // comparator reads stored ids, and a window's tail is full of ties no hit depends on (both floors fuse to 0)
        int n = Math.min(k, fused.size());
        for (int start = 0, end; start < n; start = end) {
            end = start + 1;
            while (end < fused.size() && Float.compare(fused.get(end).score(), fused.get(start).score()) == 0) {
                end++;
            }
            if (end - start > 1) {
                fused.subList(start, end).sort(Comparator.comparing(Keyed::key, ties));
            }
        }
        List<Keyed<K>> top = new ArrayList<>(fused.subList(0, n));
        for (int i = 1; i < top.size(); i++) {
            Keyed<K> prev = top.get(i - 1);
            Keyed<K> f = top.get(i);
            if (f.score() >= prev.score()) {
                top.set(i, new Keyed<>(f.key(), Math.nextDown(prev.score()), f.dense(), f.lexical(), f.denseShare(), f.lexicalShare()));
            }
        }
        return top;
    }

    private <K> void add(Map<K, double[]> shares, List<Keyed<K>> side, int which, double weight) {
        if (side.isEmpty()) {
            return;
        }
        float top = side.get(0).score();
        float floor = side.get(side.size() - 1).score();
        for (int rank = 0; rank < side.size(); rank++) {
            Keyed<K> hit = side.get(rank);
            double[] s = shares.computeIfAbsent(hit.key(), x -> new double[] { 0, 0, Double.NaN, Double.NaN });
            s[2 + which] = hit.score();
            s[which] = weight * switch (method) {
                // a one-parent window, or a flat one, carries no spread: every parent of it counts fully
                case MIN_MAX -> top > floor ? (hit.score() - floor) / (double) (top - floor) : 1.0;
                case RRF -> 1.0 / (rankConstant + rank + 1);
            };
        }
    }

    private static final ParseField METHOD = new ParseField("method");
    private static final ParseField DENSE_WEIGHT = new ParseField("dense_weight");
    private static final ParseField WINDOW = new ParseField("window");
    private static final ParseField RANK_CONSTANT = new ParseField("rank_constant");

    private static final class Parsed {
        String method;
        Double denseWeight;
        Integer window;
        Integer rankConstant;
    }

    private static final ObjectParser<Parsed, Void> PARSER = new ObjectParser<>("fusion", Parsed::new);

    static {
        PARSER.declareString((p, v) -> p.method = v, METHOD);
        PARSER.declareDouble((p, v) -> p.denseWeight = v, DENSE_WEIGHT);
        PARSER.declareInt((p, v) -> p.window = v, WINDOW);
        PARSER.declareInt((p, v) -> p.rankConstant = v, RANK_CONSTANT);
    }

    public static Fusion fromXContent(XContentParser parser) {
        Parsed p;
        try {
            p = PARSER.apply(parser, null);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(String.format(Locale.ROOT, "[%s] [fusion] %s; allowed: [method] (%s), [dense_weight], "
                + "[window], [rank_constant] (rrf only)", MultiGranularQueryBuilder.NAME, e.getMessage(), "min_max, rrf"), e);
        }
        Method method = p.method == null ? DEFAULT.method() : Method.of(p.method);
        if (p.rankConstant != null && method != Method.RRF) {
            throw new IllegalArgumentException(String.format(Locale.ROOT, "[%s] [fusion.rank_constant] goes with [method: rrf] only",
                MultiGranularQueryBuilder.NAME));
        }
        return new Fusion(method, p.denseWeight == null ? DEFAULT_DENSE_WEIGHT : p.denseWeight, p.window,
            p.rankConstant == null ? DEFAULT_RANK_CONSTANT : p.rankConstant);
    }

    public Fusion(StreamInput in) throws IOException {
        this(in.readEnum(Method.class), in.readDouble(), in.readOptionalVInt(), in.readVInt());
    }

    @Override
    public void writeTo(StreamOutput out) throws IOException {
        out.writeEnum(method);
        out.writeDouble(denseWeight);
        out.writeOptionalVInt(window);
        out.writeVInt(rankConstant);
    }

    @Override
    public XContentBuilder toXContent(XContentBuilder builder, Params params) throws IOException {
        builder.startObject();
        builder.field(METHOD.getPreferredName(), method.key());
        builder.field(DENSE_WEIGHT.getPreferredName(), denseWeight);
        if (window != null) {
            builder.field(WINDOW.getPreferredName(), window);
        }
        if (method == Method.RRF) {
            builder.field(RANK_CONSTANT.getPreferredName(), rankConstant);
        }
        return builder.endObject();
    }
}
