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
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

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

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int read_all(int fd, void *buf, size_t len)
{
	char *p = buf;

	while (len > 0) {
		ssize_t n = read(fd, p, len);

		if (n == 0)
			return -1;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int send_frame(int sock, char type, const void *data, uint32_t len)
{
	unsigned char hdr[5];

	hdr[0] = (unsigned char)type;
	hdr[1] = (unsigned char)(len >> 24);
	hdr[2] = (unsigned char)(len >> 16);
	hdr[3] = (unsigned char)(len >> 8);
	hdr[4] = (unsigned char)len;
	if (write_all(sock, hdr, sizeof(hdr)) < 0)
		return -1;
	return len ? write_all(sock, data, len) : 0;
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

/* Runs argv and relays its stdio over sock.  Returns when done. */
static void run_command(int sock, char **argv, const char *cwd)
{
	int in[2], out[2], err[2];
	pid_t pid;
	char buf[16384];
	char *pending = NULL;	/* stdin bytes not yet written to the child */
	size_t pending_len = 0, pending_off = 0;
	int in_fd, out_fd, err_fd, status = 0, exited = 0, sock_open = 1;
	long long exit_time = 0;

	if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0 ||
	    pipe2(err, O_CLOEXEC) < 0) {
		send_fail(sock, "pipe: %s", strerror(errno));
		send_status(sock, 127);
		return;
	}
	pid = fork();
	if (pid < 0) {
		send_fail(sock, "fork: %s", strerror(errno));
		send_status(sock, 127);
		return;
	}
	if (pid == 0) {
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
	close(in[0]);
	close(out[1]);
	close(err[1]);
	in_fd = in[1];
	out_fd = out[0];
	err_fd = err[0];
	set_nonblock(in_fd);

	for (;;) {
		struct pollfd pfd[4];
		int nfds = 0, i_sock = -1, i_out = -1, i_err = -1, i_in = -1;
		int timeout = -1;

		if (!exited) {
			pid_t w = waitpid(pid, &status, WNOHANG);

			if (w == pid) {
				exited = 1;
				exit_time = now_ms();
			}
		}
		if (exited) {
			/* Give background children holding our pipes a moment,
			 * then report the exit status anyway. */
			long long left = exit_time + 1000 - now_ms();

			if ((out_fd < 0 && err_fd < 0) || left <= 0)
				break;
			timeout = (int)left;
		} else {
			timeout = 50;	/* re-check waitpid */
		}
		if (sock_open && !pending) {
			i_sock = nfds;
			pfd[nfds].fd = sock;
			pfd[nfds++].events = POLLIN;
		}
		if (out_fd >= 0) {
			i_out = nfds;
			pfd[nfds].fd = out_fd;
			pfd[nfds++].events = POLLIN;
		}
		if (err_fd >= 0) {
			i_err = nfds;
			pfd[nfds].fd = err_fd;
			pfd[nfds++].events = POLLIN;
		}
		if (pending && in_fd >= 0) {
			i_in = nfds;
			pfd[nfds].fd = in_fd;
			pfd[nfds++].events = POLLOUT;
		}
		if (poll(pfd, (nfds_t)nfds, timeout) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (i_out >= 0 && pfd[i_out].revents &&
		    forward(&out_fd, sock, 'o', buf, sizeof(buf)) < 0)
			goto lost;
		if (i_err >= 0 && pfd[i_err].revents &&
		    forward(&err_fd, sock, 'r', buf, sizeof(buf)) < 0)
			goto lost;
		if (i_in >= 0 && pfd[i_in].revents) {
			ssize_t n = write(in_fd, pending + pending_off,
					  pending_len - pending_off);

			if (n > 0) {
				pending_off += (size_t)n;
			} else if (n < 0 && errno != EAGAIN && errno != EINTR) {
				close(in_fd);	/* child closed its stdin */
				in_fd = -1;
			}
			if (in_fd < 0 || pending_off == pending_len) {
				free(pending);
				pending = NULL;
			}
		}
		if (i_sock >= 0 && pfd[i_sock].revents) {
			char type;
			char *data;
			uint32_t len;

			if (recv_frame(sock, &type, &data, &len) < 0)
				goto lost;
			switch (type) {
			case 'i':
				if (in_fd >= 0 && len > 0) {
					pending = data;
					pending_len = len;
					pending_off = 0;
					data = NULL;
				}
				break;
			case 'I':
				if (in_fd >= 0) {
					close(in_fd);
					in_fd = -1;
				}
				break;
			case 'k':
				if (len == 1 && !exited)
					kill(-pid, (unsigned char)data[0]);
				break;
			default:
				logmsg("unexpected frame '%c' during a command", type);
				break;
			}
			free(data);
		}
	}
	if (!exited) {	/* only reached on poll failure */
		kill(-pid, SIGKILL);
		waitpid(pid, &status, 0);
	}
	if (WIFSIGNALED(status))
		send_status(sock, -WTERMSIG(status));
	else
		send_status(sock, WEXITSTATUS(status));
	if (in_fd >= 0)
		close(in_fd);
	free(pending);
	return;

lost:
	/* The host went away: nobody will read the output. */
	if (!exited) {
		kill(-pid, SIGKILL);
		waitpid(pid, &status, 0);
	}
	free(pending);
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
