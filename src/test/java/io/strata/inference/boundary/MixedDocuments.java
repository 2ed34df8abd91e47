package io.strata.inference.boundary;

import io.strata.chunking.SentenceSegmenter;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.Set;
import java.util.stream.Stream;
import java.util.zip.GZIPInputStream;

/**
 * BertChunker's synthetic data (Luo §2.3) from documentation that Debian packages install under {@code /usr/share/doc}
 * (READMEs, {@code *.txt}, gzipped or not): each mixed document joins runs of consecutive sentences from 4 different
 * source files, and the first character of every run after the first is a chunk start.
 *
 * <p>Differences from the paper: sources are package documentation, not ChatQA documents; a run starts at a random
 * sentence rather than the first (READMEs open with titles and badges); sentences are joined with one space so
 * the head cannot learn line breaks (the paper's BERT tokenizer drops them too). Sentences that are mostly not prose
 * (code, tables, licence boilerplate repeated across packages) are left out.
 */
public final class MixedDocuments {
    public static final Path DOC_ROOT = Path.of("/usr/share/doc");

    /** A mixed document and the offsets where a new source starts (ascending, never 0). */
    public record Mixed(String text, int[] switches) {}

    /** One source file's usable sentences. */
    public record Source(String path, List<String> sentences) {}

    private MixedDocuments() {}

    /**
     * Usable sources under {@code root}, split by package folder: {@code heldOut} selects the packages whose folder name
     * hashes into the held-out fifth, so train and held-out sources never share a package.
     */
    public static List<Source> sources(Path root, boolean heldOut) throws IOException {
        SentenceSegmenter segmenter = SentenceSegmenter.english();
        Set<String> seenSentences = new HashSet<>();
        Set<Integer> seenFiles = new HashSet<>();
        List<Path> files;
        try (Stream<Path> all = Files.walk(root)) {
            files = all.filter(Files::isRegularFile).filter(MixedDocuments::isDocFile).sorted().toList();
        }
        List<Source> out = new ArrayList<>();
        // dedupe sentences over ALL packages first in path order, so a sentence shared by a train and a held-out package
        // (licence text, boilerplate) stays only with the first one seen and the split is reproducible
        for (Path file : files) {
            String text = read(file);
            if (text == null || !seenFiles.add(text.hashCode())) {
                continue;
            }
            String pkg = root.relativize(file).getName(0).toString();
            boolean isHeldOut = Math.floorMod(pkg.hashCode(), 5) == 0;
            List<String> sentences = new ArrayList<>();
            int[] b = segmenter.boundaries(text);
            for (int i = 0; i + 1 < b.length; i++) {
                String s = text.substring(b[i], b[i + 1]).replaceAll("\\s+", " ").trim();
                if (isProse(s) && seenSentences.add(s.toLowerCase(Locale.ROOT))) {
                    sentences.add(s);
                }
            }
            if (isHeldOut == heldOut && sentences.size() >= 3) {
                out.add(new Source(root.relativize(file).toString(), sentences));
            }
        }
        return out;
    }

    /** {@code count} mixed documents of {@code parts} runs of 1–5 sentences each, from distinct sources. */
    public static List<Mixed> mix(List<Source> sources, int count, int parts, long seed) {
        Random random = new Random(seed);
        List<Mixed> out = new ArrayList<>();
        for (int d = 0; d < count; d++) {
            StringBuilder text = new StringBuilder();
            int[] switches = new int[parts - 1];
            Set<Integer> used = new HashSet<>();
            for (int part = 0; part < parts; part++) {
                int src;
                do {
                    src = random.nextInt(sources.size());
                } while (!used.add(src));
                List<String> sentences = sources.get(src).sentences();
                int n = 1 + random.nextInt(Math.min(5, sentences.size()));
                int from = random.nextInt(sentences.size() - n + 1);
                if (part > 0) {
                    text.append(' ');
                    switches[part - 1] = text.length();
                }
                text.append(String.join(" ", sentences.subList(from, from + n)));
            }
            out.add(new Mixed(text.toString(), switches));
        }
        return out;
    }

    private static boolean isDocFile(Path p) {
        String name = p.getFileName().toString().toLowerCase(Locale.ROOT);
        String base = name.endsWith(".gz") ? name.substring(0, name.length() - 3) : name;
        return base.startsWith("readme") && !base.endsWith(".html") || base.endsWith(".txt");
    }

    /** The file as UTF-8 text, or null when it is not (binary, another encoding) or is too small to hold prose. */
    private static String read(Path file) {
        try (InputStream raw = Files.newInputStream(file);
             InputStream in = file.toString().endsWith(".gz") ? new GZIPInputStream(raw) : raw) {
            byte[] bytes = in.readNBytes(200_000);
            if (bytes.length < 500) {
                return null;
            }
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                .decode(java.nio.ByteBuffer.wrap(bytes)).toString();
        } catch (CharacterCodingException e) {
            return null;
        } catch (IOException e) {
            return null;
        }
    }

    /** A sentence of 5–80 words, mostly letters, starting with a capital and ending with sentence punctuation. */
    static boolean isProse(String s) {
        String[] words = s.split(" ");
        if (words.length < 5 || words.length > 80 || !Character.isUpperCase(s.charAt(0))) {
            return false;
        }
        char last = s.charAt(s.length() - 1);
        if (last != '.' && last != '!' && last != '?') {
            return false;
        }
        int letters = 0;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (Character.isLetter(c) || c == ' ') {
                letters++;
            }
        }
        return letters >= 0.8 * s.length() && !s.contains("http") && !s.contains("  ");
    }
}
