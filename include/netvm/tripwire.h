/* SPDX-License-Identifier: (GPL-2.0-only OR MIT) */
/*
 * Tripwires (the CLAN NIC's, in NetVM's firmware): address-range triggers
 * on NetVM remote reads and writes.  docs/tripwire.md.
 *
 * A tripwire watches [va, va + len) of endpoint `port` on node `node`, one
 * page at most and not crossing a page boundary (the library splits longer
 * ranges into a tripset).  INCOMING tripwires watch this node's own memory
 * (node = this node) as peers access it; OUTGOING ones watch this node's
 * own accesses to a remote node's memory.  When an access matches, the
 * firmware queues a struct nvm_notf_entry of kind NVM_NOTF_KIND_TRIP on
 * the owner endpoint's notification queue (dequeued without a system
 * call; the fd polls readable) and interrupts only when the owner armed
 * the queue (it is blocked).  A ONCE tripwire is disarmed by its first hit.
 *
 * The kernel sets and clears them with kernel commands on endpoint 0; the
 * driver owns the id space and checks that a process watches only what it
 * exported or imported.
 */
#ifndef NETVM_TRIPWIRE_H
#define NETVM_TRIPWIRE_H

#include "abi_types.h"

#define NVM_TW_MAX		4096	/* tripwires per NIC */

/* access kinds and modes (flags) */
#define NVM_TW_READ		NVM_BIT(0)	/* reads (and atomics) */
#define NVM_TW_WRITE		NVM_BIT(1)	/* writes (and atomics) */
#define NVM_TW_OUTGOING		NVM_BIT(2)	/* our accesses to node:port */
#define NVM_TW_ONCE		NVM_BIT(3)	/* disarmed by its first hit */
#define NVM_TW_FLAGS		0x0f

/*
 * NVM_KOP_TRIP_SET and NVM_KOP_TRIP_CLEAR (netvm/kop.h) set and clear
 * them.  Closing the owner endpoint (NVM_KOP_EP_CLOSE) clears its
 * tripwires.
 */

/* struct nvm_notf_entry.kind; for a tripwire, notify = its id + 1 (a
 * queue entry never has notify 0), src_node /
 * src_port = the node and endpoint that made the access (for OUTGOING:
 * the target), info = the access (NVM_TW_READ, NVM_TW_WRITE, OUTGOING). */
#define NVM_NOTF_KIND_NOTIFY	0
#define NVM_NOTF_KIND_TRIP	1

#endif /* NETVM_TRIPWIRE_H */
