/*
 * LANai: register BAR (BAR0).  Every register is in one table
 * (lanai_regs[]): its name, what a host write does, and whether it is an
 * engine's; lanai_reg_write() checks a write against it and runs it.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/timer.h"
#include "hw/pci/msix.h"
#include "lanai.h"
#include "trace.h"

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

/*
 * What a host write does, one function per writable register; the
 * register table below names them.
 */

/* ISR: the host writes 1 to clear its own causes. */
static void lanai_write_isr(LanaiState *s, uint32_t val)
{
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
}

static void lanai_write_eimr(LanaiState *s, uint32_t val)
{
    s->eimr = val;
    lanai_update_irq(s);
}

static void lanai_write_cpuc(LanaiState *s, uint32_t val)
{
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
}

static void lanai_write_myrinet(LanaiState *s, uint32_t val)
{
    s->myrinet = val & (LANAI_MYRINET_NRES_EN | LANAI_MYRINET_CRC32_EN);
}

static void lanai_write_led(LanaiState *s, uint32_t val)
{
    s->led = val;
}

static void lanai_write_evq_base_lo(LanaiState *s, uint32_t val)
{
    s->evq_base = deposit64(s->evq_base, 0, 32, val);
}

static void lanai_write_evq_base_hi(LanaiState *s, uint32_t val)
{
    s->evq_base = deposit64(s->evq_base, 32, 32, val);
}

static void lanai_write_evq_len(LanaiState *s, uint32_t val)
{
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
}

static void lanai_write_evq_cons(LanaiState *s, uint32_t val)
{
    if (!s->evq_len || (uint32_t)(s->evq_prod - val) > s->evq_len) {
        lanai_guest_error(s, "EVQ_CONS %u out of range (prod %u, len %u)",
                          val, s->evq_prod, s->evq_len);
        return;
    }
    s->evq_cons = val;
    lanai_evq_flush(s);
}

static void lanai_write_st_addr_lo(LanaiState *s, uint32_t val)
{
    s->st_addr = deposit64(s->st_addr, 0, 32, val);
}

static void lanai_write_st_addr_hi(LanaiState *s, uint32_t val)
{
    s->st_addr = deposit64(s->st_addr, 32, 32, val);
}

static void lanai_write_st_len(LanaiState *s, uint32_t val)
{
    s->st_len = val;
}

static void lanai_write_st_seed(LanaiState *s, uint32_t val)
{
    s->st_seed = val;
}

static void lanai_write_st_cmd(LanaiState *s, uint32_t val)
{
    lanai_selftest_start(s, val);
}

static void lanai_write_st_irq(LanaiState *s, uint32_t val)
{
    if (val >= LANAI_MSIX_COUNT) {
        lanai_guest_error(s, "ST_IRQ: no MSI-X vector %u", val);
        return;
    }
    if (msix_enabled(PCI_DEVICE(s))) {
        msix_notify(PCI_DEVICE(s), val);
    }
}

static void lanai_write_scratch(LanaiState *s, uint32_t val)
{
    s->scratch = val;
}

static void lanai_write_hdma_desc(LanaiState *s, uint32_t val)
{
    lanai_hdma_start(s, val);
}

static void lanai_write_send_off(LanaiState *s, uint32_t val)
{
    s->send_off = val;
}

static void lanai_write_send_len(LanaiState *s, uint32_t val)
{
    s->send_len = val;
}

static void lanai_write_send_ctrl(LanaiState *s, uint32_t val)
{
    if (val == 1) {
        lanai_send_start(s, s->send_off, s->send_len);
    }
}

static void lanai_write_recv_ring(LanaiState *s, uint32_t val)
{
    s->rx_ring = val;
}

static void lanai_write_recv_slots(LanaiState *s, uint32_t val)
{
    s->rx_slots = val;
}

static void lanai_write_recv_slot_size(LanaiState *s, uint32_t val)
{
    s->rx_slot_size = val;
}

static void lanai_write_recv_ctrl(LanaiState *s, uint32_t val)
{
    if (val == NVM_RECV_CTRL_START) {
        lanai_recv_setup(s, s->rx_ring, s->rx_slots, s->rx_slot_size);
    } else if (val == NVM_RECV_CTRL_RETRY) {
        lanai_recv_kick(s);
    } else {
        lanai_recv_stop(s);
    }
}

typedef enum LanaiRegOwner {
    OWNER_HOST,     /* the host may write it at any time */
    OWNER_ENGINE,   /* the host may write it only while the firmware halts */
} LanaiRegOwner;

typedef struct LanaiReg {
    const char *name;
    void (*write)(LanaiState *s, uint32_t val);  /* NULL: read-only */
    LanaiRegOwner owner;
} LanaiReg;

#define REG_RO(off, nm) [(off) / 4] = { .name = (nm) }
#define REG_RW(off, nm, fn) [(off) / 4] = { .name = (nm), .write = (fn) }
#define REG_ENGINE(off, nm, fn) \
    [(off) / 4] = { .name = (nm), .write = (fn), .owner = OWNER_ENGINE }

static const LanaiReg lanai_regs[LANAI_REGS_SIZE / 4] = {
    REG_RW(LANAI_REG_ISR, "ISR", lanai_write_isr),
    REG_RW(LANAI_REG_EIMR, "EIMR", lanai_write_eimr),
    REG_RO(LANAI_REG_IT0, "IT0"),
    REG_RO(LANAI_REG_RTC, "RTC"),
    REG_RW(LANAI_REG_CPUC, "CPUC", lanai_write_cpuc),
    REG_RO(LANAI_REG_IT1, "IT1"),
    REG_RO(LANAI_REG_IT2, "IT2"),
    REG_RW(LANAI_REG_MYRINET, "MYRINET", lanai_write_myrinet),
    REG_RW(LANAI_REG_LED, "LED", lanai_write_led),
    REG_RO(NVM_REG_ID, "ID"),
    REG_RO(NVM_REG_VERSION, "VERSION"),
    REG_RO(NVM_REG_FW_VERSION, "FW_VERSION"),
    REG_RO(NVM_REG_NODE_ID, "NODE_ID"),
    REG_RO(NVM_REG_SRAM_SIZE, "SRAM_SIZE"),
    REG_RO(NVM_REG_LAYOUT_OFF, "LAYOUT_OFF"),
    REG_RO(NVM_REG_LINK, "LINK"),
    REG_RO(NVM_REG_FW_STATE, "FW_STATE"),
    REG_RW(NVM_REG_EVQ_BASE_LO, "EVQ_BASE_LO", lanai_write_evq_base_lo),
    REG_RW(NVM_REG_EVQ_BASE_HI, "EVQ_BASE_HI", lanai_write_evq_base_hi),
    REG_RW(NVM_REG_EVQ_LEN, "EVQ_LEN", lanai_write_evq_len),
    REG_RW(NVM_REG_EVQ_CONS, "EVQ_CONS", lanai_write_evq_cons),
    REG_RO(NVM_REG_EVQ_PROD, "EVQ_PROD"),
    REG_RO(NVM_REG_DB_STATUS, "DB_STATUS"),
    REG_RO(NVM_REG_DB_OVERFLOWS, "DB_OVERFLOWS"),
    REG_RW(NVM_REG_ST_ADDR_LO, "ST_ADDR_LO", lanai_write_st_addr_lo),
    REG_RW(NVM_REG_ST_ADDR_HI, "ST_ADDR_HI", lanai_write_st_addr_hi),
    REG_RW(NVM_REG_ST_LEN, "ST_LEN", lanai_write_st_len),
    REG_RW(NVM_REG_ST_SEED, "ST_SEED", lanai_write_st_seed),
    REG_RW(NVM_REG_ST_CMD, "ST_CMD", lanai_write_st_cmd),
    REG_RO(NVM_REG_ST_STATUS, "ST_STATUS"),
    REG_RW(NVM_REG_ST_IRQ, "ST_IRQ", lanai_write_st_irq),
    REG_RW(NVM_REG_SCRATCH, "SCRATCH", lanai_write_scratch),
    REG_RO(NVM_REG_EVQ_LOST, "EVQ_LOST"),
    REG_RO(NVM_REG_ERRORS, "ERRORS"),
    REG_RO(NVM_REG_DB_YIELDS, "DB_YIELDS"),
    REG_ENGINE(NVM_REG_HDMA_DESC, "HDMA_DESC", lanai_write_hdma_desc),
    REG_RO(NVM_REG_HDMA_STATUS, "HDMA_STATUS"),
    REG_ENGINE(NVM_REG_SEND_OFF, "SEND_OFF", lanai_write_send_off),
    REG_ENGINE(NVM_REG_SEND_LEN, "SEND_LEN", lanai_write_send_len),
    REG_ENGINE(NVM_REG_SEND_CTRL, "SEND_CTRL", lanai_write_send_ctrl),
    REG_RO(NVM_REG_SEND_COUNT, "SEND_COUNT"),
    REG_ENGINE(NVM_REG_RECV_RING, "RECV_RING", lanai_write_recv_ring),
    REG_ENGINE(NVM_REG_RECV_SLOTS, "RECV_SLOTS", lanai_write_recv_slots),
    REG_ENGINE(NVM_REG_RECV_SLOT_SIZE, "RECV_SLOT_SIZE",
               lanai_write_recv_slot_size),
    REG_ENGINE(NVM_REG_RECV_CTRL, "RECV_CTRL", lanai_write_recv_ctrl),
    REG_RO(NVM_REG_RECV_COUNT, "RECV_COUNT"),
    REG_RO(NVM_REG_RECV_DROPS, "RECV_DROPS"),
};

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
    case NVM_REG_DB_YIELDS:
        return s->db_yields;
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
    if (!r->write) {
        lanai_guest_error(s, "write 0x%x to read-only register %s",
                          val, r->name);
        return;
    }
    if (r->owner == OWNER_ENGINE && (s->cpuc & LANAI_CPUC_RUN)) {
        lanai_guest_error(s, "%s: the engines belong to the running firmware",
                          r->name);
        return;
    }
    r->write(s, val);
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
