/*
 * LANai: the interval timers IT0-IT2.  The firmware arms them (its
 * retransmission and ACK timers); on expiry they set ISR.TIME0/1/2 and
 * wake the firmware.  They run on the virtual clock, so they are
 * deterministic under TCG and stop while the VM is stopped.  The host sees
 * the remaining time, in 500 ns ticks, in IT0/IT1/IT2.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/timer.h"
#include "lanai.h"
#include "trace.h"

static const uint32_t lanai_it_isr[3] = {
    LANAI_ISR_TIME0, LANAI_ISR_TIME1, LANAI_ISR_TIME2,
};

typedef struct LanaiTimerCtx {
    LanaiState *s;
    unsigned which;
} LanaiTimerCtx;

static LanaiTimerCtx *lanai_timer_ctx(LanaiState *s, unsigned which)
{
    LanaiTimerCtx *c = g_new(LanaiTimerCtx, 1);

    c->s = s;
    c->which = which;
    return c;
}

static void lanai_timer_fire(void *opaque)
{
    LanaiTimerCtx *c = opaque;
    LanaiState *s = c->s;

    s->it_deadline[c->which] = 0;
    trace_lanai_timer(c->which, 0);
    lanai_set_isr(s, lanai_it_isr[c->which]);
    if (s->linksock) {
        /* in the link thread: a BH would wake the main loop for it */
        lanai_fw_now(s, LANAI_FW_ROUNDS, LANAI_FW_BY_TIMER);
    } else {
        lanai_fw_kick(s);
    }
}

void lanai_timers_init(LanaiState *s)
{
    for (unsigned i = 0; i < 3; i++) {
        /* the main loop's, or with link-socket the link thread's */
        s->it_timer[i] = timer_new_full(lanai_linksock_timers(s),
                                        QEMU_CLOCK_VIRTUAL, SCALE_NS, 0,
                                        lanai_timer_fire,
                                        lanai_timer_ctx(s, i));
    }
}

void lanai_timers_free(LanaiState *s)
{
    for (unsigned i = 0; i < 3; i++) {
        g_free(s->it_timer[i]->opaque);
        timer_free(s->it_timer[i]);
    }
}

void lanai_timer_arm(LanaiState *s, unsigned which, uint64_t delay_ns)
{
    if (which >= 3) {
        return;
    }
    trace_lanai_timer(which, delay_ns);
    if (!delay_ns) {
        timer_del(s->it_timer[which]);
        s->it_deadline[which] = 0;
        return;
    }
    s->it_deadline[which] = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) + delay_ns;
    timer_mod(s->it_timer[which], s->it_deadline[which]);
}

uint32_t lanai_timer_ticks(LanaiState *s, unsigned which)
{
    int64_t left;

    if (!s->it_deadline[which]) {
        return 0;
    }
    left = s->it_deadline[which] - qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    return left > 0 ? MIN(left / 500, UINT32_MAX) : 0;
}

void lanai_timers_reset(LanaiState *s)
{
    for (unsigned i = 0; i < 3; i++) {
        timer_del(s->it_timer[i]);
        s->it_deadline[i] = 0;
    }
}

void lanai_timers_post_load(LanaiState *s)
{
    for (unsigned i = 0; i < 3; i++) {
        if (s->it_deadline[i]) {
            timer_mod(s->it_timer[i], s->it_deadline[i]);
        }
    }
}
