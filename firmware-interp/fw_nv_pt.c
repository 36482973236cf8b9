// SPDX-License-Identifier: GPL-2.0-only
/*
 * The shadow page table, from the NI's side (NetVM's lockPage/unlockPage).
 *
 * The host alone writes the table: rows of up to NVM_PT_WAYS PPNs at the
 * row it computes with nvm_pt_hash(), and per-PPN PMAP entries (tag = port
 * and VPN, key) written before the PPN.  The NI only reads them, and owns
 * the per-page lock count and NI dirty bit.
 *
 * lockPage races the host's unmapPPN by a two-word protocol: the NI raises
 * the lock, then (after a full fence) checks the tag; the host clears the
 * tag, then (after a full fence) checks the lock, and puts the tag back if
 * the page was locked.  Either the NI sees the cleared tag and backs off,
 * or the host sees the lock and waits: never both proceed.  A test can
 * make the NI keep one lock past its access (NVM_KOP_LOCK_HOLD) to show
 * the host waiting.
 *
 * Every value read from SRAM is range-checked: the host can write any of
 * it, and a bad table must fail a lookup, never the emulator.
 *
 * Physical addressing (NVM_CF_PHYS) skips the table, so it has its own
 * grant: the windows the kernel registered with NVM_KOP_PHYS_WIN.  A
 * peer's physical access is served only inside one of them, open to that
 * peer for that access; nothing in the frame can widen them.
 */
#include <string.h>

#include "fw.h"

static bool tables_ready(struct fw *fw)
{
	return fw->nv.configured && fw->layout.pt_rows && fw->layout.max_ppn;
}

int64_t fw_nv_pt_lock(struct fw *fw, uint32_t port, uint64_t va, uint32_t hash)
{
	struct nvm_sram_layout *l = &fw->layout;
	uint8_t *sram = fw->chip->sram;
	uint64_t tag = nvm_pt_tag(port, va >> NVM_PAGE_SHIFT);

	if (!tables_ready(fw) || hash >= l->pt_rows)
		return -1;
	for (uint32_t w = 0; w < NVM_PT_WAYS; w++) {
		uint32_t ppn = fw_sram_rd32(fw->chip, l->pt +
					    (hash * NVM_PT_WAYS + w) * 4);
		struct nvm_pmap_entry e;

		if (ppn == 0)
			break;			/* end of the row */
		if (ppn >= l->max_ppn)
			continue;
		if (sram[l->pmap_lock + ppn] == 0xff)
			continue;		/* lock count saturated */
		sram[l->pmap_lock + ppn]++;
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		memcpy(&e, sram + l->pmap + ppn * sizeof(e), sizeof(e));
		if (e.tag == tag && tag) {
			if (fw->hold_port == port + 1 &&
			    sram[l->pmap_lock + ppn] < 0xff) {
				sram[l->pmap_lock + ppn]++;	/* the test hold */
				fw->hold_port = 0;
				fw->hold_ppn = ppn + 1;
			}
			return ppn;
		}
		sram[l->pmap_lock + ppn]--;
	}
	return -1;
}

/*
 * NVM_KOP_LOCK_HOLD: arm the hold for @port (@on), or disarm it and give
 * back the lock count it holds.  Only one hold at a time.
 */
uint32_t fw_nv_pt_hold(struct fw *fw, uint32_t port, uint32_t on)
{
	if (on > 1 || port >= FW_NV_EPS)
		return NVM_ST_BAD_CMD;
	if (on) {
		if (fw->hold_ppn)
			return NVM_ST_BAD_CMD;	/* release the one held first */
		fw->hold_port = port + 1;
		return NVM_ST_OK;
	}
	fw->hold_port = 0;
	if (fw->hold_ppn)	/* unlock checks the PPN (saved state is data) */
		fw_nv_pt_unlock(fw, fw->hold_ppn - 1, false);
	fw->hold_ppn = 0;
	return NVM_ST_OK;
}

void fw_nv_pt_unlock(struct fw *fw, uint32_t ppn, bool dirty)
{
	struct nvm_sram_layout *l = &fw->layout;
	uint8_t *sram = fw->chip->sram;

	if (!tables_ready(fw) || ppn >= l->max_ppn)
		return;
	if (dirty)	/* unlockPageDirty: NI bit := host bit (equal = dirty) */
		sram[l->pmap_ndirty + ppn] = sram[l->pmap_hdirty + ppn];
	__atomic_thread_fence(__ATOMIC_RELEASE);
	if (sram[l->pmap_lock + ppn])
		sram[l->pmap_lock + ppn]--;
}

bool fw_nv_pt_key_ok(struct fw *fw, uint32_t ppn, uint64_t key)
{
	struct nvm_pmap_entry e;

	memcpy(&e, fw->chip->sram + fw->layout.pmap + ppn * sizeof(e),
	       sizeof(e));
	return e.key == key;
}

bool fw_nv_pt_read_only(struct fw *fw, uint32_t ppn)
{
	return fw->chip->sram[fw->layout.pmap_flags + ppn] & NVM_PMAP_RO;
}

uint32_t fw_nv_phys_win_set(struct fw *fw, const struct nvm_k_phys_win *k)
{
	struct fw_nv_phys_win *w;

	if (k->slot >= NVM_PHYS_WINS || k->reserved[0] || k->reserved[1] ||
	    (k->access & ~(NVM_PW_READ | NVM_PW_WRITE)) ||
	    k->base + k->len < k->base)
		return NVM_ST_BAD_CMD;
	w = &fw->nv.phys_win[k->slot];
	memset(w, 0, sizeof(*w));
	if (!k->len)
		return NVM_ST_OK;	/* closed */
	w->base = k->base;
	w->len = k->len;
	w->peers = k->peers;
	w->access = k->access;
	return NVM_ST_OK;
}

/* May @node reach [addr, addr + len) by physical address with @access? */
bool fw_nv_phys_ok(struct fw *fw, uint32_t node, uint64_t addr, uint32_t len,
		   uint32_t access)
{
	if (node >= FW_NV_NODES || addr + len < addr)
		return false;
	for (uint32_t i = 0; i < NVM_PHYS_WINS; i++) {
		const struct fw_nv_phys_win *w = &fw->nv.phys_win[i];

		/* saved state is data too: never trust base + len */
		if (w->len && (w->peers >> node & 1) &&
		    (w->access & access) == access && addr >= w->base &&
		    addr - w->base <= w->len && len <= w->len - (addr - w->base))
			return true;
	}
	return false;
}
