// SPDX-License-Identifier: GPL-2.0-only
/*
 * Loading saved firmware state.  struct fw is saved as one block, so on
 * load every field is input.  Each module checks its own tables beside
 * the code that uses them (fw_queue.c, fw_nv_tx.c and fw_nv_ep.c,
 * fw_tripwire.c, fw_unet.c), against the bounds that code assumes: it
 * indexes with them unchecked, as only the firmware ever writes them.
 *
 * The device's qtest patches a few fields in a saved stream; their
 * offsets are pinned here so that moving one fails the build.
 */
#include "fw.h"
#include "fw_load.h"
#include "netvm/fw_saved_offsets.h"

#define SAVED_AT(field, off) \
	_Static_assert(offsetof(struct fw, field) - FW_SAVED_OFFSET == (off), \
		       "netvm/fw_saved_offsets.h: " #field " moved")
SAVED_AT(q.hdma_head, NVM_FW_SAVED_HDMA_HEAD);
SAVED_AT(nv.rr_ep, NVM_FW_SAVED_NV_RR_EP);
SAVED_AT(nv.peer[1].wq_head, NVM_FW_SAVED_PEER1_WQ_HEAD);
SAVED_AT(tw.head[0], NVM_FW_SAVED_TW_HEAD0);
SAVED_AT(unet.ep[1].state, NVM_FW_SAVED_UNET_EP1_STATE);
SAVED_AT(unet.div_slots, NVM_FW_SAVED_UNET_DIV_SLOTS);
SAVED_AT(nv.txbuf_peer[0], NVM_FW_SAVED_NV_TXBUF_PEER0);
SAVED_AT(nv.tick_armed_ns, NVM_FW_SAVED_NV_TICK_ARMED);
SAVED_AT(nv.tick_rem_ns, NVM_FW_SAVED_NV_TICK_REM);
SAVED_AT(eth.tx_next, NVM_FW_SAVED_ETH_TX_NEXT);
SAVED_AT(eth.tb_state[0], NVM_FW_SAVED_ETH_TB_STATE0);
SAVED_AT(eth.tb_ndesc[0], NVM_FW_SAVED_ETH_TB_NDESC0);
SAVED_AT(eth.tb_frame[0], NVM_FW_SAVED_ETH_TB_FRAME0);
SAVED_AT(eth.rx_csum, NVM_FW_SAVED_ETH_RX_CSUM);

bool fw_state_ok(const struct fw *fw, const char **what)
{
	return fw_queues_state_ok(fw, what) && fw_nv_state_ok(fw, what) &&
	       fw_tw_state_ok(fw, what) && fw_unet_state_ok(fw, what) && fw_eth_state_ok(fw, what);
}
