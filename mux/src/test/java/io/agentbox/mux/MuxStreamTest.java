package io.agentbox.mux;

import static org.assertj.core.api.Assertions.assertThat;

import io.agentbox.mux.MuxStream.Handshake;
import io.agentbox.mux.MuxStream.State;
import org.junit.jupiter.api.Test;

/** The stream state machine the session drives (yamux spec "Stream Close", "Flow Control"). */
class MuxStreamTest {

    private static MuxStream stream(Handshake h) {
        return new MuxStream(7, h, 256 * 1024, 256 * 1024);
    }

    @Test
    void ourFinThenThePeersFinCloseTheStream() {
        MuxStream st = stream(Handshake.SYN_SENT);
        st.finSent();
        assertThat(st.state()).isEqualTo(State.LOCAL_CLOSED);
        assertThat(st.localFinSent()).isTrue();
        assertThat(st.peerMaySend()).isTrue();
        assertThat(st.isFinished()).isFalse();
        assertThat(st.finReceived()).isTrue();
        assertThat(st.state()).isEqualTo(State.CLOSED);
        assertThat(st.peerMaySend()).isFalse();
        assertThat(st.isFinished()).isTrue();
    }

    @Test
    void thePeersFinThenOursCloseTheStreamAndASecondPeerFinIsNoNews() {
        MuxStream st = stream(Handshake.SYN_RECEIVED);
        assertThat(st.finReceived()).isTrue();
        assertThat(st.state()).isEqualTo(State.REMOTE_CLOSED);
        assertThat(st.finReceived()).as("duplicate FIN").isFalse();
        assertThat(st.localFinSent()).isFalse();
        st.finSent();
        assertThat(st.state()).isEqualTo(State.CLOSED);
    }

    @Test
    void resetIsFinalAndReportedOnce() {
        MuxStream st = stream(Handshake.SYN_SENT);
        st.finSent();
        assertThat(st.reset()).isTrue();
        assertThat(st.reset()).isFalse();
        assertThat(st.finReceived()).as("a FIN after RST").isFalse();
        st.finSent();
        assertThat(st.state()).isEqualTo(State.RESET);
        assertThat(st.localFinSent()).isFalse();
        assertThat(st.peerMaySend()).isFalse();
        assertThat(st.isFinished()).isTrue();
    }

    @Test
    void eachHandshakeStepIsTakenOnce() {
        MuxStream out = stream(Handshake.SYN_SENT);
        assertThat(out.leaveSynReceived()).isFalse();
        assertThat(out.leaveSynSent()).isTrue();
        assertThat(out.leaveSynSent()).as("ACK after an RST released the open").isFalse();
        MuxStream in = stream(Handshake.SYN_RECEIVED);
        assertThat(in.leaveSynSent()).isFalse();
        assertThat(in.leaveSynReceived()).isTrue();
        assertThat(in.leaveSynReceived()).as("ACK or RST goes out once").isFalse();
    }

    @Test
    void windowsFollowGrantsAndTraffic() {
        MuxStream st = stream(Handshake.SYN_SENT);
        st.sent(200 * 1024);
        assertThat(st.sendWindow()).isEqualTo(56 * 1024);
        assertThat(st.granted(200 * 1024)).isEqualTo(256 * 1024);
        assertThat(st.granted(0xFFFF_FFFFL)).as("overflow is reported, the session rejects it").isGreaterThan(0xFFFF_FFFFL);
        st.received(100);
        assertThat(st.receiveWindow()).isEqualTo(256 * 1024 - 100);
        st.grant(100);
        assertThat(st.receiveWindow()).isEqualTo(256 * 1024);
    }
}
