package io.strata.architecture;

import org.junit.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

/**
 * The layering docs/architecture.md draws, checked on the sources: a package may use its own classes and those of lower
 * layers only (imports and fully qualified names alike), so no package cycle can form and the chunking core stays free
 * of OpenSearch and DJL.
 */
public class PackageLayersTests {
    private static final Path SOURCES = Path.of("src", "main", "java", "io", "strata");

    /** Layer of each package, lowest first; packages of one layer may not use each other. */
    private static final Map<String, Integer> LAYERS = new LinkedHashMap<>();

    static {
        layer(0, "chunking");
        layer(1, "model", "transport", "chunking.structure", "context", "quality");
        layer(2, "stats");
        layer(3, "inference.boundary", "stats.transport");
        layer(4, "inference");
        layer(5, "inference.mlcommons", "inference.transport", "chunkindex");
        // the chunk index family, one way: schema (the parent) ← registry, store ← setup ← write ← lifecycle ← reconcile
        // ← generations
        layer(6, "chunkindex.registry", "chunkindex.store");
        layer(7, "chunkindex.setup");
        layer(8, "chunkindex.write");
        layer(9, "chunkindex.lifecycle");
        layer(10, "chunkindex.reconcile");
        layer(11, "chunkindex.generations");
        layer(12, "ingest", "query", "studio", "search");
        layer(13, "compare");
        layer(14, "plugin");
    }

    private static void layer(int rank, String... packages) {
        for (String p : packages) {
            LAYERS.put(p, rank);
        }
    }

    private static final Pattern USE = Pattern.compile("\\bio\\.strata\\.([a-z.]+?)\\.[A-Z]");

    @Test
    public void everyPackageUsesOnlyLowerLayers() throws IOException {
        List<String> violations = new ArrayList<>();
        for (Path file : javaFiles()) {
            String from = packageOf(file);
            TreeSet<String> used = used(file);
            used.remove(from);
            for (String to : used) {
                Integer toRank = LAYERS.get(to);
                if (toRank == null || toRank >= LAYERS.get(from)) {
                    violations.add(SOURCES.relativize(file) + ": " + from + " (layer " + LAYERS.get(from) + ") uses " + to + " (layer "
                        + toRank + ")");
                }
            }
        }
        assertEquals("uses of a same or higher layer", List.of(), violations);
    }

    /**
     * A subpackage is part of its parent's layer family: besides its parent and the subpackages of the same parent on lower
     * layers, it uses only what its parent may use (layers below the parent's). Without this, a subpackage ranked high
     * (e.g. {@code stats.transport} above {@code inference}) would let a low package's family reach up through it.
     */
    @Test
    public void everySubpackageUsesOnlyItsFamilyBelowItAndWhatItsParentMayUse() throws IOException {
        List<String> violations = new ArrayList<>();
        for (Path file : javaFiles()) {
            String from = packageOf(file);
            int dot = from.lastIndexOf('.');
            if (dot < 0) {
                continue;
            }
            String parent = from.substring(0, dot);
            for (String to : used(file)) {
                if (to.equals(from) || to.equals(parent)) {
                    continue;
                }
                Integer toRank = LAYERS.get(to);
                boolean sibling = to.startsWith(parent + ".");
                if (toRank == null || toRank >= (sibling ? LAYERS.get(from) : LAYERS.get(parent))) {
                    violations.add(SOURCES.relativize(file) + ": " + from + " (under " + parent + ", layer " + LAYERS.get(parent) + ") uses "
                        + to + " (layer " + toRank + ")");
                }
            }
        }
        assertEquals("uses by a subpackage of a layer at or above its parent's, or of a sibling at or above its own",
            List.of(), violations);
    }

    /**
     * No packages use each other in a circle, found on the uses themselves rather than through {@link #LAYERS}: a package
     * given a wrong layer cannot hide one.
     */
    @Test
    public void noPackageCycle() throws IOException {
        Map<String, TreeSet<String>> uses = new TreeMap<>();
        for (Path file : javaFiles()) {
            String from = packageOf(file);
            TreeSet<String> used = used(file);
            used.remove(from);
            uses.computeIfAbsent(from, k -> new TreeSet<>()).addAll(used);
        }
        Map<String, Integer> state = new HashMap<>(); // 1: on the path, 2: done
        for (String start : uses.keySet()) {
            List<String> cycle = cycleFrom(start, uses, state, new ArrayList<>());
            assertEquals("a package cycle", List.of(), cycle);
        }
    }

    /** A depth-first walk from {@code p}: the packages of the first circle found, or an empty list. */
    private static List<String> cycleFrom(String p, Map<String, TreeSet<String>> uses, Map<String, Integer> state, List<String> path) {
        Integer s = state.get(p);
        if (s != null) {
            if (s == 2) {
                return List.of();
            }
            List<String> cycle = new ArrayList<>(path.subList(path.indexOf(p), path.size()));
            cycle.add(p);
            return cycle;
        }
        state.put(p, 1);
        path.add(p);
        for (String next : uses.getOrDefault(p, new TreeSet<>())) {
            List<String> cycle = cycleFrom(next, uses, state, path);
            if (!cycle.isEmpty()) {
                return cycle;
            }
        }
        path.remove(path.size() - 1);
        state.put(p, 2);
        return List.of();
    }

    @Test
    public void everyPackageHasALayer() throws IOException {
        TreeSet<String> unknown = new TreeSet<>();
        for (Path file : javaFiles()) {
            if (!LAYERS.containsKey(packageOf(file))) {
                unknown.add(packageOf(file));
            }
        }
        assertEquals("packages without a layer (add them to LAYERS and docs/architecture.md)", new TreeSet<>(), unknown);
    }

    @Test
    public void chunkingCoreImportsNeitherOpenSearchNorDjl() throws IOException {
        for (Path file : javaFiles()) {
            if (packageOf(file).equals("chunking")) {
                String text = Files.readString(file);
                assertTrue(file + " imports OpenSearch", !text.contains("import org.opensearch."));
                assertTrue(file + " imports DJL", !text.contains("import ai.djl."));
            }
        }
    }

    /** The Strata packages a source file names (imports and fully qualified names alike). */
    private static TreeSet<String> used(Path file) throws IOException {
        Matcher m = USE.matcher(Files.readString(file));
        TreeSet<String> used = new TreeSet<>();
        while (m.find()) {
            used.add(m.group(1));
        }
        return used;
    }

    private static List<Path> javaFiles() throws IOException {
        try (Stream<Path> files = Files.walk(SOURCES)) {
            List<Path> out = files.filter(f -> f.toString().endsWith(".java")).toList();
            assertTrue("no sources under " + SOURCES.toAbsolutePath(), out.size() > 50);
            return out;
        }
    }

    private static String packageOf(Path file) {
        return SOURCES.relativize(file.getParent()).toString().replace(file.getFileSystem().getSeparator(), ".");
    }
}
