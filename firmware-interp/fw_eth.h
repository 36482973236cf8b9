/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Ethernet frames (fw_eth.c): state inside struct fw.
 * docs/ethernet.md describes the design; include/netvm/eth_abi.h the rings.
 */
#ifndef NETVM_FW_ETH_H
#define NETVM_FW_ETH_H

#include <stdbool.h>
#include <stdint.h>

#include "netvm/eth_abi.h"

struct fw;
enum fw_rx_verdict;

#define FW_ETH_TX_LEN		256	/* tx ring entries */
#define FW_ETH_RX_LEN		64	/* rx ring entries */
/*
 * Frames of this program in flight (being fetched or waiting to be sent):
 * each owns one SRAM buffer.  Few, so that Ethernet holds at most this
 * many places in the send queue that NetVM and U-Net share with it.
 */
#define FW_ETH_TXBUFS		4
#define FW_ETH_TXBUF_SIZE	4352	/* route + header + a frame, rounded up */

/*
 * The program's SRAM, between the raw program's private areas and
 * NetVM's tx buffers (fw_sram_map.c asserts the fit): the two rings and the
 * control block, published in the layout, then the tx buffers.
 */
#define FW_ETH_SRAM		0x14000u
#define FW_ETH_TX_RING		FW_ETH_SRAM
#define FW_ETH_RX_RING		(FW_ETH_TX_RING + FW_ETH_TX_LEN * 32u)
#define FW_ETH_CTL		(FW_ETH_RX_RING + FW_ETH_RX_LEN * 32u)
#define FW_ETH_TXBUF		(FW_ETH_CTL + 64u)
#define FW_ETH_SRAM_END		(FW_ETH_TXBUF + FW_ETH_TXBUFS * FW_ETH_TXBUF_SIZE)

/* A tx buffer's state, fw_eth.tb_state[]. */
enum fw_eth_tb {
	FW_ETH_TB_FREE,
	FW_ETH_TB_FETCH,	/* host DMA: frame host -> buffer */
	FW_ETH_TB_READY,	/* fetched; waits for room in the send queue */
	FW_ETH_TB_SEND,		/* in the send queue */
	FW_ETH_TB_COUNT
};

struct fw_eth {
	uint32_t tx_next;			/* next tx descriptor to take */
	uint32_t tb_state[FW_ETH_TXBUFS];	/* enum fw_eth_tb */
	uint32_t tb_desc[FW_ETH_TXBUFS];	/* its tx descriptor */
	uint32_t tb_len[FW_ETH_TXBUFS];		/* its wire frame's bytes */
	uint32_t rx_next;			/* next rx descriptor to fill */
	uint32_t rx_idx, rx_len, rx_src;	/* the frame being delivered */
	/* checksum offload and scatter-gather (eth_abi.h) */
	uint32_t tb_ndesc[FW_ETH_TXBUFS];	/* descriptors of its frame */
	uint32_t tb_frame[FW_ETH_TXBUFS];	/* where the frame starts in it */
	uint32_t tb_csum[FW_ETH_TXBUFS];	/* start | off << 16; 0: none */
	uint32_t rx_csum;			/* the frame's sum past its header */
};

void fw_eth_layout(struct fw *fw);
bool fw_eth_tx_step(struct fw *fw);
enum fw_rx_verdict fw_eth_rx(struct fw *fw, uint32_t data, uint32_t len,
			     uint32_t src);
void fw_eth_job_done(struct fw *fw, uint32_t kind, uint32_t arg,
		     uint32_t status);
void fw_eth_sent(struct fw *fw, uint32_t arg);
bool fw_eth_state_ok(const struct fw *fw, const char **what);

#endif /* NETVM_FW_ETH_H */
