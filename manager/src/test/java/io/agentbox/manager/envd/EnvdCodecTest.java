package io.agentbox.manager.envd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.google.protobuf.ByteString;
import io.agentbox.manager.api.ApiException;
import io.agentbox.manager.api.Json;
import io.agentbox.manager.auth.EnvdTokens;
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
    void entryInfoFollowsProto3JsonRules() {
        JsonNode dir = EnvdJson.entryInfo(EntryInfo.newBuilder().setName("d").setPath("/home/user/d")
                .setType(FileType.FILE_TYPE_DIRECTORY).setSize(4096).setMode(0755).setModifiedTimeMs(0).build());
        assertThat(dir.get("size").isTextual()).isTrue();
        assertThat(dir.get("size").asText()).isEqualTo("4096");
        assertThat(dir.get("type").asText()).isEqualTo("FILE_TYPE_DIRECTORY");
        assertThat(dir.get("mode").asLong()).isEqualTo(0x80000000L | 0755);
        assertThat(dir.get("permissions").asText()).isEqualTo("drwxr-xr-x");
        assertThat(dir.get("modifiedTime").asText()).isEqualTo("1970-01-01T00:00:00Z");
        assertThat(dir.has("symlinkTarget")).isFalse();
    }

    @Test
    void processEvents() {
        assertThat(EnvdJson.processEvent(ExecEvent.newBuilder().setStarted(ProcessStarted.newBuilder().setPid(42)).build()).toString())
                .isEqualTo("{\"event\":{\"start\":{\"pid\":42}}}");
        assertThat(EnvdJson.processEvent(ExecEvent.newBuilder().setStdout(ByteString.copyFromUtf8("hello\n")).build()).toString())
                .isEqualTo("{\"event\":{\"data\":{\"stdout\":\"aGVsbG8K\"}}}");
        JsonNode end = EnvdJson.processEvent(ExecEvent.newBuilder().setExited(ProcessExited.newBuilder()
                .setExitCode(3).setExited(true).setStatus("exit status 3").setError("exit status 3")).build());
        assertThat(end.at("/event/end/exitCode").asInt()).isEqualTo(3);
        assertThat(end.at("/event/end/error").asText()).isEqualTo("exit status 3");
    }

    @Test
    void readsCamelAndSnakeCaseNumbersAsStringsAndEnumNames() throws Exception {
        JsonNode req = Json.MAPPER.readTree("{\"process\":{\"pid\":\"12\"},\"signal\":\"SIGNAL_SIGKILL\"}");
        assertThat(EnvdJson.processRef("s", req).getPid()).isEqualTo(12);
        assertThat(EnvdJson.signal(req)).isEqualTo(Signal.SIGNAL_SIGKILL);
        assertThat(EnvdJson.signal(Json.MAPPER.readTree("{\"signal\":15}"))).isEqualTo(Signal.SIGNAL_SIGTERM);
        JsonNode cfg = Json.MAPPER.readTree("{\"cmd\":\"/bin/bash\",\"args\":[\"-l\",\"-c\",\"x\"],\"envs\":{\"A\":\"1\"},\"cwd\":\"/tmp\"}");
        assertThat(EnvdJson.processConfig(cfg).getArgsList()).containsExactly("-l", "-c", "x");
        assertThat(EnvdJson.unsigned(Json.MAPPER.readTree("{\"include_entry\":\"3\"}"), "includeEntry", 10)).isEqualTo(3);
        assertThatThrownBy(() -> EnvdJson.processConfig(Json.MAPPER.readTree("{\"cmd\":1}"))).isInstanceOf(ApiException.class);
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
