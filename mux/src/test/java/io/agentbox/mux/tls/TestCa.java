package io.agentbox.mux.tls;

import java.io.IOException;
import java.io.StringWriter;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.concurrent.atomic.AtomicLong;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;
import org.bouncycastle.util.io.pem.PemObject;

/**
 * A certificate authority made in the test (BouncyCastle), issuing server certificates with the
 * names and validity a test asks for, written as PEM files the way ACME clients write them.
 */
public final class TestCa {
    private static final AtomicLong SERIALS = new AtomicLong(System.currentTimeMillis());

    private final KeyPair keys;
    private final X509Certificate cert;

    /** An issued server certificate and its key. */
    public record Issued(X509Certificate cert, KeyPair keys, X509Certificate issuer) {
        /** Writes the chain (leaf, then the CA) and the PKCS#8 key; returns {@code certFile}. */
        public Path write(Path certFile, Path keyFile) throws IOException {
            Files.writeString(certFile, pem(cert) + pem(issuer));
            Files.writeString(keyFile, pem(new PemObject("PRIVATE KEY", keys.getPrivate().getEncoded())));
            return certFile;
        }

        /** Writes the key in the traditional OpenSSL form ({@code BEGIN EC PRIVATE KEY}). */
        public Path writeSec1Key(Path keyFile) throws IOException {
            return Files.writeString(keyFile, pem(keys));
        }

        public BigInteger serial() {
            return cert.getSerialNumber();
        }
    }

    private TestCa(KeyPair keys, X509Certificate cert) {
        this.keys = keys;
        this.cert = cert;
    }

    /** A new CA, valid from an hour ago for a day. */
    public static TestCa create(String name) throws Exception {
        KeyPair keys = ecKeys();
        X500Name subject = new X500Name("CN=" + name);
        Instant now = Instant.now();
        X509v3CertificateBuilder b = new JcaX509v3CertificateBuilder(subject, serial(),
                Date.from(now.minus(Duration.ofHours(1))), Date.from(now.plus(Duration.ofDays(1))), subject, keys.getPublic());
        b.addExtension(Extension.basicConstraints, true, new BasicConstraints(true));
        b.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
        return new TestCa(keys, sign(b, keys));
    }

    public X509Certificate certificate() {
        return cert;
    }

    /** Writes this CA's certificate as PEM (what {@code --hub-ca} takes). */
    public Path writeCertificate(Path file) throws IOException {
        return Files.writeString(file, pem(cert));
    }

    /** A server certificate valid from an hour ago for a day, for {@code names} (DNS names or IPv4 addresses). */
    public Issued issue(String... names) throws Exception {
        Instant now = Instant.now();
        return issue(now.minus(Duration.ofHours(1)), now.plus(Duration.ofDays(1)), names);
    }

    /** A server certificate valid from {@code notBefore} to {@code notAfter}. */
    public Issued issue(Instant notBefore, Instant notAfter, String... names) throws Exception {
        KeyPair leafKeys = ecKeys();
        GeneralName[] san = new GeneralName[names.length];
        for (int i = 0; i < names.length; i++) {
            san[i] = names[i].matches("[0-9.]+") ? new GeneralName(GeneralName.iPAddress, names[i])
                    : new GeneralName(GeneralName.dNSName, names[i]);
        }
        X509v3CertificateBuilder b = new JcaX509v3CertificateBuilder(cert, serial(), Date.from(notBefore),
                Date.from(notAfter), new X500Name("CN=" + names[0]), leafKeys.getPublic());
        b.addExtension(Extension.subjectAlternativeName, false, new GeneralNames(san));
        b.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature));
        return new Issued(sign(b, keys), leafKeys, cert);
    }

    /** A JDK client context trusting only this CA (for HTTPS clients and raw handshakes in tests). */
    public SSLContext clientContext() throws GeneralSecurityException, IOException {
        KeyStore trust = KeyStore.getInstance("PKCS12");
        trust.load(null, null);
        trust.setCertificateEntry("ca", cert);
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trust);
        SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(null, tmf.getTrustManagers(), null);
        return ctx;
    }

    /** The serial of the certificate a TLS server at {@code host:port} presents to a new connection. */
    public static BigInteger servedSerial(SSLContext client, String host, int port) throws IOException {
        try (javax.net.ssl.SSLSocket s = (javax.net.ssl.SSLSocket) client.getSocketFactory().createSocket(host, port)) {
            s.setSoTimeout(10_000);
            s.startHandshake();
            return ((X509Certificate) s.getSession().getPeerCertificates()[0]).getSerialNumber();
        }
    }

    private static KeyPair ecKeys() throws GeneralSecurityException {
        KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
        g.initialize(new ECGenParameterSpec("secp256r1"));
        return g.generateKeyPair();
    }

    private static BigInteger serial() {
        return BigInteger.valueOf(SERIALS.incrementAndGet());
    }

    private static X509Certificate sign(X509v3CertificateBuilder b, KeyPair signer)
            throws OperatorCreationException, GeneralSecurityException {
        return new JcaX509CertificateConverter().getCertificate(
                b.build(new JcaContentSignerBuilder("SHA256withECDSA").build(signer.getPrivate())));
    }

    private static String pem(Object o) throws IOException {
        StringWriter out = new StringWriter();
        try (JcaPEMWriter w = new JcaPEMWriter(out)) {
            w.writeObject(o);
        }
        return out.toString();
    }
}
