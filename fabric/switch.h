/* SPDX-License-Identifier: GPL-2.0-only */
/* netvm-switch: the data path (ports, queues, faults, capture). */
#ifndef NETVM_FABRIC_SWITCH_H
#define NETVM_FABRIC_SWITCH_H

#include <glib.h>
#include <stdint.h>
#include <stdio.h>

#include "topo.h"

/* Per-port counters; X-macro so the control socket prints them all. */
#define FAB_COUNTERS(X) \
	X(rx_frames) X(rx_bytes) X(tx_frames) X(tx_bytes) \
	X(drop_bad_route) X(drop_no_port) X(drop_port_down) \
	X(drop_oversized) X(drop_garbage_len) X(drop_injected) \
	X(drop_stalled) X(dup_injected) X(reorder_injected) \
	X(corrupt_injected) X(bp_stalls) X(stall_timeouts) \
	X(refused) X(connects) X(disconnects) \
	X(map_probes) X(drop_bad_probe) X(drop_bad_src) X(injected) \
	X(drop_not_mapper) X(drop_queue_full)

typedef struct {
#define FAB_C_FIELD(n) uint64_t n;
	FAB_COUNTERS(FAB_C_FIELD)
#undef FAB_C_FIELD
} FabCounters;

typedef struct {
	double drop, dup, reorder, corrupt;
	unsigned delay_ms;
} FabFaults;

typedef struct Frame Frame;
struct Frame {
	Frame *next;
	int64_t release;	/* monotonic us; not sent before */
	uint32_t len, off;	/* bytes of data[] from off */
	uint8_t hdr[4];		/* stream length prefix, filled on enqueue */
	uint8_t data[];
};

enum port_kind { PK_NONE, PK_LISTEN, PK_CONNECT, PK_INTERNAL };

typedef struct Switch Switch;
typedef struct Port Port;

struct Port {
	Switch *sw;
	int idx;
	enum port_kind kind;
	char *label;		/* "node3", "link s1:2", "listen", "connect" */
	int node;		/* node id attached here (topology "node" line),
				 * -1: none, frames are not checked (auth.c) */
	char *addr;		/* unix:PATH or tcp:HOST:PORT */
	char *unix_path;	/* listening path to unlink at exit */
	int lfd, fd;
	guint lwatch, rwatch, wwatch, retry_timer, delay_timer, reorder_timer;
	gboolean connecting, write_blocked, admin_down, stalled;
	Port *peer;		/* PK_INTERNAL */
	/* input */
	uint8_t *rxbuf;
	size_t rxstart, rxend;
	Frame *pending;		/* input frame waiting for room at its output */
	/* output */
	Frame *qhead, *qtail;
	unsigned qn;
	size_t qbytes;
	uint32_t wpos;		/* bytes of the head already written */
	Frame *reorder_slot;
	uint32_t waiters;	/* inputs (bit = port index) blocked on us */
	int64_t last_progress;
	FabFaults faults;
	uint64_t rng;
	FabCounters c;
	unsigned work;
	gboolean queued;
};

struct Switch {
	char *name;
	int idx, nports;
	gboolean local;
	Port port[TOPO_MAX_PORTS];
};

typedef struct {
	unsigned max_frame;
	unsigned queue_frames;
	size_t queue_bytes;
	unsigned stall_timeout_ms;
	uint64_t seed;
	const char *sockdir;
	const char *tcp;	/* HOST:BASEPORT for nodes, or NULL */
	int mapper_node;	/* the node allowed to map (auth.c), -1: any */
} FabConfig;

extern FabConfig fab_cfg;
extern Switch *fab_sw;
extern int fab_nsw;

gboolean fab_build(const Topo *t, const char *only, GError **err);
void fab_shutdown(void);
Port *fab_find_port(const char *spec);
void fab_link_set(Port *p, gboolean up);
void fab_faults_set(Port *p, const FabFaults *f);
gboolean fab_capture_start(const char *path, GError **err);
void fab_capture_stop(void);
/* {"switch":..,"port":..,...} for one port */
void fab_port_json(GString *s, Port *p);

int fab_listen(const char *addr, char **unix_path, GError **err);

/* Put @len bytes into @p's input as if its client had sent them: 0, or
 * -EINVAL (not a socket port), -ENETDOWN (port down), -EBUSY (the input
 * already holds a frame for a full output: try again). */
int fab_inject(Port *p, const uint8_t *data, uint32_t len);

/* auth.c: is @d (a frame as it came in on @in) from the node on @in? */
gboolean fab_src_ok(const Port *in, const uint8_t *d, uint32_t len);
/* auth.c: FALSE if @d is a mapper SCOUT or ROUTES from a node that is not
 * fab_cfg.mapper_node */
gboolean fab_mapper_ok(const Port *in, const uint8_t *d, uint32_t len);

/* probe.c: the mapper's switch probes */
uint64_t fab_switch_id(const Switch *sw);
Frame *fab_probe_reply(const Switch *sw, int in_port, const uint8_t *d,
		       uint32_t len);

#endif
