// SPDX-License-Identifier: GPL-2.0-only
/* A simulated host OS and user library for NetVM tests (see sim_host.h). */
#include <stdlib.h>
#include <string.h>

#include "sim_host.h"

#define MAX_NODES	4

static uint32_t ppn_alloc(struct sim_host *h, uint32_t n)
{
	uint32_t first = SIM_HOST_BASE / NVM_PAGE_SIZE;
	uint32_t last = (SIM_HOST_BASE + SIM_HOST_SIZE) / NVM_PAGE_SIZE;

	for (uint32_t p = first; p + n <= last; p++) {
		uint32_t k;

		for (k = 0; k < n && !h->ppn_used[p + k]; k++)
			;
		if (k == n) {
			for (k = 0; k < n; k++)
				h->ppn_used[p + k] = 1;
			return p;
		}
	}
	abort();	/* the tests size their memory; running out is a bug */
}

static uint8_t *pa(struct sim_host *h, uint64_t addr)
{
	return sim_host(h->c, addr);
}

static const struct nvm_sram_layout *L(struct sim_host *h)
{
	return &h->c->fw.layout;
}

static uint32_t ep_base(struct sim_host *h, uint32_t port)
{
	return L(h)->ep_base + port * NVM_EP_STRIDE;
}

void sh_cmd(struct sim_host *h, uint32_t port, struct nvm_cmd *c)
{
	struct nvm_ep_status st;

	for (;;) {
		memcpy(&st, h->c->chip.sram + ep_base(h, port) + NVM_EP_STATUS,
		       sizeof(st));
		if (h->issued[port] - st.consumed < NVM_CMDQ_LEN)
			break;
		/* in steps: a peer that retransmits for ever never settles */
		sim_settle_for(h->c, h->c->peer, 10000000);
	}
	c->seq = h->issued[port] + 1;
	memcpy(h->c->chip.sram + ep_base(h, port) + NVM_EP_CMDQ +
	       (h->issued[port] % NVM_CMDQ_LEN) * NVM_CMD_SIZE, c, sizeof(*c));
	h->issued[port]++;
	sim_doorbell(h->c, port * LANAI_DOORBELL_PAGE, h->issued[port]);
}

static void kcmd(struct sim_host *h, uint8_t op, uint16_t node, uint16_t port,
		 uint32_t arg0, const void *data, uint32_t len)
{
	struct nvm_cmd c = { .op = op, .dst_node = node, .dst_port = port };

	c.arg[0] = arg0;
	if (data)
		memcpy(c.inline_data, data, len);
	sh_cmd(h, NVM_EP_KERNEL, &c);
}

uint32_t sh_open(struct sim_host *h, uint32_t port)
{
	uint32_t p = ppn_alloc(h, 2);
	uint64_t base = (uint64_t)p * NVM_PAGE_SIZE;
	struct nvm_k_ep_open k = {
		.shadow = base,
		.reply = base + 64,
		.err_ring = base + 1024,
		.notf_ring = base + NVM_PAGE_SIZE,
		.notf_len = SH_NOTFQ,
		.port = port,
	};

	memset(pa(h, base), 0, 2 * NVM_PAGE_SIZE);
	sh_area(h, base, 2 * NVM_PAGE_SIZE);
	h->shadow[port] = k.shadow;
	h->reply[port] = k.reply;
	h->err_ring[port] = k.err_ring;
	h->notf_ring[port] = k.notf_ring;
	h->notf_cons[port] = 0;
	kcmd(h, NVM_KOP_EP_OPEN, 0, 0, 0, &k, sizeof(k));
	return port;
}

void sh_area(struct sim_host *h, uint64_t base, uint64_t len)
{
	if (h->nareas == SH_AREAS)
		abort();
	h->areas[h->nareas].base = base;
	h->areas[h->nareas].len = len;
	h->nareas++;
}

uint64_t sh_kalloc(struct sim_host *h, uint32_t pages)
{
	uint64_t base = (uint64_t)ppn_alloc(h, pages) * NVM_PAGE_SIZE;

	memset(pa(h, base), 0, (size_t)pages * NVM_PAGE_SIZE);
	sh_area(h, base, (uint64_t)pages * NVM_PAGE_SIZE);
	return base;
}

void sh_phys_win(struct sim_host *h, uint32_t slot, uint64_t base,
		 uint64_t len, uint64_t peers, uint32_t access)
{
	struct nvm_k_phys_win k = {
		.base = base, .len = len, .peers = peers, .slot = slot,
		.access = access,
	};

	kcmd(h, NVM_KOP_PHYS_WIN, 0, 0, 0, &k, sizeof(k));
}

static uint8_t secret_byte(uint64_t i)
{
	return (uint8_t)(i * 131 + 17);
}

/* Is [addr, addr + len) inside one registered area? */
static bool in_area(struct sim_host *h, uint64_t addr, uint64_t len)
{
	for (uint32_t i = 0; i < h->nareas; i++)
		if (addr >= h->areas[i].base &&
		    addr - h->areas[i].base <= h->areas[i].len &&
		    len <= h->areas[i].len - (addr - h->areas[i].base))
			return true;
	return false;
}

/* sim_chip's dma_hook: page by page, an area or a resident process page. */
static void dma_check(void *ctx, uint64_t addr, uint32_t len, bool to_host)
{
	struct sim_host *h = ctx;
	uint64_t a = addr, end = addr + len;

	while (a < end) {
		uint64_t pend = (a | (NVM_PAGE_SIZE - 1)) + 1;
		uint64_t n = (pend < end ? pend : end) - a;
		uint64_t ppn = a / NVM_PAGE_SIZE;
		bool ok = in_area(h, a, n);

		if (!ok && ppn < sizeof(h->ppn_page) / sizeof(h->ppn_page[0]) &&
		    h->ppn_page[ppn]) {
			struct sh_page *pg = &h->pages[h->ppn_page[ppn] - 1];

			ok = pg->used && pg->ppn == ppn;
		}
		if (!ok) {
			if (!h->dma_bad++) {
				h->dma_bad_addr = addr;
				h->dma_bad_len = len;
				h->dma_bad_write = to_host;
			}
			return;
		}
		a += n;
	}
}

uint32_t sh_dma_violations(struct sim_host *h)
{
	for (uint64_t i = 0; i < SH_SECRET_PAGES * NVM_PAGE_SIZE; i++)
		if (*pa(h, h->secret + i) != secret_byte(i))
			return h->dma_bad + 1;
	return h->dma_bad;
}

uint32_t sh_giveup_ms;

void sh_init(struct sim_host *h, struct sim_chip *c, uint32_t epoch)
{
	struct nvm_k_config k = {
		.giveup_ms = sh_giveup_ms,
		.max_ppn = (SIM_HOST_BASE + SIM_HOST_SIZE) / NVM_PAGE_SIZE,
		.pt_rows = SH_PT_ROWS,
		.bounce_slots = MAX_NODES * FW_NV_WIN,
		.max_nodes = MAX_NODES,
		.epoch = epoch,
	};
	uint32_t bpages = (MAX_NODES * FW_NV_WIN * NVM_BOUNCE_SLOT +
			   NVM_PAGE_SIZE - 1) / NVM_PAGE_SIZE;

	memset(h, 0, sizeof(*h));
	h->c = c;
	h->auto_fault = 1;
	h->bounce = (uint64_t)ppn_alloc(h, bpages) * NVM_PAGE_SIZE;
	sh_area(h, h->bounce, (uint64_t)bpages * NVM_PAGE_SIZE);
	k.bounce_base = h->bounce;
	/* kernel memory that no one granted the NIC: a peer's target */
	h->secret = (uint64_t)ppn_alloc(h, SH_SECRET_PAGES) * NVM_PAGE_SIZE;
	for (uint64_t i = 0; i < SH_SECRET_PAGES * NVM_PAGE_SIZE; i++)
		*pa(h, h->secret + i) = secret_byte(i);
	c->dma_hook = dma_check;
	c->dma_ctx = h;
	kcmd(h, NVM_KOP_CONFIG, 0, 0, 0, &k, sizeof(k));
	sh_open(h, NVM_EP_KERNEL);
}

static struct sh_page *page(struct sim_host *h, uint32_t port, uint64_t va)
{
	uint64_t pva = va & ~(uint64_t)(NVM_PAGE_SIZE - 1);

	for (int i = 0; i < SH_PAGES; i++)
		if (h->pages[i].used && h->pages[i].port == port &&
		    h->pages[i].va == pva)
			return &h->pages[i];
	return NULL;
}

static uint32_t *pt_row(struct sim_host *h, uint32_t row)
{
	return (uint32_t *)(h->c->chip.sram + L(h)->pt + row * NVM_PT_WAYS * 4);
}

static uint32_t row_of(struct sh_page *pg)
{
	return nvm_pt_hash(pg->port, pg->va >> NVM_PAGE_SHIFT, SH_PT_ROWS);
}

static bool pt_has(struct sim_host *h, struct sh_page *pg)
{
	uint32_t *row = pt_row(h, row_of(pg));

	for (int w = 0; w < NVM_PT_WAYS && row[w]; w++)
		if (row[w] == pg->ppn)
			return true;
	return false;
}

/* mapPage: PMAP fields first, the PPN into the row last. */
static void map_page(struct sim_host *h, struct sh_page *pg)
{
	const struct nvm_sram_layout *l = L(h);
	uint8_t *sram = h->c->chip.sram;
	struct nvm_pmap_entry e = {
		.tag = nvm_pt_tag(pg->port, pg->va >> NVM_PAGE_SHIFT),
		.key = pg->key,
	};
	uint32_t *row = pt_row(h, row_of(pg));
	uint32_t n = 0;

	memcpy(sram + l->pmap + pg->ppn * sizeof(e), &e, sizeof(e));
	sram[l->pmap_flags + pg->ppn] = pg->ro ? NVM_PMAP_RO : 0;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	while (n < NVM_PT_WAYS && row[n])
		n++;
	if (n == NVM_PT_WAYS)
		n = sim_rand(h->c, NVM_PT_WAYS);	/* full row: random victim */
	row[n] = pg->ppn;
}

bool sh_page_in(struct sim_host *h, uint32_t port, uint64_t va)
{
	struct sh_page *pg = page(h, port, va);

	if (!pg)
		return false;
	if (!pg->ppn) {
		pg->ppn = ppn_alloc(h, 1);
		h->ppn_page[pg->ppn] = (uint16_t)(pg - h->pages + 1);
		memcpy(pa(h, (uint64_t)pg->ppn * NVM_PAGE_SIZE), pg->swap,
		       NVM_PAGE_SIZE);
	}
	if (!pt_has(h, pg))
		map_page(h, pg);
	return true;
}

/* unmapPPN: clear the tag, then look at the lock; the NI raises the lock,
 * then looks at the tag.  One of us sees the other. */
bool sh_page_out(struct sim_host *h, uint32_t port, uint64_t va)
{
	const struct nvm_sram_layout *l = L(h);
	uint8_t *sram = h->c->chip.sram;
	struct sh_page *pg = page(h, port, va);
	struct nvm_pmap_entry *e;
	uint64_t tag;
	uint32_t *row;

	if (!pg || !pg->ppn)
		return true;
	e = (struct nvm_pmap_entry *)(sram + l->pmap + pg->ppn * sizeof(*e));
	tag = e->tag;
	e->tag = 0;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (sram[l->pmap_lock + pg->ppn]) {
		e->tag = tag;
		return false;
	}
	row = pt_row(h, row_of(pg));
	for (int w = 0; w < NVM_PT_WAYS && row[w]; w++) {
		if (row[w] == pg->ppn) {
			int last = w;

			while (last + 1 < NVM_PT_WAYS && row[last + 1])
				last++;
			row[w] = row[last];
			row[last] = 0;
			break;
		}
	}
	memcpy(pg->swap, pa(h, (uint64_t)pg->ppn * NVM_PAGE_SIZE), NVM_PAGE_SIZE);
	h->ppn_used[pg->ppn] = 0;
	h->ppn_page[pg->ppn] = 0;
	pg->ppn = 0;
	return true;
}

void sh_alloc(struct sim_host *h, uint32_t port, uint64_t va, uint32_t len,
	      uint64_t key, bool resident)
{
	for (uint64_t p = va & ~(uint64_t)(NVM_PAGE_SIZE - 1); p < va + len;
	     p += NVM_PAGE_SIZE) {
		struct sh_page *pg = page(h, port, p);

		if (!pg) {
			for (int i = 0; i < SH_PAGES && !pg; i++)
				if (!h->pages[i].used)
					pg = &h->pages[i];
			if (!pg)
				abort();
			memset(pg, 0, sizeof(*pg));
			pg->used = 1;
			pg->port = port;
			pg->va = p;
		}
		pg->key = key;
		if (resident)
			sh_page_in(h, port, p);
	}
}

void sh_set_ro(struct sim_host *h, uint32_t port, uint64_t va, bool ro)
{
	struct sh_page *pg = page(h, port, va);

	pg->ro = ro;
	if (pg->ppn)
		h->c->chip.sram[L(h)->pmap_flags + pg->ppn] = ro ? NVM_PMAP_RO : 0;
}

uint8_t *sh_byte(struct sim_host *h, uint32_t port, uint64_t va)
{
	struct sh_page *pg = page(h, port, va);
	uint32_t off = va & (NVM_PAGE_SIZE - 1);

	if (!pg)
		abort();
	if (pg->ppn)
		return pa(h, (uint64_t)pg->ppn * NVM_PAGE_SIZE + off);
	return &pg->swap[off];
}

static uint8_t pat(uint32_t seed, uint64_t i)
{
	uint64_t x = (i + seed) * 0x9e3779b97f4a7c15ull;

	return (uint8_t)(x >> 56);
}

void sh_fill(struct sim_host *h, uint32_t port, uint64_t va, uint32_t len,
	     uint32_t seed)
{
	for (uint32_t i = 0; i < len; i++)
		*sh_byte(h, port, va + i) = pat(seed, i);
}

bool sh_check(struct sim_host *h, uint32_t port, uint64_t va, uint32_t len,
	      uint32_t seed)
{
	for (uint32_t i = 0; i < len; i++)
		if (*sh_byte(h, port, va + i) != pat(seed, i))
			return false;
	return true;
}

static void frag_of(struct sim_host *h, uint32_t port, uint64_t va,
		    uint32_t len, struct nvm_frag *f)
{
	struct sh_page *pg = page(h, port, va);

	f->va = va;
	f->len = len;
	f->key = pg ? pg->key : 0;
	f->hash = nvm_pt_hash(port, va >> NVM_PAGE_SHIFT, SH_PT_ROWS);
}

static uint32_t chunk(uint64_t a, uint64_t b, uint32_t left)
{
	uint32_t n = left;

	if (n > NVM_PAGE_SIZE - (a & (NVM_PAGE_SIZE - 1)))
		n = NVM_PAGE_SIZE - (a & (NVM_PAGE_SIZE - 1));
	if (n > NVM_PAGE_SIZE - (b & (NVM_PAGE_SIZE - 1)))
		n = NVM_PAGE_SIZE - (b & (NVM_PAGE_SIZE - 1));
	return n;
}

uint32_t sh_write(struct sim_host *h, uint32_t port, uint16_t node,
		  uint16_t rport, uint64_t local, uint64_t remote, uint32_t len,
		  uint64_t rkey, uint8_t flags, uint32_t notify)
{
	uint32_t done = 0, cmds = 0;

	do {
		uint32_t n = chunk(local + done, remote + done, len - done);
		struct nvm_cmd c = {
			.op = NVM_OP_WRITE, .dst_node = node, .dst_port = rport,
			.len = n, .dst_va = remote + done, .dst_key = rkey,
			.dst_hash = nvm_pt_hash(rport, (remote + done) >>
						NVM_PAGE_SHIFT, SH_PT_ROWS),
			.flags = flags & ~NVM_CF_NOTIFY, .nfrag = 1, .tag = cmds,
		};

		if (done + n == len && (flags & NVM_CF_NOTIFY)) {
			c.flags |= NVM_CF_NOTIFY;
			c.notify = notify;
		}
		if (n <= NVM_INLINE_MAX && !(flags & NVM_CF_PHYS)) {
			c.flags |= NVM_CF_INLINE;
			for (uint32_t i = 0; i < n; i++)
				c.inline_data[i] = *sh_byte(h, port, local + done + i);
		} else {
			frag_of(h, port, local + done, n, &c.src[0]);
		}
		sh_cmd(h, port, &c);
		cmds++;
		done += n;
	} while (done < len);
	return cmds;
}

uint32_t sh_read(struct sim_host *h, uint32_t port, uint16_t node,
		 uint16_t rport, uint64_t local, uint64_t remote, uint32_t len,
		 uint64_t rkey)
{
	uint32_t done = 0, cmds = 0;

	while (done < len) {
		uint32_t n = chunk(local + done, remote + done, len - done);
		struct nvm_cmd c = {
			.op = NVM_OP_READ, .dst_node = node, .dst_port = rport,
			.len = n, .dst_va = remote + done, .dst_key = rkey,
			.dst_hash = nvm_pt_hash(rport, (remote + done) >>
						NVM_PAGE_SHIFT, SH_PT_ROWS),
			.nfrag = 1, .tag = cmds,
		};

		frag_of(h, port, local + done, n, &c.src[0]);
		sh_cmd(h, port, &c);
		cmds++;
		done += n;
	}
	return cmds;
}

void sh_atomic(struct sim_host *h, uint32_t port, uint16_t node, uint16_t rport,
	       uint64_t remote, uint64_t rkey, uint32_t op, uint32_t a0,
	       uint32_t a1)
{
	struct nvm_cmd c = {
		.op = NVM_OP_ATOMIC, .dst_node = node, .dst_port = rport,
		.dst_va = remote, .dst_key = rkey, .atomic_op = op,
		.dst_hash = nvm_pt_hash(rport, remote >> NVM_PAGE_SHIFT,
					SH_PT_ROWS),
	};

	c.arg[0] = a0;
	c.arg[1] = a1;
	sh_cmd(h, port, &c);
}

struct nvm_shadow sh_shadow(struct sim_host *h, uint32_t port)
{
	struct nvm_shadow s;

	memcpy(&s, pa(h, h->shadow[port]), sizeof(s));
	return s;
}

struct nvm_atomic_reply sh_reply(struct sim_host *h, uint32_t port)
{
	struct nvm_atomic_reply r;

	memcpy(&r, pa(h, h->reply[port]), sizeof(r));
	return r;
}

struct nvm_err_rec sh_err(struct sim_host *h, uint32_t port, uint32_t i)
{
	struct nvm_err_rec r;

	memcpy(&r, pa(h, h->err_ring[port] + (i % NVM_ERR_RING_LEN) * sizeof(r)),
	       sizeof(r));
	return r;
}

bool sh_notf_next(struct sim_host *h, uint32_t port, struct nvm_notf_entry *e)
{
	uint32_t n = h->notf_cons[port];

	memcpy(e, pa(h, h->notf_ring[port] + (n % SH_NOTFQ) * sizeof(*e)),
	       sizeof(*e));
	if (e->phase != (((n / SH_NOTFQ) & 1) ? 0u : 1u) || !e->notify)
		return false;
	h->notf_cons[port]++;
	return true;
}

uint32_t sh_sig(struct sim_host *h, uint32_t port, uint32_t n)
{
	return fw_sram_rd32(&h->c->chip, ep_base(h, port) + NVM_EP_SIG + n * 4);
}

void sh_ack(struct sim_host *h, uint32_t port, uint32_t n, uint32_t v)
{
	fw_sram_wr32(&h->c->chip, ep_base(h, port) + NVM_EP_ACK + n * 4, v);
}

void sh_arm(struct sim_host *h, uint32_t port, uint32_t n, bool on)
{
	h->c->chip.sram[ep_base(h, port) + NVM_EP_ARM + n] = on;
}

static bool handle_event(struct sim_host *h, const struct nvm_event *ev)
{
	if (ev->type == NVM_EV_PAGE_MISS) {
		h->misses++;
		if (!h->auto_fault)
			return false;
		sh_page_in(h, ev->endpoint, ev->arg);
		{
			/* only what waits for this page retries */
			struct nvm_cmd c = { .op = NVM_KOP_RESTART,
					     .dst_port = ev->endpoint };

			c.arg[0] = (uint32_t)(ev->arg & ~(uint64_t)4095);
			c.arg[1] = (uint32_t)(ev->arg >> 32);
			sh_cmd(h, NVM_EP_KERNEL, &c);
		}
		return true;
	}
	if (ev->type == NVM_EV_BOUNCE) {
		uint32_t node = ev->data, seq = (uint32_t)ev->arg;
		uint64_t slot = h->bounce + ((uint64_t)node * FW_NV_WIN +
					     seq % FW_NV_WIN) * NVM_BOUNCE_SLOT;
		struct nvm_net_hdr hd;
		uint64_t va;
		uint32_t len;

		memcpy(&hd, pa(h, slot), sizeof(hd));
		va = __builtin_bswap64(hd.va);
		len = __builtin_bswap32(hd.len);
		/* the paging thread: fault the page in, copy, return the credit;
		 * an address the process does not have fails the writer */
		if (node >= MAX_NODES || len > NVM_PAGE_SIZE ||
		    !sh_page_in(h, ev->endpoint, va) ||
		    (va & (NVM_PAGE_SIZE - 1)) + len > NVM_PAGE_SIZE) {
			struct nvm_cmd c = { .op = NVM_KOP_CREDIT,
					     .dst_node = (uint16_t)node };

			c.arg[0] = seq;
			c.arg[1] = NVM_ST_BAD_ADDR;
			h->bounces_refused++;
			sh_cmd(h, NVM_EP_KERNEL, &c);
			return true;
		}
		memcpy(sh_byte(h, ev->endpoint, va), pa(h, slot + sizeof(hd)), len);
		h->bounces_copied++;
		kcmd(h, NVM_KOP_CREDIT, (uint16_t)node, 0, seq, NULL, 0);
		return true;
	}
	return false;
}

bool sh_idle(void *ctx)
{
	struct sim_host *h = ctx;
	bool did = false;

	while (h->events_seen < h->c->nevents)
		did |= handle_event(h, &h->c->events[h->events_seen++]);
	return did;
}

static struct sim_host *pair[2];

static bool pair_idle(void *ctx)
{
	bool a, b;

	(void)ctx;
	a = pair[0] ? sh_idle(pair[0]) : false;
	b = pair[1] ? sh_idle(pair[1]) : false;
	return a || b;
}

void sh_pair(struct sim_host *a, struct sim_host *b)
{
	pair[0] = a;
	pair[1] = b;
	sim_set_idle(pair_idle, NULL);
}

void sh_settle(void)
{
	sim_settle(pair[0]->c, pair[1]->c);
}

void sh_two_nodes(struct sim_chip *a, struct sim_chip *b,
		  struct sim_host *ha, struct sim_host *hb)
{
	sim_init(a, 0, LANAI_SRAM_DEFAULT);
	sim_init(b, 1, LANAI_SRAM_DEFAULT);
	sim_connect(a, b);
	sim_boot(a);
	sim_boot(b);
	sh_pair(ha, hb);
	sh_init(ha, a, 0xa0a0a0a0);
	sh_init(hb, b, 0xb0b0b0b0);
}
