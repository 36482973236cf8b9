// SPDX-License-Identifier: MIT
/*
 * The netvm libfabric provider against libfabric's public API (guest
 * group fi, tests/guest/test_fi.py; docs/libfabric.md).  Prints TAP-style
 * "ok - " lines; exit status 1 if any failed.
 *
 *   fi-netvm-test local
 *       two endpoints of one process (the node's loop-back): AV table and
 *       map, bad addresses refused, getname before enable, messages of 1,
 *       96, 97 and 4096 bytes byte for byte with readfrom naming the
 *       sender, a message cut to its receive (FI_ETRUNC, olen), a send
 *       too large (-FI_EMSGSIZE), sread timing out (-FI_EAGAIN) and
 *       waking for a message, fi_cancel of a posted receive; iovec sends
 *       and receives of 1..4 pieces, byte for byte; selective completion
 *       (FI_SELECTIVE_COMPLETION with and without FI_COMPLETION); every
 *       operation the provider does not offer, called through libfabric's
 *       inline wrappers, answering exactly -FI_ENOSYS (no NULL table or
 *       member: no crash); fi_tostr of a fid; fi_mr_reg; the event queue.
 *   fi-netvm-test server      (node 1)
 *       writes its address to /tmp/fi.addr; takes 3 messages (sread):
 *       the first from a sender not in its AV (FI_ADDR_NOTAVAIL), whose
 *       payload is the sender's address string, which it inserts; the
 *       next two come from that fi_addr (the NI named the sender);
 *       answers each, 1 .. 4096 bytes, checked by the client.
 *   fi-netvm-test client ADDR (node 0)
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_collective.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#include "guest_tap.h"

struct side {
	struct fid_ep *ep;
	struct fid_cq *cq;
	char name[64];		/* netvm:N:P */
	uint8_t addr[64];
};

static struct fi_info *info;
static struct fid_fabric *fab;
static struct fid_domain *dom;

static void die(const char *what, int err)
{
	printf("not ok - %s: %d (%s)\n", what, err, fi_strerror(-err));
	exit(1);
}

static void open_fabric(void)
{
	struct fi_info *hints = fi_allocinfo();
	int err;

	hints->ep_attr->type = FI_EP_DGRAM;
	hints->caps = FI_MSG | FI_SOURCE;
	hints->fabric_attr->prov_name = strdup("netvm");
	err = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &info);
	if (err)
		die("fi_getinfo", err);
	fi_freeinfo(hints);
	err = fi_fabric(info->fabric_attr, &fab, NULL);
	if (!err)
		err = fi_domain(fab, info, &dom, NULL);
	if (err)
		die("fabric and domain", err);
}

static void open_side_flags(struct side *s, struct fid_av *av, uint64_t bind)
{
	struct fi_cq_attr ca = { .format = FI_CQ_FORMAT_MSG,
				 .wait_obj = FI_WAIT_UNSPEC, .size = 64 };
	size_t len = sizeof(s->addr), n = sizeof(s->name);
	int err;

	err = fi_cq_open(dom, &ca, &s->cq, NULL);
	if (!err)
		err = fi_endpoint(dom, info, &s->ep, NULL);
	if (!err)
		err = fi_getname(&s->ep->fid, s->addr, &len);
	check(err == -FI_EOPBADSTATE, "fi_getname before fi_enable: -FI_EOPBADSTATE (%d)", err);
	err = fi_enable(s->ep);
	check(err == -FI_ENOCQ, "fi_enable with nothing bound: -FI_ENOCQ (%d)", err);
	err = fi_ep_bind(s->ep, &s->cq->fid, FI_TRANSMIT | FI_RECV | bind);
	if (!err)
		err = fi_ep_bind(s->ep, &av->fid, 0);
	if (!err)
		err = fi_enable(s->ep);
	len = sizeof(s->addr);
	if (!err)
		err = fi_getname(&s->ep->fid, s->addr, &len);
	if (err)
		die("endpoint", err);
	check(len == 8, "fi_getname: an 8-byte address (%zu)", len);
	fi_av_straddr(av, s->addr, s->name, &n);
}

static void open_side(struct side *s, struct fid_av *av)
{
	open_side_flags(s, av, 0);
}

/* The next completion of cq (sread, 20 s), error entries as -err. */
static ssize_t next(struct fid_cq *cq, struct fi_cq_msg_entry *e,
		    fi_addr_t *src, struct fi_cq_err_entry *ee)
{
	ssize_t r = fi_cq_sreadfrom(cq, e, 1, src, NULL, 20000);

	if (r == -FI_EAVAIL && fi_cq_readerr(cq, ee, 0) == 1)
		return -ee->err;
	return r;
}

/* The next completion of cq must be ctx's: the ones before it did not
 * complete (selective completion), since completions come in order. */
static bool next_is(struct fid_cq *cq, void *ctx, struct fi_cq_msg_entry *e)
{
	struct fi_cq_err_entry ee;
	fi_addr_t src;

	return next(cq, e, &src, &ee) == 1 && e->op_context == ctx;
}

/*
 * fi_sendv and fi_recvv of 1..4 pieces: a send of n pieces into a receive
 * of 5 - n pieces in separate buffers, each checked byte for byte and the
 * byte after its share untouched; 5 pieces refused (-FI_EINVAL).
 */
static void iovecs(struct side *a, struct side *b, fi_addr_t to_b, fi_addr_t from_a)
{
	static const size_t piece[4] = { 1000, 1, 95, 3000 };	/* 4096 in all */
	static uint8_t out[4096], in[4][4200];
	struct fi_cq_msg_entry e;
	struct fi_cq_err_entry ee;
	struct iovec sv[5], rv[5];
	fi_addr_t src;
	int ctx[2];

	for (size_t n = 1; n <= 4; n++) {
		size_t total = 0, m = 5 - n, off = 0;
		bool same = true;
		ssize_t r;

		for (size_t i = 0; i < n; i++) {
			sv[i].iov_base = out + total;
			sv[i].iov_len = piece[i];
			total += piece[i];
		}
		tap_fill(out, total, 40 + (unsigned int)n);
		memset(in, 0xee, sizeof(in));
		for (size_t i = 0; i < m; i++) {
			rv[i].iov_base = in[i];
			rv[i].iov_len = i + 1 < m ? total / m : total - (m - 1) * (total / m) + 16;
		}
		r = fi_recvv(b->ep, rv, NULL, m, FI_ADDR_UNSPEC, &ctx[1]);
		if (!r)
			r = fi_sendv(a->ep, sv, NULL, n, to_b, &ctx[0]);
		check(r == 0 && next_is(a->cq, &ctx[0], &e) && (e.flags & FI_SEND),
		      "fi_sendv of %zu pieces, %zu B: completes with its context (%zd)", n, total, r);
		r = next(b->cq, &e, &src, &ee);
		for (size_t i = 0; i < m; i++) {
			size_t k = total - off < rv[i].iov_len ? total - off : rv[i].iov_len;

			same = same && !memcmp(in[i], out + off, k) && in[i][k] == 0xee;
			off += k;
		}
		check(r == 1 && e.op_context == &ctx[1] && e.len == total && src == from_a && same,
		      "fi_recvv of %zu pieces: %zu B scattered byte for byte (%zd)", m, total, r);
	}
	for (size_t i = 0; i < 5; i++) {
		sv[i].iov_base = out;
		sv[i].iov_len = 1;
	}
	/* lengths whose sum wraps a size_t to 1: too large, not a 1-byte send */
	sv[0].iov_len = SIZE_MAX;
	sv[1].iov_len = 2;
	check(fi_sendv(a->ep, sv, NULL, 2, to_b, NULL) == -FI_EMSGSIZE,
	      "fi_sendv of pieces whose lengths overflow: -FI_EMSGSIZE");
	sv[0].iov_len = 1;
	sv[1].iov_len = 1;
	check(fi_sendv(a->ep, sv, NULL, 5, to_b, NULL) == -FI_EINVAL &&
	      fi_recvv(b->ep, sv, NULL, 5, FI_ADDR_UNSPEC, NULL) == -FI_EINVAL,
	      "fi_sendv and fi_recvv of 5 pieces: -FI_EINVAL (4 at most)");
}

/*
 * Endpoint c bound with FI_SELECTIVE_COMPLETION: a send or receive
 * completes only with FI_COMPLETION; both messages arrive either way.
 */
static void selective(struct side *a, struct side *c, fi_addr_t to_a, fi_addr_t to_c)
{
	static uint8_t m1[100], m2[200], in1[300], in2[300];
	struct iovec v1 = { m1, sizeof(m1) }, v2 = { m2, sizeof(m2) };
	struct fi_msg s1 = { .msg_iov = &v1, .iov_count = 1, .addr = to_a };
	struct fi_msg s2 = { .msg_iov = &v2, .iov_count = 1, .addr = to_a };
	struct iovec w1 = { in1, sizeof(in1) }, w2 = { in2, sizeof(in2) };
	struct fi_msg r1 = { .msg_iov = &w1, .iov_count = 1, .addr = FI_ADDR_UNSPEC };
	struct fi_msg r2 = { .msg_iov = &w2, .iov_count = 1, .addr = FI_ADDR_UNSPEC };
	struct fi_cq_msg_entry e;
	int ctx[4];
	ssize_t r;

	s1.context = &ctx[0];
	s2.context = &ctx[1];
	r1.context = &ctx[2];
	r2.context = &ctx[3];
	tap_fill(m1, sizeof(m1), 51);
	tap_fill(m2, sizeof(m2), 52);
	/* sends from c: without FI_COMPLETION (sendmsg 0, fi_send), then with */
	memset(in1, 0, sizeof(in1));
	memset(in2, 0, sizeof(in2));
	fi_recv(a->ep, in1, sizeof(in1), NULL, FI_ADDR_UNSPEC, &ctx[2]);
	fi_recv(a->ep, in2, sizeof(in2), NULL, FI_ADDR_UNSPEC, &ctx[3]);
	r = fi_sendmsg(c->ep, &s1, 0);
	if (!r)
		r = fi_sendmsg(c->ep, &s2, FI_COMPLETION);
	check(r == 0 && next_is(c->cq, &ctx[1], &e) && (e.flags & FI_SEND),
	      "selective: a send completes only with FI_COMPLETION (%zd)", r);
	check(next_is(a->cq, &ctx[2], &e) && e.len == 100 && !memcmp(in1, m1, 100) &&
	      next_is(a->cq, &ctx[3], &e) && e.len == 200 && !memcmp(in2, m2, 200),
	      "selective: both sends arrived byte for byte");
	/* receives on c: without FI_COMPLETION, then with */
	memset(in1, 0, sizeof(in1));
	memset(in2, 0, sizeof(in2));
	r = fi_recvmsg(c->ep, &r1, 0);
	if (!r)
		r = fi_recvmsg(c->ep, &r2, FI_COMPLETION);
	fi_send(a->ep, m1, sizeof(m1), NULL, to_c, &ctx[0]);
	fi_send(a->ep, m2, sizeof(m2), NULL, to_c, &ctx[1]);
	check(r == 0 && next_is(a->cq, &ctx[0], &e) && next_is(a->cq, &ctx[1], &e),
	      "selective: sends to c complete on an ordinary endpoint");
	check(next_is(c->cq, &ctx[3], &e) && e.len == 200 && !memcmp(in2, m2, 200) &&
	      !memcmp(in1, m1, 100) && in1[100] == 0,
	      "selective: a receive completes only with FI_COMPLETION, the other filled all the same");
	fi_send(c->ep, m1, sizeof(m1), NULL, to_a, NULL);	/* fi_send: op_flags 0 */
	r = fi_send(c->ep, m1, sizeof(m1), NULL, FI_ADDR_NOTAVAIL, &ctx[0]);
	check(r == -FI_EINVAL, "selective: an error is still said at once (%zd)", r);
	fi_recv(a->ep, in1, sizeof(in1), NULL, FI_ADDR_UNSPEC, &ctx[2]);
	check(next_is(a->cq, &ctx[2], &e) && e.len == 100 && fi_cq_read(c->cq, &e, 1) == -FI_EAGAIN,
	      "selective: fi_send without FI_COMPLETION arrived, nothing completed on c");
}

#define REFUSED(name, call) do {						\
	long long r_ = (long long)(call);					\
	check(r_ == -FI_ENOSYS, "%s: -FI_ENOSYS (%lld)", name, r_);		\
} while (0)

/*
 * Every operation the provider does not offer, through libfabric's inline
 * wrappers: most call the provider's table member unchecked, so a NULL
 * table or member would crash here.  Each must answer -FI_ENOSYS.
 */
static void refused(struct side *a, struct fid_av *av, fi_addr_t to)
{
	uint64_t buf[8] = { 0 }, res[8], cmp[8];
	struct iovec iov = { buf, 8 };
	struct fi_ioc ioc = { buf, 1 }, rioc = { res, 1 }, cioc = { cmp, 1 };
	struct fi_rma_iov rma = { 0, 8, 1 };
	struct fi_rma_ioc rmac = { 0, 1, 1 };
	struct fi_msg_rma mr = { .msg_iov = &iov, .iov_count = 1, .addr = to,
				 .rma_iov = &rma, .rma_iov_count = 1 };
	struct fi_msg_tagged mt = { .msg_iov = &iov, .iov_count = 1, .addr = to };
	struct fi_msg_atomic ma = { .msg_iov = &ioc, .iov_count = 1, .addr = to,
				    .rma_iov = &rmac, .rma_iov_count = 1,
				    .datatype = FI_UINT64, .op = FI_SUM };
	struct fi_atomic_attr aattr;
	struct fi_collective_attr cattr = { .op = FI_SUM, .datatype = FI_UINT64 };
	struct fi_av_set_attr sattr = { .count = 1 };
	struct fi_cntr_attr cntra = { .events = FI_CNTR_EVENTS_COMP };
	struct fi_poll_attr polla = { 0 };
	struct fi_wait_attr waita = { .wait_obj = FI_WAIT_UNSPEC };
	struct fid_ep *ep = a->ep, *other;
	struct fid_pep *pep = (struct fid_pep *)ep;
	struct fid_domain *d2;
	struct fid_av_set *set;
	struct fid_cntr *cntr;
	struct fid_poll *poll;
	struct fid_wait *wait;
	struct fid_stx *stx;
	struct fid_mc *mc;
	struct fid *fids[1] = { &a->cq->fid };
	void *ops;
	char str[64];
	size_t cnt, len = sizeof(str);
	int ctx;

	/* RMA */
	REFUSED("fi_read", fi_read(ep, buf, 8, NULL, to, 0, 1, &ctx));
	REFUSED("fi_readv", fi_readv(ep, &iov, NULL, 1, to, 0, 1, &ctx));
	REFUSED("fi_readmsg", fi_readmsg(ep, &mr, 0));
	REFUSED("fi_write", fi_write(ep, buf, 8, NULL, to, 0, 1, &ctx));
	REFUSED("fi_writev", fi_writev(ep, &iov, NULL, 1, to, 0, 1, &ctx));
	REFUSED("fi_writemsg", fi_writemsg(ep, &mr, 0));
	REFUSED("fi_inject_write", fi_inject_write(ep, buf, 8, to, 0, 1));
	REFUSED("fi_writedata", fi_writedata(ep, buf, 8, NULL, 5, to, 0, 1, &ctx));
	REFUSED("fi_inject_writedata", fi_inject_writedata(ep, buf, 8, 5, to, 0, 1));
	/* tagged */
	REFUSED("fi_trecv", fi_trecv(ep, buf, 8, NULL, to, 1, 0, &ctx));
	REFUSED("fi_trecvv", fi_trecvv(ep, &iov, NULL, 1, to, 1, 0, &ctx));
	REFUSED("fi_trecvmsg", fi_trecvmsg(ep, &mt, 0));
	REFUSED("fi_tsend", fi_tsend(ep, buf, 8, NULL, to, 1, &ctx));
	REFUSED("fi_tsendv", fi_tsendv(ep, &iov, NULL, 1, to, 1, &ctx));
	REFUSED("fi_tsendmsg", fi_tsendmsg(ep, &mt, 0));
	REFUSED("fi_tinject", fi_tinject(ep, buf, 8, to, 1));
	REFUSED("fi_tsenddata", fi_tsenddata(ep, buf, 8, NULL, 5, to, 1, &ctx));
	REFUSED("fi_tinjectdata", fi_tinjectdata(ep, buf, 8, 5, to, 1));
	/* atomics */
	REFUSED("fi_atomic", fi_atomic(ep, buf, 1, NULL, to, 0, 1, FI_UINT64, FI_SUM, &ctx));
	REFUSED("fi_atomicv", fi_atomicv(ep, &ioc, NULL, 1, to, 0, 1, FI_UINT64, FI_SUM, &ctx));
	REFUSED("fi_atomicmsg", fi_atomicmsg(ep, &ma, 0));
	REFUSED("fi_inject_atomic", fi_inject_atomic(ep, buf, 1, to, 0, 1, FI_UINT64, FI_SUM));
	REFUSED("fi_fetch_atomic", fi_fetch_atomic(ep, buf, 1, NULL, res, NULL, to, 0, 1,
						   FI_UINT64, FI_SUM, &ctx));
	REFUSED("fi_fetch_atomicv", fi_fetch_atomicv(ep, &ioc, NULL, 1, &rioc, NULL, 1, to, 0, 1,
						     FI_UINT64, FI_SUM, &ctx));
	REFUSED("fi_fetch_atomicmsg", fi_fetch_atomicmsg(ep, &ma, &rioc, NULL, 1, 0));
	REFUSED("fi_compare_atomic", fi_compare_atomic(ep, buf, 1, NULL, cmp, NULL, res, NULL, to,
						       0, 1, FI_UINT64, FI_CSWAP, &ctx));
	REFUSED("fi_compare_atomicv", fi_compare_atomicv(ep, &ioc, NULL, 1, &cioc, NULL, 1, &rioc,
							 NULL, 1, to, 0, 1, FI_UINT64, FI_CSWAP,
							 &ctx));
	REFUSED("fi_compare_atomicmsg", fi_compare_atomicmsg(ep, &ma, &cioc, NULL, 1, &rioc, NULL,
							     1, 0));
	REFUSED("fi_atomicvalid", fi_atomicvalid(ep, FI_UINT64, FI_SUM, &cnt));
	REFUSED("fi_fetch_atomicvalid", fi_fetch_atomicvalid(ep, FI_UINT64, FI_SUM, &cnt));
	REFUSED("fi_compare_atomicvalid", fi_compare_atomicvalid(ep, FI_UINT64, FI_CSWAP, &cnt));
	REFUSED("fi_query_atomic", fi_query_atomic(dom, FI_UINT64, FI_SUM, &aattr, 0));
	/* collectives */
	REFUSED("fi_barrier", fi_barrier(ep, to, &ctx));
	REFUSED("fi_barrier2", fi_barrier2(ep, to, FI_PEER, &ctx));
	REFUSED("fi_broadcast", fi_broadcast(ep, buf, 1, NULL, to, to, FI_UINT64, 0, &ctx));
	REFUSED("fi_alltoall", fi_alltoall(ep, buf, 1, NULL, res, NULL, to, FI_UINT64, 0, &ctx));
	REFUSED("fi_allreduce", fi_allreduce(ep, buf, 1, NULL, res, NULL, to, FI_UINT64, FI_SUM,
					     0, &ctx));
	REFUSED("fi_allgather", fi_allgather(ep, buf, 1, NULL, res, NULL, to, FI_UINT64, 0, &ctx));
	REFUSED("fi_reduce_scatter", fi_reduce_scatter(ep, buf, 1, NULL, res, NULL, to, FI_UINT64,
						       FI_SUM, 0, &ctx));
	REFUSED("fi_reduce", fi_reduce(ep, buf, 1, NULL, res, NULL, to, to, FI_UINT64, FI_SUM, 0,
				       &ctx));
	REFUSED("fi_scatter", fi_scatter(ep, buf, 1, NULL, res, NULL, to, to, FI_UINT64, 0, &ctx));
	REFUSED("fi_gather", fi_gather(ep, buf, 1, NULL, res, NULL, to, to, FI_UINT64, 0, &ctx));
	REFUSED("fi_query_collective", fi_query_collective(dom, FI_ALLREDUCE, &cattr, 0));
	REFUSED("fi_av_set", fi_av_set(av, &sattr, &set, &ctx));
	/* endpoints: connections, contexts, groups */
	REFUSED("fi_getpeer", fi_getpeer(ep, str, &len));
	REFUSED("fi_connect", fi_connect(ep, str, NULL, 0));
	REFUSED("fi_accept", fi_accept(ep, NULL, 0));
	REFUSED("fi_shutdown", fi_shutdown(ep, 0));
	REFUSED("fi_join", fi_join(ep, str, 0, &mc, &ctx));
	/*
	 * No passive endpoint can be opened (fi_passive_ep, below), so listen
	 * and reject are reached through the endpoint's own connection table,
	 * which struct fid_pep's first members share with struct fid_ep.
	 */
	REFUSED("fi_listen", fi_listen(pep));
	REFUSED("fi_reject", fi_reject(pep, &ep->fid, NULL, 0));
	REFUSED("fi_tx_context", fi_tx_context(ep, 0, NULL, &other, &ctx));
	REFUSED("fi_rx_context", fi_rx_context(ep, 0, NULL, &other, &ctx));
	REFUSED("fi_senddata", fi_senddata(ep, buf, 8, NULL, 5, to, &ctx));
	REFUSED("fi_injectdata", fi_injectdata(ep, buf, 8, 5, to));
	REFUSED("fi_open_ops", fi_open_ops(&ep->fid, "netvm", 0, &ops, &ctx));
	REFUSED("fi_set_ops", fi_set_ops(&ep->fid, "netvm", 0, &ops, &ctx));
	REFUSED("fi_control FI_GETWAIT", fi_control(&a->cq->fid, FI_GETWAIT, &ops));
	/* domain: scalable and shared contexts, counters, poll sets */
	REFUSED("fi_scalable_ep", fi_scalable_ep(dom, info, &other, &ctx));
	REFUSED("fi_cntr_open", fi_cntr_open(dom, &cntra, &cntr, &ctx));
	REFUSED("fi_poll_open", fi_poll_open(dom, &polla, &poll));
	REFUSED("fi_stx_context", fi_stx_context(dom, NULL, &stx, &ctx));
	REFUSED("fi_srx_context", fi_srx_context(dom, NULL, &other, &ctx));
	REFUSED("fi_endpoint2 FI_PEER", fi_endpoint2(dom, info, &other, FI_PEER, &ctx));
	/* fabric: passive endpoints, wait sets */
	REFUSED("fi_passive_ep", fi_passive_ep(fab, info, &pep, &ctx));
	REFUSED("fi_wait_open", fi_wait_open(fab, &waita, &wait));
	REFUSED("fi_trywait", fi_trywait(fab, fids, 1));
	REFUSED("fi_domain2 FI_PEER", fi_domain2(fab, info, &d2, FI_PEER, &ctx));
	/* tostr is offered: what libfabric's fi_tostr prints for a fid */
	snprintf(str, sizeof(str), "netvm endpoint: %p\n", (void *)&ep->fid);
	check(strstr(fi_tostr(&ep->fid, FI_TYPE_FID), str) != NULL,
	      "fi_tostr FI_TYPE_FID: the provider's own line (%s)", fi_tostr(&ep->fid, FI_TYPE_FID));
	check(fi_endpoint2(dom, info, &other, 0, &ctx) == 0 && fi_close(&other->fid) == 0,
	      "fi_endpoint2 without flags: fi_endpoint's endpoint");
}

/*
 * Memory regions (mr_mode 0: messages need none): fi_mr_reg records the
 * key asked for and pins nothing; no descriptor; one iovec at most; the
 * domain stays busy until it is closed.  The event queue: opened, never
 * an event (no connections on datagrams), bound to an endpoint.
 */
static void mr_and_eq(void)
{
	struct fi_eq_attr ea = { .size = 8, .wait_obj = FI_WAIT_NONE };
	struct fi_eq_err_entry eee;
	uint8_t buf[64] = { 0 };
	struct iovec two[2] = { { buf, 32 }, { buf + 32, 32 } };
	struct fid_mr *mr, *mr2;
	struct fid_eq *eq;
	uint32_t event;
	int ctx, err;

	err = fi_mr_reg(dom, buf, sizeof(buf), FI_SEND | FI_RECV, 0, 42, 0, &mr, &ctx);
	check(err == 0 && fi_mr_key(mr) == 42 && fi_mr_desc(mr) == NULL && mr->fid.context == &ctx,
	      "fi_mr_reg: key 42 as asked, no descriptor (%d)", err);
	check(fi_mr_regv(dom, two, 2, FI_SEND, 0, 43, 0, &mr2, NULL) == -FI_EINVAL,
	      "fi_mr_regv of 2 iovecs: -FI_EINVAL");
	check(fi_mr_reg(dom, buf, 8, FI_SEND, 0, 44, FI_RMA_EVENT, &mr2, NULL) == -FI_EINVAL,
	      "fi_mr_reg with flags: -FI_EINVAL");
	check(fi_mr_bind(mr, &dom->fid, 0) == -FI_ENOSYS && fi_mr_enable(mr) == -FI_ENOSYS,
	      "fi_mr_bind, fi_mr_enable: -FI_ENOSYS");
	check(fi_close(&dom->fid) == -FI_EBUSY, "fi_close of a domain with a region: -FI_EBUSY");
	check(fi_close(&mr->fid) == 0, "fi_close of the region");

	ea.wait_obj = FI_WAIT_FD;
	check(fi_eq_open(fab, &ea, &eq, NULL) == -FI_ENOSYS, "fi_eq_open FI_WAIT_FD: -FI_ENOSYS");
	ea.wait_obj = FI_WAIT_NONE;
	err = fi_eq_open(fab, &ea, &eq, &ctx);
	check(err == 0 && eq->fid.context == &ctx, "fi_eq_open FI_WAIT_NONE (%d)", err);
	if (err)
		return;
	check(fi_eq_read(eq, &event, buf, sizeof(buf), 0) == -FI_EAGAIN &&
	      fi_eq_readerr(eq, &eee, 0) == -FI_EAGAIN &&
	      fi_eq_sread(eq, &event, buf, sizeof(buf), 100, 0) == -FI_EAGAIN,
	      "event queue: read, readerr, sread: -FI_EAGAIN (no event)");
	check(fi_eq_write(eq, FI_NOTIFY, buf, 8, 0) == -FI_ENOSYS, "fi_eq_write: -FI_ENOSYS");
	check(fi_eq_strerror(eq, FI_EIO, NULL, NULL, 0) != NULL, "fi_eq_strerror: a string");
	check(fi_close(&eq->fid) == 0, "fi_close of the event queue");
}

static int local(void)
{
	struct fi_av_attr aa = { .type = FI_AV_TABLE };
	struct fid_av *av, *map;
	struct side a, b, c;
	fi_addr_t fa[3], fm, src;
	uint8_t bad[8] = { 1, 2, 3, 4, 5, 6, 7, 8 }, out[4096], in[4200];
	size_t lens[] = { 1, 96, 97, 4096 };
	struct fi_cq_msg_entry e;
	struct fi_cq_err_entry ee;
	ssize_t r;
	int ctx;

	if (fi_av_open(dom, &aa, &av, NULL))
		die("fi_av_open table", -1);
	open_side(&a, av);
	open_side(&b, av);
	r = fi_av_insert(av, a.addr, 1, &fa[0], 0, NULL);
	r += fi_av_insert(av, b.addr, 1, &fa[1], 0, NULL);
	check(r == 2 && fa[0] == 0 && fa[1] == 1, "AV table: indices 0 and 1");
	r = fi_av_insert(av, bad, 1, &src, 0, NULL);
	check(r == 0 && src == FI_ADDR_NOTAVAIL, "AV: a forged address is refused");
	aa.type = FI_AV_MAP;
	if (fi_av_open(dom, &aa, &map, NULL))
		die("fi_av_open map", -1);
	r = fi_av_insert(map, b.addr, 1, &fm, 0, NULL);
	check(r == 1 && fm != FI_ADDR_NOTAVAIL && fm > 1, "AV map: an encoded fi_addr_t");
	fi_close(&map->fid);
	check(fi_send(a.ep, out, 10, NULL, 7, NULL) == -FI_EINVAL,
	      "send to an fi_addr_t not in the AV: -FI_EINVAL");
	check(fi_send(a.ep, out, 4097, NULL, fa[1], NULL) == -FI_EMSGSIZE,
	      "send of 4097 bytes: -FI_EMSGSIZE");
	r = fi_cq_sread(b.cq, &e, 1, NULL, 200);
	check(r == -FI_EAGAIN, "sread with nothing to come: -FI_EAGAIN after its timeout (%zd)", r);
	for (unsigned int i = 0; i < 4; i++) {
		tap_fill(out, lens[i], i);
		memset(in, 0, sizeof(in));
		fi_recv(b.ep, in, sizeof(in), NULL, FI_ADDR_UNSPEC, &ctx);
		r = fi_send(a.ep, out, lens[i], NULL, fa[1], &ctx + 1);
		check(r == 0 && next(a.cq, &e, &src, &ee) == 1 && e.op_context == &ctx + 1 &&
		      (e.flags & FI_SEND), "%zu B: send completes with its context", lens[i]);
		r = next(b.cq, &e, &src, &ee);
		check(r == 1 && e.op_context == &ctx && e.len == lens[i] && (e.flags & FI_RECV) &&
		      src == fa[0] && !memcmp(in, out, lens[i]) && in[lens[i]] == 0,
		      "%zu B: received byte for byte, readfrom names A (%zd, src %llu)", lens[i], r,
		      (unsigned long long)src);
	}
	tap_fill(out, 300, 9);
	memset(in, 0, sizeof(in));
	fi_recv(b.ep, in, 100, NULL, FI_ADDR_UNSPEC, &ctx);
	fi_inject(a.ep, out, 300, fa[1]);
	r = next(b.cq, &e, &src, &ee);
	check(r == -FI_ETRUNC && ee.olen == 200 && ee.len == 100 && !memcmp(in, out, 100) &&
	      in[100] == 0, "300 B into 100: FI_ETRUNC, olen 200, the first 100 kept (%zd)", r);
	fi_recv(b.ep, in, 100, NULL, FI_ADDR_UNSPEC, &ctx);
	check(fi_cancel(&b.ep->fid, &ctx) == 0 && next(b.cq, &e, &src, &ee) == -FI_ECANCELED &&
	      ee.op_context == &ctx, "fi_cancel of a posted receive: FI_ECANCELED completion");
	iovecs(&a, &b, fa[1], fa[0]);
	open_side_flags(&c, av, FI_SELECTIVE_COMPLETION);
	r = fi_av_insert(av, c.addr, 1, &fa[2], 0, NULL);
	check(r == 1 && fa[2] == 2, "AV table: index 2");
	selective(&a, &c, fa[0], fa[2]);
	refused(&a, av, fa[1]);
	fi_close(&a.ep->fid);
	fi_close(&b.ep->fid);
	fi_close(&c.ep->fid);
	fi_close(&a.cq->fid);
	fi_close(&b.cq->fid);
	fi_close(&c.cq->fid);
	if (fi_close(&av->fid))
		return 1;
	mr_and_eq();
	return fi_close(&dom->fid);
}

static int serve(void)
{
	struct fi_av_attr aa = { .type = FI_AV_MAP };
	uint8_t in[4096], out[4096];
	struct fi_cq_msg_entry e;
	struct fi_cq_err_entry ee;
	fi_addr_t src, peer = FI_ADDR_NOTAVAIL;
	struct fid_av *av;
	struct side s;
	int ctx;

	if (fi_av_open(dom, &aa, &av, NULL))
		die("fi_av_open", -1);
	open_side(&s, av);
	write_file("/tmp/fi.addr", s.name);
	for (unsigned int i = 0; i < 3; i++) {
		ssize_t r;

		fi_recv(s.ep, in, sizeof(in), NULL, FI_ADDR_UNSPEC, &ctx);
		r = next(s.cq, &e, &src, &ee);
		if (r != 1)
			die("server: receive", (int)r);
		if (i == 0) {
			char name[64] = { 0 };

			check(src == FI_ADDR_NOTAVAIL, "server: a sender not in the AV is FI_ADDR_NOTAVAIL");
			memcpy(name, in, e.len < 63 ? e.len : 63);
			check(fi_av_insertsvc(av, name, NULL, &peer, 0, NULL) == 1,
			      "server: the client's address %s inserted", name);
		} else {
			tap_fill(out, e.len, i);
			check(src == peer && src != FI_ADDR_NOTAVAIL && !memcmp(in, out, e.len),
			      "server: %zu B from the inserted client (readfrom), checked", e.len);
		}
		tap_fill(out, 1 + i * 2047, 100 + i);
		fi_inject(s.ep, out, 1 + i * 2047, src == FI_ADDR_NOTAVAIL ? peer : src);
	}
	return 0;
}

static int client(const char *server)
{
	struct fi_av_attr aa = { .type = FI_AV_TABLE };
	uint8_t in[4096], out[4096];
	struct fi_cq_msg_entry e;
	struct fi_cq_err_entry ee;
	fi_addr_t srv, src;
	struct fid_av *av;
	struct side s;
	int ctx;

	if (fi_av_open(dom, &aa, &av, NULL))
		die("fi_av_open", -1);
	open_side(&s, av);
	check(fi_av_insertsvc(av, server, NULL, &srv, 0, NULL) == 1, "client: %s inserted", server);
	for (unsigned int i = 0; i < 3; i++) {
		size_t n = i ? (i == 1 ? 96 : 4096) : strlen(s.name);
		ssize_t r;

		if (i)
			tap_fill(out, n, i);
		else
			memcpy(out, s.name, n);
		fi_recv(s.ep, in, sizeof(in), NULL, FI_ADDR_UNSPEC, &ctx);
		if (fi_send(s.ep, out, n, NULL, srv, NULL) || next(s.cq, &e, &src, &ee) != 1)
			die("client: send", -1);
		r = next(s.cq, &e, &src, &ee);
		tap_fill(out, 1 + i * 2047, 100 + i);
		check(r == 1 && e.len == 1 + i * 2047 && src == srv && !memcmp(in, out, e.len),
		      "client: answer %u, %zu B from the server, checked", i, e.len);
	}
	return 0;
}

int main(int argc, char **argv)
{
	int err;

	if (argc < 2) {
		fprintf(stderr, "usage: fi-netvm-test local | server | client ADDR\n");
		return 2;
	}
	open_fabric();
	if (!strcmp(argv[1], "local"))
		err = local();
	else if (!strcmp(argv[1], "server"))
		err = serve();
	else if (!strcmp(argv[1], "client") && argc == 3)
		err = client(argv[2]);
	else
		return 2;
	return err || failures ? 1 : 0;
}
