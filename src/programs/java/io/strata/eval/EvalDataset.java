package io.strata.eval;

import io.strata.quality.PairedBootstrap;
import io.strata.quality.RetrievalMetrics;
import io.strata.quality.SpanRelevance;
import org.opensearch.common.xcontent.XContentHelper;
import org.opensearch.common.xcontent.json.JsonXContent;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

/**
 * A retrieval dataset of {@code bin/strata-eval}: source documents to ingest and questions whose relevant parents are
 * decided from the chunk index. Two kinds:
 * <ul>
 *   <li>{@link Kind#BOOK} (GutenQA): one text file cut into documents before every line the split regex matches;
 *   questions with {@code evidence}; relevance by containment, ROUGE-L fallback ({@link RetrievalMetrics}).</li>
 *   <li>{@link Kind#SPANS} (SQuAD): a folder {@code docs/*.txt}, one source document each; questions with {@code doc},
 *   {@code answer_start}, {@code answer_end}; relevance by span containment ({@link SpanRelevance}).</li>
 * </ul>
 * A dataset folder ({@code --data}) holds {@code book.txt} or {@code docs/}, and {@code questions.jsonl}.
 *
 * <p>Every question belongs to a cluster, the unit the bootstrap resamples ({@link PairedBootstrap}): its paragraph
 * when the question names one ({@code paragraph_start}, SQuAD), else its document (an article, COVID-QA) in the spans
 * kind; itself in the book kind. A set named in {@link #SPLIT_BY_ARTICLE} is split by article into a tuning half and
 * a confirmation half: its documents in file-name order, the 1st, 3rd, 5th, … tuning, the 2nd, 4th, … confirmation,
 * each question in its article's half (all articles are ingested alike; the halves differ only in which questions
 * are scored).
 */
public final class EvalDataset {
    public static final String DEFAULT_SPLIT = "(?m)(?=^(?:VOLUME [IVXLC]+\\. )?CHAPTER [IVXLC]+$)";
    /** The bundled sets every default so far was chosen on: reported as tuning sets. */
    static final Set<String> TUNED_ON = Set.of("gutenqa-emma", "squad2-dev-sample");
    /** Sets split by article into a tuning half and a confirmation half (see the class comment). */
    static final Set<String> SPLIT_BY_ARTICLE = Set.of("covid-qa-sample");
    public static final String TUNING = "tuning";
    public static final String CONFIRMATION = "confirmation";

    public enum Kind {
        BOOK(List.of(200, 300, 500)),
        SPANS(List.of(200, 300));

        /** θ values run when the command line gives none: the LGMGC protocol's for books; SQuAD paragraphs are shorter. */
        final List<Integer> defaultThetas;

        Kind(List<Integer> defaultThetas) {
            this.defaultThetas = defaultThetas;
        }
    }

    /**
     * One source document; {@code title} is sent as the field {@code title} (for {@code context} rows): a SQuAD document's
     * article title (its file name, underscores as spaces), a book part's first line (its chapter heading).
     */
    public record Document(String id, String text, String title) {}

    /**
     * One question: {@code index} is its line among the questions, {@code id} its own id when the file has one. Book
     * kind: {@code evidence}. Spans kind: {@code doc} (a document id) and the answer's UTF-16 offsets in its text.
     * {@code cluster}: what the bootstrap resamples it with (see the class comment); {@code half}: {@link #TUNING} or
     * {@link #CONFIRMATION} in a set split by article, else null.
     */
    public record Question(int index, String id, String text, String evidence, String doc, int answerStart, int answerEnd, String cluster,
                           String half) {}

    /** The parents of one ingest: span and id of each, and for the book kind their whitespace-normalised texts. */
    public record Parents(List<SpanRelevance.Parent> spans, List<String> normalizedTexts) {
        List<String> ids() {
            return spans.stream().map(SpanRelevance.Parent::id).toList();
        }
    }

    private final String name;
    private final Kind kind;
    private final String source;
    private final List<Document> documents;
    private final List<Question> questions;

    EvalDataset(String name, Kind kind, String source, List<Document> documents, List<Question> questions) {
        this.name = name;
        this.kind = kind;
        this.source = source;
        this.documents = List.copyOf(documents);
        this.questions = List.copyOf(questions);
    }

    public String name() {
        return name;
    }

    public Kind kind() {
        return kind;
    }

    /** Where it was read from, for the report. */
    public String source() {
        return source;
    }

    public List<Document> documents() {
        return documents;
    }

    public List<Question> questions() {
        return questions;
    }

    public List<Integer> defaultThetas() {
        return kind.defaultThetas;
    }

    /** Each question's cluster as an int, questions of one cluster sharing it: for {@link PairedBootstrap#clustered}. */
    public int[] clusters() {
        Map<String, Integer> ids = new LinkedHashMap<>();
        return questions.stream().mapToInt(q -> ids.computeIfAbsent(q.cluster(), c -> ids.size())).toArray();
    }

    /** The number of distinct clusters. */
    public int clusterCount() {
        return (int) questions.stream().map(Question::cluster).distinct().count();
    }

    /** True when the questions are split into a tuning and a confirmation half. */
    public boolean hasHalves() {
        return questions.stream().anyMatch(q -> q.half() != null);
    }

    /** What the set is for in the report: a tuning set, a set split into halves, or nothing said (a set of your own). */
    public String role() {
        if (hasHalves()) {
            return String.format(Locale.ROOT, "split by article: tuning half %s, confirmation half %s", halfSummary(TUNING),
                halfSummary(CONFIRMATION));
        }
        return TUNED_ON.contains(name) ? "tuning set: the defaults were chosen on it" : null;
    }

    private String halfSummary(String half) {
        List<Question> qs = questions.stream().filter(q -> half.equals(q.half())).toList();
        return String.format(Locale.ROOT, "(%d articles, %d questions)", qs.stream().map(Question::doc).distinct().count(), qs.size());
    }

    /** The relevant parents of a question among all parents of an ingest. */
    public RetrievalMetrics.Relevance relevant(Question q, Parents parents) {
        return kind == Kind.BOOK
            ? RetrievalMetrics.relevant(q.evidence(), parents.ids(), parents.normalizedTexts())
            : SpanRelevance.relevant(q.doc(), q.answerStart(), q.answerEnd(), parents.spans());
    }

    /** A dataset folder: {@code docs/} makes it the spans kind, {@code book.txt} the book kind (split by {@code split}). */
    public static EvalDataset fromFolder(Path dir, String split) throws IOException {
        String name = dir.toAbsolutePath().normalize().getFileName().toString();
        if (Files.isDirectory(dir.resolve("docs"))) {
            if (split != null) {
                throw new IllegalArgumentException("[--split] applies to book datasets; [" + dir + "] is a SQuAD-kind folder (docs/)");
            }
            return spans(name, dir.resolve("docs"), dir.resolve("questions.jsonl"));
        }
        if (Files.isRegularFile(dir.resolve("book.txt"))) {
            return book(name, dir.resolve("book.txt"), dir.resolve("questions.jsonl"), split);
        }
        throw new IllegalArgumentException("[--data] [" + dir + "] holds neither docs/ (SQuAD kind: docs/*.txt + questions.jsonl) nor "
            + "book.txt (book kind: book.txt + questions.jsonl)");
    }

    /** Book kind: {@code corpus} cut before every match of {@code split} (null: chapter headings), blank parts dropped. */
    public static EvalDataset book(String name, Path corpus, Path questionsFile, String split) throws IOException {
        List<Document> documents = new ArrayList<>();
        for (String part : Files.readString(corpus).split(split == null ? DEFAULT_SPLIT : split)) {
            if (!part.isBlank()) {
                documents.add(new Document("doc-" + documents.size(), part, part.strip().lines().findFirst().orElse("").strip()));
            }
        }
        List<Question> questions = new ArrayList<>();
        for (Map<String, Object> q : jsonLines(questionsFile)) {
            String where = where(questionsFile, q, questions.size());
            questions.add(new Question(questions.size(), optionalId(q), required(q, "question", where), required(q, "evidence", where), null,
                -1, -1, "q" + questions.size(), null));
        }
        return new EvalDataset(name, Kind.BOOK, corpus.toString(), documents, questions);
    }

    /**
     * Spans kind: every {@code *.txt} of {@code docs} is one source document (id: its file name). Answer offsets are in
     * Unicode code points (Python's string indices, as SQuAD's), converted here to the UTF-16 offsets chunks record.
     */
    public static EvalDataset spans(String name, Path docs, Path questionsFile) throws IOException {
        Map<String, String> texts = new LinkedHashMap<>();
        try (Stream<Path> files = Files.list(docs)) {
            for (Path f : files.filter(p -> p.getFileName().toString().endsWith(".txt")).sorted().toList()) {
                texts.put(f.getFileName().toString(), Files.readString(f));
            }
        }
        if (texts.isEmpty()) {
            throw new IllegalArgumentException("[--docs] [" + docs + "] holds no *.txt file (one source document each)");
        }
        Map<String, String> halves = new LinkedHashMap<>();
        if (SPLIT_BY_ARTICLE.contains(name)) {
            for (String doc : texts.keySet()) { // file-name order (sorted above): alternate
                halves.put(doc, halves.size() % 2 == 0 ? TUNING : CONFIRMATION);
            }
        }
        List<Question> questions = new ArrayList<>();
        for (Map<String, Object> q : jsonLines(questionsFile)) {
            String where = where(questionsFile, q, questions.size());
            String doc = required(q, "doc", where);
            String text = texts.get(doc);
            if (text == null) {
                throw new IllegalArgumentException(String.format(Locale.ROOT, "%s: [doc] [%s] is not a file of [%s]; files: %s", where, doc,
                    docs, texts.keySet()));
            }
            int cpStart = integer(q, "answer_start", where);
            int cpEnd = integer(q, "answer_end", where);
            if (cpStart < 0 || cpEnd <= cpStart || cpEnd > text.codePointCount(0, text.length())) {
                throw new IllegalArgumentException(String.format(Locale.ROOT, "%s: [answer_start, answer_end) = [%d, %d) must be a non-empty "
                    + "span inside [%s] (%d characters)", where, cpStart, cpEnd, doc, text.codePointCount(0, text.length())));
            }
            int start = text.offsetByCodePoints(0, cpStart);
            int end = text.offsetByCodePoints(start, cpEnd - cpStart);
            if (q.get("answer") instanceof String answer && !text.substring(start, end).equals(answer)) {
                throw new IllegalArgumentException(String.format(Locale.ROOT, "%s: [answer] [%s] is not the text at [answer_start, "
                    + "answer_end) of [%s], which is [%s]", where, answer, doc, text.substring(start, end)));
            }
            // the paragraph when the file names it (SQuAD), else the article
            String cluster = q.get("paragraph_start") instanceof Integer p ? doc + "@" + p : doc;
            questions.add(new Question(questions.size(), optionalId(q), required(q, "question", where), null, doc, start, end, cluster,
                halves.get(doc)));
        }
        List<Document> documents = texts.entrySet().stream().map(e -> new Document(e.getKey(), e.getValue(),
            e.getKey().replaceFirst("\\.txt$", "").replace('_', ' '))).toList();
        return new EvalDataset(name, Kind.SPANS, docs.toString(), documents, questions);
    }

    private static List<Map<String, Object>> jsonLines(Path file) throws IOException {
        List<Map<String, Object>> out = new ArrayList<>();
        for (String line : Files.readAllLines(file)) {
            if (!line.isBlank()) {
                out.add(XContentHelper.convertToMap(JsonXContent.jsonXContent, line, false));
            }
        }
        if (out.isEmpty()) {
            throw new IllegalArgumentException("[--questions] [" + file + "] holds no question (JSON lines)");
        }
        return out;
    }

    private static String where(Path file, Map<String, Object> q, int index) {
        return "[" + file + "] question " + (q.get("id") != null ? "[" + q.get("id") + "]" : "#" + index);
    }

    private static String optionalId(Map<String, Object> q) {
        return q.get("id") == null ? null : q.get("id").toString();
    }

    private static String required(Map<String, Object> q, String key, String where) {
        if (!(q.get(key) instanceof String s) || s.isBlank()) {
            throw new IllegalArgumentException(where + ": [" + key + "] must be a non-empty string, got [" + q.get(key) + "]");
        }
        return s;
    }

    private static int integer(Map<String, Object> q, String key, String where) {
        if (!(q.get(key) instanceof Integer i)) {
            throw new IllegalArgumentException(where + ": [" + key + "] must be an integer (character offset), got [" + q.get(key) + "]");
        }
        return i;
    }
}
