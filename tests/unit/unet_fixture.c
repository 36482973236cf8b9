// SPDX-License-Identifier: GPL-2.0-only
/* The U-Net firmware tests' shared bench and helpers (see unet_fixture.h). */
#include <check.h>
#include <string.h>

#include "unet_fixture.h"
#include "fw_load.h"

void uf_setup(struct sim_chip *a, struct sim_chip *b, struct sim_host *ha,
	      struct sim_host *hb)
{
	sh_two_nodes(a, b, ha, hb);
	sh_area(ha, UF_AREAS, UF_AREAS_LEN);
	sh_area(hb, UF_AREAS, UF_AREAS_LEN);
	sh_settle();
}

void uf_teardown(struct sim_host *ha, struct sim_host *hb)
{
	const char *what = NULL;

	ck_assert_msg(fw_state_ok(&ha->c->fw, &what), "node 0: %s", what);
	ck_assert_msg(fw_state_ok(&hb->c->fw, &what), "node 1: %s", what);
	ck_assert_uint_eq(sh_dma_violations(ha), 0);
	ck_assert_uint_eq(sh_dma_violations(hb), 0);
	sim_free(ha->c);
	sim_free(hb->c);
}

uint32_t uf_kstatus(struct sim_host *h, uint32_t before)
{
	if (sh_shadow(h, NVM_EP_KERNEL).errors == before)
		return NVM_ST_OK;
	ck_assert_uint_eq(sh_shadow(h, NVM_EP_KERNEL).errors, before + 1);
	return sh_err(h, NVM_EP_KERNEL, before).status;
}

uint32_t uf_kcmd(struct sim_host *h, struct nvm_cmd *c)
{
	uint32_t before = sh_shadow(h, NVM_EP_KERNEL).errors;

	sh_cmd(h, NVM_EP_KERNEL, c);
	sh_settle();
	return uf_kstatus(h, before);
}

uint32_t uf_kop(struct sim_host *h, uint8_t op, const void *arg, size_t len)
{
	struct nvm_cmd c = { .op = op };

	ck_assert_uint_le(len, sizeof(c.inline_data));
	memcpy(c.inline_data, arg, len);
	return uf_kcmd(h, &c);
}

uint32_t uf_kop_args(struct sim_host *h, uint8_t op, uint16_t node,
		     uint16_t port, uint32_t a0, uint32_t a1)
{
	struct nvm_cmd c = { .op = op, .dst_node = node, .dst_port = port };

	c.arg[0] = a0;
	c.arg[1] = a1;
	return uf_kcmd(h, &c);
}

uint32_t uf_open(struct sim_host *h, uint32_t port, uint64_t area)
{
	struct nvm_k_unet_open k = {
		.seg = UF_SEG(area), .rxq = area, .seg_size = UF_SEG_SZ,
		.buf_size = UF_BUF, .rxq_len = UF_RXQ_LEN, .port = port,
	};

	memset(sim_host(h->c, area), 0, UF_SEG(area) - area + UF_SEG_SZ);
	return uf_kop(h, NVM_KOP_UNET_OPEN, &k, sizeof(k));
}

uint32_t uf_chan(struct sim_host *h, uint32_t port, uint32_t ch,
		 uint32_t node, uint32_t rport, uint32_t tag, uint32_t open)
{
	struct nvm_k_unet_chan k = {
		.port = port, .channel = ch, .open = open, .node = node,
		.rport = rport, .tag = tag,
	};

	return uf_kop(h, NVM_KOP_UNET_CHAN, &k, sizeof(k));
}

uint32_t uf_divert_ring(struct sim_host *h, uint64_t at, uint16_t slots)
{
	return uf_kop_args(h, NVM_KOP_UNET_DIVERT_CFG, slots, 0, (uint32_t)at,
			   (uint32_t)(at >> 32));
}

uint8_t *uf_region(struct sim_chip *c, uint32_t port)
{
	return c->chip.sram + c->fw.layout.ep_base + port * NVM_EP_STRIDE;
}

struct nvm_unet_status uf_status(struct sim_chip *c, uint32_t port)
{
	struct nvm_unet_status st;

	memcpy(&st, uf_region(c, port) + NVM_UNET_STATUS, sizeof(st));
	return st;
}

struct nvm_unet_ctl *uf_ctl(struct sim_chip *c, uint32_t port)
{
	return (struct nvm_unet_ctl *)(uf_region(c, port) + NVM_UNET_CTL);
}

void uf_push_free(struct sim_chip *c, uint32_t port, uint32_t off)
{
	struct nvm_unet_ctl *k = uf_ctl(c, port);
	uint32_t *q = (uint32_t *)(uf_region(c, port) + NVM_UNET_FREEQ);

	q[k->free_prod % NVM_UNET_FREEQ_LEN] = off;
	k->free_prod++;
}

struct nvm_unet_rx_desc *uf_rxd(struct sim_chip *c, uint64_t area,
				uint32_t n)
{
	return (struct nvm_unet_rx_desc *)sim_host(c, area + (n % UF_RXQ_LEN) *
					     sizeof(struct nvm_unet_rx_desc));
}

uint8_t *uf_post(struct sim_chip *c, uint32_t port, uint32_t *posted,
		 struct nvm_unet_send_desc *d)
{
	uint8_t *slot = uf_region(c, port) + NVM_UNET_SENDQ +
			(*posted % NVM_UNET_SENDQ_LEN) * sizeof(*d);

	d->seq = ++*posted;
	memcpy(slot, d, sizeof(*d));
	sim_doorbell(c, port * LANAI_DOORBELL_PAGE, *posted);
	return slot + offsetof(struct nvm_unet_send_desc, status);
}

uint8_t uf_send(struct sim_chip *c, uint32_t port, uint32_t *posted,
		struct nvm_unet_send_desc *d)
{
	uint8_t *st = uf_post(c, port, posted, d);

	sh_settle();
	return *st;
}

uint8_t uf_send_msg(struct sim_chip *c, uint32_t port, uint32_t *posted,
		    uint64_t area, uint16_t ch, const void *data, uint32_t len)
{
	struct nvm_unet_send_desc d = { .channel = ch, .len = len };

	if (len <= NVM_UNET_INLINE_MAX) {
		d.flags = NVM_UNET_F_INLINE;
		memcpy(d.data, data, len);
	} else {
		memcpy(sim_host(c, UF_SEG(area)), data, len);
	}
	return uf_send(c, port, posted, &d);
}

void uf_check_rx(struct sim_chip *c, uint32_t port, uint64_t area,
		 uint32_t n, uint32_t ch, uint32_t node, uint32_t from,
		 const uint8_t *msg, uint32_t len)
{
	const struct nvm_unet_rx_desc *d = uf_rxd(c, area, n);

	ck_assert_uint_eq(d->seq, n + 1);
	ck_assert_uint_eq(d->channel, ch);
	ck_assert_uint_eq(d->src_node, node);
	ck_assert_uint_eq(d->src_port, from);
	ck_assert_uint_eq(d->len, len);
	if (len <= NVM_UNET_INLINE_MAX) {
		ck_assert_mem_eq(d->data, msg, len);
		return;
	}
	ck_assert_uint_eq(d->nbuf, (len + UF_BUF - 1) / UF_BUF);
	for (uint32_t b = 0; b < d->nbuf; b++) {
		uint32_t k = len - b * UF_BUF;

		ck_assert_uint_le(d->buf[b], UF_SEG_SZ - UF_BUF);
		ck_assert_mem_eq(sim_host(c, UF_SEG(area) + d->buf[b]),
				 msg + b * UF_BUF, k < UF_BUF ? k : UF_BUF);
		uf_push_free(c, port, d->buf[b]);
	}
}
