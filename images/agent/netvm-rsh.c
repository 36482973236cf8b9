/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * netvm-rsh: an rsh-compatible remote shell over the guest agent, so that
 * MPI launchers (Open MPI's plm rsh, MPICH's hydra) start processes on the
 * other nodes of a cluster without ssh (docs/packages.md).
 *
 *     netvm-rsh [-n] [-l USER] [-p PORT] [-x] [-q] [-T] [-o OPT] HOST COMMAND...
 *
 * Like rsh, the COMMAND words are joined with spaces and run by the remote
 * shell (sh -c) of HOST's agent (images/agent/netvm-agent.c, port 7777 or
 * $NETVM_AGENT_PORT), reached over the data network.  Our stdin goes to
 * the command (none with -n), its stdout and stderr come back on ours, and
 * we exit with its status (128+N if a signal N killed it).  -l, -x, -q,
 * -T and -o are accepted and ignored (launchers pass them to ssh).  If we
 * die, the agent sees the connection close and kills the command.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "agent_io.h"

#define MAX_FRAME (1u << 20)

/* a frame no longer than the agent takes */
static int send_rsh_frame(int sock, char type, const void *data, size_t len)
{
	if (len > MAX_FRAME)
		return -1;
	return send_frame(sock, type, data, (uint32_t)len);
}

static int connect_host(const char *host, const char *port)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
	struct addrinfo *res, *ai;
	int one = 1, sock = -1, rc;

	rc = getaddrinfo(host, port, &hints, &res);
	if (rc) {
		fprintf(stderr, "netvm-rsh: %s: %s\n", host, gai_strerror(rc));
		return -1;
	}
	for (ai = res; ai; ai = ai->ai_next) {
		sock = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, 0);
		if (sock < 0)
			continue;
		if (connect(sock, ai->ai_addr, ai->ai_addrlen) == 0)
			break;
		close(sock);
		sock = -1;
	}
	freeaddrinfo(res);
	if (sock < 0) {
		fprintf(stderr, "netvm-rsh: cannot reach the agent on %s port %s: %s\n",
			host, port, strerror(errno));
		return -1;
	}
	setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return sock;
}

/* The remote command line: the words joined with spaces, as rsh does. */
static char *join(int argc, char **argv)
{
	size_t len = 1;
	char *s;
	int i;

	for (i = 0; i < argc; i++)
		len += strlen(argv[i]) + 1;
	s = calloc(1, len);
	if (!s)
		return NULL;
	for (i = 0; i < argc; i++) {
		if (i)
			strcat(s, " ");
		strcat(s, argv[i]);
	}
	return s;
}

/*
 * Relays until the agent's exit frame: our stdin to the command, its
 * output to ours.  Returns our exit status.
 */
static int relay(int sock, int stdin_open)
{
	static char buf[65536];
	unsigned char hdr[5];

	for (;;) {
		struct pollfd p[2] = { { .fd = sock, .events = POLLIN },
				       { .fd = 0, .events = POLLIN } };
		uint32_t n;
		char type;

		if (poll(p, stdin_open ? 2 : 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			return 255;
		}
		if (stdin_open && p[1].revents) {
			ssize_t r = read(0, buf, sizeof(buf));

			if (r < 0 && errno == EINTR)
				continue;
			if (r > 0 ? send_rsh_frame(sock, 'i', buf, (size_t)r) < 0 :
				    send_rsh_frame(sock, 'I', NULL, 0) < 0)
				goto lost;
			if (r <= 0)
				stdin_open = 0;
		}
		if (!p[0].revents)
			continue;
		if (read_all(sock, hdr, sizeof(hdr)) < 0)
			goto lost;
		type = (char)hdr[0];
		n = ((uint32_t)hdr[1] << 24) | ((uint32_t)hdr[2] << 16) |
		    ((uint32_t)hdr[3] << 8) | hdr[4];
		if (n > sizeof(buf)) {
			fprintf(stderr, "netvm-rsh: frame of %u bytes from the agent\n", n);
			return 255;
		}
		if (read_all(sock, buf, n) < 0)
			goto lost;
		if (type == 'o' || type == 'r') {
			if (write_all(type == 'o' ? 1 : 2, buf, n) < 0 && type == 'o')
				return 255;
		} else if (type == 'f') {
			fprintf(stderr, "netvm-rsh: agent: %.*s\n", (int)n, buf);
		} else if (type == 'x') {
			int32_t st;

			if (n != 4) {
				fprintf(stderr, "netvm-rsh: bad exit frame (%u bytes)\n", n);
				return 255;
			}
			st = (int32_t)(((uint32_t)(unsigned char)buf[0] << 24) |
				       ((uint32_t)(unsigned char)buf[1] << 16) |
				       ((uint32_t)(unsigned char)buf[2] << 8) |
				       (unsigned char)buf[3]);
			return st >= 0 ? (st & 255) : 128 + (-st & 127);
		}
	}
lost:
	fprintf(stderr, "netvm-rsh: connection to the agent lost\n");
	return 255;
}

static void usage(void)
{
	fprintf(stderr, "usage: netvm-rsh [-n] [-l USER] [-p PORT] HOST COMMAND...\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *port = getenv("NETVM_AGENT_PORT");
	int no_stdin = 0, opt, sock;
	char *cmd;

	if (!port || !*port)
		port = "7777";
	/* '+': options end at HOST; the command's own options are its own */
	while ((opt = getopt(argc, argv, "+nl:p:xqTo:")) != -1) {
		switch (opt) {
		case 'n':
			no_stdin = 1;
			break;
		case 'p':
			port = optarg;
			break;
		case 'l': case 'x': case 'q': case 'T': case 'o':
			break;
		default:
			usage();
		}
	}
	if (argc - optind < 2)
		usage();
	cmd = join(argc - optind - 1, argv + optind + 1);
	if (!cmd)
		return 255;
	sock = connect_host(argv[optind], port);
	if (sock < 0)
		return 255;
	if (send_rsh_frame(sock, 'a', "sh", 2) < 0 || send_rsh_frame(sock, 'a', "-c", 2) < 0 ||
	    send_rsh_frame(sock, 'a', cmd, strlen(cmd)) < 0 || send_rsh_frame(sock, 'x', NULL, 0) < 0 ||
	    (no_stdin && send_rsh_frame(sock, 'I', NULL, 0) < 0)) {
		fprintf(stderr, "netvm-rsh: sending the command failed: %s\n", strerror(errno));
		return 255;
	}
	return relay(sock, !no_stdin);
}
