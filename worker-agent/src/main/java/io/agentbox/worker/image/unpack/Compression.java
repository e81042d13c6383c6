package io.agentbox.worker.image.unpack;

import com.github.luben.zstd.ZstdInputStream;
import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.zip.GZIPInputStream;

/**
 * How a layer blob is compressed, decided from its first bytes (media types are optional in
 * manifests and some tools get them wrong): gzip {@code 1f 8b}, zstd frame {@code 28 b5 2f fd}
 * (RFC 8878 section 3.1.1), anything else is read as a plain tar.
 */
public enum Compression {
    GZIP, ZSTD, NONE;

    private static final int BUFFER = 128 * 1024;

    /** Peeks at {@code in} (which must support mark/reset) without consuming anything. */
    public static Compression sniff(InputStream in) throws IOException {
        in.mark(4);
        byte[] magic = in.readNBytes(4);
        in.reset();
        if (magic.length >= 2 && (magic[0] & 0xff) == 0x1f && (magic[1] & 0xff) == 0x8b) {
            return GZIP;
        }
        if (magic.length == 4 && (magic[0] & 0xff) == 0x28 && (magic[1] & 0xff) == 0xb5
                && (magic[2] & 0xff) == 0x2f && (magic[3] & 0xff) == 0xfd) {
            return ZSTD;
        }
        return NONE;
    }

    /** The uncompressed content of {@code blob}; closing the result closes {@code blob}. */
    public static InputStream decompress(InputStream blob) throws IOException {
        InputStream in = blob.markSupported() ? blob : new BufferedInputStream(blob, BUFFER);
        return switch (sniff(in)) {
            // GZIPInputStream reads concatenated members, as gzip(1) does
            case GZIP -> new GZIPInputStream(in, BUFFER);
            case ZSTD -> new BufferedInputStream(new ZstdInputStream(in), BUFFER);
            case NONE -> in;
        };
    }
}
