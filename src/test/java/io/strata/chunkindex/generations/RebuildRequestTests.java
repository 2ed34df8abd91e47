package io.strata.chunkindex.generations;

import org.junit.Test;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

public class RebuildRequestTests {
    @Test
    public void testRequestsPerSecond_absentOrMinusOne_isNoLimit() {
        assertEquals(Float.POSITIVE_INFINITY, RestRebuildAction.requestsPerSecond(null), 0);
        assertEquals(Float.POSITIVE_INFINITY, RestRebuildAction.requestsPerSecond("-1"), 0);
        assertEquals(2.5f, RestRebuildAction.requestsPerSecond("2.5"), 0);
    }

    @Test
    public void testRequestsPerSecond_zeroNegativeOrText_namesTheParameterAndWhatIsAllowed() {
        for (String bad : new String[] { "0", "-2", "fast", "NaN", "Infinity" }) {
            IllegalArgumentException e = assertThrows(bad, IllegalArgumentException.class, () -> RestRebuildAction.requestsPerSecond(bad));
            assertEquals("[_rebuild] [requests_per_second] must be a positive number of source documents a second, or -1 for no "
                + "limit; got [" + bad + "]", e.getMessage());
        }
    }

    @Test
    public void testValidate_withoutIndex_saysHowToNameIt() {
        assertNull(new RebuildRequest("books", null, Float.POSITIVE_INFINITY).validate());
        String message = new RebuildRequest(" ", null, Float.POSITIVE_INFINITY).validate().getMessage();
        assertTrue(message, message.contains("[_rebuild] needs [index]"));
    }
}
