// SPDX-License-Identifier: GPL-2.0-only
/* Name tables for tracing: one entry per enum value, checked at build. */
#include "fw.h"

const char *const fw_counter_names[FW_CNT_MAX] = {
	[FW_CNT_DOORBELLS] = "doorbells",
	[FW_CNT_BAD_DOORBELLS] = "bad_doorbells",
	[FW_CNT_RAW_TX] = "raw_tx",
	[FW_CNT_RAW_TX_ERR] = "raw_tx_err",
	[FW_CNT_RAW_RX] = "raw_rx",
	[FW_CNT_RAW_RX_ERR] = "raw_rx_err",
	[FW_CNT_RX_BAD_FRAME] = "rx_bad_frame",
	[FW_CNT_RX_MISROUTED] = "rx_misrouted",
	[FW_CNT_HOST_DMA_ERR] = "host_dma_err",
	[FW_CNT_CMD_WRITE] = "cmd_write",
	[FW_CNT_CMD_READ] = "cmd_read",
	[FW_CNT_CMD_ATOMIC] = "cmd_atomic",
	[FW_CNT_CMD_FENCE] = "cmd_fence",
	[FW_CNT_CMD_BAD] = "cmd_bad",
	[FW_CNT_TX_BYTES] = "tx_bytes",
	[FW_CNT_RX_BYTES] = "rx_bytes",
	[FW_CNT_FRAGMENTS] = "fragments",
	[FW_CNT_PAGE_MISS] = "page_misses",
	[FW_CNT_RESTARTS] = "restarts",
	[FW_CNT_BOUNCES] = "bounces",
	[FW_CNT_RETRANSMITS] = "retransmits",
	[FW_CNT_DUPLICATES] = "duplicates",
	[FW_CNT_OUT_OF_WINDOW] = "out_of_window",
	[FW_CNT_CREDIT_STALLS] = "credit_stalls",
	[FW_CNT_KEY_FAILURES] = "key_failures",
	[FW_CNT_NOTIFICATIONS] = "notifications",
	[FW_CNT_ACKS_SENT] = "acks_sent",
	[FW_CNT_PEER_RESETS] = "peer_resets",
	[FW_CNT_ERR_COMPLETIONS] = "error_completions",
	[FW_CNT_UNET_TX] = "unet_tx",
	[FW_CNT_UNET_TX_BAD] = "unet_tx_bad",
	[FW_CNT_UNET_RX] = "unet_rx",
	[FW_CNT_UNET_NO_CHANNEL] = "unet_no_channel",
	[FW_CNT_UNET_RING_FULL] = "unet_ring_full",
	[FW_CNT_UNET_NO_BUF] = "unet_no_buf",
	[FW_CNT_UNET_DIV_ORDER] = "unet_div_order",
	[FW_CNT_UNET_DIVERTED] = "unet_diverted",
	[FW_CNT_UNET_DROPPED] = "unet_dropped",
};

const char *const fw_tx_state_names[FW_TX_STATE_COUNT] = {
	[FW_TX_IDLE] = "idle",
	[FW_TX_FETCH] = "fetch",
	[FW_TX_SEND] = "send",
};

