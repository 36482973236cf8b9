// SPDX-License-Identifier: GPL-2.0-only
/*
 * netvm-switch: Myrinet-like source-routed crossbar switches for QEMU VMs
 * linked with -netdev stream.  See docs/fabric.md.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <glib-unix.h>

#include "switch.h"
#include "topo.h"

#define CTL_MAX_CLIENTS	16
/* room for "inject PORT HEX" of the longest frame */
#define CTL_MAX_LINE	(4096 + 2 * (size_t)fab_cfg.max_frame)

static GMainLoop *loop;
static char *ctl_path;
static int ctl_fd = -1, nctl;

typedef struct {
	int fd;
	guint watch;
	GString *in;
} Ctl;

static void ctl_reply(Ctl *c, const char *s)
{
	size_t len = strlen(s), off = 0;

	while (off < len) {
		ssize_t n = send(c->fd, s + off, len - off, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;	/* the reader went away or stalled: its loss */
		off += n;
	}
}

static gboolean parse_rate(const char *v, double *out)
{
	char *end;
	double d = g_ascii_strtod(v, &end);

	if (*end || !(d >= 0 && d <= 1))
		return FALSE;
	*out = d;
	return TRUE;
}

/* inject PORT HEX: the bytes enter PORT as if its node had sent them */
static char *ctl_inject(Port *p, const char *hex)
{
	size_t n = strlen(hex);
	g_autofree uint8_t *buf = NULL;
	int err;

	if (!n || n % 2 || n / 2 > fab_cfg.max_frame)
		return g_strdup("{\"ok\": false, \"error\": \"give 1..max-frame "
				"bytes as an even number of hex digits\"}\n");
	buf = g_malloc(n / 2);
	for (size_t i = 0; i < n / 2; i++) {
		int hi = g_ascii_xdigit_value(hex[2 * i]);
		int lo = g_ascii_xdigit_value(hex[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return g_strdup("{\"ok\": false, \"error\": \"not hex\"}\n");
		buf[i] = hi << 4 | lo;
	}
	err = fab_inject(p, buf, n / 2);
	if (err == -EBUSY)
		return g_strdup("{\"ok\": false, \"error\": \"busy: the port's "
				"input is held by a full output, try again\"}\n");
	if (err == -ENETDOWN)
		return g_strdup("{\"ok\": false, \"error\": \"port down\"}\n");
	if (err)
		return g_strdup("{\"ok\": false, \"error\": \"not a socket "
				"port\"}\n");
	return g_strdup_printf("{\"ok\": true, \"held\": %s}\n",
			       p->pending ? "true" : "false");
}

static char *ctl_command(char *line, gboolean *quit)
{
	g_auto(GStrv) tok = NULL;
	GString *s;
	Port *p = NULL;
	int n = 0;

	g_strstrip(line);
	tok = g_strsplit_set(line, " \t", -1);
	for (int i = 0; tok[i]; i++) {
		if (*tok[i])
			tok[n++] = tok[i];
		else
			g_free(tok[i]);
	}
	tok[n] = NULL;
	if (!n)
		return NULL;
	if ((!strcmp(tok[0], "fault") || !strcmp(tok[0], "link") ||
	     !strcmp(tok[0], "inject") ||
	     (!strcmp(tok[0], "stats") && n > 1)) &&
	    (n < 2 || !(p = fab_find_port(tok[1])) || p->kind == PK_NONE))
		return g_strdup("{\"ok\": false, \"error\": \"no such port\"}\n");

	if (!strcmp(tok[0], "stats")) {
		s = g_string_new("{\"ok\": true, ");
		if (p) {
			g_string_append(s, "\"port\": ");
			fab_port_json(s, p);
		} else {
			g_string_append(s, "\"switches\": [");
			for (int i = 0; i < fab_nsw; i++) {
				gboolean first = TRUE;

				if (!fab_sw[i].local)
					continue;
				g_string_append_printf(s, "%s{\"name\": \"%s\", \"ports\": [",
						       s->str[s->len - 1] == '[' ? "" : ", ",
						       fab_sw[i].name);
				for (int j = 0; j < fab_sw[i].nports; j++) {
					if (fab_sw[i].port[j].kind == PK_NONE)
						continue;
					if (!first)
						g_string_append(s, ", ");
					first = FALSE;
					fab_port_json(s, &fab_sw[i].port[j]);
				}
				g_string_append(s, "]}");
			}
			g_string_append(s, "]");
		}
		g_string_append(s, "}\n");
		return g_string_free(s, FALSE);
	}
	if (!strcmp(tok[0], "fault")) {
		FabFaults f = p->faults;

		if (n == 3 && !strcmp(tok[2], "clear")) {
			memset(&f, 0, sizeof(f));
		} else {
			if (n < 3)
				goto usage;
			for (int i = 2; i < n; i++) {
				char *eq = strchr(tok[i], '=');
				gboolean ok = eq != NULL;

				if (ok) {
					*eq++ = 0;
					if (!strcmp(tok[i], "drop"))
						ok = parse_rate(eq, &f.drop);
					else if (!strcmp(tok[i], "dup"))
						ok = parse_rate(eq, &f.dup);
					else if (!strcmp(tok[i], "reorder"))
						ok = parse_rate(eq, &f.reorder);
					else if (!strcmp(tok[i], "corrupt"))
						ok = parse_rate(eq, &f.corrupt);
					else if (!strcmp(tok[i], "delay_ms")) {
						char *end;
						long v = strtol(eq, &end, 10);

						ok = *eq && !*end && v >= 0 && v <= 60000;
						f.delay_ms = ok ? (unsigned)v : 0;
					} else
						ok = FALSE;
				}
				if (!ok)
					return g_strdup("{\"ok\": false, \"error\": "
							"\"bad fault setting\"}\n");
			}
		}
		fab_faults_set(p, &f);
		return g_strdup("{\"ok\": true}\n");
	}
	if (!strcmp(tok[0], "link")) {
		if (n != 3 || (strcmp(tok[2], "up") && strcmp(tok[2], "down")))
			goto usage;
		fab_link_set(p, !strcmp(tok[2], "up"));
		return g_strdup("{\"ok\": true}\n");
	}
	if (!strcmp(tok[0], "mapper")) {
		char *end = NULL;
		long v = n == 2 ? strtol(tok[1], &end, 10) : 0;

		if (n == 2 && !strcmp(tok[1], "any"))
			fab_cfg.mapper_node = -1;
		else if (n == 2 && *tok[1] && !*end && v >= 0 && v < 65535)
			fab_cfg.mapper_node = (int)v;
		else if (n != 1)
			goto usage;
		return g_strdup_printf("{\"ok\": true, \"mapper\": %d}\n",
				       fab_cfg.mapper_node);
	}
	if (!strcmp(tok[0], "inject")) {
		if (n != 3)
			goto usage;
		return ctl_inject(p, tok[2]);
	}
	if (!strcmp(tok[0], "capture")) {
		g_autoptr(GError) err = NULL;

		if (n == 2 && !strcmp(tok[1], "stop")) {
			fab_capture_stop();
			return g_strdup("{\"ok\": true}\n");
		}
		if (n != 3 || strcmp(tok[1], "start"))
			goto usage;
		if (!fab_capture_start(tok[2], &err)) {
			g_autofree char *e = g_strescape(err->message, NULL);

			return g_strdup_printf("{\"ok\": false, \"error\": \"%s\"}\n", e);
		}
		return g_strdup("{\"ok\": true}\n");
	}
	if (!strcmp(tok[0], "quit")) {
		*quit = TRUE;
		return g_strdup("{\"ok\": true}\n");
	}
	if (!strcmp(tok[0], "help"))
		return g_strdup("{\"ok\": true, \"commands\": [\"stats [PORT]\", "
				"\"fault PORT drop=R dup=R reorder=R corrupt=R delay_ms=N\", "
				"\"fault PORT clear\", \"link PORT down|up\", "
				"\"inject PORT HEX\", \"mapper [NODE|any]\", "
				"\"capture start FILE\", \"capture stop\", \"quit\"]}\n");
usage:
	return g_strdup("{\"ok\": false, \"error\": \"bad command (try help)\"}\n");
}

static void ctl_close(Ctl *c)
{
	if (c->watch)
		g_source_remove(c->watch);
	close(c->fd);
	g_string_free(c->in, TRUE);
	g_free(c);
	nctl--;
}

static gboolean on_ctl_readable(gint fd, GIOCondition cond, gpointer data)
{
	Ctl *c = data;
	char buf[1024];
	ssize_t n = read(fd, buf, sizeof(buf));
	char *nl;

	(void)cond;
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return G_SOURCE_CONTINUE;
	if (n <= 0) {
		c->watch = 0;
		ctl_close(c);
		return G_SOURCE_REMOVE;
	}
	g_string_append_len(c->in, buf, n);
	while ((nl = memchr(c->in->str, '\n', c->in->len))) {
		gboolean quit = FALSE;
		g_autofree char *line = g_strndup(c->in->str, nl - c->in->str);
		g_autofree char *reply = NULL;

		g_string_erase(c->in, 0, nl - c->in->str + 1);
		reply = ctl_command(line, &quit);
		if (reply)
			ctl_reply(c, reply);
		if (quit)
			g_main_loop_quit(loop);
	}
	if (c->in->len > CTL_MAX_LINE) {
		ctl_reply(c, "{\"ok\": false, \"error\": \"line too long\"}\n");
		c->watch = 0;
		ctl_close(c);
		return G_SOURCE_REMOVE;
	}
	return G_SOURCE_CONTINUE;
}

static gboolean on_ctl_accept(gint lfd, GIOCondition cond, gpointer data)
{
	struct timeval tv = { .tv_sec = 2 };
	int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	Ctl *c;

	(void)cond;
	(void)data;
	if (fd < 0)
		return G_SOURCE_CONTINUE;
	if (nctl >= CTL_MAX_CLIENTS) {
		close(fd);
		return G_SOURCE_CONTINUE;
	}
	/* replies are written blocking, but never for more than 2 s */
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	c = g_new0(Ctl, 1);
	c->fd = fd;
	c->in = g_string_new(NULL);
	c->watch = g_unix_fd_add(fd, G_IO_IN | G_IO_HUP | G_IO_ERR,
				 on_ctl_readable, c);
	nctl++;
	return G_SOURCE_CONTINUE;
}

static gboolean on_signal(gpointer data)
{
	(void)data;
	g_main_loop_quit(loop);
	return G_SOURCE_CONTINUE;
}

int main(int argc, char **argv)
{
	g_autofree char *topology = NULL, *routes = NULL, *sockdir = NULL;
	g_autofree char *tcp = NULL, *only = NULL, *control = NULL;
	g_autofree char *capture = NULL;
	gint ports = 0, stall = -1, maxframe = 0, qframes = 0, qbytes = 0;
	gint mapper = -1;
	gint64 seed = 1;
	GOptionEntry entries[] = {
		{ "ports", 'p', 0, G_OPTION_ARG_INT, &ports,
		  "one switch with K ports (nodes 0..K-1 on ports 0..K-1)", "K" },
		{ "topology", 't', 0, G_OPTION_ARG_FILENAME, &topology,
		  "run the switches of a topology file", "FILE" },
		{ "only", 0, 0, G_OPTION_ARG_STRING, &only,
		  "run only these switches of the topology (others are other "
		  "processes, linked over sockets)", "SW[,SW...]" },
		{ "sock-dir", 'd', 0, G_OPTION_ARG_FILENAME, &sockdir,
		  "directory of the unix sockets (nodeN.sock, control.sock)", "DIR" },
		{ "tcp", 0, 0, G_OPTION_ARG_STRING, &tcp,
		  "nodes listen on TCP HOST:BASE+id instead of unix sockets",
		  "HOST:BASE" },
		{ "control", 'c', 0, G_OPTION_ARG_FILENAME, &control,
		  "control socket (default DIR/control.sock)", "PATH" },
		{ "seed", 's', 0, G_OPTION_ARG_INT64, &seed,
		  "seed of the fault-injection PRNG (default 1)", "N" },
		{ "capture", 0, 0, G_OPTION_ARG_FILENAME, &capture,
		  "capture frames leaving every port to a pcap file", "FILE" },
		{ "stall-timeout", 0, 0, G_OPTION_ARG_INT, &stall,
		  "ms without progress before a blocked output is flushed "
		  "(default 5000, 0 = never)", "MS" },
		{ "max-frame", 0, 0, G_OPTION_ARG_INT, &maxframe,
		  "largest frame accepted (default 65600)", "BYTES" },
		{ "queue-frames", 0, 0, G_OPTION_ARG_INT, &qframes,
		  "output queue bound in frames (default 64)", "N" },
		{ "queue-bytes", 0, 0, G_OPTION_ARG_INT, &qbytes,
		  "output queue bound in bytes (default 262144)", "N" },
		{ "mapper", 0, 0, G_OPTION_ARG_INT, &mapper,
		  "only this node may send the mapper's SCOUT and ROUTES "
		  "(default: any node)", "NODE" },
		{ "routes", 0, 0, G_OPTION_ARG_FILENAME, &routes,
		  "print the route table of a topology as JSON and exit", "FILE" },
		{ NULL }
	};
	g_autoptr(GOptionContext) ctx = g_option_context_new(
		"- netvm fabric switch (Myrinet-like source routing)");
	g_autoptr(GError) err = NULL;
	Topo *t;
	int nlisten = 0;

	g_option_context_add_main_entries(ctx, entries, NULL);
	if (!g_option_context_parse(ctx, &argc, &argv, &err)) {
		g_printerr("netvm-switch: %s\n", err->message);
		return 2;
	}
	if (routes) {
		g_autofree char *json = NULL;

		t = topo_load(routes, &err);
		if (!t) {
			g_printerr("netvm-switch: %s\n", err->message);
			return 1;
		}
		json = topo_routes_json(t, sockdir);
		fputs(json, stdout);
		topo_free(t);
		return 0;
	}
	if ((ports > 0) == (topology != NULL)) {
		g_printerr("netvm-switch: give either --ports K or --topology FILE\n");
		return 2;
	}
	if (ports > TOPO_MAX_PORTS || ports < 0) {
		g_printerr("netvm-switch: at most %d ports\n", TOPO_MAX_PORTS);
		return 2;
	}
	if (stall >= 0)
		fab_cfg.stall_timeout_ms = stall;
	if (maxframe > 0)
		fab_cfg.max_frame = maxframe;
	if (fab_cfg.max_frame > 16 * 1024 * 1024)
		fab_cfg.max_frame = 16 * 1024 * 1024;
	if (qframes > 0)
		fab_cfg.queue_frames = qframes;
	if (qbytes > 0)
		fab_cfg.queue_bytes = qbytes;
	fab_cfg.seed = (uint64_t)seed;
	fab_cfg.mapper_node = mapper < 0 ? -1 : mapper;
	fab_cfg.sockdir = sockdir;
	fab_cfg.tcp = tcp;

	t = topology ? topo_load(topology, &err) : topo_single(ports);
	if (!t) {
		g_printerr("netvm-switch: %s\n", err->message);
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);
	loop = g_main_loop_new(NULL, FALSE);
	if (sockdir && g_mkdir_with_parents(sockdir, 0700) < 0) {
		g_printerr("netvm-switch: cannot create %s: %s\n", sockdir,
			   g_strerror(errno));
		return 1;
	}
	if (!fab_build(t, only, &err)) {
		g_printerr("netvm-switch: %s\n", err->message);
		fab_shutdown();
		return 1;
	}
	if (!control && sockdir)
		control = g_strdup_printf("%s/control.sock", sockdir);
	if (control) {
		g_autofree char *addr = g_strdup_printf("unix:%s", control);

		ctl_fd = fab_listen(addr, &ctl_path, &err);
		if (ctl_fd < 0) {
			g_printerr("netvm-switch: %s\n", err->message);
			fab_shutdown();
			return 1;
		}
		g_unix_fd_add(ctl_fd, G_IO_IN, on_ctl_accept, NULL);
	}
	if (capture && !fab_capture_start(capture, &err)) {
		g_printerr("netvm-switch: %s\n", err->message);
		fab_shutdown();
		return 1;
	}
	g_unix_signal_add(SIGINT, on_signal, NULL);
	g_unix_signal_add(SIGTERM, on_signal, NULL);
	for (int s = 0; s < fab_nsw; s++)
		for (int i = 0; i < fab_sw[s].nports; i++)
			nlisten += fab_sw[s].port[i].lfd >= 0;
	printf("netvm-switch ready: %d switch(es), %d listening port(s), control %s\n",
	       fab_nsw, nlisten, ctl_path ? ctl_path : "none");
	fflush(stdout);
	g_main_loop_run(loop);
	fab_shutdown();
	if (ctl_path)
		unlink(ctl_path);
	topo_free(t);
	return 0;
}
