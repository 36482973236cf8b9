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

#endif /* NETVM_UAPI_H */
