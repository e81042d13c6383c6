package io.agentbox.manager.api;

import io.agentbox.manager.e2b.E2bControlHandler;
import io.agentbox.manager.console.ConsoleHandler;
import io.agentbox.manager.envd.EnvdHandler;
import io.agentbox.manager.nativeapi.NativeHandler;
import io.agentbox.manager.ports.PortRoute;
import org.eclipse.jetty.server.Request;

/**
 * The {@code route} label of a public API request, decided as {@link ApiHandler} dispatches:
 * {@value #PORT} for traffic to a sandbox's own port, the envd path for the data plane
 * ({@code /process.Process/Start}, {@code /files}; {@value #ENVD_UNMATCHED} for any other), and
 * the native API's or the control plane's route template ({@code /v1/sandboxes/{id}},
 * {@code /sandboxes/{id}}) otherwise; null when nothing fits.
 */
final class ApiRouteLabels {
    static final String PORT = "port";
    static final String ENVD_UNMATCHED = "envd:unmatched";
    static final String CONSOLE = "console";

    private ApiRouteLabels() {}

    static String of(Request request, E2bControlHandler control, NativeHandler nativeApi) {
        if (PortRoute.of(request) != null) {
            return PORT;
        }
        String path = request.getHttpURI().getPath();
        if (EnvdHandler.isEnvdRequest(request)) {
            String envd = EnvdHandler.routeLabel(path);
            return envd == null ? ENVD_UNMATCHED : envd;
        }
        if (ConsoleHandler.isConsoleRequest(request)) {
            return CONSOLE; // one label for every file of the console
        }
        if (NativeHandler.isNativeRequest(request)) {
            return nativeApi.routeLabel(request.getMethod(), request.getHttpURI().getPath());
        }
        return control.routeLabel(request.getMethod(), path);
    }
}
