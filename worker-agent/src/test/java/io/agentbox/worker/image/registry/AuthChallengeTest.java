package io.agentbox.worker.image.registry;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** WWW-Authenticate parsing: the forms Docker Hub, GHCR and docker-registry send, and awkward ones. */
class AuthChallengeTest {
    @Test
    void bearerWithQuotedParameters() {
        List<AuthChallenge> c = AuthChallenge.parse(
                "Bearer realm=\"https://auth.docker.io/token\",service=\"registry.docker.io\",scope=\"repository:library/python:pull\"");
        assertEquals(List.of(new AuthChallenge("bearer", Map.of("realm", "https://auth.docker.io/token",
                "service", "registry.docker.io", "scope", "repository:library/python:pull"))), c);
    }

    @Test
    void severalChallengesCommasInsideQuotesAndEscapes() {
        List<AuthChallenge> c = AuthChallenge.parse(
                "Basic realm=\"a, b\", Bearer realm=\"https://x/t\" , service=svc, scope=\"repository:a:pull,push\", error=\"say \\\"hi\\\"\"");
        assertEquals(2, c.size());
        assertEquals(new AuthChallenge("basic", Map.of("realm", "a, b")), c.get(0));
        assertEquals(Map.of("realm", "https://x/t", "service", "svc", "scope", "repository:a:pull,push", "error", "say \"hi\""),
                c.get(1).params());
    }

    @Test
    void bareSchemeAndGarbage() {
        assertEquals(List.of(new AuthChallenge("basic", Map.of())), AuthChallenge.parse("BASIC"));
        assertEquals(List.of(), AuthChallenge.parse(null));
        assertEquals(List.of(), AuthChallenge.parse("   "));
        assertEquals(List.of(), AuthChallenge.parse("x".repeat(AuthChallenge.MAX_HEADER_CHARS + 1)));
    }
}
