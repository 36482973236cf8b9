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

static char *ctl_usage(void)
{
	return g_strdup("{\"ok\": false, \"error\": \"bad command (try help)\"}\n");
}

/* Split @line at blanks into a NULL-terminated vector; sets *n. */
static GStrv ctl_tokens(char *line, int *n)
{
	GStrv tok;

	g_strstrip(line);
	tok = g_strsplit_set(line, " \t", -1);
	*n = 0;
	for (int i = 0; tok[i]; i++) {
		if (*tok[i])
			tok[(*n)++] = tok[i];
		else
			g_free(tok[i]);
	}
	tok[*n] = NULL;
	return tok;
}

/* stats: every local switch and its ports */
static char *ctl_stats_all(void)
{
	GString *s = g_string_new("{\"ok\": true, \"switches\": [");

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
	g_string_append(s, "]}\n");
	return g_string_free(s, FALSE);
}

/* stats PORT */
static char *ctl_stats_port(Port *p)
{
	GString *s = g_string_new("{\"ok\": true, \"port\": ");

	fab_port_json(s, p);
	g_string_append(s, "}\n");
	return g_string_free(s, FALSE);
}

/* One NAME=VALUE of "fault PORT ..." into @f (@setting is modified). */
static gboolean ctl_fault_setting(char *setting, FabFaults *f)
{
	char *eq = strchr(setting, '=');

	if (!eq)
		return FALSE;
	*eq++ = 0;
	if (!strcmp(setting, "drop"))
		return parse_rate(eq, &f->drop);
	if (!strcmp(setting, "dup"))
		return parse_rate(eq, &f->dup);
	if (!strcmp(setting, "reorder"))
		return parse_rate(eq, &f->reorder);
	if (!strcmp(setting, "corrupt"))
		return parse_rate(eq, &f->corrupt);
	if (!strcmp(setting, "delay_ms")) {
		char *end;
		long v = strtol(eq, &end, 10);
		gboolean ok = *eq && !*end && v >= 0 && v <= 60000;

		f->delay_ms = ok ? (unsigned int)v : 0;
		return ok;
	}
	return FALSE;
}

/* fault PORT clear | fault PORT NAME=VALUE... */
static char *ctl_fault(Port *p, char **tok, int n)
{
	FabFaults f = p->faults;

	if (n == 3 && !strcmp(tok[2], "clear")) {
		memset(&f, 0, sizeof(f));
	} else {
		if (n < 3)
			return ctl_usage();
		for (int i = 2; i < n; i++)
			if (!ctl_fault_setting(tok[i], &f))
				return g_strdup("{\"ok\": false, \"error\": "
						"\"bad fault setting\"}\n");
	}
	fab_faults_set(p, &f);
	return g_strdup("{\"ok\": true}\n");
}

/* link PORT down|up */
static char *ctl_link(Port *p, char **tok, int n)
{
	if (n != 3 || (strcmp(tok[2], "up") && strcmp(tok[2], "down")))
		return ctl_usage();
	fab_link_set(p, !strcmp(tok[2], "up"));
	return g_strdup("{\"ok\": true}\n");
}

/* mapper [NODE|any] */
static char *ctl_mapper(char **tok, int n)
{
	char *end = NULL;
	long v = n == 2 ? strtol(tok[1], &end, 10) : 0;

	if (n == 2 && !strcmp(tok[1], "any"))
		fab_cfg.mapper_node = -1;
	else if (n == 2 && *tok[1] && !*end && v >= 0 && v < 65535)
		fab_cfg.mapper_node = (int)v;
	else if (n != 1)
		return ctl_usage();
	return g_strdup_printf("{\"ok\": true, \"mapper\": %d}\n",
			       fab_cfg.mapper_node);
}

/* capture start FILE | capture stop */
static char *ctl_capture(char **tok, int n)
{
	g_autoptr(GError) err = NULL;

	if (n == 2 && !strcmp(tok[1], "stop")) {
		fab_capture_stop();
		return g_strdup("{\"ok\": true}\n");
	}
	if (n != 3 || strcmp(tok[1], "start"))
		return ctl_usage();
	if (!fab_capture_start(tok[2], &err)) {
		g_autofree char *e = g_strescape(err->message, NULL);

		return g_strdup_printf("{\"ok\": false, \"error\": \"%s\"}\n", e);
	}
	return g_strdup("{\"ok\": true}\n");
}

static char *ctl_help(void)
{
	return g_strdup("{\"ok\": true, \"commands\": [\"stats [PORT]\", "
			"\"fault PORT drop=R dup=R reorder=R corrupt=R delay_ms=N\", "
			"\"fault PORT clear\", \"link PORT down|up\", "
			"\"inject PORT HEX\", \"mapper [NODE|any]\", "
			"\"capture start FILE\", \"capture stop\", \"quit\"]}\n");
}

/* Commands whose second word is a port (for stats, only when given). */
static gboolean ctl_names_port(char **tok, int n)
{
	return !strcmp(tok[0], "fault") || !strcmp(tok[0], "link") ||
	       !strcmp(tok[0], "inject") ||
	       (!strcmp(tok[0], "stats") && n > 1);
}

/* One line from a control client: the reply (NULL for a blank line). */
static char *ctl_command(char *line, gboolean *quit)
{
	g_auto(GStrv) tok = NULL;
	Port *p = NULL;
	int n;

	tok = ctl_tokens(line, &n);
	if (!n)
		return NULL;
	if (ctl_names_port(tok, n) &&
	    (n < 2 || !(p = fab_find_port(tok[1])) || p->kind == PK_NONE))
		return g_strdup("{\"ok\": false, \"error\": \"no such port\"}\n");

	if (!strcmp(tok[0], "stats"))
		return p ? ctl_stats_port(p) : ctl_stats_all();
	if (!strcmp(tok[0], "fault"))
		return ctl_fault(p, tok, n);
	if (!strcmp(tok[0], "link"))
		return ctl_link(p, tok, n);
	if (!strcmp(tok[0], "mapper"))
		return ctl_mapper(tok, n);
	if (!strcmp(tok[0], "inject"))
		return n == 3 ? ctl_inject(p, tok[2]) : ctl_usage();
	if (!strcmp(tok[0], "capture"))
		return ctl_capture(tok, n);
	if (!strcmp(tok[0], "quit")) {
		*quit = TRUE;
		return g_strdup("{\"ok\": true}\n");
	}
	if (!strcmp(tok[0], "help"))
		return ctl_help();
	return ctl_usage();
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

/* The command line; strings are g_free()d by switch_opts_clear(). */
typedef struct {
	char *topology, *routes, *sockdir, *tcp, *only, *control, *capture;
	gint ports, stall, maxframe, qframes, qbytes, mapper;
	gint64 seed;
} SwitchOpts;

static void switch_opts_clear(SwitchOpts *o)
{
	g_free(o->topology);
	g_free(o->routes);
	g_free(o->sockdir);
	g_free(o->tcp);
	g_free(o->only);
	g_free(o->control);
	g_free(o->capture);
}

static gboolean switch_opts_parse(SwitchOpts *o, int *argc, char ***argv)
{
	GOptionEntry entries[] = {
		{ "ports", 'p', 0, G_OPTION_ARG_INT, &o->ports,
		  "one switch with K ports (nodes 0..K-1 on ports 0..K-1)", "K" },
		{ "topology", 't', 0, G_OPTION_ARG_FILENAME, &o->topology,
		  "run the switches of a topology file", "FILE" },
		{ "only", 0, 0, G_OPTION_ARG_STRING, &o->only,
		  "run only these switches of the topology (others are other "
		  "processes, linked over sockets)", "SW[,SW...]" },
		{ "sock-dir", 'd', 0, G_OPTION_ARG_FILENAME, &o->sockdir,
		  "directory of the unix sockets (nodeN.sock, control.sock)", "DIR" },
		{ "tcp", 0, 0, G_OPTION_ARG_STRING, &o->tcp,
		  "nodes listen on TCP HOST:BASE+id instead of unix sockets",
		  "HOST:BASE" },
		{ "control", 'c', 0, G_OPTION_ARG_FILENAME, &o->control,
		  "control socket (default DIR/control.sock)", "PATH" },
		{ "seed", 's', 0, G_OPTION_ARG_INT64, &o->seed,
		  "seed of the fault-injection PRNG (default 1)", "N" },
		{ "capture", 0, 0, G_OPTION_ARG_FILENAME, &o->capture,
		  "capture frames leaving every port to a pcap file", "FILE" },
		{ "stall-timeout", 0, 0, G_OPTION_ARG_INT, &o->stall,
		  "ms without progress before a blocked output is flushed "
		  "(default 5000, 0 = never)", "MS" },
		{ "max-frame", 0, 0, G_OPTION_ARG_INT, &o->maxframe,
		  "largest frame accepted (default 65600)", "BYTES" },
		{ "queue-frames", 0, 0, G_OPTION_ARG_INT, &o->qframes,
		  "per-output queue bound in frames (default 512)", "N" },
		{ "queue-bytes", 0, 0, G_OPTION_ARG_INT, &o->qbytes,
		  "per-output queue bound in bytes (default 2097152)", "N" },
		{ "mapper", 0, 0, G_OPTION_ARG_INT, &o->mapper,
		  "only this node may send the mapper's SCOUT and ROUTES "
		  "(default: any node)", "NODE" },
		{ "routes", 0, 0, G_OPTION_ARG_FILENAME, &o->routes,
		  "print the route table of a topology as JSON and exit", "FILE" },
		{ NULL }
	};
	g_autoptr(GOptionContext) ctx = g_option_context_new(
		"- netvm fabric switch (Myrinet-like source routing)");
	g_autoptr(GError) err = NULL;

	g_option_context_add_main_entries(ctx, entries, NULL);
	if (!g_option_context_parse(ctx, argc, argv, &err)) {
		g_printerr("netvm-switch: %s\n", err->message);
		return FALSE;
	}
	return TRUE;
}

/* --routes FILE: print the topology's route table; the exit status. */
static int print_routes(const char *file, const char *sockdir)
{
	g_autoptr(GError) err = NULL;
	g_autofree char *json = NULL;
	Topo *t = topo_load(file, &err);

	if (!t) {
		g_printerr("netvm-switch: %s\n", err->message);
		return 1;
	}
	json = topo_routes_json(t, sockdir);
	fputs(json, stdout);
	topo_free(t);
	return 0;
}

/* Check the options that shape the switch and set fab_cfg from them. */
static gboolean switch_configure(const SwitchOpts *o)
{
	if ((o->ports > 0) == (o->topology != NULL)) {
		g_printerr("netvm-switch: give either --ports K or --topology FILE\n");
		return FALSE;
	}
	if (o->ports > TOPO_MAX_PORTS || o->ports < 0) {
		g_printerr("netvm-switch: at most %d ports\n", TOPO_MAX_PORTS);
		return FALSE;
	}
	if (o->stall >= 0)
		fab_cfg.stall_timeout_ms = o->stall;
	if (o->maxframe > 0)
		fab_cfg.max_frame = o->maxframe;
	if (fab_cfg.max_frame > 16 * 1024 * 1024)
		fab_cfg.max_frame = 16 * 1024 * 1024;
	if (o->qframes > 0)
		fab_cfg.queue_frames = o->qframes;
	if (o->qbytes > 0)
		fab_cfg.queue_bytes = o->qbytes;
	fab_cfg.seed = (uint64_t)o->seed;
	fab_cfg.mapper_node = o->mapper < 0 ? -1 : o->mapper;
	fab_cfg.sockdir = o->sockdir;
	fab_cfg.tcp = o->tcp;
	return TRUE;
}

/* Listen for control clients on unix socket @path. */
static gboolean ctl_start(const char *path, GError **err)
{
	g_autofree char *addr = g_strdup_printf("unix:%s", path);

	ctl_fd = fab_listen(addr, &ctl_path, err);
	if (ctl_fd < 0)
		return FALSE;
	g_unix_fd_add(ctl_fd, G_IO_IN, on_ctl_accept, NULL);
	return TRUE;
}

/* Build the switches, the control socket and the capture: all or none. */
static gboolean switch_start(Topo *t, SwitchOpts *o, GError **err)
{
	if (!fab_build(t, o->only, err))
		return FALSE;
	if (!o->control && o->sockdir)
		o->control = g_strdup_printf("%s/control.sock", o->sockdir);
	if (o->control && !ctl_start(o->control, err))
		return FALSE;
	if (o->capture && !fab_capture_start(o->capture, err))
		return FALSE;
	return TRUE;
}

static int listening_ports(void)
{
	int n = 0;

	for (int s = 0; s < fab_nsw; s++)
		for (int i = 0; i < fab_sw[s].nports; i++)
			n += fab_sw[s].port[i].lfd >= 0;
	return n;
}

int main(int argc, char **argv)
{
	SwitchOpts o = { .stall = -1, .mapper = -1, .seed = 1 };
	g_autoptr(GError) err = NULL;
	int status = 1;
	Topo *t;

	if (!switch_opts_parse(&o, &argc, &argv)) {
		status = 2;
		goto out;
	}
	if (o.routes) {
		status = print_routes(o.routes, o.sockdir);
		goto out;
	}
	if (!switch_configure(&o)) {
		status = 2;
		goto out;
	}
	t = o.topology ? topo_load(o.topology, &err) : topo_single(o.ports);
	if (!t) {
		g_printerr("netvm-switch: %s\n", err->message);
		goto out;
	}
	signal(SIGPIPE, SIG_IGN);
	loop = g_main_loop_new(NULL, FALSE);
	if (o.sockdir && g_mkdir_with_parents(o.sockdir, 0700) < 0) {
		g_printerr("netvm-switch: cannot create %s: %s\n", o.sockdir,
			   g_strerror(errno));
		goto out;
	}
	if (!switch_start(t, &o, &err)) {
		g_printerr("netvm-switch: %s\n", err->message);
		fab_shutdown();
		goto out;
	}
	g_unix_signal_add(SIGINT, on_signal, NULL);
	g_unix_signal_add(SIGTERM, on_signal, NULL);
	printf("netvm-switch ready: %d switch(es), %d listening port(s), control %s\n",
	       fab_nsw, listening_ports(), ctl_path ? ctl_path : "none");
	fflush(stdout);
	g_main_loop_run(loop);
	fab_shutdown();
	if (ctl_path)
		unlink(ctl_path);
	topo_free(t);
	status = 0;
out:
	switch_opts_clear(&o);
	return status;
}
