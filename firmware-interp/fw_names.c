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
};

const char *const fw_tx_state_names[FW_TX_STATE_COUNT] = {
	[FW_TX_IDLE] = "idle",
	[FW_TX_FETCH] = "fetch",
	[FW_TX_SEND] = "send",
};

const char *const fw_rx_state_names[FW_RX_STATE_COUNT] = {
	[FW_RX_IDLE] = "idle",
	[FW_RX_DELIVER] = "deliver",
};
