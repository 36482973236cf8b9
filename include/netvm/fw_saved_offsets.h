/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Where some firmware table fields sit in the device's saved state: byte
 * offsets into struct fw's saved block (from FW_SAVED_OFFSET, host byte
 * order).  For the device's qtest (tests/qtest/lanai-test.c) and the
 * guest suite's saved-file checks (tests/guest/test_security.py), which
 * corrupt them in a migration stream and cannot include the firmware's
 * headers; firmware-interp/fw_load.c asserts them at build time, so a
 * change to struct fw that moves one fails the build, not the test.
 */
#ifndef NETVM_FW_SAVED_OFFSETS_H
#define NETVM_FW_SAVED_OFFSETS_H

/* struct fw's saved block in a stream: this many bytes after the end of
 * the device's section idstr ("<pci path>/lanai"; instance and version
 * ids, then the fields in VMState order of lanai-pci.c).  Pinned by the
 * migration qtests, whose machine is the cluster's (pc). */
#define NVM_DEV_SAVED_FW_FROM_IDSTR	6658

#define NVM_FW_SAVED_HDMA_HEAD		1448	/* q.hdma_head, uint32 */
#define NVM_FW_SAVED_NV_RR_EP		5588	/* nv.rr_ep, uint32 */
#define NVM_FW_SAVED_PEER1_WQ_HEAD	320988	/* nv.peer[1].wq_head, uint32 */
#define NVM_FW_SAVED_TW_HEAD0		544360	/* tw.head[0], uint16 */
#define NVM_FW_SAVED_UNET_EP1_STATE	547112	/* unet.ep[1].state, uint32 */
#define NVM_FW_SAVED_UNET_DIV_SLOTS	557608	/* unet.div_slots, uint32 */
#define NVM_FW_SAVED_NV_TXBUF_PEER0	4856	/* nv.txbuf_peer[0], uint8 */
#define NVM_FW_SAVED_NV_TICK_ARMED	5568	/* nv.tick_armed_ns, uint64 */
#define NVM_FW_SAVED_NV_TICK_REM	5576	/* nv.tick_rem_ns, uint64 */
#define NVM_FW_SAVED_ETH_TX_NEXT	559224	/* eth.tx_next, uint32 */
#define NVM_FW_SAVED_ETH_TB_STATE0	559228	/* eth.tb_state[0], uint32 */
#define NVM_FW_SAVED_ETH_TB_NDESC0	559292	/* eth.tb_ndesc[0], uint32 */
#define NVM_FW_SAVED_ETH_TB_FRAME0	559308	/* eth.tb_frame[0], uint32 */
#define NVM_FW_SAVED_ETH_RX_CSUM	559340	/* eth.rx_csum, uint32 */

#endif
