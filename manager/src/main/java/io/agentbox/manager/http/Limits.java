package io.agentbox.manager.http;

/**
 * Size limits of the public API, in bytes unless stated.
 *
 * @param controlBody     largest E2B control-plane JSON body
 * @param rpcBody         largest Connect RPC request (unary JSON or one stream envelope)
 * @param uploadBody      largest {@code POST /files} body (multipart or octet-stream, after gunzip)
 * @param uploadMemoryPart multipart parts up to this size stay in memory, larger ones spill to a temp file
 * @param uploadParts     most parts in one multipart upload
 * @param streamQueue     most envelopes queued for one streaming response before the stream fails
 */
public record Limits(int controlBody, int rpcBody, long uploadBody, long uploadMemoryPart, int uploadParts,
                     int streamQueue) {
    public static final Limits DEFAULT = new Limits(1 << 20, 8 << 20, 512L << 20, 1L << 20, 1000, 64);
}
