/* SPDX-License-Identifier: (GPL-2.0-only OR MIT) */
/*
 * The firmware's counters, in the order it publishes them in SRAM
 * (layout.counters, counters_len 32-bit words).  One list for the
 * firmware's enum and name table and the driver's sysfs fw_counters:
 * X(ENUM_SUFFIX, name).  New counters go at the end.
 */
#ifndef NETVM_FW_COUNTERS_H
#define NETVM_FW_COUNTERS_H

#define NVM_FW_COUNTERS(X) \
	X(DOORBELLS, doorbells) \
	X(BAD_DOORBELLS, bad_doorbells) \
	X(RAW_TX, raw_tx) \
	X(RAW_TX_ERR, raw_tx_err) \
	X(RAW_RX, raw_rx) \
	X(RAW_RX_ERR, raw_rx_err) \
	X(RX_BAD_FRAME, rx_bad_frame) \
	X(RX_MISROUTED, rx_misrouted) \
	X(HOST_DMA_ERR, host_dma_err) \
	X(CMD_WRITE, cmd_write) \
	X(CMD_READ, cmd_read) \
	X(CMD_ATOMIC, cmd_atomic) \
	X(CMD_FENCE, cmd_fence) \
	X(CMD_BAD, cmd_bad) \
	X(TX_BYTES, tx_bytes) \
	X(RX_BYTES, rx_bytes) \
	X(FRAGMENTS, fragments) \
	X(PAGE_MISS, page_misses) \
	X(RESTARTS, restarts) \
	X(BOUNCES, bounces) \
	X(RETRANSMITS, retransmits) \
	X(DUPLICATES, duplicates) \
	X(OUT_OF_WINDOW, out_of_window) \
	X(CREDIT_STALLS, credit_stalls) \
	X(KEY_FAILURES, key_failures) \
	X(NOTIFICATIONS, notifications) \
	X(ACKS_SENT, acks_sent) \
	X(PEER_RESETS, peer_resets) \
	X(ERR_COMPLETIONS, error_completions) \
	X(TRIPWIRES, tripwires) \
	X(UNET_TX, unet_tx) \
	X(UNET_TX_BAD, unet_tx_bad) \
	X(UNET_RX, unet_rx) \
	X(UNET_NO_CHANNEL, unet_no_channel) \
	X(UNET_RING_FULL, unet_ring_full) \
	X(UNET_NO_BUF, unet_no_buf) \
	X(UNET_DIV_ORDER, unet_div_order) \
	X(UNET_DIVERTED, unet_diverted) \
	X(UNET_DROPPED, unet_dropped) \
	X(UNET_QUIET, unet_quiet) \
	X(UNET_GATHER, unet_gather) \
	X(UNET_REPLY_HIT, unet_reply_hits) \
	X(UNET_REPLY_MISS, unet_reply_misses) \
	X(UNET_NOT_RESIDENT, unet_not_resident) \
	X(UNET_NOT_RUNNING, unet_not_running) \
	X(UNET_TX_MISS, unet_tx_misses) \
	X(UNET_HOLD_TX, unet_hold_tx) \
	X(UNET_RELEASE_TX, unet_release_tx) \
	X(UNET_HELD, unet_held) \
	X(UNET_HOLD_EXPIRED, unet_hold_expired) \
	X(PHYS_REFUSED, phys_refused) \
	X(BAD_RESPONSE, bad_responses) \
	X(STALE_RESPONSE, stale_responses) \
	X(PEER_QUOTA, peer_quota_drops) \
	X(UNET_CTL_KERNEL, unet_ctl_kernel) \
	X(ETH_TX, eth_tx) \
	X(ETH_TX_ERR, eth_tx_err) \
	X(ETH_RX, eth_rx) \
	X(ETH_RX_ERR, eth_rx_err) \
	X(ETH_RX_OFF, eth_rx_off) \
	X(ETH_BAD_FRAME, eth_bad_frame)

/* For a table of names: { NVM_FW_COUNTERS(NVM_FW_COUNTER_NAME) } */
#define NVM_FW_COUNTER_NAME(e, n) #n,

#endif /* NETVM_FW_COUNTERS_H */
