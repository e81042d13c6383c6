package io.agentbox.manager.events;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.function.Supplier;

/**
 * One thing that happened on the hub, as {@link EventBus} carries it: a name ({@code sandbox},
 * {@code cluster}, {@code build}), the team it belongs to (null: no team's, for admins only) and
 * its data, rendered at most once, on the bus's dispatcher thread, when a subscriber wants it.
 */
public final class HubEvent {
    private final String name;
    private final String team;
    private Supplier<JsonNode> render;
    private JsonNode data;

    /** @param render builds the data (may read stores; runs on the dispatcher thread, not the producer's) */
    public HubEvent(String name, String team, Supplier<JsonNode> render) {
        this.name = name;
        this.team = team;
        this.render = render;
    }

    public String name() {
        return name;
    }

    /** The owning team, or null for an event of no team (only admins see it). */
    public String team() {
        return team;
    }

    /** The event's data, rendered on first use. */
    public synchronized JsonNode data() {
        if (data == null) {
            data = render.get();
            render = null;
        }
        return data;
    }
}
