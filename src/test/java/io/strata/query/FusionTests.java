package io.strata.query;

import org.junit.Test;

import java.util.List;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

/** The fusion of the two global side lists into one ranking of parents. */
public class FusionTests {
    private static Fusion.SideHit hit(String id, float score) {
        return new Fusion.SideHit("idx", id, score);
    }

    private static List<String> ids(List<Fusion.Fused> fused) {
        return fused.stream().map(Fusion.Fused::id).toList();
    }

    @Test
    public void testMinMax_mapsEachSideOntoZeroToOne_andWeighsThem() {
        Fusion f = new Fusion(Fusion.Method.MIN_MAX, 0.5, null, Fusion.DEFAULT_RANK_CONSTANT);
        // dense: a 1.0, b 0.5, c 0.0 after normalisation; lexical: c 1.0, a 0.5, d 0.0
        List<Fusion.Fused> out = f.fuse(List.of(hit("a", 0.9f), hit("b", 0.8f), hit("c", 0.7f)),
            List.of(hit("c", 12f), hit("a", 8f), hit("d", 4f)), 10);
        assertEquals(List.of("a", "c", "b", "d"), ids(out));
        assertEquals(0.75, out.get(0).score(), 1e-6); // 0.5 * 1 + 0.5 * 0.5
        assertEquals(0.5, out.get(1).score(), 1e-6); // 0.5 * 0 + 0.5 * 1
        assertEquals(0.25, out.get(2).score(), 1e-6); // b: dense only
        assertEquals(0.0, out.get(3).score(), 1e-6);
        assertEquals(0.9f, out.get(0).dense(), 0f);
        assertEquals(8f, out.get(0).lexical(), 0f);
        assertTrue("b is outside the lexical window", Float.isNaN(out.get(2).lexical()));
        assertEquals("dense", out.get(0).side());
        assertEquals("lexical", out.get(1).side());
    }

    @Test
    public void testMinMax_denseWeightOneIsTheDenseRanking_zeroTheLexicalOne() {
        List<Fusion.SideHit> dense = List.of(hit("a", 0.9f), hit("b", 0.8f), hit("c", 0.7f));
        List<Fusion.SideHit> lexical = List.of(hit("c", 12f), hit("b", 8f), hit("a", 4f));
        assertEquals(List.of("a", "b", "c"), ids(new Fusion(Fusion.Method.MIN_MAX, 1, null, 0).fuse(dense, lexical, 3)));
        assertEquals(List.of("c", "b", "a"), ids(new Fusion(Fusion.Method.MIN_MAX, 0, null, 0).fuse(dense, lexical, 3)));
    }

    @Test
    public void testRrf_isWeightedReciprocalRank() {
        Fusion f = new Fusion(Fusion.Method.RRF, 0.25, null, 10);
        List<Fusion.Fused> out = f.fuse(List.of(hit("a", 0.9f), hit("b", 0.8f)), List.of(hit("b", 5f), hit("c", 3f)), 10);
        assertEquals(List.of("b", "c", "a"), ids(out));
        assertEquals(0.25 / 12 + 0.75 / 11, out.get(0).score(), 1e-6);
        assertEquals(0.75 / 12, out.get(1).score(), 1e-6);
        assertEquals(0.25 / 11, out.get(2).score(), 1e-6);
    }

    @Test
    public void testFuse_keepsK_andStepsTiedScoresDownInIdOrder() {
        Fusion f = new Fusion(Fusion.Method.RRF, 0.5, null, 60);
        // a (dense rank 1) and x (lexical rank 1) tie exactly; so do b and y
        List<Fusion.Fused> out = f.fuse(List.of(hit("b", 0.9f), hit("a", 0.8f)), List.of(hit("y", 5f), hit("x", 3f)), 3);
        assertEquals(List.of("b", "y", "a"), ids(out));
        assertTrue(out.get(0).score() > out.get(1).score());
        assertEquals(Math.nextDown(out.get(0).score()), out.get(1).score(), 0f);
        assertTrue(out.get(1).score() > out.get(2).score());
    }

    @Test
    public void testFuse_sameIdInTwoIndices_areTwoParents() {
        Fusion f = Fusion.DEFAULT;
        List<Fusion.Fused> out = f.fuse(List.of(new Fusion.SideHit("i1", "a", 0.9f), new Fusion.SideHit("i2", "a", 0.5f)),
            List.of(new Fusion.SideHit("i2", "a", 3f)), 10);
        assertEquals(2, out.size());
        // a tie at 0.5 (i1/a: dense 1 · 0.5; i2/a: dense 0 + lexical 1 · 0.5), broken by index name
        assertEquals(List.of("i1", "i2"), out.stream().map(Fusion.Fused::index).toList());
        assertTrue(Float.isNaN(out.get(0).lexical()));
        assertEquals(3f, out.get(1).lexical(), 0f);
    }

    @Test
    public void testFuse_oneSideEmpty_ranksByTheOther() {
        List<Fusion.Fused> out = Fusion.DEFAULT.fuse(List.of(), List.of(hit("c", 3f), hit("d", 2f), hit("e", 1f)), 2);
        assertEquals(List.of("c", "d"), ids(out));
        assertEquals(0.5, out.get(0).score(), 1e-6);
    }

    @Test
    public void testWindow_defaultsToAHundredButNeverBelowK() {
        assertEquals(100, Fusion.DEFAULT.windowFor(10));
        assertEquals(300, Fusion.DEFAULT.windowFor(300));
        assertEquals(40, new Fusion(Fusion.Method.MIN_MAX, 0.5, 40, 0).windowFor(10));
    }

    /**
     * One shard's fusion keys parents by document and orders ties by {@code _id}, which it reads only for tied parents: the
     * same ranking and scores as the fusion of the same lists keyed by id.
     */
    @Test
    public void testFuseKeyed_ordersTiesByTheGivenOrder_asksItOnlyForTies_andAgreesWithTheIdKeyedFusion() {
        Fusion f = new Fusion(Fusion.Method.RRF, 0.5, null, 60);
        java.util.Map<Integer, String> idOf = java.util.Map.of(1, "b", 2, "a", 3, "y", 4, "x", 5, "c");
        java.util.Set<Integer> asked = new java.util.HashSet<>();
        java.util.Comparator<Integer> byId = java.util.Comparator.comparing(doc -> {
            asked.add(doc);
            return idOf.get(doc);
        });
        List<Fusion.Keyed<Integer>> dense = List.of(Fusion.Keyed.side(1, 0.9f), Fusion.Keyed.side(2, 0.8f), Fusion.Keyed.side(5, 0.7f));
        List<Fusion.Keyed<Integer>> lexical = List.of(Fusion.Keyed.side(3, 5f), Fusion.Keyed.side(4, 3f), Fusion.Keyed.side(5, 1f));
        List<Fusion.Keyed<Integer>> keyed = f.fuseKeyed(dense, lexical, 4, byId);
        List<Fusion.Fused> byIds = f.fuse(List.of(hit("b", 0.9f), hit("a", 0.8f), hit("c", 0.7f)),
            List.of(hit("y", 5f), hit("x", 3f), hit("c", 1f)), 4);
        assertEquals(ids(byIds), keyed.stream().map(k -> idOf.get(k.key())).toList());
        for (int i = 0; i < keyed.size(); i++) {
            assertEquals(byIds.get(i).score(), keyed.get(i).score(), 0f);
            assertEquals(byIds.get(i).denseShare(), keyed.get(i).denseShare(), 0);
        }
        assertEquals("c (in both windows) ties with no one: its id is never read", java.util.Set.of(1, 2, 3, 4), asked);
    }

    /**
     * On a shard the tie order reads stored ids: it is asked only for runs of equal scores that start among the k best (a
     * run that crosses the k-th place is ordered whole), never for the windows' tails, where both floors fuse to 0.
     */
    @Test
    public void testFuseKeyed_asksTheTieOrderOnlyForTiesThatDecideTheKBest() {
        Fusion f = new Fusion(Fusion.Method.MIN_MAX, 0.5, null, 60);
        java.util.Map<Integer, String> idOf = java.util.Map.of(1, "d", 2, "c", 3, "b", 4, "a");
        java.util.Set<Integer> asked = new java.util.HashSet<>();
        java.util.Comparator<Integer> byId = java.util.Comparator.comparing(doc -> {
            asked.add(doc);
            return idOf.get(doc);
        });
        // fused: 1 and 3 tie at 0.5 (each its window's top), 2 and 4 tie at 0 (each its window's floor)
        List<Fusion.Keyed<Integer>> dense = List.of(Fusion.Keyed.side(1, 0.9f), Fusion.Keyed.side(2, 0.5f));
        List<Fusion.Keyed<Integer>> lexical = List.of(Fusion.Keyed.side(3, 5f), Fusion.Keyed.side(4, 1f));
        List<Fusion.Fused> byIds = f.fuse(List.of(hit("d", 0.9f), hit("c", 0.5f)), List.of(hit("b", 5f), hit("a", 1f)), 4);
        for (int k = 1; k <= 4; k++) {
            asked.clear();
            List<Fusion.Keyed<Integer>> keyed = f.fuseKeyed(dense, lexical, k, byId);
            assertEquals("k " + k, ids(byIds).subList(0, k), keyed.stream().map(x -> idOf.get(x.key())).toList());
            assertEquals("k " + k, k <= 2 ? java.util.Set.of(1, 3) : java.util.Set.of(1, 2, 3, 4), asked);
        }
    }
}
