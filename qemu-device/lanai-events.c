/*
 * LANai: the host event queue and the interrupt it drives.
 *
 * Events go through a bounded backlog into the ring in host memory; the
 * backlog holds them, in order, while the ring is full or not yet set up.
 * Writing an entry sets its cause bit in ISR; MSI-X vector
 * LANAI_MSIX_EVENTS fires when ISR & EIMR goes from zero to non-zero, so a
 * burst of events costs one interrupt until the host clears ISR.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "hw/pci/msix.h"
#include "hw/pci/pci.h"
#include "lanai.h"
#include "trace.h"

static const uint32_t lanai_event_isr_bit[NVM_EV_TYPE_COUNT] = {
    [NVM_EV_LINK] = LANAI_ISR_LINK_DOWN,
    [NVM_EV_RAW_TX] = LANAI_ISR_EV_RAW,
    [NVM_EV_RAW_RX] = LANAI_ISR_EV_RAW,
    [NVM_EV_ERROR] = LANAI_ISR_EV_ERROR,
    [NVM_EV_DB_OVERFLOW] = LANAI_ISR_EV_DB_OVERFLOW,
    [NVM_EV_PAGE_MISS] = LANAI_ISR_EV_PAGE_MISS,
    [NVM_EV_BOUNCE] = LANAI_ISR_EV_BOUNCE,
    [NVM_EV_NOTIFY] = LANAI_ISR_EV_NOTIFY,
    [NVM_EV_FW_STATE] = LANAI_ISR_EV_FW,
    [NVM_EV_SELFTEST] = LANAI_ISR_EV_FW,
    [NVM_EV_ETH] = LANAI_ISR_EV_RAW,
};

void lanai_update_irq(LanaiState *s)
{
    PCIDevice *pci = PCI_DEVICE(s);
    bool level = (s->isr & s->eimr) != 0;

    if (level && !s->irq_level) {
        trace_lanai_irq(s->isr, s->eimr);
        s->irq_level = level;
        if (msix_enabled(pci)) {
            /* a vector aimed at our own BARs must not re-enter us */
            bool engaged = lanai_guard_enter(s);

            msix_notify(pci, LANAI_MSIX_EVENTS);
            lanai_guard_leave(s, engaged);
        }
    }
    s->irq_level = level;
}

void lanai_set_isr(LanaiState *s, uint32_t bits)
{
    s->isr |= bits;
    lanai_update_irq(s);
}

/*
 * Write backlogged events into the host ring while there is room.  Each
 * event leaves the backlog before its write, and the write is made under
 * the device's re-entrancy guard: a ring the guest aimed at this device's
 * own BARs is refused (the event is lost and counted), and nothing can
 * re-enter this loop between reading an entry and consuming it.
 */
void lanai_evq_flush(LanaiState *s)
{
    PCIDevice *pci = PCI_DEVICE(s);
    uint32_t raised = 0;

    while (s->backlog_count && s->evq_len &&
           s->evq_prod - s->evq_cons < s->evq_len) {
        struct nvm_event ev = s->backlog[s->backlog_head % LANAI_EV_BACKLOG];
        uint64_t addr = s->evq_base +
            (uint64_t)(s->evq_prod & (s->evq_len - 1)) * sizeof(ev);
        MemTxResult res;
        bool engaged;

        s->backlog_head = (s->backlog_head + 1) % LANAI_EV_BACKLOG;
        s->backlog_count--;
        ev.flags = (ev.flags & ~NVM_EV_F_PHASE) |
                   (((s->evq_prod / s->evq_len) & 1) ? 0 : NVM_EV_F_PHASE);
        engaged = lanai_guard_enter(s);
        res = pci_dma_write(pci, addr, &ev, sizeof(ev));
        lanai_guard_leave(s, engaged);
        if (res != MEMTX_OK) {
            LANAI_GUEST_ERR(s, lanai_err_evq_write,
                            "event queue write to 0x%" PRIx64
                            " refused: event %u lost", addr, ev.type);
            s->evq_lost++;
            raised |= LANAI_ISR_EV_ERROR;
            continue;
        }
        trace_lanai_event(ev.type, ev.endpoint, ev.data, ev.arg, s->evq_prod);
        s->evq_prod++;
        lanai_landed(s);
        if (ev.type < NVM_EV_TYPE_COUNT) {
            raised |= lanai_event_isr_bit[ev.type];
        }
    }
    if (raised) {
        lanai_set_isr(s, raised | LANAI_ISR_LANAI_SIG);
    }
}

void lanai_event_post(LanaiState *s, const struct nvm_event *ev)
{
    uint32_t tail;

    if (s->backlog_count == LANAI_EV_BACKLOG) {
        /* only a host that stopped draining a set-up ring gets here */
        trace_lanai_event_lost(ev->type, ev->data);
        s->evq_lost++;
        return;
    }
    tail = (s->backlog_head + s->backlog_count) % LANAI_EV_BACKLOG;
    s->backlog[tail] = *ev;
    s->backlog_count++;
    lanai_evq_flush(s);
}

void lanai_evq_reset(LanaiState *s)
{
    s->evq_base = 0;
    s->evq_len = 0;
    s->evq_prod = 0;
    s->evq_cons = 0;
    s->evq_lost = 0;
    s->backlog_head = 0;
    s->backlog_count = 0;
}
