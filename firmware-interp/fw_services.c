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

void fw_trace(struct fw *fw, const char *what, uint32_t a, uint32_t b)
{
	fw->chip->ops->trace(fw->chip->opaque, what, a, b);
}

void fw_peer_err(struct fw *fw, enum fw_counter c, const char *what,
		 uint32_t node, uint64_t a, uint32_t b)
{
	fw_count(fw, c);
	if (fw->chip->ops->peer_err)
		fw->chip->ops->peer_err(fw->chip->opaque, what, node, a, b);
	else
		fw_trace(fw, what, node, b);
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
