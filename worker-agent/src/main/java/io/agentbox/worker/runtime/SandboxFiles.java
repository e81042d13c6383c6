package io.agentbox.worker.runtime;

import io.agentbox.protocol.v1.EntryInfo;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.List;

/**
 * File operations inside a sandbox. Paths are absolute sandbox paths (callers resolve relative
 * ones against the home directory first). Errors are {@link io.grpc.StatusRuntimeException}s:
 * NOT_FOUND (missing path), FAILED_PRECONDITION (wrong file type), ALREADY_EXISTS (MakeDir on an
 * existing path), PERMISSION_DENIED (the sandbox user may not do it), RESOURCE_EXHAUSTED (limits).
 */
public interface SandboxFiles {

    /** Opens a file for reading; the stream ends at EOF, {@link Read#finish()} reports late errors. */
    Read read(String path);

    /** Creates parents and truncates/creates the file; write bytes, then {@link Write#finish()}. */
    Write write(String path);

    /** Entries below {@code path} down to {@code depth} levels (1 = direct children). */
    List<EntryInfo> list(String path, int depth);

    /** Information about the path itself (a symlink is reported as a symlink). */
    EntryInfo stat(String path);

    /** Creates the directory and its parents. */
    EntryInfo makeDir(String path);

    /** Renames {@code source} to {@code destination}, creating the destination's parents. */
    EntryInfo move(String source, String destination);

    /** Removes a file or a directory tree. */
    void remove(String path);

    /** An open read. */
    interface Read extends AutoCloseable {
        InputStream data();

        /** Waits for the reader to end and throws the mapped error when it failed. */
        void finish();

        /** Abandons the read early. */
        @Override
        void close();
    }

    /** An open write. */
    interface Write extends AutoCloseable {
        OutputStream data();

        /** Closes the data stream, waits for the write to complete and stats the file. */
        EntryInfo finish();

        /**
         * Abandons the write; the old file stays as it was unless it was written in place
         * (ShellFiles#write says when).
         */
        @Override
        void close();
    }
}
