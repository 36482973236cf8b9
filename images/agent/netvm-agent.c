/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * netvm-agent: the guest side of `./netvm run`.
 *
 * Started by the guest's /init, it listens on a TCP port (default 7777)
 * that QEMU's user-mode network forwards from 127.0.0.1 on the host.
 * Every connection is one session, served by its own forked process, so
 * any number of commands can run at once in one guest.
 *
 * Wire format (both directions): frames of
 *     u8 type | u32 length (big endian) | length bytes of payload
 *
 * Host -> guest
 *   'a'  one argv element (repeat; at least one before 'x')
 *   'e'  one environment entry "NAME=value" added to the agent's own
 *   'd'  working directory (default "/")
 *   'x'  start the command; afterwards only 'i', 'I' and 'k' are valid
 *   'i'  bytes for the command's stdin
 *   'I'  end of stdin (the command's stdin is closed)
 *   'k'  1 byte: a signal number, sent to the command's process group
 *   'p'  ping: the agent answers 'p' "netvm-agent <version> node=<N>"
 *        and closes the session
 *
 * Guest -> host
 *   'o'  bytes the command wrote to stdout
 *   'r'  bytes the command wrote to stderr
 *   'f'  a message from the agent (e.g. exec failed), then 'x' follows
 *   'x'  4 bytes, big-endian signed: exit code (0..255), or -SIGNAL if
 *        the command was killed by a signal.  Last frame of the session.
 *
 * If the host side goes away while the command runs, the command's
 * process group is killed.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent_io.h"

#define AGENT_VERSION "1"
#define MAX_FRAME (1u << 20)
#define MAX_ARGS 4096

static const char *node_id = "?";

static void logmsg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("netvm-agent: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/*
 * One read from a command's output pipe, sent on as a frame of @type.
 * At end of file (or an error) the pipe is closed and *fd set to -1.
 * Returns -1 only when the host connection is lost.
 */
static int forward(int *fd, int sock, char type, char *buf, size_t size)
{
	ssize_t n = read(*fd, buf, size);

	if (n > 0)
		return send_frame(sock, type, buf, (uint32_t)n) < 0 ? -1 : 0;
	if (n == 0 || errno != EINTR) {
		close(*fd);
		*fd = -1;
	}
	return 0;
}

/* Reads one frame; *data is malloc'ed and NUL-terminated.  -1 on EOF. */
static int recv_frame(int sock, char *type, char **data, uint32_t *len)
{
	unsigned char hdr[5];
	uint32_t n;
	char *buf;

	if (read_all(sock, hdr, sizeof(hdr)) < 0)
		return -1;
	n = ((uint32_t)hdr[1] << 24) | ((uint32_t)hdr[2] << 16) |
	    ((uint32_t)hdr[3] << 8) | hdr[4];
	if (n > MAX_FRAME) {
		logmsg("frame too large (%u bytes)", n);
		return -1;
	}
	buf = malloc(n + 1);
	if (!buf)
		return -1;
	if (n && read_all(sock, buf, n) < 0) {
		free(buf);
		return -1;
	}
	buf[n] = '\0';
	*type = (char)hdr[0];
	*data = buf;
	*len = n;
	return 0;
}

static int send_fail(int sock, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	if ((size_t)n >= sizeof(msg))
		n = sizeof(msg) - 1;
	return send_frame(sock, 'f', msg, (uint32_t)n);
}

static int send_status(int sock, int32_t status)
{
	uint32_t u = (uint32_t)status;
	unsigned char b[4] = {
		(unsigned char)(u >> 24), (unsigned char)(u >> 16),
		(unsigned char)(u >> 8), (unsigned char)u
	};

	return send_frame(sock, 'x', b, sizeof(b));
}

static int set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A running command, as the session process sees it. */
struct command {
	pid_t pid;
	int in_fd, out_fd, err_fd;	/* our ends of its stdio; -1: closed */
	int status, exited;
	int exit_fd;			/* pidfd: readable once it exits; -1: none */
	long long exit_time;		/* now_ms() when it exited */
	char *pending;			/* stdin bytes not yet written to it */
	size_t pending_len, pending_off;
};

/* In the forked child: become the command.  Never returns. */
static void __attribute__((noreturn))
exec_command(const int *in, const int *out, const int *err,
	     char **argv, const char *cwd)
{
	sigset_t none;

	setsid();
	/* /init started us in the background, with SIGINT and SIGQUIT
	 * ignored: give the command default dispositions. */
	for (int sig = 1; sig < NSIG; sig++)
		signal(sig, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	dup2(in[0], 0);
	dup2(out[1], 1);
	dup2(err[1], 2);
	if (chdir(cwd) < 0) {
		fprintf(stderr, "netvm-agent: chdir %s: %s\n", cwd,
			strerror(errno));
		_exit(127);
	}
	execvp(argv[0], argv);
	fprintf(stderr, "netvm-agent: %s: %s\n", argv[0], strerror(errno));
	_exit(errno == ENOENT ? 127 : 126);
}

/* Fork argv with pipes for its stdio.  -1 after telling the host why. */
static int start_command(int sock, char **argv, const char *cwd,
			 struct command *c)
{
	int in[2], out[2], err[2];

	if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0 ||
	    pipe2(err, O_CLOEXEC) < 0) {
		send_fail(sock, "pipe: %s", strerror(errno));
		send_status(sock, 127);
		return -1;
	}
	c->pid = fork();
	if (c->pid < 0) {
		send_fail(sock, "fork: %s", strerror(errno));
		send_status(sock, 127);
		return -1;
	}
	if (c->pid == 0)
		exec_command(in, out, err, argv, cwd);
	close(in[0]);
	close(out[1]);
	close(err[1]);
	c->in_fd = in[1];
	c->out_fd = out[0];
	c->err_fd = err[0];
	set_nonblock(c->in_fd);
	return 0;
}

/*
 * How long the next poll() may wait, in ms; -2 for as long as it takes
 * (the exit fd wakes it); -1 when it is time to report the exit status.
 * Notices the command's exit.
 */
static int poll_timeout(struct command *c)
{
	long long left;

	if (!c->exited && waitpid(c->pid, &c->status, WNOHANG) == c->pid) {
		c->exited = 1;
		c->exit_time = now_ms();
	}
	if (!c->exited)
		return c->exit_fd >= 0 ? -2 : 50;	/* -2: wait for exit_fd */
	/* Give background children holding our pipes a moment,
	 * then report the exit status anyway. */
	left = c->exit_time + 1000 - now_ms();
	if ((c->out_fd < 0 && c->err_fd < 0) || left <= 0)
		return -1;
	return (int)left;
}

/* The descriptors one poll() watches, by what they are. */
enum { W_SOCK, W_OUT, W_ERR, W_IN, W_EXIT, W_MAX };

struct watch {
	struct pollfd pfd[W_MAX];
	int at[W_MAX];		/* index into pfd[], -1: not watched */
	int n;
};

static void watch_fd(struct watch *w, int what, int fd, short events)
{
	w->at[what] = -1;
	if (fd < 0)
		return;
	w->at[what] = w->n;
	w->pfd[w->n].fd = fd;
	w->pfd[w->n++].events = events;
}

static int watch_ready(const struct watch *w, int what)
{
	return w->at[what] >= 0 && w->pfd[w->at[what]].revents;
}

/* Write what the command's stdin takes of the pending host bytes. */
static void feed_stdin(struct command *c)
{
	ssize_t n = write(c->in_fd, c->pending + c->pending_off,
			  c->pending_len - c->pending_off);

	if (n > 0) {
		c->pending_off += (size_t)n;
	} else if (n < 0 && errno != EAGAIN && errno != EINTR) {
		close(c->in_fd);	/* child closed its stdin */
		c->in_fd = -1;
	}
	if (c->in_fd < 0 || c->pending_off == c->pending_len) {
		free(c->pending);
		c->pending = NULL;
	}
}

/* One frame from the host while the command runs; -1: the host is gone. */
static int host_frame(int sock, struct command *c)
{
	char type;
	char *data;
	uint32_t len;

	if (recv_frame(sock, &type, &data, &len) < 0)
		return -1;
	switch (type) {
	case 'i':
		if (c->in_fd >= 0 && len > 0) {
			c->pending = data;
			c->pending_len = len;
			c->pending_off = 0;
			data = NULL;
		}
		break;
	case 'I':
		if (c->in_fd >= 0) {
			close(c->in_fd);
			c->in_fd = -1;
		}
		break;
	case 'k':
		if (len == 1 && !c->exited)
			kill(-c->pid, (unsigned char)data[0]);
		break;
	default:
		logmsg("unexpected frame '%c' during a command", type);
		break;
	}
	free(data);
	return 0;
}

/* Kill the command's process group if it still runs, and wait for it. */
static void reap_command(struct command *c)
{
	if (!c->exited) {
		kill(-c->pid, SIGKILL);
		waitpid(c->pid, &c->status, 0);
	}
}

/* Runs argv and relays its stdio over sock.  Returns when done. */
static void run_command(int sock, char **argv, const char *cwd)
{
	struct command c = { .in_fd = -1, .out_fd = -1, .err_fd = -1,
			     .exit_fd = -1 };
	char buf[16384];

	if (start_command(sock, argv, cwd, &c) < 0)
		return;
	/*
	 * The command's exit wakes us through a pidfd: polling waitpid every
	 * 50 ms woke the agent 20 times a second, and each wake-up took the
	 * guest's only CPU from a command spinning on a NIC poll for up to
	 * 2 ms under TCG (docs/bench.md, "The tail of a spinning round
	 * trip").  Without pidfds (Linux before 5.3) the 50 ms polls remain.
	 */
	c.exit_fd = (int)syscall(SYS_pidfd_open, c.pid, 0);
	for (;;) {
		struct watch w = { .n = 0 };
		int timeout = poll_timeout(&c);

		if (timeout == -1)
			break;
		watch_fd(&w, W_EXIT, c.exited ? -1 : c.exit_fd, POLLIN);
		/* the host's next frame waits until pending stdin is taken */
		watch_fd(&w, W_SOCK, c.pending ? -1 : sock, POLLIN);
		watch_fd(&w, W_OUT, c.out_fd, POLLIN);
		watch_fd(&w, W_ERR, c.err_fd, POLLIN);
		watch_fd(&w, W_IN, c.pending ? c.in_fd : -1, POLLOUT);
		if (poll(w.pfd, (nfds_t)w.n, timeout < 0 ? -1 : timeout) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (watch_ready(&w, W_OUT) &&
		    forward(&c.out_fd, sock, 'o', buf, sizeof(buf)) < 0)
			goto lost;
		if (watch_ready(&w, W_ERR) &&
		    forward(&c.err_fd, sock, 'r', buf, sizeof(buf)) < 0)
			goto lost;
		if (watch_ready(&w, W_IN))
			feed_stdin(&c);
		if (watch_ready(&w, W_SOCK) && host_frame(sock, &c) < 0)
			goto lost;
	}
	reap_command(&c);	/* it still runs only after a poll failure */
	if (c.exit_fd >= 0)
		close(c.exit_fd);
	if (WIFSIGNALED(c.status))
		send_status(sock, -WTERMSIG(c.status));
	else
		send_status(sock, WEXITSTATUS(c.status));
	if (c.in_fd >= 0)
		close(c.in_fd);
	free(c.pending);
	return;

lost:
	/* The host went away: nobody will read the output. */
	reap_command(&c);
	free(c.pending);
}

static void serve(int sock)
{
	char *argv[MAX_ARGS + 1];
	int argc = 0;
	char *cwd = NULL;

	for (;;) {
		char type;
		char *data;
		uint32_t len;

		if (recv_frame(sock, &type, &data, &len) < 0)
			return;
		switch (type) {
		case 'p': {
			char msg[128];
			int n = snprintf(msg, sizeof(msg),
					 "netvm-agent " AGENT_VERSION " node=%s",
					 node_id);

			send_frame(sock, 'p', msg, (uint32_t)n);
			free(data);
			return;
		}
		case 'a':
			if (argc == MAX_ARGS) {
				send_fail(sock, "too many arguments");
				send_status(sock, 127);
				return;
			}
			argv[argc++] = data;
			break;
		case 'e':
			if (strchr(data, '='))
				putenv(data);	/* keeps data */
			else
				free(data);
			break;
		case 'd':
			free(cwd);
			cwd = data;
			break;
		case 'x':
			free(data);
			if (argc == 0) {
				send_fail(sock, "no command given");
				send_status(sock, 127);
				return;
			}
			argv[argc] = NULL;
			run_command(sock, argv, cwd ? cwd : "/");
			return;
		default:
			logmsg("unknown frame type 0x%02x", (unsigned char)type);
			free(data);
			return;
		}
	}
}

int main(int argc, char **argv)
{
	struct sockaddr_in addr;
	int port = 7777, opt, lsock, one = 1;

	while ((opt = getopt(argc, argv, "p:n:")) != -1) {
		switch (opt) {
		case 'p':
			port = atoi(optarg);
			break;
		case 'n':
			node_id = optarg;
			break;
		default:
			fprintf(stderr, "usage: netvm-agent [-p PORT] [-n NODE]\n");
			return 2;
		}
	}
	signal(SIGPIPE, SIG_IGN);
	signal(SIGCHLD, SIG_IGN);	/* session processes reap themselves */

	lsock = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lsock < 0) {
		logmsg("socket: %s", strerror(errno));
		return 1;
	}
	setsockopt(lsock, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	memset(&addr, 0, sizeof(addr));
	addr.sin_family = AF_INET;
	addr.sin_port = htons((uint16_t)port);
	addr.sin_addr.s_addr = htonl(INADDR_ANY);
	if (bind(lsock, (struct sockaddr *)&addr, sizeof(addr)) < 0 ||
	    listen(lsock, 64) < 0) {
		logmsg("bind/listen on port %d: %s", port, strerror(errno));
		return 1;
	}
	logmsg("listening on port %d (node %s)", port, node_id);

	for (;;) {
		int sock = accept4(lsock, NULL, NULL, SOCK_CLOEXEC);
		pid_t pid;

		if (sock < 0) {
			if (errno != EINTR)
				logmsg("accept: %s", strerror(errno));
			continue;
		}
		setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		pid = fork();
		if (pid == 0) {
			close(lsock);
			/* The session process waits for its command itself. */
			signal(SIGCHLD, SIG_DFL);
			serve(sock);
			close(sock);
			_exit(0);
		}
		if (pid < 0)
			logmsg("fork: %s", strerror(errno));
		close(sock);
	}
}
