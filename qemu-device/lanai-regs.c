/*
 * LANai: register BAR (BAR0).  The access rules of every register are in
 * one table; behaviour on write is in lanai_reg_write().
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/timer.h"
#include "hw/pci/msix.h"
#include "lanai.h"
#include "trace.h"

typedef enum LanaiRegAccess {
    REG_RO,         /* host reads; a write is a guest error */
    REG_RW,         /* host reads and writes */
    REG_W1C,        /* host writes 1 to clear (ISR) */
} LanaiRegAccess;

typedef struct LanaiReg {
    const char *name;
    LanaiRegAccess access;
} LanaiReg;

#define REG(off, nm, acc) [(off) / 4] = { .name = (nm), .access = (acc) }

static const LanaiReg lanai_regs[LANAI_REGS_SIZE / 4] = {
    REG(LANAI_REG_ISR, "ISR", REG_W1C),
    REG(LANAI_REG_EIMR, "EIMR", REG_RW),
    REG(LANAI_REG_IT0, "IT0", REG_RO),
    REG(LANAI_REG_RTC, "RTC", REG_RO),
    REG(LANAI_REG_CPUC, "CPUC", REG_RW),
    REG(LANAI_REG_IT1, "IT1", REG_RO),
    REG(LANAI_REG_IT2, "IT2", REG_RO),
    REG(LANAI_REG_MYRINET, "MYRINET", REG_RW),
    REG(LANAI_REG_LED, "LED", REG_RW),
    REG(NVM_REG_ID, "ID", REG_RO),
    REG(NVM_REG_VERSION, "VERSION", REG_RO),
    REG(NVM_REG_FW_VERSION, "FW_VERSION", REG_RO),
    REG(NVM_REG_NODE_ID, "NODE_ID", REG_RO),
    REG(NVM_REG_SRAM_SIZE, "SRAM_SIZE", REG_RO),
    REG(NVM_REG_LAYOUT_OFF, "LAYOUT_OFF", REG_RO),
    REG(NVM_REG_LINK, "LINK", REG_RO),
    REG(NVM_REG_FW_STATE, "FW_STATE", REG_RO),
    REG(NVM_REG_EVQ_BASE_LO, "EVQ_BASE_LO", REG_RW),
    REG(NVM_REG_EVQ_BASE_HI, "EVQ_BASE_HI", REG_RW),
    REG(NVM_REG_EVQ_LEN, "EVQ_LEN", REG_RW),
    REG(NVM_REG_EVQ_CONS, "EVQ_CONS", REG_RW),
    REG(NVM_REG_EVQ_PROD, "EVQ_PROD", REG_RO),
    REG(NVM_REG_DB_STATUS, "DB_STATUS", REG_RO),
    REG(NVM_REG_DB_OVERFLOWS, "DB_OVERFLOWS", REG_RO),
    REG(NVM_REG_ST_ADDR_LO, "ST_ADDR_LO", REG_RW),
    REG(NVM_REG_ST_ADDR_HI, "ST_ADDR_HI", REG_RW),
    REG(NVM_REG_ST_LEN, "ST_LEN", REG_RW),
    REG(NVM_REG_ST_SEED, "ST_SEED", REG_RW),
    REG(NVM_REG_ST_CMD, "ST_CMD", REG_RW),
    REG(NVM_REG_ST_STATUS, "ST_STATUS", REG_RO),
    REG(NVM_REG_ST_IRQ, "ST_IRQ", REG_RW),
    REG(NVM_REG_SCRATCH, "SCRATCH", REG_RW),
    REG(NVM_REG_EVQ_LOST, "EVQ_LOST", REG_RO),
    REG(NVM_REG_ERRORS, "ERRORS", REG_RO),
    REG(NVM_REG_HDMA_DESC, "HDMA_DESC", REG_RW),
    REG(NVM_REG_HDMA_STATUS, "HDMA_STATUS", REG_RO),
    REG(NVM_REG_SEND_OFF, "SEND_OFF", REG_RW),
    REG(NVM_REG_SEND_LEN, "SEND_LEN", REG_RW),
    REG(NVM_REG_SEND_CTRL, "SEND_CTRL", REG_RW),
    REG(NVM_REG_SEND_COUNT, "SEND_COUNT", REG_RO),
    REG(NVM_REG_RECV_RING, "RECV_RING", REG_RW),
    REG(NVM_REG_RECV_SLOTS, "RECV_SLOTS", REG_RW),
    REG(NVM_REG_RECV_SLOT_SIZE, "RECV_SLOT_SIZE", REG_RW),
    REG(NVM_REG_RECV_CTRL, "RECV_CTRL", REG_RW),
    REG(NVM_REG_RECV_COUNT, "RECV_COUNT", REG_RO),
    REG(NVM_REG_RECV_DROPS, "RECV_DROPS", REG_RO),
};

/* Engine registers the host may only set while the firmware is halted. */
static bool lanai_reg_engine_owned(hwaddr off)
{
    return off >= NVM_REG_HDMA_DESC && off <= NVM_REG_RECV_DROPS;
}

void lanai_guest_error(LanaiState *s, const char *fmt, ...)
{
    va_list ap;
    g_autofree char *msg = NULL;

    va_start(ap, fmt);
    msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    s->errors++;
    qemu_log_mask(LOG_GUEST_ERROR, "lanai[%u]: %s\n", s->node_id, msg);
}

void lanai_regs_reset(LanaiState *s)
{
    s->isr = 0;
    s->eimr = 0;
    s->cpuc = 0;
    s->myrinet = LANAI_MYRINET_NRES_EN | LANAI_MYRINET_CRC32_EN;
    s->led = 0;
    s->scratch = 0;
    s->irq_level = false;
    s->rtc_base_ns = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
}

static uint32_t lanai_reg_value(LanaiState *s, hwaddr off)
{
    switch (off) {
    case LANAI_REG_ISR:
        return s->isr;
    case LANAI_REG_EIMR:
        return s->eimr;
    case LANAI_REG_IT0:
        return lanai_timer_ticks(s, 0);
    case LANAI_REG_IT1:
        return lanai_timer_ticks(s, 1);
    case LANAI_REG_IT2:
        return lanai_timer_ticks(s, 2);
    case LANAI_REG_RTC:
        return (qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) - s->rtc_base_ns) / 500;
    case LANAI_REG_CPUC:
        return s->cpuc;
    case LANAI_REG_MYRINET:
        return s->myrinet;
    case LANAI_REG_LED:
        return s->led;
    case NVM_REG_ID:
        return NVM_ID_MAGIC;
    case NVM_REG_VERSION:
        return NVM_ABI_VERSION;
    case NVM_REG_FW_VERSION:
        return s->fw_version;
    case NVM_REG_NODE_ID:
        return s->node_id;
    case NVM_REG_SRAM_SIZE:
        return s->sram_size;
    case NVM_REG_LAYOUT_OFF:
        return s->layout_off;
    case NVM_REG_LINK:
        return lanai_link_state(s);
    case NVM_REG_FW_STATE:
        return s->fw_state;
    case NVM_REG_EVQ_BASE_LO:
        return (uint32_t)s->evq_base;
    case NVM_REG_EVQ_BASE_HI:
        return s->evq_base >> 32;
    case NVM_REG_EVQ_LEN:
        return s->evq_len;
    case NVM_REG_EVQ_CONS:
        return s->evq_cons;
    case NVM_REG_EVQ_PROD:
        return s->evq_prod;
    case NVM_REG_DB_STATUS:
        return s->db_count | (s->db_overflow ? NVM_DB_OVERFLOW : 0);
    case NVM_REG_DB_OVERFLOWS:
        return s->db_overflows;
    case NVM_REG_ST_ADDR_LO:
        return (uint32_t)s->st_addr;
    case NVM_REG_ST_ADDR_HI:
        return s->st_addr >> 32;
    case NVM_REG_ST_LEN:
        return s->st_len;
    case NVM_REG_ST_SEED:
        return s->st_seed;
    case NVM_REG_ST_CMD:
        return s->st_cmd;
    case NVM_REG_ST_STATUS:
        return s->st_status;
    case NVM_REG_SCRATCH:
        return s->scratch;
    case NVM_REG_EVQ_LOST:
        return s->evq_lost;
    case NVM_REG_ERRORS:
        return s->errors;
    case NVM_REG_HDMA_DESC:
        return s->hdma_desc;
    case NVM_REG_HDMA_STATUS:
        return (s->hdma_busy ? NVM_ENG_BUSY : 0) | s->hdma_chains << 16;
    case NVM_REG_SEND_OFF:
        return s->send_off;
    case NVM_REG_SEND_LEN:
        return s->send_len;
    case NVM_REG_SEND_CTRL:
        return s->send_busy ? NVM_ENG_BUSY : 0;
    case NVM_REG_SEND_COUNT:
        return s->send_count;
    case NVM_REG_RECV_RING:
        return s->rx_ring;
    case NVM_REG_RECV_SLOTS:
        return s->rx_slots;
    case NVM_REG_RECV_SLOT_SIZE:
        return s->rx_slot_size;
    case NVM_REG_RECV_CTRL:
        return (s->rx_enabled ? NVM_ENG_BUSY : 0) | s->rx_next << 16;
    case NVM_REG_RECV_COUNT:
        return s->rx_count;
    case NVM_REG_RECV_DROPS:
        return s->rx_crc_errors + s->rx_oversize;
    default:
        return 0;   /* ST_IRQ reads as zero */
    }
}

static uint64_t lanai_reg_read(void *opaque, hwaddr off, unsigned size)
{
    LanaiState *s = opaque;
    const LanaiReg *r = &lanai_regs[off / 4];
    uint32_t val;

    if (!r->name) {
        lanai_guest_error(s, "read of unassigned register 0x%03" HWADDR_PRIx,
                          off);
        return 0;
    }
    val = lanai_reg_value(s, off);
    trace_lanai_reg_read(off, r->name, val);
    return val;
}

static void lanai_evq_setup_write(LanaiState *s, hwaddr off, uint32_t val)
{
    switch (off) {
    case NVM_REG_EVQ_BASE_LO:
        s->evq_base = deposit64(s->evq_base, 0, 32, val);
        break;
    case NVM_REG_EVQ_BASE_HI:
        s->evq_base = deposit64(s->evq_base, 32, 32, val);
        break;
    case NVM_REG_EVQ_LEN:
        if (val && (!is_power_of_2(val) || val > 65536 ||
                    (s->evq_base & (sizeof(struct nvm_event) - 1)))) {
            lanai_guest_error(s, "EVQ_LEN %u: not a power of two <= 65536, "
                              "or base not 16-byte aligned", val);
            return;
        }
        s->evq_len = val;
        s->evq_prod = 0;
        s->evq_cons = 0;
        lanai_evq_flush(s);
        break;
    case NVM_REG_EVQ_CONS:
        if (!s->evq_len || (uint32_t)(s->evq_prod - val) > s->evq_len) {
            lanai_guest_error(s, "EVQ_CONS %u out of range (prod %u, len %u)",
                              val, s->evq_prod, s->evq_len);
            return;
        }
        s->evq_cons = val;
        lanai_evq_flush(s);
        break;
    }
}

static void lanai_reg_write(void *opaque, hwaddr off, uint64_t val64,
                            unsigned size)
{
    LanaiState *s = opaque;
    const LanaiReg *r = &lanai_regs[off / 4];
    uint32_t val = val64;

    if (!r->name) {
        lanai_guest_error(s, "write 0x%x to unassigned register 0x%03"
                          HWADDR_PRIx, val, off);
        return;
    }
    trace_lanai_reg_write(off, r->name, val);
    if (r->access == REG_RO) {
        lanai_guest_error(s, "write 0x%x to read-only register %s",
                          val, r->name);
        return;
    }

    if (lanai_reg_engine_owned(off) && (s->cpuc & LANAI_CPUC_RUN)) {
        lanai_guest_error(s, "%s: the engines belong to the running firmware",
                          r->name);
        return;
    }

    switch (off) {
    case LANAI_REG_ISR:
        if (val & ~LANAI_ISR_HOST_W1C) {
            lanai_guest_error(s, "ISR bits 0x%x belong to the firmware",
                              val & ~LANAI_ISR_HOST_W1C);
        }
        s->isr &= ~(val & LANAI_ISR_HOST_W1C);
        /*
         * MSI-X is edge-triggered: a cause the firmware raised after the
         * host read ISR and before this write is still pending, and
         * would never interrupt again (no rising edge).  Signal it anew.
         */
        s->irq_level = false;
        lanai_update_irq(s);
        break;
    case LANAI_REG_EIMR:
        s->eimr = val;
        lanai_update_irq(s);
        break;
    case LANAI_REG_CPUC:
        if (val & LANAI_CPUC_RESET) {
            /* a soft reset of firmware and engines; RESET self-clears */
            lanai_fw_reset(s);
            val &= ~LANAI_CPUC_RESET;
        }
        if (val & ~LANAI_CPUC_RUN) {
            lanai_guest_error(s, "CPUC: undefined bits 0x%x", val);
        }
        s->cpuc = val & LANAI_CPUC_RUN;
        lanai_fw_kick(s);    /* boot or halt happens in the firmware BH */
        break;
    case LANAI_REG_MYRINET:
        s->myrinet = val & (LANAI_MYRINET_NRES_EN | LANAI_MYRINET_CRC32_EN);
        break;
    case LANAI_REG_LED:
        s->led = val;
        break;
    case NVM_REG_EVQ_BASE_LO:
    case NVM_REG_EVQ_BASE_HI:
    case NVM_REG_EVQ_LEN:
    case NVM_REG_EVQ_CONS:
        lanai_evq_setup_write(s, off, val);
        break;
    case NVM_REG_ST_ADDR_LO:
        s->st_addr = deposit64(s->st_addr, 0, 32, val);
        break;
    case NVM_REG_ST_ADDR_HI:
        s->st_addr = deposit64(s->st_addr, 32, 32, val);
        break;
    case NVM_REG_ST_LEN:
        s->st_len = val;
        break;
    case NVM_REG_ST_SEED:
        s->st_seed = val;
        break;
    case NVM_REG_ST_CMD:
        lanai_selftest_start(s, val);
        break;
    case NVM_REG_ST_IRQ:
        if (val >= LANAI_MSIX_COUNT) {
            lanai_guest_error(s, "ST_IRQ: no MSI-X vector %u", val);
            break;
        }
        if (msix_enabled(PCI_DEVICE(s))) {
            msix_notify(PCI_DEVICE(s), val);
        }
        break;
    case NVM_REG_SCRATCH:
        s->scratch = val;
        break;
    case NVM_REG_HDMA_DESC:
        lanai_hdma_start(s, val);
        break;
    case NVM_REG_SEND_OFF:
        s->send_off = val;
        break;
    case NVM_REG_SEND_LEN:
        s->send_len = val;
        break;
    case NVM_REG_SEND_CTRL:
        if (val == 1) {
            lanai_send_start(s, s->send_off, s->send_len);
        }
        break;
    case NVM_REG_RECV_RING:
        s->rx_ring = val;
        break;
    case NVM_REG_RECV_SLOTS:
        s->rx_slots = val;
        break;
    case NVM_REG_RECV_SLOT_SIZE:
        s->rx_slot_size = val;
        break;
    case NVM_REG_RECV_CTRL:
        if (val == NVM_RECV_CTRL_START) {
            lanai_recv_setup(s, s->rx_ring, s->rx_slots, s->rx_slot_size);
        } else if (val == NVM_RECV_CTRL_RETRY) {
            lanai_recv_kick(s);
        } else {
            lanai_recv_stop(s);
        }
        break;
    }
}

const MemoryRegionOps lanai_regs_ops = {
    .read = lanai_reg_read,
    .write = lanai_reg_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = {
        .min_access_size = 4,
        .max_access_size = 4,
        .unaligned = false,
    },
    .impl = {
        .min_access_size = 4,
        .max_access_size = 4,
    },
};
