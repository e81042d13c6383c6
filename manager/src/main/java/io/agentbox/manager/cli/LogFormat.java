package io.agentbox.manager.cli;

import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.joran.JoranConfigurator;
import ch.qos.logback.core.joran.spi.JoranException;
import java.net.URL;
import java.util.Locale;
import org.slf4j.LoggerFactory;

/**
 * The log format of the {@code agentbox} command: {@code text} (one line per event, the default,
 * {@code logback.xml}) or {@code json} (one JSON object per line, logback's {@code JsonEncoder},
 * {@code logback-json.xml}: {@code timestamp}, {@code level}, {@code threadName},
 * {@code loggerName}, {@code mdc}, {@code kvpList}, {@code formattedMessage}, {@code throwable}).
 * Chosen with {@code --log-format} or the environment variable {@value #ENV}; the option wins.
 */
final class LogFormat {
    static final String ENV = "AGENTBOX_LOG_FORMAT";
    static final String TEXT_CONFIG = "logback.xml";
    static final String JSON_CONFIG = "logback-json.xml";

    /** The configuration applied last (null: logback's own start-up choice). */
    private static String applied;

    private LogFormat() {}

    /**
     * Switches logging to {@code format} ({@code text} or {@code json}, any case; null or blank
     * changes nothing).
     *
     * @throws IllegalArgumentException for another value
     */
    static synchronized void apply(String format) {
        if (format == null || format.isBlank()) {
            return;
        }
        String config = switch (format.trim().toLowerCase(Locale.ROOT)) {
            case "text" -> TEXT_CONFIG;
            case "json" -> JSON_CONFIG;
            default -> throw new IllegalArgumentException("log format must be 'text' or 'json', not '" + format + "'");
        };
        if (config.equals(applied) || (applied == null && config.equals(TEXT_CONFIG))) {
            return; // already so: text is what logback starts with
        }
        URL url = LogFormat.class.getClassLoader().getResource(config);
        if (url == null) {
            throw new IllegalStateException(config + " is missing from the agentbox jar");
        }
        LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
        context.reset();
        JoranConfigurator joran = new JoranConfigurator();
        joran.setContext(context);
        try {
            joran.doConfigure(url);
        } catch (JoranException e) {
            throw new IllegalStateException("cannot configure logging from " + config + ": " + e.getMessage(), e);
        }
        applied = config;
    }
}
