package io.agentbox.manager.nativeapi;

import io.agentbox.manager.auth.Principal;
import io.agentbox.manager.e2b.ControlCore;
import io.agentbox.manager.events.EventBus;
import io.agentbox.manager.events.HubEvent;
import io.agentbox.manager.http.InputText;
import io.agentbox.manager.http.route.RouteTable;
import java.util.function.Predicate;
import java.util.concurrent.ScheduledExecutorService;

/**
 * {@code GET /v1/events} (docs/native-api.md#events): the hub's sandbox, build and cluster changes
 * ({@link EventSources}) as server-sent events ({@link EventStream}). A key sees its team's sandboxes
 * and builds; an admin key sees every team's ({@code ?team=} narrows them) and the clusters. 429 over
 * the subscriber limits of {@link EventBus}; a worker's local API answers 501.
 */
final class EventEndpoints implements NativeHandler.RouteFamily {
    private final HubParts hub;
    private final ScheduledExecutorService timer;

    /** @param hub null on a worker's local API; else its sources start publishing now */
    EventEndpoints(HubParts hub, ControlCore core, ScheduledExecutorService timer) {
        this.hub = hub;
        this.timer = timer;
        if (hub != null) {
            EventSources.start(hub, core, timer);
        }
    }

    @Override
    public void routes(RouteTable.Builder<V1Endpoint> t) {
        t.add("GET", "/v1/events", c -> {
            Principal who = c.who();
            String team = c.query("team");
            if (team != null) {
                InputText.value("query parameter 'team'", team);
                if (!who.isAdmin() && !team.equals(who.team())) {
                    throw V1Errors.of(403, "query parameter 'team': only an admin key follows another team's events");
                }
            }
            if (hub == null) {
                throw V1Errors.of(501, "events are served by the hub only, not by a worker's local API");
            }
            try {
                new EventStream(c, hub.events(), who.team(), wants(who, team), timer);
            } catch (EventBus.LimitReached e) {
                throw V1Errors.of(429, e.getMessage() + "; close another event stream first");
            }
            return null; // the stream answers
        });
    }

    /** A key's team's events; an admin's of every team (or of {@code team}) and the clusters'. */
    static Predicate<HubEvent> wants(Principal who, String team) {
        if (!who.isAdmin()) {
            String own = who.team();
            return e -> own.equals(e.team());
        }
        return e -> e.team() == null || team == null || team.equals(e.team());
    }
}
