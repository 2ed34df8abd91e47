package io.strata.demo;

import org.junit.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

/** How the programs find their node: argument, else STRATA_URL, else their default; a secured node's scheme for every port. */
public class ConnectionTests {
    private static final Map<String, String> SECURED = Map.of("STRATA_URL", "https://127.0.0.1:9830", "STRATA_USER", "admin",
        "STRATA_PASSWORD", "secret");

    @Test
    public void testUrl_argumentWinsOverEnvironmentAndDefault() {
        assertEquals("http://127.0.0.1:9900", Connection.url("http://127.0.0.1:9900", "http://127.0.0.1:9200", SECURED));
    }

    @Test
    public void testUrl_withoutArgument_isStrataUrl_elseTheProgramsDefault() {
        assertEquals("https://127.0.0.1:9830", Connection.url(null, "http://127.0.0.1:9200", SECURED));
        assertEquals("http://127.0.0.1:9200", Connection.url(null, "http://127.0.0.1:9200", Map.of()));
        assertEquals("http://127.0.0.1:9200", Connection.url("", "http://127.0.0.1:9200", Map.of("STRATA_URL", " ")));
    }

    @Test
    public void testNodes_keepStrataUrlsSchemeAndHost_onConsecutivePorts() {
        assertEquals(List.of("https://127.0.0.1:9830", "https://127.0.0.1:9831", "https://127.0.0.1:9832"),
            Connection.nodes(null, 10500, 3, SECURED));
        assertEquals(List.of("https://127.0.0.1:9840", "https://127.0.0.1:9841"), Connection.nodes("9840", 10500, 2, SECURED));
    }

    @Test
    public void testNodes_withoutEnvironment_arePlainHttpOnTheDefaultPort() {
        assertEquals(List.of("http://127.0.0.1:10500", "http://127.0.0.1:10501"), Connection.nodes(null, 10500, 2, Map.of()));
        assertEquals(List.of("http://127.0.0.1:9850"), Connection.nodes("9850", 10500, 1, Map.of()));
    }

    @Test
    public void testBuilder_httpsWithCredentialsAndNoCa_buildsAClientTrustingTheJvmsCas() throws Exception {
        try (var client = Connection.builder("https://127.0.0.1:9830", SECURED).build()) {
            assertNotNull(client);
        }
    }

    @Test
    public void testBuilder_unreadableCa_failsNamingStrataCa() throws Exception {
        Path empty = Files.createTempFile("strata-ca", ".pem");
        try {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Connection.builder("https://127.0.0.1:9830", Map.of("STRATA_CA", empty.toString())));
            assertTrue(e.getMessage(), e.getMessage().contains("STRATA_CA"));
            Map<String, String> missing = Map.of("STRATA_CA", empty.resolveSibling("no-such-ca.pem").toString());
            e = assertThrows(IllegalArgumentException.class, () -> Connection.builder("https://127.0.0.1:9830", missing));
            assertTrue(e.getMessage(), e.getMessage().contains("STRATA_CA"));
        } finally {
            Files.delete(empty);
        }
    }
}
