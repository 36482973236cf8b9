// SPDX-License-Identifier: (GPL-2.0-only OR MIT)
/*
 * libnetvm: sync groups on NetVM -- each member's sync area exported and
 * imported by every member, and the transport of netvm_sync_algo.h:
 * remote atomics, 4-byte notifying writes (inline: no local export
 * needed) and notification waits (spin briefly, then sleep).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "netvm_priv.h"
#include "netvm_sync_algo.h"

#define NVS_SPIN_MS	1	/* spin this long before sleeping in a wait */
#define NVS_RETRY_MS	20

struct nvs_netvm {
	struct netvm_sync core;		/* first: the public handle */
	struct netvm *nv;
	void *area;
	int exp;
	int seg[NETVM_SYNC_MAX_MEMBERS];
};

NETVM_PUBLIC int netvm_import_wait(struct netvm *nv, unsigned int node,
				   unsigned int port, const char *name,
				   int timeout_ms)
{
	uint64_t t0 = nvl_now_ns();
	int seg;

	for (;;) {
		seg = netvm_import(nv, node, port, name);
		/* not exported yet / not registered yet: the peer is starting */
		if (seg != -ENOENT && seg != -ECONNREFUSED)
			return seg;
		if (nvl_now_ns() - t0 > (uint64_t)timeout_ms * 1000000ull)
			return -ETIMEDOUT;
		usleep(NVS_RETRY_MS * 1000);
	}
}

int nvl_notf_take(struct netvm *nv, uint32_t notf, int timeout_ms)
{
	int c = netvm_notf_spin(nv, notf, NVS_SPIN_MS);

	if (c == -ETIMEDOUT)
		c = netvm_notf_wait(nv, notf, timeout_ms);
	if (c < 0)
		return c;
	c = netvm_notf_ack(nv, notf);
	return c < 0 ? c : 0;
}

static int t_atomic(void *ctx, uint32_t m, uint32_t off, uint32_t op,
		    uint32_t a0, uint32_t a1, uint32_t r[3])
{
	struct nvs_netvm *x = ctx;
	struct netvm *nv = x->nv;
	int seg = x->seg[m];

	switch (op) {
	case NVM_AT_INC:
		return netvm_incr(nv, seg, off, &r[0]);
	case NVM_AT_SWAP:
		return netvm_swap(nv, seg, off, a0, &r[0]);
	case NVM_AT_CSWAP:
		return netvm_cswap(nv, seg, off, a0, a1, &r[0]);
	case NVM_AT_ENQUEUE:
		return netvm_enqueue(nv, seg, off, a0, r);
	case NVM_AT_DEQUEUE:
		return netvm_dequeue(nv, seg, off, r);
	case NVM_AT_NEWHEAD:
		return netvm_newhead(nv, seg, off, a0, r);
	case NVM_AT_SEMP:
		return netvm_semP(nv, seg, off, a0, r);
	case NVM_AT_SEMV:
		return netvm_semV(nv, seg, off, r);
	default:
		return -EINVAL;
	}
}

static int t_put(void *ctx, uint32_t m, uint32_t off, uint32_t val,
		 uint32_t notf)
{
	struct nvs_netvm *x = ctx;

	if (notf)
		return netvm_writeFN(x->nv, x->seg[m], off, &val, 4, notf);
	return netvm_writeF(x->nv, x->seg[m], off, &val, 4);
}

static int t_wait(void *ctx, uint32_t notf, int timeout_ms)
{
	struct nvs_netvm *x = ctx;

	return nvl_notf_take(x->nv, notf, timeout_ms);
}

static const struct nvs_ops nvs_netvm_ops = {
	.atomic = t_atomic,
	.put = t_put,
	.wait = t_wait,
};

NETVM_PUBLIC int netvm_sync_close(struct netvm_sync *s)
{
	struct nvs_netvm *x = (struct nvs_netvm *)s;
	uint32_t m;

	if (!s)
		return 0;
	for (m = 0; m < s->n; m++)
		if (x->seg[m] >= 0)
			netvm_unimport(x->nv, x->seg[m]);
	if (x->exp >= 0)
		netvm_unexport(x->nv, x->exp);
	if (x->area)
		munmap(x->area, NVS_AREA_SIZE);
	free(x);
	return 0;
}

NETVM_PUBLIC int netvm_sync_open(struct netvm *nv, const char *name,
				 const struct netvm_sync_member *members,
				 unsigned int n, unsigned int me,
				 int timeout_ms, struct netvm_sync **out)
{
	struct nvs_netvm *x;
	uint32_t m;
	int err;

	if (!nv || !name || !members || !out || !n ||
	    n > NETVM_SYNC_MAX_MEMBERS || me >= n || timeout_ms <= 0)
		return -EINVAL;
	*out = NULL;
	if (nv->efd < 0)
		return -ENXIO;
	if (members[me].node != nv->info.node_id ||
	    members[me].port != nv->ep.port)
		return -EINVAL;
	x = calloc(1, sizeof(*x));
	if (!x)
		return -ENOMEM;
	x->nv = nv;
	x->exp = -1;
	for (m = 0; m < NETVM_SYNC_MAX_MEMBERS; m++)
		x->seg[m] = -1;
	x->core.ops = &nvs_netvm_ops;
	x->core.ctx = x;
	x->core.me = me;
	x->core.n = n;
	x->core.timeout_ms = timeout_ms;
	x->area = mmap(NULL, NVS_AREA_SIZE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (x->area == MAP_FAILED) {
		x->area = NULL;
		err = -errno;
		goto fail;
	}
	x->core.area = x->area;
	nvs_area_init(x->core.area, n);
	err = netvm_export(nv, name, x->area, NVS_AREA_SIZE, 0, NULL);
	if (err < 0)
		goto fail;
	x->exp = err;
	for (m = 0; m < n; m++) {
		err = netvm_import_wait(nv, members[m].node, members[m].port,
				      name, timeout_ms);
		if (err < 0)
			goto fail;
		x->seg[m] = err;
	}
	err = netvm_sync_barrier(&x->core);
	if (err)
		goto fail;
	*out = &x->core;
	return 0;
fail:
	netvm_sync_close(&x->core);
	return err;
}
