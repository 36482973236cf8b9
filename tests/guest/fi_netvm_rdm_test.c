// SPDX-License-Identifier: MIT
/*
 * The netvm provider's reliable endpoints (FI_EP_RDM) against libfabric's
 * public API (guest group fi, tests/guest/test_fi.py; docs/libfabric.md).
 * TAP-style "ok - " lines; exit status 1 if any failed.
 *
 *   fi-netvm-rdm-test local
 *       three RDM endpoints of one process (the node's loop-back): the
 *       fi_info entry exactly (mem_tag_format, the default op_flags the
 *       hints ask for); FI_RMA refused natively; messages of 0, 1
 *       and 4056 bytes (the most one U-Net message carries) byte for
 *       byte, an inject of 4057 -FI_EMSGSIZE; rendezvous messages of
 *       4057 B, 100000 B and 1 MiB from pages the sender no longer maps
 *       into pages dropped (MADV_DONTNEED), expected and unexpected,
 *       tagged, from three pieces into two, cut (FI_ETRUNC); a send
 *       completes only once the receiver has it; tagged messages taken
 *       unexpected and matched by tag in the order sent, posted receives
 *       matched out of order, ignore bits, FI_DIRECTED_RECV, remote CQ
 *       data, FI_PEEK / FI_CLAIM (whatever address the claim names) /
 *       FI_DISCARD, FI_ETRUNC, fi_cancel, bad
 *       flags and addresses; a flood of 320 tagged messages to a receiver
 *       that posts nothing: the 65th send finds the window full
 *       (-FI_EAGAIN), what the receiver cannot take is lost
 *       unacknowledged, and after it posts, every one arrives byte for
 *       byte in order (the sender's resends); RMA and atomics (the
 *       loop-back) with wrong keys and read-only regions; counters
 *       (FI_SEND, FI_RECV, FI_READ, FI_WRITE) with exact counts after
 *       known messages (eager, inject, rendezvous, selective completion),
 *       RMA and atomics, errors (FI_ETRUNC, fi_cancel, wrong keys),
 *       fi_cntr_wait reaching, timing out and ending on an error, and
 *       what fi_cntr_open and fi_ep_bind refuse.
 *   fi-netvm-rdm-test server        (node 1; address to /tmp/fi-rdm.addr)
 *   fi-netvm-rdm-test client ADDR   (node 0)
 *       RMA and atomics into the server's dropped pages; the rendezvous
 *       messages of 4057 B, 100000 B, 1 MiB and 200000 B in three pieces
 *       from the client's unmapped pages to the server's dropped ones
 *       (4057 B and 100000 B read into place, 1 MiB written by NetVM
 *       writes, the 200000 B into a receive of two pieces read through
 *       the bounce area), each checked; 300000 B into a receive 100 B
 *       into a page (the partial pages read, the rest written), 8 KiB
 *       into pages the server maps read-only (not read into place but
 *       offered for writing, the writes refused: FI_EKEYREJECTED on both
 *       sides), then 8 KiB read into place, after which the pages of that send and
 *       of that receive each take a memory region (the provider's kept
 *       exports give way); the same flood over U-Net: the server learns the client from its
 *       first message, waits (FI_PEEK) for the 256th, posts the 320
 *       receives newest first and checks each; then answers with remote
 *       CQ data, which the client checks.  Before the flood, a second
 *       RDM endpoint of the client (the same node and NIC) and its first
 *       both exchange 24 tagged messages each way with the server's one
 *       endpoint, interleaved; every one is checked byte for byte, its
 *       sender and receiver too (two local endpoints with a common peer,
 *       as two MPI ranks of a node).
 */
#define _GNU_SOURCE	/* memfd_create */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include <sys/mman.h>

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#include "guest_tap.h"

#define MAX_MSG		4056	/* 4096 less the header and remote CQ data */
#define FLOOD		320	/* 256 unexpected + a window of 64 */
#define FLOOD_TAG	1000
#define DONE_TAG	77
#define HELLO_TAG	1
#define KEY_TAG		2
#define RMA_DONE_TAG	3
#define RMA_LEN		100000
#define LARGE_TAG	500
#define MAX_LARGE	(1ull << 30)	/* max_msg_size: one NetVM export */
#define HELLO2_TAG	4	/* the client's second endpoint's address */
#define PAIR_N		24	/* tagged messages each way, per client endpoint */
#define PAIR_TAG	2000	/* + 1000 k + i: client endpoint k's message i */
#define PAIR_BACK	4000	/* + 1000 k + i: the server's answer i to k */

struct side {
	struct fid_ep *ep;
	struct fid_cq *cq;
	char name[64];
	uint8_t addr[64];
};

static struct fi_info *info;
static struct fid_fabric *fab;
static struct fid_domain *dom;
static struct fid_av *av;

static void die(const char *what, int err)
{
	printf("not ok - %s: %d (%s)\n", what, err, fi_strerror(-err));
	exit(1);
}

static struct fi_info *rdm_hints(uint64_t caps, uint64_t mr_mode)
{
	struct fi_info *h = fi_allocinfo();

	h->ep_attr->type = FI_EP_RDM;
	h->caps = caps;
	h->domain_attr->mr_mode = (int)mr_mode;
	h->fabric_attr->prov_name = strdup("netvm");
	return h;
}

static void open_all(void)
{
	struct fi_info *h = rdm_hints(0, FI_MR_PROV_KEY);	/* RMA too */
	struct fi_av_attr aa = { .type = FI_AV_TABLE };
	int err;

	err = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, h, &info);
	fi_freeinfo(h);
	if (err)
		die("fi_getinfo FI_EP_RDM", err);
	/* the provider's own entry, not ofi_rxd's stacked on it */
	while (info && strcmp(info->fabric_attr->prov_name, "netvm"))
		info = info->next;
	if (!info)
		die("fi_getinfo FI_EP_RDM: no native entry", -FI_ENODATA);
	err = fi_fabric(info->fabric_attr, &fab, NULL);
	if (!err)
		err = fi_domain(fab, info, &dom, NULL);
	if (!err)
		err = fi_av_open(dom, &aa, &av, NULL);
	if (err)
		die("fabric, domain, AV", err);
}

/* An RDM endpoint of dom: its CQ bound with cq_flags, cntr (if any) for
 * cntr_flags, then enabled. */
static void open_side_with(struct side *s, uint64_t cq_flags,
			   struct fid_cntr *cntr, uint64_t cntr_flags)
{
	struct fi_cq_attr ca = { .format = FI_CQ_FORMAT_TAGGED,
				 .wait_obj = FI_WAIT_UNSPEC, .size = 1024 };
	size_t len = sizeof(s->addr), n = sizeof(s->name);
	int err;

	err = fi_cq_open(dom, &ca, &s->cq, NULL);
	if (!err)
		err = fi_endpoint(dom, info, &s->ep, NULL);
	if (!err)
		err = fi_ep_bind(s->ep, &s->cq->fid, cq_flags);
	if (!err)
		err = fi_ep_bind(s->ep, &av->fid, 0);
	if (!err && cntr)
		err = fi_ep_bind(s->ep, &cntr->fid, cntr_flags);
	if (!err)
		err = fi_enable(s->ep);
	if (!err)
		err = fi_getname(&s->ep->fid, s->addr, &len);
	if (err)
		die("RDM endpoint", err);
	fi_av_straddr(av, s->addr, s->name, &n);
}

static void open_side(struct side *s)
{
	open_side_with(s, FI_TRANSMIT | FI_RECV, NULL, 0);
}

/* The next completion of cq (sread, up to 20 s); error entries as -err. */
static ssize_t next(struct fid_cq *cq, struct fi_cq_tagged_entry *e,
		    fi_addr_t *src, struct fi_cq_err_entry *ee)
{
	ssize_t r = fi_cq_sreadfrom(cq, e, 1, src, NULL, 20000);

	if (r == -FI_EAVAIL && fi_cq_readerr(cq, ee, 0) == 1)
		return -ee->err;
	return r;
}

/* ---- one process ---- */

/* The provider's own RDM entry among what fi_getinfo lists for hints h
 * (freed here), as a copy to free with fi_freeinfo; NULL if none. */
static struct fi_info *native_info(struct fi_info *h)
{
	struct fi_info *got = NULL, *native = NULL;

	fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, h, &got);
	for (struct fi_info *i = got; i && !native; i = i->next)
		if (!strcmp(i->fabric_attr->prov_name, "netvm"))
			native = fi_dupinfo(i);
	fi_freeinfo(got);
	fi_freeinfo(h);
	return native;
}

/* Whether fi_getinfo with hints lists the provider's own RDM entry, and
 * that entry's capabilities and memory registration mode. */
static bool native_entry(struct fi_info *h, uint64_t *caps, int *mr_mode)
{
	struct fi_info *i = native_info(h);

	if (!i)
		return false;
	*caps = i->caps;
	*mr_mode = i->domain_attr->mr_mode;
	fi_freeinfo(i);
	return true;
}

/* The native entry's default tx and rx op_flags for hints asking for
 * ASKED in both (false if there is no native entry). */
static bool native_op_flags(uint64_t asked, uint64_t *tx, uint64_t *rx)
{
	struct fi_info *h = rdm_hints(FI_TAGGED, 0), *i;

	h->tx_attr->op_flags = asked;
	h->rx_attr->op_flags = asked;
	i = native_info(h);
	if (!i)
		return false;
	*tx = i->tx_attr->op_flags;
	*rx = i->rx_attr->op_flags;
	fi_freeinfo(i);
	return true;
}

static void check_info(void)
{
	uint64_t caps = FI_MSG | FI_TAGGED | FI_SEND | FI_RECV | FI_SOURCE |
			FI_DIRECTED_RECV | FI_LOCAL_COMM | FI_REMOTE_COMM;
	uint64_t rma = FI_RMA | FI_ATOMIC | FI_READ | FI_WRITE | FI_REMOTE_READ |
		       FI_REMOTE_WRITE, got = 0;
	int mode = -1;

	check(info->caps == (caps | rma) && info->ep_attr->type == FI_EP_RDM &&
	      info->ep_attr->max_msg_size == MAX_LARGE &&
	      info->tx_attr->inject_size == MAX_MSG &&
	      info->tx_attr->msg_order == FI_ORDER_SAS &&
	      info->rx_attr->msg_order == FI_ORDER_SAS &&
	      info->tx_attr->rma_iov_limit == 1 &&
	      info->domain_attr->cq_data_size == 8 &&
	      info->domain_attr->mr_mode == FI_MR_PROV_KEY &&
	      info->domain_attr->data_progress == FI_PROGRESS_MANUAL &&
	      !strcmp(info->fabric_attr->prov_name, "netvm"),
	      "fi_getinfo FI_EP_RDM, FI_MR_PROV_KEY: the native entry with RMA and atomics, "
	      "exactly (caps %s)", fi_tostr(&info->caps, FI_TYPE_CAPS));
	uint64_t tx = 1, rx = 1;

	/* Open MPI's mtl ofi counts its tag bits from the top one down */
	check(info->ep_attr->mem_tag_format == UINT64_MAX &&
	      info->tx_attr->op_flags == 0 && info->rx_attr->op_flags == 0,
	      "mem_tag_format: 64 bits, one field; no op_flags asked, none given");
	check(native_op_flags(FI_COMPLETION | FI_INJECT, &tx, &rx) &&
	      tx == FI_COMPLETION && rx == FI_COMPLETION,
	      "op_flags FI_COMPLETION | FI_INJECT asked: FI_COMPLETION the default (what "
	      "Open MPI's FI_SELECTIVE_COMPLETION needs), FI_INJECT not");
	check(native_entry(rdm_hints(0, 0), &got, &mode) && got == caps && mode == 0,
	      "an application that takes no provider keys: the native entry without RMA, "
	      "mr_mode 0");
	check(!native_entry(rdm_hints(FI_MSG | FI_RMA, 0), &got, &mode),
	      "... and FI_RMA asked for without FI_MR_PROV_KEY: not offered natively");
	check(native_entry(rdm_hints(FI_TAGGED | FI_ATOMIC, FI_MR_PROV_KEY | FI_MR_LOCAL),
			   &got, &mode) && mode == FI_MR_PROV_KEY,
	      "FI_ATOMIC with FI_MR_PROV_KEY | FI_MR_LOCAL: offered, needing only provider keys");
}

static void messages(struct side *a, struct side *c, fi_addr_t to_a,
		     fi_addr_t from_c)
{
	static uint8_t out[MAX_MSG + 1], in[MAX_MSG + 64];
	size_t lens[] = { 0, 1, MAX_MSG };
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry ee;
	fi_addr_t src;
	int ctx[2];
	ssize_t r;

	check(fi_inject(c->ep, out, MAX_MSG + 1, to_a) == -FI_EMSGSIZE,
	      "inject of %d bytes: -FI_EMSGSIZE (inject_size)", MAX_MSG + 1);
	check(fi_send(c->ep, out, MAX_LARGE + 1, NULL, to_a, NULL) == -FI_EMSGSIZE,
	      "send of 1 GiB + 1: -FI_EMSGSIZE (max_msg_size)");
	check(fi_send(c->ep, out, 1, NULL, 99, NULL) == -FI_EINVAL,
	      "send to an fi_addr_t not in the AV: -FI_EINVAL");
	for (unsigned int i = 0; i < 3; i++) {
		tap_fill(out, lens[i], i);
		memset(in, 0, sizeof(in));
		r = fi_send(c->ep, out, lens[i], NULL, to_a, &ctx[0]);
		check(r == 0 && fi_cq_read(c->cq, &e, 1) == -FI_EAGAIN,
		      "%zu B: no send completion before the receiver has it", lens[i]);
		fi_recv(a->ep, in, sizeof(in), NULL, FI_ADDR_UNSPEC, &ctx[1]);
		r = next(a->cq, &e, &src, &ee);
		check(r == 1 && e.op_context == &ctx[1] && e.len == lens[i] &&
		      e.flags == (FI_RECV | FI_MSG) && src == from_c &&
		      !memcmp(in, out, lens[i]) && in[lens[i]] == 0,
		      "%zu B: received byte for byte, FI_RECV|FI_MSG, readfrom names C", lens[i]);
		r = next(c->cq, &e, &src, &ee);
		check(r == 1 && e.op_context == &ctx[0] && e.flags == (FI_SEND | FI_MSG),
		      "%zu B: then the send completes, FI_SEND|FI_MSG", lens[i]);
	}
}

/* ---- rendezvous: messages larger than one U-Net message ---- */

static ssize_t comp(struct fid_cq *cq, void *ctx, uint64_t flags);

static const size_t large_len[] = { MAX_MSG + 1, 100000, 1 << 20 };

/*
 * len bytes of which the process maps no page: a memfd's, filled with the
 * pattern of seed, then dropped from the process (MADV_DONTNEED: the page
 * cache keeps them, NetVM must fault them back); or (!keep) anonymous
 * pages written and dropped (zeros when touched again).
 */
static uint8_t *unmapped(size_t len, bool keep, unsigned int seed)
{
	uint8_t *p;
	int fd = -1;

	if (keep) {
		fd = memfd_create("fi-rdv", 0);
		if (fd < 0 || ftruncate(fd, (off_t)len))
			die("memfd", -1);
	}
	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 keep ? MAP_SHARED : MAP_PRIVATE | MAP_ANONYMOUS, fd, 0);
	if (p == MAP_FAILED)
		die("mmap", -1);
	if (fd >= 0)
		close(fd);
	if (keep)
		tap_fill(p, len, seed);
	else
		memset(p, 0x55, len);
	madvise(p, len, MADV_DONTNEED);
	return p;
}

/* The message's receive completion on a: len bytes of seed into in, and
 * nothing past (in has one more, dropped: zero). */
static bool got_large(struct side *a, void *ctx, const uint8_t *in,
		      size_t len, unsigned int seed, uint64_t flags)
{
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry ee;
	fi_addr_t src;

	return next(a->cq, &e, &src, &ee) == 1 && e.op_context == ctx &&
	       e.len == len && e.flags == flags && tap_filled(in, len, seed) &&
	       in[len] == 0;
}

static void large_local(struct side *a, struct side *c, fi_addr_t to_a)
{
	int sctx, rctx;

	for (unsigned int i = 0; i < 3; i++) {
		size_t len = large_len[i];
		uint8_t *out = unmapped(len, true, 40 + i);
		uint8_t *in = unmapped(len + 1, false, 0);
		bool ok;

		/* the first expected, the second unexpected, the third tagged */
		if (i == 0)
			fi_recv(a->ep, in, len, NULL, FI_ADDR_UNSPEC, &rctx);
		if (i < 2)
			ok = !fi_send(c->ep, out, len, NULL, to_a, &sctx);
		else
			ok = !fi_tsend(c->ep, out, len, NULL, to_a, 9, &sctx);
		if (i == 1)
			fi_recv(a->ep, in, len, NULL, FI_ADDR_UNSPEC, &rctx);
		if (i == 2)
			fi_trecv(a->ep, in, len, NULL, FI_ADDR_UNSPEC, 9, 0, &rctx);
		ok = ok && got_large(a, &rctx, in, len, 40 + i,
				     FI_RECV | (i == 2 ? FI_TAGGED : FI_MSG));
		check(ok && comp(c->cq, &sctx, FI_SEND | (i == 2 ? FI_TAGGED : FI_MSG)) == 1,
		      "rendezvous %zu B %s: from pages the sender no longer maps into dropped "
		      "ones, byte for byte, nothing past; then the send completes", len,
		      i == 0 ? "expected" : i == 1 ? "unexpected" : "tagged");
		munmap(out, len);
		munmap(in, len + 1);
	}
}

/* Three pieces into two, and 100000 B into 60000 (FI_ETRUNC). */
static void large_pieces(struct side *a, struct side *c, fi_addr_t to_a)
{
	uint8_t *out = unmapped(120000, true, 50);
	uint8_t *in = unmapped(120001, false, 0);
	struct iovec ov[3] = {
		{ out, 30000 }, { out + 30000, 1 }, { out + 30001, 89999 },
	};
	struct iovec iv[2] = { { in, 70000 }, { in + 70000, 50000 } };
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry ee;
	fi_addr_t src;
	int sctx, rctx;
	ssize_t r;

	fi_recvv(a->ep, iv, NULL, 2, FI_ADDR_UNSPEC, &rctx);
	r = fi_sendv(c->ep, ov, NULL, 3, to_a, &sctx);
	check(r == 0 && got_large(a, &rctx, in, 120000, 50, FI_RECV | FI_MSG) &&
	      comp(c->cq, &sctx, FI_SEND | FI_MSG) == 1,
	      "rendezvous fi_sendv of 3 pieces (120000 B) into fi_recvv of 2: byte for byte");
	memset(in, 0x55, 120001);
	fi_trecv(a->ep, in, 60000, NULL, FI_ADDR_UNSPEC, 8, 0, &rctx);
	r = fi_tsend(c->ep, out, 100000, NULL, to_a, 8, &sctx);
	r = r ? r : next(a->cq, &e, &src, &ee);
	check(r == -FI_ETRUNC && ee.op_context == &rctx && ee.olen == 40000 &&
	      ee.tag == 8 && tap_filled(in, 60000, 50) && in[60000] == 0x55 &&
	      comp(c->cq, &sctx, FI_SEND | FI_TAGGED) == 1,
	      "rendezvous 100000 B into 60000: FI_ETRUNC, olen 40000, the first 60000 B "
	      "kept, nothing past; the send completes (%zd)", r);
	munmap(out, 120000);
	munmap(in, 120001);
}

static ssize_t tsend(struct side *s, fi_addr_t to, const char *text,
		     uint64_t tag)
{
	return fi_tinject(s->ep, text, strlen(text), to, tag);
}

/* a's next completion: a tagged receive of text with tag into ctx */
static bool got_tagged(struct side *a, void *ctx, const char *buf,
		       const char *text, uint64_t tag)
{
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry ee;
	fi_addr_t src;

	return next(a->cq, &e, &src, &ee) == 1 && e.op_context == ctx &&
	       e.tag == tag && e.len == strlen(text) &&
	       !memcmp(buf, text, e.len) && (e.flags & FI_TAGGED);
}

static void tagged(struct side *a, struct side *b, struct side *c,
		   fi_addr_t to_a, fi_addr_t from_b)
{
	char in[4][64];
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry ee;
	fi_addr_t src;
	int ctx[4];
	ssize_t r;

	/* unexpected: taken aside, matched by tag, a tag's in the order sent */
	tsend(c, to_a, "first seven", 7);
	tsend(c, to_a, "eight", 8);
	tsend(c, to_a, "second seven", 7);
	memset(in, 0, sizeof(in));
	fi_trecv(a->ep, in[0], 64, NULL, FI_ADDR_UNSPEC, 8, 0, &ctx[0]);
	fi_trecv(a->ep, in[1], 64, NULL, FI_ADDR_UNSPEC, 7, 0, &ctx[1]);
	fi_trecv(a->ep, in[2], 64, NULL, FI_ADDR_UNSPEC, 7, 0, &ctx[2]);
	check(got_tagged(a, &ctx[0], in[0], "eight", 8) &&
	      got_tagged(a, &ctx[1], in[1], "first seven", 7) &&
	      got_tagged(a, &ctx[2], in[2], "second seven", 7),
	      "unexpected tagged messages: matched by tag, a tag's in the order sent");
	/* posted: the receive whose tag matches, whatever the posting order */
	memset(in, 0, sizeof(in));
	fi_trecv(a->ep, in[0], 64, NULL, FI_ADDR_UNSPEC, 5, 0, &ctx[0]);
	fi_trecv(a->ep, in[1], 64, NULL, FI_ADDR_UNSPEC, 6, 0, &ctx[1]);
	fi_trecv(a->ep, in[2], 64, NULL, FI_ADDR_UNSPEC, 0x100, 0xff, &ctx[2]);
	tsend(c, to_a, "six", 6);
	tsend(c, to_a, "five", 5);
	tsend(c, to_a, "one-ab", 0x1ab);
	check(got_tagged(a, &ctx[1], in[1], "six", 6) &&
	      got_tagged(a, &ctx[0], in[0], "five", 5) &&
	      got_tagged(a, &ctx[2], in[2], "one-ab", 0x1ab),
	      "posted tagged receives: each message to the one its tag matches; ignore bits");
	/* FI_DIRECTED_RECV: a receive naming B does not take C's message */
	memset(in, 0, sizeof(in));
	fi_trecv(a->ep, in[0], 64, NULL, from_b, 9, 0, &ctx[0]);
	fi_trecv(a->ep, in[1], 64, NULL, FI_ADDR_UNSPEC, 9, 0, &ctx[1]);
	tsend(c, to_a, "from c", 9);
	tsend(b, to_a, "from b", 9);
	check(got_tagged(a, &ctx[1], in[1], "from c", 9) &&
	      got_tagged(a, &ctx[0], in[0], "from b", 9),
	      "FI_DIRECTED_RECV: the receive naming B waits for B's message");
	/* remote CQ data */
	fi_trecv(a->ep, in[0], 64, NULL, FI_ADDR_UNSPEC, 10, 0, &ctx[0]);
	r = fi_tsenddata(c->ep, "d", 1, NULL, 0x1122334455667788ull, to_a, 10, NULL);
	check(r == 0 && next(a->cq, &e, &src, &ee) == 1 && e.op_context == &ctx[0] &&
	      e.data == 0x1122334455667788ull && (e.flags & FI_REMOTE_CQ_DATA) && e.tag == 10,
	      "fi_tsenddata: the data and FI_REMOTE_CQ_DATA in the receive's completion");
	next(c->cq, &e, &src, &ee);	/* the send's */
	/* FI_ETRUNC, fi_cancel */
	{
		static char big[300];

		memset(in, 0, sizeof(in));
		memset(big, 'x', sizeof(big));
		fi_trecv(a->ep, in[0], 10, NULL, FI_ADDR_UNSPEC, 11, 0, &ctx[0]);
		fi_tinject(c->ep, big, sizeof(big), to_a, 11);
		r = next(a->cq, &e, &src, &ee);
		check(r == -FI_ETRUNC && ee.olen == 290 && ee.len == 10 && ee.tag == 11 &&
		      ee.op_context == &ctx[0] && in[0][9] == 'x' && in[0][10] == 0,
		      "300 B into 10: FI_ETRUNC, olen 290, the tag, the first 10 kept (%zd)", r);
	}
	fi_trecv(a->ep, in[0], 10, NULL, FI_ADDR_UNSPEC, 12, 0, &ctx[0]);
	check(fi_cancel(&a->ep->fid, &ctx[0]) == 0 && next(a->cq, &e, &src, &ee) == -FI_ECANCELED &&
	      ee.op_context == &ctx[0] && (ee.flags & FI_TAGGED),
	      "fi_cancel of a tagged receive: FI_ECANCELED");
	check(fi_cancel(&a->ep->fid, &ctx[0]) == -FI_ENOENT, "fi_cancel of nothing: -FI_ENOENT");
}

static ssize_t trecvmsg(struct side *a, void *buf, size_t len, uint64_t tag,
			void *ctx, uint64_t flags)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct fi_msg_tagged m = {
		.msg_iov = &iov, .iov_count = 1, .addr = FI_ADDR_UNSPEC,
		.tag = tag, .context = ctx,
	};

	return fi_trecvmsg(a->ep, &m, flags);
}

static void probes(struct side *a, struct side *c, fi_addr_t to_a)
{
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry ee;
	char in[64] = { 0 };
	fi_addr_t src;
	int ctx[2];
	ssize_t r;

	r = trecvmsg(a, NULL, 0, 99, &ctx[0], FI_PEEK);
	check(r == 0 && next(a->cq, &e, &src, &ee) == -FI_ENOMSG && ee.op_context == &ctx[0],
	      "FI_PEEK with nothing there: FI_ENOMSG");
	tsend(c, to_a, "peek at me", 99);
	r = trecvmsg(a, NULL, 0, 99, &ctx[0], FI_PEEK);
	check(r == 0 && next(a->cq, &e, &src, &ee) == 1 && e.op_context == &ctx[0] &&
	      e.len == 10 && e.tag == 99, "FI_PEEK: the message's length and tag, left there");
	r = trecvmsg(a, NULL, 0, 99, &ctx[1], FI_PEEK | FI_CLAIM);
	check(r == 0 && next(a->cq, &e, &src, &ee) == 1 && e.op_context == &ctx[1],
	      "FI_PEEK | FI_CLAIM: claimed");
	r = trecvmsg(a, NULL, 0, 99, &ctx[0], FI_PEEK);
	check(r == 0 && next(a->cq, &e, &src, &ee) == -FI_ENOMSG,
	      "a claimed message is not found by the next FI_PEEK");
	r = trecvmsg(a, in, sizeof(in), 99, &ctx[1], FI_CLAIM);
	check(r == 0 && got_tagged(a, &ctx[1], in, "peek at me", 99),
	      "FI_CLAIM with the claiming context: the message's bytes");
	tsend(c, to_a, "claim me", 97);
	r = trecvmsg(a, NULL, 0, 97, &ctx[1], FI_PEEK | FI_CLAIM);
	check(r == 0 && next(a->cq, &e, &src, &ee) == 1 && e.op_context == &ctx[1],
	      "FI_PEEK | FI_CLAIM again: claimed");
	{
		struct iovec iov = { .iov_base = in, .iov_len = sizeof(in) };
		struct fi_msg_tagged m = {
			.msg_iov = &iov, .iov_count = 1, .addr = 99, .tag = 97,
			.context = &ctx[1],
		};

		memset(in, 0, sizeof(in));
		r = fi_trecvmsg(a->ep, &m, FI_CLAIM);
	}
	check(r == 0 && got_tagged(a, &ctx[1], in, "claim me", 97),
	      "FI_CLAIM naming an address not in the AV (Open MPI passes 0): the "
	      "context names the message, its bytes");
	tsend(c, to_a, "drop me", 98);
	r = trecvmsg(a, NULL, 0, 98, &ctx[0], FI_PEEK | FI_DISCARD);
	check(r == 0 && next(a->cq, &e, &src, &ee) == 1 && e.len == 7,
	      "FI_PEEK | FI_DISCARD: found and dropped");
	r = trecvmsg(a, NULL, 0, 98, &ctx[0], FI_PEEK);
	check(r == 0 && next(a->cq, &e, &src, &ee) == -FI_ENOMSG, "... gone");
	check(trecvmsg(a, in, 1, 0, &ctx[0], FI_MULTI_RECV) == -FI_EBADFLAGS,
	      "FI_MULTI_RECV: -FI_EBADFLAGS");
	{
		struct iovec iov = { .iov_base = in, .iov_len = 1 };
		struct fi_msg m = { .msg_iov = &iov, .iov_count = 1,
				    .addr = FI_ADDR_UNSPEC };

		check(fi_recvmsg(a->ep, &m, FI_PEEK) == -FI_EBADFLAGS,
		      "FI_PEEK on an untagged receive: -FI_EBADFLAGS");
	}
}

/*
 * The flood: FLOOD tagged messages d -> a (d new, so its window is
 * empty), a posting nothing until all are sent.  The sender's window is
 * 64 (the 65th send the receiver has not acknowledged: -FI_EAGAIN); what
 * the receiver cannot take (its loop-back socket holds a few datagrams,
 * its unexpected list 256) is lost unacknowledged and sent again.
 */
static void flood_local(struct side *a, struct side *d, fi_addr_t to_a)
{
	static uint8_t out[MAX_MSG], in[FLOOD][MAX_MSG];
	struct fi_cq_tagged_entry e[16];
	struct fi_cq_err_entry ee;
	unsigned int first_full = 0, got = 0, sent_done = 0, bad = 0, posted = 0;
	ssize_t r;

	for (unsigned int i = 0; i < FLOOD; i++) {
		size_t len = 1 + (i * 37) % MAX_MSG;

		tap_fill(out, len, i);
		while ((r = fi_tsend(d->ep, out, len, NULL, to_a, FLOOD_TAG + i, NULL)) ==
		       -FI_EAGAIN) {
			if (!first_full)
				first_full = i + 1;
			fi_cq_sread(a->cq, e, 1, NULL, 10);	/* a progresses */
			while ((r = fi_cq_read(d->cq, e, 16)) > 0)
				sent_done += (unsigned int)r;
		}
		if (r)
			die("flood: send", (int)r);
	}
	check(first_full == 65, "a burst of 64 unacknowledged sends fills the window: "
	      "the 65th is -FI_EAGAIN (%u)", first_full);
	for (unsigned int spins = 0; (got < FLOOD || sent_done < FLOOD) && spins < 4000;
	     spins++) {
		while (posted < FLOOD) {
			memset(in[posted], 0, MAX_MSG);
			r = fi_trecv(a->ep, in[posted], MAX_MSG, NULL, FI_ADDR_UNSPEC,
				     FLOOD_TAG + posted, 0, in[posted]);
			if (r == -FI_EAGAIN)
				break;	/* 256 posted: take completions first */
			if (r)
				die("flood: trecv", (int)r);
			posted++;
		}
		r = fi_cq_sread(a->cq, e, 16, NULL, 5);
		if (r == -FI_EAVAIL && fi_cq_readerr(a->cq, &ee, 0) == 1)
			bad++;
		for (ssize_t k = 0; k < r; k++) {
			unsigned int i = (unsigned int)(e[k].tag - FLOOD_TAG);

			if (i != got || i >= FLOOD || e[k].op_context != in[i] ||
			    e[k].len != 1 + (i * 37) % MAX_MSG || !tap_filled(in[i], e[k].len, i))
				bad++;
			got++;
		}
		while ((r = fi_cq_read(d->cq, e, 16)) > 0)	/* d progresses: resends */
			sent_done += (unsigned int)r;
	}
	check(got == FLOOD && sent_done == FLOOD && !bad,
	      "flood of %d: what the receiver could not take was sent again; every one in "
	      "order, byte for byte, every send completed (%u received, %u sends completed, "
	      "%u wrong)", FLOOD, got, sent_done, bad);
}

/* ---- RMA and atomics on NetVM ---- */

#define REGION		(256 * 1024)

/* The next completion of cq: 1, or -err for an error completion. */
static ssize_t comp(struct fid_cq *cq, void *ctx, uint64_t flags)
{
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry ee;
	fi_addr_t src;
	ssize_t r = next(cq, &e, &src, &ee);

	if (r < 0)
		return ee.op_context == ctx ? r : -9999;
	return r == 1 && e.op_context == ctx && e.flags == flags ? 1 : -9998;
}

/* An endpoint of a second domain of the node (its own NetVM port), as a
 * peer: opened with its CQ (bound with cq_flags) and AV, then enabled
 * (once the caller bound what else it wants) with a in its AV. */
struct peer {
	struct fid_domain *dom;
	struct fid_av *av;
	struct fid_cq *cq;
	struct fid_ep *ep;
	fi_addr_t to_a;
};

static void peer_open(struct peer *p, uint64_t cq_flags)
{
	struct fi_av_attr aa = { .type = FI_AV_TABLE };
	struct fi_cq_attr ca = { .format = FI_CQ_FORMAT_TAGGED,
				 .wait_obj = FI_WAIT_UNSPEC, .size = 64 };
	int err;

	err = fi_domain(fab, info, &p->dom, NULL);
	if (!err)
		err = fi_av_open(p->dom, &aa, &p->av, NULL);
	if (!err)
		err = fi_cq_open(p->dom, &ca, &p->cq, NULL);
	if (!err)
		err = fi_endpoint(p->dom, info, &p->ep, NULL);
	if (!err)
		err = fi_ep_bind(p->ep, &p->cq->fid, cq_flags);
	if (!err)
		err = fi_ep_bind(p->ep, &p->av->fid, 0);
	if (err)
		die("a second domain and endpoint", err);
}

static void peer_enable(struct peer *p, const struct side *a)
{
	int err = fi_enable(p->ep);

	if (!err && fi_av_insert(p->av, a->addr, 1, &p->to_a, 0, NULL) != 1)
		err = -FI_EINVAL;
	if (err)
		die("a second domain's endpoint", err);
}

static bool peer_close(struct peer *p)
{
	fi_close(&p->ep->fid);
	fi_close(&p->cq->fid);
	fi_close(&p->av->fid);
	return fi_close(&p->dom->fid) == 0;
}

/*
 * An endpoint of a second domain (its own NetVM port) reads and writes a
 * region of the first, as a peer would: the region is pageable memory
 * (mmap), its pages dropped (MADV_DONTNEED) before a remote write and a
 * remote read, which must fault them in (a pinned region would keep the
 * old pages: the process would not see the write).
 */
static void rma(struct side *a, fi_addr_t unused)
{
	static uint8_t src[150000], dst[150000];
	struct peer p;
	struct fid_mr *mr, *ro;
	struct fid_ep *e;
	struct fid_cq *cq;
	uint8_t *tgt, *rotgt;
	uint64_t key, rokey;
	fi_addr_t fa;
	int ctx, err;
	ssize_t r;

	(void)unused;
	tgt = mmap(NULL, REGION, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	rotgt = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (tgt == MAP_FAILED || rotgt == MAP_FAILED)
		die("mmap", -1);
	err = fi_mr_reg(dom, tgt, REGION, FI_REMOTE_READ | FI_REMOTE_WRITE, 0, 0, 0, &mr, NULL);
	if (!err)
		err = fi_mr_reg(dom, rotgt, 4096, FI_REMOTE_READ, 0, 0, 0, &ro, NULL);
	if (err)
		die("fi_mr_reg", err);
	key = fi_mr_key(mr);
	rokey = fi_mr_key(ro);
	check(key != rokey && key >> 48 && key >> 48 == rokey >> 48 && fi_mr_desc(mr) == NULL,
	      "fi_mr_reg FI_REMOTE_READ | FI_REMOTE_WRITE: a provider key naming the NetVM "
	      "port (%#llx)", (unsigned long long)key);
	check(fi_mr_reg(dom, tgt + 4096, 4096, FI_REMOTE_READ, 0, 0, 0, &ro, NULL) == -FI_EBUSY,
	      "fi_mr_reg of a range inside another region for remote access: -FI_EBUSY");
	peer_open(&p, FI_TRANSMIT | FI_RECV);
	peer_enable(&p, a);
	e = p.ep;
	cq = p.cq;
	fa = p.to_a;

	tap_fill(src, sizeof(src), 3);
	memset(tgt, 0x55, REGION);
	madvise(tgt, REGION, MADV_DONTNEED);	/* gone: zeros when touched */
	r = fi_write(e, src, 5000, NULL, fa, 100, key, &ctx);
	check(r == 0 && comp(cq, &ctx, FI_RMA | FI_WRITE) == 1 && !memcmp(tgt + 100, src, 5000) &&
	      tgt[99] == 0 && tgt[5100] == 0,
	      "fi_write of 5000 B at offset 100 into pages dropped (MADV_DONTNEED): there, byte "
	      "for byte, nothing around (no pinning)");
	madvise(tgt, REGION, MADV_DONTNEED);
	tap_fill(tgt + 1000, sizeof(src), 4);
	tap_fill(src, sizeof(src), 4);
	memset(dst, 0, sizeof(dst));
	r = fi_read(e, dst, sizeof(src), NULL, fa, 1000, key, &ctx);
	check(r == 0 && comp(cq, &ctx, FI_RMA | FI_READ) == 1 && !memcmp(dst, src, sizeof(src)),
	      "fi_read of %zu B (3 bounce buffers): byte for byte", sizeof(src));
	{
		struct iovec v[3] = { { src, 10 }, { src + 10, 70000 }, { src + 70010, 5 } };

		tap_fill(src, sizeof(src), 5);
		r = fi_writev(e, v, NULL, 3, fa, 0, key, &ctx);
		check(r == 0 && comp(cq, &ctx, FI_RMA | FI_WRITE) == 1 &&
		      !memcmp(tgt, src, 70015), "fi_writev of 3 pieces: byte for byte");
	}
	r = fi_write(e, src, 8, NULL, fa, 0, key ^ 1, &ctx);
	check(r == 0 && comp(cq, &ctx, 0) == -FI_EKEYREJECTED,
	      "fi_write with a wrong key: FI_EKEYREJECTED");
	r = fi_read(e, dst, 8, NULL, fa, 0, key + (1ull << 48), &ctx);
	check(r == 0 && comp(cq, &ctx, 0) == -FI_EKEYREJECTED,
	      "fi_read with a key naming another port: FI_EKEYREJECTED");
	check(fi_inject_write(e, src, 8, fa, 0, key ^ 2) == -FI_EKEYREJECTED,
	      "fi_inject_write with a wrong key: -FI_EKEYREJECTED");
	r = fi_write(e, src, 20, NULL, fa, REGION - 10, key, &ctx);
	check(r == 0 && comp(cq, &ctx, 0) == -FI_EINVAL, "fi_write past the region: FI_EINVAL");
	r = fi_write(e, src, 8, NULL, fa, 0, rokey, &ctx);
	check(r == 0 && comp(cq, &ctx, 0) == -FI_EACCES,
	      "fi_write into a region without FI_REMOTE_WRITE: FI_EACCES");
	rotgt[5] = 0x77;
	r = fi_read(e, dst, 8, NULL, fa, 0, rokey, &ctx);
	check(r == 0 && comp(cq, &ctx, FI_RMA | FI_READ) == 1 && dst[5] == 0x77,
	      "fi_read from it: allowed");
	check(fi_writedata(e, src, 8, NULL, 1, fa, 0, key, &ctx) == -FI_ENOSYS,
	      "fi_writedata: -FI_ENOSYS (no remote CQ data on NetVM writes)");
	{
		uint32_t *w = (uint32_t *)tgt, v = 5, res = 0, cmp, three[3] = { 1, 2, 3 };
		ssize_t n;
		int32_t neg = -3;
		size_t cnt = 0;
		struct fi_atomic_attr at;

		w[0] = 10;
		r = fi_atomic(e, &v, 1, NULL, fa, 0, key, FI_UINT32, FI_SUM, &ctx);
		n = r ? r : comp(cq, &ctx, FI_ATOMIC | FI_WRITE);
		check(n == 1 && w[0] == 15,
		      "fi_atomic FI_SUM 5 on 10: 15 (compare-and-swap loop) (%zd, %u)", n, w[0]);
		r = fi_fetch_atomic(e, &neg, 1, NULL, &res, NULL, fa, 0, key, FI_INT32, FI_MIN,
				    &ctx);
		check(r == 0 && comp(cq, &ctx, FI_ATOMIC | FI_READ) == 1 && res == 15 &&
		      (int32_t)w[0] == -3, "fi_fetch_atomic FI_MIN -3 (FI_INT32): old 15, now -3");
		cmp = (uint32_t)-3;
		v = 77;
		r = fi_compare_atomic(e, &v, 1, NULL, &cmp, NULL, &res, NULL, fa, 0, key, FI_INT32,
				      FI_CSWAP, &ctx);
		check(r == 0 && comp(cq, &ctx, FI_ATOMIC | FI_READ) == 1 &&
		      res == (uint32_t)-3 && w[0] == 77, "fi_compare_atomic FI_CSWAP: swapped");
		r = fi_compare_atomic(e, &v, 1, NULL, &cmp, NULL, &res, NULL, fa, 0, key, FI_INT32,
				      FI_CSWAP, &ctx);
		check(r == 0 && comp(cq, &ctx, FI_ATOMIC | FI_READ) == 1 && res == 77 && w[0] == 77,
		      "... again: the compare fails, the old value back, unchanged");
		v = 9;
		r = fi_fetch_atomic(e, &v, 1, NULL, &res, NULL, fa, 0, key, FI_UINT32,
				    FI_ATOMIC_WRITE, &ctx);
		check(r == 0 && comp(cq, &ctx, FI_ATOMIC | FI_READ) == 1 && res == 77 && w[0] == 9,
		      "FI_ATOMIC_WRITE (NetVM's swap): old 77, now 9");
		r = fi_fetch_atomic(e, NULL, 1, NULL, &res, NULL, fa, 0, key, FI_UINT32,
				    FI_ATOMIC_READ, &ctx);
		check(r == 0 && comp(cq, &ctx, FI_ATOMIC | FI_READ) == 1 && res == 9 && w[0] == 9,
		      "FI_ATOMIC_READ: 9, unchanged");
		w[1] = 100;
		w[2] = 200;
		w[3] = 300;
		r = fi_atomic(e, three, 3, NULL, fa, 4, key, FI_UINT32, FI_BXOR, &ctx);
		check(r == 0 && comp(cq, &ctx, FI_ATOMIC | FI_WRITE) == 1 && w[1] == (100 ^ 1) &&
		      w[2] == (200 ^ 2) && w[3] == (300 ^ 3), "fi_atomic FI_BXOR on 3 words");
		r = fi_atomic(e, &v, 1, NULL, fa, 2, key, FI_UINT32, FI_SUM, &ctx);
		check(r == 0 && comp(cq, &ctx, 0) == -FI_EINVAL, "a misaligned word: FI_EINVAL");
		check(fi_atomic(e, &v, 1, NULL, fa, 0, key, FI_UINT64, FI_SUM, &ctx) ==
		      -FI_EOPNOTSUPP && fi_atomicvalid(e, FI_UINT64, FI_SUM, &cnt) ==
		      -FI_EOPNOTSUPP && fi_query_atomic(dom, FI_DOUBLE, FI_SUM, &at, 0) ==
		      -FI_EOPNOTSUPP, "64-bit and floating-point atomics: -FI_EOPNOTSUPP");
		check(fi_atomicvalid(e, FI_INT32, FI_PROD, &cnt) == 0 && cnt == 64 &&
		      fi_compare_atomicvalid(e, FI_UINT32, FI_CSWAP_GT, &cnt) == 0 &&
		      fi_fetch_atomicvalid(e, FI_UINT32, FI_CSWAP, &cnt) == -FI_EOPNOTSUPP &&
		      fi_query_atomic(dom, FI_INT32, FI_MAX, &at, FI_FETCH_ATOMIC) == 0 &&
		      at.size == 4, "fi_atomicvalid and fi_query_atomic: 32-bit, 64 elements");
	}
	check(peer_close(&p), "the second domain closes");
	fi_close(&ro->fid);
	fi_close(&mr->fid);
	munmap(tgt, REGION);
	munmap(rotgt, 4096);
}

/* ---- counters ---- */

static struct fid_cntr *cntr_open(struct fid_domain *d)
{
	struct fi_cntr_attr ca = { .events = FI_CNTR_EVENTS_COMP,
				   .wait_obj = FI_WAIT_UNSPEC };
	struct fid_cntr *c;
	int err = fi_cntr_open(d, &ca, &c, NULL);

	if (err)
		die("fi_cntr_open", err);
	return c;
}

/* What fi_cntr_open and fi_ep_bind refuse, each with its code. */
static void counter_refusals(void)
{
	struct fi_cntr_attr ca = { .events = FI_CNTR_EVENTS_COMP,
				   .wait_obj = FI_WAIT_FD };
	struct fid_cntr *c, *other;
	struct fid_ep *ep;
	int err;

	check(info->domain_attr->cntr_cnt == 64,
	      "the RDM entry offers counters: cntr_cnt 64 (%zu)", info->domain_attr->cntr_cnt);
	check(fi_cntr_open(dom, &ca, &c, NULL) == -FI_ENOSYS,
	      "fi_cntr_open FI_WAIT_FD: -FI_ENOSYS (sleeping is in fi_cntr_wait only)");
	ca.wait_obj = FI_WAIT_UNSPEC;
	ca.flags = 1;
	check(fi_cntr_open(dom, &ca, &c, NULL) == -FI_EBADFLAGS,
	      "fi_cntr_open with flags (reserved): -FI_EBADFLAGS");
	c = cntr_open(dom);
	other = cntr_open(dom);
	err = fi_endpoint(dom, info, &ep, NULL);
	if (err)
		die("fi_endpoint", err);
	check(fi_ep_bind(ep, &c->fid, FI_REMOTE_WRITE) == -FI_EBADFLAGS &&
	      fi_ep_bind(ep, &c->fid, FI_REMOTE_READ) == -FI_EBADFLAGS &&
	      fi_ep_bind(ep, &c->fid, FI_SEND | FI_REMOTE_WRITE) == -FI_EBADFLAGS &&
	      fi_ep_bind(ep, &c->fid, 0) == -FI_EBADFLAGS,
	      "a counter bound for FI_REMOTE_WRITE, FI_REMOTE_READ or nothing: -FI_EBADFLAGS "
	      "(NetVM tells a target nothing)");
	check(fi_ep_bind(ep, &c->fid, FI_SEND | FI_READ) == 0 &&
	      fi_ep_bind(ep, &c->fid, FI_SEND) == -FI_EINVAL &&
	      fi_ep_bind(ep, &other->fid, FI_RECV | FI_READ) == -FI_EINVAL &&
	      fi_ep_bind(ep, &other->fid, FI_RECV | FI_WRITE) == 0,
	      "a second counter for a kind already counted: -FI_EINVAL; one per kind: bound");
	check(fi_close(&c->fid) == -FI_EBUSY && fi_close(&other->fid) == -FI_EBUSY,
	      "fi_close of a bound counter: -FI_EBUSY");
	fi_close(&ep->fid);
	check(fi_close(&c->fid) == 0 && fi_close(&other->fid) == 0,
	      "... closed once its endpoint is");
}

/*
 * A sender's counter for FI_SEND, a receiver's for FI_RECV, their CQs
 * bound with FI_SELECTIVE_COMPLETION: every message counts once, with a
 * completion or without (injects, no FI_COMPLETION), rendezvous ones
 * too; a peek does not, an error (FI_ETRUNC, fi_cancel) counts as one.
 */
static void counters_msg(void)
{
	const uint64_t sel = FI_TRANSMIT | FI_RECV | FI_SELECTIVE_COMPLETION;
	struct fid_cntr *sc = cntr_open(dom), *rc = cntr_open(dom);
	static uint8_t big[100000], bigin[100000 + 1];
	char in[3][16] = { "" }, small[4], t[16] = "";
	struct iovec v;
	struct fi_msg m = { .msg_iov = &v, .iov_count = 1 };
	struct fi_msg_tagged tm = { .msg_iov = &v, .iov_count = 1, .tag = 7 };
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry ee;
	struct side s, r;
	fi_addr_t to_r, src;
	int ctx[4], err;

	open_side_with(&s, sel, sc, FI_SEND);
	open_side_with(&r, sel, rc, FI_RECV);
	check(fi_ep_bind(s.ep, &rc->fid, FI_RECV) == -FI_EOPBADSTATE,
	      "a counter bound to an enabled endpoint: -FI_EOPBADSTATE");
	if (fi_av_insert(av, r.addr, 1, &to_r, 0, NULL) != 1)
		die("fi_av_insert", -1);
	tap_fill(big, sizeof(big), 41);
	memset(bigin, 0xa5, sizeof(bigin));
	/* four receives, the second with a completion */
	fi_recv(r.ep, in[0], sizeof(in[0]), NULL, FI_ADDR_UNSPEC, &ctx[0]);
	v = (struct iovec){ in[1], sizeof(in[1]) };
	m.addr = FI_ADDR_UNSPEC;	/* from anyone (FI_DIRECTED_RECV) */
	m.context = &ctx[1];
	fi_recvmsg(r.ep, &m, FI_COMPLETION);
	fi_recv(r.ep, in[2], sizeof(in[2]), NULL, FI_ADDR_UNSPEC, &ctx[2]);
	fi_recv(r.ep, bigin, sizeof(big), NULL, FI_ADDR_UNSPEC, &ctx[3]);
	/* four sends, the second with a completion; a tagged inject nobody
	 * receives yet */
	err = (int)fi_send(s.ep, "one", 4, NULL, to_r, &ctx[0]);
	v = (struct iovec){ (void *)"two", 4 };
	m.addr = to_r;
	m.context = &ctx[1];
	err = err ? err : (int)fi_sendmsg(s.ep, &m, FI_COMPLETION);
	err = err ? err : (int)fi_inject(s.ep, "three", 6, to_r);
	err = err ? err : (int)fi_send(s.ep, big, sizeof(big), NULL, to_r, &ctx[3]);
	err = err ? err : (int)fi_tinject(s.ep, "four", 5, to_r, 7);
	check(err == 0, "4 messages and a tagged inject sent (%d)", err);
	err = fi_cntr_wait(rc, 4, 20000);
	check(err == 0 && fi_cntr_read(rc) == 4 && fi_cntr_readerr(rc) == 0 &&
	      !strcmp(in[0], "one") && !strcmp(in[1], "two") && !strcmp(in[2], "three") &&
	      tap_filled(bigin, sizeof(big), 41) && bigin[sizeof(big)] == 0xa5,
	      "receive counter: fi_cntr_wait reaches 4 (an inject's and a rendezvous "
	      "message's among them), each byte for byte (%d, %llu)", err,
	      (unsigned long long)fi_cntr_read(rc));
	err = fi_cntr_wait(sc, 5, 20000);
	check(err == 0 && fi_cntr_read(sc) == 5 && fi_cntr_readerr(sc) == 0,
	      "send counter: 5, the injects and the rendezvous send included (%d, %llu)", err,
	      (unsigned long long)fi_cntr_read(sc));
	check(fi_cq_read(s.cq, &e, 1) == 1 && e.op_context == &ctx[1] &&
	      fi_cq_read(s.cq, &e, 1) == -FI_EAGAIN &&
	      fi_cq_read(r.cq, &e, 1) == 1 && e.op_context == &ctx[1] &&
	      fi_cq_read(r.cq, &e, 1) == -FI_EAGAIN,
	      "FI_SELECTIVE_COMPLETION: one completion each side (the FI_COMPLETION ones), "
	      "the counters count all");
	check(fi_cntr_wait(rc, 5, 50) == -FI_ETIMEDOUT && fi_cntr_read(rc) == 4 &&
	      fi_cntr_readerr(rc) == 0,
	      "fi_cntr_wait for a 5th receive (the tagged message waits unexpected): "
	      "-FI_ETIMEDOUT, the counts unchanged");
	v = (struct iovec){ t, sizeof(t) };
	tm.context = &ctx[0];
	tm.addr = FI_ADDR_UNSPEC;
	check(fi_trecvmsg(r.ep, &tm, FI_PEEK | FI_COMPLETION) == 0 &&
	      next(r.cq, &e, &src, &ee) == 1 && e.len == 5 && fi_cntr_read(rc) == 4,
	      "FI_PEEK finds it: a look, not counted");
	err = fi_cntr_wait(rc, 5, 0);
	check(fi_trecv(r.ep, t, sizeof(t), NULL, FI_ADDR_UNSPEC, 7, 0, &ctx[0]) == 0 &&
	      err == -FI_ETIMEDOUT && fi_cntr_wait(rc, 5, 20000) == 0 &&
	      fi_cntr_read(rc) == 5 && !strcmp(t, "four"),
	      "fi_trecv takes it: 5 (fi_cntr_wait with timeout 0 before: -FI_ETIMEDOUT)");
	/* errors: a message cut (FI_ETRUNC), a receive cancelled */
	fi_recv(r.ep, small, sizeof(small), NULL, FI_ADDR_UNSPEC, &ctx[0]);
	fi_send(s.ep, "too long", 9, NULL, to_r, &ctx[1]);
	err = fi_cntr_wait(rc, 6, 20000);
	check(err == -FI_EAVAIL && fi_cntr_read(rc) == 5 && fi_cntr_readerr(rc) == 1 &&
	      next(r.cq, &e, &src, &ee) == -FI_ETRUNC,
	      "a message cut (FI_ETRUNC): fi_cntr_wait -FI_EAVAIL, readerr 1, read 5 (%d)", err);
	check(fi_cntr_wait(sc, 6, 20000) == 0 && fi_cntr_readerr(sc) == 0,
	      "... its send a success: send counter 6");
	fi_recv(r.ep, small, sizeof(small), NULL, FI_ADDR_UNSPEC, &ctx[2]);
	check(fi_cancel(&r.ep->fid, &ctx[2]) == 0 && fi_cntr_readerr(rc) == 2 &&
	      fi_cntr_read(rc) == 5 && next(r.cq, &e, &src, &ee) == -FI_ECANCELED,
	      "a receive cancelled (FI_ECANCELED): readerr 2");
	check(fi_cntr_add(rc, 2) == 0 && fi_cntr_read(rc) == 7 && fi_cntr_set(rc, 1) == 0 &&
	      fi_cntr_read(rc) == 1 && fi_cntr_adderr(rc, 3) == 0 && fi_cntr_readerr(rc) == 5 &&
	      fi_cntr_seterr(rc, 0) == 0 && fi_cntr_readerr(rc) == 0 && fi_cntr_read(rc) == 1,
	      "fi_cntr_add, set, adderr, seterr");
	fi_close(&s.ep->fid);
	fi_close(&r.ep->fid);
	fi_close(&s.cq->fid);
	fi_close(&r.cq->fid);
	check(fi_close(&rc->fid) == 0 && fi_close(&sc->fid) == 0, "the counters close");
}

/*
 * An endpoint of a second domain with a counter for FI_WRITE and one for
 * FI_READ, its CQ bound with FI_SELECTIVE_COMPLETION, writes, reads and
 * updates atomically a region of the first: RMA writes and base atomics
 * count as writes, RMA reads and fetching and compare atomics as reads,
 * wrong keys as errors; an inject refused (its error returned) does not
 * count.  RMA and atomics are synchronous: the counts are there at once.
 */
static void counters_rma(struct side *a)
{
	static uint8_t src[8192], dst[8192];
	struct fid_cntr *wc, *rdc, *foreign;
	struct iovec v = { src, 100 };
	struct fi_rma_iov ri = { .addr = 0, .len = 100 };
	struct fi_msg_rma m = { .msg_iov = &v, .iov_count = 1, .rma_iov = &ri,
				.rma_iov_count = 1 };
	struct fid_mr *mr;
	struct peer p;
	uint32_t *w, val = 5, res = 0, cmp = 15;
	uint8_t *tgt;
	uint64_t key;
	int ctx, err;
	bool ok;

	tgt = mmap(NULL, 4096 * 4, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (tgt == MAP_FAILED)
		die("mmap", -1);
	err = fi_mr_reg(dom, tgt, 4096 * 4, FI_REMOTE_READ | FI_REMOTE_WRITE, 0, 0, 0, &mr, NULL);
	if (err)
		die("fi_mr_reg", err);
	key = fi_mr_key(mr);
	ri.key = key;
	w = (uint32_t *)(tgt + 8192);
	foreign = cntr_open(dom);
	peer_open(&p, FI_TRANSMIT | FI_RECV | FI_SELECTIVE_COMPLETION);
	check(fi_ep_bind(p.ep, &foreign->fid, FI_WRITE) == -FI_EINVAL,
	      "a counter of another domain: -FI_EINVAL");
	wc = cntr_open(p.dom);
	rdc = cntr_open(p.dom);
	err = fi_ep_bind(p.ep, &wc->fid, FI_WRITE);
	if (!err)
		err = fi_ep_bind(p.ep, &rdc->fid, FI_READ);
	if (err)
		die("fi_ep_bind counters", err);
	peer_enable(&p, a);
	tap_fill(src, sizeof(src), 43);
	ok = fi_write(p.ep, src, 100, NULL, p.to_a, 0, key, &ctx) == 0;
	m.addr = p.to_a;
	m.context = &ctx;
	ok = ok && fi_writemsg(p.ep, &m, FI_COMPLETION) == 0;
	ok = ok && fi_inject_write(p.ep, src + 100, 50, p.to_a, 100, key) == 0;
	check(ok && fi_cntr_read(wc) == 3 && fi_cntr_readerr(wc) == 0 && fi_cntr_read(rdc) == 0 &&
	      !memcmp(tgt, src, 150) && comp(p.cq, &ctx, FI_RMA | FI_WRITE) == 1 &&
	      fi_cq_read(p.cq, dst, 1) == -FI_EAGAIN,
	      "fi_write, fi_writemsg (FI_COMPLETION), fi_inject_write: write counter 3, "
	      "one completion, byte for byte");
	memset(dst, 0, sizeof(dst));
	tap_fill(tgt + 4096, 4000, 44);
	ok = fi_read(p.ep, dst, 150, NULL, p.to_a, 0, key, &ctx) == 0;
	ok = ok && fi_read(p.ep, dst + 150, 4000, NULL, p.to_a, 4096, key, &ctx) == 0;
	check(ok && fi_cntr_read(rdc) == 2 && fi_cntr_readerr(rdc) == 0 && fi_cntr_read(wc) == 3 &&
	      !memcmp(dst, src, 150) && !memcmp(dst + 150, tgt + 4096, 4000) &&
	      fi_cq_read(p.cq, dst + 8000, 1) == -FI_EAGAIN,
	      "2 fi_read: read counter 2, no completion (selective), byte for byte");
	ok = fi_write(p.ep, src, 8, NULL, p.to_a, 0, key ^ 1, &ctx) == 0 &&
	     comp(p.cq, &ctx, 0) == -FI_EKEYREJECTED;
	check(ok && fi_cntr_read(wc) == 3 && fi_cntr_readerr(wc) == 1,
	      "fi_write with a wrong key: FI_EKEYREJECTED, write counter readerr 1");
	ok = fi_read(p.ep, dst, 8, NULL, p.to_a, 0, key ^ 1, &ctx) == 0 &&
	     comp(p.cq, &ctx, 0) == -FI_EKEYREJECTED;
	check(ok && fi_cntr_read(rdc) == 2 && fi_cntr_readerr(rdc) == 1,
	      "fi_read with a wrong key: read counter readerr 1");
	check(fi_inject_write(p.ep, src, 8, p.to_a, 0, key ^ 2) == -FI_EKEYREJECTED &&
	      fi_cntr_read(wc) == 3 && fi_cntr_readerr(wc) == 1,
	      "fi_inject_write with a wrong key: -FI_EKEYREJECTED returned, not counted");
	w[0] = 10;
	ok = fi_atomic(p.ep, &val, 1, NULL, p.to_a, 8192, key, FI_UINT32, FI_SUM, &ctx) == 0;
	check(ok && w[0] == 15 && fi_cntr_read(wc) == 4 && fi_cntr_read(rdc) == 2,
	      "fi_atomic FI_SUM: 15, write counter 4");
	ok = fi_fetch_atomic(p.ep, &val, 1, NULL, &res, NULL, p.to_a, 8192, key, FI_UINT32,
			     FI_SUM, &ctx) == 0 && res == 15 && w[0] == 20;
	val = 99;
	cmp = 20;
	ok = ok && fi_compare_atomic(p.ep, &val, 1, NULL, &cmp, NULL, &res, NULL, p.to_a, 8192,
				     key, FI_UINT32, FI_CSWAP, &ctx) == 0 && res == 20 && w[0] == 99;
	check(ok && fi_cntr_read(rdc) == 4 && fi_cntr_read(wc) == 4 &&
	      fi_cntr_readerr(rdc) == 1 && fi_cntr_readerr(wc) == 1,
	      "fi_fetch_atomic, fi_compare_atomic: read counter 4, write counter 4");
	ok = fi_atomic(p.ep, &val, 1, NULL, p.to_a, 8194, key, FI_UINT32, FI_SUM, &ctx) == 0 &&
	     comp(p.cq, &ctx, 0) == -FI_EINVAL;
	check(ok && fi_cntr_read(wc) == 4 && fi_cntr_readerr(wc) == 2,
	      "a misaligned fi_atomic: FI_EINVAL, write counter readerr 2");
	check(fi_cntr_wait(wc, 5, 0) == -FI_ETIMEDOUT, "fi_cntr_wait for a 5th write: -FI_ETIMEDOUT");
	check(fi_cq_read(p.cq, dst, 1) == -FI_EAGAIN, "no completion besides the ones read");
	check(peer_close(&p) == false, "the second domain is busy while its counters are open");
	check(fi_close(&wc->fid) == 0 && fi_close(&rdc->fid) == 0 &&
	      fi_close(&p.dom->fid) == 0 && fi_close(&foreign->fid) == 0,
	      "... and closes after them");
	fi_close(&mr->fid);
	munmap(tgt, 4096 * 4);
}

static int local(void)
{
	struct side a, b, c, d;
	fi_addr_t fa[3];
	size_t n;

	check_info();
	open_side(&a);
	open_side(&b);
	open_side(&c);
	open_side(&d);
	n = (size_t)fi_av_insert(av, a.addr, 1, &fa[0], 0, NULL);
	n += (size_t)fi_av_insert(av, b.addr, 1, &fa[1], 0, NULL);
	n += (size_t)fi_av_insert(av, c.addr, 1, &fa[2], 0, NULL);
	if (n != 3)
		die("fi_av_insert", -1);
	messages(&a, &c, fa[0], fa[2]);
	large_local(&a, &c, fa[0]);
	large_pieces(&a, &c, fa[0]);
	tagged(&a, &b, &c, fa[0], fa[1]);
	probes(&a, &c, fa[0]);
	flood_local(&a, &d, fa[0]);
	rma(&a, fa[0]);
	counter_refusals();
	counters_msg();
	counters_rma(&a);
	fi_close(&a.ep->fid);
	fi_close(&b.ep->fid);
	fi_close(&c.ep->fid);
	fi_close(&d.ep->fid);
	fi_close(&a.cq->fid);
	fi_close(&b.cq->fid);
	fi_close(&c.cq->fid);
	fi_close(&d.cq->fid);
	fi_close(&av->fid);
	return fi_close(&dom->fid);
}

/* ---- across the nodes ---- */

/* The server's region: dropped pages (MADV_DONTNEED) the client writes
 * into through NetVM, then the client says so. */
static void rma_serve(struct side *s, fi_addr_t peer)
{
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry ee;
	static uint8_t want[RMA_LEN];
	struct fid_mr *mr;
	fi_addr_t src;
	uint64_t key;
	uint8_t *r;
	int ctx, err;
	char done[8];

	r = mmap(NULL, REGION, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (r == MAP_FAILED)
		die("mmap", -1);
	err = fi_mr_reg(dom, r, REGION, FI_REMOTE_READ | FI_REMOTE_WRITE, 0, 0, 0, &mr, NULL);
	if (err)
		die("server: fi_mr_reg", err);
	memset(r, 0x55, REGION);
	madvise(r, REGION, MADV_DONTNEED);	/* gone: zeros when touched */
	key = fi_mr_key(mr);
	fi_trecv(s->ep, done, sizeof(done), NULL, peer, RMA_DONE_TAG, 0, &ctx);
	if (fi_tsend(s->ep, &key, sizeof(key), NULL, peer, KEY_TAG, NULL))
		die("server: key", -1);
	while (next(s->cq, &e, &src, &ee) == 1 && e.op_context != &ctx)
		;	/* the key's send, then the client's word */
	tap_fill(want, RMA_LEN, 7);
	check(e.op_context == &ctx && !memcmp(r + 100, want, RMA_LEN) && r[99] == 0 &&
	      r[100 + RMA_LEN] == 0 && *(uint32_t *)(void *)r == 10,
	      "server: the client's NetVM write (%d B) and atomics are in the region, whose "
	      "pages were dropped before (no pinning)", RMA_LEN);
	fi_close(&mr->fid);
	munmap(r, REGION);
}

/* The client's RMA into the server's region across the nodes. */
static void rma_client(struct side *s, fi_addr_t srv)
{
	static uint8_t out[RMA_LEN], back[RMA_LEN];
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry ee;
	uint32_t five = 5, res = 0;
	fi_addr_t src;
	uint64_t key = 0;
	int ctx;
	ssize_t r;

	fi_trecv(s->ep, &key, sizeof(key), NULL, srv, KEY_TAG, 0, &ctx);
	while (next(s->cq, &e, &src, &ee) == 1 && e.op_context != &ctx)
		;	/* the hello's send, then the key */
	tap_fill(out, RMA_LEN, 7);
	r = fi_write(s->ep, out, RMA_LEN, NULL, srv, 100, key, &ctx);
	if (!r)
		r = comp(s->cq, &ctx, FI_RMA | FI_WRITE);
	if (r == 1)
		r = fi_read(s->ep, back, RMA_LEN, NULL, srv, 100, key, &ctx);
	if (!r)
		r = comp(s->cq, &ctx, FI_RMA | FI_READ);
	check(r == 1 && !memcmp(out, back, RMA_LEN),
	      "client: fi_write of %d B into the server's region over NetVM, fi_read back: byte "
	      "for byte (%zd)", RMA_LEN, r);
	r = fi_atomic(s->ep, &five, 1, NULL, srv, 0, key, FI_UINT32, FI_SUM, &ctx);
	if (!r)
		r = comp(s->cq, &ctx, FI_ATOMIC | FI_WRITE);
	if (r == 1)
		r = fi_atomic(s->ep, &five, 1, NULL, srv, 0, key, FI_UINT32, FI_SUM, &ctx);
	if (r == 1 || !r)
		r = comp(s->cq, &ctx, FI_ATOMIC | FI_WRITE);
	if (r == 1)
		r = fi_fetch_atomic(s->ep, NULL, 1, NULL, &res, NULL, srv, 0, key, FI_UINT32,
				    FI_ATOMIC_READ, &ctx);
	if (!r)
		r = comp(s->cq, &ctx, FI_ATOMIC | FI_READ);
	check(r == 1 && res == 10, "client: FI_SUM 5 twice on the server's word, FI_ATOMIC_READ: "
	      "10 (%zd, %u)", r, res);
	r = fi_read(s->ep, back, 8, NULL, srv, 0, key ^ 0x10, &ctx);
	check(r == 0 && comp(s->cq, &ctx, 0) == -FI_EKEYREJECTED,
	      "client: a wrong key on the server's node: FI_EKEYREJECTED");
	if (fi_tsend(s->ep, "done", 4, NULL, srv, RMA_DONE_TAG, &ctx) ||
	    comp(s->cq, &ctx, FI_SEND | FI_TAGGED) != 1)
		die("client: rma done", -1);
}

/* Across the nodes: large_len's three, and 200000 B in three pieces on
 * pages of their own (three exports: X_AT), the pattern as one message's. */
#define X_LARGE		4
#define X_SPAN		(52 * 4096)
static const size_t x_len[X_LARGE] = { MAX_MSG + 1, 100000, 1 << 20, 200000 };
static const size_t x_at[3] = { 0, 18 * 4096, 19 * 4096 };
static const size_t x_piece[3] = { 70000, 1, 129999 };

/* The server's receives of the client's rendezvous messages, into
 * dropped pages. */
static void large_serve(struct side *s, fi_addr_t peer)
{
	uint8_t *in[X_LARGE];
	unsigned int got = 0, good = 0;

	for (unsigned int i = 0; i < X_LARGE; i++) {
		/* the last in two pieces: read through the bounce area */
		struct iovec two[2] = {
			{ NULL, x_len[i] / 3 }, { NULL, x_len[i] - x_len[i] / 3 },
		};

		in[i] = unmapped(x_len[i] + 1, false, 0);
		two[0].iov_base = in[i];
		two[1].iov_base = in[i] + two[0].iov_len;
		if (i == X_LARGE - 1 ?
		    fi_trecvv(s->ep, two, NULL, 2, peer, LARGE_TAG + i, 0, in[i]) :
		    fi_trecv(s->ep, in[i], x_len[i], NULL, peer, LARGE_TAG + i, 0, in[i]))
			die("server: large trecv", -1);
	}
	for (; got < X_LARGE; got++) {
		struct fi_cq_tagged_entry e;
		struct fi_cq_err_entry ee;
		fi_addr_t src;
		unsigned int i;

		if (next(s->cq, &e, &src, &ee) != 1)
			break;
		i = (unsigned int)(e.tag - LARGE_TAG);
		good += i < X_LARGE && e.op_context == in[i] && e.len == x_len[i] &&
			src == peer && tap_filled(in[i], x_len[i], 60 + i) &&
			in[i][x_len[i]] == 0;
	}
	check(got == X_LARGE && good == X_LARGE, "server: rendezvous messages of 4057 B "
	      "and 100000 B (read into place), 1 MiB (written by the client) and 200000 B "
	      "(3 pieces, into 2: read through the bounce area) into dropped pages, byte for "
	      "byte (%u of %d)", good, X_LARGE);
	for (unsigned int i = 0; i < X_LARGE; i++)
		munmap(in[i], x_len[i] + 1);
}

static void large_client(struct side *s, fi_addr_t srv)
{
	uint8_t *out[X_LARGE];
	unsigned int done = 0;

	for (unsigned int i = 0; i < X_LARGE; i++) {
		struct iovec iov[3];
		size_t pos = 0;
		ssize_t r;

		if (i < 3) {
			out[i] = unmapped(x_len[i], true, 60 + i);
			r = fi_tsend(s->ep, out[i], x_len[i], NULL, srv, LARGE_TAG + i, out[i]);
			if (r)
				die("client: large tsend", (int)r);
			continue;
		}
		/* three pieces on pages of their own: three exports, read in turn */
		out[i] = unmapped(X_SPAN, true, 0);
		for (int k = 0; k < 3; k++) {
			iov[k].iov_base = out[i] + x_at[k];
			iov[k].iov_len = x_piece[k];
			for (size_t j = 0; j < x_piece[k]; j++)
				out[i][x_at[k] + j] = tap_pattern(60 + i, pos++);
		}
		madvise(out[i], X_SPAN, MADV_DONTNEED);
		r = fi_tsendv(s->ep, iov, NULL, 3, srv, LARGE_TAG + i, out[i]);
		if (r)
			die("client: large tsend", (int)r);
	}
	for (; done < X_LARGE; done++) {
		struct fi_cq_tagged_entry e;
		struct fi_cq_err_entry ee;
		fi_addr_t src;

		if (next(s->cq, &e, &src, &ee) != 1 || e.flags != (FI_SEND | FI_TAGGED))
			break;
	}
	check(done == X_LARGE, "client: rendezvous sends of 4057 B, 100000 B, 1 MiB and "
	      "200000 B in 3 pieces from pages it no longer maps: completed once the server "
	      "read them or they were written");
	for (unsigned int i = 0; i < X_LARGE; i++)
		munmap(out[i], i < 3 ? x_len[i] : X_SPAN);
}


/* ---- written rendezvous: partial pages, and pages it cannot write ---- */

#define W_TAG		600
#define W_LEN		300000
#define W_OFF		100	/* the receive starts this far into a page */
#define W_RO		(2 * 4096)

/*
 * A memory region on pages a rendezvous message just used: the provider
 * keeps that message's export for the next one (rekeyed, idle), and a
 * region on its pages must take them (docs/libfabric.md, Exports kept).
 */
static void region_after(void *buf, size_t len, uint64_t access,
			 const char *whose)
{
	struct fid_mr *mr = NULL;
	int err = fi_mr_reg(dom, buf, len, access, 0, 0, 0, &mr, NULL);

	check(!err && mr && fi_mr_key(mr) != FI_KEY_NOTAVAIL,
	      "%s buffer, its message over, takes a memory region at once (%d)",
	      whose, err);
	if (mr)
		fi_close(&mr->fid);
}

/*
 * The client's messages W_TAG .. W_TAG + 2: W_LEN bytes into a receive
 * W_OFF bytes into a page (the client writes its whole pages, the server
 * reads the bytes before and after them), W_RO bytes into pages the
 * server maps read-only (too short to be written, but not read into
 * place either: the NIC would wait for a page it cannot map; offered for
 * writing, the client's writes are refused: an error on both sides),
 * then W_RO bytes again into writable pages, read into place (the
 * endpoints go on).
 */
static void written_serve(struct side *s, fi_addr_t peer)
{
	uint8_t *page = unmapped(W_LEN + 2 * 4096, false, 0), *in = page + W_OFF;
	uint8_t *ro = mmap(NULL, W_RO, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *after = unmapped(W_RO + 1, false, 0);
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry ee;
	fi_addr_t src;
	ssize_t r;

	if (ro == MAP_FAILED)
		die("mmap", -1);
	fi_trecv(s->ep, in, W_LEN, NULL, peer, W_TAG, 0, in);
	r = next(s->cq, &e, &src, &ee);
	check(r == 1 && e.op_context == in && e.len == W_LEN && src == peer &&
	      tap_filled(in, W_LEN, 70) && in[-1] == 0 && in[W_LEN] == 0,
	      "server: %d B into a receive %d B into a page: written by the client but "
	      "the partial pages (read), byte for byte, nothing around it (%zd)",
	      W_LEN, W_OFF, r);
	fi_trecv(s->ep, ro, W_RO, NULL, peer, W_TAG + 1, 0, ro);
	r = next(s->cq, &e, &src, &ee);
	check(r == -FI_EKEYREJECTED && ee.op_context == ro && ee.len == 0,
	      "server: a receive into pages mapped read-only: the client's writes refused, "
	      "FI_EKEYREJECTED (%zd)", r);
	fi_trecv(s->ep, after, W_RO, NULL, peer, W_TAG + 2, 0, after);
	r = next(s->cq, &e, &src, &ee);
	check(r == 1 && e.op_context == after && e.len == W_RO &&
	      tap_filled(after, W_RO, 72) && after[W_RO] == 0,
	      "server: then the next one read into place, byte for byte (%zd)", r);
	region_after(after, W_RO, FI_REMOTE_READ | FI_REMOTE_WRITE, "server: the receive's");
	munmap(page, W_LEN + 2 * 4096);
	munmap(ro, W_RO);
	munmap(after, W_RO + 1);
}

static void written_client(struct side *s, fi_addr_t srv)
{
	static const size_t len[3] = { W_LEN, W_RO, W_RO };
	static const ssize_t want[3] = { 1, -FI_EKEYREJECTED, 1 };
	uint8_t *out[3];
	bool ok = true;

	for (int i = 0; i < 3; i++) {
		struct fi_cq_tagged_entry e;
		struct fi_cq_err_entry ee;
		fi_addr_t src;
		ssize_t r;

		out[i] = unmapped(len[i], true, 70 + i);
		r = fi_tsend(s->ep, out[i], len[i], NULL, srv, W_TAG + i, out[i]);
		r = r ? r : next(s->cq, &e, &src, &ee);
		ok = ok && r == want[i] &&
		     (r == 1 ? e.op_context : ee.op_context) == out[i];
		if (r != want[i])
			printf("# client: message %d: %zd\n", i, r);
		if (i == 2)
			region_after(out[i], len[i], FI_REMOTE_READ, "client: the send's");
		munmap(out[i], len[i]);
	}
	check(ok, "client: %d B written into the server's whole pages, then %d B refused "
	      "by its read-only pages (FI_EKEYREJECTED), then %d B read by the server", W_LEN,
	      W_RO, W_RO);
}

/* ---- two local endpoints, one remote peer ---- */

static size_t pair_len(unsigned int k, unsigned int i)
{
	return 1 + (i * 331 + k * 977) % MAX_MSG;
}

/* Pattern seeds: endpoint k's message i to the server, and the answer. */
static unsigned int pair_seed(unsigned int k, unsigned int back,
			      unsigned int i)
{
	return 5000 + k * 1000 + back * 500 + i;
}

/*
 * The server's half: the second endpoint's address from its hello, then
 * PAIR_N messages from each endpoint (by tag), each from the endpoint its
 * tag names, byte for byte, and an answer to each of the two.
 */
static void pair_serve(struct side *s, fi_addr_t peer)
{
	static uint8_t in[2][PAIR_N][MAX_MSG];
	static uint8_t out[2][PAIR_N][MAX_MSG];
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry ee;
	char hello[64] = { 0 };
	fi_addr_t src, from[2] = { peer, FI_ADDR_NOTAVAIL };
	unsigned int got = 0, good = 0, acked = 0, k, i;
	int ctx;
	ssize_t r;

	fi_trecv(s->ep, hello, sizeof(hello) - 1, NULL, FI_ADDR_UNSPEC, HELLO2_TAG, 0, &ctx);
	while ((r = next(s->cq, &e, &src, &ee)) == 1 && e.op_context != &ctx)
		;	/* an earlier phase's send completing late */
	check(r == 1 && e.op_context == &ctx &&
	      fi_av_insertsvc(av, hello, NULL, &from[1], 0, NULL) == 1 && from[1] != peer,
	      "server: the client's second endpoint's address %s inserted", hello);
	for (k = 0; k < 2; k++)
		for (i = 0; i < PAIR_N; i++)
			if (fi_trecv(s->ep, in[k][i], MAX_MSG, NULL, FI_ADDR_UNSPEC,
				     PAIR_TAG + 1000 * k + i, 0, in[k][i]))
				die("server: pair trecv", -1);
	for (; got < 2 * PAIR_N; got++) {
		r = next(s->cq, &e, &src, &ee);
		if (r != 1)
			die("server: pair receive", (int)r);
		k = (unsigned int)(e.tag - PAIR_TAG) / 1000;
		i = (unsigned int)(e.tag - PAIR_TAG) % 1000;
		good += k < 2 && i < PAIR_N && e.op_context == in[k][i] &&
			src == from[k] && e.len == pair_len(k, i) &&
			tap_filled(in[k][i], e.len, pair_seed(k, 0, i));
	}
	check(good == 2 * PAIR_N,
	      "server: %d tagged messages from each of the client's two endpoints, each from "
	      "the endpoint its tag names, byte for byte (%u of %d)", PAIR_N, good, 2 * PAIR_N);
	for (i = 0; i < PAIR_N; i++)
		for (k = 0; k < 2; k++) {
			tap_fill(out[k][i], pair_len(k, i), pair_seed(k, 1, i));
			while ((r = fi_tsend(s->ep, out[k][i], pair_len(k, i), NULL, from[k],
					     PAIR_BACK + 1000 * k + i, out[k][i])) == -FI_EAGAIN)
				acked += fi_cq_sread(s->cq, &e, 1, NULL, 10) == 1;
			if (r)
				die("server: pair tsend", (int)r);
		}
	while (acked < 2 * PAIR_N) {
		r = next(s->cq, &e, &src, &ee);
		if (r != 1)
			die("server: pair answers", (int)r);
		acked++;
	}
	check(acked == 2 * PAIR_N, "server: its %d answers to the two endpoints acknowledged",
	      2 * PAIR_N);
}

/* Both endpoints' completions so far: sends by context, receives checked. */
static void pair_poll(struct side *sd[2], uint8_t (*in)[PAIR_N][MAX_MSG],
		      uint8_t (*out)[PAIR_N][MAX_MSG], fi_addr_t srv,
		      unsigned int sent[2], unsigned int got[2], unsigned int *good,
		      int timeout)
{
	struct fi_cq_tagged_entry e[16];
	struct fi_cq_err_entry ee;
	fi_addr_t src[16];

	for (unsigned int k = 0; k < 2; k++) {
		ssize_t r = fi_cq_sreadfrom(sd[k]->cq, e, 16, src, NULL, timeout);

		if (r == -FI_EAVAIL && fi_cq_readerr(sd[k]->cq, &ee, 0) == 1)
			die("client: pair error completion", -ee.err);
		for (ssize_t n = 0; n < r; n++) {
			uint8_t *c = e[n].op_context;
			unsigned int i = (unsigned int)(e[n].tag - PAIR_BACK - 1000 * k);

			if (e[n].flags & FI_SEND) {
				sent[k] += c >= out[k][0] && c <= out[k][PAIR_N - 1];
				continue;
			}
			got[k]++;
			*good += i < PAIR_N && c == in[k][i] && src[n] == srv &&
				 e[n].len == pair_len(k, i) &&
				 tap_filled(in[k][i], e[n].len, pair_seed(k, 1, i));
		}
	}
}

/*
 * The client's half: a second RDM endpoint beside s; both send PAIR_N
 * tagged messages to the server, interleaved, and take its answers.
 * Each send completes only on the server's acknowledgement, so both
 * directions between both endpoints and the server's one are exercised.
 */
static void pair_client(struct side *s, fi_addr_t srv)
{
	static uint8_t in[2][PAIR_N][MAX_MSG], out[2][PAIR_N][MAX_MSG];
	unsigned int sent[2] = { 0 }, got[2] = { 0 }, good = 0, k, i;
	struct side s2, *sd[2] = { s, &s2 };
	int hello_ctx;
	ssize_t r;

	open_side(&s2);
	check(strcmp(s->name, s2.name) != 0, "client: a second RDM endpoint on this node: %s "
	      "beside %s", s2.name, s->name);
	for (k = 0; k < 2; k++)
		for (i = 0; i < PAIR_N; i++)
			if (fi_trecv(sd[k]->ep, in[k][i], MAX_MSG, NULL, FI_ADDR_UNSPEC,
				     PAIR_BACK + 1000 * k + i, 0, in[k][i]))
				die("client: pair trecv", -1);
	r = fi_tsend(s2.ep, s2.name, strlen(s2.name), NULL, srv, HELLO2_TAG, &hello_ctx);
	if (r)
		die("client: second hello", (int)r);
	for (i = 0; i < PAIR_N; i++)
		for (k = 0; k < 2; k++) {
			tap_fill(out[k][i], pair_len(k, i), pair_seed(k, 0, i));
			while ((r = fi_tsend(sd[k]->ep, out[k][i], pair_len(k, i), NULL, srv,
					     PAIR_TAG + 1000 * k + i, out[k][i])) == -FI_EAGAIN)
				pair_poll(sd, in, out, srv, sent, got, &good, 10);
			if (r)
				die("client: pair tsend", (int)r);
		}
	/* both in turn, briefly each: a wait on one is no progress for the other */
	for (unsigned int idle = 0; idle < 2000 &&
	     (sent[0] + sent[1] < 2 * PAIR_N || got[0] + got[1] < 2 * PAIR_N);) {
		unsigned int before = sent[0] + sent[1] + got[0] + got[1];

		pair_poll(sd, in, out, srv, sent, got, &good, 10);
		idle = sent[0] + sent[1] + got[0] + got[1] == before ? idle + 1 : 0;
	}
	check(sent[0] == PAIR_N && sent[1] == PAIR_N,
	      "client: both endpoints' %d sends to the one server endpoint acknowledged "
	      "(%u, %u)", PAIR_N, sent[0], sent[1]);
	check(got[0] == PAIR_N && got[1] == PAIR_N && good == 2 * PAIR_N,
	      "client: each endpoint took its own %d answers from the server, byte for byte "
	      "(%u, %u; %u right)", PAIR_N, got[0], got[1], good);
	fi_close(&s2.ep->fid);
	fi_close(&s2.cq->fid);
}

static int serve(void)
{
	static uint8_t in[FLOOD][MAX_MSG];
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry ee;
	unsigned int got = 0, bad = 0;
	fi_addr_t src, peer = FI_ADDR_NOTAVAIL;
	char hello[64] = { 0 };
	struct side s;
	int ctx;
	ssize_t r;

	open_side(&s);
	write_file("/tmp/fi-rdm.addr", s.name);
	fi_trecv(s.ep, hello, sizeof(hello) - 1, NULL, FI_ADDR_UNSPEC, HELLO_TAG, 0, &ctx);
	r = next(s.cq, &e, &src, &ee);
	check(r == 1 && src == FI_ADDR_NOTAVAIL && fi_av_insertsvc(av, hello, NULL, &peer, 0,
								  NULL) == 1,
	      "server: the client's first message (not in the AV), its address %s inserted",
	      hello);
	rma_serve(&s, peer);
	large_serve(&s, peer);
	written_serve(&s, peer);
	pair_serve(&s, peer);
	/* wait for the 256th flood message to be there (unexpected) */
	for (;;) {
		r = trecvmsg(&s, NULL, 0, FLOOD_TAG + 255, &ctx, FI_PEEK);
		if (r)
			die("server: peek", (int)r);
		r = next(s.cq, &e, &src, &ee);
		if (r == 1)
			break;
		if (r != -FI_ENOMSG)
			die("server: peek", (int)r);
		fi_cq_sread(s.cq, &e, 1, NULL, 10);
	}
	for (int i = FLOOD - 1; i >= 0; i--)	/* newest first */
		if (fi_trecv(s.ep, in[i], MAX_MSG, NULL, FI_ADDR_UNSPEC, FLOOD_TAG + i, 0, in[i]))
			die("server: trecv", -1);
	while (got < FLOOD) {
		r = next(s.cq, &e, &src, &ee);
		if (r != 1)
			die("server: flood receive", (int)r);
		{
			unsigned int i = (unsigned int)(e.tag - FLOOD_TAG);

			if (i >= FLOOD || e.op_context != in[i] || src != peer ||
			    e.len != 1 + (i * 37) % MAX_MSG || !tap_filled(in[i], e.len, i))
				bad++;
		}
		got++;
	}
	check(got == FLOOD && !bad, "server: the flood of %d over U-Net, 256 taken unexpected, "
	      "each by its tag byte for byte from the client (%u wrong)", FLOOD, bad);
	r = fi_tsenddata(s.ep, "done", 4, NULL, 0xfeedface12345678ull, peer, DONE_TAG, &ctx);
	check(r == 0 && next(s.cq, &e, &src, &ee) == 1 && e.op_context == &ctx,
	      "server: the answer with remote CQ data sent and acknowledged");
	fi_close(&s.ep->fid);
	return 0;
}

static int client(const char *server)
{
	static uint8_t out[MAX_MSG];
	struct fi_cq_tagged_entry e[16];
	struct fi_cq_err_entry ee;
	unsigned int sent_done = 0, bad = 0;
	bool done = false;
	char answer[16] = { 0 };
	fi_addr_t srv;
	struct side s;
	ssize_t r;

	open_side(&s);
	check(fi_av_insertsvc(av, server, NULL, &srv, 0, NULL) == 1, "client: %s inserted",
	      server);
	fi_trecv(s.ep, answer, sizeof(answer), NULL, srv, DONE_TAG, 0, answer);
	if (fi_tsend(s.ep, s.name, strlen(s.name), NULL, srv, HELLO_TAG, NULL))
		die("client: hello", -1);
	rma_client(&s, srv);
	large_client(&s, srv);
	written_client(&s, srv);
	pair_client(&s, srv);
	for (unsigned int i = 0; i < FLOOD; i++) {
		size_t len = 1 + (i * 37) % MAX_MSG;

		tap_fill(out, len, i);
		while ((r = fi_tsend(s.ep, out, len, NULL, srv, FLOOD_TAG + i, NULL)) ==
		       -FI_EAGAIN) {
			/* progress; the answer comes only after the flood */
			ssize_t k = fi_cq_sread(s.cq, e, 16, NULL, 10);

			sent_done += k > 0 ? (unsigned int)k : 0;
		}
		if (r)
			die("client: send", (int)r);
	}
	/* the sends' completions and the answer */
	while (sent_done < FLOOD || !done) {
		r = fi_cq_sread(s.cq, e, 16, NULL, 20000);
		if (r == -FI_EAVAIL && fi_cq_readerr(s.cq, &ee, 0) == 1)
			die("client: error completion", -ee.err);
		if (r <= 0)
			die("client: waiting", (int)r);
		for (ssize_t k = 0; k < r; k++) {
			if (e[k].op_context == answer) {
				done = true;
				bad += e[k].data != 0xfeedface12345678ull ||
				       !(e[k].flags & FI_REMOTE_CQ_DATA) ||
				       e[k].len != 4 || memcmp(answer, "done", 4);
			} else {
				sent_done++;
			}
		}
	}
	check(!bad, "client: %u sends completed, the answer's remote CQ data checked",
	      sent_done);
	fi_close(&s.ep->fid);
	return 0;
}

int main(int argc, char **argv)
{
	int err;

	if (argc < 2) {
		fprintf(stderr, "usage: fi-netvm-rdm-test local | server | client ADDR\n");
		return 2;
	}
	open_all();
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
