// SPDX-License-Identifier: GPL-2.0-only
/*
 * NetVM's row in the program table: how the scheduler reaches the NetVM
 * files (endpoints fw_nv_ep.c, transmit and window fw_nv_tx.c, receive
 * fw_nv_rx.c, serving peers' requests and job completions fw_nv_serve.c,
 * kernel commands fw_nv_kernel.c).
 */
#include "fw.h"

/* Doorbell page @ep of an open endpoint: its command count. */
static bool nv_doorbell(struct fw *fw, uint32_t ep, uint32_t off,
			uint32_t data)
{
	if (ep >= FW_NV_EPS || !fw->nv.ep[ep].open)
		return false;
	fw_nv_doorbell(fw, off, data);
	return true;
}

/* IT0: retransmission and give-up; IT1: delayed ACKs. */
static void nv_tick(struct fw *fw, uint32_t isr)
{
	if (isr & LANAI_ISR_TIME0)
		fw_nv_tick(fw);
	if (isr & LANAI_ISR_TIME1)
		fw_nv_ack_timer(fw);
}

const struct fw_program fw_prog_nv = {
	.name = "netvm",
	.pkt_type = NVM_PKT_NETVM,
	.boot = fw_nv_boot,
	.doorbell = nv_doorbell,
	.step = fw_nv_cmd_step,
	.receive = fw_nv_rx,
	.job_done = fw_nv_job_done,
	.sent = fw_nv_sent,
	.tick = nv_tick,
	.arm_timers = fw_nv_arm_timer,
	.kernel_cmd = fw_nv_kernel_cmd,
};
