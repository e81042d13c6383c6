package io.agentbox.manager.http.route;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The routes of one API surface: (method, {@link PathTemplate}) → endpoint of type {@code E}.
 * Lookup answers the endpoint with its decoded path parameters, or says that the path is known
 * with other methods (a 405 with {@code Allow}) or unknown (a 404); the surface turns those into
 * its own error body. When several templates fit, the one with the most literal segments wins.
 * Immutable after building; thread-safe.
 *
 * @param <E> the surface's endpoint type
 */
public final class RouteTable<E> {
    /** One route; {@code path} is the template text, used as the metric label (bounded). */
    public record Route<E>(String method, PathTemplate template, E endpoint) {
        public String path() {
            return template.toString();
        }
    }

    /**
     * The answer of a lookup: {@code route} and {@code params} when one fits; otherwise
     * {@code allowed} holds the methods of the path (empty: the path is unknown).
     */
    public record Lookup<E>(Route<E> route, Map<String, String> params, Set<String> allowed) {
        public boolean found() {
            return route != null;
        }
    }

    private final List<Route<E>> routes;

    private RouteTable(List<Route<E>> routes) {
        this.routes = List.copyOf(routes);
    }

    public static <E> Builder<E> builder() {
        return new Builder<>();
    }

    public List<Route<E>> routes() {
        return routes;
    }

    /**
     * @param rawPath the request path before percent-decoding
     * @throws io.agentbox.manager.http.ApiException 400 for a malformed escape in a captured segment
     */
    public Lookup<E> lookup(String method, String rawPath) {
        List<String> segments = PathTemplate.split(rawPath);
        Route<E> best = null;
        Set<String> allowed = new TreeSet<>();
        for (Route<E> r : routes) {
            if (!r.template.fits(segments)) {
                continue;
            }
            allowed.add(r.method);
            if (r.method.equals(method) && (best == null || r.template.literalSegments() > best.template.literalSegments())) {
                best = r;
            }
        }
        if (best == null) {
            return new Lookup<>(null, Map.of(), allowed);
        }
        return new Lookup<>(best, best.template.params(segments), allowed);
    }

    /** Collects routes; a (method, template) pair may be added once. */
    public static final class Builder<E> {
        private final List<Route<E>> routes = new ArrayList<>();

        public Builder<E> add(String method, String template, E endpoint) {
            for (Route<E> r : routes) {
                if (r.method.equals(method) && r.path().equals(template)) {
                    throw new IllegalArgumentException("route " + method + " " + template + " added twice");
                }
            }
            routes.add(new Route<>(method, new PathTemplate(template), endpoint));
            return this;
        }

        public Builder<E> addAll(RouteTable<E> other) {
            other.routes.forEach(r -> add(r.method, r.path(), r.endpoint));
            return this;
        }

        public RouteTable<E> build() {
            return new RouteTable<>(routes);
        }
    }
}
