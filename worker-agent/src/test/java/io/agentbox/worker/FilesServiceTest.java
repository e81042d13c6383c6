package io.agentbox.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import io.agentbox.protocol.v1.EntryInfo;
import io.agentbox.protocol.v1.ExecStart;
import io.agentbox.protocol.v1.FileChunk;
import io.agentbox.protocol.v1.FileType;
import io.agentbox.protocol.v1.ListDirRequest;
import io.agentbox.protocol.v1.MoveRequest;
import io.agentbox.protocol.v1.PathRequest;
import io.agentbox.protocol.v1.ProcessConfig;
import io.agentbox.protocol.v1.SandboxRef;
import io.agentbox.protocol.v1.WatchDirEvent;
import io.agentbox.protocol.v1.WatchDirRequest;
import io.agentbox.protocol.v1.WriteFileRequest;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import java.io.ByteArrayOutputStream;
import java.util.Iterator;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class FilesServiceTest {
    static WorkerFixture w;
    static String id;

    @BeforeAll
    static void up() throws Exception {
        w = new WorkerFixture(WorkerFixture.template("base", 1));
        id = w.create();
    }

    @AfterAll
    static void down() throws Exception {
        w.close();
    }

    private static PathRequest path(String p) {
        return PathRequest.newBuilder().setSandboxId(id).setPath(p).build();
    }

    static EntryInfo write(String sandbox, String path, byte[] data) {
        return write(PathRequest.newBuilder().setSandboxId(sandbox).setPath(path).build(), data);
    }

    static EntryInfo write(PathRequest target, byte[] data) {
        CompletableFuture<EntryInfo> done = new CompletableFuture<>();
        StreamObserver<WriteFileRequest> req = w.filesAsync.writeFile(new StreamObserver<>() {
            @Override
            public void onNext(EntryInfo v) {
                done.complete(v);
            }

            @Override
            public void onError(Throwable t) {
                done.completeExceptionally(t);
            }

            @Override
            public void onCompleted() {
            }
        });
        req.onNext(WriteFileRequest.newBuilder().setPath(target).build());
        for (int off = 0; off < data.length; off += 50_000) {
            req.onNext(WriteFileRequest.newBuilder()
                    .setData(ByteString.copyFrom(data, off, Math.min(50_000, data.length - off))).build());
        }
        req.onCompleted();
        try {
            return done.get(60, TimeUnit.SECONDS);
        } catch (java.util.concurrent.ExecutionException e) {
            throw (RuntimeException) e.getCause();
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    static byte[] read(String p) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        Iterator<FileChunk> it = w.files.readFile(path(p));
        while (it.hasNext()) {
            ByteString chunk = it.next().getData();
            assertThat(chunk.size()).isLessThanOrEqualTo(64 * 1024);
            out.writeBytes(chunk.toByteArray());
        }
        return out.toByteArray();
    }

    static void assertCode(ThrowingCallable call, Status.Code code) {
        assertThatThrownBy(call).isInstanceOfSatisfying(StatusRuntimeException.class,
                e -> assertThat(e.getStatus().getCode()).as(e.getMessage()).isEqualTo(code));
    }

    /** The call fails because the user may not reach the path: NOT_FOUND or PERMISSION_DENIED. */
    static void assertBlocked(ThrowingCallable call) {
        assertThatThrownBy(call).isInstanceOfSatisfying(StatusRuntimeException.class, e -> assertThat(e.getStatus().getCode())
                .as(e.getMessage()).isIn(Status.Code.NOT_FOUND, Status.Code.PERMISSION_DENIED));
    }

    static void assertFailure(ThrowingCallable call, Status.Code code, String message) {
        assertThatThrownBy(call).isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
            assertThat(e.getStatus().getCode()).as(e.getMessage()).isEqualTo(code);
            assertThat(e.getStatus().getDescription()).isEqualTo(message);
        });
    }

    @Test
    void aWatchEndsWithUnavailableNamingTheSandboxWhenItIsKilled() {
        String victim = w.create();
        CompletableFuture<Void> started = new CompletableFuture<>();
        CompletableFuture<Status> ended = new CompletableFuture<>();
        w.filesAsync.watchDir(WatchDirRequest.newBuilder().setSandboxId(victim).setPath("/home/user").build(), new StreamObserver<>() {
            @Override
            public void onNext(WatchDirEvent e) {
                if (e.hasStarted()) {
                    started.complete(null);
                }
            }

            @Override
            public void onError(Throwable t) {
                started.completeExceptionally(t);
                ended.complete(Status.fromThrowable(t));
            }

            @Override
            public void onCompleted() {
                ended.complete(Status.OK);
            }
        });
        started.orTimeout(20, TimeUnit.SECONDS).join();
        w.sandboxes.killSandbox(SandboxRef.newBuilder().setSandboxId(victim).build());
        Status status = ended.orTimeout(20, TimeUnit.SECONDS).join();
        assertThat(status.getCode()).as(status.toString()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(status.getDescription()).contains("sandbox " + victim + " was killed");
    }

    @Test
    void failuresNameThePathAndTheReasonWithoutShellNoise() {
        assertFailure(() -> write(id, "../../etc/evil", new byte[] {1}), Status.Code.PERMISSION_DENIED,
                "'/etc/evil': permission denied");
        assertFailure(() -> w.files.remove(path("/")), Status.Code.INVALID_ARGUMENT, "'/': refusing to remove '/'");
        String longName = "/tmp/" + "a".repeat(300);
        assertFailure(() -> write(id, longName, new byte[] {1}), Status.Code.INVALID_ARGUMENT,
                "'" + longName + "': file name too long");
    }

    @Test
    void writeReadRoundTripInChunksWithParentsCreated() {
        byte[] data = new byte[300_000];
        new Random(1).nextBytes(data);
        EntryInfo info = write(id, "dir/sub/data.bin", data);
        assertThat(info.getPath()).isEqualTo("/home/user/dir/sub/data.bin");
        assertThat(info.getName()).isEqualTo("data.bin");
        assertThat(info.getType()).isEqualTo(FileType.FILE_TYPE_FILE);
        assertThat(info.getSize()).isEqualTo(data.length);
        assertThat(info.getOwner()).isEqualTo("user");
        assertThat(read("/home/user/dir/sub/data.bin")).isEqualTo(data);
        // overwrite truncates; the file is visible to commands as the sandbox user's
        write(id, "~/dir/sub/data.bin", "short".getBytes());
        assertThat(w.run(id, "cat dir/sub/data.bin; stat -c %U dir/sub/data.bin").stdout()).isEqualTo("shortuser\n");
        assertThat(read("dir/../dir/sub/data.bin")).isEqualTo("short".getBytes());
        write(id, "/tmp/empty", new byte[0]);
        assertThat(read("/tmp/empty")).isEmpty();
    }

    private static PathRequest rootPath(String p) {
        return PathRequest.newBuilder().setSandboxId(id).setUser("root").setPath(p).build();
    }

    static byte[] readAs(PathRequest req) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        w.files.readFile(req).forEachRemaining(c -> out.writeBytes(c.getData().toByteArray()));
        return out.toByteArray();
    }

    @Test
    void rootWritesAndReadsWhereUserMayNotAndRelativePathsMeanSlashRoot() {
        EntryInfo etc = write(rootPath("/etc/agentbox-root-test.conf"), "by root".getBytes());
        assertThat(etc.getOwner()).isEqualTo("root");
        assertThat(readAs(rootPath("/etc/agentbox-root-test.conf"))).isEqualTo("by root".getBytes());
        // the same path as user: readable (0644) but not writable
        assertThat(read("/etc/agentbox-root-test.conf")).isEqualTo("by root".getBytes());
        assertCode(() -> write(id, "/etc/agentbox-root-test.conf", "x".getBytes()), Status.Code.PERMISSION_DENIED);

        // relative and ~ resolve against /root for root
        EntryInfo rel = write(rootPath("notes/a.txt"), "secret".getBytes());
        assertThat(rel.getPath()).isEqualTo("/root/notes/a.txt");
        assertThat(readAs(rootPath("~/notes/a.txt"))).isEqualTo("secret".getBytes());
        assertThat(w.files.stat(rootPath("notes")).getPath()).isEqualTo("/root/notes");
        assertThat(w.files.listDir(ListDirRequest.newBuilder().setSandboxId(id).setUser("root").build()).getEntriesList())
                .extracting(EntryInfo::getPath).contains("/root/notes");
        assertThat(w.files.makeDir(rootPath("made")).getPath()).isEqualTo("/root/made");
        assertThat(w.files.move(MoveRequest.newBuilder().setSandboxId(id).setUser("root").setSource("notes/a.txt")
                .setDestination("made/b.txt").build()).getPath()).isEqualTo("/root/made/b.txt");
        // /root is root's (0700): user may neither read nor remove inside it (the shell tools cannot
        // even see the path, so the answer is NOT_FOUND rather than PERMISSION_DENIED)
        assertBlocked(() -> readAs(path("/root/made/b.txt")));
        assertBlocked(() -> w.files.remove(path("/root/made")));
        assertThat(readAs(rootPath("/root/made/b.txt"))).isEqualTo("secret".getBytes());
        w.files.remove(rootPath("made"));
        assertCode(() -> w.files.stat(rootPath("/root/made")), Status.Code.NOT_FOUND);
        // what root wrote through the API, a root command sees (one file system)
        assertThat(w.run(ExecStart.newBuilder().setSandboxId(id).setProcess(ProcessConfig.newBuilder().setUser("root")
                .setCmd("/bin/cat").addArgs("/etc/agentbox-root-test.conf")).build()).stdout()).isEqualTo("by root");
        w.files.remove(rootPath("/etc/agentbox-root-test.conf"));
    }

    @Test
    void aWatchAsRootSeesRootsHome() {
        w.files.makeDir(rootPath("watched"));
        CompletableFuture<Void> started = new CompletableFuture<>();
        CompletableFuture<String> created = new CompletableFuture<>();
        w.filesAsync.watchDir(WatchDirRequest.newBuilder().setSandboxId(id).setUser("root").setPath("watched").build(),
                new StreamObserver<>() {
                    @Override
                    public void onNext(WatchDirEvent e) {
                        if (e.hasStarted()) {
                            started.complete(null);
                        } else {
                            created.complete(e.getFs().getName());
                        }
                    }

                    @Override
                    public void onError(Throwable t) {
                        started.completeExceptionally(t);
                        created.completeExceptionally(t);
                    }

                    @Override
                    public void onCompleted() {
                    }
                });
        started.orTimeout(20, TimeUnit.SECONDS).join();
        write(rootPath("watched/f"), new byte[] {1});
        assertThat(created.orTimeout(20, TimeUnit.SECONDS).join()).isEqualTo("f");
        // as user the same directory cannot be watched: /root is root's
        assertBlocked(() -> w.files.watchDir(WatchDirRequest.newBuilder().setSandboxId(id).setPath("/root/watched").build())
                .hasNext());
    }

    @Test
    void anUnknownUserIsUnauthenticatedForEveryFileCall() {
        PathRequest bad = PathRequest.newBuilder().setSandboxId(id).setUser("nobody-here").setPath("/tmp/x").build();
        String message = "user 'nobody-here' does not exist in this sandbox: sandboxes have 'user' (the default) and 'root'";
        assertFailure(() -> w.files.stat(bad), Status.Code.UNAUTHENTICATED, message);
        assertFailure(() -> w.files.makeDir(bad), Status.Code.UNAUTHENTICATED, message);
        assertFailure(() -> w.files.remove(bad), Status.Code.UNAUTHENTICATED, message);
        assertFailure(() -> readAs(bad), Status.Code.UNAUTHENTICATED, message);
        assertFailure(() -> write(bad, new byte[] {1}), Status.Code.UNAUTHENTICATED, message);
        assertFailure(() -> w.files.listDir(ListDirRequest.newBuilder().setSandboxId(id).setUser("nobody-here").build()),
                Status.Code.UNAUTHENTICATED, message);
        assertFailure(() -> w.files.move(MoveRequest.newBuilder().setSandboxId(id).setUser("nobody-here")
                .setSource("/tmp/a").setDestination("/tmp/b").build()), Status.Code.UNAUTHENTICATED, message);
        assertFailure(() -> w.files.watchDir(WatchDirRequest.newBuilder().setSandboxId(id).setUser("nobody-here")
                .setPath("/tmp").build()).hasNext(), Status.Code.UNAUTHENTICATED, message);
        assertCode(() -> w.files.stat(path("/tmp/x")), Status.Code.NOT_FOUND); // nothing was written
    }

    @Test
    void statListMakeDirMoveRemove() {
        EntryInfo dir = w.files.makeDir(path("/home/user/m/a/b"));
        assertThat(dir.getType()).isEqualTo(FileType.FILE_TYPE_DIRECTORY);
        assertThat(dir.getPermissions()).isEqualTo("drwxr-xr-x");
        assertThat(dir.getMode()).isEqualTo(0755);
        assertCode(() -> w.files.makeDir(path("/home/user/m/a/b")), Status.Code.ALREADY_EXISTS);
        write(id, "/home/user/m/f.txt", "hello".getBytes());

        EntryInfo st = w.files.stat(path("m/f.txt"));
        assertThat(st.getSize()).isEqualTo(5);
        assertThat(st.getModifiedTimeMs()).isCloseTo(System.currentTimeMillis(), org.assertj.core.data.Offset.offset(60_000L));

        var one = w.files.listDir(ListDirRequest.newBuilder().setSandboxId(id).setPath("/home/user/m").build());
        assertThat(one.getEntriesList()).extracting(EntryInfo::getPath)
                .containsExactlyInAnyOrder("/home/user/m/a", "/home/user/m/f.txt");
        var two = w.files.listDir(ListDirRequest.newBuilder().setSandboxId(id).setPath("/home/user/m").setDepth(2).build());
        assertThat(two.getEntriesList()).extracting(EntryInfo::getPath)
                .containsExactlyInAnyOrder("/home/user/m/a", "/home/user/m/a/b", "/home/user/m/f.txt");

        EntryInfo moved = w.files.move(MoveRequest.newBuilder().setSandboxId(id).setSource("/home/user/m/f.txt")
                .setDestination("/home/user/n/g.txt").build());
        assertThat(moved.getPath()).isEqualTo("/home/user/n/g.txt");
        assertCode(() -> w.files.stat(path("/home/user/m/f.txt")), Status.Code.NOT_FOUND);
        // a directory into itself: the caller's mistake, not a server fault (was INTERNAL: found by InputFuzzTest)
        assertCode(() -> w.files.move(MoveRequest.newBuilder().setSandboxId(id).setSource("/home/user/n")
                .setDestination("/home/user/n/inside").build()), Status.Code.INVALID_ARGUMENT);
        // a file onto a directory, / included (was INTERNAL "mv: '/' is a directory": found by InputFuzzTest)
        for (String target : java.util.List.of("/", "/home/user/m/a")) {
            assertFailure(() -> w.files.move(MoveRequest.newBuilder().setSandboxId(id).setSource("/home/user/n/g.txt")
                    .setDestination(target).build()), Status.Code.FAILED_PRECONDITION, "'/home/user/n/g.txt': the destination is a directory");
        }

        w.files.remove(path("/home/user/m"));
        assertCode(() -> w.files.stat(path("/home/user/m")), Status.Code.NOT_FOUND);
        assertCode(() -> w.files.remove(path("/home/user/m")), Status.Code.NOT_FOUND);
    }

    @Test
    void wrongTypesAndMissingPaths() {
        w.files.makeDir(path("/home/user/d"));
        write(id, "/home/user/plain", "x".getBytes());
        assertCode(() -> read("/home/user/d"), Status.Code.FAILED_PRECONDITION);
        assertCode(() -> w.files.listDir(ListDirRequest.newBuilder().setSandboxId(id).setPath("/home/user/plain").build()),
                Status.Code.FAILED_PRECONDITION);
        assertCode(() -> read("/home/user/missing"), Status.Code.NOT_FOUND);
        // a FIFO would block until a writer comes (a socket takes the same test: [ -S ]): refused at once
        w.run(id, "mkfifo /home/user/fifo");
        assertFailure(() -> read("/home/user/fifo"), Status.Code.FAILED_PRECONDITION,
                "path '/home/user/fifo' is a FIFO or a socket, not a regular file");
        assertThat(w.run(id, "pgrep -x cat || echo none").stdout().trim()).isEqualTo("none");
        assertCode(() -> w.files.listDir(ListDirRequest.newBuilder().setSandboxId(id).setPath("/nope").build()),
                Status.Code.NOT_FOUND);
        assertCode(() -> write(id, "/etc/hosts-new", "x".getBytes()), Status.Code.PERMISSION_DENIED);
        assertCode(() -> w.files.stat(PathRequest.newBuilder().setSandboxId("zzzzzzzzzzzz-test").setPath("/").build()),
                Status.Code.NOT_FOUND);
        assertCode(() -> write("zzzzzzzzzzzz-test", "/tmp/x", new byte[1]), Status.Code.NOT_FOUND);
    }

    @Test
    void symlinksCannotReachHostRootData() {
        w.run(id, "ln -sf /etc/shadow /home/user/shadow; ln -sf /root /home/user/rootdir");
        EntryInfo link = w.files.stat(path("/home/user/shadow"));
        assertThat(link.getType()).isEqualTo(FileType.FILE_TYPE_SYMLINK);
        assertThat(link.getSymlinkTarget()).isEqualTo("/etc/shadow");
        // /etc/shadow is removed from the sandbox's view of the host root
        assertCode(() -> read("/home/user/shadow"), Status.Code.NOT_FOUND);
        assertCode(() -> w.files.listDir(ListDirRequest.newBuilder().setSandboxId(id).setPath("/home/user/rootdir")
                .build()).getEntriesList().forEach(e -> {
                    throw new AssertionError("listed host /root entry " + e.getPath());
                }), Status.Code.PERMISSION_DENIED);
        // writing through a symlink into a root-owned directory fails for the sandbox user
        w.run(id, "ln -sf /usr/local /home/user/usrlocal");
        assertCode(() -> write(id, "/home/user/usrlocal/pwned", "x".getBytes()), Status.Code.PERMISSION_DENIED);
        assertThat(java.nio.file.Path.of("/usr/local/pwned")).doesNotExist();
    }
}
