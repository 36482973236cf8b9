// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for the firmware's parsers: packets from the link and
 * commands and doorbells from the host, fed into a configured NetVM chip
 * (simulated host and peer, tests/unit/sim_*.c).  Built with AddressSanitizer
 * and UBSan: any out-of-bounds access, overflow or hang is a finding.
 *
 * Input: a sequence of records  [kind:1][len:2 LE][bytes:len]
 *   kind 0  a frame arriving on the link (header checks, NetVM parser)
 *   kind 1  a command for endpoint (bytes[0] % 4) (command validation)
 *   kind 2  a doorbell write: offset (4 bytes) and data (4 bytes)
 *   kind 3  a raw descriptor pushed to the raw rings
 *   kind 4  a U-Net send descriptor on a's U-Net endpoint (port 5),
 *           DSM flags included (gather lists, reply numbers)
 * Both U-Net endpoints have pageable segments with some pages swapped out,
 * so offsets reach the translation path, its misses and restarts (the
 * simulated kernel maps a missed page and restarts).
 */
#include <stdint.h>
#include <string.h>

#include "sim_host.h"
#include "netvm/packet.h"

static struct sim_chip a, b;
static struct sim_host ha, hb;
static uint32_t unet_sent;

#define UNET_PORT	5
#define UNET_AREA	(SIM_HOST_BASE + (14u << 20))	/* rxq, then segment */
#define UNET_VA		0x7f3000000000ull	/* the pageable segments */

static void unet_kop(struct sim_host *h, uint8_t op, const void *k, size_t n)
{
	struct nvm_cmd c = { .op = op };

	memcpy(c.inline_data, k, n);
	sh_cmd(h, NVM_EP_KERNEL, &c);
}

/* A U-Net endpoint on port 5 of each chip, linked by tag 0x77, so frames
 * of type NVM_PKT_UNET reach the receive path and not only the drop. */
static void unet_setup(struct sim_host *h, uint32_t peer)
{
	struct nvm_k_unet_open o = {
		.seg = UNET_VA, .rxq = UNET_AREA, .seg_size = 65536,
		.buf_size = 1024, .rxq_len = 16, .port = UNET_PORT,
		.flags = NVM_UNET_KO_PAGEABLE,
	};
	struct nvm_k_unet_chan ch = {
		.port = UNET_PORT, .open = 1, .node = peer, .rport = UNET_PORT,
		.tag = 0x77,
	};
	uint8_t *r;

	struct nvm_cmd dc = {
		.op = NVM_KOP_UNET_DIVERT_CFG, .dst_node = 8,
		.arg = { (uint32_t)(SIM_HOST_BASE + (13u << 20)) },
	};

	/* a divert ring of 8 that nobody empties: diverting, then holding */
	sh_cmd(h, NVM_EP_KERNEL, &dc);
	unet_kop(h, NVM_KOP_UNET_OPEN, &o, sizeof(o));
	unet_kop(h, NVM_KOP_UNET_CHAN, &ch, sizeof(ch));
	sim_settle(&a, &b);
	/* resident but for a receive buffer's page, the fitting reply
	 * buffer's and the last */
	sh_alloc(h, UNET_PORT, UNET_VA, 65536, 0, true);
	sh_page_out(h, UNET_PORT, UNET_VA + 4096);
	sh_page_out(h, UNET_PORT, UNET_VA + 16384);
	sh_page_out(h, UNET_PORT, UNET_VA + 61440);
	r = h->c->chip.sram + h->c->fw.layout.ep_base + UNET_PORT * NVM_EP_STRIDE;
	for (uint32_t i = 0; i < 8; i++)
		fw_sram_wr32(&h->c->chip, (uint32_t)(r - h->c->chip.sram) +
			     NVM_UNET_FREEQ + i * 4, i * 1024);
	fw_sram_wr32(&h->c->chip, (uint32_t)(r - h->c->chip.sram) + NVM_UNET_CTL,
		     8);
	/* reply-table entries (DSM): 0 fits a page, 1 is too small for
	 * most, 2 lies outside the segment; frames with HF_REPLY reach
	 * the hit, oversize and bad-entry paths */
	for (uint32_t i = 0; i < 3; i++) {
		static const struct nvm_unet_reply_ent ent[3] = {
			{ .offset = 16384, .len = 4096, .armed = 1 },
			{ .offset = 0, .len = 16, .armed = 1 },
			{ .offset = 60000, .len = 8192, .armed = 1 },
		};

		memcpy(r + NVM_UNET_REPLYTAB + i * sizeof(ent[0]), &ent[i],
		       sizeof(ent[0]));
	}
}

static void setup(void)
{
	sim_init(&a, 0, LANAI_SRAM_DEFAULT);
	sim_init(&b, 1, LANAI_SRAM_DEFAULT);
	sim_connect(&a, &b);
	sim_boot(&a);
	sim_boot(&b);
	sh_pair(&ha, &hb);
	sh_init(&ha, &a, 0x1234);
	sh_init(&hb, &b, 0x5678);
	sim_settle(&a, &b);
	for (uint32_t p = 1; p < 4; p++) {
		sh_open(&ha, p);
		sh_open(&hb, p);
	}
	sh_alloc(&hb, 1, 0x20000000ull, 8 * 4096, 0x42, true);
	sh_alloc(&ha, 1, 0x10000000ull, 8 * 4096, 0x43, true);
	sim_settle(&a, &b);
	unet_setup(&ha, 1);
	unet_setup(&hb, 0);
	unet_sent = 0;
}

/* Put bytes into b's next receive slot, as the receive engine would. */
static void inject_frame(const uint8_t *f, uint32_t len)
{
	uint32_t max = b.rx_slot_size - sizeof(struct fw_rx_slot);
	uint32_t off = b.rx_ring + b.rx_next * b.rx_slot_size;

	if (!b.rx_enabled || fw_sram_rd32(&b.chip, off) != FW_RX_SLOT_EMPTY)
		return;
	if (len > max)
		len = max;
	memcpy(b.chip.sram + off + sizeof(struct fw_rx_slot), f, len);
	fw_sram_wr32(&b.chip, off + 4, len);
	fw_sram_wr32(&b.chip, off, FW_RX_SLOT_FULL);
	b.rx_next = (b.rx_next + 1) % b.rx_slots;
	b.isr |= LANAI_ISR_RECV;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t i = 0;

	setup();
	while (i + 3 <= size) {
		uint8_t kind = data[i];
		uint32_t len = data[i + 1] | data[i + 2] << 8;
		const uint8_t *p = data + i + 3;

		if (i + 3 + len > size)
			len = (uint32_t)(size - i - 3);
		i += 3 + len;
		switch (kind % 5) {
		case 0:
			inject_frame(p, len);
			break;
		case 1: {
			struct nvm_cmd c;
			uint32_t port = len ? p[0] % 4 : 1;

			struct nvm_ep_status st;
			uint32_t base = a.fw.layout.ep_base + port * NVM_EP_STRIDE;

			memset(&c, 0, sizeof(c));
			memcpy(&c, p, len < sizeof(c) ? len : sizeof(c));
			memcpy(&st, a.chip.sram + base + NVM_EP_STATUS, sizeof(st));
			if (ha.issued[port] - st.consumed >= NVM_CMDQ_LEN)
				break;	/* queue full: a real process would wait */
			c.seq = ++ha.issued[port];
			memcpy(a.chip.sram + base + NVM_EP_CMDQ +
			       ((c.seq - 1) % NVM_CMDQ_LEN) * NVM_CMD_SIZE, &c,
			       sizeof(c));
			sim_doorbell(&a, port * LANAI_DOORBELL_PAGE, ha.issued[port]);
			break;
		}
		case 2: {
			uint32_t off = 0, val = 0;

			memcpy(&off, p, len < 4 ? len : 4);
			if (len > 4)
				memcpy(&val, p + 4, len - 4 < 4 ? len - 4 : 4);
			sim_doorbell(&a, off % LANAI_DOORBELL_SIZE, val);
			break;
		}
		case 3: {
			struct nvm_raw_desc d;
			const struct nvm_sram_layout *l = &a.fw.layout;

			memset(&d, 0, sizeof(d));
			memcpy(&d, p, len < sizeof(d) ? len : sizeof(d));
			memcpy(a.chip.sram + l->raw_tx_ring +
			       (a.fw.tx_next % l->raw_tx_len) * sizeof(d), &d,
			       sizeof(d));
			sim_doorbell(&a, 0, NVM_DB_RAW_TX);
			break;
		}
		case 4: {
			struct nvm_unet_send_desc d;
			uint32_t base = a.fw.layout.ep_base +
					UNET_PORT * NVM_EP_STRIDE;

			memset(&d, 0, sizeof(d));
			memcpy(&d, p, len < sizeof(d) ? len : sizeof(d));
			d.seq = ++unet_sent;
			memcpy(a.chip.sram + base + NVM_UNET_SENDQ +
			       ((d.seq - 1) % NVM_UNET_SENDQ_LEN) * sizeof(d),
			       &d, sizeof(d));
			sim_doorbell(&a, UNET_PORT * LANAI_DOORBELL_PAGE,
				     unet_sent);
			break;
		}
		}
		/* bounded: the fuzzer must not wait for simulated timeouts */
		sim_run(&a, &b, 200);
		sh_idle(&ha);
		sh_idle(&hb);
	}
	sim_run(&a, &b, 500);
	sim_free(&a);
	sim_free(&b);
	return 0;
}
