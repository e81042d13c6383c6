package io.agentbox.manager.cli;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * A child JVM for {@link LogFormatTest}: parses its arguments with the real {@code agentbox}
 * command line (so {@code --log-format} and {@code AGENTBOX_LOG_FORMAT} take effect as they do
 * there), then logs an event with an argument, an MDC entry and an exception.
 */
final class JsonLogProbe {
    private JsonLogProbe() {}

    public static void main(String[] args) {
        AgentboxCommand.commandLine().parseArgs(args);
        Logger log = LoggerFactory.getLogger("io.agentbox.probe");
        MDC.put("sandbox", "sb-1");
        log.info("hello {}", "json");
        log.warn("it failed", new IllegalStateException("boom\nsecond line with \"quotes\""));
    }
}
