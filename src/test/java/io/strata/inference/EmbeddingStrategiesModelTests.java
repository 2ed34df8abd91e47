package io.strata.inference;

import ai.djl.Device;
import io.strata.chunking.PseudoInstructionStrategy;
import io.strata.chunking.SemanticStrategy;
import io.strata.chunking.SentenceSegmenter;
import io.strata.chunking.Span;
import io.strata.chunking.TextIndex;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;

import java.util.List;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

/** The embedding-based strategies with the real bundled bge-small (int8) on a text with two unrelated topics. */
public class EmbeddingStrategiesModelTests {
    private static DjlEmbedder embedder;

    private static final String BEES = "Honey bees live in colonies ruled by a single queen. The worker bees gather nectar "
        + "and pollen from flowers during the warm months. Back in the hive, the nectar is stored in wax cells and slowly "
        + "thickens into honey. A strong colony may hold tens of thousands of workers by midsummer. Beekeepers smoke the hive "
        + "gently before lifting the frames. The bees survive the winter by clustering together and eating their stored honey.";
    private static final String TRAINS = "The first steam locomotives ran on iron rails in the early nineteenth century. "
        + "Coal was shovelled into a firebox to boil the water in the boiler. The steam pushed pistons that turned the driving "
        + "wheels. Railway companies soon laid lines between the great industrial cities. Timetables forced towns to agree on "
        + "a standard time. By the end of the century, express trains crossed whole countries in a day.";

    @BeforeClass
    public static void load() throws Exception {
        embedder = DjlEmbedder.load(ModelDescriptor.read("bge-small-en-v15-q", DjlEmbedderTests.MODELS.resolve("bge-small-en-v15-q")),
            Device.cpu(), 1, 2, 1);
    }

    @AfterClass
    public static void close() {
        embedder.close();
    }

    @Test
    public void testSemantic_realModelWithoutBuffer_breaksExactlyBetweenTheTwoTopics() {
        String text = BEES + " " + TRAINS;
        TextIndex index = new TextIndex(text, SentenceSegmenter.english());
        SemanticStrategy semantic = new SemanticStrategy(embedder, 0, SemanticStrategy.ThresholdType.PERCENTILE, 95, 300);
        assertEquals(List.of(BEES, TRAINS), semantic.split(index).stream().map(p -> p.of(text)).toList());
    }

    /**
     * With the default buffer of one neighbour, the windows on both sides of the topic change overlap by two sentences, so the
     * largest distance may sit one sentence off the true boundary (bge-small puts it after the first train sentence here);
     * this is the smoothing the buffer trades for robustness to single odd sentences.
     */
    @Test
    public void testSemantic_realModelDefaultBuffer_breaksOnceWithinOneSentenceOfTheTopicChange() {
        String text = BEES + " " + TRAINS;
        TextIndex index = new TextIndex(text, SentenceSegmenter.english());
        List<Span> parents = new SemanticStrategy(embedder, 1, SemanticStrategy.ThresholdType.PERCENTILE, 95, 300).split(index);
        assertEquals(2, parents.size());
        int boundary = BEES.length();
        int cut = parents.get(0).end();
        // the ends of the last bee sentence but one, the last bee sentence, and the first train sentence
        int before = text.lastIndexOf(". ", boundary - 2) + 1;
        int after = text.indexOf(". ", boundary + 1) + 1;
        assertTrue(cut + " not within one sentence of " + boundary, cut == before || cut == boundary || cut == after);
    }

    @Test
    public void testPseudoInstructionMean_realModel_coversTheTextWithinTheta() {
        String text = BEES + "\n\n" + TRAINS;
        TextIndex index = new TextIndex(text, SentenceSegmenter.english());
        List<Span> parents = new PseudoInstructionStrategy(embedder, null, 256, 3000, 40).split(index);
        int covered = 0;
        int previousEnd = 0;
        for (Span p : parents) {
            assertTrue(p.start() >= previousEnd);
            assertTrue(index.words(p) <= 40);
            covered += index.words(p);
            previousEnd = p.end();
        }
        assertEquals(index.totalWords(), covered);
        assertTrue(parents.size() >= 2);
    }
}
