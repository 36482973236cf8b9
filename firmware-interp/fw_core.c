// SPDX-License-Identifier: GPL-2.0-only
/*
 * Firmware core: boot (SRAM layout), the main loop, and the helpers every
 * program uses.
 */
#include <string.h>

#include "fw.h"
#include "netvm/packet.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the firmware accesses little-endian SRAM structures directly"
#endif

/* SRAM map of firmware 2.0 (the host learns it from the layout). */
#define L_LAYOUT	0x0000u
#define L_COUNTERS	0x0080u
#define L_RAW_TX	0x0400u
#define L_RAW_RX	0x0600u
#define L_RAW_ENTRIES	16u
#define L_STAGING	0x1000u
#define L_STAGING_SIZE	0x2000u
#define L_WIRE_RX	0x3000u
#define L_WIRE_SLOTS	8u
#define L_WIRE_SLOT	4352u	/* header + NVM_FRAME_MAX, rounded up */
#define L_DMA_DESCS	0xc000u
#define L_DMA_SIZE	(FW_HDMA_SLOTS * FW_HDMA_DESCS * 32u)
#define L_SCRATCH	(L_DMA_DESCS + L_DMA_SIZE)
#define L_ACKBUF	(L_SCRATCH + FW_HDMA_SLOTS * FW_NV_SCRATCH)
#define L_RAW_END	(L_ACKBUF + FW_NV_NODES * FW_NV_ACKBUF)
#define L_TXBUF		0x20000u
#define L_EP_BASE	(L_TXBUF + FW_NV_TXBUFS * FW_NV_TXBUF_SIZE)
#define L_NV_END	(L_EP_BASE + FW_NV_EPS * NVM_EP_STRIDE)

_Static_assert(L_COUNTERS + FW_CNT_MAX * 4 <= L_RAW_TX, "counters fit");
_Static_assert(L_RAW_TX + L_RAW_ENTRIES * sizeof(struct nvm_raw_desc) <=
	       L_RAW_RX, "raw tx ring fits");
_Static_assert(L_RAW_RX + L_RAW_ENTRIES * sizeof(struct nvm_raw_desc) <=
	       L_STAGING, "raw rx ring fits");
_Static_assert(L_WIRE_RX + L_WIRE_SLOTS * L_WIRE_SLOT <= L_DMA_DESCS,
	       "wire slots fit");
_Static_assert(sizeof(struct fw_rx_slot) + NVM_FRAME_MAX <= L_WIRE_SLOT,
	       "a frame fits a wire slot");
_Static_assert(NVM_FRAME_MAX <= L_STAGING_SIZE, "a frame fits staging");
_Static_assert(NVM_FRAME_MAX <= FW_NV_TXBUF_SIZE, "a frame fits a tx buffer");
_Static_assert(L_RAW_END <= L_TXBUF, "private areas fit");
_Static_assert(L_RAW_END <= LANAI_SRAM_MIN, "raw frames fit the smallest SRAM");
_Static_assert(L_EP_BASE % NVM_EP_STRIDE == 0, "endpoints are page aligned");

void fw_init(struct fw *fw, struct fw_chip *chip)
{
	memset(fw, 0, sizeof(*fw));
	fw->chip = chip;
	fw->state = NVM_FW_HALTED;
}

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

static void fw_set_state(struct fw *fw, enum nvm_fw_state st)
{
	fw->state = st;
	fw->chip->ops->set_state(fw->chip->opaque, st,
				 st == NVM_FW_HALTED ? 0 : FW_VERSION,
				 fw->layout_off);
	fw_trace(fw, "state", st, 0);
}

static void fw_layout(struct fw *fw)
{
	struct fw_chip *c = fw->chip;
	struct nvm_sram_layout *l = &fw->layout;

	memset(l, 0, sizeof(*l));
	l->version = NVM_LAYOUT_VERSION;
	l->sram_size = c->sram_size;
	l->fw_version = FW_VERSION;
	l->raw_tx_ring = L_RAW_TX;
	l->raw_tx_len = L_RAW_ENTRIES;
	l->raw_rx_ring = L_RAW_RX;
	l->raw_rx_len = L_RAW_ENTRIES;
	l->raw_max_payload = NVM_RAW_MAX_PAYLOAD;
	l->wire_rx_ring = L_WIRE_RX;
	l->wire_rx_slots = L_WIRE_SLOTS;
	l->wire_rx_slot_size = L_WIRE_SLOT;
	l->staging = L_STAGING;
	l->staging_size = L_STAGING_SIZE;
	l->counters = L_COUNTERS;
	l->counters_len = FW_CNT_MAX;
	l->dma_descs = L_DMA_DESCS;
	if (c->sram_size >= L_NV_END) {
		/* room for NetVM: endpoints and retransmission buffers;
		 * the page tables follow once the kernel configures them */
		l->txbuf = L_TXBUF;
		l->txbuf_count = FW_NV_TXBUFS;
		l->txbuf_size = FW_NV_TXBUF_SIZE;
		l->ep_base = L_EP_BASE;
		l->ep_count = FW_NV_EPS;
		l->ep_stride = NVM_EP_STRIDE;
		l->tables_end = L_NV_END;
	}
}

/* The scratch area of a host DMA job slot (small host writes). */
uint32_t fw_scratch_off(struct fw *fw, int slot)
{
	(void)fw;
	return L_SCRATCH + (uint32_t)slot * FW_NV_SCRATCH;
}

/* Where ACK frames to @node are built. */
uint32_t fw_ackbuf_off(struct fw *fw, uint32_t node)
{
	(void)fw;
	return L_ACKBUF + node * FW_NV_ACKBUF;
}

void fw_boot(struct fw *fw)
{
	struct fw_chip *c = fw->chip;

	if (fw->state != NVM_FW_HALTED)
		return;
	fw_init(fw, c);
	fw_set_state(fw, NVM_FW_BOOTING);

	/* Firmware-private regions and the host's rings start clean. */
	memset(c->sram, 0, c->sram_size >= L_NV_END ? L_NV_END : L_RAW_END);
	fw_layout(fw);
	fw->layout_off = L_LAYOUT;
	memcpy(c->sram + L_LAYOUT, &fw->layout, sizeof(fw->layout));
	/* magic last: a host that sees it sees a complete layout */
	fw_sram_wr32(c, L_LAYOUT, NVM_LAYOUT_MAGIC);
	fw->layout.magic = NVM_LAYOUT_MAGIC;

	c->ops->isr_clear(c->opaque, LANAI_ISR_WAKE0 | LANAI_ISR_SEND |
			  LANAI_ISR_RECV | LANAI_ISR_BUFF | LANAI_ISR_TIME0 |
			  LANAI_ISR_TIME1 | LANAI_ISR_TIME2);
	c->ops->recv_setup(c->opaque, L_WIRE_RX, L_WIRE_SLOTS, L_WIRE_SLOT);
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
	for (uint32_t p = 0; p < FW_PROG_COUNT; p++) {
		const struct fw_program *prog = fw_programs[p];

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
		fw_trace(fw, "bad_doorbell", off, data);
		fw_post(fw, NVM_EV_ERROR, (uint16_t)ep, NVM_ERR_BAD_DOORBELL,
			(uint64_t)off << 32 | data);
	}
}

static void fw_publish_counters(struct fw *fw)
{
	memcpy(fw->chip->sram + fw->layout.counters, fw->counters,
	       sizeof(fw->counters));
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
