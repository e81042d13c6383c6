package io.agentbox.manager.http;

import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.regex.Pattern;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.slf4j.MDC;

/**
 * Gives every request an id: the client's {@value #HEADER} when it is a sane token (1 to
 * {@value #MAX_LENGTH} characters of letters, digits, {@code . _ : -}), else a new random one
 * (16 hex digits). The id is answered in the {@value #HEADER} response header, kept as a request
 * attribute ({@link #of}) for error bodies, and put in the SLF4J MDC under {@value #MDC_KEY} while
 * the handlers below run on the request's thread, so every log line they write names it
 * (logback.xml prints it). Worker calls carry it into their callbacks on other threads
 * ({@link io.agentbox.manager.routing.MdcCalls}), so stream relays log it too.
 */
public final class RequestIds extends Handler.Wrapper {
    public static final String HEADER = "X-Request-Id";
    public static final String MDC_KEY = "requestId";
    public static final int MAX_LENGTH = 64;
    private static final String ATTRIBUTE = RequestIds.class.getName();
    private static final Pattern SANE = Pattern.compile("[A-Za-z0-9._:-]{1," + MAX_LENGTH + "}");
    private static final SecureRandom RANDOM = new SecureRandom();

    public RequestIds(Handler next) {
        super(next);
    }

    @Override
    public boolean handle(Request request, Response response, Callback callback) throws Exception {
        String given = request.getHeaders().get(HEADER);
        String id = given != null && SANE.matcher(given).matches() ? given : newId();
        request.setAttribute(ATTRIBUTE, id);
        response.getHeaders().put(HEADER, id);
        String before = MDC.get(MDC_KEY);
        MDC.put(MDC_KEY, id);
        try {
            return super.handle(request, response, callback);
        } finally {
            if (before == null) {
                MDC.remove(MDC_KEY);
            } else {
                MDC.put(MDC_KEY, before);
            }
        }
    }

    /** The id of {@code request}; null when no {@link RequestIds} handler saw it. */
    public static String of(Request request) {
        Object v = request.getAttribute(ATTRIBUTE);
        return v instanceof String s ? s : null;
    }

    static String newId() {
        byte[] b = new byte[8];
        RANDOM.nextBytes(b);
        return HexFormat.of().formatHex(b);
    }
}
