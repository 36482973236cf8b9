// SPDX-License-Identifier: (GPL-2.0-only OR MIT)
/* netvm-mapper: the map and up*\/down* routes (see map_graph.h). */
#include <string.h>

#include "map_graph.h"

void map_init(struct map *m)
{
	memset(m, 0, sizeof(*m));
}

int map_find_switch(const struct map *m, uint64_t id)
{
	for (int i = 0; i < m->nsw; i++)
		if (m->sw[i].id == id)
			return i;
	return -1;
}

int map_add_switch(struct map *m, uint64_t id, const char *name, int nports)
{
	struct map_switch *s;

	if (m->nsw == MAP_MAX_SWITCHES || nports < 1 || nports > MAP_MAX_PORTS)
		return -1;
	s = &m->sw[m->nsw];
	memset(s, 0, sizeof(*s));
	s->id = id;
	strncpy(s->name, name, sizeof(s->name) - 1);
	s->nports = nports;
	s->in_port = -1;
	for (int p = 0; p < MAP_MAX_PORTS; p++) {
		s->peer[p] = -1;
		s->peer_port[p] = -1;
		s->host[p] = -1;
	}
	return m->nsw++;
}

static int port_ok(const struct map *m, int sw, int port)
{
	return sw >= 0 && sw < m->nsw && port >= 0 && port < m->sw[sw].nports;
}

int map_link(struct map *m, int a, int pa, int b, int pb)
{
	if (!port_ok(m, a, pa) || !port_ok(m, b, pb))
		return -1;
	m->sw[a].peer[pa] = b;
	m->sw[a].peer_port[pa] = pb;
	m->sw[b].peer[pb] = a;
	m->sw[b].peer_port[pb] = pa;
	return 0;
}

const struct map_host *map_find_host(const struct map *m, int node)
{
	for (int i = 0; i < m->nhosts; i++)
		if (m->host[i].node == node)
			return &m->host[i];
	return NULL;
}

int map_add_host(struct map *m, int node, int sw, int port)
{
	const struct map_host *h = map_find_host(m, node);

	if (!port_ok(m, sw, port) || node < 0 || node >= MAP_MAX_HOSTS)
		return -1;
	if (h)
		return h->sw == sw && h->port == port ? 0 : -1;
	if (m->nhosts == MAP_MAX_HOSTS)
		return -1;
	m->host[m->nhosts++] = (struct map_host){ node, sw, port };
	m->sw[sw].host[port] = node;
	return 0;
}

/* BFS levels from the root switch (lowest id); -1 for unreachable. */
static void levels(const struct map *m, int *lvl)
{
	int q[MAP_MAX_SWITCHES], qh = 0, qt = 0, root = 0;

	for (int i = 0; i < m->nsw; i++) {
		lvl[i] = -1;
		if (m->sw[i].id < m->sw[root].id)
			root = i;
	}
	lvl[root] = 0;
	q[qt++] = root;
	while (qh < qt) {
		int a = q[qh++];

		for (int p = 0; p < m->sw[a].nports; p++) {
			int b = m->sw[a].peer[p];

			if (b >= 0 && lvl[b] < 0) {
				lvl[b] = lvl[a] + 1;
				q[qt++] = b;
			}
		}
	}
}

static int is_up(const struct map *m, const int *lvl, int a, int b)
{
	return lvl[b] < lvl[a] || (lvl[b] == lvl[a] && m->sw[b].id < m->sw[a].id);
}

int map_route(const struct map *m, int src, int dst, uint8_t *route)
{
	const struct map_host *hs = map_find_host(m, src);
	const struct map_host *hd = map_find_host(m, dst);
	/* state = switch * 2 + (went down yet) */
	int prev[MAP_MAX_SWITCHES * 2], via[MAP_MAX_SWITCHES * 2];
	int q[MAP_MAX_SWITCHES * 2], qh = 0, qt = 0, lvl[MAP_MAX_SWITCHES];
	uint8_t rev[MAP_MAX_SWITCHES * 2 + 1];
	int end = -1, n = 0;

	if (!hs || !hd || src == dst)
		return -1;
	levels(m, lvl);
	for (int i = 0; i < m->nsw * 2; i++)
		prev[i] = -2;
	prev[hs->sw * 2] = -1;
	q[qt++] = hs->sw * 2;
	while (qh < qt) {
		int st = q[qh++], a = st / 2, down = st % 2;

		if (a == hd->sw) {
			end = st;
			break;
		}
		for (int k = 0; k < m->sw[a].nports; k++) {
			/* equal routes spread by destination, as D-mod-k */
			int p = (k + dst) % m->sw[a].nports;
			int b = m->sw[a].peer[p], up, nst;

			if (b < 0 || b == a)
				continue;
			up = is_up(m, lvl, a, b);
			if (down && up)
				continue;	/* never up after down */
			nst = b * 2 + (up ? 0 : 1);
			if (prev[nst] != -2)
				continue;
			prev[nst] = st;
			via[nst] = p;
			q[qt++] = nst;
		}
	}
	if (end < 0)
		return -1;
	rev[n++] = NVM_ROUTE_BYTE | hd->port;
	for (int st = end; prev[st] >= 0; st = prev[st])
		rev[n++] = NVM_ROUTE_BYTE | via[st];
	if (n > NVM_ROUTE_MAX)
		return -1;
	for (int i = 0; i < n; i++)
		route[i] = rev[n - 1 - i];
	return n;
}
