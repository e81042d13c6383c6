package io.agentbox.mux.tls;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A server's certificate chain and private key, read from PEM files the way ACME clients write
 * them: the chain file holds the leaf certificate first, then its intermediates (certbot's
 * {@code fullchain.pem}); the key file holds one unencrypted PKCS#8 key ({@code BEGIN PRIVATE KEY},
 * RSA, EC or EdDSA; certbot's {@code privkey.pem}).
 *
 * @param chain leaf first, never empty
 * @param key   the leaf's private key (checked to match the leaf's public key)
 */
public record PemKeyPair(List<X509Certificate> chain, PrivateKey key) {
    /** Largest PEM file read; real chains are a few KiB. */
    public static final int MAX_FILE_BYTES = 1 << 20;
    /** Password of the in-memory key store {@link #keyStore()} builds (it is never written anywhere). */
    public static final String KEY_STORE_PASSWORD = "agentbox-in-memory";
    /** Alias of the key entry in {@link #keyStore()}. */
    public static final String KEY_ALIAS = "server";

    private static final Pattern PEM_BLOCK = Pattern.compile(
            "-----BEGIN ([A-Z0-9 ]+)-----\\s*([A-Za-z0-9+/=\\s]*?)-----END \\1-----");

    public PemKeyPair {
        chain = List.copyOf(chain);
        if (chain.isEmpty()) {
            throw new IllegalArgumentException("empty certificate chain");
        }
    }

    /** The server's own certificate. */
    public X509Certificate leaf() {
        return chain.get(0);
    }

    /**
     * Reads and checks both files.
     *
     * @throws TlsFileException naming the file and what is wrong with it (unreadable, larger than
     *     {@value #MAX_FILE_BYTES} bytes, no certificate, no or an unsupported key, a key that does
     *     not belong to the certificate)
     */
    public static PemKeyPair read(Path certFile, Path keyFile) {
        return parse(readLimited(certFile), certFile.toString(), readLimited(keyFile), keyFile.toString());
    }

    /** As {@link #read} over file contents; the names appear in error messages. */
    public static PemKeyPair parse(byte[] certPem, String certName, byte[] keyPem, String keyName) {
        List<X509Certificate> chain = certificates(certPem, certName);
        PrivateKey key = privateKey(keyPem, keyName);
        if (!matches(key, chain.get(0))) {
            throw new TlsFileException("the private key in " + keyName + " does not belong to the certificate in "
                    + certName + " (were only one of the two files replaced?)");
        }
        return new PemKeyPair(chain, key);
    }

    /** Every certificate of a PEM file (at least one), in file order. */
    public static List<X509Certificate> certificates(byte[] pem, String name) {
        try (InputStream in = new ByteArrayInputStream(pem)) {
            List<X509Certificate> out = new ArrayList<>();
            for (var c : CertificateFactory.getInstance("X.509").generateCertificates(in)) {
                out.add((X509Certificate) c);
            }
            if (out.isEmpty()) {
                throw new TlsFileException(name + " holds no PEM certificate (-----BEGIN CERTIFICATE-----)");
            }
            return out;
        } catch (CertificateException | IOException e) {
            throw new TlsFileException(name + " holds no readable PEM certificate (-----BEGIN CERTIFICATE-----): "
                    + e.getMessage(), e);
        }
    }

    private static PrivateKey privateKey(byte[] pem, String name) {
        Matcher m = PEM_BLOCK.matcher(new String(pem, StandardCharsets.US_ASCII));
        while (m.find()) {
            String label = m.group(1);
            if (label.equals("PRIVATE KEY")) {
                byte[] der;
                try {
                    der = Base64.getMimeDecoder().decode(m.group(2));
                } catch (IllegalArgumentException e) {
                    throw new TlsFileException(name + ": the PRIVATE KEY block is not valid base64", e);
                }
                return pkcs8(der, name);
            }
            if (label.equals("RSA PRIVATE KEY") || label.equals("EC PRIVATE KEY")) {
                throw new TlsFileException(name + " holds a " + label + " (PKCS#1/SEC1); convert it once to PKCS#8 "
                        + "(BEGIN PRIVATE KEY) with: openssl pkcs8 -topk8 -nocrypt -in " + name + " -out KEY.pem");
            }
            if (label.equals("ENCRYPTED PRIVATE KEY")) {
                throw new TlsFileException(name + " holds an encrypted key; give an unencrypted one: "
                        + "openssl pkcs8 -topk8 -nocrypt -in " + name + " -out KEY.pem");
            }
        }
        throw new TlsFileException(name + " holds no PEM private key (-----BEGIN PRIVATE KEY-----)");
    }

    private static PrivateKey pkcs8(byte[] der, String name) {
        for (String algorithm : List.of("RSA", "EC", "EdDSA", "RSASSA-PSS")) {
            try {
                return KeyFactory.getInstance(algorithm).generatePrivate(new PKCS8EncodedKeySpec(der));
            } catch (GeneralSecurityException e) {
                // not this algorithm; try the next
            }
        }
        throw new TlsFileException(name + ": the PRIVATE KEY is neither an RSA, EC nor EdDSA key");
    }

    /** Signs a random challenge with {@code key} and verifies it with the certificate's public key. */
    private static boolean matches(PrivateKey key, X509Certificate cert) {
        String algorithm = signatureAlgorithm(key.getAlgorithm());
        if (algorithm == null) {
            return true; // e.g. RSASSA-PSS: left to the handshake
        }
        if (!algorithm.equals(signatureAlgorithm(cert.getPublicKey().getAlgorithm()))) {
            return false;
        }
        try {
            byte[] challenge = new byte[32];
            new SecureRandom().nextBytes(challenge);
            Signature sign = Signature.getInstance(algorithm);
            sign.initSign(key);
            sign.update(challenge);
            byte[] signature = sign.sign();
            Signature verify = Signature.getInstance(algorithm);
            verify.initVerify(cert.getPublicKey());
            verify.update(challenge);
            return verify.verify(signature);
        } catch (GeneralSecurityException e) {
            return false;
        }
    }

    private static String signatureAlgorithm(String keyAlgorithm) {
        return switch (keyAlgorithm) {
            case "RSA" -> "SHA256withRSA";
            case "EC" -> "SHA256withECDSA";
            case "EdDSA", "Ed25519", "Ed448" -> "EdDSA";
            default -> null;
        };
    }

    /** An in-memory PKCS#12 key store with the key under {@value #KEY_ALIAS}, password {@value #KEY_STORE_PASSWORD}. */
    public KeyStore keyStore() {
        try {
            KeyStore ks = KeyStore.getInstance("PKCS12");
            ks.load(null, null);
            ks.setKeyEntry(KEY_ALIAS, key, KEY_STORE_PASSWORD.toCharArray(), chain.toArray(new X509Certificate[0]));
            return ks;
        } catch (GeneralSecurityException | IOException e) {
            throw new IllegalStateException("cannot build an in-memory key store: " + e.getMessage(), e);
        }
    }

    /** A one-line description of the leaf: subject, serial, validity end. */
    public String describe() {
        X509Certificate c = leaf();
        return "'" + c.getSubjectX500Principal().getName() + "' serial " + c.getSerialNumber().toString(16)
                + ", valid until " + c.getNotAfter().toInstant();
    }

    /** The file's bytes, refusing files larger than {@value #MAX_FILE_BYTES}. */
    static byte[] readLimited(Path file) {
        try (InputStream in = Files.newInputStream(file)) {
            byte[] bytes = in.readNBytes(MAX_FILE_BYTES + 1);
            if (bytes.length > MAX_FILE_BYTES) {
                throw new TlsFileException(file + " is larger than " + MAX_FILE_BYTES + " bytes; is it a PEM file?");
            }
            return bytes;
        } catch (IOException e) {
            throw new TlsFileException("cannot read " + file + ": " + e, e);
        }
    }
}
