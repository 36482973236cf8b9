/* SPDX-License-Identifier: (GPL-2.0-only OR MIT) */
/*
 * The kernel control commands: struct nvm_cmd with op >= NVM_KOP_MIN,
 * accepted on endpoint 0 (the kernel's) only.  This is their one
 * registry; the firmware dispatches on these numbers, the driver issues
 * them, and names come from here (nvm_kop_name()).
 *
 * NVM_KOPS(X) expands X(number, NAME, argument) once per command:
 * NVM_KOP_NAME = number; the argument is the struct the command carries
 * at inline_data, or struct nvm_k_none when it has none (its arguments,
 * if any, are the command's own fields, as the comment says).
 *
 * Adding one: a line here with a number not yet used (the build fails on
 * a duplicate or a number below NVM_KOP_MIN, or an argument larger than
 * inline_data), the argument struct in the subsystem's header, the case
 * in the firmware, and docs/firmware.md ("Adding a kernel command").
 */
#ifndef NETVM_KOP_H
#define NETVM_KOP_H

#include "abi_types.h"
#include "netvm_fw.h"		/* struct nvm_cmd, nvm_k_config, ... */
#include "unet_abi.h"		/* struct nvm_k_unet_* */

#define NVM_KOP_MIN		0x80	/* ops below are enum nvm_op */

/* The arguments are the command's fields; inline_data is unused. */
struct nvm_k_none {
	uint8_t unused;
};

#define NVM_KOPS(X)							\
	/* NetVM (fw_nv_kernel.c) */					\
	X(0x80, CONFIG, struct nvm_k_config)				\
	X(0x81, EP_OPEN, struct nvm_k_ep_open)				\
	/* dst_port = endpoint */					\
	X(0x82, EP_CLOSE, struct nvm_k_none)				\
	/* dst_port = endpoint: retry after a page miss; arg0/arg1 =	\
	 * low/high half of the page now mapped (only what waits for	\
	 * it retries), or 0 to retry everything the endpoint waits	\
	 * for */							\
	X(0x83, RESTART, struct nvm_k_none)				\
	/* dst_node, arg0 = sequence number of the bounced entry,	\
	 * arg1 = enum nvm_status for the writer (OK once copied; an	\
	 * error if it could not be) */					\
	X(0x84, CREDIT, struct nvm_k_none)				\
	/* dst_node, arg0 = route length, route in inline_data (up to	\
	 * NVM_ROUTE_MAX bytes); arg1 = NVM_ROUTE_F_* */		\
	X(0x85, ROUTE, struct nvm_k_none)				\
	X(0xa0, PHYS_WIN, struct nvm_k_phys_win)			\
	/* a test hook (off unless asked for): arg0 = 1 arms it for	\
	 * endpoint dst_port: the next page the NI locks for it keeps	\
	 * one more lock count after the access, as if the NI were	\
	 * still inside, until arg0 = 0 releases it (debugfs		\
	 * lock_hold: the host's unmapPPN seen waiting) */		\
	X(0xa1, LOCK_HOLD, struct nvm_k_none)				\
	/* dst_port = endpoint; arg0/arg1 = low/high half of a page of	\
	 * its own buffers the kernel cannot map (a miss of a local	\
	 * operation: a source, a read's target): what waits for it	\
	 * fails (BAD_ADDR) instead of waiting for the endpoint's close */ \
	X(0xa2, MISS_FAIL, struct nvm_k_none)				\
	/* U-Net (fw_unet.c, fw_unet_flow.c; netvm/unet_abi.h) */	\
	X(0x86, UNET_OPEN, struct nvm_k_unet_open)			\
	/* dst_port = endpoint */					\
	X(0x87, UNET_CLOSE, struct nvm_k_none)				\
	X(0x88, UNET_CHAN, struct nvm_k_unet_chan)			\
	/* arg0/arg1 = ring address lo/hi, dst_node = slots (0 =	\
	 * none) */							\
	X(0x89, UNET_DIVERT_CFG, struct nvm_k_none)			\
	/* arg0 = records handed on (free-running) */			\
	X(0x8a, UNET_DIVERT_DONE, struct nvm_k_none)			\
	/* dst_port: back to direct delivery if none is outstanding;	\
	 * a hold (UNET_HOLD) is released then */			\
	X(0x8b, UNET_DIRECT, struct nvm_k_none)				\
	X(0x8c, UNET_KSEND, struct nvm_k_unet_ksend)			\
	/* dst_port: its buffered FIFO passed the high-water mark:	\
	 * hold the senders (while it diverts) */			\
	X(0x8d, UNET_HOLD, struct nvm_k_none)				\
	X(0x8e, UNET_KCTL, struct nvm_k_unet_kctl)			\
	/* tripwires (fw_tripwire.c; netvm/tripwire.h): SET: arg0 =	\
	 * id (< NVM_TW_MAX, unused), arg1 = flags, arg2 = owner	\
	 * endpoint; dst_node, dst_port, dst_va, len = the range.	\
	 * CLEAR: arg0 = id */						\
	X(0x90, TRIP_SET, struct nvm_k_none)				\
	X(0x91, TRIP_CLEAR, struct nvm_k_none)

enum nvm_kop {
#define NVM_KOP_ENUM(num, name, arg) NVM_KOP_##name = (num),
	NVM_KOPS(NVM_KOP_ENUM)
#undef NVM_KOP_ENUM
};

#define NVM_KOP_CHECK(num, name, arg)					\
	NVM_ABI_ASSERT((num) >= NVM_KOP_MIN && (num) <= 0xff,		\
		       "NVM_KOP_" #name ": a kernel op is 0x80..0xff");	\
	NVM_ABI_ASSERT(sizeof(arg) <= NVM_INLINE_MAX,			\
		       "NVM_KOP_" #name ": argument exceeds inline_data");
NVM_KOPS(NVM_KOP_CHECK)
#undef NVM_KOP_CHECK

/*
 * The command's name ("CONFIG"), or NULL for a number that is none.  A
 * switch, so a number used twice in NVM_KOPS is a duplicate case label:
 * the registry does not compile.
 */
static inline const char *nvm_kop_name(uint32_t op)
{
	switch (op) {
#define NVM_KOP_CASE(num, name, arg) case (num): return #name;
	NVM_KOPS(NVM_KOP_CASE)
#undef NVM_KOP_CASE
	}
	return NULL;
}

#endif /* NETVM_KOP_H */
