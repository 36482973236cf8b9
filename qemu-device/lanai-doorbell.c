/*
 * LANai: the doorbell BAR.  Any host write anywhere in it is captured as
 * (offset, data) into a bounded FIFO that the firmware drains; the page of
 * the offset names the endpoint.  A write to a full FIFO is refused,
 * counted, flagged in DB_STATUS and reported by an event: never lost
 * silently.  A read of one word of a page (LANAI_DB_YIELD) is the
 * program's way to say it is only waiting: the vCPU's thread yields (or,
 * with yield-wait-us, waits for the device's next write to guest memory).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include <sched.h>
#include "qemu/main-loop.h"
#include "qemu/timer.h"
#include "qemu/error-report.h"
#include "lanai.h"
#include "trace.h"

/*
 * The device wrote guest memory (data, a completion, an event): a vCPU
 * waiting at a yield word looks again.  With the BQL.
 */
void lanai_landed(LanaiState *s)
{
    qatomic_inc(&s->landed_gen);
    if (qatomic_read(&s->yield_waiters)) {
        event_notifier_set(&s->landed);
    }
}

/* Realize, last: without a notifier a yield only yields (said once). */
void lanai_yield_init(LanaiState *s)
{
    if (s->yield_wait_us && event_notifier_init(&s->landed, false) < 0) {
        warn_report("lanai: no event notifier: yield-wait-us ignored");
        s->yield_wait_us = 0;
    }
}

/*
 * Unrealize, with the BQL: no vCPU may still be waiting on the notifier.
 * A waiter counts itself out before it takes the BQL again, so this
 * waits for it without letting the BQL go.
 */
void lanai_yield_exit(LanaiState *s)
{
    if (!s->yield_wait_us) {
        return;
    }
    qatomic_set(&s->yield_closing, true);
    event_notifier_set(&s->landed);
    while (qatomic_read(&s->yield_waiters)) {
        g_usleep(100);
    }
    event_notifier_cleanup(&s->landed);
}

/*
 * Without the BQL: a thread that needs it (this QEMU's link thread, which
 * is what the waiting program usually waits for) must not be scheduled
 * only to block on it.
 *
 * With yield-wait-us, the vCPU waits (at most that long) until the device
 * next writes guest memory, unless it did since this endpoint's last
 * yield (what landed between the program's last look and this read is
 * not slept on).  Where a wake-up reaches an idle CPU sooner than a busy
 * one, the frame's thread then runs sooner (docs/bench.md, "A spinner
 * that waits in the device").  After the wait nothing of the device is
 * touched once the BQL is back: it may have gone meanwhile.
 */
static void lanai_doorbell_yield(LanaiState *s, uint32_t ep)
{
    uint32_t *seen = &s->yield_seen[ep % LANAI_MAX_ENDPOINTS];
    uint32_t gen = qatomic_read(&s->landed_gen);

    s->db_yields++;
    trace_lanai_doorbell_yield(ep, s->db_yields);
    if (!s->yield_wait_us) {
        bql_unlock();
        sched_yield();
        bql_lock();
        return;
    }
    if (gen != *seen) {
        qatomic_set(seen, gen);
        return;
    }
    qatomic_inc(&s->yield_waiters);
    bql_unlock();
    if (qatomic_read(&s->landed_gen) == gen &&
        !qatomic_read(&s->yield_closing)) {
        GPollFD pfd = { .fd = event_notifier_get_fd(&s->landed),
                        .events = G_IO_IN };

        qemu_poll_ns(&pfd, 1, (int64_t)s->yield_wait_us * SCALE_US);
    }
    event_notifier_test_and_clear(&s->landed);
    qatomic_set(seen, qatomic_read(&s->landed_gen));
    qatomic_dec(&s->yield_waiters);
    bql_lock();
}

static uint64_t lanai_doorbell_read(void *opaque, hwaddr off, unsigned size)
{
    LanaiState *s = opaque;

    if (off % LANAI_DOORBELL_PAGE == LANAI_DB_YIELD) {
        lanai_doorbell_yield(s, off / LANAI_DOORBELL_PAGE);
        return 0;
    }
    lanai_guest_error(s, "read of write-only doorbell 0x%" HWADDR_PRIx, off);
    return 0;
}

static void lanai_doorbell_write(void *opaque, hwaddr off, uint64_t val,
                                 unsigned size)
{
    LanaiState *s = opaque;
    uint32_t tail;

    if (s->db_count == LANAI_DB_DEPTH) {
        s->db_overflows++;
        trace_lanai_doorbell_overflow(off, val, s->db_overflows);
        if (!s->db_overflow) {
            /* one event per overflow episode; the count says how many */
            struct nvm_event ev = {
                .type = NVM_EV_DB_OVERFLOW,
                .endpoint = off / LANAI_DOORBELL_PAGE,
                .data = s->db_overflows,
            };
            s->db_overflow = true;
            lanai_event_post(s, &ev);
        }
        return;
    }
    tail = (s->db_head + s->db_count) % LANAI_DB_DEPTH;
    s->db[tail].offset = off;
    s->db[tail].data = val;
    s->db_count++;
    trace_lanai_doorbell(off / LANAI_DOORBELL_PAGE, off, val, s->db_count);
    lanai_fw_doorbell(s);
}

bool lanai_doorbell_pop(LanaiState *s, uint32_t *offset, uint32_t *data)
{
    if (!s->db_count) {
        s->db_overflow = false;
        return false;
    }
    *offset = s->db[s->db_head % LANAI_DB_DEPTH].offset;
    *data = s->db[s->db_head % LANAI_DB_DEPTH].data;
    s->db_head = (s->db_head + 1) % LANAI_DB_DEPTH;
    s->db_count--;
    return true;
}

void lanai_doorbell_reset(LanaiState *s)
{
    s->db_head = 0;
    s->db_count = 0;
    s->db_overflows = 0;
    s->db_overflow = false;
}

const MemoryRegionOps lanai_doorbell_ops = {
    .read = lanai_doorbell_read,
    .write = lanai_doorbell_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = {
        .min_access_size = 4,
        .max_access_size = 4,
    },
    .impl = {
        .min_access_size = 4,
        .max_access_size = 4,
    },
};
