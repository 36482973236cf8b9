// SPDX-License-Identifier: GPL-2.0-only
/* netvm fabric: topology files and static source routes. */
#include "topo.h"

#include <stdlib.h>
#include <string.h>


#define TOPO_ERR g_quark_from_static_string("netvm-topo")

void topo_free(Topo *t)
{
	if (!t)
		return;
	for (int s = 0; s < t->nswitches; s++) {
		g_free(t->sw[s].name);
		for (int p = 0; p < TOPO_MAX_PORTS; p++)
			g_free(t->sw[s].port[p].addr);
	}
	for (int i = 0; i < t->nlinks; i++)
		g_free(t->links[i].addr);
	for (int i = 0; i < t->nnodes; i++)
		g_free(t->nodes[i].addr);
	g_free(t->links);
	g_free(t->nodes);
	g_free(t);
}

int topo_find_switch(const Topo *t, const char *name)
{
	for (int s = 0; s < t->nswitches; s++)
		if (!strcmp(t->sw[s].name, name))
			return s;
	return -1;
}

int topo_find_node(const Topo *t, int id)
{
	for (int i = 0; i < t->nnodes; i++)
		if (t->nodes[i].id == id)
			return i;
	return -1;
}

static gboolean parse_int(const char *s, long lo, long hi, long *out)
{
	char *end;
	long v;

	if (!s || !*s)
		return FALSE;
	v = strtol(s, &end, 10);
	if (*end || v < lo || v > hi)
		return FALSE;
	*out = v;
	return TRUE;
}

gboolean topo_parse_endpoint(const Topo *t, const char *s, int *sw, int *port)
{
	const char *colon = strrchr(s, ':');
	g_autofree char *name = NULL;
	long p;
	int i;

	if (!colon)
		return FALSE;
	name = g_strndup(s, colon - s);
	i = topo_find_switch(t, name);
	if (i < 0 || !parse_int(colon + 1, 0, t->sw[i].nports - 1, &p))
		return FALSE;
	*sw = i;
	*port = (int)p;
	return TRUE;
}

static gboolean valid_name(const char *s)
{
	if (!*s || strlen(s) > 32)
		return FALSE;
	for (; *s; s++)
		if (!g_ascii_isalnum(*s) && *s != '_' && *s != '-')
			return FALSE;
	return TRUE;
}

Topo *topo_parse(const char *text, GError **err)
{
	Topo *t = g_new0(Topo, 1);
	g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
	int lineno = 0;

	for (char **lp = lines; *lp; lp++) {
		char *hash = strchr(*lp, '#');
		g_auto(GStrv) tok = NULL;
		int n, s, p, s2, p2;
		long v;

		lineno++;
		if (hash)
			*hash = 0;
		g_strstrip(*lp);
		if (!**lp)
			continue;
		tok = g_strsplit_set(*lp, " \t", -1);
		/* collapse empty tokens */
		n = 0;
		for (int i = 0; tok[i]; i++) {
			if (*tok[i])
				tok[n++] = tok[i];
			else
				g_free(tok[i]);
		}
		tok[n] = NULL;

		if (!strcmp(tok[0], "switch")) {
			if (n != 3 || !valid_name(tok[1]) ||
			    !parse_int(tok[2], 1, TOPO_MAX_PORTS, &v))
				goto bad;
			if (topo_find_switch(t, tok[1]) >= 0 ||
			    t->nswitches >= TOPO_MAX_SWITCHES)
				goto bad;
			t->sw[t->nswitches].name = g_strdup(tok[1]);
			t->sw[t->nswitches].nports = (int)v;
			t->nswitches++;
		} else if (!strcmp(tok[0], "link")) {
			TopoLink *l;

			if (n < 3 || n > 4 ||
			    !topo_parse_endpoint(t, tok[1], &s, &p) ||
			    !topo_parse_endpoint(t, tok[2], &s2, &p2) ||
			    t->sw[s].port[p].use || t->sw[s2].port[p2].use ||
			    (s == s2 && p == p2))
				goto bad;
			t->links = g_renew(TopoLink, t->links, t->nlinks + 1);
			l = &t->links[t->nlinks];
			l->sw[0] = s; l->port[0] = p;
			l->sw[1] = s2; l->port[1] = p2;
			l->addr = n == 4 ? g_strdup(tok[3]) : NULL;
			t->sw[s].port[p].use = TP_LINK;
			t->sw[s].port[p].idx = t->nlinks;
			t->sw[s2].port[p2].use = TP_LINK;
			t->sw[s2].port[p2].idx = t->nlinks;
			t->nlinks++;
		} else if (!strcmp(tok[0], "node")) {
			TopoNode *nd;

			if (n < 3 || n > 4 || !parse_int(tok[1], 0, 65535, &v) ||
			    !topo_parse_endpoint(t, tok[2], &s, &p) ||
			    t->sw[s].port[p].use || topo_find_node(t, (int)v) >= 0 ||
			    t->nnodes >= TOPO_MAX_NODES)
				goto bad;
			t->nodes = g_renew(TopoNode, t->nodes, t->nnodes + 1);
			nd = &t->nodes[t->nnodes];
			nd->id = (int)v;
			nd->sw = s;
			nd->port = p;
			nd->addr = n == 4 ? g_strdup(tok[3]) : NULL;
			t->sw[s].port[p].use = TP_NODE;
			t->sw[s].port[p].idx = t->nnodes;
			t->nnodes++;
		} else if (!strcmp(tok[0], "port")) {
			if (n != 4 || !topo_parse_endpoint(t, tok[1], &s, &p) ||
			    t->sw[s].port[p].use)
				goto bad;
			if (!strcmp(tok[2], "listen"))
				t->sw[s].port[p].use = TP_LISTEN;
			else if (!strcmp(tok[2], "connect"))
				t->sw[s].port[p].use = TP_CONNECT;
			else
				goto bad;
			t->sw[s].port[p].addr = g_strdup(tok[3]);
		} else {
			goto bad;
		}
		continue;
bad:
		g_set_error(err, TOPO_ERR, 1, "topology line %d: bad or conflicting "
			    "statement: %s", lineno, *lp);
		topo_free(t);
		return NULL;
	}
	if (!t->nswitches) {
		g_set_error(err, TOPO_ERR, 1, "topology: no switch");
		topo_free(t);
		return NULL;
	}
	return t;
}

Topo *topo_load(const char *path, GError **err)
{
	g_autofree char *text = NULL;

	if (!g_file_get_contents(path, &text, NULL, err))
		return NULL;
	return topo_parse(text, err);
}

Topo *topo_single(int nports)
{
	GString *s = g_string_new(NULL);
	Topo *t;

	g_string_append_printf(s, "switch s0 %d\n", nports);
	for (int i = 0; i < nports; i++)
		g_string_append_printf(s, "node %d s0:%d\n", i, i);
	t = topo_parse(s->str, NULL);
	g_string_free(s, TRUE);
	return t;
}

/* Neighbour across a link: switch and port at the far end, or -1. */
static int far_end(const Topo *t, int s, int p, int *fp)
{
	const TopoPort *tp = &t->sw[s].port[p];
	const TopoLink *l;

	if (tp->use != TP_LINK)
		return -1;
	l = &t->links[tp->idx];
	if (l->sw[0] == s && l->port[0] == p) {
		*fp = l->port[1];
		return l->sw[1];
	}
	*fp = l->port[0];
	return l->sw[0];
}

int topo_route(const Topo *t, int a, int b, uint8_t *route, int max)
{
	int dist[TOPO_MAX_SWITCHES], queue[TOPO_MAX_SWITCHES];
	int head = 0, tail = 0, cur, n = 0;
	int dsw = t->nodes[b].sw;

	for (int s = 0; s < t->nswitches; s++)
		dist[s] = -1;
	dist[dsw] = 0;
	queue[tail++] = dsw;
	while (head < tail) {
		int s = queue[head++];

		for (int p = 0; p < t->sw[s].nports; p++) {
			int fp, f = far_end(t, s, p, &fp);

			if (f >= 0 && dist[f] < 0) {
				dist[f] = dist[s] + 1;
				queue[tail++] = f;
			}
		}
	}
	cur = t->nodes[a].sw;
	if (dist[cur] < 0)
		return -1;
	while (cur != dsw) {
		int cand[TOPO_MAX_PORTS], nc = 0, pick, fp;

		for (int p = 0; p < t->sw[cur].nports; p++) {
			int f = far_end(t, cur, p, &fp);

			if (f >= 0 && dist[f] == dist[cur] - 1)
				cand[nc++] = p;
		}
		/* spread destinations over equal-cost paths (D-mod-k) */
		pick = cand[t->nodes[b].id % nc];
		if (n >= max)
			return -1;
		route[n++] = FAB_ROUTE_BYTE | pick;
		cur = far_end(t, cur, pick, &fp);
	}
	if (n >= max)
		return -1;
	route[n++] = FAB_ROUTE_BYTE | t->nodes[b].port;
	return n;
}

char *topo_routes_json(const Topo *t, const char *sockdir)
{
	GString *s = g_string_new("{\n  \"switches\": [");

	for (int i = 0; i < t->nswitches; i++)
		g_string_append_printf(s, "%s{\"name\": \"%s\", \"ports\": %d}",
				       i ? ", " : "", t->sw[i].name, t->sw[i].nports);
	g_string_append(s, "],\n  \"nodes\": [\n");
	for (int i = 0; i < t->nnodes; i++) {
		const TopoNode *nd = &t->nodes[i];
		g_autofree char *addr = nd->addr ? g_strdup(nd->addr) :
			g_strdup_printf("unix:%s/node%d.sock", sockdir ? sockdir : "SOCKDIR",
					nd->id);

		g_string_append_printf(s, "    {\"id\": %d, \"switch\": \"%s\", "
				       "\"port\": %d, \"addr\": \"%s\"}%s\n",
				       nd->id, t->sw[nd->sw].name, nd->port, addr,
				       i + 1 < t->nnodes ? "," : "");
	}
	g_string_append(s, "  ],\n  \"routes\": [\n");
	for (int a = 0; a < t->nnodes; a++) {
		for (int b = 0; b < t->nnodes; b++) {
			uint8_t r[FAB_ROUTE_MAX];
			int n;

			if (a == b)
				continue;
			n = topo_route(t, a, b, r, FAB_ROUTE_MAX);
			g_string_append_printf(s, "    {\"src\": %d, \"dst\": %d, ",
					       t->nodes[a].id, t->nodes[b].id);
			if (n < 0) {
				g_string_append(s, "\"route\": null, \"hex\": null}");
			} else {
				g_string_append(s, "\"route\": [");
				for (int i = 0; i < n; i++)
					g_string_append_printf(s, "%s%u", i ? ", " : "", r[i]);
				g_string_append(s, "], \"hex\": \"");
				for (int i = 0; i < n; i++)
					g_string_append_printf(s, "%02x", r[i]);
				g_string_append(s, "\"}");
			}
			g_string_append(s, ",\n");
		}
	}
	if (s->str[s->len - 2] == ',')
		g_string_truncate(s, s->len - 2), g_string_append_c(s, '\n');
	g_string_append(s, "  ]\n}\n");
	return g_string_free(s, FALSE);
}
