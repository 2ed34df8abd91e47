package io.strata.chunkindex.generations;

import org.opensearch.common.settings.Settings;
import org.opensearch.common.util.concurrent.ThreadContext;
import org.junit.Test;

import java.util.List;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

/** The caller as opensearch-security 3.4 writes it into the thread context (ThreadContextUserInfo), and what is injected. */
public class CallerIdentityTests {
    @Test
    public void testParse_userBackendRolesRolesTenantAccess_takesTheUserAndTheMappedRoles() {
        CallerIdentity c = CallerIdentity.parse("ann|ldap-team,ops|rebuilder,own_index|__user__|WRITE");
        assertEquals("ann", c.user());
        assertEquals(List.of("rebuilder", "own_index"), c.roles());
        assertTrue(c.secured());
        assertNull(c.problem());
        assertEquals("ann|rebuilder,own_index", c.injected());
    }

    @Test
    public void testParse_escapedPipes_stayInsideTheirField_andSuchANameIsNotInjected() {
        CallerIdentity c = CallerIdentity.parse("a\\|b||role\\|x|null|NONE");
        assertEquals("a|b", c.user());
        assertEquals(List.of("role|x"), c.roles());
        assertTrue(c.problem(), c.problem().contains("[a|b]") && c.problem().contains("[|]"));
    }

    @Test
    public void testParse_noRoles_isNotInjected_theSecurityPluginWouldRunAMalformedInjectionAsTheNode() {
        CallerIdentity c = CallerIdentity.parse("ann|||null");
        assertEquals(List.of(), c.roles());
        assertTrue(c.problem(), c.problem().contains("no user and roles"));
    }

    @Test
    public void testOf_threadContext_plainSecuredWithoutUserInfoAndWithIt() {
        ThreadContext context = new ThreadContext(Settings.EMPTY);
        CallerIdentity plain = CallerIdentity.of(context);
        assertFalse(plain.secured());
        assertNull(plain.problem());

        context.putTransient("_opendistro_security_origin", "REST");
        CallerIdentity noInfo = CallerIdentity.of(context);
        assertTrue(noInfo.secured());
        assertTrue(noInfo.problem(), noInfo.problem() != null);

        context.putTransient(CallerIdentity.USER_INFO, "bob||all_access|");
        CallerIdentity bob = CallerIdentity.of(context);
        assertEquals("bob|all_access", bob.injected());
    }

    @Test
    public void testSecuredNode_bySecuritySettings() {
        assertFalse(CallerIdentity.securedNode(Settings.EMPTY));
        assertTrue(CallerIdentity.securedNode(Settings.builder().put("plugins.security.ssl.http.enabled", true).build()));
        assertFalse(CallerIdentity.securedNode(Settings.builder().put("plugins.security.ssl.http.enabled", true)
            .put("plugins.security.disabled", true).build()));
    }
}
