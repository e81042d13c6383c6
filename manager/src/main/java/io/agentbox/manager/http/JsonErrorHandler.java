package io.agentbox.manager.http;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.ByteBuffer;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.handler.ErrorHandler;
import org.eclipse.jetty.util.Callback;

/**
 * Errors Jetty raises itself (an ambiguous URI, a bad header, a request line too long), for any
 * method, in our shape, {@code {"code": <status>, "message": ...}} ({@link ErrorEnvelope} on the
 * native API's {@code /v1/} paths), instead of Jetty's HTML page.
 */
final class JsonErrorHandler extends ErrorHandler {
    /**
     * Every method gets the body: Jetty's default writes error pages only for GET, POST and HEAD,
     * so a refused {@code DELETE /templates/%2e%2e} was a bare 400 without a word of why.
     */
    @Override
    public boolean errorPageForMethod(String method) {
        return true;
    }

    @Override
    protected void generateResponse(Request request, Response response, int code, String message, Throwable cause,
                                    Callback callback) {
        String text = message == null || message.isBlank() ? "HTTP " + code : message;
        ObjectNode body;
        if (request.getHttpURI().getPath() != null && request.getHttpURI().getPath().startsWith(ErrorEnvelope.NATIVE_PREFIX)) {
            body = ErrorEnvelope.of(code, text, RequestIds.of(request)); // the native API's one error shape
        } else {
            body = Json.MAPPER.createObjectNode();
            body.put("code", code);
            body.put("message", text);
        }
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
        response.write(true, ByteBuffer.wrap(Json.bytes(body)), callback);
    }
}
