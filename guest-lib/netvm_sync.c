// SPDX-License-Identifier: (GPL-2.0-only OR MIT)
/*
 * libnetvm: sync groups on NetVM -- each member's sync area exported and
 * imported by every member, and the transport of netvm_sync_algo.h:
 * remote atomics, 4-byte notifying writes (inline: no local export
 * needed) and notification waits (spin briefly, then sleep).
 *
 * The NI has no loopback, so a member cannot reach its own area through
 * it, and a CPU atomic would not be atomic against the NI's (fetch,
 * compute, write back).  A member's atomics on its own area are instead
 * proxied by the next member: each member opens a second endpoint whose
 * notification 1 is armed; the library's handler thread for it reads the
 * request that the previous member wrote into its proxy area, performs
 * the atomic on that member's area through the NI, and writes the result
 * back with notification NETVM_SYNC_NOTF_REPLY.  Only that thread uses
 * the second endpoint, so the one-thread-per-handle rule holds.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "netvm_priv.h"
#include "netvm_sync_algo.h"

#define NVS_SPIN_MS	1	/* spin this long before sleeping in a wait */
#define NVS_RETRY_MS	20
#define NVS_SVC_NOTF	1	/* on the proxy endpoint: a request */
#define NVS_SVC_SIZE	4096u

/* A proxied atomic, written by the member served into its proxy's area. */
struct nvs_req {
	uint32_t seq;
	uint32_t op;
	uint32_t off;
	uint32_t a0;
	uint32_t a1;
};

/* The answer, written into the member's area at NVS_REPLY. */
struct nvs_rep {
	uint32_t seq;
	int32_t err;
	uint32_t r[3];
};

struct nvs_netvm {
	struct netvm_sync core;		/* first: the public handle */
	struct netvm *nv;
	void *area;
	int exp;
	int seg[NETVM_SYNC_MAX_MEMBERS];
	int pseg;			/* my proxy's proxy area */
	uint32_t req_seq;
	/* the proxy endpoint (serving the previous member) */
	struct netvm *svc;
	void *svc_area;
	int svc_seg;			/* the served member's sync area */
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

static int do_atomic(struct netvm *nv, int seg, uint32_t off, uint32_t op,
		     uint32_t a0, uint32_t a1, uint32_t r[3])
{
	if (off >= NVS_AREA_SIZE)
		return -EINVAL;
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

/* An atomic on our own area, through the next member's proxy endpoint. */
static int proxied(struct nvs_netvm *x, uint32_t off, uint32_t op,
		   uint32_t a0, uint32_t a1, uint32_t r[3])
{
	volatile struct nvs_rep *rep = (volatile struct nvs_rep *)
		((uint8_t *)x->area + NVS_REPLY);
	struct nvs_req q = { ++x->req_seq, op, off, a0, a1 };
	int err;

	err = netvm_writeFN(x->nv, x->pseg, 0, &q, sizeof(q), NVS_SVC_NOTF);
	if (!err)
		err = nvl_notf_take(x->nv, NETVM_SYNC_NOTF_REPLY,
				    x->core.timeout_ms);
	if (err)
		return err;
	if (__atomic_load_n(&rep->seq, __ATOMIC_ACQUIRE) != q.seq)
		return -EIO;
	if (rep->err)
		return rep->err;
	r[0] = rep->r[0];
	r[1] = rep->r[1];
	r[2] = rep->r[2];
	return 0;
}

static int t_atomic(void *ctx, uint32_t m, uint32_t off, uint32_t op,
		    uint32_t a0, uint32_t a1, uint32_t r[3])
{
	struct nvs_netvm *x = ctx;

	if (m == x->core.me)
		return proxied(x, off, op, a0, a1, r);
	return do_atomic(x->nv, x->seg[m], off, op, a0, a1, r);
}

/* The proxy endpoint's handler (library thread): serve one request. */
static void serve(struct netvm *svc, uint32_t notf, void *arg)
{
	struct nvs_netvm *x = arg;
	volatile struct nvs_req *v = x->svc_area;
	struct nvs_req q = { v->seq, v->op, v->off, v->a0, v->a1 };
	struct nvs_rep rep = { .seq = q.seq };

	(void)notf;
	rep.err = do_atomic(svc, x->svc_seg, q.off, q.op, q.a0, q.a1, rep.r);
	/* nobody to tell if this fails: the member times out */
	netvm_writeFN(svc, x->svc_seg, NVS_REPLY, &rep, sizeof(rep),
		      NETVM_SYNC_NOTF_REPLY);
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
	/* the proxy's thread goes first: it uses the areas */
	netvm_close(x->svc);
	nvl_notf_hide(x->nv, 0, 0);
	if (x->svc_area)
		munmap(x->svc_area, NVS_SVC_SIZE);
	for (m = 0; m < s->n; m++)
		if (x->seg[m] >= 0)
			netvm_unimport(x->nv, x->seg[m]);
	if (x->pseg >= 0)
		netvm_unimport(x->nv, x->pseg);
	if (x->exp >= 0)
		netvm_unexport(x->nv, x->exp);
	if (x->area)
		munmap(x->area, NVS_AREA_SIZE);
	free(x);
	return 0;
}

/* The proxy endpoint: a second endpoint serving member `client`. */
static int svc_open(struct nvs_netvm *x, const char *pname)
{
	int err, port;

	err = netvm_open_path(x->nv->path, &x->svc);
	if (err)
		return err;
	port = netvm_register(x->svc, NETVM_PORT_ANY, 0);
	if (port < 0)
		return port;
	x->svc_area = mmap(NULL, NVS_SVC_SIZE, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (x->svc_area == MAP_FAILED) {
		x->svc_area = NULL;
		return -errno;
	}
	memset(x->svc_area, 0, NVS_SVC_SIZE);
	err = netvm_export(x->svc, pname, x->svc_area, NVS_SVC_SIZE, 0, NULL);
	if (err < 0)
		return err;
	x->core.area[NVS_SVC_PORT / 4] = (uint32_t)port;
	return 0;
}

NETVM_PUBLIC int netvm_sync_open(struct netvm *nv, const char *name,
				 const struct netvm_sync_member *members,
				 unsigned int n, unsigned int me,
				 int timeout_ms, struct netvm_sync **out)
{
	const struct netvm_sync_member *client, *proxy;
	char pname[NETVM_NAME_MAX];
	struct nvs_netvm *x;
	uint32_t m, k, port;
	int err;

	if (!nv || !name || !members || !out || n < 2 ||
	    n > NETVM_SYNC_MAX_MEMBERS || me >= n || timeout_ms <= 0)
		return -EINVAL;
	*out = NULL;
	if (!*name)
		return -EINVAL;
	if (strlen(name) > NETVM_NAME_MAX - 3)
		return -ENAMETOOLONG;
	if (nv->efd < 0)
		return -ENXIO;
	if (members[me].node != nv->info.node_id ||
	    members[me].port != nv->ep.port)
		return -EINVAL;
	for (m = 0; m < n; m++)		/* no loopback: one member per node */
		for (k = m + 1; k < n; k++)
			if (members[m].node == members[k].node)
				return -EINVAL;
	snprintf(pname, sizeof(pname), "%s.p", name);
	client = &members[(me + n - 1) % n];
	proxy = &members[(me + 1) % n];
	x = calloc(1, sizeof(*x));
	if (!x)
		return -ENOMEM;
	x->nv = nv;
	x->exp = -1;
	x->pseg = -1;
	x->svc_seg = -1;
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
	/* our notifications are waited for by number: not the app's queue */
	nvl_notf_hide(nv, NETVM_SYNC_NOTF_FIRST, NETVM_NOTF_MAX);
	err = svc_open(x, pname);
	if (err)
		goto fail;
	err = netvm_export(nv, name, x->area, NVS_AREA_SIZE, 0, NULL);
	if (err < 0)
		goto fail;
	x->exp = err;
	for (m = 0; m < n; m++) {
		if (m == me)
			continue;
		err = netvm_import_wait(nv, members[m].node, members[m].port,
					name, timeout_ms);
		if (err < 0)
			goto fail;
		x->seg[m] = err;
	}
	/* serve the previous member; find the next one's proxy endpoint */
	err = netvm_import_wait(x->svc, client->node, client->port, name,
				timeout_ms);
	if (err < 0)
		goto fail;
	x->svc_seg = err;
	err = netvm_notf_arm(x->svc, NVS_SVC_NOTF, serve, x);
	if (err)
		goto fail;
	err = netvm_readF(nv, x->seg[(me + 1) % n], NVS_SVC_PORT,
			  (uint8_t *)x->area + NVS_SCRATCH, 4);
	if (err)
		goto fail;
	port = x->core.area[NVS_SCRATCH / 4];
	err = netvm_import_wait(nv, proxy->node, port, pname, timeout_ms);
	if (err < 0)
		goto fail;
	x->pseg = err;
	err = netvm_sync_barrier(&x->core);
	if (err)
		goto fail;
	*out = &x->core;
	return 0;
fail:
	netvm_sync_close(&x->core);
	return err;
}
