/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the U-Net firmware tests (test_fw_unet*.c) share: two nodes back
 * to back with the kernel's U-Net memory registered on both hosts, the
 * kernel commands that open endpoints, channels and the divert ring, and
 * an endpoint's SRAM region as its process uses it (status, control
 * words, free queue, send queue) and its receive queue.  One copy, so
 * that a change to the U-Net ABI or to the bench is made in one place.
 */
#ifndef NETVM_UNET_FIXTURE_H
#define NETVM_UNET_FIXTURE_H

#include "sim_host.h"

/* Every test endpoint's receive queue length, buffer size, segment size. */
#define UF_RXQ_LEN	16
#define UF_BUF		1024
#define UF_SEG_SZ	(64u * 1024)
/* The kernel's U-Net memory (rings, segments, send buffers) on each
 * host: the top 6 MiB, which the NIC may touch (sim_host's grant check). */
#define UF_AREAS	(SIM_HOST_BASE + (10u << 20))
#define UF_AREAS_LEN	(6u << 20)
/* An endpoint's memory at @area: its receive queue, then its segment. */
#define UF_SEG(area)	\
	((area) + UF_RXQ_LEN * sizeof(struct nvm_unet_rx_desc))

/* sh_two_nodes, the U-Net memory registered on both hosts; settled. */
void uf_setup(struct sim_chip *a, struct sim_chip *b, struct sim_host *ha,
	      struct sim_host *hb);
/* Every test's end: the state of both chips would load (fw_load.c), no
 * DMA went outside what was granted; then the chips are freed. */
void uf_teardown(struct sim_host *ha, struct sim_host *hb);

/* A kernel command's status: NVM_ST_OK, or the status of the one error
 * record @h's kernel endpoint got after its count was @before. */
uint32_t uf_kstatus(struct sim_host *h, uint32_t before);
/* Kernel command @c on @h, both chips settled after; its status. */
uint32_t uf_kcmd(struct sim_host *h, struct nvm_cmd *c);
/* ... with @len bytes of struct argument @arg in the command. */
uint32_t uf_kop(struct sim_host *h, uint8_t op, const void *arg, size_t len);
/* ... with its arguments in the command's own fields. */
uint32_t uf_kop_args(struct sim_host *h, uint8_t op, uint16_t node,
		     uint16_t port, uint32_t a0, uint32_t a1);
/* Open endpoint @port with its memory at @area (UF_SEG), zeroed first. */
uint32_t uf_open(struct sim_host *h, uint32_t port, uint64_t area);
/* Open (@open 1) or close channel @ch of @port to (@node, @rport, @tag). */
uint32_t uf_chan(struct sim_host *h, uint32_t port, uint32_t ch,
		 uint32_t node, uint32_t rport, uint32_t tag, uint32_t open);
/* The kernel's divert ring: @slots records at @at. */
uint32_t uf_divert_ring(struct sim_host *h, uint64_t at, uint16_t slots);

/* Endpoint @port's SRAM region on chip @c, and the parts of it. */
uint8_t *uf_region(struct sim_chip *c, uint32_t port);
struct nvm_unet_status uf_status(struct sim_chip *c, uint32_t port);
struct nvm_unet_ctl *uf_ctl(struct sim_chip *c, uint32_t port);
/* Give the NI back receive buffer @off of @port's segment. */
void uf_push_free(struct sim_chip *c, uint32_t port, uint32_t off);
/* Receive descriptor @n of the endpoint whose memory is at @area. */
struct nvm_unet_rx_desc *uf_rxd(struct sim_chip *c, uint64_t area,
				uint32_t n);

/* Post send descriptor @d on @port of @c as the endpoint's send *@posted
 * + 1 (its seq) and ring; the slot's status byte, which the NI sets. */
uint8_t *uf_post(struct sim_chip *c, uint32_t port, uint32_t *posted,
		 struct nvm_unet_send_desc *d);
/* uf_post, settled: the status @d completed with. */
uint8_t uf_send(struct sim_chip *c, uint32_t port, uint32_t *posted,
		struct nvm_unet_send_desc *d);
/* A message on channel @ch: inline if it fits, else copied to offset 0
 * of the segment of the endpoint at @area and sent from there. */
uint8_t uf_send_msg(struct sim_chip *c, uint32_t port, uint32_t *posted,
		    uint64_t area, uint16_t ch, const void *data, uint32_t len);
/* Receive @n of the endpoint at @area on @c is @msg whole, arrived on
 * @ch from (@node, @from); its buffers go back to the free queue. */
void uf_check_rx(struct sim_chip *c, uint32_t port, uint64_t area,
		 uint32_t n, uint32_t ch, uint32_t node, uint32_t from,
		 const uint8_t *msg, uint32_t len);

#endif
