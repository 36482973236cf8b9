/* SPDX-License-Identifier: (GPL-2.0-only OR MIT) */
/*
 * netvm-mapper: the map it builds (switches, links, hosts) and the routes
 * it computes from it.  No I/O here, so tests/unit/test_map_graph.c can
 * check the routing on the shipped topologies.
 */
#ifndef NETVM_MAP_GRAPH_H
#define NETVM_MAP_GRAPH_H

#include <stdint.h>

#include <netvm/mapper.h>

#define MAP_MAX_SWITCHES	32
#define MAP_MAX_PORTS		32
#define MAP_MAX_HOSTS		NVM_MAP_MAX_ENTRIES

struct map_switch {
	uint64_t id;
	char name[NVM_MAP_NAME_LEN];
	int nports;
	int in_port;			/* the port that leads to the mapper */
	uint8_t to[NVM_ROUTE_MAX];	/* mapper -> into this switch */
	int to_len;
	uint8_t back[NVM_ROUTE_MAX];	/* from this switch -> mapper */
	int back_len;
	int peer[MAP_MAX_PORTS];	/* switch at the other end, or -1 */
	int peer_port[MAP_MAX_PORTS];
	int host[MAP_MAX_PORTS];	/* node id on the port, or -1 */
};

struct map_host {
	int node, sw, port;
};

struct map {
	int nsw, nhosts;
	struct map_switch sw[MAP_MAX_SWITCHES];
	struct map_host host[MAP_MAX_HOSTS];
};

void map_init(struct map *m);
/* The switch with @id, or -1. */
int map_find_switch(const struct map *m, uint64_t id);
/* Adds a switch (paths empty, no links); returns its index or -1 (full,
 * or nports out of range). */
int map_add_switch(struct map *m, uint64_t id, const char *name, int nports);
/* Records a cable between (a, pa) and (b, pb); -1 if a port is bad. */
int map_link(struct map *m, int a, int pa, int b, int pb);
/* Records node @node on (sw, port); -1 if bad, full or the node is
 * already elsewhere. */
int map_add_host(struct map *m, int node, int sw, int port);
const struct map_host *map_find_host(const struct map *m, int node);

/*
 * Route bytes from host @src to host @dst: up*\/down* routing as
 * Myrinet's mapper does it, so that routes cannot form a cycle of
 * waiting links (deadlock) even on a ring.  Links are "up" towards the
 * root switch (lowest id) by BFS level, ties by id; a route takes zero or
 * more up links, then only down links.  Shortest such route; among equal
 * ones the ports are tried from (dst mod ports) on, which spreads traffic
 * over parallel paths by destination as static D-mod-k routes do.  Returns its length, or -1 (no legal route, or
 * longer than NVM_ROUTE_MAX).
 */
int map_route(const struct map *m, int src, int dst, uint8_t *route);

#endif
