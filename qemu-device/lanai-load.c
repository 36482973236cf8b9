/*
 * LANai: what a migration stream may set.  The stream is input like any
 * other: every index, count, ring position and engine range in the
 * device's state, and the firmware's layout and raw-program positions
 * (which the firmware uses as SRAM offsets without checking them again),
 * are checked before anything uses them; lanai_post_load refuses a
 * stream that fails.  The engines check again where they use the values.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "lanai.h"
#include "netvm/netvm_fw.h"
#include "fw_load.h"

#define CHECK(cond)                                                     \
    do {                                                                \
        if (!(cond)) {                                                  \
            *what = #cond;                                              \
            return false;                                               \
        }                                                               \
    } while (0)

/* count items of size bytes at off lie in SRAM (64-bit: no wrap) */
static bool lanai_sram_region_ok(LanaiState *s, uint32_t off, uint64_t count,
                                 uint64_t size)
{
    return off <= s->sram_size && count * size <= s->sram_size - off;
}

static bool lanai_device_ok(LanaiState *s, const char **what)
{
    CHECK(!(s->cpuc & ~LANAI_CPUC_RUN));
    CHECK(!(s->myrinet &
            ~(LANAI_MYRINET_NRES_EN | LANAI_MYRINET_CRC32_EN)));
    CHECK(s->fw_state <= NVM_FW_FAULT);
    CHECK(s->layout_off <= s->sram_size);
    for (unsigned i = 0; i < ARRAY_SIZE(s->it_deadline); i++) {
        CHECK(s->it_deadline[i] >= 0);
    }
    CHECK(s->evq_len == 0 || (is_power_of_2(s->evq_len) &&
                              s->evq_len <= 65536 &&
                              !(s->evq_base & (sizeof(struct nvm_event) - 1))));
    CHECK((uint32_t)(s->evq_prod - s->evq_cons) <= s->evq_len);
    CHECK(s->backlog_head < LANAI_EV_BACKLOG);
    CHECK(s->backlog_count <= LANAI_EV_BACKLOG);
    CHECK(s->db_head < LANAI_DB_DEPTH);
    CHECK(s->db_count <= LANAI_DB_DEPTH);
    CHECK(!s->rx_enabled || lanai_rx_state_ok(s));
    CHECK(!s->send_busy || lanai_send_range_ok(s, s->send_off, s->send_len));
    CHECK(s->st_status <= NVM_ST_STATUS_ERROR);
    CHECK(s->st_status != NVM_ST_STATUS_BUSY ||
          lanai_selftest_args_ok(s->st_cmd, s->st_len));
    return true;
}

/*
 * The firmware's regions and its raw program's ring positions; its
 * NetVM, U-Net and tripwire tables and engine queues are checked by the
 * firmware itself (fw_state_ok, firmware-interp/fw_load.c), next to the
 * code that uses them.
 */
static bool lanai_fw_ok(LanaiState *s, const char **what)
{
    const struct fw *fw = &s->fw;
    const struct nvm_sram_layout *l = &fw->layout;

    CHECK(fw->state <= NVM_FW_FAULT);
    CHECK(lanai_sram_region_ok(s, fw->layout_off, 1, sizeof(*l)));
    CHECK(lanai_sram_region_ok(s, l->raw_tx_ring, l->raw_tx_len,
                               sizeof(struct nvm_raw_desc)));
    CHECK(lanai_sram_region_ok(s, l->raw_rx_ring, l->raw_rx_len,
                               sizeof(struct nvm_raw_desc)));
    CHECK(lanai_sram_region_ok(s, l->wire_rx_ring, l->wire_rx_slots,
                               l->wire_rx_slot_size));
    CHECK(!l->wire_rx_slots ||
          l->wire_rx_slot_size > sizeof(struct fw_rx_slot));
    CHECK(lanai_sram_region_ok(s, l->staging, 1, l->staging_size));
    CHECK(lanai_sram_region_ok(s, l->counters, 1, sizeof(fw->counters)));
    CHECK(l->counters_len <= ARRAY_SIZE(fw->counters));
    CHECK(lanai_sram_region_ok(s, l->ep_base, l->ep_count, l->ep_stride));
    CHECK(lanai_sram_region_ok(s, l->txbuf, l->txbuf_count, l->txbuf_size));
    CHECK(lanai_sram_region_ok(s, l->pt, (uint64_t)l->pt_rows * NVM_PT_WAYS,
                               sizeof(uint32_t)));
    CHECK(lanai_sram_region_ok(s, l->pmap, l->max_ppn,
                               sizeof(struct nvm_pmap_entry)));
    CHECK(lanai_sram_region_ok(s, l->pmap_lock, l->max_ppn, 1));
    CHECK(lanai_sram_region_ok(s, l->pmap_hdirty, l->max_ppn, 1));
    CHECK(lanai_sram_region_ok(s, l->pmap_ndirty, l->max_ppn, 1));
    CHECK(lanai_sram_region_ok(s, l->pmap_flags, l->max_ppn, 1));
    CHECK(fw->tx_state < FW_TX_STATE_COUNT);
    if (fw->state == NVM_FW_READY) {
        /* a running raw program divides by these and indexes with these */
        CHECK(l->raw_tx_len && fw->tx_idx < l->raw_tx_len &&
              fw->tx_next < l->raw_tx_len);
        CHECK(l->raw_rx_len && fw->rx_idx < l->raw_rx_len &&
              fw->rx_next < l->raw_rx_len);
        CHECK(l->wire_rx_slots && fw->rx_slot < l->wire_rx_slots);
    }
    return fw_state_ok(fw, what);
}

#undef CHECK

bool lanai_load_ok(LanaiState *s, const char **what)
{
    return lanai_device_ok(s, what) && lanai_fw_ok(s, what);
}
