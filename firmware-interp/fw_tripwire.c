// SPDX-License-Identifier: GPL-2.0-only
/*
 * Tripwires: address-range triggers on NetVM's remote reads and writes
 * (include/netvm/tripwire.h, docs/tripwire.md).
 *
 * The CLAN NIC matched 4096 tripwires with a CAM.  Here a tripwire covers
 * at most one page, so it lives in exactly one bucket of a hash on
 * (node, port, page); an access (also at most one page: NetVM moves data
 * a page fragment at a time) looks at one bucket.  Hits are queued on the
 * owner endpoint's notification queue through the ordered host-write
 * queue, so the event reaches the host after the data that caused it.
 */
#include <string.h>

#include "fw.h"
#include "netvm/netvm_fw.h"
#include "fw_load.h"

static uint32_t bucket(uint32_t node, uint32_t port, uint64_t va)
{
	uint64_t page = va / NVM_PAGE_SIZE;

	return (uint32_t)(((page * 0x9e3779b97f4a7c15ull) >> 40) ^
			  (node * 131u) ^ (port * 31u)) % FW_TW_BUCKETS;
}

static void unlink_entry(struct fw *fw, uint32_t id)
{
	struct fw_tw_entry *t = &fw->tw.e[id];
	uint16_t *pp = &fw->tw.head[bucket(t->node, t->port, t->va)];

	while (*pp && *pp != id + 1)
		pp = &fw->tw.e[*pp - 1].next;
	if (*pp)
		*pp = t->next;
	memset(t, 0, sizeof(*t));
	fw->tw.count--;
}

static uint32_t tw_set(struct fw *fw, const struct nvm_cmd *c)
{
	uint32_t id = c->arg[0], flags = c->arg[1], owner = c->arg[2];
	uint64_t off = c->dst_va & (NVM_PAGE_SIZE - 1);
	struct fw_tw_entry *t;
	uint32_t b;

	if (id >= NVM_TW_MAX || fw->tw.e[id].len || (flags & ~NVM_TW_FLAGS) ||
	    !(flags & (NVM_TW_READ | NVM_TW_WRITE)) || !c->len ||
	    off + c->len > NVM_PAGE_SIZE || c->dst_node >= FW_NV_NODES ||
	    c->dst_port >= FW_NV_EPS || owner >= FW_NV_EPS ||
	    !fw->nv.ep[owner].open)
		return NVM_ST_BAD_CMD;
	/* incoming tripwires watch our memory, outgoing ones someone else's */
	if (!(flags & NVM_TW_OUTGOING) != (c->dst_node == fw->chip->node_id))
		return NVM_ST_BAD_CMD;
	t = &fw->tw.e[id];
	t->va = c->dst_va;
	t->len = (uint16_t)c->len;
	t->flags = (uint16_t)flags;
	t->node = c->dst_node;
	t->port = c->dst_port;
	t->owner = (uint16_t)owner;
	t->hits = 0;
	b = bucket(t->node, t->port, t->va);
	t->next = fw->tw.head[b];
	fw->tw.head[b] = (uint16_t)(id + 1);
	fw->tw.count++;
	return NVM_ST_OK;
}

static uint32_t tw_kop(struct fw *fw, const struct nvm_cmd *c)
{
	switch (c->op) {
	case NVM_KOP_TRIP_SET:
		return tw_set(fw, c);
	case NVM_KOP_TRIP_CLEAR:
		if (c->arg[0] >= NVM_TW_MAX || !fw->tw.e[c->arg[0]].len)
			return NVM_ST_BAD_CMD;
		unlink_entry(fw, c->arg[0]);
		return NVM_ST_OK;
	default:
		return FW_KOP_UNCLAIMED;
	}
}

void fw_tw_clear_owner(struct fw *fw, uint32_t owner)
{
	for (uint32_t id = 0; id < NVM_TW_MAX && fw->tw.count; id++)
		if (fw->tw.e[id].len && fw->tw.e[id].owner == owner)
			unlink_entry(fw, id);
}

void fw_tw_access(struct fw *fw, uint32_t access, uint32_t node,
		  uint32_t port, uint64_t va, uint32_t len, uint32_t by_node,
		  uint32_t by_port)
{
	uint32_t dir = access & NVM_TW_OUTGOING;
	uint16_t link, next;

	if (!fw->tw.count || !len)
		return;
	for (link = fw->tw.head[bucket(node, port, va)]; link; link = next) {
		uint32_t id = link - 1u;
		struct fw_tw_entry *t = &fw->tw.e[id];

		next = t->next;
		if (t->node != node || t->port != port ||
		    (t->flags & NVM_TW_OUTGOING) != dir ||
		    !(t->flags & access & (NVM_TW_READ | NVM_TW_WRITE)) ||
		    va >= t->va + t->len || t->va >= va + len)
			continue;
		t->hits++;
		fw_count(fw, FW_CNT_TRIPWIRES);
		fw_tr_fw_tripwire(fw, id, t->owner);
		fw_nv_notf_queue(fw, t->owner, NVM_NOTF_KIND_TRIP, id + 1,
				 by_node, by_port, (uint16_t)access, 0);
		if (t->flags & NVM_TW_ONCE)
			unlink_entry(fw, id);
	}
}

/* Loading saved state (fw_load.c): ids + 1 in range, and each bucket's
 * chain ends (a cycle would spin fw_tw_access for ever). */
static bool tw_chain_ok(const struct fw_tw *tw, uint32_t b)
{
	uint32_t steps = 0;

	for (uint16_t link = tw->head[b]; link; link = tw->e[link - 1].next)
		if (++steps > NVM_TW_MAX)
			return false;
	return true;
}

bool fw_tw_state_ok(const struct fw *fw, const char **what)
{
	const struct fw_tw *tw = &fw->tw;

	FW_LOAD_CHECK(tw->count <= NVM_TW_MAX);
	for (uint32_t i = 0; i < NVM_TW_MAX; i++) {
		FW_LOAD_CHECK(tw->e[i].next <= NVM_TW_MAX);
		FW_LOAD_CHECK(tw->e[i].len <= NVM_PAGE_SIZE);
		FW_LOAD_CHECK(!tw->e[i].len || tw->e[i].owner < FW_NV_EPS);
	}
	for (uint32_t b = 0; b < FW_TW_BUCKETS; b++) {
		FW_LOAD_CHECK(tw->head[b] <= NVM_TW_MAX);
		FW_LOAD_CHECK(tw_chain_ok(tw, b));
	}
	return true;
}

/* Tripwires receive nothing and send nothing: they watch NetVM's
 * accesses (fw_tw_access) and are set by kernel commands. */
const struct fw_program fw_prog_tripwire = {
	.name = "tripwire",
	.pkt_type = FW_PKT_NONE,
	.kernel_cmd = tw_kop,
};
