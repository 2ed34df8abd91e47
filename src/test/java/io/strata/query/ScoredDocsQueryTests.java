package io.strata.query;

import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.StringField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexReader;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.Term;
import org.apache.lucene.search.BoostQuery;
import org.apache.lucene.search.DocIdSetIterator;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.ScoreMode;
import org.apache.lucene.search.Scorer;
import org.apache.lucene.search.ScorerSupplier;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.search.Weight;
import org.apache.lucene.store.Directory;
import org.apache.lucene.tests.index.RandomIndexWriter;
import org.apache.lucene.tests.search.CheckHits;
import org.apache.lucene.tests.search.QueryUtils;
import org.apache.lucene.tests.util.LuceneTestCase;
import org.apache.lucene.tests.util.TestUtil;
import org.apache.lucene.util.Bits;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * {@link ScoredDocsQuery} on random indices of several segments with deletions: it matches exactly the given documents
 * that are live, each with its given score times the boost, through search, counting, top-score collection (its maximum
 * scores bound the real ones) and advancing; {@code explain} agrees with the score; it refuses a searcher over another
 * reader, even of the same index.
 */
public class ScoredDocsQueryTests extends LuceneTestCase {

    /** An index of {@code docs} documents (field {@code id}), flushed into several segments, with about a tenth deleted. */
    private static DirectoryReader randomIndex(Directory dir, int docs) throws IOException {
        try (RandomIndexWriter w = new RandomIndexWriter(random(), dir, newIndexWriterConfig()
            .setMaxBufferedDocs(TestUtil.nextInt(random(), 10, 30)).setMergePolicy(newLogMergePolicy()))) {
            for (int i = 0; i < docs; i++) {
                Document d = new Document();
                d.add(new StringField("id", Integer.toString(i), Field.Store.NO));
                w.addDocument(d);
                if (random().nextInt(docs / 4 + 1) == 0) {
                    w.commit();
                }
            }
            for (int i = 0; i < docs; i++) {
                if (random().nextInt(10) == 0) {
                    w.deleteDocuments(new Term("id", Integer.toString(i)));
                }
            }
            return w.getReader();
        }
    }

    /** A random choice of the reader's documents (deleted ones too) with random positive scores, by global doc id. */
    private static Map<Integer, Float> randomScores(IndexReader reader) {
        Map<Integer, Float> scores = new TreeMap<>();
        for (int doc = 0; doc < reader.maxDoc(); doc++) {
            if (random().nextInt(3) == 0) {
                scores.put(doc, 0.01f + random().nextFloat() * 10);
            }
        }
        return scores;
    }

    private static ScoreDoc[] shuffledHits(Map<Integer, Float> scores) {
        List<ScoreDoc> hits = new ArrayList<>();
        scores.forEach((doc, score) -> hits.add(new ScoreDoc(doc, score)));
        java.util.Collections.shuffle(hits, random());
        return hits.toArray(ScoreDoc[]::new);
    }

    private static boolean isLive(IndexReader reader, int doc) {
        for (LeafReaderContext leaf : reader.leaves()) {
            if (doc >= leaf.docBase && doc < leaf.docBase + leaf.reader().maxDoc()) {
                Bits live = leaf.reader().getLiveDocs();
                return live == null || live.get(doc - leaf.docBase);
            }
        }
        throw new AssertionError("no leaf holds doc " + doc);
    }

    public void testSearch_matchesExactlyTheGivenLiveDocuments_withTheirScoresTimesTheBoost() throws IOException {
        for (int iter = 0; iter < 5; iter++) {
            try (Directory dir = newDirectory(); DirectoryReader reader = randomIndex(dir, atLeast(100))) {
                assumeTrue("a random index with at least one document left", reader.numDocs() > 0);
                Map<Integer, Float> scores = randomScores(reader);
                ScoredDocsQuery query = new ScoredDocsQuery(shuffledHits(scores), reader, "given scores");
                float boost = random().nextBoolean() ? 1f : 0.5f + random().nextFloat() * 3;
                Query boosted = boost == 1f ? query : new BoostQuery(query, boost);
                IndexSearcher searcher = newSearcher(reader, false); // the same reader: the query is bound to it

                List<ScoreDoc> expected = new ArrayList<>();
                scores.forEach((doc, score) -> {
                    if (isLive(reader, doc)) {
                        expected.add(new ScoreDoc(doc, score * boost));
                    }
                });
                expected.sort((a, b) -> a.score != b.score ? Float.compare(b.score, a.score) : Integer.compare(a.doc, b.doc));

                TopDocs top = searcher.search(boosted, reader.maxDoc());
                assertEquals(expected.size(), top.totalHits.value());
                assertEquals(expected.size(), top.scoreDocs.length);
                for (int i = 0; i < expected.size(); i++) {
                    assertEquals("rank " + i, expected.get(i).doc, top.scoreDocs[i].doc);
                    assertEquals("rank " + i, expected.get(i).score, top.scoreDocs[i].score, 0f);
                }
                assertEquals(expected.size(), searcher.count(boosted));
                CheckHits.checkExplanations(boosted, "", searcher, true);
                CheckHits.checkTopScores(random(), boosted, searcher);
                QueryUtils.checkCount(boosted, searcher);
            }
        }
    }

    public void testExplain_ofADocumentNotGiven_isNoMatch_andOfAGivenOneIsItsScore() throws IOException {
        try (Directory dir = newDirectory(); DirectoryReader reader = randomIndex(dir, 50)) {
            IndexSearcher searcher = newSearcher(reader, false);
            int given = -1;
            int other = -1;
            for (int doc = 0; doc < reader.maxDoc() && (given < 0 || other < 0); doc++) {
                if (isLive(reader, doc)) {
                    if (given < 0) {
                        given = doc;
                    } else {
                        other = doc;
                    }
                }
            }
            assumeTrue("two live documents", other >= 0);
            ScoredDocsQuery query = new ScoredDocsQuery(new ScoreDoc[] { new ScoreDoc(given, 0.75f) }, reader, "given scores");

            assertFalse(searcher.explain(query, other).isMatch());
            assertTrue(searcher.explain(query, given).isMatch());
            assertEquals(0.75f, searcher.explain(query, given).getValue().floatValue(), 0f);
            assertEquals(1.5f, searcher.explain(new BoostQuery(query, 2f), given).getValue().floatValue(), 0f);
            assertEquals("given scores", searcher.explain(query, given).getDescription());
        }
    }

    public void testScorer_advancesToEachGivenDocumentOfItsSegment_andNoOther() throws IOException {
        try (Directory dir = newDirectory(); DirectoryReader reader = randomIndex(dir, atLeast(200))) {
            Map<Integer, Float> scores = randomScores(reader);
            ScoredDocsQuery query = new ScoredDocsQuery(shuffledHits(scores), reader, "given scores");
            IndexSearcher searcher = newSearcher(reader, false);
            Weight weight = searcher.createWeight(query, ScoreMode.COMPLETE, 1f);
            for (LeafReaderContext leaf : reader.leaves()) {
                List<Integer> inLeaf = scores.keySet().stream().filter(d -> d >= leaf.docBase && d < leaf.docBase + leaf.reader().maxDoc())
                    .map(d -> d - leaf.docBase).toList();
                ScorerSupplier supplier = weight.scorerSupplier(leaf);
                if (inLeaf.isEmpty()) {
                    assertNull("no scorer for a segment without given documents", supplier);
                    continue;
                }
                assertEquals(inLeaf.size(), supplier.cost());
                Scorer scorer = supplier.get(Long.MAX_VALUE);
                DocIdSetIterator it = scorer.iterator();
                assertEquals(-1, it.docID());
                int at = 0;
                while (true) {
                    // next or advance to a random target, checked against the list
                    int target = random().nextBoolean() ? it.docID() + 1 : it.docID() + 1 + random().nextInt(5);
                    int doc = target == it.docID() + 1 && random().nextBoolean() ? it.nextDoc() : it.advance(target);
                    while (at < inLeaf.size() && inLeaf.get(at) < target) {
                        at++;
                    }
                    if (at == inLeaf.size()) {
                        assertEquals(DocIdSetIterator.NO_MORE_DOCS, doc);
                        break;
                    }
                    assertEquals((int) inLeaf.get(at), doc);
                    assertEquals(scores.get(leaf.docBase + doc), scorer.score(), 0f);
                    assertTrue(scorer.getMaxScore(DocIdSetIterator.NO_MORE_DOCS) >= scorer.score());
                }
            }
        }
    }

    public void testCreateWeight_onAnotherReader_isRefused_evenOfTheSameIndex() throws IOException {
        try (Directory dir = newDirectory(); DirectoryReader reader = randomIndex(dir, 30)) {
            ScoredDocsQuery query = new ScoredDocsQuery(new ScoreDoc[] { new ScoreDoc(0, 1f) }, reader, "given scores");
            try (DirectoryReader again = DirectoryReader.open(dir)) {
                IllegalStateException e = expectThrows(IllegalStateException.class, () -> new IndexSearcher(again).search(query, 10));
                assertEquals("[multi_granular] top parents were computed on another reader", e.getMessage());
            }
        }
    }

    public void testEquality_dependsOnTheReaderTheDocumentsAndTheScores() throws IOException {
        try (Directory dir = newDirectory(); DirectoryReader reader = randomIndex(dir, 30)) {
            ScoreDoc[] hits = { new ScoreDoc(1, 0.5f), new ScoreDoc(3, 0.25f) };
            ScoredDocsQuery query = new ScoredDocsQuery(hits, reader, "given scores");
            QueryUtils.check(query);
            QueryUtils.checkEqual(query, new ScoredDocsQuery(new ScoreDoc[] { hits[1], hits[0] }, reader, "given scores"));
            QueryUtils.checkUnequal(query, new ScoredDocsQuery(new ScoreDoc[] { hits[0] }, reader, "given scores"));
            QueryUtils.checkUnequal(query, new ScoredDocsQuery(new ScoreDoc[] { hits[0], new ScoreDoc(3, 0.3f) }, reader, "given"));
            try (DirectoryReader again = DirectoryReader.open(dir)) {
                QueryUtils.checkUnequal(query, new ScoredDocsQuery(hits, again, "given scores"));
            }
        }
    }
}
