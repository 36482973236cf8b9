// SPDX-License-Identifier: GPL-2.0-only
/* The counters' names (the state machines' are in fw_state.c). */
#include "fw.h"

const char *const fw_counter_names[FW_CNT_MAX] = {
#define FW_CNT_NAME(e, n) [FW_CNT_##e] = #n,
	NVM_FW_COUNTERS(FW_CNT_NAME)
#undef FW_CNT_NAME
};

