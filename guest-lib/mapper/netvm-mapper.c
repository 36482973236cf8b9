// SPDX-License-Identifier: (GPL-2.0-only OR MIT)
/*
 * netvm-mapper: discover the fabric with probes and install every node's
 * route table, as Myrinet's mapper does.  Protocol: include/netvm/mapper.h;
 * design: docs/fabric.md, "The mapper".
 *
 *   netvm-mapper [-d INDEX] [-n] [-j] [-t MS] [-r TRIES] [-g GENERATION]
 *
 * Exploration is breadth first, one level of switches at a time: a switch
 * probe out of every unknown port of the level's switches (a switch
 * answers, naming itself and the port the probe came in on), then a scout
 * out of every port that no switch answered on (a node's driver answers
 * with its node id).  For each switch the mapper keeps the route into it
 * and the route from it back to the mapper (the ports the probes came in
 * on, nearest first), which every later probe and answer uses.
 *
 * Exit status: 0 when the map was built (and, unless -n, every node
 * acknowledged its table), 1 on failure, 2 on bad usage.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <endian.h>

#include "netvm.h"
#include "netvm_pattern.h"
#include "map_graph.h"

#define MAX_PROBES	1024
#define MSG_MAX		(sizeof(struct nvm_map_msg) + \
			 MAP_MAX_HOSTS * sizeof(struct nvm_map_route))

/* One question in a round, and what came back. */
struct probe {
	int sw, port;		/* asked out of (sw, port); port -1: sw itself */
	bool sent, done;
	uint8_t route[NVM_ROUTE_MAX];
	int route_len;
	union {
		struct nvm_map_msg msg;
		uint8_t bytes[MSG_MAX];
	};
	size_t len;
	struct nvm_map_msg reply;
};

static struct netvm *nv;
static unsigned int self_node;
static uint16_t nonce;
static unsigned long window_ms = 500, tries = 2;
static bool verbose;
static struct probe probes[MAX_PROBES];
static struct map map;

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int cat_route(uint8_t *out, const uint8_t *a, int al, const uint8_t *b,
		     int bl)
{
	if (al + bl > NVM_ROUTE_MAX)
		return -1;
	memcpy(out, a, al);
	memcpy(out + al, b, bl);
	return al + bl;
}

/* Prepares probes[i]: a message of @kind behind @route, answered via @ret. */
static int probe_prep(int i, int sw, int port, int kind, const uint8_t *route,
		      int route_len, const uint8_t *ret, int ret_len)
{
	struct probe *p = &probes[i];

	if (route_len < 0 || route_len > NVM_ROUTE_MAX || ret_len < 0 ||
	    ret_len > NVM_ROUTE_MAX)
		return -1;
	memset(p, 0, sizeof(*p));
	p->sw = sw;
	p->port = port;
	memcpy(p->route, route, route_len);
	p->route_len = route_len;
	memcpy(p->msg.magic, NVM_MAP_MAGIC, NVM_MAP_MAGIC_LEN);
	p->msg.kind = kind;
	p->msg.cookie = htobe32((uint32_t)nonce << 16 | i);
	p->msg.ret_len = ret_len;
	memcpy(p->msg.ret_route, ret, ret_len);
	p->len = sizeof(p->msg);
	return 0;
}

static int reply_kind(int kind)
{
	return kind + 1;	/* SWITCH_PROBE -> SWITCH_REPLY, ... */
}

/*
 * Takes one reply, from node @src (its header's src_node, which the
 * switch checked at the sender's port: docs/security.md); true if it
 * answered one of probes[0..n).  A node answers a SCOUT or ROUTES for
 * itself only: a reply naming another node is a lie and is refused, or
 * a node could have the mapper route another node's traffic to it.
 */
static bool take_reply(const uint8_t *buf, size_t len, unsigned int src,
		       int kind, int n)
{
	const struct nvm_map_msg *m = (const void *)buf;
	uint32_t cookie;
	int i;

	if (len < sizeof(*m) || memcmp(m->magic, NVM_MAP_MAGIC,
				       NVM_MAP_MAGIC_LEN) ||
	    m->kind != reply_kind(kind))
		return false;
	cookie = be32toh(m->cookie);
	i = cookie & 0xffff;
	if (cookie >> 16 != nonce || i >= n || probes[i].done)
		return false;
	if ((kind != NVM_MAP_SWITCH_PROBE && be16toh(m->node) != src) ||
	    (kind == NVM_MAP_ROUTES && m->node != probes[i].msg.node)) {
		fprintf(stderr, "netvm-mapper: a reply from node %u names node %u: refused\n",
			src, be16toh(m->node));
		return false;
	}
	probes[i].reply = *m;
	probes[i].done = true;
	return true;
}

/*
 * Sends probes[0..n) (those not answered yet) up to `tries` times and
 * collects answers for `window_ms` after each sending.  Returns the
 * number answered, or a negative errno from the device.
 */
static int round_trip(int kind, int n)
{
	static uint8_t buf[NVM_RAW_MAX_PAYLOAD];
	int answered = 0;

	for (unsigned long t = 0; t < tries && answered < n; t++) {
		uint64_t end;

		for (int i = 0; i < n; i++) {
			int err;

			if (probes[i].done || probes[i].route_len < 0)
				continue;
			if (verbose && !t)
				fprintf(stderr, "netvm-mapper: kind %d out of %d:%d cookie %08x\n",
					kind, probes[i].sw, probes[i].port,
					be32toh(probes[i].msg.cookie));
			err = netvm_raw_send(nv, probes[i].bytes, probes[i].len,
					     probes[i].route,
					     probes[i].route_len);
			if (err == -ENOLINK)
				return err;
			if (err && verbose)
				fprintf(stderr, "netvm-mapper: send: %s\n",
					netvm_strerror(err));
		}
		end = now_ms() + window_ms;
		while (answered < n) {
			uint64_t now = now_ms();
			size_t len = 0;
			unsigned int src;
			int err;

			if (now >= end)
				break;
			err = netvm_raw_recv(nv, buf, sizeof(buf), &len, &src,
					     (unsigned int)(end - now));
			if (err == -ETIMEDOUT)
				break;
			if (err == -EMSGSIZE) {	/* not ours: drop it */
				uint8_t *big = malloc(len);

				if (big)
					netvm_raw_recv(nv, big, len, &len, &src, 0);
				free(big);
				continue;
			}
			if (err && err != -EINTR)
				return err;
			if (!err && take_reply(buf, len, src, kind, n))
				answered++;
		}
	}
	return answered;
}

static const uint8_t switch_byte[1] = { NVM_MAP_SWITCH_BYTE };

/* A switch probe out of (sw, port), or of sw itself when port < 0. */
static int prep_switch_probe(int i, int sw, int port)
{
	const struct map_switch *s = sw >= 0 ? &map.sw[sw] : NULL;
	uint8_t r[2 * NVM_ROUTE_MAX + 2], pb = NVM_ROUTE_BYTE | port;
	int len = 0;

	if (s) {
		memcpy(r, s->to, s->to_len);
		len = s->to_len;
	}
	if (port >= 0)
		r[len++] = pb;
	r[len++] = switch_byte[0];
	if (s) {
		memcpy(r + len, s->back, s->back_len);
		len += s->back_len;
	}
	if (len > NVM_ROUTE_MAX)
		return -1;
	return probe_prep(i, sw, port, NVM_MAP_SWITCH_PROBE, r, len, NULL, 0);
}

static int prep_scout(int i, int sw, int port)
{
	const struct map_switch *s = &map.sw[sw];
	uint8_t r[NVM_ROUTE_MAX], pb = NVM_ROUTE_BYTE | port;
	int len = cat_route(r, s->to, s->to_len, &pb, 1);

	return probe_prep(i, sw, port, NVM_MAP_SCOUT, r, len, s->back,
			  s->back_len);
}

static void reply_name(const struct nvm_map_msg *m, char *name)
{
	memcpy(name, m->name, NVM_MAP_NAME_LEN);
	name[NVM_MAP_NAME_LEN - 1] = 0;
}

/* A switch answered the probe out of (parent, port); in_port is where the
 * probe entered it.  Returns its index, or -1 when the map is full. */
static int learn_switch(int parent, int port, const struct nvm_map_msg *m)
{
	uint64_t id = be64toh(m->id);
	int in = be16toh(m->in_port), k = map_find_switch(&map, id);
	char name[NVM_MAP_NAME_LEN];
	struct map_switch *s;
	uint8_t ib = NVM_ROUTE_BYTE | in;

	if (k >= 0) {
		if (parent >= 0)
			map_link(&map, parent, port, k, in);
		return k;
	}
	reply_name(m, name);
	k = map_add_switch(&map, id, name, be16toh(m->nports));
	if (k < 0 || in >= map.sw[k].nports)
		return -1;
	s = &map.sw[k];
	s->in_port = in;
	if (parent < 0) {
		/* the mapper's own switch: back out of the port we are on */
		s->back[0] = ib;
		s->back_len = 1;
		return k;
	}
	s->to_len = cat_route(s->to, map.sw[parent].to, map.sw[parent].to_len,
			      (uint8_t []){ NVM_ROUTE_BYTE | port }, 1);
	s->back_len = cat_route(s->back, &ib, 1, map.sw[parent].back,
				map.sw[parent].back_len);
	if (s->to_len < 0 || s->back_len < 0) {
		fprintf(stderr, "netvm-mapper: switch %s is more than %d hops away: not explored\n",
			name, NVM_ROUTE_MAX);
		s->to_len = s->back_len = -1;
	}
	map_link(&map, parent, port, k, in);
	return k;
}

/*
 * prep(i, sw, port) for every port of switches [first, last) that leads
 * nowhere known yet (not back to the mapper, no switch, no host); returns
 * how many probes it prepared.
 */
static int prep_unknown_ports(int first, int last,
			      int (*prep)(int i, int sw, int port))
{
	int n = 0;

	for (int s = first; s < last; s++) {
		const struct map_switch *w = &map.sw[s];

		if (w->to_len < 0)
			continue;
		for (int p = 0; p < w->nports && n < MAX_PROBES; p++) {
			if (p == w->in_port || w->peer[p] >= 0 || w->host[p] >= 0)
				continue;
			if (prep(n, s, p) == 0)
				n++;
		}
	}
	return n;
}

/* Explores the fabric below switch 0.  Returns 0 or -1. */
static int explore(void)
{
	int first = 0, last = map.nsw;	/* switches of the current level */

	while (first < last) {
		int n, got;

		/* 1. switch probes out of every unknown port of the level */
		n = prep_unknown_ports(first, last, prep_switch_probe);
		got = round_trip(NVM_MAP_SWITCH_PROBE, n);
		if (got < 0)
			return -1;
		for (int i = 0; i < n; i++)
			if (probes[i].done &&
			    learn_switch(probes[i].sw, probes[i].port,
					 &probes[i].reply) < 0)
				fprintf(stderr, "netvm-mapper: too many switches (max %d)\n",
					MAP_MAX_SWITCHES);

		/* 2. scouts out of the ports no switch answered on */
		n = prep_unknown_ports(first, last, prep_scout);
		got = round_trip(NVM_MAP_SCOUT, n);
		if (got < 0)
			return -1;
		for (int i = 0; i < n; i++) {
			int node;

			if (!probes[i].done)
				continue;
			node = be16toh(probes[i].reply.node);
			if (map_add_host(&map, node, probes[i].sw, probes[i].port))
				fprintf(stderr, "netvm-mapper: node %d answers on %s:%d and elsewhere: ignored there\n",
					node, map.sw[probes[i].sw].name,
					probes[i].port);
		}
		first = last;
		last = map.nsw;
	}
	return 0;
}

/* Sends every host its route table; returns the number acknowledged. */
static int install(uint32_t generation, int *failed)
{
	int n = 0, got;

	*failed = 0;
	for (int h = 0; h < map.nhosts; h++) {
		const struct map_host *mh = &map.host[h];
		const struct map_switch *s = &map.sw[mh->sw];
		uint8_t r[NVM_ROUTE_MAX], pb = NVM_ROUTE_BYTE | mh->port;
		int len = cat_route(r, s->to, s->to_len, &pb, 1), c = 0;
		struct probe *p = &probes[n];

		if (probe_prep(n, mh->sw, mh->port, NVM_MAP_ROUTES, r, len,
			       s->back, s->back_len)) {
			(*failed)++;
			continue;
		}
		p->msg.node = htobe16(mh->node);
		p->msg.generation = htobe32(generation);
		for (int d = 0; d < map.nhosts; d++) {
			struct nvm_map_route *e = &p->msg.entries[c];
			int rl;

			if (d == h)
				continue;
			rl = map_route(&map, mh->node, map.host[d].node, e->route);
			if (rl < 0) {
				fprintf(stderr, "netvm-mapper: no route from node %d to node %d\n",
					mh->node, map.host[d].node);
				continue;
			}
			e->node = htobe16(map.host[d].node);
			e->len = rl;
			c++;
		}
		p->msg.count = htobe16(c);
		p->len = sizeof(p->msg) + c * sizeof(p->msg.entries[0]);
		n++;
	}
	got = round_trip(NVM_MAP_ROUTES, n);
	if (got < 0)
		return -1;
	got = 0;
	for (int i = 0; i < n; i++) {
		int node = be16toh(probes[i].msg.node);

		if (!probes[i].done) {
			fprintf(stderr, "netvm-mapper: node %d did not acknowledge its routes\n",
				node);
			(*failed)++;
		} else if (probes[i].reply.status) {
			fprintf(stderr, "netvm-mapper: node %d refused its routes: %s\n",
				node, strerror(be16toh(probes[i].reply.status)));
			(*failed)++;
		} else {
			got++;
		}
	}
	return got;
}

static int cmp_host(const void *a, const void *b)
{
	return ((const struct map_host *)a)->node -
	       ((const struct map_host *)b)->node;
}

static void print_route(FILE *f, const uint8_t *r, int len, bool json)
{
	for (int i = 0; i < len; i++)
		fprintf(f, json ? "%s%d" : "%s%02x", i && json ? ", " : "",
			json ? r[i] & 0x7f : r[i]);
}

static void print_text(uint32_t generation, int acked, bool installed)
{
	printf("netvm-mapper: node %u, generation %u: %d switch%s, %d node%s",
	       self_node, generation, map.nsw, map.nsw == 1 ? "" : "es",
	       map.nhosts, map.nhosts == 1 ? "" : "s");
	if (installed)
		printf(", routes installed on %d", acked);
	printf("\n");
	for (int s = 0; s < map.nsw; s++) {
		const struct map_switch *w = &map.sw[s];

		printf("switch %s (id %016llx, %d ports):", w->name,
		       (unsigned long long)w->id, w->nports);
		for (int p = 0; p < w->nports; p++) {
			if (w->host[p] >= 0)
				printf(" %d=node%d", p, w->host[p]);
			else if (w->peer[p] >= 0)
				printf(" %d=%s:%d", p, map.sw[w->peer[p]].name,
				       w->peer_port[p]);
		}
		printf("\n");
	}
	for (int a = 0; a < map.nhosts; a++)
		for (int b = 0; b < map.nhosts; b++) {
			uint8_t r[NVM_ROUTE_MAX];
			int len;

			if (a == b)
				continue;
			len = map_route(&map, map.host[a].node, map.host[b].node, r);
			printf("route %d -> %d: ", map.host[a].node,
			       map.host[b].node);
			if (len < 0)
				printf("none");
			print_route(stdout, r, len, false);
			printf("\n");
		}
}

static void print_json(uint32_t generation, int acked, bool installed)
{
	printf("{\"mapper\": %u, \"generation\": %u, \"installed\": %s,\n",
	       self_node, generation, installed ? "true" : "false");
	printf(" \"acked\": %d,\n \"switches\": [", acked);
	for (int s = 0; s < map.nsw; s++) {
		const struct map_switch *w = &map.sw[s];
		bool firstp = true;

		printf("%s\n  {\"name\": \"%s\", \"id\": \"%016llx\", \"ports\": %d, \"links\": {",
		       s ? "," : "", w->name, (unsigned long long)w->id,
		       w->nports);
		for (int p = 0; p < w->nports; p++) {
			if (w->host[p] >= 0)
				printf("%s\"%d\": \"node%d\"", firstp ? "" : ", ",
				       p, w->host[p]);
			else if (w->peer[p] >= 0)
				printf("%s\"%d\": \"%s:%d\"", firstp ? "" : ", ",
				       p, map.sw[w->peer[p]].name,
				       w->peer_port[p]);
			else
				continue;
			firstp = false;
		}
		printf("}}");
	}
	printf("],\n \"nodes\": [");
	for (int h = 0; h < map.nhosts; h++)
		printf("%s%d", h ? ", " : "", map.host[h].node);
	printf("],\n \"routes\": [");
	for (int a = 0, k = 0; a < map.nhosts; a++)
		for (int b = 0; b < map.nhosts; b++) {
			uint8_t r[NVM_ROUTE_MAX];
			int len;

			if (a == b)
				continue;
			len = map_route(&map, map.host[a].node, map.host[b].node, r);
			printf("%s\n  {\"src\": %d, \"dst\": %d, \"route\": ",
			       k++ ? "," : "", map.host[a].node, map.host[b].node);
			if (len < 0) {
				printf("null}");
				continue;
			}
			printf("[");
			print_route(stdout, r, len, true);
			printf("]}");
		}
	printf("]}\n");
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: netvm-mapper [-d INDEX] [-n] [-j] [-t MS] [-r TRIES] [-g GEN] [-v]\n"
		"Discover the fabric behind /dev/netvmINDEX with probes and install\n"
		"every node's route table (up*/down* routes).\n"
		"  -n      map only: print the map, install nothing\n"
		"  -j      print the map as JSON\n"
		"  -t MS   wait MS milliseconds for answers to each round (default 500)\n"
		"  -r N    ask N times before a port counts as empty (default 2)\n"
		"  -g GEN  map generation to install (default: the time)\n"
		"  -v      report each probe sent (kind, switch:port, cookie) and failed sends\n");
}

int main(int argc, char **argv)
{
	unsigned long index = 0, gen = (unsigned long)time(NULL) & 0xffffffff;
	bool json = false, no_install = false;
	struct netvm_info info;
	int opt, err, acked = 0, failed = 0;

	while ((opt = getopt(argc, argv, "d:njt:r:g:vh")) != -1) {
		unsigned long *dst = NULL, max = 0;

		switch (opt) {
		case 'd': dst = &index; max = 255; break;
		case 't': dst = &window_ms; max = 60000; break;
		case 'r': dst = &tries; max = 100; break;
		case 'g': dst = &gen; max = 0xffffffff; break;
		case 'n': no_install = true; break;
		case 'j': json = true; break;
		case 'v': verbose = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
		if (dst && (netvm_parse_uint(optarg, max, dst) ||
			    ((opt == 't' || opt == 'r') && !*dst))) {
			fprintf(stderr, "netvm-mapper: bad value '%s' for -%c\n",
				optarg, opt);
			return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
	err = netvm_open((int)index, &nv);
	if (!err)
		err = netvm_info(nv, &info);
	if (err) {
		fprintf(stderr, "netvm-mapper: /dev/netvm%lu: %s\n", index,
			netvm_strerror(err));
		return 1;
	}
	self_node = info.node_id;
	srand((unsigned int)(now_ms() ^ getpid()));
	nonce = (uint16_t)(rand() | 1);
	map_init(&map);

	/* the switch we are plugged into */
	prep_switch_probe(0, -1, -1);
	err = round_trip(NVM_MAP_SWITCH_PROBE, 1);
	if (err == 1 && learn_switch(-1, -1, &probes[0].reply) == 0 &&
	    map_add_host(&map, (int)self_node, 0, map.sw[0].in_port) == 0)
		err = explore();
	else if (err >= 0)
		err = -ENXIO;
	if (err < 0) {
		fprintf(stderr, "netvm-mapper: %s\n", err == -ENXIO ?
			"no switch answered: back-to-back link or no fabric (routes stay empty)" :
			netvm_strerror(err));
		netvm_close(nv);
		return 1;
	}
	qsort(map.host, map.nhosts, sizeof(map.host[0]), cmp_host);
	if (!no_install) {
		acked = install((uint32_t)gen, &failed);
		if (acked < 0) {
			fprintf(stderr, "netvm-mapper: installing routes failed\n");
			netvm_close(nv);
			return 1;
		}
	}
	if (json)
		print_json((uint32_t)gen, acked, !no_install);
	else
		print_text((uint32_t)gen, acked, !no_install);
	netvm_close(nv);
	return failed ? 1 : 0;
}
