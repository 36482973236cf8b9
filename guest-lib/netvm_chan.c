// SPDX-License-Identifier: (GPL-2.0-only OR MIT)
/*
 * libnetvm: channels (thesis chapter 7).  The receiver exports a ring of
 * nbuf fixed-size entries; the sender fills entry snext of a staging copy
 * of it and sends the entry with one notifying write (the notification
 * rides on the last fragment, so it arrives after the whole message); the
 * receiver returns credits with a notifying 4-byte write to the sender's
 * replenish word.  Credits: netvm_credit.c.  Opening only exports: the
 * peer's part is imported at the first send/receive, so two processes can
 * open channels to each other in any order.
 *
 * Entry: a 32-bit length, then the message; entries are 64-byte aligned.
 * A staging entry is reused only after its credit came back, i.e. after
 * the receiver saw the message, so after the NI read it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "netvm_credit.h"
#include "netvm_priv.h"
#include "netvm_sync.h"

#define CHAN_NAME_MAX	28		/* + ".s" + NUL fits NETVM_NAME_MAX */
#define CHAN_HDR	4
#define CHAN_REPL_PAGE	4096u		/* sender: replenish word page */

struct netvm_chan {
	struct netvm *nv;
	struct netvm_chan_cfg cfg;
	char name[CHAN_NAME_MAX + 1];
	int sender;
	struct nvl_credit cr;
	uint32_t slot_size;
	uint8_t *mem;		/* receiver: ring; sender: repl page + staging */
	size_t mem_len;
	int exp;
	int seg;		/* the peer's export, once imported */
	int sender_gone;	/* receiver: replenishing failed for good */
	uint32_t node;		/* the peer */
	uint32_t port;
};

static uint64_t round_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

static int cfg_ok(const struct netvm_chan_cfg *c)
{
	size_t len;

	if (!c || !c->name || !c->nbuf || !c->msg_max || c->timeout_ms <= 0)
		return -EINVAL;
	len = strlen(c->name);
	if (!len)
		return -EINVAL;
	if (len > CHAN_NAME_MAX)
		return -ENAMETOOLONG;
	if (c->sent_notf < 1 || c->sent_notf >= NETVM_SYNC_NOTF_FIRST ||
	    c->repl_notf < 1 || c->repl_notf >= NETVM_SYNC_NOTF_FIRST)
		return -EINVAL;
	if (c->msg_max > (1u << 30) || c->nbuf > 65536)
		return -EINVAL;
	return 0;
}

NETVM_PUBLIC int netvm_chan_close(struct netvm_chan *ch)
{
	int err = 0;

	if (!ch)
		return 0;
	if (ch->sender && ch->seg >= 0)
		err = netvm_flushW(ch->nv);
	if (ch->seg >= 0)
		netvm_unimport(ch->nv, ch->seg);
	if (ch->exp >= 0)
		netvm_unexport(ch->nv, ch->exp);
	if (ch->mem)
		munmap(ch->mem, ch->mem_len);
	free(ch);
	return err;
}

/* Import the peer's part the first time it is needed. */
static int chan_connect(struct netvm_chan *ch)
{
	char sname[NETVM_NAME_MAX];
	int seg;

	if (ch->seg >= 0)
		return 0;
	snprintf(sname, sizeof(sname), "%s.s", ch->name);
	seg = netvm_import_wait(ch->nv, ch->node, ch->port,
				ch->sender ? ch->name : sname,
				ch->cfg.timeout_ms);
	if (seg < 0)
		return seg;
	ch->seg = seg;
	return 0;
}

static int chan_open(struct netvm *nv, unsigned int node, unsigned int port,
		     const struct netvm_chan_cfg *cfg, int sender,
		     struct netvm_chan **out)
{
	struct netvm_chan *ch;
	char sname[NETVM_NAME_MAX];
	uint64_t ring;
	int err;

	if (!nv || !out)
		return -EINVAL;
	*out = NULL;
	err = cfg_ok(cfg);
	if (err)
		return err;
	if (nv->efd < 0)
		return -ENXIO;
	ch = calloc(1, sizeof(*ch));
	if (!ch)
		return -ENOMEM;
	ch->nv = nv;
	ch->cfg = *cfg;
	ch->sender = sender;
	ch->node = node;
	ch->port = port;
	ch->exp = -1;
	ch->seg = -1;
	memcpy(ch->name, cfg->name, strlen(cfg->name) + 1);
	ch->cfg.name = ch->name;
	snprintf(sname, sizeof(sname), "%s.s", cfg->name);
	err = nvl_credit_init(&ch->cr, cfg->nbuf, cfg->refill);
	if (err)
		goto fail;
	ch->slot_size = (uint32_t)round_up(CHAN_HDR + cfg->msg_max, 64);
	ring = round_up((uint64_t)ch->slot_size * cfg->nbuf, 4096);
	ch->mem_len = ring + (sender ? CHAN_REPL_PAGE : 0);
	ch->mem = mmap(NULL, ch->mem_len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ch->mem == MAP_FAILED) {
		ch->mem = NULL;
		err = -errno;
		goto fail;
	}
	/* ours now; theirs at first use, so that opening never waits */
	err = netvm_export(nv, sender ? sname : ch->name, ch->mem, ch->mem_len,
			   0, NULL);
	if (err < 0)
		goto fail;
	ch->exp = err;
	*out = ch;
	return 0;
fail:
	netvm_chan_close(ch);
	return err;
}

NETVM_PUBLIC int netvm_chan_open_send(struct netvm *nv, unsigned int node,
				      unsigned int port,
				      const struct netvm_chan_cfg *cfg,
				      struct netvm_chan **out)
{
	return chan_open(nv, node, port, cfg, 1, out);
}

NETVM_PUBLIC int netvm_chan_open_recv(struct netvm *nv, unsigned int node,
				      unsigned int port,
				      const struct netvm_chan_cfg *cfg,
				      struct netvm_chan **out)
{
	return chan_open(nv, node, port, cfg, 0, out);
}

NETVM_PUBLIC int netvm_chan_send(struct netvm_chan *ch, const void *msg,
				 size_t len)
{
	uint32_t hdr = (uint32_t)len;
	uint8_t *p;
	int slot, err;

	if (!ch || !ch->sender || !msg)
		return -EINVAL;
	if (!len || len > ch->cfg.msg_max)
		return -EMSGSIZE;
	err = chan_connect(ch);
	if (err)
		return err;
	slot = nvl_credit_take(&ch->cr);
	if (slot == -EAGAIN) {
		/* ring full: report any failed send, then wait for credits */
		err = netvm_flushW(ch->nv);
		if (!err)
			err = nvl_notf_take(ch->nv, ch->cfg.repl_notf,
					    ch->cfg.timeout_ms);
		if (err)
			return err;
		nvl_credit_replenish(&ch->cr);
		slot = nvl_credit_take(&ch->cr);
	}
	p = ch->mem + CHAN_REPL_PAGE + (size_t)slot * ch->slot_size;
	memcpy(p, &hdr, CHAN_HDR);
	memcpy(p + CHAN_HDR, msg, len);
	return netvm_writeN(ch->nv, ch->seg, (uint64_t)slot * ch->slot_size, p,
			    CHAN_HDR + len, ch->cfg.sent_notf);
}

NETVM_PUBLIC int netvm_chan_recv(struct netvm_chan *ch, const void **msg,
				 size_t *len)
{
	uint32_t slot, hdr, val;
	int repl, err;
	uint8_t *p;

	if (!ch || ch->sender || !msg || !len)
		return -EINVAL;
	err = chan_connect(ch);
	if (err)
		return err;
	err = nvl_notf_take(ch->nv, ch->cfg.sent_notf, ch->cfg.timeout_ms);
	if (err)
		return err;
	slot = nvl_credit_recv(&ch->cr, &repl);
	if (repl && !ch->sender_gone) {
		val = ch->cr.freed;
		err = netvm_writeFN(ch->nv, ch->seg, 0, &val, 4,
				    ch->cfg.repl_notf);
		/* a sender that has sent its last message and closed needs
		 * no credits: its export or endpoint is gone */
		if (err == -EFAULT || err == -ECONNREFUSED ||
		    err == -EKEYREJECTED)
			ch->sender_gone = 1;
		else if (err)
			return err;
	}
	p = ch->mem + (size_t)slot * ch->slot_size;
	memcpy(&hdr, p, CHAN_HDR);
	if (!hdr || hdr > ch->cfg.msg_max)
		return -EIO;
	*msg = p + CHAN_HDR;
	*len = hdr;
	return 0;
}
