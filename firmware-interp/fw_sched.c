// SPDX-License-Identifier: GPL-2.0-only
/*
 * The scheduler, above the programs: boot and halt, and fw_run(), the
 * main loop the chip calls whenever something happened.  It reaches the
 * programs only through fw_programs[] (fw_program.c).
 */
#include <string.h>

#include "fw.h"

void fw_init(struct fw *fw, struct fw_chip *chip)
{
	memset(fw, 0, sizeof(*fw));
	fw->chip = chip;
	fw->state = NVM_FW_HALTED;
}

static void fw_set_state(struct fw *fw, enum nvm_fw_state st)
{
	fw_set_fw_state(fw, st);
	fw->chip->ops->set_state(fw->chip->opaque, st,
				 st == NVM_FW_HALTED ? 0 : FW_VERSION,
				 fw->layout_off);
}

void fw_boot(struct fw *fw)
{
	struct fw_chip *c = fw->chip;

	if (fw->state != NVM_FW_HALTED)
		return;
	fw_init(fw, c);
	fw_set_state(fw, NVM_FW_BOOTING);

	fw_sram_map_boot(fw);
	c->ops->isr_clear(c->opaque, LANAI_ISR_WAKE0 | LANAI_ISR_SEND |
			  LANAI_ISR_RECV | LANAI_ISR_BUFF | LANAI_ISR_TIME0 |
			  LANAI_ISR_TIME1 | LANAI_ISR_TIME2);
	c->ops->recv_setup(c->opaque, fw->layout.wire_rx_ring,
			   fw->layout.wire_rx_slots,
			   fw->layout.wire_rx_slot_size);
	for (uint32_t p = 0; p < FW_PROG_COUNT; p++)
		if (fw_programs[p]->boot)
			fw_programs[p]->boot(fw);

	fw_set_state(fw, NVM_FW_READY);
	fw_post(fw, NVM_EV_FW_STATE, 0, NVM_FW_READY, FW_VERSION);
}

void fw_halt(struct fw *fw)
{
	if (fw->state == NVM_FW_HALTED)
		return;
	fw->chip->ops->timer_arm(fw->chip->opaque, 0, 0);
	fw->chip->ops->timer_arm(fw->chip->opaque, 1, 0);
	fw->chip->ops->timer_arm(fw->chip->opaque, 2, 0);
	fw_queues_reset(fw);
	for (uint32_t p = 0; p < FW_PROG_COUNT; p++)
		if (fw_programs[p]->halt)
			fw_programs[p]->halt(fw);
	fw_set_state(fw, NVM_FW_HALTED);
}

/* True if a program took the doorbell write as its own. */
static bool doorbell_claimed(struct fw *fw, uint32_t ep, uint32_t off,
			     uint32_t data)
{
	for (uint32_t k = 0; k < FW_PROG_COUNT; k++) {
		const struct fw_program *prog = fw_programs[fw_doorbell_order[k]];

		if (prog->doorbell && prog->doorbell(fw, ep, off, data))
			return true;
	}
	return false;
}

static void fw_doorbells(struct fw *fw)
{
	struct fw_chip *c = fw->chip;
	uint32_t off, data, ep;

	while (c->ops->doorbell_pop(c->opaque, &off, &data)) {
		fw_count(fw, FW_CNT_DOORBELLS);
		ep = off / LANAI_DOORBELL_PAGE;
		if (doorbell_claimed(fw, ep, off, data))
			continue;
		fw_count(fw, FW_CNT_BAD_DOORBELLS);
		fw_tr_fw_bad_doorbell(fw, off, data);
		fw_post(fw, NVM_EV_ERROR, (uint16_t)ep, NVM_ERR_BAD_DOORBELL,
			(uint64_t)off << 32 | data);
	}
}

/* Timer bits to the programs whose clocks they are. */
static void fw_ticks(struct fw *fw, uint32_t isr)
{
	isr &= LANAI_ISR_TIME0 | LANAI_ISR_TIME1 | LANAI_ISR_TIME2;
	if (!isr)
		return;
	for (uint32_t p = 0; p < FW_PROG_COUNT; p++)
		if (fw_programs[p]->tick)
			fw_programs[p]->tick(fw, isr);
}

/*
 * One round of the programs' steps, in table order; the receive
 * dispatcher runs right after the raw program's (the order fw_run has
 * always had, so that a pass does what it did before the table).
 */
static bool fw_steps(struct fw *fw)
{
	bool progress = false;

	for (uint32_t p = 0; p < FW_PROG_COUNT; p++) {
		if (fw_programs[p]->step)
			progress |= fw_programs[p]->step(fw);
		if (p == FW_PROG_RAW)
			progress |= fw_rx_step(fw);
	}
	return progress;
}

void fw_run(struct fw *fw)
{
	struct fw_chip *c = fw->chip;
	uint32_t isr;
	int rounds = 0;

	if (fw->state != NVM_FW_READY)
		return;

	isr = c->ops->isr_read(c->opaque);
	c->ops->isr_clear(c->opaque, isr & (LANAI_ISR_WAKE0 | LANAI_ISR_SEND |
					    LANAI_ISR_RECV | LANAI_ISR_BUFF |
					    LANAI_ISR_TIME0 | LANAI_ISR_TIME1 |
					    LANAI_ISR_TIME2));
	if (isr & LANAI_ISR_WAKE0)
		fw_queues_hdma_done(fw);
	if (isr & LANAI_ISR_SEND)
		fw_queues_send_done(fw);
	fw_ticks(fw, isr);

	fw_doorbells(fw);
	while (fw_steps(fw) && ++rounds < 1000)
		;
	for (uint32_t p = 0; p < FW_PROG_COUNT; p++)
		if (fw_programs[p]->arm_timers)
			fw_programs[p]->arm_timers(fw);
	fw_publish_counters(fw);
}
