/*
 * LANai: the link as a unix stream socket of the device's own, its
 * received frames taken by a thread of their own (opt-in: property
 * link-socket, in place of a netdev).
 *
 * Why: with a -netdev stream every received frame wakes QEMU's main loop,
 * which then polls its ~20 descriptors, dispatches glib sources and reads
 * the frame through the net layer before the firmware runs; about half of
 * a NetVM round trip on a small host (docs/bench.md, "Where a write round
 * trip goes").  Here a thread polls this socket alone and hands each
 * frame, with the BQL held, to the receive-wire engine, as the netdev's
 * receive callback does.  The interval timers (lanai-timers.c) are this
 * thread's too: the firmware arms IT1 for every frame that arrives, and
 * a timer of the main loop's would wake the main loop for each.
 *
 * Framing is the stream netdev's and netvm-switch's: a 4-byte big-endian
 * length, then the frame.  Flow control as with the netdev: while the
 * receive ring has no free slot (or the VM is stopped) the thread reads
 * nothing more (lanai_linksock_kick wakes it), so frames wait in the
 * sender.  A frame longer than the engine takes is
 * skipped, counted as oversize, without buffering it.
 *
 * Send: in the thread that runs the firmware, under the BQL, without
 * blocking; what the socket does not take at once waits here, and the main
 * loop writes it when the socket is writable; the send-wire engine stays
 * busy until then, as it does until the net layer takes a frame.
 *
 * link-listen=on: listen on the path (one peer at a time; node 0 of a
 * back-to-back pair), else connect to it (the switch's node socket, or
 * the listening node), again every LANAI_LINKSOCK_RETRY_MS while that
 * fails and after the peer leaves.  The link is up while connected.
 *
 * link-inject=PATH: a FIFO read the same way, its frames handed to the
 * engine as if they had come off the link (./netvm inject on a
 * back-to-back pair, as the netdev path's filter-redirector does).
 *
 * While the VM is stopped the device's state must hold still (a save
 * stores it): the thread then leaves the link alone (no read, accept,
 * connect or link change), and a send the socket finishes meanwhile is
 * told to the engine when the VM runs again (lanai_linksock_vm_state).
 *
 * Not carried over a save/load: a frame read but not yet delivered, or
 * sent in part (both stay with this process, not in the snapshot).  A
 * frame sent in part when the device is reset or loaded cannot be taken
 * back from the peer's stream, and the engine no longer waits for it:
 * the connection is shut down and made again (lanai_linksock_reset).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include <sys/un.h>
#include "qapi/error.h"
#include "qemu/cutils.h"
#include "qemu/main-loop.h"
#include "qemu/sockets.h"
#include "qemu/event_notifier.h"
#include "qemu/thread.h"
#include "qemu/timer.h"
#include "system/runstate.h"
#include "system/cpu-timers.h"
#include "system/replay.h"
#include "lanai.h"
#include "trace.h"

#define LANAI_LINKSOCK_RETRY_MS 100
#define LANAI_LINKSOCK_HDR      4
#define LANAI_LINKSOCK_WIRE_MAX (NVM_FRAME_MAX + NVM_PKT_CRC_LEN)
/* room for two whole frames: one recv() often brings several */
#define LANAI_LINKSOCK_RBUF     (2 * (LANAI_LINKSOCK_HDR + \
                                      LANAI_LINKSOCK_WIRE_MAX))

/* A length-prefixed stream being read: the link, or the injection FIFO. */
typedef struct LanaiLinkRx {
    int fd;
    uint8_t buf[LANAI_LINKSOCK_RBUF];
    size_t start;
    size_t end;
    uint32_t skip;          /* bytes of an oversize frame still to skip */
    /*
     * The next whole frame, in buf, or NULL.  While one waits for the
     * ring the stream is not read (a read moves buf's bytes).
     */
    const uint8_t *frame;
    uint32_t frame_len;
} LanaiLinkRx;

struct LanaiLinkSock {
    LanaiState *s;
    QemuThread thread;
    EventNotifier wake;     /* the thread's: stop, a slot freed, a timer */
    QEMUTimerListGroup tlg; /* the interval timers' (lanai-timers.c) */
    int listen_fd;          /* link-listen: the bound socket; else -1 */
    int fd;                 /* under the BQL: the connection, -1: down */
    bool stop;              /* atomic */
    bool started;           /* the thread exists (lanai_linksock_start) */
    bool rx_blocked;        /* under the BQL: a frame waits for the ring */
    bool paused;            /* atomic, set under the BQL: VM not running */
    bool up;                /* under the BQL: the link as the device sees it */
    bool tx_done_deferred;  /* under the BQL: a send finished while paused */
    uint32_t oversize;      /* the thread's: skipped, not yet counted */

    /* under the BQL: the part of a frame the socket did not take yet */
    uint8_t tx[LANAI_LINKSOCK_HDR + LANAI_LINKSOCK_WIRE_MAX];
    size_t tx_len;
    size_t tx_off;

    LanaiLinkRx rx;         /* the thread's: the link's bytes */
    LanaiLinkRx inject;     /* the thread's: link-inject's, fd -1: none */
};

/* The link as the device sees it: it changes only while the VM runs. */
bool lanai_linksock_up(LanaiState *s)
{
    return s->linksock && s->linksock->up;
}

/* The engine's send ended (written, or dropped): told now, or on running. */
static void lanai_linksock_sent(LanaiLinkSock *l)
{
    if (qatomic_read(&l->paused)) {
        l->tx_done_deferred = true;
    } else {
        lanai_send_sent_by_link(l->s);
    }
}

/* The connection came or went: the device is told now, or on running. */
static void lanai_linksock_changed(LanaiLinkSock *l)
{
    if (!qatomic_read(&l->paused)) {
        l->up = l->fd >= 0;
        lanai_link_changed(l->s);
    }
}

/* ---- send ---- */

static void lanai_linksock_tx_idle(LanaiLinkSock *l)
{
    qemu_set_fd_handler(l->fd, NULL, NULL, NULL);
    l->tx_len = l->tx_off = 0;
}

/* Writes what is pending; true when nothing is left (or the link fell). */
static bool lanai_linksock_flush(LanaiLinkSock *l)
{
    while (l->tx_off < l->tx_len) {
        ssize_t n = send(l->fd, l->tx + l->tx_off, l->tx_len - l->tx_off,
                         MSG_DONTWAIT | MSG_NOSIGNAL);

        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            return false;
        }
        if (n <= 0) {
            /*
             * The rest of the frame is lost: the stream must not go on
             * out of step with the peer's framing.  Shut it down; the
             * receive thread sees the end and takes the link down (and
             * connects again).
             */
            trace_lanai_linksock_send_error(errno);
            shutdown(l->fd, SHUT_RDWR);
            break;
        }
        l->tx_off += n;
    }
    l->tx_len = l->tx_off = 0;
    return true;
}

static void lanai_linksock_writable(void *opaque)
{
    LanaiLinkSock *l = opaque;

    if (!lanai_linksock_flush(l)) {
        return;
    }
    lanai_linksock_tx_idle(l);
    lanai_linksock_sent(l);
}

/*
 * A frame for the link (with its CRC), under the BQL: true if it is gone
 * (written, or dropped because the link is down), false if part of it
 * waits for the socket, lanai_send_sent_by_link to follow.
 */
bool lanai_linksock_send(LanaiState *s, const uint8_t *frame, size_t len)
{
    LanaiLinkSock *l = s->linksock;

    assert(len <= LANAI_LINKSOCK_WIRE_MAX);
    if (l->fd < 0 || l->tx_len) {
        return true;    /* down; a frame pending means send_busy, not here */
    }
    stl_be_p(l->tx, len);
    memcpy(l->tx + LANAI_LINKSOCK_HDR, frame, len);
    l->tx_len = LANAI_LINKSOCK_HDR + len;
    l->tx_off = 0;
    if (lanai_linksock_flush(l)) {
        return true;
    }
    trace_lanai_linksock_send_wait(l->tx_len - l->tx_off);
    qemu_set_fd_handler(l->fd, NULL, lanai_linksock_writable, l);
    return false;
}

/* ---- receive ---- */

/* With the BQL: the receive ring or the run state changed. */
void lanai_linksock_kick(LanaiState *s)
{
    if (s->linksock && s->linksock->rx_blocked) {
        event_notifier_set(&s->linksock->wake);
    }
}

/*
 * The next whole frame in the buffer (its length in *len), or NULL when
 * more must be read; the thread's, without the BQL (what it skips is
 * counted in l->oversize, added to the device's count under the BQL).
 * The length is the peer's: checked here, before anything is taken on
 * its word.
 */
static const uint8_t *lanai_linksock_next(LanaiLinkSock *l, LanaiLinkRx *r,
                                          uint32_t *len)
{
    for (;;) {
        size_t avail = r->end - r->start;
        const uint8_t *b = r->buf + r->start;
        uint32_t n;

        if (r->skip) {
            size_t k = MIN(avail, r->skip);

            r->start += k;
            r->skip -= k;
            if (r->skip) {
                return NULL;
            }
            continue;
        }
        if (avail < LANAI_LINKSOCK_HDR) {
            return NULL;
        }
        n = ldl_be_p(b);
        if (n > LANAI_LINKSOCK_WIRE_MAX) {
            trace_lanai_recv_drop("oversize", n);
            l->oversize++;
            r->start += LANAI_LINKSOCK_HDR;
            r->skip = n;
            continue;
        }
        if (avail < LANAI_LINKSOCK_HDR + (size_t)n) {
            return NULL;
        }
        r->start += LANAI_LINKSOCK_HDR + n;
        *len = n;
        return b + LANAI_LINKSOCK_HDR;
    }
}

/*
 * Reads more of the stream; false at its end or on an error (nothing
 * there yet, on the injection FIFO, is neither).  Never while a frame
 * waits in the buffer: the bytes move.
 */
static bool lanai_linksock_read(LanaiLinkRx *r)
{
    ssize_t n;

    assert(!r->frame);
    if (r->start) {
        memmove(r->buf, r->buf + r->start, r->end - r->start);
        r->end -= r->start;
        r->start = 0;
    }
    do {
        n = read(r->fd, r->buf + r->end, sizeof(r->buf) - r->end);
    } while (n < 0 && errno == EINTR);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        return true;
    }
    if (n <= 0) {
        return false;
    }
    r->end += n;
    return true;
}

static void lanai_linksock_rx_reset(LanaiLinkRx *r)
{
    r->start = r->end = 0;
    r->skip = 0;
    r->frame = NULL;
}

/*
 * Hands the engine every whole frame read, while it takes them; when it
 * cannot (ring full, VM stopped) the frame waits, the stream is not
 * read, and lanai_linksock_kick wakes the thread.  With the BQL.
 */
static void lanai_linksock_deliver_from(LanaiLinkSock *l, LanaiLinkRx *r)
{
    LanaiState *s = l->s;

    while (r->frame) {
        bool engaged;

        if (!runstate_is_running() || !lanai_wire_can_receive(s)) {
            return;
        }
        /* as the net layer engages it around a NIC's receive callback */
        engaged = lanai_guard_enter(s);
        lanai_wire_receive(s, r->frame, r->frame_len);
        lanai_guard_leave(s, engaged);
        r->frame = lanai_linksock_next(l, r, &r->frame_len);
    }
}

/*
 * The BQL for the thread's work on the device, unless the device is
 * going away: lanai_linksock_stop waits for the thread with the BQL let
 * go, and the device's timers and state may be freed right after.
 */
static bool lanai_linksock_lock(LanaiLinkSock *l)
{
    bql_lock();
    if (qatomic_read(&l->stop)) {
        bql_unlock();
        return false;
    }
    return true;
}

/* Frames framed, or oversize ones skipped: the device is told (BQL). */
static void lanai_linksock_deliver(LanaiLinkSock *l)
{
    if (!l->rx.frame && l->rx.fd >= 0) {
        l->rx.frame = lanai_linksock_next(l, &l->rx, &l->rx.frame_len);
    }
    if (!l->inject.frame && l->inject.fd >= 0) {
        l->inject.frame = lanai_linksock_next(l, &l->inject,
                                              &l->inject.frame_len);
    }
    if (!l->rx.frame && !l->inject.frame && !l->oversize && !l->rx_blocked) {
        return;     /* nothing for the device: no BQL */
    }
    if (!lanai_linksock_lock(l)) {
        return;
    }
    lanai_linksock_deliver_from(l, &l->rx);
    lanai_linksock_deliver_from(l, &l->inject);
    l->s->rx_oversize += l->oversize;
    l->oversize = 0;
    l->rx_blocked = l->rx.frame || l->inject.frame;
    bql_unlock();
}

/* ---- connection ---- */

static void lanai_linksock_attach(LanaiLinkSock *l, int fd)
{
    if (!lanai_linksock_lock(l)) {
        close(fd);
        return;
    }
    l->fd = fd;
    l->rx.fd = fd;
    lanai_linksock_rx_reset(&l->rx);
    l->rx_blocked = !!l->inject.frame;
    trace_lanai_linksock_up(fd);
    lanai_linksock_changed(l);
    bql_unlock();
}

static void lanai_linksock_detach(LanaiLinkSock *l)
{
    if (!lanai_linksock_lock(l)) {
        return;     /* lanai_linksock_free closes it */
    }
    if (l->tx_len) {
        lanai_linksock_tx_idle(l);
        lanai_linksock_sent(l);     /* dropped: the link went down */
    }
    close(l->fd);
    l->fd = -1;
    l->rx.fd = -1;
    lanai_linksock_rx_reset(&l->rx);
    l->rx_blocked = !!l->inject.frame;
    trace_lanai_linksock_down();
    lanai_linksock_changed(l);
    bql_unlock();
}

static int lanai_linksock_connect(const char *path)
{
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    int fd = qemu_socket(AF_UNIX, SOCK_STREAM, 0);

    if (fd < 0) {
        return -1;
    }
    /*
     * Non-blocking: a listener whose backlog is full (or that never
     * accepts) answers EAGAIN, tried again later, instead of holding the
     * thread where stopping it could not reach it.  Reads and sends of
     * the connection take EAGAIN already.
     */
    qemu_socket_set_nonblock(fd);
    pstrcpy(sa.sun_path, sizeof(sa.sun_path), path);
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* ---- the thread ---- */

/*
 * A timer of this group became the first: the thread must poll with a
 * shorter timeout.  In the thread itself (a frame's firmware run) it
 * computes the timeout afresh anyway; the main loop is never woken.
 */
static void lanai_linksock_timer_notify(void *opaque, QEMUClockType type)
{
    LanaiLinkSock *l = opaque;

    if (!qemu_thread_is_self(&l->thread)) {
        event_notifier_set(&l->wake);
    }
}

/* What one turn of the thread's loop polls, and where in pfd. */
typedef struct LanaiLinkPoll {
    GPollFD pfd[3];
    guint n;
    int link_i;             /* the connection or the listener; -1: none */
    int inject_i;
    int64_t timeout;
} LanaiLinkPoll;

/*
 * Connects (every LANAI_LINKSOCK_RETRY_MS while that fails), or says what
 * to poll for the link: the listener, or the connection (for its end
 * only while a frame waits for the ring: its bytes must stay unread).
 */
static void lanai_linksock_poll_link(LanaiLinkSock *l, LanaiLinkPoll *p,
                                     int64_t *retry_at)
{
    int64_t now = qemu_clock_get_ns(QEMU_CLOCK_REALTIME);

    if (l->fd < 0 && now < *retry_at) {
        p->timeout = qemu_soonest_timeout(p->timeout, *retry_at - now);
        return;
    }
    if (l->fd < 0 && l->listen_fd < 0) {
        int fd = lanai_linksock_connect(l->s->link_socket);

        *retry_at = now + LANAI_LINKSOCK_RETRY_MS * SCALE_MS;
        if (fd < 0) {
            p->timeout = qemu_soonest_timeout(p->timeout, *retry_at - now);
            return;
        }
        lanai_linksock_attach(l, fd);
        if (l->fd < 0) {
            return;     /* stopping */
        }
    }
    p->link_i = p->n;
    p->pfd[p->n++] = (GPollFD) {
        .fd = l->fd >= 0 ? l->fd : l->listen_fd,
        .events = l->fd >= 0 && l->rx.frame ? 0 : G_IO_IN,
    };
}

/* The link's descriptor is ready: a peer to accept, bytes, or its end. */
static void lanai_linksock_link_ready(LanaiLinkSock *l, gushort revents,
                                      int64_t *retry_at)
{
    int fd;

    if (l->fd >= 0) {
        if ((revents & (G_IO_HUP | G_IO_ERR)) && l->rx.frame) {
            lanai_linksock_detach(l);   /* gone while its frame waited */
        } else if ((revents & (G_IO_IN | G_IO_HUP | G_IO_ERR)) &&
                   !lanai_linksock_read(&l->rx)) {
            lanai_linksock_detach(l);
        }
        return;
    }
    fd = qemu_accept(l->listen_fd, NULL, NULL);
    if (fd >= 0) {
        lanai_linksock_attach(l, fd);
    } else if (errno != EAGAIN && errno != EINTR) {
        /* out of descriptors, say: the listener stays readable, so wait */
        *retry_at = qemu_clock_get_ns(QEMU_CLOCK_REALTIME) +
                    LANAI_LINKSOCK_RETRY_MS * SCALE_MS;
    }
}

/*
 * The thread's loop: one poll of its wake-up descriptor, the link (or
 * the listening socket) and the inject FIFO, with the interval timers'
 * deadline.  While the VM is stopped only the wake-up is polled.
 */
static void *lanai_linksock_thread(void *opaque)
{
    LanaiLinkSock *l = opaque;
    int64_t retry_at = 0;

    while (!qatomic_read(&l->stop)) {
        LanaiLinkPoll p = {
            .pfd[0] = { .fd = event_notifier_get_fd(&l->wake),
                        .events = G_IO_IN },
            .n = 1, .link_i = -1, .inject_i = -1,
            .timeout = timerlistgroup_deadline_ns(&l->tlg),
        };

        if (!qatomic_read(&l->paused)) {
            lanai_linksock_poll_link(l, &p, &retry_at);
            if (l->inject.fd >= 0 && !l->inject.frame) {
                p.inject_i = p.n;
                p.pfd[p.n++] = (GPollFD) { .fd = l->inject.fd,
                                           .events = G_IO_IN };
            }
        }
        qemu_poll_ns(p.pfd, p.n, p.timeout);
        if (p.pfd[0].revents) {
            event_notifier_test_and_clear(&l->wake);
        }
        if (timerlistgroup_deadline_ns(&l->tlg) == 0 &&
            lanai_linksock_lock(l)) {
            timerlistgroup_run_timers(&l->tlg);
            bql_unlock();
        }
        if (p.link_i > 0 && p.pfd[p.link_i].revents) {
            lanai_linksock_link_ready(l, p.pfd[p.link_i].revents, &retry_at);
        }
        if (p.inject_i > 0 && p.pfd[p.inject_i].revents &&
            !lanai_linksock_read(&l->inject)) {
            trace_lanai_linksock_inject_error(errno);
            close(l->inject.fd);
            l->inject.fd = -1;
        }
        lanai_linksock_deliver(l);
    }
    /*
     * Stopping: the device is going away, so nothing more is told to it
     * (lanai_linksock_free closes the connection).
     */
    return NULL;
}

/* ---- run state, reset ---- */

/*
 * With the BQL: the VM stops or runs.  Stopped, the thread leaves the
 * link alone; running, the device is told what happened meanwhile (a
 * send the socket finished, the connection made or lost).
 */
void lanai_linksock_vm_state(LanaiState *s, bool running)
{
    LanaiLinkSock *l = s->linksock;

    if (!l) {
        return;
    }
    qatomic_set(&l->paused, !running);
    if (!running) {
        return;
    }
    if (l->tx_done_deferred) {
        l->tx_done_deferred = false;
        lanai_send_sent_by_link(s);
    }
    lanai_linksock_changed(l);
    event_notifier_set(&l->wake);
}

/*
 * With the BQL, at a device reset or after a load: the engine no longer
 * waits for a frame the socket took in part, and the rest of it cannot
 * be taken back from the peer's stream, which would be out of step.
 * The connection is shut down; the thread sees its end and makes it
 * again.
 */
void lanai_linksock_reset(LanaiState *s)
{
    LanaiLinkSock *l = s->linksock;

    if (!l) {
        return;
    }
    l->tx_done_deferred = false;
    if (l->tx_len) {
        trace_lanai_linksock_send_error(ECONNRESET);
        lanai_linksock_tx_idle(l);
        shutdown(l->fd, SHUT_RDWR);
    }
}

/* ---- start and stop ---- */

/* The interval timers' group: the link thread's; NULL: the main loop's. */
QEMUTimerListGroup *lanai_linksock_timers(LanaiState *s)
{
    return s->linksock ? &s->linksock->tlg : NULL;
}

bool lanai_linksock_realize(LanaiState *s, Error **errp)
{
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    LanaiLinkSock *l;

    if (!s->link_socket) {
        if (s->link_inject) {
            error_setg(errp, "lanai: link-inject goes with link-socket");
            return false;
        }
        return true;
    }
    if (s->conf.peers.ncs[0]) {
        error_setg(errp, "lanai: link-socket and netdev exclude each other");
        return false;
    }
    if (icount_enabled() || replay_mode != REPLAY_MODE_NONE) {
        /* its frames and timers follow the host, not the instruction count */
        error_setg(errp, "lanai: link-socket does not follow icount or "
                   "record/replay: use a netdev");
        return false;
    }
    if (strlen(s->link_socket) >= sizeof(sa.sun_path)) {
        error_setg(errp, "lanai: link-socket path longer than %zu bytes",
                   sizeof(sa.sun_path) - 1);
        return false;
    }
    l = g_new0(LanaiLinkSock, 1);
    l->s = s;
    l->fd = -1;
    l->rx.fd = -1;
    l->inject.fd = -1;
    l->listen_fd = -1;
    if (s->link_inject) {
        /* read-write: writers may come and go without an end of file */
        l->inject.fd = qemu_open_old(s->link_inject, O_RDWR | O_NONBLOCK);
        if (l->inject.fd < 0) {
            error_setg_errno(errp, errno, "lanai: cannot open link-inject %s",
                             s->link_inject);
            g_free(l);
            return false;
        }
    }
    if (event_notifier_init(&l->wake, false) < 0) {
        error_setg(errp, "lanai: no event notifier for the link thread");
        if (l->inject.fd >= 0) {
            close(l->inject.fd);
        }
        g_free(l);
        return false;
    }
    if (s->link_listen) {
        pstrcpy(sa.sun_path, sizeof(sa.sun_path), s->link_socket);
        l->listen_fd = qemu_socket(AF_UNIX, SOCK_STREAM, 0);
        if (l->listen_fd < 0 ||
            bind(l->listen_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
            listen(l->listen_fd, 1) < 0) {
            error_setg_errno(errp, errno, "lanai: cannot listen on %s",
                             s->link_socket);
            if (l->listen_fd >= 0) {
                close(l->listen_fd);
            }
            if (l->inject.fd >= 0) {
                close(l->inject.fd);
            }
            event_notifier_cleanup(&l->wake);
            g_free(l);
            return false;
        }
    }
    timerlistgroup_init(&l->tlg, lanai_linksock_timer_notify, l);
    s->linksock = l;
    return true;
}

/* The thread, once everything it may touch exists (the end of realize). */
void lanai_linksock_start(LanaiState *s)
{
    LanaiLinkSock *l = s->linksock;

    if (l) {
        l->paused = !runstate_is_running();
        qemu_thread_create(&l->thread, "lanai-link", lanai_linksock_thread,
                           l, QEMU_THREAD_JOINABLE);
        l->started = true;
    }
}

/*
 * Before anything of the device is freed: the thread ends, the BQL let go
 * while it does (it may be waiting for it; once it has it, it sees stop
 * and touches nothing).
 */
void lanai_linksock_stop(LanaiState *s)
{
    LanaiLinkSock *l = s->linksock;

    if (!l || !l->started) {
        return;
    }
    qatomic_set(&l->stop, true);
    event_notifier_set(&l->wake);
    bql_unlock();
    qemu_thread_join(&l->thread);
    bql_lock();
    l->started = false;
}

/* After lanai_linksock_stop and once the interval timers are freed. */
void lanai_linksock_free(LanaiState *s)
{
    LanaiLinkSock *l = s->linksock;

    if (!l) {
        return;
    }
    if (l->fd >= 0) {
        qemu_set_fd_handler(l->fd, NULL, NULL, NULL);
        close(l->fd);
    }
    if (l->listen_fd >= 0) {
        close(l->listen_fd);
    }
    if (l->inject.fd >= 0) {
        close(l->inject.fd);
    }
    timerlistgroup_deinit(&l->tlg);
    event_notifier_cleanup(&l->wake);
    s->linksock = NULL;
    g_free(l);
}
