/* SPDX-License-Identifier: (GPL-2.0-only OR MIT) */
/*
 * netvm ABI: fixed-width types usable from the Linux kernel, from user
 * space and from QEMU.  Every ABI header includes this file first and uses
 * only uintN_t, so one set of headers serves the device model, the
 * firmware, the driver and the library.
 *
 * Byte order: every multi-byte field that the host sees (registers, SRAM
 * structures, DMA descriptors, event queue entries) is little-endian, as
 * on the x86 hosts this NIC serves.  The real LANai was big-endian; the
 * emulation deliberately does not make the driver swap.  Fields on the
 * wire are big-endian, as on Myrinet: packet headers (netvm/packet.h) and
 * the messages nodes exchange in raw frames (netvm/mapper.h,
 * netvm/import.h).
 */
#ifndef NETVM_ABI_TYPES_H
#define NETVM_ABI_TYPES_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include <stdint.h>
#include <stddef.h>
#endif

#ifndef NVM_BIT
#define NVM_BIT(n) (1u << (n))
#endif

/* Compile-time layout checks, in any of the three environments. */
#if defined(__cplusplus)
#define NVM_ABI_ASSERT(cond, msg) static_assert(cond, msg)
#else
#define NVM_ABI_ASSERT(cond, msg) _Static_assert(cond, msg)
#endif

#endif /* NETVM_ABI_TYPES_H */
