// SPDX-License-Identifier: GPL-2.0-only
/* Name tables for tracing: one entry per enum value, checked at build. */
#include "fw.h"

const char *const fw_counter_names[FW_CNT_MAX] = {
#define FW_CNT_NAME(e, n) [FW_CNT_##e] = #n,
	NVM_FW_COUNTERS(FW_CNT_NAME)
#undef FW_CNT_NAME
};

const char *const fw_tx_state_names[FW_TX_STATE_COUNT] = {
	[FW_TX_IDLE] = "idle",
	[FW_TX_FETCH] = "fetch",
	[FW_TX_SEND] = "send",
};

