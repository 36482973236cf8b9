/*
 * LANai: the firmware runtime.  Binds the firmware library's chip
 * interface (firmware-interp/fw_chip.h) to this device's SRAM, engines,
 * doorbell FIFO and event queue, and runs the firmware whenever something
 * happened: from its bottom half, or at once for a doorbell write
 * (lanai_fw_doorbell) or a frame's arrival (lanai_fw_now).
 *
 * Each run also finishes the host DMA chain and the frame the firmware
 * started, and runs the firmware again for what they completed, until
 * nothing is left (or LANAI_FW_ROUNDS).  The firmware sees what it
 * would with an engine BH of their own, a chain or frame that ends after
 * fw_run() returns, but a step costs no main-loop iteration: a NetVM
 * write crossed six of them at the receiver (frame, data chain,
 * firmware, notification chain, firmware, reply), each a wake-up that
 * two spinning vCPUs on a small host make slow.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "lanai.h"
#include "trace.h"

const char *const lanai_fw_caller_name[] = {
    [LANAI_FW_BY_BH] = "bh",
    [LANAI_FW_BY_DOORBELL] = "doorbell",
    [LANAI_FW_BY_FRAME] = "frame",
    [LANAI_FW_BY_TIMER] = "timer",
};

static void chip_host_dma_start(void *chip, uint32_t desc)
{
    lanai_hdma_start(chip, desc);
}

static void chip_send_start(void *chip, uint32_t off, uint32_t len)
{
    lanai_send_start(chip, off, len);
}

static void chip_recv_setup(void *chip, uint32_t ring, uint32_t slots,
                            uint32_t slot_size)
{
    lanai_recv_setup(chip, ring, slots, slot_size);
}

static void chip_recv_kick(void *chip)
{
    lanai_recv_kick(chip);
}

static bool chip_doorbell_pop(void *chip, uint32_t *offset, uint32_t *data)
{
    return lanai_doorbell_pop(chip, offset, data);
}

static void chip_event_post(void *chip, const struct nvm_event *ev)
{
    lanai_event_post(chip, ev);
}

static uint32_t chip_isr_read(void *chip)
{
    LanaiState *s = chip;

    return s->isr;
}

static void chip_isr_clear(void *chip, uint32_t bits)
{
    LanaiState *s = chip;

    s->isr &= ~bits;
    lanai_update_irq(s);
}

static void chip_set_state(void *chip, enum nvm_fw_state state,
                           uint32_t fw_version, uint32_t layout_off)
{
    LanaiState *s = chip;

    s->fw_state = state;
    s->fw_version = fw_version;
    s->layout_off = layout_off;
}

static void chip_timer_arm(void *chip, unsigned int which, uint64_t delay_ns)
{
    lanai_timer_arm(chip, which, delay_ns);
}

static uint64_t chip_now_ns(void *chip)
{
    return qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
}

static uint32_t chip_link_state(void *chip)
{
    return lanai_link_state(chip);
}

/*
 * The firmware's trace points (firmware-interp/fw_trace_events.h): one
 * function per event, which casts the integers the firmware passed back
 * to the event's field types, and a table of them by event id.
 */
#define LANAI_FW_TR2(n, t1, f1, t2, f2, fmt)                            \
    static void fw_tr_handler_##n(uint64_t a, uint64_t b, uint64_t c) \
    {                                                                   \
        trace_lanai_##n((t1)(uintptr_t)a, (t2)(uintptr_t)b);            \
    }
#define LANAI_FW_TR3(n, t1, f1, t2, f2, t3, f3, fmt)                    \
    static void fw_tr_handler_##n(uint64_t a, uint64_t b, uint64_t c) \
    {                                                                   \
        trace_lanai_##n((t1)(uintptr_t)a, (t2)(uintptr_t)b,             \
                        (t3)(uintptr_t)c);                              \
    }
FW_TRACE_EVENTS(LANAI_FW_TR2, LANAI_FW_TR3)

static const fw_tr_handler lanai_fw_tr[FW_TR_COUNT] = {
    FW_TRACE_EVENTS(FW_TR_HANDLER_ROW, FW_TR_HANDLER_ROW)
};

static void chip_trace(void *chip, unsigned int id, uint64_t a, uint64_t b,
                       uint64_t c)
{
    if (id < FW_TR_COUNT) {
        lanai_fw_tr[id](a, b, c);
    }
}

static const struct fw_chip_ops lanai_chip_ops = {
    .host_dma_start = chip_host_dma_start,
    .send_start = chip_send_start,
    .recv_setup = chip_recv_setup,
    .recv_kick = chip_recv_kick,
    .doorbell_pop = chip_doorbell_pop,
    .event_post = chip_event_post,
    .isr_read = chip_isr_read,
    .isr_clear = chip_isr_clear,
    .set_state = chip_set_state,
    .timer_arm = chip_timer_arm,
    .now_ns = chip_now_ns,
    .link_state = chip_link_state,
    .trace = chip_trace,
};

void lanai_fw_init(LanaiState *s)
{
    s->chip.sram = memory_region_get_ram_ptr(&s->sram);
    s->chip.sram_size = s->sram_size;
    s->chip.node_id = s->node_id;
    s->chip.ops = &lanai_chip_ops;
    s->chip.opaque = s;
    fw_init(&s->fw, &s->chip);
}

void lanai_fw_kick(LanaiState *s)
{
    if (s->fw_running) {
        s->fw_again = true;     /* lanai_fw_run runs the firmware again */
        return;
    }
    qemu_bh_schedule(s->fw_bh);
}

/*
 * Runs the firmware, and the engine work it starts, up to max_rounds
 * times; true if more is left.  Under the BQL, from the bottom half, a
 * doorbell write or a frame's arrival.  The device's re-entrancy guard is
 * held throughout, as the guarded bottom half holds it: DMA the firmware
 * aims at this device's own BARs is refused whoever runs it.
 */
static bool lanai_fw_run(LanaiState *s, unsigned max_rounds,
                         enum lanai_fw_caller caller)
{
    bool engaged;
    unsigned rounds;

    if (!(s->cpuc & LANAI_CPUC_RUN)) {
        fw_halt(&s->fw);
        return false;
    }
    if (s->fw.state == NVM_FW_HALTED) {
        fw_boot(&s->fw);
    }
    engaged = lanai_guard_enter(s);
    s->fw_running = true;
    for (rounds = 1; ; rounds++) {
        s->fw_again = false;
        fw_run(&s->fw);
        /* the engines it started; their ends kick (fw_again) */
        lanai_hdma_bh(s);
        lanai_send_bh(s);
        if (!s->fw_again || rounds == max_rounds) {
            break;
        }
    }
    s->fw_running = false;
    lanai_guard_leave(s, engaged);
    trace_lanai_fw_bh(rounds, s->fw_again, lanai_fw_caller_name[caller]);
    return s->fw_again;
}

/*
 * Something for the firmware, found outside it: runs it now, in the
 * thread at hand, for at most max_rounds passes, the rest in the bottom
 * half.  A frame that arrived is served so, in the main loop's read of
 * the link, as NICs serve theirs in their receive callback: scheduling the
 * bottom half instead cost one more main-loop iteration (a poll of every
 * descriptor QEMU watches) per frame, on the critical path of every round
 * trip.
 */
void lanai_fw_now(LanaiState *s, unsigned max_rounds,
                  enum lanai_fw_caller caller)
{
    if (s->fw_running) {
        s->fw_again = true;     /* lanai_fw_run runs the firmware again */
        return;
    }
    if (lanai_fw_run(s, max_rounds, caller)) {
        qemu_bh_schedule(s->fw_bh);
    }
}

/*
 * A doorbell write: latched in the FIFO (lanai-doorbell.c), then either
 * left to the bottom half, or, with doorbell-inline (the default),
 * served at once in the vCPU thread that rang, for at most
 * LANAI_FW_INLINE_ROUNDS passes.
 *
 * Why not always the bottom half: scheduling it wakes the main loop, and
 * on a small host whose CPUs are taken by spinning vCPUs that wake-up is
 * 6-12 us, a quarter of a NetVM round trip (docs/hardware.md, "Who runs
 * the firmware", has the measurements).  The firmware does the same either
 * way; it pops the FIFO, so writes are served in the order they were
 * latched.
 */
void lanai_fw_doorbell(LanaiState *s)
{
    if (!s->doorbell_inline) {
        lanai_fw_kick(s);
        return;
    }
    lanai_fw_now(s, LANAI_FW_INLINE_ROUNDS, LANAI_FW_BY_DOORBELL);
}

/* CPUC.RUN decides whether the firmware boots, halts or runs. */
void lanai_fw_bh(void *opaque)
{
    LanaiState *s = opaque;

    if (lanai_fw_run(s, LANAI_FW_ROUNDS, LANAI_FW_BY_BH)) {
        /* let the main loop serve others, then go on */
        qemu_bh_schedule(s->fw_bh);
    }
}

/* CPUC.RESET and device reset: firmware and engines back to power-on. */
void lanai_fw_reset(LanaiState *s)
{
    fw_halt(&s->fw);
    fw_init(&s->fw, &s->chip);
    s->fw_state = NVM_FW_HALTED;
    s->fw_version = 0;
    s->layout_off = 0;
    s->cpuc = 0;
    s->isr &= ~(LANAI_ISR_WAKE0 | LANAI_ISR_SEND | LANAI_ISR_RECV |
                LANAI_ISR_BUFF);
    lanai_hdma_reset(s);
    lanai_wire_reset(s);
    lanai_timers_reset(s);
    lanai_doorbell_reset(s);
    lanai_update_irq(s);
}
