/* SPDX-License-Identifier: (GPL-2.0-only WITH Linux-syscall-note OR MIT) */
/*
 * The interface between netvm.ko and user space: ioctls on /dev/netvmN.
 * libnetvm is the supported way to use it; tools may use it directly.
 */
#ifndef NETVM_UAPI_H
#define NETVM_UAPI_H

#include "abi_types.h"
#ifdef __KERNEL__
#include <linux/ioctl.h>
#else
#include <sys/ioctl.h>
#endif

#define NETVM_DEV_PREFIX	"netvm"		/* /dev/netvm0, /dev/netvm1, ... */

struct netvm_info {
	uint32_t abi_version;	/* NVM_ABI_VERSION of the device */
	uint32_t fw_version;
	uint32_t node_id;
	uint32_t link;		/* NVM_LINK_* */
	uint32_t sram_size;
	uint32_t max_endpoints;
	uint32_t raw_max_payload;
	uint32_t reserved[9];
};

/* Send one raw frame; blocks until the NIC has put it on the wire. */
struct netvm_raw_send {
	uint64_t buf;		/* user pointer to the payload */
	uint32_t len;		/* 1 .. raw_max_payload */
	uint8_t route_len;	/* 0 .. 8 */
	uint8_t route[8];
	uint8_t reserved[3];
};

/* Receive one raw frame, waiting at most timeout_ms (0 = don't wait). */
struct netvm_raw_recv {
	uint64_t buf;		/* user pointer */
	uint32_t len;		/* in: buffer size; out: frame length */
	uint32_t timeout_ms;
	uint32_t src_node;	/* out */
	uint32_t reserved;
};

#define NETVM_IOC_MAGIC		'N'
#define NETVM_IOC_INFO		_IOR(NETVM_IOC_MAGIC, 0x00, struct netvm_info)
#define NETVM_IOC_RAW_SEND	_IOW(NETVM_IOC_MAGIC, 0x01, struct netvm_raw_send)
#define NETVM_IOC_RAW_RECV	_IOWR(NETVM_IOC_MAGIC, 0x02, struct netvm_raw_recv)

/*
 * Kernel-side NetVM tests and benchmarks (root only): the driver's
 * physical-address commands (writeP, readP, atomics) between the kernels,
 * on a 1 MiB physically contiguous test window per node.  The window's
 * physical address is /sys/class/netvm/netvmN/ktest_pa (and window_pa).
 */
#define NETVM_KTEST_WINDOW	(1u << 20)

enum netvm_ktest_op {
	NETVM_KTEST_WRITE = 1,	/* local window [offset, +len) -> remote_pa */
	NETVM_KTEST_READ = 2,	/* remote_pa -> local window [offset, +len) */
	NETVM_KTEST_ATOMIC = 3,	/* atomic_op(arg) on the word at remote_pa */
	NETVM_KTEST_FILL = 4,	/* local window [offset, +len) = pattern(seed) */
	NETVM_KTEST_CHECK = 5,	/* compare; bad_offset = first mismatch or ~0 */
	NETVM_KTEST_INFO = 6,	/* only the window fields */
};

/*
 * Byte i of a pattern range seeded by seed (FILL, CHECK; the guest test
 * programs use it too): a hash of both, so that the pattern never repeats
 * within a range and a byte at the wrong offset, or from another seed's
 * range, does not pass for the right one.
 */
static inline uint8_t netvm_ktest_pattern(uint32_t seed, uint64_t i)
{
	uint64_t x = (i + 1) * 0x9e3779b97f4a7c15ull ^
		     ((uint64_t)seed + 1) * 0xbf58476d1ce4e5b9ull;

	x ^= x >> 31;
	x *= 0x94d049bb133111ebull;
	return (uint8_t)(x >> 56);
}

struct netvm_ktest {
	uint32_t op;		/* enum netvm_ktest_op */
	uint32_t node;		/* remote node (WRITE, READ, ATOMIC) */
	uint64_t remote_pa;	/* remote physical (bus) address */
	uint32_t offset;	/* into the local window */
	uint32_t len;		/* bytes, offset + len <= NETVM_KTEST_WINDOW */
	uint32_t seed;		/* FILL, CHECK */
	uint32_t atomic_op;	/* enum nvm_atomic_op */
	uint32_t arg[2];	/* atomic arguments */
	uint32_t result[3];	/* out: atomic r0..r2; CHECK: got, want */
	uint32_t bad_offset;	/* out: CHECK */
	uint64_t window_pa;	/* out: the local window's physical address */
	uint32_t window_size;	/* out */
	uint32_t reserved[5];
};

/* Repeat one transfer: per-iteration times, @inflight commands in flight. */
struct netvm_kbench {
	uint32_t op;		/* NETVM_KTEST_WRITE or NETVM_KTEST_READ */
	uint32_t node;
	uint64_t remote_pa;	/* remote [remote_pa, +size) */
	uint32_t size;		/* 1 .. NETVM_KTEST_WINDOW (local offset 0) */
	uint32_t iterations;	/* 1 .. 100000 */
	uint32_t inflight;	/* 1 .. 32 commands in flight */
	uint32_t reserved0;
	uint64_t total_ns;	/* out: all iterations */
	uint64_t min_ns;	/* out: per iteration */
	uint64_t median_ns;
	uint64_t p99_ns;
	uint64_t bytes;		/* out: size * iterations */
	uint32_t reserved[4];
};

#define NETVM_IOC_KTEST		_IOWR(NETVM_IOC_MAGIC, 0x10, struct netvm_ktest)
#define NETVM_IOC_KBENCH	_IOWR(NETVM_IOC_MAGIC, 0x11, struct netvm_kbench)

/*
 * User endpoints (NetVM).  NETVM_IOC_EP_OPEN gives this open file an
 * endpoint (port 1..max_endpoints-1) and fills struct netvm_ep_info; a file
 * without one keeps working for raw frames.  mmap() of the file then gives
 * only this endpoint's own memory, at fixed offsets:
 *   NETVM_EP_MMAP_SRAM: its 32 KiB SRAM region (command queue, ack, sig,
 *                       arm, status; see netvm_fw.h), uncached;
 *   NETVM_EP_MMAP_DB:   its doorbell page (write the issued count);
 *   NETVM_EP_MMAP_HOST: its pinned host areas, host_size bytes: shadow
 *                       counters, error ring, atomic reply, notification
 *                       ring at the offsets given, and notf_cons, a
 *                       uint32_t the process writes (notification entries
 *                       consumed) so that poll() knows what is new.
 * Closing the file (or the process exiting) closes the endpoint and
 * drops its exports.  The mapping and the ioctls below are refused to any
 * process but the one that opened the endpoint.
 */
#define NETVM_EP_MMAP_SRAM	0x0000u
#define NETVM_EP_MMAP_DB	0x8000u
#define NETVM_EP_MMAP_HOST	0x9000u

struct netvm_ep_info {
	uint32_t port;
	uint32_t node_id;
	uint32_t pt_rows;	/* for nvm_pt_hash() of this node's pages */
	uint32_t notf_len;	/* notification ring entries */
	uint32_t sram_size;	/* NVM_EP_STRIDE */
	uint32_t db_size;	/* one page */
	uint32_t host_size;	/* bytes at NETVM_EP_MMAP_HOST */
	uint32_t shadow_off;	/* offsets into the host areas */
	uint32_t err_off;	/* struct nvm_err_rec[err_len] */
	uint32_t err_len;
	uint32_t reply_off;	/* struct nvm_atomic_reply */
	uint32_t notf_off;	/* struct nvm_notf_entry[notf_len] */
	uint32_t notf_cons_off;	/* uint32_t written by the process */
	uint32_t reserved[7];
};

/*
 * Export [addr, addr + len) of the caller's address space (rounded out to
 * pages) under a random 64-bit key.  Nothing is pinned: the driver keeps
 * the NIC's page table in step with the process's (docs/driver.md).
 */
#define NETVM_EXPORT_RO		0x1	/* remote writes and atomics fail */

#define NETVM_EXPORT_NAME_LEN	32	/* bytes of a name, its NUL included */
#define NETVM_EXPORT_MAX	(1ull << 30)	/* bytes one export covers */

struct netvm_export_req {
	uint64_t addr;
	uint64_t len;		/* bytes, at most NETVM_EXPORT_MAX */
	uint32_t flags;		/* NETVM_EXPORT_* */
	uint32_t reserved;
	uint64_t key;		/* out */
	char name[NETVM_EXPORT_NAME_LEN];	/* NUL-terminated: what importers
					 * ask for */
};

struct netvm_unexport_req {
	uint64_t addr;		/* as given to NETVM_IOC_EXPORT */
	uint64_t reserved;
};

/*
 * A fresh random key and a new name for the export at @addr: whatever was
 * granted under the old key (and imports by the old name) fails from now
 * on, and no access under it is still moving bytes when the call returns,
 * while the NIC's translations of its pages stay.  A buffer exported
 * again and again (a rendezvous's) then costs this instead of an unexport
 * and an export, which unmap and fault every page again.
 */
struct netvm_rekey_req {
	uint64_t addr;		/* as given to NETVM_IOC_EXPORT */
	uint64_t key;		/* out */
	char name[NETVM_EXPORT_NAME_LEN];	/* the new one, NUL-terminated */
};

#define NETVM_IOC_EP_OPEN	_IOR(NETVM_IOC_MAGIC, 0x20, struct netvm_ep_info)
#define NETVM_IOC_EP_INFO	_IOR(NETVM_IOC_MAGIC, 0x21, struct netvm_ep_info)
#define NETVM_IOC_EXPORT	_IOWR(NETVM_IOC_MAGIC, 0x22, struct netvm_export_req)
#define NETVM_IOC_UNEXPORT	_IOW(NETVM_IOC_MAGIC, 0x23, struct netvm_unexport_req)
#define NETVM_IOC_REKEY	_IOWR(NETVM_IOC_MAGIC, 0x26, struct netvm_rekey_req)

/*
 * Import the export called @name of port @port on node @node: the driver
 * asks that node's kernel over the NIC (a kernel-control raw frame) and
 * waits up to timeout_ms (0: 5000; at most 60000) for its answer.  Needs
 * no endpoint on this file.  Errors: ENOENT (no such port or name there),
 * ETIMEDOUT (no answer), EHOSTUNREACH (the frame reached another node, or
 * no route), ENOLINK, EINTR, ENODEV (NetVM off), EINVAL.
 */
struct netvm_import_req {
	uint32_t node;
	uint32_t port;
	char name[NETVM_EXPORT_NAME_LEN];	/* NUL-terminated */
	uint32_t timeout_ms;
	uint32_t reserved;
	uint64_t addr;		/* out: the exporter's address, as exported */
	uint64_t len;		/* out: bytes, as exported */
	uint64_t key;		/* out */
	uint32_t pt_rows;	/* out: the remote node's nvm_pt_hash rows */
	uint32_t flags;		/* out: NETVM_EXPORT_RO */
	uint32_t reserved2[4];
};

#define NETVM_IOC_IMPORT	_IOWR(NETVM_IOC_MAGIC, 0x24, struct netvm_import_req)

/*
 * Signals for notifications: on a file with an endpoint,
 * fcntl(fd, F_SETOWN, pid) and fcntl(fd, F_SETFL, flags | O_ASYNC) make
 * every notification interrupt of the endpoint send SIGIO to the owner
 * (or the signal chosen with F_SETSIG, with si_code POLL_IN and si_fd).
 * O_ASYNC without an endpoint fails with ENXIO; only the endpoint's
 * process may set it (EACCES).  No ioctl is involved.
 */

/*
 * Benchmark of the shadow page table (root only): on the caller's
 * exported, page-aligned range [addr, +npages pages), `iterations` times:
 * look the pages up (hmm_range_fault), install every translation, remove
 * every one, then pin (pin_user_pages_fast, FOLL_LONGTERM) and unpin
 * them.  Out: the sums in ns and the pages handled per phase.  Errors:
 * EPERM, EINVAL (range not in one export, reserved not 0, limits),
 * ENODEV, ENXIO (no endpoint), EFAULT, ENOMEM.
 */
#define NETVM_PTBENCH_MAX_PAGES	4096
#define NETVM_PTBENCH_MAX_ITER	1000

struct netvm_ptbench {
	uint64_t addr;
	uint32_t npages;
	uint32_t iterations;
	uint64_t lookup_ns;	/* out: hmm_range_fault of resident pages */
	uint64_t map_ns;	/* out: install (mapPage) */
	uint64_t unmap_ns;	/* out: remove (unmapPage, isPageDirty) */
	uint64_t pin_ns;	/* out: pin_user_pages_fast */
	uint64_t unpin_ns;	/* out: unpin_user_pages */
	uint64_t pages;		/* out: npages * iterations */
	uint64_t reserved[2];
};

#define NETVM_IOC_PTBENCH	_IOWR(NETVM_IOC_MAGIC, 0x25, struct netvm_ptbench)

/*
 * Tripwires (netvm/tripwire.h, docs/tripwire.md), on this file's endpoint.
 * Without NVM_TW_OUTGOING, [va, va + len) must lie inside one of the
 * endpoint's exports: peers' reads and writes of it fire.  With it, the
 * range is node:port's memory (another node) and this endpoint's own
 * accesses to it fire.  len is 1..4096 and the range may not cross a page
 * boundary.  Hits arrive on the endpoint's notification queue as entries
 * of kind NVM_NOTF_KIND_TRIP.  Errors: ENOENT (not inside an export),
 * EINVAL, ENOSPC (all NVM_TW_MAX in use), ENXIO (no endpoint), ENODEV.
 * NETVM_IOC_TRIP_CLEAR takes the id; ENOENT if it is not this endpoint's.
 */
struct netvm_trip_req {
	uint64_t va;
	uint32_t len;
	uint32_t flags;		/* NVM_TW_READ, _WRITE, _OUTGOING, _ONCE */
	uint16_t node;		/* NVM_TW_OUTGOING only */
	uint16_t port;		/* NVM_TW_OUTGOING only */
	uint32_t id;		/* out */
};

#define NETVM_IOC_TRIP_SET	_IOWR(NETVM_IOC_MAGIC, 0x38, struct netvm_trip_req)
#define NETVM_IOC_TRIP_CLEAR	_IOW(NETVM_IOC_MAGIC, 0x39, uint32_t)

#endif /* NETVM_UAPI_H */
