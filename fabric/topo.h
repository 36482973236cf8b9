/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * netvm fabric: topology files and static source routes.
 * The file format is described in docs/fabric.md.
 */
#ifndef NETVM_FABRIC_TOPO_H
#define NETVM_FABRIC_TOPO_H

#include <glib.h>
#include <stdint.h>

#define TOPO_MAX_SWITCHES	64
#define TOPO_MAX_PORTS		32
#define TOPO_MAX_NODES		1024

/*
 * Mirrors of include/netvm/packet.h (kept here so that the switch does not
 * depend on the NIC's packet layout, which it never looks into):
 * a route byte has its MSB set, a route is at most 8 bytes.
 */
#define FAB_ROUTE_BYTE		0x80
#define FAB_ROUTE_MAX		8
#define FAB_ERROR		g_quark_from_static_string("netvm-fabric")

enum topo_port_use {
	TP_FREE = 0,	/* not configured: frames routed here are dropped */
	TP_NODE,	/* a node (QEMU VM) attaches: listening socket */
	TP_LINK,	/* switch-to-switch link */
	TP_LISTEN,	/* extra listening socket ("port S:P listen ADDR") */
	TP_CONNECT,	/* outgoing socket ("port S:P connect ADDR") */
};

typedef struct {
	enum topo_port_use use;
	int idx;	/* node index / link index */
	char *addr;	/* for TP_LISTEN / TP_CONNECT */
} TopoPort;

typedef struct {
	char *name;
	int nports;
	TopoPort port[TOPO_MAX_PORTS];
} TopoSwitch;

typedef struct {
	int sw[2], port[2];
	char *addr;	/* socket used when the two ends run in different processes */
} TopoLink;

typedef struct {
	int id;		/* node id (the NIC's node-id) */
	int sw, port;
	char *addr;	/* listening address; NULL: SOCKDIR/node<ID>.sock */
} TopoNode;

typedef struct {
	int nswitches, nlinks, nnodes;
	TopoSwitch sw[TOPO_MAX_SWITCHES];
	TopoLink *links;
	TopoNode *nodes;
} Topo;

Topo *topo_parse(const char *text, GError **err);
Topo *topo_load(const char *path, GError **err);
Topo *topo_single(int nports);
void topo_free(Topo *t);
int topo_find_switch(const Topo *t, const char *name);
int topo_find_node(const Topo *t, int id);
/* Parse "NAME:PORT" into switch and port indices. */
gboolean topo_parse_endpoint(const Topo *t, const char *s, int *sw, int *port);
/* Shortest route (route bytes, MSB set) from node index a to node index b.
 * Returns the number of bytes, or -1 when unreachable / too long. */
int topo_route(const Topo *t, int a, int b, uint8_t *route, int max);
/* The whole route table as JSON. */
char *topo_routes_json(const Topo *t, const char *sockdir);

#endif
