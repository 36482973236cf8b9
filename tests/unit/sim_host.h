/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A simulated host OS and user library for NetVM firmware tests, on top of
 * sim_chip: processes with virtual pages that may be resident or not, the
 * kernel's side of the shadow page table (mapPage / unmapPPN), the kernel
 * endpoint's control commands, page-miss restarts and bounce-buffer
 * completion, and a small "library" that fragments transfers into
 * page-granular commands as libnetvm does.
 */
#ifndef NETVM_SIM_HOST_H
#define NETVM_SIM_HOST_H

#include "sim_chip.h"

#define SH_PAGES	1024		/* virtual pages the test processes use */
#define SH_PT_ROWS	512
#define SH_NOTFQ	256

struct sh_page {
	uint32_t used, port, ppn;	/* ppn 0 = not resident */
	uint64_t va;			/* page address */
	uint64_t key;
	uint32_t ro;
	uint8_t swap[NVM_PAGE_SIZE];	/* contents while not resident */
};

#define SH_AREAS	32		/* kernel areas the NIC may touch */
#define SH_SECRET_PAGES	4		/* kernel memory no one granted */

/*
 * The grant invariant: every host DMA of the simulated NIC touches only a
 * resident page of some process (mapped by the kernel into the shadow
 * page table, with its key) or an area the kernel registered with the NIC
 * (endpoint areas, the bounce buffer, physical windows, test areas).
 * sim_host checks each DMA (sim_chip's dma_hook); the tests' teardown
 * asserts sh_dma_violations() == 0, so every test holds it.
 */
struct sh_area {
	uint64_t base, len;
};

struct sim_host {
	struct sim_chip *c;
	struct sh_area areas[SH_AREAS];
	uint32_t nareas;
	uint16_t ppn_page[SIM_HOST_SIZE / NVM_PAGE_SIZE + SIM_HOST_BASE / NVM_PAGE_SIZE];
	uint64_t secret;		/* SH_SECRET_PAGES of kernel memory */
	uint32_t dma_bad;		/* DMAs outside every grant */
	uint64_t dma_bad_addr;		/* the first of them */
	uint32_t dma_bad_len, dma_bad_write;
	uint32_t next_free_ppn;
	uint8_t ppn_used[SIM_HOST_SIZE / NVM_PAGE_SIZE + SIM_HOST_BASE / NVM_PAGE_SIZE];
	struct sh_page pages[SH_PAGES];
	uint32_t row_count[SH_PT_ROWS];
	uint64_t shadow[FW_NV_EPS], err_ring[FW_NV_EPS], reply[FW_NV_EPS];
	uint64_t notf_ring[FW_NV_EPS];
	uint32_t notf_cons[FW_NV_EPS];
	uint32_t issued[FW_NV_EPS];
	uint64_t bounce;
	uint32_t events_seen;
	uint32_t auto_fault;		/* 1: page misses fault the page in */
	uint32_t misses, bounces_copied, bounces_refused;
};

void sh_init(struct sim_host *h, struct sim_chip *c, uint32_t epoch);
/* NVM_KOP_CONFIG's giveup_ms for the next sh_init (0: the default). */
extern uint32_t sh_giveup_ms;
/* Kernel memory: @pages contiguous pages, zeroed; the NIC may touch them
 * (a registered area). */
uint64_t sh_kalloc(struct sim_host *h, uint32_t pages);
/* Register [base, base + len) as an area the NIC may touch. */
void sh_area(struct sim_host *h, uint64_t base, uint64_t len);
/* Open physical window @slot for @peers (bit per node) with NVM_PW_*
 * (NVM_KOP_PHYS_WIN); len 0 closes it.  Issued, not waited for. */
void sh_phys_win(struct sim_host *h, uint32_t slot, uint64_t base,
		 uint64_t len, uint64_t peers, uint32_t access);
/* DMAs so far that touched memory no one granted (0 = invariant held);
 * also checks the kernel's secret pages are untouched. */
uint32_t sh_dma_violations(struct sim_host *h);
uint32_t sh_open(struct sim_host *h, uint32_t port);
/* Give a process (port) pages [va, va+len) with key; resident or not. */
void sh_alloc(struct sim_host *h, uint32_t port, uint64_t va, uint32_t len,
	      uint64_t key, bool resident);
void sh_set_ro(struct sim_host *h, uint32_t port, uint64_t va, bool ro);
/* Page in/out with NetVM's protocol; page_out returns false if locked. */
bool sh_page_in(struct sim_host *h, uint32_t port, uint64_t va);
bool sh_page_out(struct sim_host *h, uint32_t port, uint64_t va);
/* Byte access to a process's memory, resident or not. */
uint8_t *sh_byte(struct sim_host *h, uint32_t port, uint64_t va);
void sh_fill(struct sim_host *h, uint32_t port, uint64_t va, uint32_t len,
	     uint32_t seed);
bool sh_check(struct sim_host *h, uint32_t port, uint64_t va, uint32_t len,
	      uint32_t seed);
/* Issue one command on port (waits for a queue slot). */
void sh_cmd(struct sim_host *h, uint32_t port, struct nvm_cmd *c);
/* Library-style transfers: fragment at page boundaries on both sides. */
uint32_t sh_write(struct sim_host *h, uint32_t port, uint16_t node,
		  uint16_t rport, uint64_t local, uint64_t remote, uint32_t len,
		  uint64_t rkey, uint8_t flags, uint32_t notify);
uint32_t sh_read(struct sim_host *h, uint32_t port, uint16_t node,
		 uint16_t rport, uint64_t local, uint64_t remote, uint32_t len,
		 uint64_t rkey);
void sh_atomic(struct sim_host *h, uint32_t port, uint16_t node, uint16_t rport,
	       uint64_t remote, uint64_t rkey, uint32_t op, uint32_t a0,
	       uint32_t a1);
struct nvm_shadow sh_shadow(struct sim_host *h, uint32_t port);
struct nvm_atomic_reply sh_reply(struct sim_host *h, uint32_t port);
struct nvm_err_rec sh_err(struct sim_host *h, uint32_t port, uint32_t i);
/* Notification queue: next entry or false; sig/ack/arm in SRAM. */
bool sh_notf_next(struct sim_host *h, uint32_t port, struct nvm_notf_entry *e);
uint32_t sh_sig(struct sim_host *h, uint32_t port, uint32_t n);
void sh_ack(struct sim_host *h, uint32_t port, uint32_t n, uint32_t v);
void sh_arm(struct sim_host *h, uint32_t port, uint32_t n, bool on);
/* The OS's reaction to the chip's events (page misses, bounces). */
bool sh_idle(void *ctx);
/* Both hosts' OS hooks for sim_settle. */
void sh_pair(struct sim_host *a, struct sim_host *b);
/* sim_settle of the paired hosts' chips (sh_pair's @a's, then @b's). */
void sh_settle(void);
/*
 * The two-node bench most firmware tests stand on: chips @a (node 0) and
 * @b (node 1) with the default SRAM, connected and booted, their hosts
 * @ha and @hb paired and configured (sh_init).  The configuration is
 * issued, not yet settled: a test may register areas first.
 */
void sh_two_nodes(struct sim_chip *a, struct sim_chip *b,
		  struct sim_host *ha, struct sim_host *hb);

#endif
