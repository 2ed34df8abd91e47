package io.strata.context;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The context packer as it was before it became O(n log n) in its hits (commit b86586e): it re-sorted every passage and
 * re-costed every passage at every step. Kept, unchanged but for its name, as the baseline of {@code bin/strata-bench
 * packer} and as the oracle of {@code ContextPackerEquivalenceTests} (the new packer gives the same context).
 */
public final class BaselineContextPacker {
    private final TokenCounter counter;
    private final Map<String, Integer> counts = new HashMap<>();
    /** Token starts of each piece of a parent, relative to it, by document and piece start (see {@link #count}). */
    private final Map<String, int[]> pieceStarts = new HashMap<>();
    /** The counter gives no token starts: every span is counted from its text. */
    private boolean noStarts;

    public BaselineContextPacker(TokenCounter counter) {
        this.counter = counter;
    }

    private static final class Stretch {
        final String document;
        int start;
        int end;
        int rank;
        /** The hits it holds, by rank. */
        final java.util.TreeMap<Integer, String> hits = new java.util.TreeMap<>();
        boolean truncated;

        Stretch(String document, int start, int end, int rank) {
            this.document = document;
            this.start = start;
            this.end = end;
            this.rank = rank;
        }

        Stretch copy() {
            Stretch s = new Stretch(document, start, end, rank);
            s.hits.putAll(hits);
            s.truncated = truncated;
            return s;
        }
    }

    /**
     * How much a hit's score below the best one lowers its steps' value: weight {@code exp((score / best − 1) / 0.2)}, so a
     * hit at 0.8 of the best counts 0.37 of it. Chosen on the SQuAD sample and confirmed on Emma (bin/strata-eval --context):
     * scales from 0.15 to 0.3 with {@link #STEP_DECAY} 0.4 to 0.6 lie on one plateau (measurements.md, "Steps by what they
     * are worth").
     */
    static final double SCORE_SCALE = 0.2;
    /** Each growth step on one side of a passage is worth half the one before it. */
    static final double STEP_DECAY = 0.5;
    /**
     * The fewest tokens a lower hit's cut chunk may have: fewer are spent better around the passages already in. 16 to 32
     * found the same evidence within two SQuAD questions at every budget (measurements.md, "Steps by what they are worth").
     */
    static final int MIN_CUT_TOKENS = 24;

    public PackedContext pack(List<Seed> seeds, Map<String, SourceText> documents, ContextOptions options) {
        int separatorTokens = options.separator().isEmpty() ? 0 : counter.count(options.separator());
        List<Seed> ranked = seeds.stream().sorted(Comparator.comparingInt(Seed::rank)).toList();
        Map<Integer, Double> weights = weights(ranked);
        List<Stretch> stretches = new ArrayList<>();
        // value first: the next hit's seed (its weight) or a passage's next step on one side (its best hit's weight, halved
        // per step already taken on that side), whichever is worth more; a seed wins ties. Equal weights (no scores) give
        // every seed first, then growth in rounds, best passage first. A side that could not grow within the budget is
        // not tried again until its passage changes (a merge).
        Map<String, Integer> steps = new HashMap<>();
        Set<String> stuck = new java.util.HashSet<>();
        int next = 0;
        while (true) {
            Step step = bestStep(stretches, weights, steps, stuck);
            if (next < ranked.size() && (step == null || weights.get(ranked.get(next).rank()) >= step.value)) {
                stretches = seeded(stretches, ranked.get(next++), documents, separatorTokens, options.budget());
                continue;
            }
            if (step == null) {
                break;
            }
            Stretch s = find(stretches, step.rank);
            SourceText doc = documents.get(s.document);
            int to = step.right ? doc.nextEnd(s.end) : doc.previousStart(s.start);
            List<Stretch> grown = to < 0 ? null : grown(stretches, s, step.right ? s.start : to, step.right ? to : s.end, documents);
            if (grown != null && cost(grown, documents, separatorTokens) <= options.budget()) {
                stretches = grown;
                steps.merge(step.rank + ":" + step.right, 1, Integer::sum);
            } else {
                stuck.add(step.side);
            }
        }
        stretches = fill(stretches, documents, separatorTokens, options.budget());
        return render(stretches, documents, options);
    }

    /** A passage's next growth step on one side: the passage by its best hit's rank, the side's key in {@code stuck}, its value. */
    private record Step(int rank, boolean right, String side, double value) {}

    private static Step bestStep(List<Stretch> stretches, Map<Integer, Double> weights, Map<String, Integer> steps, Set<String> stuck) {
        Step best = null;
        for (Stretch s : byRank(stretches)) {
            int rank = s.hits.firstKey();
            if (s.truncated) {
                continue;
            }
            for (boolean right : new boolean[] {true, false}) {
                String side = rank + ":" + s.start + ":" + s.end + ":" + right;
                double value = weights.get(rank) * Math.pow(STEP_DECAY, 1 + steps.getOrDefault(rank + ":" + right, 0));
                if (!stuck.contains(side) && (best == null || value > best.value)) {
                    best = new Step(rank, right, side, value);
                }
            }
        }
        return best;
    }

    /**
     * Each hit's weight from its score relative to the best hit's ({@link #SCORE_SCALE}): how likely it is to hold the
     * evidence, as far as the scores tell. Without usable scores (a hit without one: sorted by a field; the best not above 0)
     * every hit weighs 1.
     */
    private static Map<Integer, Double> weights(List<Seed> ranked) {
        double best = ranked.stream().mapToDouble(Seed::score).max().orElse(Double.NaN);
        boolean usable = best > 0 && ranked.stream().noneMatch(s -> Double.isNaN(s.score()));
        Map<Integer, Double> out = new HashMap<>();
        for (Seed s : ranked) {
            out.put(s.rank(), usable ? Math.exp((s.score() / best - 1) / SCORE_SCALE) : 1.0);
        }
        return out;
    }

    /**
     * {@code stretches} with the seed's passage: its matched chunk when it fits, else the first of its alternatives that
     * fits, else — for the first passage — the first of its sentences inside its match that fits, else its chunk's first
     * words that fit the budget, or — for a lower hit, when at least {@link #MIN_CUT_TOKENS} are left — its chunk's first
     * words that fit what is left (the next hit's first words held the evidence more often than as many words around the
     * passages already in, bin/strata-eval --context at 128 tokens); else unchanged (the seed is skipped, so a smaller one
     * further down may still enter).
     */
    private List<Stretch> seeded(List<Stretch> stretches, Seed seed, Map<String, SourceText> documents, int separatorTokens, int budget) {
        SourceText doc = documents.get(seed.document());
        if (doc == null || seed.end() <= seed.start() || !doc.covered(seed.start(), seed.end())) {
            return stretches; // the caller cannot read that text
        }
        Stretch s = new Stretch(seed.document(), seed.start(), seed.end(), seed.rank());
        s.hits.put(seed.rank(), seed.hit());
        List<Stretch> next = with(stretches, s, documents);
        if (cost(next, documents, separatorTokens) <= budget) {
            return next;
        }
        // the best hit's passage takes only a finer chunk of its own match: a smaller chunk elsewhere in the parent that
        // fits whole held the evidence less often than the match cut to the budget (bin/strata-eval --context, 64 tokens)
        List<Stretch> alternative = firstThatFits(seed.alternatives(), stretches, seed, doc, documents, separatorTokens, budget,
            stretches.isEmpty());
        if (alternative != null) {
            return alternative;
        }
        if (stretches.isEmpty()) {
            // then the first of its sentences inside its match that fits: at 64 tokens, with θ 300, it held the SQuAD sample's
            // evidence 5 points more often than the chunk's first words (Emma: 3 questions more), the same at 128 tokens and
            // above; for lower hits sentences moved nothing beyond the CI, so they enter with their first words as before
            // (measurements.md, "The best hit's sentence at small budgets")
            List<Stretch> sentence = firstThatFits(seed.sentences(), stretches, seed, doc, documents, separatorTokens, budget, true);
            if (sentence != null) {
                return sentence;
            }
            Stretch cut = cutToFit(s, doc, budget);
            return cut == null ? stretches : List.of(cut);
        }
        int room = budget - cost(stretches, documents, separatorTokens) - separatorTokens;
        Stretch cut = room < MIN_CUT_TOKENS ? null : cutToFit(s, doc, room);
        List<Stretch> withCut = cut == null ? null : with(stretches, cut, documents);
        return withCut != null && cost(withCut, documents, separatorTokens) <= budget ? withCut : stretches;
    }

    /**
     * {@code stretches} with the first of {@code spans} (the seed's alternatives or sentences) that fits and that the caller
     * can read — with {@code insideMatch}, one within the seed's own chunk — or null.
     */
    private List<Stretch> firstThatFits(List<int[]> spans, List<Stretch> stretches, Seed seed, SourceText doc,
                                        Map<String, SourceText> documents, int separatorTokens, int budget, boolean insideMatch) {
        for (int[] span : spans) {
            if (span[1] <= span[0] || !doc.covered(span[0], span[1])
                || insideMatch && (span[0] < seed.start() || span[1] > seed.end())) {
                continue;
            }
            Stretch s = new Stretch(seed.document(), span[0], span[1], seed.rank());
            s.hits.put(seed.rank(), seed.hit());
            List<Stretch> next = with(stretches, s, documents);
            if (cost(next, documents, separatorTokens) <= budget) {
                return next;
            }
        }
        return null;
    }

    /** Word by word after, then before, each passage (best first), while the whole fits: binary search over word ends. */
    private List<Stretch> fill(List<Stretch> stretches, Map<String, SourceText> documents, int separatorTokens, int budget) {
        for (int rank : firstRanks(byRank(stretches))) {
            for (boolean right : new boolean[] {true, false}) {
                Stretch current = find(stretches, rank);
                if (current.truncated) {
                    continue;
                }
                SourceText doc = documents.get(current.document);
                int limit = right ? doc.nextEnd(current.end) : doc.previousStart(current.start);
                if (limit < 0) {
                    continue;
                }
                int[] cuts = right ? doc.wordEnds(current.end, limit) : reversed(doc.wordStarts(limit, current.start));
                int lo = 0;
                int hi = cuts.length - 1;
                List<Stretch> best = null;
                while (lo <= hi) { // the largest number of words that fits; more words never cost fewer tokens
                    int mid = (lo + hi) >>> 1;
                    int at = cuts[mid];
                    List<Stretch> next = at == (right ? current.end : current.start) ? null
                        : grown(stretches, current, right ? current.start : at, right ? at : current.end, documents);
                    if (next != null && cost(next, documents, separatorTokens) <= budget) {
                        best = next;
                        lo = mid + 1;
                    } else {
                        hi = mid - 1;
                    }
                }
                if (best != null) {
                    stretches = best;
                }
            }
        }
        return stretches;
    }

    /**
     * The best hit's rank of each passage: a handle that survives merges (the merged passage keeps every hit) and that two
     * hits with the same {@code _id} in two indices do not share.
     */
    private static List<Integer> firstRanks(List<Stretch> stretches) {
        List<Integer> out = new ArrayList<>(stretches.size());
        for (Stretch s : stretches) {
            out.add(s.hits.firstKey());
        }
        return out;
    }

    private static int[] reversed(int[] a) {
        int[] out = new int[a.length];
        for (int i = 0; i < a.length; i++) {
            out[i] = a[a.length - 1 - i];
        }
        return out;
    }

    private static Stretch find(List<Stretch> stretches, int rank) {
        for (Stretch s : stretches) {
            if (s.hits.containsKey(rank)) {
                return s;
            }
        }
        throw new IllegalStateException("passage of hit ranked [" + rank + "] lost");
    }

    /** The first words of {@code s} that fit in {@code budget} tokens, or null when not even one does. */
    private Stretch cutToFit(Stretch s, SourceText doc, int budget) {
        int[] ends = doc.wordEnds(s.start, s.end);
        int lo = 0;
        int hi = ends.length - 1;
        int found = -1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            if (tokens(s.document, doc, s.start, ends[mid]) <= budget) {
                found = mid;
                lo = mid + 1;
            } else {
                hi = mid - 1;
            }
        }
        if (found < 0) {
            return null;
        }
        Stretch cut = s.copy();
        cut.end = ends[found];
        cut.truncated = true;
        return cut;
    }

    /** {@code stretches} with {@code s}'s passage widened to {@code [start, end)}, merged with any it then touches. */
    private static List<Stretch> grown(List<Stretch> stretches, Stretch s, int start, int end, Map<String, SourceText> documents) {
        List<Stretch> others = new ArrayList<>(stretches.size());
        for (Stretch o : stretches) {
            if (o != s) {
                others.add(o);
            }
        }
        Stretch wide = s.copy();
        wide.start = start;
        wide.end = end;
        return with(others, wide, documents);
    }

    /** {@code stretches} plus {@code added}, merging every passage of its document that it overlaps or touches. */
    private static List<Stretch> with(List<Stretch> stretches, Stretch added, Map<String, SourceText> documents) {
        SourceText doc = documents.get(added.document);
        Stretch merged = added.copy();
        List<Stretch> out = new ArrayList<>(stretches.size() + 1);
        boolean changed = true;
        List<Stretch> rest = new ArrayList<>(stretches);
        while (changed) { // a merge can make the passage reach the next one
            changed = false;
            for (java.util.Iterator<Stretch> it = rest.iterator(); it.hasNext(); ) {
                Stretch o = it.next();
                if (o.document.equals(merged.document)
                    && (doc.touches(merged.end, o.start) && doc.touches(o.end, merged.start))) {
                    merged.start = Math.min(merged.start, o.start);
                    merged.end = Math.max(merged.end, o.end);
                    merged.rank = Math.min(merged.rank, o.rank);
                    merged.hits.putAll(o.hits);
                    merged.truncated |= o.truncated;
                    it.remove();
                    changed = true;
                }
            }
        }
        out.addAll(rest);
        out.add(merged);
        return out;
    }

    private int cost(List<Stretch> stretches, Map<String, SourceText> documents, int separatorTokens) {
        int total = Math.max(0, stretches.size() - 1) * separatorTokens;
        for (Stretch s : stretches) {
            total += tokens(s.document, documents.get(s.document), s.start, s.end);
        }
        return total;
    }

    /** Memoised by span: every candidate is costed over all passages, most of them unchanged since the last step. */
    private int tokens(String document, SourceText doc, int start, int end) {
        return counts.computeIfAbsent(document + '\u0000' + start + ':' + end, k -> count(document, doc, start, end));
    }

    /**
     * The tokens of a span (cut at whitespace, as every candidate is): those starting in it, from the token starts of each
     * piece it touches ({@link SourceText#piecesIn}: a parent's finest chunks), each tokenized once, when the counter gives
     * token starts; else the count of the span's text. Tokenizing every candidate passage, or every fetched parent whole,
     * was most of the processor's time (bin/strata-bench query).
     */
    private int count(String document, SourceText doc, int start, int end) {
        if (!noStarts) {
            int[] total = {0};
            doc.piecesIn(start, end, (text, at, from, to) -> {
                int[] starts = pieceStarts.computeIfAbsent(document + '\u0000' + from,
                    k -> counter.starts(text.substring(from - at, to - at)));
                if (starts == null) {
                    noStarts = true;
                } else {
                    total[0] += lowerBound(starts, end - from) - lowerBound(starts, start - from);
                }
            });
            if (!noStarts) {
                return total[0];
            }
        }
        return counter.count(doc.text(start, end));
    }

    /** Index of the first of {@code sorted} that is {@code >= value}. */
    private static int lowerBound(int[] sorted, int value) {
        int lo = 0;
        int hi = sorted.length;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (sorted[mid] < value) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    private static List<Stretch> byRank(List<Stretch> stretches) {
        List<Stretch> out = new ArrayList<>(stretches);
        out.sort(Comparator.comparingInt((Stretch s) -> s.rank).thenComparing(s -> s.document).thenComparingInt(s -> s.start));
        return out;
    }

    private PackedContext render(List<Stretch> stretches, Map<String, SourceText> documents, ContextOptions options) {
        List<Stretch> ordered = byRank(stretches);
        if (options.order() == ContextOptions.Order.DOCUMENT) {
            Map<String, Integer> docRank = new HashMap<>();
            for (Stretch s : ordered) {
                docRank.putIfAbsent(s.document, docRank.size());
            }
            ordered.sort(Comparator.comparingInt((Stretch s) -> docRank.get(s.document)).thenComparingInt(s -> s.start));
        }
        while (true) {
            List<Passage> passages = new ArrayList<>(ordered.size());
            List<String> texts = new ArrayList<>(ordered.size());
            for (Stretch s : ordered) {
                SourceText doc = documents.get(s.document);
                String text = doc.text(s.start, s.end);
                texts.add(text);
                // counted from its text: exact whatever the tokenizer (the packing's own counts are exact for WordPiece only)
                passages.add(new Passage(s.document, s.start, s.end, text, counter.count(text), s.rank, List.copyOf(s.hits.values()),
                    s.truncated));
            }
            String joined = String.join(options.separator(), texts);
            int total = joined.isEmpty() ? 0 : counter.count(joined);
            if (total <= options.budget() || ordered.isEmpty()) {
                return new PackedContext(total, options.budget(), passages, joined);
            }
            // a tokenizer that counts a concatenation above the sum of its parts: cut the last passage by a word
            Stretch last = ordered.get(ordered.size() - 1);
            int[] ends = documents.get(last.document).wordEnds(last.start, last.end);
            if (ends.length < 2) {
                ordered = new ArrayList<>(ordered.subList(0, ordered.size() - 1));
            } else {
                Stretch cut = last.copy();
                cut.end = ends[ends.length - 2];
                cut.truncated = true;
                ordered = new ArrayList<>(ordered.subList(0, ordered.size() - 1));
                ordered.add(cut);
            }
        }
    }
}
