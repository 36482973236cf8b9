/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The firmware's trace points, one typed event each with named fields.
 *
 * This list is the one source: it makes the firmware's fw_tr_<name>()
 * helpers and enum fw_trace_id here, and the device's dispatch to QEMU's
 * trace_lanai_fw_<name>() (qemu-device/lanai-fw.c).  QEMU's tracetool
 * reads only qemu-device/trace-events, so that file repeats each event
 * as the line FW_TRACE_LINE() below makes; the unit test
 * firmware-trace-events checks that the two agree, line for line.
 *
 * X2(name, type1, field1, type2, field2, format)
 * X3(name, type1, field1, type2, field2, type3, field3, format)
 * Types are integers or const char * (a state's or machine's name from a
 * const table); the format is written as trace-events has it.
 */
#ifndef NETVM_FW_TRACE_EVENTS_H
#define NETVM_FW_TRACE_EVENTS_H

#include <stdint.h>

#define FW_TRACE_EVENTS(X2, X3)						\
	/* state machines (fw_state.c) */				\
	X3(fw_state, const char *, machine, const char *, from,	\
	   const char *, to, "%s: %s -> %s")				\
	X3(fw_op_state, uint32_t, req, const char *, from,		\
	   const char *, to, "req 0x%x: %s -> %s")			\
	X3(fw_pend_state, uint32_t, entry, const char *, from,		\
	   const char *, to, "entry %u: %s -> %s")			\
	X3(fw_unet_ep_state, uint32_t, port, const char *, from,	\
	   const char *, to, "port %u: %s -> %s")			\
	X3(fw_unet_tx_state, uint32_t, port, const char *, from,	\
	   const char *, to, "port %u: %s -> %s")			\
	X3(fw_bad_transition, const char *, machine, const char *, from, \
	   const char *, to, "%s: %s -> %s is not a transition of the machine") \
	/* the scheduler and services */				\
	X2(fw_bad_doorbell, uint32_t, offset, uint32_t, data,		\
	   "offset 0x%x data 0x%x")					\
	X2(fw_rx_drop, uint32_t, slot, uint32_t, len, "slot %u len %u")	\
	/* raw frames */						\
	X2(fw_raw_tx_refused, uint32_t, idx, uint32_t, status,		\
	   "descriptor %u status %u")					\
	/* NetVM */							\
	X2(fw_nv_config, uint32_t, max_ppn, uint32_t, pt_rows,		\
	   "max_ppn %u pt_rows %u")					\
	X2(fw_op_error, uint32_t, req, uint32_t, status,		\
	   "req 0x%x status %u")					\
	X2(fw_op_timeout, uint32_t, node, uint32_t, req,		\
	   "node %u req 0x%x")						\
	X2(fw_host_write_lost, uint32_t, addr, uint32_t, len,		\
	   "addr 0x%x len %u")						\
	X2(fw_sendq_full, uint32_t, node, uint32_t, txbuf,		\
	   "node %u txbuf %u")						\
	X2(fw_peer_dead, uint32_t, node, uint32_t, una,		\
	   "node %u una %u")						\
	X2(fw_peer_reset, uint32_t, node, uint32_t, epoch,		\
	   "node %u epoch 0x%x")					\
	X2(fw_stale_epoch, uint32_t, node, uint32_t, epoch,		\
	   "node %u epoch 0x%x")					\
	/* a peer's frame refused (docs/security.md): one per cause */	\
	X3(fw_phys_refused, uint32_t, node, uint64_t, addr, uint32_t, len, \
	   "from node %u: 0x%"PRIx64" len %u")				\
	X3(fw_stale_response, uint32_t, node, uint64_t, req, uint32_t, op, \
	   "from node %u: req 0x%"PRIx64" op %u")			\
	X3(fw_bad_response, uint32_t, node, uint64_t, op_req, uint32_t, len, \
	   "from node %u: op<<32|req 0x%"PRIx64" len %u")		\
	X3(fw_peer_quota, uint32_t, node, uint64_t, seq, uint32_t, op,	\
	   "from node %u: seq %"PRIu64" op %u")				\
	/* tripwires */							\
	X2(fw_tripwire, uint32_t, id, uint32_t, owner, "id %u owner %u") \
	/* U-Net */							\
	X2(fw_unet_no_channel, uint32_t, node, uint32_t, tag,		\
	   "from node %u tag 0x%x")					\
	/* Ethernet */							\
	X2(fw_eth_tx_refused, uint32_t, idx, uint32_t, status,		\
	   "descriptor %u status %u")					\
	X2(fw_eth_bad_frame, uint32_t, node, uint32_t, len,		\
	   "from node %u len %u")

enum fw_trace_id {
#define FW_TR_ID2(n, t1, f1, t2, f2, fmt) FW_TR_##n,
#define FW_TR_ID3(n, t1, f1, t2, f2, t3, f3, fmt) FW_TR_##n,
	FW_TRACE_EVENTS(FW_TR_ID2, FW_TR_ID3)
#undef FW_TR_ID2
#undef FW_TR_ID3
	FW_TR_COUNT
};

/* The line qemu-device/trace-events must hold for each event. */
#define FW_TRACE_LINE2(n, t1, f1, t2, f2, fmt)				\
	"lanai_" #n "(" #t1 " " #f1 ", " #t2 " " #f2 ") " #fmt
#define FW_TRACE_LINE3(n, t1, f1, t2, f2, t3, f3, fmt)			\
	"lanai_" #n "(" #t1 " " #f1 ", " #t2 " " #f2 ", " #t3 " " #f3 ") " #fmt

#endif /* NETVM_FW_TRACE_EVENTS_H */
