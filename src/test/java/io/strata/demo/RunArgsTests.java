package io.strata.demo;

import org.junit.Test;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

public class RunArgsTests {

    @Test
    public void testGivenValues_areRead_andMissingOnesFallBack() {
        RunArgs a = RunArgs.parse(new String[] { "docs=250", "mb=0.5", "embed=false", "book=a=b.txt" }, "docs", "mb", "embed", "book", "seed");
        assertEquals(250, a.integer("docs", 10000));
        assertEquals(0.5, a.decimal("mb", 5), 0);
        assertFalse(a.bool("embed", true));
        assertEquals("a=b.txt", a.string("book", null)); // only the first '=' separates
        assertEquals(42L, a.longValue("seed", 42));
        assertTrue(a.has("docs"));
        assertFalse(a.has("seed"));
    }

    @Test
    public void testMisspeltKey_isRefusedNamingTheSupportedOnes() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> RunArgs.parse(new String[] { "doc=250" }, "docs", "batch"));
        assertEquals("unknown argument [doc]; supported: docs, batch", e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> RunArgs.parse(new String[] { "250" }, "docs"));
        assertEquals("[250] is not key=value; supported: docs", e.getMessage());
    }

    @Test
    public void testValueOfTheWrongKind_namesItsKey() {
        RunArgs a = RunArgs.parse(new String[] { "docs=ten", "embed=yes", "mb=x" }, "docs", "embed", "mb");
        assertEquals("[docs] must be an integer, got [ten]",
            assertThrows(IllegalArgumentException.class, () -> a.integer("docs", 1)).getMessage());
        assertEquals("[embed] must be true or false, got [yes]",
            assertThrows(IllegalArgumentException.class, () -> a.bool("embed", true)).getMessage());
        assertEquals("[mb] must be a number, got [x]",
            assertThrows(IllegalArgumentException.class, () -> a.decimal("mb", 1)).getMessage());
    }

    @Test
    public void testReadingAnUndeclaredKey_isAProgramBug() {
        RunArgs a = RunArgs.parse(new String[0], "docs");
        assertThrows(IllegalStateException.class, () -> a.integer("dcos", 1));
    }
}
