// SPDX-License-Identifier: GPL-2.0-only
/*
 * Services every program uses, below the programs and the scheduler:
 * counters, host events, tracing and refused peer frames.  (The engines
 * are fw_queue.c and fw_rx.c; SRAM areas fw_sram_map.c.)
 */
#include <string.h>

#include "fw.h"

void fw_count(struct fw *fw, enum fw_counter c)
{
	fw->counters[c]++;
}

void fw_count_n(struct fw *fw, enum fw_counter c, uint32_t n)
{
	fw->counters[c] += n;
}

void fw_trace_emit(struct fw *fw, enum fw_trace_id id, uint64_t a,
		   uint64_t b, uint64_t c)
{
	fw->chip->ops->trace(fw->chip->opaque, id, a, b, c);
}

void fw_post(struct fw *fw, uint8_t type, uint16_t ep, uint32_t data,
	     uint64_t arg)
{
	struct nvm_event ev = {
		.type = type, .endpoint = ep, .data = data, .arg = arg,
	};

	fw->chip->ops->event_post(fw->chip->opaque, &ev);
}

/* The counters as the host reads them, in SRAM at layout.counters. */
void fw_publish_counters(struct fw *fw)
{
	memcpy(fw->chip->sram + fw->layout.counters, fw->counters,
	       sizeof(fw->counters));
}
