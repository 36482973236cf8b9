// SPDX-License-Identifier: GPL-2.0-only
/*
 * The table of firmware programs.  Adding a program is its files and one
 * row here (docs/firmware.md, "Adding a firmware program").
 */
#include "fw.h"

const struct fw_program *const fw_programs[FW_PROG_COUNT] = {
	[FW_PROG_RAW] = &fw_prog_raw,
	[FW_PROG_NV] = &fw_prog_nv,
	[FW_PROG_UNET] = &fw_prog_unet,
	[FW_PROG_TRIPWIRE] = &fw_prog_tripwire,
	[FW_PROG_ETH] = &fw_prog_eth,
};

/*
 * Who is asked first whether a doorbell write is theirs.  Page 0 is the
 * kernel endpoint's, and NetVM reads any word written there as that
 * endpoint's command count; the raw and Ethernet programs take fixed words
 * on the same page, so they are asked before NetVM (asked after it, the
 * Ethernet doorbell was refused as a bogus count, an error event and an
 * interrupt per doorbell).
 */
const enum fw_prog_id fw_doorbell_order[FW_PROG_COUNT] = {
	FW_PROG_RAW, FW_PROG_ETH, FW_PROG_NV, FW_PROG_UNET, FW_PROG_TRIPWIRE,
};

/* A kernel command goes to the program that claims its op. */
uint32_t fw_kernel_cmd(struct fw *fw, const struct nvm_cmd *c)
{
	for (uint32_t p = 0; p < FW_PROG_COUNT; p++) {
		const struct fw_program *prog = fw_programs[p];
		uint32_t st;

		if (!prog->kernel_cmd)
			continue;
		st = prog->kernel_cmd(fw, c);
		if (st != FW_KOP_UNCLAIMED)
			return st;
	}
	return NVM_ST_BAD_CMD;
}
