// SPDX-License-Identifier: GPL-2.0-only
/* A simulated LANai chip for firmware unit tests (see sim_chip.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_chip.h"
#include "netvm/packet.h"

static struct sim_chip *S(void *chip)
{
	return chip;
}

static void c_host_dma_start(void *chip, uint32_t desc)
{
	S(chip)->hdma_pending = true;
	S(chip)->hdma_desc = desc;
}

static void c_send_start(void *chip, uint32_t off, uint32_t len)
{
	S(chip)->send_pending = true;
	S(chip)->send_off = off;
	S(chip)->send_len = len;
}

static void c_recv_setup(void *chip, uint32_t ring, uint32_t slots,
			 uint32_t slot_size)
{
	struct sim_chip *s = chip;

	s->rx_ring = ring;
	s->rx_slots = slots;
	s->rx_slot_size = slot_size;
	s->rx_next = 0;
	s->rx_enabled = true;
}

static void c_recv_kick(void *chip)
{
	(void)chip;	/* sim_settle retries the wire on every pass */
}

static bool c_doorbell_pop(void *chip, uint32_t *off, uint32_t *data)
{
	struct sim_chip *s = chip;

	if (!s->db_count)
		return false;
	*off = s->db_off[s->db_head];
	*data = s->db_data[s->db_head];
	s->db_head = (s->db_head + 1) % 256;
	s->db_count--;
	return true;
}

static void c_event_post(void *chip, const struct nvm_event *ev)
{
	struct sim_chip *s = chip;

	if (s->nevents < SIM_EVENTS_MAX)
		s->events[s->nevents++] = *ev;
}

static uint32_t c_isr_read(void *chip)
{
	return S(chip)->isr;
}

static void c_isr_clear(void *chip, uint32_t bits)
{
	S(chip)->isr &= ~bits;
}

static void c_set_state(void *chip, enum nvm_fw_state st, uint32_t v,
			uint32_t layout)
{
	(void)v;
	(void)layout;
	S(chip)->state = st;
}

static void c_timer_arm(void *chip, unsigned int which, uint64_t delay_ns)
{
	struct sim_chip *s = chip;

	if (which < 3)
		s->timer_at[which] = delay_ns ? s->now_ns + delay_ns : 0;
}

static uint64_t c_now_ns(void *chip)
{
	return ((struct sim_chip *)chip)->now_ns;
}

static sim_idle_fn sim_idle;
static void *sim_idle_ctx;

void sim_set_idle(sim_idle_fn fn, void *ctx)
{
	sim_idle = fn;
	sim_idle_ctx = ctx;
}

uint32_t sim_rand(struct sim_chip *s, uint32_t n)
{
	/* xorshift64*: deterministic per seed */
	s->rng ^= s->rng >> 12;
	s->rng ^= s->rng << 25;
	s->rng ^= s->rng >> 27;
	return (uint32_t)((s->rng * 2685821657736338717ull) >> 33) % n;
}

static uint32_t c_link_state(void *chip)
{
	return S(chip)->link;
}

/*
 * Trace points are counted per event.  A state change the machine's
 * table does not have is a firmware bug: every test (and fuzzer) that
 * runs on this chip fails on one.
 */
static void c_trace(void *chip, unsigned int id, uint64_t a, uint64_t b,
		    uint64_t c)
{
	if (id == FW_TR_fw_bad_transition) {
		fprintf(stderr, "firmware: %s: %s -> %s is not a transition\n",
			(const char *)(uintptr_t)a, (const char *)(uintptr_t)b,
			(const char *)(uintptr_t)c);
		abort();
	}
	if (id < FW_TR_COUNT)
		S(chip)->traces[id]++;
}

static const struct fw_chip_ops sim_ops = {
	.host_dma_start = c_host_dma_start,
	.send_start = c_send_start,
	.recv_setup = c_recv_setup,
	.recv_kick = c_recv_kick,
	.doorbell_pop = c_doorbell_pop,
	.event_post = c_event_post,
	.isr_read = c_isr_read,
	.isr_clear = c_isr_clear,
	.set_state = c_set_state,
	.timer_arm = c_timer_arm,
	.now_ns = c_now_ns,
	.link_state = c_link_state,
	.trace = c_trace,
};

void sim_init(struct sim_chip *s, uint16_t node, uint32_t sram_size)
{
	memset(s, 0, sizeof(*s));
	s->chip.sram = calloc(1, sram_size);
	s->chip.sram_size = sram_size;
	s->chip.node_id = node;
	s->chip.ops = &sim_ops;
	s->chip.opaque = s;
	s->host = calloc(1, SIM_HOST_SIZE);
	s->rng = 0x9e3779b97f4a7c15ull ^ node;
	fw_init(&s->fw, &s->chip);
}

void sim_free(struct sim_chip *s)
{
	while (s->wire_count) {
		free(s->wire[s->wire_head]);
		s->wire_head = (s->wire_head + 1) % SIM_WIRE_MAX;
		s->wire_count--;
	}
	while (s->inq_count) {
		free(s->inq[s->inq_head]);
		s->inq_head = (s->inq_head + 1) % SIM_WIRE_MAX;
		s->inq_count--;
	}
	free(s->chip.sram);
	free(s->host);
}

void sim_connect(struct sim_chip *a, struct sim_chip *b)
{
	a->peer = b;
	b->peer = a;
	a->link = NVM_LINK_UP;
	b->link = NVM_LINK_UP;
}

void sim_boot(struct sim_chip *s)
{
	fw_boot(&s->fw);
}

void sim_doorbell(struct sim_chip *s, uint32_t off, uint32_t data)
{
	uint32_t tail = (s->db_head + s->db_count) % 256;

	s->db_off[tail] = off;
	s->db_data[tail] = data;
	s->db_count++;
}

uint8_t *sim_host(struct sim_chip *s, uint64_t addr)
{
	return s->host + (addr - SIM_HOST_BASE);
}

const struct nvm_sram_layout *sim_layout(struct sim_chip *s)
{
	return &s->fw.layout;
}

static bool host_range_ok(uint64_t addr, uint32_t len)
{
	return addr >= SIM_HOST_BASE && len <= SIM_HOST_SIZE &&
	       addr - SIM_HOST_BASE <= SIM_HOST_SIZE - len;
}

static bool step_hdma(struct sim_chip *s)
{
	uint32_t off;

	if (!s->hdma_pending)
		return false;
	off = s->hdma_desc;
	for (int n = 0; n < 1024; n++) {
		struct lanai_dma_desc d;
		uint64_t host;

		if ((off & 7) || !fw_sram_range_ok(&s->chip, off, sizeof(d)))
			break;
		memcpy(&d, s->chip.sram + off, sizeof(d));
		host = (uint64_t)d.eah << 32 | d.eal;
		if (!fw_sram_range_ok(&s->chip, d.lar, d.len)) {
			d.status = NVM_DMA_ST_ERR_SRAM;
			goto done;
		}
		/* every address the firmware aims at, even one the engine
		 * refuses: on a machine with more memory it would land */
		if (s->dma_hook)
			s->dma_hook(s->dma_ctx, host, d.len,
				    !(d.next & LANAI_DMA_E2L));
		if (!host_range_ok(host, d.len)) {
			struct nvm_event ev = { .type = NVM_EV_ERROR,
						.data = NVM_ERR_HOST_DMA,
						.arg = host };

			c_event_post(s, &ev);
			d.status = NVM_DMA_ST_ERR_HOST;
		} else {
			if (d.next & LANAI_DMA_E2L)
				memcpy(s->chip.sram + d.lar, sim_host(s, host),
				       d.len);
			else
				memcpy(sim_host(s, host), s->chip.sram + d.lar,
				       d.len);
			d.status = NVM_DMA_ST_DONE;
		}
done:
		memcpy(s->chip.sram + off, &d, sizeof(d));
		if (d.status != NVM_DMA_ST_DONE || (d.next & LANAI_DMA_TERMINAL))
			break;
		off = d.next & ~(uint32_t)LANAI_DMA_FLAGS;
	}
	s->hdma_pending = false;
	s->isr |= LANAI_ISR_WAKE0;
	return true;
}

/* Leading route bytes: outside the CRC, as on the device (packet.h). */
static uint32_t route_len(const uint8_t *b, uint32_t len)
{
	uint32_t n = 0;

	while (n < len && n < NVM_ROUTE_MAX && (b[n] & NVM_ROUTE_BYTE))
		n++;
	return n;
}

static bool step_send(struct sim_chip *s)
{
	struct sim_frame *f;
	uint32_t crc;

	if (!s->send_pending || s->wire_count + 2 >= SIM_WIRE_MAX)
		return false;	/* a full wire back-pressures the sender */
	f = malloc(sizeof(*f));
	memcpy(f->data, s->chip.sram + s->send_off, s->send_len);
	crc = fw_crc32(0, f->data + route_len(f->data, s->send_len),
		       s->send_len - route_len(f->data, s->send_len));
	f->data[s->send_len + 0] = crc >> 24;
	f->data[s->send_len + 1] = crc >> 16;
	f->data[s->send_len + 2] = crc >> 8;
	f->data[s->send_len + 3] = crc;
	f->len = s->send_len + NVM_PKT_CRC_LEN;
	if (s->corrupt_next > 0) {
		/* corrupt the header but fix the CRC: a malformed packet */
		f->data[s->corrupt_next - 1] ^= 0x40;
		crc = fw_crc32(0, f->data + route_len(f->data, f->len - 4),
			       f->len - 4 - route_len(f->data, f->len - 4));
		f->data[f->len - 4] = crc >> 24;
		f->data[f->len - 3] = crc >> 16;
		f->data[f->len - 2] = crc >> 8;
		f->data[f->len - 1] = crc;
		s->corrupt_next = 0;
	}
	s->send_pending = false;
	s->isr |= LANAI_ISR_SEND;
	s->frames_sent++;
	if (s->drop_pct && sim_rand(s, 100) < s->drop_pct) {
		s->frames_dropped++;
		free(f);
		return true;
	}
	if (s->dup_pct && sim_rand(s, 100) < s->dup_pct &&
	    s->wire_count + 1 < SIM_WIRE_MAX) {
		struct sim_frame *d = malloc(sizeof(*d));

		memcpy(d, f, sizeof(*d));
		s->wire[(s->wire_head + s->wire_count) % SIM_WIRE_MAX] = d;
		s->wire_count++;
		s->frames_duped++;
	}
	s->wire[(s->wire_head + s->wire_count) % SIM_WIRE_MAX] = f;
	s->wire_count++;
	if (s->reorder_pct && s->wire_count >= 2 &&
	    sim_rand(s, 100) < s->reorder_pct) {
		/* swap the two newest frames */
		uint32_t a = (s->wire_head + s->wire_count - 1) % SIM_WIRE_MAX;
		uint32_t b = (s->wire_head + s->wire_count - 2) % SIM_WIRE_MAX;
		struct sim_frame *t = s->wire[a];

		s->wire[a] = s->wire[b];
		s->wire[b] = t;
		s->frames_reordered++;
	}
	return true;
}

void sim_inject(struct sim_chip *to, const void *frame, uint32_t len)
{
	struct sim_frame *f;

	if (len > NVM_FRAME_MAX || to->inq_count == SIM_WIRE_MAX)
		abort();	/* the test asked for what no wire carries */
	f = calloc(1, sizeof(*f));
	memcpy(f->data, frame, len);
	f->len = len;
	to->inq[(to->inq_head + to->inq_count) % SIM_WIRE_MAX] = f;
	to->inq_count++;
}

/* Put one frame into s's next receive slot; false if the slot is full. */
static bool rx_put(struct sim_chip *s, const uint8_t *data, uint32_t len)
{
	uint32_t soff = s->rx_ring + s->rx_next * s->rx_slot_size;

	if (fw_sram_rd32(&s->chip, soff) != FW_RX_SLOT_EMPTY)
		return false;
	memcpy(s->chip.sram + soff + sizeof(struct fw_rx_slot), data, len);
	fw_sram_wr32(&s->chip, soff + 4, len);
	fw_sram_wr32(&s->chip, soff, FW_RX_SLOT_FULL);
	s->rx_next = (s->rx_next + 1) % s->rx_slots;
	s->isr |= LANAI_ISR_RECV;
	return true;
}

/* Frames a test injected at s: each takes a receive slot, as from a wire
 * whose CRC was good (the device drops bad ones before the firmware). */
static bool step_inject(struct sim_chip *s)
{
	bool moved = false;

	while (s->inq_count && s->rx_enabled) {
		struct sim_frame *f = s->inq[s->inq_head];
		uint32_t len = f->len;

		/* a frame longer than a slot is dropped, as the device does */
		if (len + sizeof(struct fw_rx_slot) <= s->rx_slot_size &&
		    !rx_put(s, f->data, len))
			break;
		s->inq_head = (s->inq_head + 1) % SIM_WIRE_MAX;
		s->inq_count--;
		free(f);
		moved = true;
	}
	return moved;
}

/*
 * A NetVM frame for a node other than the peer goes nowhere: the wire
 * stands for a fabric that delivers only to the addressed node (answers to
 * a forged node id must not reach the real peer as if meant for it).
 */
static bool for_peer(struct sim_chip *p, const uint8_t *b, uint32_t len)
{
	uint32_t rl = route_len(b, len);
	struct nvm_pkt_hdr h;

	if (len - rl < sizeof(h))
		return true;
	memcpy(&h, b + rl, sizeof(h));
	return h.type != NVM_PKT_NETVM || fw_be16(h.dst_node) == p->chip.node_id;
}

/* Deliver frames from s's wire into its peer's receive slots. */
static bool step_wire(struct sim_chip *s)
{
	struct sim_chip *p = s->peer;
	struct sim_frame *f;
	uint8_t *slot;
	uint32_t len, crc;
	bool moved = false;

	while (p && s->wire_count && p->rx_enabled) {
		uint32_t soff = p->rx_ring + p->rx_next * p->rx_slot_size;

		slot = p->chip.sram + soff;
		if (fw_sram_rd32(&p->chip, soff) != FW_RX_SLOT_EMPTY)
			break;	/* receiver full: the frame waits on the wire */
		f = s->wire[s->wire_head];
		s->wire_head = (s->wire_head + 1) % SIM_WIRE_MAX;
		s->wire_count--;
		len = f->len - NVM_PKT_CRC_LEN;
		crc = (uint32_t)f->data[len] << 24 | f->data[len + 1] << 16 |
		      f->data[len + 2] << 8 | f->data[len + 3];
		if (!for_peer(p, f->data, len)) {
			s->frames_misaddressed++;
		} else if (crc == fw_crc32(0, f->data + route_len(f->data, len),
					   len - route_len(f->data, len))) {
			memcpy(slot + sizeof(struct fw_rx_slot), f->data, len);
			fw_sram_wr32(&p->chip, soff + 4, len);
			fw_sram_wr32(&p->chip, soff, FW_RX_SLOT_FULL);
			p->rx_next = (p->rx_next + 1) % p->rx_slots;
			p->isr |= LANAI_ISR_RECV;
		}
		free(f);
		moved = true;
	}
	return moved;
}

/* Timers due after this simulated time do not fire (sim_settle_for). */
static uint64_t settle_until = UINT64_MAX;

/* Fire the earliest armed timer of either chip; false if none. */
static bool fire_timer(struct sim_chip **chips)
{
	struct sim_chip *best = NULL;
	int which = -1;

	for (int i = 0; i < 2; i++) {
		if (!chips[i])
			continue;
		for (int t = 0; t < 3; t++) {
			uint64_t at = chips[i]->timer_at[t];

			if (at && (!best || at < best->timer_at[which])) {
				best = chips[i];
				which = t;
			}
		}
	}
	if (!best || best->timer_at[which] > settle_until)
		return false;
	/* simulated time moves for both chips alike */
	for (int i = 0; i < 2; i++)
		if (chips[i] &&
		    chips[i]->now_ns < best->timer_at[which] + best->timer_late_ns)
			chips[i]->now_ns = best->timer_at[which] +
					   best->timer_late_ns;
	best->timer_at[which] = 0;
	best->isr |= which == 0 ? LANAI_ISR_TIME0 :
		     which == 1 ? LANAI_ISR_TIME1 : LANAI_ISR_TIME2;
	return true;
}

static bool step_once(struct sim_chip **chips)
{
	bool moved = false;

	for (int i = 0; i < 2; i++) {
		struct sim_chip *s = chips[i];

		if (!s)
			continue;
		fw_run(&s->fw);
		moved |= step_hdma(s);
		moved |= step_send(s);
		moved |= step_inject(s);
		moved |= step_wire(s);
	}
	return moved;
}

/* Every operation ends within the longest give-up; what still moves after
 * twice that is a loop no timer ends (retransmissions to a node that is
 * not there, an endpoint stalled on a page that stays out), and settling
 * further would only spin. */
#define SIM_SETTLE_NS_MAX	(2 * NVM_GIVEUP_MS_MAX * 1000000ull)

int sim_settle(struct sim_chip *a, struct sim_chip *b)
{
	struct sim_chip *chips[2] = { a, b };
	uint64_t start = a->now_ns;
	int steps = 0;

	while (steps < 2000000 && a->now_ns - start <= SIM_SETTLE_NS_MAX) {
		steps++;
		if (step_once(chips))
			continue;
		/* quiet: let the OS act, then time pass */
		if (sim_idle && sim_idle(sim_idle_ctx))
			continue;
		/* a few more passes so the firmware sees what the OS did */
		if (step_once(chips))
			continue;
		if (!fire_timer(chips))
			break;
	}
	return steps;
}

int sim_settle_for(struct sim_chip *a, struct sim_chip *b, uint64_t ns)
{
	uint64_t outer = settle_until;
	int steps;

	/* nested (the OS hook settles while it waits): the earlier bound */
	if (a->now_ns + ns < outer)
		settle_until = a->now_ns + ns;
	steps = sim_settle(a, b);
	settle_until = outer;
	return steps;
}

void sim_run(struct sim_chip *a, struct sim_chip *b, int n)
{
	struct sim_chip *chips[2] = { a, b };

	while (n-- > 0)
		step_once(chips);
}
int sim_count_events(struct sim_chip *s, uint8_t type, int64_t data)
{
	int n = 0;

	for (uint32_t i = 0; i < s->nevents; i++)
		if (s->events[i].type == type &&
		    (data < 0 || s->events[i].data == (uint32_t)data))
			n++;
	return n;
}

const struct nvm_event *sim_last_event(struct sim_chip *s, uint8_t type)
{
	for (uint32_t i = s->nevents; i-- > 0;)
		if (s->events[i].type == type)
			return &s->events[i];
	return NULL;
}

uint32_t sim_tx_held(struct sim_chip *s, uint32_t node)
{
	uint32_t n = 0;

	for (int i = 0; i < FW_NV_TXBUFS; i++)
		n += s->fw.nv.txbuf_ref[i] && s->fw.nv.txbuf_peer[i] == node + 1;
	return n;
}
