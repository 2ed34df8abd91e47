package io.strata.context;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.TreeMap;

/**
 * Fills a token budget from ranked hits: the matched chunks, then their surroundings, by what each step is worth.
 *
 * <ul>
 *   <li><b>Seeds</b>: each hit's matched chunk, best hit first, when it fits; else the first of the hit's other matched
 *       chunks ({@link Seed#alternatives}) that fits — for the best hit, only a finer one inside its matched chunk; else, for
 *       the best hit, the first of its sentences ({@link Seed#sentences}) inside its matched chunk that fits, else its
 *       chunk's first words that fit, and for a lower one its chunk's first words when at least
 *       {@value #MIN_CUT_TOKENS} tokens are left ({@code truncated}); else it is skipped, so a smaller one further down may
 *       still enter.</li>
 *   <li><b>Growth</b>: a passage takes in the next chunk after it or before it, at the finest level its parents have
 *       (siblings, then the rest of the parent, then the neighbouring parents the caller could read), while the whole fits.
 *       A passage that meets another of the same document merges with it.</li>
 *   <li><b>Order</b>: each hit weighs {@code exp((score / best score − 1) / 0.2)} (1 for all without scores); the next
 *       step is the next hit's seed, worth its weight, or a passage's next growth step on one side, worth its best hit's
 *       weight times 0.5 per step already taken on that side, whichever is worth more (a seed wins ties). With equal
 *       weights that is breadth first: every hit's seed, then growth in rounds, best passage first — a context that holds
 *       the best chunk of each of the top hits beats one that holds the surroundings of the first hit only, whenever the
 *       first hit is wrong. With the scores, a hit far below the best one waits until the best one's surroundings are in:
 *       on the SQuAD sample, with θ 300, evidence recall at 512 and 1024 tokens rose from 95.7 / 96.7 % to 97.6 / 98.9 %
 *       (bin/strata-eval --context; measurements.md).</li>
 *   <li><b>Fill</b>: what is left goes to the passages in rank order, word by word, after then before them.</li>
 * </ul>
 *
 * <p>Tokens: every candidate is costed as the sum of its passages' own counts plus the separators' — with a counter that
 * gives token starts, the tokens starting in each passage, each piece of a parent tokenized once — and the final text
 * is counted once more as a whole, each passage too; a tokenizer whose count of a concatenation exceeds the sum (none of
 * the bundled WordPiece ones: they split at whitespace first) gets the last passage cut until the whole fits. So
 * {@link PackedContext#tokens()} is the exact count of {@link PackedContext#text()} and never exceeds the budget, and each
 * passage's {@code tokens} is the exact count of its text.
 *
 * <p>Work: O(n log n) in the hits (plus the text it reads). Each passage keeps its own count; a candidate is costed from the
 * running total and the counts of what it adds or merges (token starts are additive over spans), the next growth step comes
 * from a priority queue whose entries a passage's change makes stale, and a passage finds the ones it may merge with in its
 * document's passages ordered by start. Re-sorting and re-costing every passage at every step took 3.3 s for 1,000 hits
 * (bin/strata-bench packer). A counter without token starts is counted per candidate passage, from its text.
 */
public final class ContextPacker {
    private final TokenCounter counter;
    /** Counts by span, for a counter without token starts. */
    private final Map<String, Integer> counts = new HashMap<>();
    /** Token starts of each piece of a parent, relative to it, by document and piece start (see {@link #count}). */
    private final Map<String, Map<Integer, int[]>> pieceStarts = new HashMap<>();
    /** The counter gives no token starts: every span is counted from its text. */
    private boolean noStarts;

    public ContextPacker(TokenCounter counter) {
        this.counter = counter;
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
        return new Packing(documents, options).run(seeds);
    }

    private static final class Stretch {
        final String document;
        int start;
        int end;
        /** Its best hit's rank (the first key of {@link #hits}). */
        int rank;
        /** The hits it holds, by rank. */
        TreeMap<Integer, String> hits = new TreeMap<>();
        boolean truncated;
        /** The exact count of its span. */
        int tokens;
        /** Bumped at every change: queued steps of an older version are stale. */
        int version;
        /** In the context (false: not yet added, or merged into another). */
        boolean alive;

        Stretch(String document, int start, int end, int rank) {
            this.document = document;
            this.start = start;
            this.end = end;
            this.rank = rank;
        }
    }

    /** A passage's next growth step on one side, worth {@code value}, queued for {@code stretch} at {@code version}. */
    private record Step(double value, int rank, boolean right, Stretch stretch, int version) {}

    /**
     * What adding {@code self} (a new passage) or widening it (one in the context) to {@code [start, end)} makes: the merged
     * passage's span and count, the passages it takes in, and the context's total count and passage count after it.
     */
    private record Plan(Stretch self, int start, int end, int tokens, boolean truncated, List<Stretch> absorbed, long total,
                        int passages, int cost) {}

    /** One pack: the passages in the context and what finds and costs them. */
    private final class Packing {
        private final Map<String, SourceText> documents;
        private final ContextOptions options;
        private final int separatorTokens;
        /** Each document's passages by start: disjoint, no two touching. */
        private final Map<String, TreeMap<Integer, Stretch>> byDocument = new HashMap<>();
        /** Every hit's passage by the hit's rank. */
        private final Map<Integer, Stretch> byHit = new HashMap<>();
        private long total;
        private int passages;
        private Map<Integer, Double> weights;
        /** Steps already taken, by passage (its best hit's rank) and side. */
        private final Map<Long, Integer> steps = new HashMap<>();
        /** Sides that could not grow within the budget, by rank, span and side: not tried again until the passage changes. */
        private final Set<String> stuck = new HashSet<>();
        private final PriorityQueue<Step> queue = new PriorityQueue<>((a, b) -> a.value != b.value ? Double.compare(b.value, a.value)
            : a.rank != b.rank ? Integer.compare(a.rank, b.rank) : Boolean.compare(b.right, a.right));
        private boolean growing = true;

        Packing(Map<String, SourceText> documents, ContextOptions options) {
            this.documents = documents;
            this.options = options;
            this.separatorTokens = options.separator().isEmpty() ? 0 : counter.count(options.separator());
        }

        PackedContext run(List<Seed> seeds) {
            List<Seed> ranked = seeds.stream().sorted(Comparator.comparingInt(Seed::rank)).toList();
            weights = weights(ranked);
            // value first: the next hit's seed (its weight) or a passage's next step on one side (its best hit's weight, halved
            // per step already taken on that side), whichever is worth more; a seed wins ties, and among steps of equal value
            // the better-ranked passage's, its right side first. Equal weights (no scores) give every seed first, then growth in
            // rounds, best passage first. A side that could not grow within the budget is not tried again until its passage
            // changes.
            int next = 0;
            while (true) {
                Step step = peek();
                if (next < ranked.size() && (step == null || weights.get(ranked.get(next).rank()) >= step.value())) {
                    seed(ranked.get(next++));
                    continue;
                }
                if (step == null) {
                    break;
                }
                queue.poll();
                Stretch s = step.stretch();
                SourceText doc = documents.get(s.document);
                int to = step.right() ? doc.nextEnd(s.end) : doc.previousStart(s.start);
                Plan grown = to < 0 ? null : widened(s, step.right() ? s.start : to, step.right() ? to : s.end);
                if (grown != null && grown.cost() <= options.budget()) {
                    steps.merge(side(step.rank(), step.right()), 1, Integer::sum);
                    commit(grown);
                } else {
                    stuck.add(step.rank() + ":" + s.start + ":" + s.end + ":" + step.right());
                }
            }
            growing = false;
            fill();
            return render(alive(), documents, options);
        }

        private Step peek() {
            while (!queue.isEmpty()) {
                Step s = queue.peek();
                if (s.stretch().alive && s.stretch().version == s.version()) {
                    return s;
                }
                queue.poll();
            }
            return null;
        }

        private long side(int rank, boolean right) {
            return 2L * rank + (right ? 1 : 0);
        }

        /** Queues both sides of a passage that changed, at their values now (none for a cut passage). */
        private void queue(Stretch s) {
            if (!growing || s.truncated) {
                return;
            }
            for (boolean right : new boolean[] {true, false}) {
                if (!stuck.contains(s.rank + ":" + s.start + ":" + s.end + ":" + right)) {
                    double value = weights.get(s.rank) * Math.pow(STEP_DECAY, 1 + steps.getOrDefault(side(s.rank, right), 0));
                    queue.add(new Step(value, s.rank, right, s, s.version));
                }
            }
        }

        private int cost() {
            return (int) Math.min(Integer.MAX_VALUE, total + (long) Math.max(0, passages - 1) * separatorTokens);
        }

        /**
         * The seed's passage: its matched chunk when it fits, else the first of its alternatives that fits, else — for the first
         * passage — the first of its sentences inside its match that fits, else its chunk's first words that fit the budget,
         * or — for a lower hit, when at least {@link #MIN_CUT_TOKENS} are left — its chunk's first words that fit what is left
         * (the next hit's first words held the evidence more often than as many words around the passages already in,
         * bin/strata-eval --context at 128 tokens); else nothing (the seed is skipped, so a smaller one further down may still
         * enter).
         */
        private void seed(Seed seed) {
            SourceText doc = documents.get(seed.document());
            if (doc == null || seed.end() <= seed.start() || !doc.covered(seed.start(), seed.end())) {
                return; // the caller cannot read that text
            }
            Stretch s = stretch(seed, seed.start(), seed.end());
            Plan whole = added(s);
            if (whole.cost() <= options.budget()) {
                commit(whole);
                return;
            }
            // the best hit's passage takes only a finer chunk of its own match: a smaller chunk elsewhere in the parent that
            // fits whole held the evidence less often than the match cut to the budget (bin/strata-eval --context, 64 tokens)
            boolean first = passages == 0;
            if (firstThatFits(seed.alternatives(), seed, doc, first)) {
                return;
            }
            if (first) {
                // then the first of its sentences inside its match that fits: at 64 tokens, with θ 300, it held the SQuAD sample's
                // evidence 5 points more often than the chunk's first words (Emma: 3 questions more), the same at 128 tokens and
                // above; for lower hits sentences moved nothing beyond the CI, so they enter with their first words as before
                // (measurements.md, "The best hit's sentence at small budgets")
                if (firstThatFits(seed.sentences(), seed, doc, true)) {
                    return;
                }
                Stretch cut = cutToFit(s, doc, options.budget());
                if (cut != null) {
                    commit(added(cut));
                }
                return;
            }
            int room = options.budget() - cost() - separatorTokens;
            Stretch cut = room < MIN_CUT_TOKENS ? null : cutToFit(s, doc, room);
            Plan withCut = cut == null ? null : added(cut);
            if (withCut != null && withCut.cost() <= options.budget()) {
                commit(withCut);
            }
        }

        private Stretch stretch(Seed seed, int start, int end) {
            Stretch s = new Stretch(seed.document(), start, end, seed.rank());
            s.hits.put(seed.rank(), seed.hit());
            s.tokens = tokens(s.document, documents.get(s.document), start, end);
            return s;
        }

        /**
         * Adds the first of {@code spans} (the seed's alternatives or sentences) that fits and that the caller can read — with
         * {@code insideMatch}, one within the seed's own chunk; whether one did.
         */
        private boolean firstThatFits(List<int[]> spans, Seed seed, SourceText doc, boolean insideMatch) {
            for (int[] span : spans) {
                if (span[1] <= span[0] || !doc.covered(span[0], span[1])
                    || insideMatch && (span[0] < seed.start() || span[1] > seed.end())) {
                    continue;
                }
                Plan next = added(stretch(seed, span[0], span[1]));
                if (next.cost() <= options.budget()) {
                    commit(next);
                    return true;
                }
            }
            return false;
        }

        /** Word by word after, then before, each passage (best first), while the whole fits: binary search over word ends. */
        private void fill() {
            List<Integer> order = new ArrayList<>();
            for (Stretch s : alive()) {
                order.add(s.rank);
            }
            for (int rank : order) {
                for (boolean right : new boolean[] {true, false}) {
                    Stretch current = byHit.get(rank);
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
                    Plan best = null;
                    while (lo <= hi) { // the largest number of words that fits; more words never cost fewer tokens
                        int mid = (lo + hi) >>> 1;
                        int at = cuts[mid];
                        Plan next = at == (right ? current.end : current.start) ? null
                            : widened(current, right ? current.start : at, right ? at : current.end);
                        if (next != null && next.cost() <= options.budget()) {
                            best = next;
                            lo = mid + 1;
                        } else {
                            hi = mid - 1;
                        }
                    }
                    if (best != null) {
                        commit(best);
                    }
                }
            }
        }

        /** The passages, best hit first. */
        private List<Stretch> alive() {
            List<Stretch> out = new ArrayList<>(passages);
            for (TreeMap<Integer, Stretch> stretches : byDocument.values()) {
                out.addAll(stretches.values());
            }
            out.sort(BY_RANK);
            return out;
        }

        /** {@code s}, a new passage, added. */
        private Plan added(Stretch s) {
            return plan(s, s.start, s.end, s.tokens);
        }

        /** {@code s}, a passage of the context, widened to {@code [start, end)}. */
        private Plan widened(Stretch s, int start, int end) {
            SourceText doc = documents.get(s.document);
            int tokens = noStarts ? tokens(s.document, doc, start, end)
                : s.tokens + tokens(s.document, doc, start, s.start) + tokens(s.document, doc, s.end, end);
            return plan(s, start, end, tokens);
        }

        /**
         * {@code self} at {@code [start, end)} ({@code tokens}), merged with every passage of its document that it overlaps or
         * touches (a merge can make it reach the next one). Only the neighbours by start can touch it: the passages of a
         * document are disjoint and no two touch, and a passage further away touches only if the nearer one does.
         */
        private Plan plan(Stretch self, int start, int end, int tokens) {
            SourceText doc = documents.get(self.document);
            TreeMap<Integer, Stretch> stretches = byDocument.getOrDefault(self.document, EMPTY);
            Set<Stretch> absorbed = Collections.newSetFromMap(new IdentityHashMap<>());
            int ms = start;
            int me = end;
            long t = tokens;
            boolean truncated = self.truncated;
            boolean changed = true;
            while (changed) {
                changed = false;
                for (Stretch o : stretches.tailMap(ms, true).values()) {
                    if (o == self || absorbed.contains(o)) {
                        continue;
                    }
                    if (!doc.touches(me, o.start)) {
                        break;
                    }
                    t = union(doc, self.document, t, ms, me, o);
                    me = Math.max(me, o.end);
                    truncated |= o.truncated;
                    absorbed.add(o);
                    changed = true;
                }
                Map.Entry<Integer, Stretch> lower = stretches.lowerEntry(ms);
                if (lower != null && lower.getValue() != self && doc.touches(lower.getValue().end, ms)) {
                    Stretch o = lower.getValue();
                    t = union(doc, self.document, t, ms, me, o);
                    ms = o.start;
                    me = Math.max(me, o.end);
                    truncated |= o.truncated;
                    absorbed.add(o);
                    changed = true;
                }
            }
            if (noStarts && !absorbed.isEmpty()) {
                t = tokens(self.document, doc, ms, me);
            }
            long after = total - (self.alive ? self.tokens : 0) + t;
            int count = passages + (self.alive ? 0 : 1) - absorbed.size();
            for (Stretch o : absorbed) {
                after -= o.tokens;
            }
            int cost = (int) Math.min(Integer.MAX_VALUE, after + (long) Math.max(0, count - 1) * separatorTokens);
            return new Plan(self, ms, me, (int) t, truncated, new ArrayList<>(absorbed), after, count, cost);
        }

        /** The count of {@code [ms, me)} (counted {@code t}) joined with {@code o}: token starts add up over spans. */
        private long union(SourceText doc, String document, long t, int ms, int me, Stretch o) {
            if (noStarts) {
                return t; // counted from the merged text at the end
            }
            if (o.start >= me) {
                return t + o.tokens + tokens(document, doc, me, o.start);
            }
            if (o.end <= ms) {
                return t + o.tokens + tokens(document, doc, o.end, ms);
            }
            return t + o.tokens - tokens(document, doc, Math.max(ms, o.start), Math.min(me, o.end));
        }

        /**
         * Applies a plan: the passage that holds most hits takes in the others (so a hit changes passage O(log n) times), and
         * its new span and count replace the old.
         */
        private void commit(Plan p) {
            Stretch keep = p.self();
            for (Stretch o : p.absorbed()) {
                if (o.hits.size() > keep.hits.size()) {
                    keep = o;
                }
            }
            List<Stretch> involved = new ArrayList<>(p.absorbed());
            involved.add(p.self());
            for (Stretch o : involved) {
                if (o.alive) {
                    byDocument.get(o.document).remove(o.start);
                }
                if (o != keep) {
                    o.alive = false;
                    o.version++;
                    keep.hits.putAll(o.hits);
                    for (Integer rank : o.hits.keySet()) {
                        byHit.put(rank, keep);
                    }
                }
            }
            if (!keep.alive) {
                for (Integer rank : keep.hits.keySet()) {
                    byHit.put(rank, keep);
                }
            }
            keep.start = p.start();
            keep.end = p.end();
            keep.rank = keep.hits.firstKey();
            keep.truncated = p.truncated();
            keep.tokens = p.tokens();
            keep.version++;
            keep.alive = true;
            byDocument.computeIfAbsent(keep.document, d -> new TreeMap<>()).put(keep.start, keep);
            total = p.total();
            passages = p.passages();
            queue(keep);
        }

        /** The first words of {@code s} that fit in {@code budget} tokens (a new passage, cut), or null when not even one does. */
        private Stretch cutToFit(Stretch s, SourceText doc, int budget) {
            int[] ends = doc.wordEnds(s.start, s.end);
            int lo = 0;
            int hi = ends.length - 1;
            int found = -1;
            int foundTokens = 0;
            while (lo <= hi) {
                int mid = (lo + hi) >>> 1;
                int t = tokens(s.document, doc, s.start, ends[mid]);
                if (t <= budget) {
                    found = mid;
                    foundTokens = t;
                    lo = mid + 1;
                } else {
                    hi = mid - 1;
                }
            }
            if (found < 0) {
                return null;
            }
            Stretch cut = new Stretch(s.document, s.start, ends[found], s.rank);
            cut.hits.putAll(s.hits);
            cut.truncated = true;
            cut.tokens = foundTokens;
            return cut;
        }
    }

    private static final TreeMap<Integer, Stretch> EMPTY = new TreeMap<>();

    private static final Comparator<Stretch> BY_RANK = Comparator.comparingInt((Stretch s) -> s.rank)
        .thenComparing(s -> s.document).thenComparingInt(s -> s.start);

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

    private static int[] reversed(int[] a) {
        int[] out = new int[a.length];
        for (int i = 0; i < a.length; i++) {
            out[i] = a[a.length - 1 - i];
        }
        return out;
    }

    /**
     * The tokens of {@code [start, end)}: with token starts, those starting in it (additive over spans); else counted from
     * its text, memoised by span.
     */
    private int tokens(String document, SourceText doc, int start, int end) {
        if (end <= start) {
            return 0;
        }
        if (!noStarts) {
            int n = count(document, doc, start, end);
            if (!noStarts) {
                return n;
            }
        }
        return counts.computeIfAbsent(document + '\u0000' + start + ':' + end, k -> counter.count(doc.text(start, end)));
    }

    /**
     * The tokens starting in a span (cut at whitespace, as every candidate is), from the token starts of each piece it
     * touches ({@link SourceText#piecesIn}: a parent's finest chunks), each tokenized once. Tokenizing every candidate
     * passage, or every fetched parent whole, was most of the processor's time (bin/strata-bench query). Sets
     * {@link #noStarts} when the counter gives none.
     */
    private int count(String document, SourceText doc, int start, int end) {
        Map<Integer, int[]> starts = pieceStarts.computeIfAbsent(document, d -> new HashMap<>());
        int[] total = {0};
        doc.piecesIn(start, end, (text, at, from, to) -> {
            if (noStarts) {
                return;
            }
            int[] s = starts.computeIfAbsent(from, k -> counter.starts(text.substring(from - at, to - at)));
            if (s == null) {
                noStarts = true;
            } else {
                total[0] += lowerBound(s, end - from) - lowerBound(s, start - from);
            }
        });
        return total[0];
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

    private PackedContext render(List<Stretch> stretches, Map<String, SourceText> documents, ContextOptions options) {
        List<Stretch> ordered = new ArrayList<>(stretches);
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
                Stretch cut = new Stretch(last.document, last.start, ends[ends.length - 2], last.rank);
                cut.hits.putAll(last.hits);
                cut.truncated = true;
                ordered = new ArrayList<>(ordered.subList(0, ordered.size() - 1));
                ordered.add(cut);
            }
        }
    }
}
