package io.strata.chunking.structure;

import io.strata.chunking.RecursiveSplitter;
import io.strata.chunking.Section;
import io.strata.chunking.Span;
import io.strata.chunking.TextIndex;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.ToIntFunction;

/**
 * Lays chunks of at most θ words out along a document's structure; parents and every child level use it, with their θ.
 *
 * <ul>
 *   <li>Sections: a chunk stays inside one section. A section (with its sub-sections) that fits θ is one chunk; otherwise
 *   its own text and its sub-sections are packed in order, and consecutive ones that each fit θ are merged while they fit
 *   together: such a chunk keeps the enclosing section's path and records the merged sub-sections' titles
 *   ({@link Section#merged()}). A sub-section too large for θ is laid out on its own, recursively.</li>
 *   <li>Blocks: inside a section's own text, prose between blocks goes to the {@link ProseSplitter}; a code block, table
 *   or list that fits θ is one unit; a larger one is cut only between lines, rows or items (packed up to θ), a table's
 *   pieces that lack its header repeating it (counted in θ; a header of θ words or more is not repeated), a list item too large alone laid out around its nested
 *   blocks; a single line or row larger than θ is cut at words. Adjacent units merge while they fit θ, except across a
 *   cut the prose splitter or a block split chose.</li>
 *   <li>Headings: a chunk that would hold nothing but a section's heading (its section's body was cut after it, or its
 *   first sub-section is laid out alone) is not emitted alone: the heading joins the next chunk when that one starts
 *   inside its section (its first content), which may then exceed θ by the heading's words.</li>
 * </ul>
 *
 * <p>One instance per document; not thread-safe.
 */
public final class StructureLayout {
    private final TextIndex index;
    private final Outline outline;
    private final List<Block> blocks;
    /** Each section by the start of its heading. */
    private final Map<Integer, Outline.Node> sections = new HashMap<>();

    public StructureLayout(TextIndex index, Outline outline, List<Block> blocks) {
        this.index = index;
        this.outline = outline;
        this.blocks = blocks;
        List<Outline.Node> open = new ArrayList<>(outline.root().children());
        while (!open.isEmpty()) {
            Outline.Node n = open.remove(open.size() - 1);
            sections.put(n.own().start(), n);
            open.addAll(n.children());
        }
    }

    /** Chunks of at most {@code maxWords} words covering the non-whitespace text of {@code clip}, in order. */
    public List<Piece> layout(Span clip, int maxWords, ProseSplitter prose) {
        List<Piece> out = new ArrayList<>();
        Run run = new Run(clip, maxWords, prose, out);
        run.emit(outline.root());
        run.finish();
        return out;
    }

    /** The section whose heading is all that {@code span} holds (letters and digits as its title's), or null. */
    private Outline.Node headingOnly(Span span) {
        Outline.Node node = sections.get(span.start());
        return node != null && lettersAndDigits(span.of(index.text())).equals(lettersAndDigits(node.title())) ? node : null;
    }

    private static String lettersAndDigits(String s) {
        StringBuilder out = new StringBuilder(s.length());
        s.codePoints().filter(Character::isLetterOrDigit).forEach(out::appendCodePoint);
        return out.toString();
    }

    /** A section's own text ({@code child} null) or a whole sub-section, clipped. */
    private record Item(Span span, Outline.Node child) {}

    /** A span that may join the unit before it ({@code joins}) unless a splitter cut there; {@code header} is repeated. */
    private record Unit(Span span, Span header, boolean joins) {}

    private final class Run {
        private final Span clip;
        private final int max;
        private final ProseSplitter prose;
        private final List<Piece> out;
        private RecursiveSplitter words;
        private Span lastHeader;
        private int lastHeaderWords;
        /** A heading-only piece waiting for its section's first content, and its section. */
        private Piece pendingHeading;
        private Outline.Node pendingSection;

        Run(Span clip, int max, ProseSplitter prose, List<Piece> out) {
            this.clip = clip;
            this.max = max;
            this.prose = prose;
            this.out = out;
        }

        /** Adds a piece; a heading alone waits to join the next piece inside its section (see the class comment). */
        private void add(Piece piece) {
            if (pendingHeading != null) {
                Piece heading = pendingHeading;
                Outline.Node section = pendingSection;
                pendingHeading = null;
                if (piece.header() == null && section.subtree().start() <= piece.span().start()
                    && piece.span().start() < section.subtree().end()) {
                    List<String> outer = heading.section().path();
                    List<String> inner = piece.section().path();
                    // the heading's section holds the piece: its path, the sub-section the piece lies in as merged
                    Section where = inner.size() <= outer.size() ? piece.section()
                        : new Section(outer, heading.section().level(), List.of(inner.get(outer.size())));
                    piece = new Piece(new Span(heading.span().start(), piece.span().end()), null, where);
                } else {
                    out.add(heading);
                }
            }
            Outline.Node section = piece.header() == null ? headingOnly(piece.span()) : null;
            if (section != null) {
                pendingHeading = piece;
                pendingSection = section;
                return;
            }
            out.add(piece);
        }

        /** A heading with no content after it in the clip stays a piece of its own. */
        void finish() {
            if (pendingHeading != null) {
                out.add(pendingHeading);
                pendingHeading = null;
            }
        }

        void emit(Outline.Node node) {
            List<Item> items = items(node);
            if (items.isEmpty()) {
                return;
            }
            if (items.size() == 1 && items.get(0).child() != null) {
                emit(items.get(0).child());
                return;
            }
            Span all = new Span(items.get(0).span().start(), items.get(items.size() - 1).span().end());
            Span allHeader = headerBefore(all);
            if (index.words(all) + words(allHeader) <= max) {
                add(new Piece(all, allHeader, section(node, items)));
                return;
            }
            List<Item> group = new ArrayList<>();
            int groupWords = 0;
            for (Item item : items) {
                int itemWords = index.words(item.span());
                boolean fits = itemWords + words(headerBefore(item.span())) <= max;
                // items are consecutive sections with only whitespace between them: the group's words add up (joined)
                int together = group.isEmpty() ? itemWords
                    : joined(groupWords, group.get(group.size() - 1).span(), itemWords, item.span());
                if (fits && together <= max) {
                    group.add(item);
                    groupWords = together;
                    continue;
                }
                flush(node, group);
                if (fits) {
                    group.add(item);
                    groupWords = itemWords;
                } else if (item.child() != null) {
                    emit(item.child());
                } else {
                    content(node, item.span());
                }
            }
            flush(node, group);
        }

        private void flush(Outline.Node node, List<Item> group) {
            if (group.isEmpty()) {
                return;
            }
            if (group.size() == 1 && group.get(0).child() != null) {
                emit(group.get(0).child());
            } else {
                Span span = new Span(group.get(0).span().start(), group.get(group.size() - 1).span().end());
                add(new Piece(span, headerBefore(span), section(node, group)));
            }
            group.clear();
        }

        private List<Item> items(Outline.Node node) {
            List<Item> items = new ArrayList<>(node.children().size() + 1);
            Span own = clipped(node.own());
            if (own != null) {
                items.add(new Item(own, null));
            }
            List<Outline.Node> children = node.children();
            // sub-sections are contiguous and in order: the first one reaching into the clip is found by bisection (a child
            // level's run clips to one parent, and walking the sections before it, for every parent, added up)
            for (int c = firstEndingAfter(children, n -> n.subtree().end(), clip.start()); c < children.size(); c++) {
                Outline.Node child = children.get(c);
                if (child.subtree().start() >= clip.end()) {
                    break;
                }
                Span sub = clipped(child.subtree());
                if (sub != null) {
                    items.add(new Item(sub, child));
                }
            }
            return items;
        }

        /**
         * The header of a table that {@code span} starts inside of, below its header (a child of a table piece): that
         * chunk repeats it too. Null otherwise.
         */
        private Span headerBefore(Span span) {
            return headerBefore(blocks, span);
        }

        private Span headerBefore(List<Block> candidates, Span span) {
            int k = firstEndingAfter(candidates, b -> b.span().end(), span.start());
            if (k == candidates.size() || candidates.get(k).span().start() >= span.start()) {
                return null;
            }
            Block block = candidates.get(k);
            if (block.kind() == Block.Kind.LIST) {
                return headerBefore(block.nested(), span); // a table inside a list item
            }
            Span header = block.header();
            boolean inside = block.kind() == Block.Kind.TABLE && header != null && block.span().start() < span.start()
                && words(header) < max;
            return inside && header.end() <= span.start() ? header : null;
        }

        private Section section(Outline.Node node, List<Item> items) {
            List<String> merged = List.of();
            for (Item item : items) {
                if (item.child() != null) {
                    if (merged.isEmpty()) {
                        merged = new ArrayList<>();
                    }
                    merged.add(item.child().title());
                }
            }
            return new Section(node.path(), node.level(), merged);
        }

        /** A section's own text larger than θ: units around its blocks, merged up to θ. */
        private void content(Outline.Node node, Span span) {
            List<Unit> units = new ArrayList<>();
            units(span, blocks, units);
            Section section = new Section(node.path(), node.level(), List.of());
            Span current = null;
            Span header = null;
            for (Unit u : units) {
                if (current != null && u.joins() && u.header() == null
                    && index.words(current.start(), u.span().end()) + words(header) <= max) {
                    current = new Span(current.start(), u.span().end());
                    continue;
                }
                if (current != null) {
                    add(new Piece(current, header, section));
                }
                current = u.span();
                header = u.header();
            }
            if (current != null) {
                add(new Piece(current, header, section));
            }
        }

        /** Units of {@code span}: prose between the {@code candidates} blocks (ordered) and the blocks themselves. */
        private void units(Span span, List<Block> candidates, List<Unit> units) {
            int pos = span.start();
            for (int k = firstEndingAfter(candidates, b -> b.span().end(), span.start()); k < candidates.size(); k++) {
                Block block = candidates.get(k);
                if (block.span().start() >= span.end()) {
                    break;
                }
                Span part = clipped(block.span(), span);
                if (part == null) {
                    continue;
                }
                prose(new Span(pos, Math.max(pos, part.start())), units);
                block(block, part, units);
                pos = Math.max(pos, part.end());
            }
            prose(new Span(pos, Math.max(pos, span.end())), units);
        }

        private void prose(Span gap, List<Unit> units) {
            Span trimmed = index.trim(gap.start(), gap.end());
            if (trimmed.length() == 0) {
                return;
            }
            List<Span> parts = prose.split(trimmed);
            for (int i = 0; i < parts.size(); i++) {
                units.add(new Unit(parts.get(i), null, i == 0));
            }
        }

        private void block(Block block, Span part, List<Unit> units) {
            Span whole = index.trim(block.span().start(), block.span().end());
            if (part.contains(whole) && index.words(part) <= max) {
                units.add(new Unit(part, null, true));
                return;
            }
            List<Span> segments = cutAt(part, block.units());
            switch (block.kind()) {
                case CODE -> pack(segments, null, units);
                case TABLE -> table(block, part, segments, units);
                case LIST -> list(block, segments, units);
            }
        }

        /** Rows packed up to θ with the header counted: the piece holding the header keeps it in place, the others repeat it. */
        private void table(Block block, Span part, List<Span> segments, List<Unit> units) {
            Span header = block.header();
            if (header == null || words(header) >= max) {
                // a header as large as the chunk size cannot lead every piece: rows are packed as lines are
                pack(segments, null, units);
                return;
            }
            int start = 0;
            if (part.start() <= header.start()) {
                // the part begins with the header (and whatever precedes the first row): it leads the first piece
                Span first = segments.get(0);
                int k = 1;
                while (k < segments.size() && index.words(first.start(), segments.get(k).end()) <= max) {
                    first = new Span(first.start(), segments.get(k).end());
                    k++;
                }
                units.add(new Unit(first, null, true));
                start = k;
            }
            pack(segments.subList(start, segments.size()), header, units);
        }

        private void list(Block block, List<Span> segments, List<Unit> units) {
            int firstUnit = units.size();
            Span current = null;
            int currentWords = 0;
            for (Span item : segments) {
                int itemWords = index.words(item);
                // an item clipped inside a nested table's body must repeat that table's header: laid out around its blocks
                if (itemWords > max || headerBefore(block.nested(), item) != null) {
                    if (current != null) {
                        units.add(new Unit(current, null, units.size() == firstUnit));
                        current = null;
                    }
                    int before = units.size();
                    units(item, block.nested(), units);
                    if (units.size() > before && before > firstUnit) {
                        units.set(before, new Unit(units.get(before).span(), units.get(before).header(), false));
                    }
                } else if (current == null) {
                    current = item;
                    currentWords = itemWords;
                } else if (joined(currentWords, current, itemWords, item) <= max) {
                    currentWords = joined(currentWords, current, itemWords, item);
                    current = new Span(current.start(), item.end());
                } else {
                    units.add(new Unit(current, null, units.size() == firstUnit));
                    current = item;
                    currentWords = itemWords;
                }
            }
            if (current != null) {
                units.add(new Unit(current, null, units.size() == firstUnit));
            }
        }

        /** Consecutive segments packed up to θ (minus a repeated header's words); a segment too large alone is cut at words. */
        private void pack(List<Span> segments, Span header, List<Unit> units) {
            int budget = Math.max(1, max - words(header));
            boolean first = true;
            Span current = null;
            int currentWords = 0;
            for (Span segment : segments) {
                int segmentWords = index.words(segment);
                if (segmentWords > budget) {
                    if (current != null) {
                        units.add(new Unit(current, header, first && header == null));
                        first = false;
                        current = null;
                    }
                    for (Span w : splitter(budget).split(index, segment)) {
                        units.add(new Unit(w, header, first && header == null));
                        first = false;
                    }
                } else if (current == null) {
                    current = segment;
                    currentWords = segmentWords;
                } else if (joined(currentWords, current, segmentWords, segment) <= budget) {
                    currentWords = joined(currentWords, current, segmentWords, segment);
                    current = new Span(current.start(), segment.end());
                } else {
                    units.add(new Unit(current, header, first && header == null));
                    first = false;
                    current = segment;
                    currentWords = segmentWords;
                }
            }
            if (current != null) {
                units.add(new Unit(current, header, first && header == null));
            }
        }

        /**
         * Words from the start of {@code a} to the end of {@code b}, which follows it, both pieces of {@link #cutAt}: only
         * whitespace lies between them, so their counts add up, less the word cut in two when nothing does.
         */
        private static int joined(int aWords, Span a, int bWords, Span b) {
            return aWords + bWords - (a.end() == b.start() ? 1 : 0);
        }

        /** {@code part} cut at the starts of {@code units} that fall inside it, each piece trimmed. */
        private List<Span> cutAt(Span part, List<Span> units) {
            List<Span> out = new ArrayList<>();
            int pieceStart = part.start();
            for (Span unit : units) {
                if (unit.start() <= pieceStart) {
                    continue;
                }
                if (unit.start() >= part.end()) {
                    break;
                }
                add(pieceStart, unit.start(), out);
                pieceStart = unit.start();
            }
            add(pieceStart, part.end(), out);
            return out;
        }

        private void add(int start, int end, List<Span> out) {
            Span s = index.trim(start, end);
            if (s.length() > 0) {
                out.add(s);
            }
        }

        private RecursiveSplitter splitter(int maxWords) {
            if (words == null || words.maxWords() != maxWords) {
                words = new RecursiveSplitter(maxWords);
            }
            return words;
        }

        /** Words of a table header (null: none); the last one's count is kept, as a table's pieces ask for it in turn. */
        private int words(Span header) {
            if (header == null) {
                return 0;
            }
            if (header != lastHeader) {
                lastHeaderWords = index.words(header);
                lastHeader = header;
            }
            return lastHeaderWords;
        }

        private Span clipped(Span span) {
            return clipped(span, clip);
        }

        private Span clipped(Span span, Span to) {
            int start = Math.max(span.start(), to.start());
            int end = Math.min(span.end(), to.end());
            if (end <= start) {
                return null;
            }
            Span s = index.trim(start, end);
            return s.length() > 0 ? s : null;
        }
    }

    /** Index of the first of {@code items} (ordered and disjoint, so their ends are too) whose end is after {@code offset}. */
    private static <T> int firstEndingAfter(List<T> items, ToIntFunction<T> end, int offset) {
        int lo = 0;
        int hi = items.size();
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (end.applyAsInt(items.get(mid)) <= offset) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }
}
