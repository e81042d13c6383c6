package io.agentbox.mux.grpc;

import io.agentbox.mux.tools.WebSocketLibrary;

/** {@link GrpcOverMuxTest} with the mux over Jetty's WebSocket instead of Netty's. */
class GrpcOverJettyMuxTest extends GrpcOverMuxTest {

    @Override
    WebSocketLibrary library() {
        return WebSocketLibrary.JETTY;
    }
}
