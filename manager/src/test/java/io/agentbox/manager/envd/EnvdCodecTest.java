package io.agentbox.manager.envd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.google.protobuf.ByteString;
import com.google.protobuf.Message;
import com.google.protobuf.MessageOrBuilder;
import io.agentbox.manager.http.ApiException;
import io.agentbox.manager.http.Json;
import io.agentbox.manager.auth.EnvdTokens;
import io.agentbox.protocol.envd.EnvdProcess;
import io.agentbox.protocol.v1.EntryInfo;
import io.agentbox.protocol.v1.ExecEvent;
import io.agentbox.protocol.v1.FileType;
import io.agentbox.protocol.v1.ProcessExited;
import io.agentbox.protocol.v1.ProcessStarted;
import io.agentbox.protocol.v1.Signal;
import io.grpc.Status;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Base64;
import org.junit.jupiter.api.Test;

class EnvdCodecTest {
    @Test
    void envelopeRoundTrip() {
        byte[] payload = "{\"a\":1}".getBytes(StandardCharsets.UTF_8);
        ByteBuffer frame = ConnectEnvelope.frame(ConnectEnvelope.FLAG_END_STREAM, payload);
        assertThat(frame.remaining()).isEqualTo(5 + payload.length);
        assertThat(frame.get(0)).isEqualTo((byte) 2);
        assertThat(frame.getInt(1)).isEqualTo(payload.length);
        byte[] msg = new byte[frame.remaining()];
        ConnectEnvelope.frame(0, payload).get(msg);
        assertThat(ConnectEnvelope.singleMessage(msg)).isEqualTo(payload);
        msg[0] = 1;
        assertThatThrownBy(() -> ConnectEnvelope.singleMessage(msg)).isInstanceOf(ApiException.class);
        assertThatThrownBy(() -> ConnectEnvelope.singleMessage(new byte[] {0, 0, 0, 0, 9, 1})).isInstanceOf(ApiException.class);
    }

    @Test
    void grpcCodesMapToConnect() {
        assertThat(ConnectError.fromGrpc(Status.NOT_FOUND.withDescription("x"))).isEqualTo(ConnectError.of("not_found", "x"));
        assertThat(ConnectError.fromGrpc(Status.CANCELLED).code()).isEqualTo("canceled");
        assertThat(ConnectError.fromGrpc(Status.INVALID_ARGUMENT).httpStatus()).isEqualTo(400);
        assertThat(ConnectError.fromGrpc(Status.ALREADY_EXISTS).httpStatus()).isEqualTo(409);
        assertThat(ConnectError.fromGrpc(Status.DEADLINE_EXCEEDED).code()).isEqualTo("deadline_exceeded");
        assertThat(ConnectError.fromGrpc(Status.UNAUTHENTICATED).httpStatus()).isEqualTo(401);
    }

    @Test
    void entryInfoFollowsProto3JsonRules() throws Exception {
        JsonNode dir = json(EnvdJson.entryInfo(EntryInfo.newBuilder().setName("d").setPath("/home/user/d")
                .setType(FileType.FILE_TYPE_DIRECTORY).setSize(4096).setMode(0755).setModifiedTimeMs(0).build()));
        assertThat(dir.get("size").isTextual()).isTrue();
        assertThat(dir.get("size").asText()).isEqualTo("4096");
        assertThat(dir.get("type").asText()).isEqualTo("FILE_TYPE_DIRECTORY");
        assertThat(dir.get("mode").asLong()).isEqualTo(0x80000000L | 0755);
        assertThat(dir.get("permissions").asText()).isEqualTo("drwxr-xr-x");
        assertThat(dir.get("modifiedTime").asText()).isEqualTo("1970-01-01T00:00:00Z");
        assertThat(dir.has("symlinkTarget")).isFalse();
    }

    @Test
    void processEvents() throws Exception {
        assertThat(text(startResponse(ExecEvent.newBuilder().setStarted(ProcessStarted.newBuilder().setPid(42)).build())))
                .isEqualTo("{\"event\":{\"start\":{\"pid\":42}}}");
        assertThat(text(startResponse(ExecEvent.newBuilder().setStdout(ByteString.copyFromUtf8("hello\n")).build())))
                .isEqualTo("{\"event\":{\"data\":{\"stdout\":\"aGVsbG8K\"}}}");
        JsonNode end = json(startResponse(ExecEvent.newBuilder().setExited(ProcessExited.newBuilder()
                .setExitCode(3).setExited(true).setStatus("exit status 3").setError("exit status 3")).build()));
        assertThat(end.at("/event/end/exitCode").asInt()).isEqualTo(3);
        assertThat(end.at("/event/end/error").asText()).isEqualTo("exit status 3");
    }

    @Test
    void readsCamelAndSnakeCaseNumbersAsStringsAndEnumNames() throws Exception {
        EnvdProcess.SendSignalRequest req = parse("{\"process\":{\"pid\":\"12\"},\"signal\":\"SIGNAL_SIGKILL\"}",
                EnvdProcess.SendSignalRequest.getDefaultInstance());
        assertThat(EnvdJson.processRef("s", req.getProcess()).getPid()).isEqualTo(12);
        assertThat(EnvdJson.signal(req)).isEqualTo(Signal.SIGNAL_SIGKILL);
        assertThat(EnvdJson.signal(parse("{\"signal\":15}", EnvdProcess.SendSignalRequest.getDefaultInstance()))).isEqualTo(Signal.SIGNAL_SIGTERM);
        EnvdProcess.ProcessConfig cfg = parse("{\"cmd\":\"/bin/bash\",\"args\":[\"-l\",\"-c\",\"x\"],\"envs\":{\"A\":\"1\"},\"cwd\":\"/tmp\"}",
                EnvdProcess.ProcessConfig.getDefaultInstance());
        assertThat(EnvdJson.processConfig(cfg).getArgsList()).containsExactly("-l", "-c", "x");
        // snake_case name, number as a string (no request has a snake_case number field: an event's exit_code)
        assertThat(parse("{\"exit_code\":\"3\"}", EnvdProcess.ProcessEvent.EndEvent.getDefaultInstance()).getExitCode()).isEqualTo(3);
        assertThatThrownBy(() -> EnvdJson.processConfig(parse("{\"cmd\":1}", EnvdProcess.ProcessConfig.getDefaultInstance())))
                .isInstanceOf(ApiException.class);
    }

    @Test
    void readsStrictlyNamingTheFieldAndIgnoresUnknownFields() {
        EnvdProcess.StartRequest start = parse("{\"process\":{\"cmd\":\"ls\",\"future\":{\"x\":[1]}},\"stdin\":false,"
                + "\"somethingNew\":1}", EnvdProcess.StartRequest.getDefaultInstance());
        assertThat(start.getProcess().getCmd()).isEqualTo("ls");
        assertThat(start.hasStdin()).isTrue();
        assertThat(start.hasPty()).isFalse();
        assertThat(parse("", EnvdProcess.ListRequest.getDefaultInstance()).toString()).isEmpty();
        assertThat(parse("{\"input\":{\"stdin\":\"aGk\"}}", EnvdProcess.SendInputRequest.getDefaultInstance())
                .getInput().getStdin().toStringUtf8()).isEqualTo("hi"); // unpadded base64, as the SDK may send
        assertThat(parse("{\"input\":{\"pty\":\"-_8=\"}}", EnvdProcess.SendInputRequest.getDefaultInstance())
                .getInput().getPty().toByteArray()).containsExactly(0xfb, 0xff); // URL-safe base64
        for (String[] bad : new String[][] {
                {"{\"process\":{\"args\":[\"a\",2]}}", "field 'process.args[1]' must be a string"},
                {"{\"process\":{\"envs\":{\"A\":true}}}", "field 'process.envs.A' must be a string"},
                {"{\"process\":{\"cmd\":\"a\\u0000\"}}", "field 'process.cmd' holds"},
                {"{\"stdin\":\"yes\"}", "field 'stdin' must be true or false"},
                {"{\"pty\":{\"size\":{\"cols\":-1}}}", "field 'pty.size.cols' out of range"},
                {"{\"pty\":{\"size\":{\"cols\":1.5}}}", "field 'pty.size.cols' must be an integer"},
                {"{\"tag\":\"a\",\"tag\":\"b\"}", "malformed JSON"},
                {"{tag:\"a\"}", "malformed JSON"},
                {"[]", "must be a JSON object"}}) {
            assertThatThrownBy(() -> parse(bad[0], EnvdProcess.StartRequest.getDefaultInstance()))
                    .as(bad[0]).isInstanceOf(ApiException.class).hasMessageContaining(bad[1]);
        }
        assertThatThrownBy(() -> parse("{\"signal\":\"SIGNAL_SIGHUP\"}", EnvdProcess.SendSignalRequest.getDefaultInstance()))
                .hasMessageContaining("field 'signal' has unknown value 'SIGNAL_SIGHUP'");
        assertThatThrownBy(() -> EnvdJson.signal(parse("{\"signal\":2}", EnvdProcess.SendSignalRequest.getDefaultInstance())))
                .hasMessageContaining("unsupported signal 2");
        assertThatThrownBy(() -> parse("{\"input\":{\"stdin\":\"!!\"}}", EnvdProcess.SendInputRequest.getDefaultInstance()))
                .hasMessageContaining("field 'input.stdin' is not base64");
    }

    @Test
    void writesFieldsWithoutPresenceEvenAtTheirDefaultAndOptionalOnesOnlyWhenSet() {
        assertThat(text(startResponse(ExecEvent.newBuilder().setExited(ProcessExited.newBuilder().setStatus("exit status 0")).build())))
                .isEqualTo("{\"event\":{\"end\":{\"exitCode\":0,\"exited\":false,\"status\":\"exit status 0\"}}}");
        assertThat(text(EnvdJson.processInfo(io.agentbox.protocol.v1.ProcessInfo.newBuilder().setPid(7)
                .setConfig(io.agentbox.protocol.v1.ProcessConfig.newBuilder().setCmd("sh")).build())))
                .isEqualTo("{\"config\":{\"cmd\":\"sh\",\"args\":[],\"envs\":{}},\"pid\":7}");
        assertThat(text(EnvdJson.entryInfo(EntryInfo.newBuilder().setName("l").setType(FileType.FILE_TYPE_SYMLINK)
                .setMode(0777).setSymlinkTarget("/t").setModifiedTimeMs(1_500).build())))
                .contains("\"mode\":" + (0x8000000L | 0777), "\"permissions\":\"Lrwxrwxrwx\"",
                        "\"modifiedTime\":\"1970-01-01T00:00:01.500Z\"", "\"symlinkTarget\":\"/t\"");
        assertThat(text(EnvdJson.watchKeepalive())).isEqualTo("{\"keepalive\":{}}");
    }

    @SuppressWarnings("unchecked")
    private static <M extends Message> M parse(String json, M type) {
        return (M) EnvdCodec.parse(json.getBytes(StandardCharsets.UTF_8), type.newBuilderForType()).build();
    }

    private static EnvdProcess.StartResponse startResponse(ExecEvent ev) {
        return EnvdProcess.StartResponse.newBuilder().setEvent(EnvdJson.processEvent(ev)).build();
    }

    private static String text(MessageOrBuilder m) {
        return new String(EnvdCodec.print(m), StandardCharsets.UTF_8);
    }

    private static JsonNode json(MessageOrBuilder m) throws java.io.IOException {
        return Json.MAPPER.readTree(EnvdCodec.print(m));
    }

    @Test
    void accessTokensAndSignatures() throws Exception {
        EnvdTokens tokens = new EnvdTokens(new byte[32]);
        String t = tokens.token("abc-local");
        assertThat(t).matches("[0-9a-f]{40}");
        assertThat(tokens.verify("abc-local", t)).isTrue();
        assertThat(tokens.verify("other-local", t)).isFalse();
        String raw = "/home/user/x.txt:read::" + t;
        String sig = "v1_" + Base64.getEncoder().withoutPadding().encodeToString(
                MessageDigest.getInstance("SHA-256").digest(raw.getBytes(StandardCharsets.UTF_8)));
        assertThat(tokens.verifySignature("abc-local", "/home/user/x.txt", "read", null, sig, null, 0)).isTrue();
        assertThat(tokens.verifySignature("abc-local", "/home/user/x.txt", "write", null, sig, null, 0)).isFalse();
    }
}
