package io.agentbox.protocol.image;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class ImageReferenceTest {
    private static final String HEX = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    @Test
    void dockerHubShortNamesAreNormalised() {
        assertThat(ImageReference.parse("python:3.12").toString()).isEqualTo("docker.io/library/python:3.12");
        assertThat(ImageReference.parse("ubuntu").toString()).isEqualTo("docker.io/library/ubuntu:latest");
        assertThat(ImageReference.parse("org/app").toString()).isEqualTo("docker.io/org/app:latest");
        assertThat(ImageReference.parse("index.docker.io/library/debian:12").toString())
                .isEqualTo("docker.io/library/debian:12");
        assertThat(ImageReference.parse("ubuntu").apiHost()).isEqualTo("registry-1.docker.io");
    }

    @Test
    void registriesAreRecognisedByDotColonOrLocalhost() {
        ImageReference r = ImageReference.parse("127.0.0.1:5000/team/app:v1");
        assertThat(r.registry()).isEqualTo("127.0.0.1:5000");
        assertThat(r.repository()).isEqualTo("team/app");
        assertThat(r.tag()).isEqualTo("v1");
        assertThat(r.apiHost()).isEqualTo("127.0.0.1:5000");
        assertThat(ImageReference.parse("localhost/app").registry()).isEqualTo("localhost");
        assertThat(ImageReference.parse("ghcr.io/o/r").toString()).isEqualTo("ghcr.io/o/r:latest");
        assertThat(ImageReference.parse("localhost:5000/app").repository()).isEqualTo("app");
    }

    @Test
    void digestsPinTheImage() {
        ImageReference d = ImageReference.parse("repo@sha256:" + HEX);
        assertThat(d.tag()).isNull();
        assertThat(d.manifestReference()).isEqualTo("sha256:" + HEX);
        assertThat(d.toString()).isEqualTo("docker.io/library/repo@sha256:" + HEX);
        ImageReference both = ImageReference.parse("reg.example:443/a/b:1.0@sha256:" + HEX);
        assertThat(both.tag()).isEqualTo("1.0");
        assertThat(both.manifestReference()).isEqualTo("sha256:" + HEX);
        assertThat(ImageReference.parse("x:1").withDigest("sha256:" + HEX).manifestReference()).isEqualTo("sha256:" + HEX);
    }

    @Test
    void malformedReferencesNameTheProblem() {
        assertThatThrownBy(() -> ImageReference.parse("")).hasMessageContaining("empty");
        assertThatThrownBy(() -> ImageReference.parse("Ubuntu")).hasMessageContaining("'Ubuntu'");
        assertThatThrownBy(() -> ImageReference.parse("ubuntu:")).hasMessageContaining("invalid tag");
        assertThatThrownBy(() -> ImageReference.parse("ubuntu:a b")).hasMessageContaining("invalid tag");
        assertThatThrownBy(() -> ImageReference.parse("ubuntu@sha256:abc")).hasMessageContaining("64 lowercase hex");
        assertThatThrownBy(() -> ImageReference.parse("ubuntu@md5:" + HEX)).hasMessageContaining("digest");
        assertThatThrownBy(() -> ImageReference.parse("reg.io:99999/app")).hasMessageContaining("port");
        assertThatThrownBy(() -> ImageReference.parse("a//b")).hasMessageContaining("component ''");
        assertThatThrownBy(() -> ImageReference.parse("reg.io/")).hasMessageContaining("no repository");
        assertThatThrownBy(() -> ImageReference.parse("a/b/../c")).hasMessageContaining("'..'");
        assertThatThrownBy(() -> ImageReference.parse("x".repeat(300))).hasMessageContaining("longer");
        assertThatThrownBy(() -> ImageReference.parse("bad_host.io:5000/ok")).hasMessageContaining("host");
    }
}
