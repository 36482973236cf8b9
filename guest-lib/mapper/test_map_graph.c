// SPDX-License-Identifier: (GPL-2.0-only OR MIT)
/*
 * Unit test of the mapper's routing (map_graph.c) on the shipped
 * topologies: every pair has a route, walking it through the map reaches
 * the destination, it obeys up*\/down*, and the routes of all pairs
 * together have no cycle of link dependencies (no deadlock on a ring).
 */
#include "check_run.h"
#include <stdio.h>
#include <string.h>

#include "map_graph.h"

/* Ring of four 4-port switches as fabric/topologies/ring4.topo. */
static void build_ring4(struct map *m)
{
	map_init(m);
	for (int s = 0; s < 4; s++) {
		char name[8];

		snprintf(name, sizeof(name), "r%d", s);
		ck_assert_int_eq(map_add_switch(m, 0x100 + 7 * (3 - s), name, 4), s);
	}
	for (int s = 0; s < 4; s++)
		ck_assert_int_eq(map_link(m, s, 2, (s + 1) % 4, 3), 0);
	for (int n = 0; n < 8; n++)
		ck_assert_int_eq(map_add_host(m, n, n / 2, n % 2), 0);
}

/* fabric/topologies/tree16.topo: leaves 0-3 (8 ports), spines 4-5. */
static void build_tree16(struct map *m)
{
	map_init(m);
	for (int s = 0; s < 6; s++)
		ck_assert_int_ge(map_add_switch(m, 0x9000 - s, "sw", s < 4 ? 8 : 4), 0);
	for (int l = 0; l < 4; l++) {
		ck_assert_int_eq(map_link(m, l, 4, 4, l), 0);
		ck_assert_int_eq(map_link(m, l, 5, 5, l), 0);
	}
	for (int n = 0; n < 16; n++)
		ck_assert_int_eq(map_add_host(m, n, n / 4, n % 4), 0);
}

/* Follows @r from @src's switch; returns the node reached or -1, and
 * records each switch-to-switch hop as a link id (sw * 32 + port). */
static int walk(const struct map *m, int src, const uint8_t *r, int len,
		int *links, int *nlinks)
{
	const struct map_host *h = map_find_host(m, src);
	int sw = h->sw;

	*nlinks = 0;
	for (int i = 0; i < len; i++) {
		int p = r[i] & 0x7f;

		ck_assert(r[i] & 0x80);
		ck_assert_int_lt(p, m->sw[sw].nports);
		if (i == len - 1)
			return m->sw[sw].host[p];
		if (m->sw[sw].peer[p] < 0)
			return -1;
		links[(*nlinks)++] = sw * 32 + p;
		sw = m->sw[sw].peer[p];
	}
	return -1;
}

/* dep[a][b]: a route uses link a, then link b */
static unsigned char dep[32 * 32][32 * 32];
static int colour[32 * 32];

static int has_cycle(int v)
{
	colour[v] = 1;
	for (int w = 0; w < 32 * 32; w++) {
		if (!dep[v][w])
			continue;
		if (colour[w] == 1 || (colour[w] == 0 && has_cycle(w)))
			return 1;
	}
	colour[v] = 2;
	return 0;
}

static void check_all_pairs(const struct map *m, int max_len)
{
	memset(dep, 0, sizeof(dep));
	memset(colour, 0, sizeof(colour));
	for (int a = 0; a < m->nhosts; a++)
		for (int b = 0; b < m->nhosts; b++) {
			int sa = m->host[a].node, sb = m->host[b].node;
			int links[NVM_ROUTE_MAX], nl, len;
			uint8_t r[NVM_ROUTE_MAX];

			if (a == b) {
				ck_assert_int_eq(map_route(m, sa, sb, r), -1);
				continue;
			}
			len = map_route(m, sa, sb, r);
			ck_assert_msg(len > 0 && len <= max_len,
				      "route %d->%d has length %d", sa, sb, len);
			ck_assert_int_eq(walk(m, sa, r, len, links, &nl), sb);
			for (int i = 0; i + 1 < nl; i++)
				dep[links[i]][links[i + 1]] = 1;
		}
	for (int v = 0; v < 32 * 32; v++)
		ck_assert_msg(colour[v] || !has_cycle(v),
			      "the routes can deadlock: cycle through link %d", v);
}

START_TEST(ring4_routes_are_deadlock_free)
{
	static struct map m;

	build_ring4(&m);
	check_all_pairs(&m, 4);
}
END_TEST

START_TEST(tree16_routes_take_three_bytes)
{
	static struct map m;
	uint8_t r[NVM_ROUTE_MAX];

	build_tree16(&m);
	check_all_pairs(&m, 3);
	ck_assert_int_eq(map_route(&m, 0, 1, r), 1);
	ck_assert_int_eq(r[0], 0x81);
	ck_assert_int_eq(map_route(&m, 0, 15, r), 3);
}
END_TEST

START_TEST(bad_input_is_refused)
{
	static struct map m;
	uint8_t r[NVM_ROUTE_MAX];

	map_init(&m);
	ck_assert_int_eq(map_add_switch(&m, 1, "a", 0), -1);
	ck_assert_int_eq(map_add_switch(&m, 1, "a", 33), -1);
	ck_assert_int_eq(map_add_switch(&m, 1, "a", 4), 0);
	ck_assert_int_eq(map_add_switch(&m, 2, "b", 4), 1);
	ck_assert_int_eq(map_link(&m, 0, 4, 1, 0), -1);
	ck_assert_int_eq(map_link(&m, 0, 0, 2, 0), -1);
	ck_assert_int_eq(map_add_host(&m, 5, 0, 1), 0);
	ck_assert_int_eq(map_add_host(&m, 5, 0, 1), 0);	/* seen again */
	ck_assert_int_eq(map_add_host(&m, 5, 1, 1), -1);	/* elsewhere */
	ck_assert_int_eq(map_add_host(&m, 64, 1, 1), -1);
	ck_assert_int_eq(map_add_host(&m, 6, 1, 1), 0);
	/* no link between the switches: no route */
	ck_assert_int_eq(map_route(&m, 5, 6, r), -1);
	ck_assert_int_eq(map_route(&m, 5, 7, r), -1);
	ck_assert_int_eq(map_link(&m, 0, 3, 1, 2), 0);
	ck_assert_int_eq(map_route(&m, 5, 6, r), 2);
	ck_assert_int_eq(r[0], 0x83);
	ck_assert_int_eq(r[1], 0x81);
	ck_assert_int_eq(map_find_switch(&m, 2), 1);
	ck_assert_int_eq(map_find_switch(&m, 3), -1);
}
END_TEST

START_TEST(too_long_routes_are_refused)
{
	static struct map m;
	uint8_t r[NVM_ROUTE_MAX];

	/* a chain of ten switches: the ends are 10 bytes apart */
	map_init(&m);
	for (int s = 0; s < 10; s++)
		ck_assert_int_eq(map_add_switch(&m, 100 + s, "c", 3), s);
	for (int s = 0; s < 9; s++)
		ck_assert_int_eq(map_link(&m, s, 1, s + 1, 2), 0);
	ck_assert_int_eq(map_add_host(&m, 0, 0, 0), 0);
	ck_assert_int_eq(map_add_host(&m, 1, 7, 0), 0);
	ck_assert_int_eq(map_add_host(&m, 2, 9, 0), 0);
	ck_assert_int_eq(map_route(&m, 0, 1, r), 8);
	ck_assert_int_eq(map_route(&m, 0, 2, r), -1);
}
END_TEST

int main(void)
{
	return CHECK_RUN("map-graph", "routes", 0,
			 ring4_routes_are_deadlock_free, tree16_routes_take_three_bytes,
			 bad_input_is_refused, too_long_routes_are_refused);
}
