/*
 * agentbox spawner: PID 1 of a local sandbox (crun container) that starts commands on request.
 *
 * It runs in every namespace, the cgroup, the seccomp filter, the capability set and under the
 * no_new_privs flag of the container, so a command it forks gets exactly what `crun exec` would
 * give it, without a process on the host per command. As PID 1 it also reaps orphans (what
 * catatonit did) and cannot be killed from inside the sandbox.
 *
 * Usage: spawner SOCKET_PATH. Listens on a unix stream socket; one connection per command.
 * Wire (docs/local-runtime.md#spawner): frames of [type u8][length u32 big-endian][payload].
 *   client -> spawner: 'R' run (first and once), 'I' stdin bytes, 'C' close stdin, 'K' signal (u32)
 *   spawner -> client: 'P' started (u32 pid), 'O'/'E' stdout/stderr bytes, 'o'/'e' their end,
 *                      'X' exit (u8 1 = by signal, u32 code: exit code or 128 + signal),
 *                      'F' failure (u32 reason, text), after which the connection closes
 * 'R' payload: u32 flags, u32 uid, u32 gid, u32 argc, u32 envc, then NUL-terminated cwd,
 * argv[argc] and env[envc], nothing after.
 * A client that closes its connection while its command runs has the command's group killed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_REQUEST (1u << 20) /* bytes of an 'R' payload */
#define MAX_INPUT (64u << 10)  /* bytes of an 'I' payload */
#define CHUNK (32u << 10)      /* bytes read from a command's pipe per frame */
#define OUT_HIGH (256u << 10)  /* queued output above which the command's pipes are not read */
#define MAX_CONNS 1024
#define MAX_STRINGS 65536

enum { F_STDIN = 1, F_SETSID = 2, F_LOOKUP = 4 };
enum { FAIL_REQUEST = 1, FAIL_CWD = 2, FAIL_START = 3, FAIL_BUSY = 4 };

struct conn {
	int fd;
	pid_t pid;             /* 0: no command yet */
	int flags;
	int in, out, err, ctl; /* pipes to the command (ctl: until it started); -1 when closed */
	int exited;            /* the exit frame was queued (or must never be) */
	int closing;           /* close once the output is flushed */
	unsigned char hdr[5];
	uint32_t hdr_got, plen, pgot;
	unsigned char *payload;
	unsigned char *pend; /* stdin bytes the pipe did not take yet */
	uint32_t pend_len, pend_off;
	int close_in_after;
	unsigned char *obuf; /* queued frames to the client */
	size_t olen, ooff, ocap;
};

static struct conn **conns;
static int nconns;
static int listener = -1, sigfd = -1;

static uint32_t get32(const unsigned char *p) {
	return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static void put32(unsigned char *p, uint32_t v) {
	p[0] = v >> 24; p[1] = v >> 16; p[2] = v >> 8; p[3] = v;
}

static int reserve(struct conn *c, size_t more) {
	if (c->olen + more <= c->ocap) return 0;
	size_t cap = c->ocap ? c->ocap : 4096;
	while (cap < c->olen + more) cap *= 2;
	unsigned char *b = realloc(c->obuf, cap);
	if (!b) return -1;
	c->obuf = b;
	c->ocap = cap;
	return 0;
}

static void frame(struct conn *c, char type, const void *data, uint32_t len) {
	if (reserve(c, 5 + len)) { c->closing = 1; return; }
	c->obuf[c->olen] = type;
	put32(c->obuf + c->olen + 1, len);
	if (len) memcpy(c->obuf + c->olen + 5, data, len);
	c->olen += 5 + len;
}

static void fail(struct conn *c, uint32_t reason, const char *msg) {
	unsigned char b[4 + 256];
	size_t n = strlen(msg);
	if (n > 256) n = 256;
	put32(b, reason);
	memcpy(b + 4, msg, n);
	frame(c, 'F', b, 4 + n);
	c->closing = 1;
}

static void closefd(int *fd) {
	if (*fd >= 0) { close(*fd); *fd = -1; }
}

static void signal_command(struct conn *c, int sig) {
	if (c->pid <= 0 || c->exited) return;
	/* right after the start the child may not have called setsid yet: then it alone */
	if (!(c->flags & F_SETSID) || kill(-c->pid, sig) != 0) kill(c->pid, sig);
}

static void drop(struct conn *c) {
	signal_command(c, SIGKILL);
	close(c->fd);
	closefd(&c->in); closefd(&c->out); closefd(&c->err); closefd(&c->ctl);
	free(c->payload); free(c->pend); free(c->obuf);
	for (int i = 0; i < nconns; i++) {
		if (conns[i] == c) { conns[i] = conns[--nconns]; break; }
	}
	free(c);
}

/* Relays what the pipe holds now: one chunk, or up to `limit` bytes when draining. */
static void relay(struct conn *c, int *fd, char type, char eof, size_t limit) {
	size_t done = 0;
	while (*fd >= 0 && done < limit) {
		if (reserve(c, 5 + CHUNK)) { c->closing = 1; return; }
		ssize_t n = read(*fd, c->obuf + c->olen + 5, CHUNK);
		if (n > 0) {
			c->obuf[c->olen] = type;
			put32(c->obuf + c->olen + 1, (uint32_t)n);
			c->olen += 5 + n;
			done += n;
		} else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
			closefd(fd);
			frame(c, eof, NULL, 0);
		} else if (errno == EAGAIN) {
			return;
		}
	}
}

/* The child's report before exec: EOF = started; else a kind byte, errno and text. */
static void settle_ctl(struct conn *c) {
	if (c->ctl < 0) return;
	unsigned char b[300];
	ssize_t n;
	do n = read(c->ctl, b, sizeof b); while (n < 0 && errno == EINTR);
	if (n < 0 && errno == EAGAIN) return;
	closefd(&c->ctl);
	if (n <= 0) {
		unsigned char p[4];
		put32(p, (uint32_t)c->pid);
		frame(c, 'P', p, 4);
		return;
	}
	b[n < (ssize_t)sizeof b ? n : (ssize_t)sizeof b - 1] = 0;
	fail(c, b[0] == 'C' ? FAIL_CWD : FAIL_START, (char *)b + 1);
	c->exited = 1; /* it exits by itself; no exit frame after a failure */
	closefd(&c->in); closefd(&c->out); closefd(&c->err);
}

static void child_fail(int ctl, char kind, const char *what) {
	char b[300];
	int n = snprintf(b, sizeof b, "%c%s: %s", kind, what, strerror(errno));
	if (write(ctl, b, n > 0 ? (size_t)n : 0) < 0) { /* the spawner sees an early exit instead */ }
	_exit(kind == 'C' ? 97 : 126);
}

static const char *env_path(char **env) {
	for (; *env; env++) {
		if (!strncmp(*env, "PATH=", 5)) return *env + 5;
	}
	return "";
}

/* Like the shell: the first regular, executable file named `cmd` on PATH; NULL when none. */
static char *lookup(const char *cmd, const char *path, char *buf, size_t cap) {
	while (*path) {
		const char *end = strchrnul(path, ':');
		size_t dl = end - path, cl = strlen(cmd);
		if (dl > 0 && dl + 1 + cl < cap) {
			struct stat st;
			memcpy(buf, path, dl);
			buf[dl] = '/';
			memcpy(buf + dl + 1, cmd, cl + 1);
			if (stat(buf, &st) == 0 && S_ISREG(st.st_mode) && access(buf, X_OK) == 0) return buf;
		}
		path = *end ? end + 1 : end;
	}
	return NULL;
}

static void child(int flags, uid_t uid, gid_t gid, const char *cwd, char **argv, char **env, int in, int out, int err, int ctl) {
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	if (in < 0) in = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (in < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0) child_fail(ctl, 'E', "stdio");
	if ((flags & F_SETSID) && setsid() < 0) child_fail(ctl, 'E', "setsid");
	if (setgroups(0, NULL) < 0 && uid != 0) child_fail(ctl, 'E', "setgroups");
	if (setgid(gid) < 0) child_fail(ctl, 'E', "setgid");
	if (setuid(uid) < 0) child_fail(ctl, 'E', "setuid");
	if (chdir(cwd) < 0) child_fail(ctl, 'C', cwd);
	char buf[4096];
	const char *file = argv[0];
	if ((flags & F_LOOKUP) && !strchr(file, '/')) file = lookup(file, env_path(env), buf, sizeof buf);
	close(ctl); /* started: the cwd is entered, the ids are set */
	if (!file) {
		dprintf(2, "%s: command not found\n", argv[0]);
		_exit(127);
	}
	execve(file, argv, env);
	int e = errno;
	dprintf(2, "%s: %s\n", file, strerror(e));
	_exit(e == ENOENT ? 127 : 126);
}

static int nonblock(int fd) {
	return fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

static void spawn(struct conn *c, unsigned char *p, uint32_t len) {
	if (len < 20) { fail(c, FAIL_REQUEST, "run request shorter than its header"); return; }
	uint32_t flags = get32(p), uid = get32(p + 4), gid = get32(p + 8), argc = get32(p + 12), envc = get32(p + 16);
	if (argc < 1 || argc > MAX_STRINGS || envc > MAX_STRINGS || p[len - 1] != 0) {
		fail(c, FAIL_REQUEST, "run request: bad counts or unterminated strings");
		return;
	}
	char **strs = malloc((argc + envc + 3) * sizeof(char *));
	if (!strs) { fail(c, FAIL_START, "out of memory"); return; }
	uint32_t want = 1 + argc + envc, got = 0, off = 20;
	while (off < len && got < want) {
		strs[got++] = (char *)p + off;
		off += strlen((char *)p + off) + 1;
	}
	if (got != want || off != len) {
		free(strs);
		fail(c, FAIL_REQUEST, "run request: string count does not match its header");
		return;
	}
	/* cwd, argv..., NULL, env..., NULL */
	char *cwd = strs[0];
	char **argv = strs + 1;
	memmove(argv + argc + 1, argv + argc, envc * sizeof(char *));
	argv[argc] = NULL;
	char **env = argv + argc + 1;
	env[envc] = NULL;
	int in[2] = {-1, -1}, out[2], err[2], ctl[2];
	if (((flags & F_STDIN) && pipe2(in, O_CLOEXEC)) || pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC) || pipe2(ctl, O_CLOEXEC)) {
		free(strs);
		fail(c, FAIL_START, "no pipes left");
		return;
	}
	pid_t pid = fork();
	if (pid == 0) child(flags, uid, gid, cwd, argv, env, in[0], out[1], err[1], ctl[1]);
	free(strs);
	if (in[0] >= 0) close(in[0]);
	close(out[1]); close(err[1]); close(ctl[1]);
	if (pid < 0) {
		if (in[1] >= 0) close(in[1]);
		close(out[0]); close(err[0]); close(ctl[0]);
		fail(c, FAIL_START, strerror(errno));
		return;
	}
	c->pid = pid;
	c->flags = flags;
	c->in = in[1]; c->out = out[0]; c->err = err[0]; c->ctl = ctl[0];
	if (c->in >= 0) nonblock(c->in);
	nonblock(c->out); nonblock(c->err); nonblock(c->ctl);
}

static void write_stdin(struct conn *c) {
	while (c->pend && c->pend_off < c->pend_len) {
		ssize_t n = write(c->in, c->pend + c->pend_off, c->pend_len - c->pend_off);
		if (n > 0) { c->pend_off += n; continue; }
		if (n < 0 && errno == EAGAIN) return;
		if (n < 0 && errno == EINTR) continue;
		closefd(&c->in); /* the command closed its stdin: drop the rest */
		break;
	}
	free(c->pend);
	c->pend = NULL;
	if (c->close_in_after) closefd(&c->in);
}

static void on_frame(struct conn *c, char type, unsigned char *p, uint32_t len) {
	int started = c->pid > 0;
	if (type == 'R' && !started && !c->closing) {
		spawn(c, p, len);
	} else if (type == 'I' && started) {
		if (c->in < 0 || c->exited) return;
		c->pend = p; /* owned now */
		c->payload = NULL;
		c->pend_len = len;
		c->pend_off = 0;
		write_stdin(c);
	} else if (type == 'C' && started) {
		if (c->pend) c->close_in_after = 1; else closefd(&c->in);
	} else if (type == 'K' && started && len == 4) {
		uint32_t sig = get32(p);
		if (sig >= 1 && sig <= 64) signal_command(c, (int)sig);
	} else {
		signal_command(c, SIGKILL);
		fail(c, FAIL_REQUEST, started ? "unexpected frame after the run request" : "the first frame must be a run request");
	}
}

static uint32_t limit_of(char type) {
	switch (type) {
	case 'R': return MAX_REQUEST;
	case 'I': return MAX_INPUT;
	case 'K': return 4;
	case 'C': return 0;
	default: return UINT32_MAX;
	}
}

/* Reads and handles frames until the socket has no more or stdin backs up; -1: the client is gone. */
static int read_client(struct conn *c) {
	while (!c->pend && !c->closing) {
		if (c->hdr_got < 5) {
			ssize_t n = read(c->fd, c->hdr + c->hdr_got, 5 - c->hdr_got);
			if (n == 0) return -1;
			if (n < 0) return errno == EAGAIN || errno == EINTR ? 0 : -1;
			c->hdr_got += n;
			if (c->hdr_got < 5) continue;
			c->plen = get32(c->hdr + 1);
			uint32_t lim = limit_of((char)c->hdr[0]);
			if (lim == UINT32_MAX || c->plen > lim) {
				signal_command(c, SIGKILL);
				fail(c, FAIL_REQUEST, lim == UINT32_MAX ? "unknown frame type" : "frame longer than its limit");
				return 0;
			}
			c->pgot = 0;
			c->payload = c->plen ? malloc(c->plen) : NULL;
			if (c->plen && !c->payload) { fail(c, FAIL_START, "out of memory"); return 0; }
		}
		if (c->pgot < c->plen) {
			ssize_t n = read(c->fd, c->payload + c->pgot, c->plen - c->pgot);
			if (n == 0) return -1;
			if (n < 0) return errno == EAGAIN || errno == EINTR ? 0 : -1;
			c->pgot += n;
			if (c->pgot < c->plen) continue;
		}
		c->hdr_got = 0;
		on_frame(c, (char)c->hdr[0], c->payload, c->plen);
		free(c->payload);
		c->payload = NULL;
	}
	return 0;
}

/* -1: the client is gone. */
static int flush(struct conn *c) {
	while (c->ooff < c->olen) {
		ssize_t n = send(c->fd, c->obuf + c->ooff, c->olen - c->ooff, MSG_NOSIGNAL);
		if (n > 0) { c->ooff += n; continue; }
		if (n < 0 && errno == EINTR) continue;
		return n < 0 && errno == EAGAIN ? 0 : -1;
	}
	c->olen = c->ooff = 0;
	if (c->ocap > 64 * 1024) { free(c->obuf); c->obuf = NULL; c->ocap = 0; }
	return 0;
}

static void reap(void) {
	struct signalfd_siginfo si;
	while (read(sigfd, &si, sizeof si) > 0) {
	}
	int st;
	pid_t pid;
	while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
		for (int i = 0; i < nconns; i++) {
			struct conn *c = conns[i];
			if (c->pid != pid || c->exited) continue;
			settle_ctl(c);
			if (c->exited) break; /* it failed before its exec */
			relay(c, &c->out, 'O', 'o', 1u << 20);
			relay(c, &c->err, 'E', 'e', 1u << 20);
			unsigned char x[5];
			x[0] = WIFSIGNALED(st);
			put32(x + 1, WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WEXITSTATUS(st));
			frame(c, 'X', x, 5);
			c->exited = 1;
			closefd(&c->in);
			break;
		}
	}
}

static void accept_clients(void) {
	int fd;
	while ((fd = accept4(listener, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
		struct conn *c = calloc(1, sizeof *c);
		struct conn **grown = nconns % 16 == 0 ? realloc(conns, (nconns + 16) * sizeof *conns) : conns;
		if (!c || !grown || nconns >= MAX_CONNS) {
			static const char busy[] = "F\0\0\0\x0c\0\0\0\x04" "too busy";
			if (send(fd, busy, sizeof busy - 1, MSG_NOSIGNAL) < 0) { /* it sees the close */ }
			close(fd);
			free(c);
			if (grown) conns = grown;
			continue;
		}
		conns = grown;
		c->fd = fd;
		c->in = c->out = c->err = c->ctl = -1;
		conns[nconns++] = c;
	}
}

int main(int argc, char **argv) {
	if (argc != 2 || strlen(argv[1]) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
		fprintf(stderr, "usage: %s SOCKET_PATH\n", argv[0]);
		return 2;
	}
	sigset_t chld;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);
	signal(SIGPIPE, SIG_IGN);
	sigfd = signalfd(-1, &chld, SFD_NONBLOCK | SFD_CLOEXEC);
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	strcpy(addr.sun_path, argv[1]);
	unlink(argv[1]);
	listener = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	mode_t old = umask(077);
	if (sigfd < 0 || listener < 0 || bind(listener, (struct sockaddr *)&addr, sizeof addr) < 0 || listen(listener, 128) < 0) {
		perror("spawner");
		return 1;
	}
	umask(old);
	struct pollfd *pfd = NULL;
	struct conn **who = NULL;
	char *what = NULL;
	size_t cap = 0;
	for (;;) {
		size_t need = 2 + (size_t)nconns * 5, n = 0;
		if (need > cap) {
			cap = need + 16;
			pfd = realloc(pfd, cap * sizeof *pfd);
			who = realloc(who, cap * sizeof *who);
			what = realloc(what, cap);
			if (!pfd || !who || !what) abort();
		}
#define WATCH(f, ev, c, w) do { pfd[n].fd = (f); pfd[n].events = (ev); pfd[n].revents = 0; who[n] = (c); what[n] = (w); n++; } while (0)
		WATCH(listener, POLLIN, NULL, 'L');
		WATCH(sigfd, POLLIN, NULL, 'S');
		for (int i = 0; i < nconns; i++) {
			struct conn *c = conns[i];
			short ev = (c->pend || c->closing ? 0 : POLLIN) | (c->ooff < c->olen ? POLLOUT : 0);
			WATCH(c->fd, ev, c, 'c');
			if (c->ctl >= 0) WATCH(c->ctl, POLLIN, c, 'k');
			if (c->olen < OUT_HIGH && !c->closing) {
				if (c->out >= 0) WATCH(c->out, POLLIN, c, 'o');
				if (c->err >= 0) WATCH(c->err, POLLIN, c, 'e');
			}
			if (c->pend && c->in >= 0) WATCH(c->in, POLLOUT, c, 'i');
		}
		if (poll(pfd, n, -1) < 0) continue;
		/* a connection dropped below is skipped: its entries name it, so look it up first */
		for (size_t i = 2; i < n; i++) {
			struct conn *c = who[i];
			if (!pfd[i].revents) continue;
			int live = 0;
			for (int j = 0; j < nconns; j++) live |= conns[j] == c;
			if (!live) continue;
			switch (what[i]) {
			case 'c':
				if ((pfd[i].revents & (POLLIN | POLLHUP | POLLERR)) && read_client(c) < 0) { drop(c); continue; }
				break;
			case 'k': settle_ctl(c); break;
			case 'o': relay(c, &c->out, 'O', 'o', CHUNK); break;
			case 'e': relay(c, &c->err, 'E', 'e', CHUNK); break;
			case 'i': write_stdin(c); break;
			}
		}
		if (pfd[1].revents) reap();
		if (pfd[0].revents) accept_clients();
		for (int j = 0; j < nconns; j++) {
			struct conn *c = conns[j];
			int done = c->closing || (c->exited && c->out < 0 && c->err < 0);
			if (flush(c) < 0 || (done && c->ooff == c->olen)) {
				if (done) c->exited = 1; /* it ended or failed: nothing to kill */
				drop(c);
				j--;
			}
		}
	}
}
