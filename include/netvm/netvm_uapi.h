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

/* Byte i of a pattern range: (((i + seed) * 0x9e3779b97f4a7c15) >> 56). */
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

#endif /* NETVM_UAPI_H */
