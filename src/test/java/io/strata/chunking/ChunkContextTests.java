package io.strata.chunking;

import org.junit.Test;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

public class ChunkContextTests {
    private static final ChunkContext TITLE_AND_SECTION = new ChunkContext(List.of("title", "meta.tags"), true, false);

    private static Chunk chunk(String text, List<String> section) {
        return new Chunk(text, new Span(0, text.length()), 0, 0, section == null ? null : new Section(section, section.size(), List.of()),
            null);
    }

    private static ConfigException rejected(Object value, DocumentFormat format, boolean embed) {
        return assertThrows(ConfigException.class, () -> ChunkContext.parse(value, format, embed));
    }

    @Test
    public void testParse_absentIsNoContext_sectionDefaultsToTheFormatHavingSections() {
        assertNull(ChunkContext.parse(null, DocumentFormat.TEXT, true));
        assertEquals(new ChunkContext(List.of("title"), false, false),
            ChunkContext.parse(Map.of("fields", List.of("title")), DocumentFormat.TEXT, true));
        assertEquals(new ChunkContext(List.of(), true, false), ChunkContext.parse(Map.of(), DocumentFormat.MARKDOWN, true));
        assertEquals(new ChunkContext(List.of("title"), false, true),
            ChunkContext.parse(Map.of("fields", List.of("title"), "section", false, "lexical", true), DocumentFormat.HTML, false));
    }

    @Test
    public void testParse_errorsNameTheFieldAndWhatIsAllowed() {
        ConfigException notObject = rejected(List.of("title"), DocumentFormat.TEXT, true);
        assertEquals("context", notObject.field());
        assertTrue(notObject.getMessage(), notObject.getMessage().startsWith("[context] must be an object like {\"fields\": [\"title\"]"));
        ConfigException unknown = rejected(Map.of("fields", List.of("t"), "header", "x"), DocumentFormat.TEXT, true);
        assertEquals("context.header", unknown.field());
        assertEquals("[context.header] is not an option of [context]; supported: [fields, lexical, section]", unknown.getMessage());
        ConfigException section = rejected(Map.of("section", true), DocumentFormat.TEXT, true);
        assertEquals("context.section", section.field());
        assertEquals("[context.section] needs [format] [markdown, html]: format [text] has no sections", section.getMessage());
        ConfigException fields = rejected(Map.of("fields", "title"), DocumentFormat.TEXT, true);
        assertEquals("context.fields", fields.field());
        assertTrue(fields.getMessage(), fields.getMessage().contains("must be a list of source field names"));
        assertEquals("context.fields", rejected(Map.of("fields", List.of(" ")), DocumentFormat.TEXT, true).field());
        assertTrue(rejected(Map.of("fields", List.of("a", "b", "c", "d", "e", "f", "g", "h", "i")), DocumentFormat.TEXT, true).getMessage()
            .contains("allows at most 8 fields, got 9"));
        assertEquals("[context] gives no header: name [context.fields], or use [context.section] with [format] markdown or html",
            rejected(Map.of(), DocumentFormat.TEXT, true).getMessage());
        assertEquals("[context] gives no header: name [context.fields], or use [context.section] with [format] markdown or html",
            rejected(Map.of("section", false), DocumentFormat.MARKDOWN, true).getMessage());
        assertEquals("[context] has no effect: [embed] is false and [context.lexical] is false",
            rejected(Map.of("fields", List.of("title")), DocumentFormat.TEXT, false).getMessage());
        assertEquals("context.lexical", rejected(Map.of("fields", List.of("t"), "lexical", "yes"), DocumentFormat.TEXT, true).field());
    }

    @Test
    public void testHeader_fieldsThenSectionPath_joinedBySeparator_thenABlankLineBeforeTheText() {
        Map<String, Object> source = Map.of("title", "Strata guide", "meta.tags", List.of("search", "rag"));
        ChunkContext.Headers headers = TITLE_AND_SECTION.headers(source::get);
        Chunk c = chunk("Run bin/strata-demo.", List.of("Install", "On Linux"));
        assertEquals("Strata guide › search, rag › Install › On Linux", headers.of(c));
        assertEquals("Strata guide › search, rag › Install › On Linux\n\nRun bin/strata-demo.", headers.embedded(c));
        // before the first heading: the fields alone
        assertEquals("Strata guide › search, rag", headers.of(chunk("Intro.", List.of())));
    }

    @Test
    public void testHeader_missingNullAndBlankValuesAreSkipped_noHeaderEmbedsTheTextAlone() {
        Map<String, Object> source = new HashMap<>();
        source.put("meta.tags", null);
        source.put("title", "  ");
        ChunkContext.Headers headers = TITLE_AND_SECTION.headers(source::get);
        Chunk plain = chunk("Emma Woodhouse, handsome, clever, and rich.", null);
        assertEquals("", headers.of(plain));
        assertEquals(plain.text(), headers.embedded(plain));
        assertEquals(plain.text(), ChunkContext.Headers.NONE.embedded(plain));
        assertEquals("Install", headers.of(chunk("x", List.of("Install"))));
    }

    @Test
    public void testHeader_numbersAndBooleansAreWrittenOut_arraysJoined_whitespaceIsOneSpace() {
        ChunkContext c = new ChunkContext(List.of("year", "draft", "authors", "title"), false, false);
        Map<String, Object> source = Map.of("year", 1815, "draft", false, "authors", List.of("Jane Austen", 2, List.of()).subList(0, 2),
            "title", "Emma,\n  a  novel");
        assertEquals("1815 › false › Jane Austen, 2 › Emma, a novel", c.headers(source::get).of(chunk("t", null)));
    }

    @Test
    public void testHeader_anObjectOrNestedArrayValue_failsNamingTheField() {
        ChunkContext c = new ChunkContext(List.of("meta"), false, false);
        IllegalArgumentException object = assertThrows(IllegalArgumentException.class,
            () -> c.headers(Map.<String, Object>of("meta", Map.of("author", "Austen"))::get));
        assertEquals("[context.fields] field [meta] must be a string, a number, a boolean or an array of them, got [object]",
            object.getMessage());
        IllegalArgumentException nested = assertThrows(IllegalArgumentException.class,
            () -> c.headers(Map.<String, Object>of("meta", List.of(List.of("a")))::get));
        assertTrue(nested.getMessage(), nested.getMessage().endsWith("got [nested array]"));
    }

    @Test
    public void testHeader_aTitleRepeatedAsTheFirstHeading_appearsOnce() {
        ChunkContext.Headers headers = TITLE_AND_SECTION.headers(Map.<String, Object>of("title", "Install")::get);
        assertEquals("Install › On Linux", headers.of(chunk("x", List.of("Install", "On Linux"))));
    }

    @Test
    public void testHeader_longerThanTheLimit_isCutAtASpace() {
        String title = "word ".repeat(100).strip();
        String header = new ChunkContext(List.of("title"), false, false).headers(Map.<String, Object>of("title", title)::get)
            .of(chunk("t", null));
        assertTrue(header.length() <= ChunkContext.MAX_HEADER_CHARS);
        assertTrue(header, header.endsWith("word…"));
        assertTrue(title.startsWith(header.substring(0, header.length() - 1)));
    }
}
