/*
 * LANai: the two wire DMA engines and the link.
 *
 * The link is a QEMU netdev (e.g. -netdev stream between two QEMU
 * processes, or to netvm-switch).  Send: one frame from SRAM, CRC-32
 * appended, handed to the net layer asynchronously; the engine stays busy
 * until the peer takes it, so a slow receiver slows the sender.  Receive:
 * frames land in the firmware's ring of SRAM slots; when the next slot is
 * not free, can_receive says no and QEMU stops reading the link, so frames
 * wait in the sender rather than being dropped.  With link-socket set the
 * link is instead a socket of the device's own, read by a thread
 * (lanai-linksock.c), which hands its frames to the same receive path.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/timer.h"
#include "system/runstate.h"
#include "lanai.h"
#include "trace.h"

uint32_t lanai_link_state(LanaiState *s)
{
    NetClientState *nc = qemu_get_queue(s->nic);

    if (!(s->myrinet & LANAI_MYRINET_NRES_EN)) {
        return 0;
    }
    if (s->linksock) {
        return lanai_linksock_up(s) ? NVM_LINK_UP : 0;
    }
    if (nc->link_down || !nc->peer || nc->peer->link_down) {
        return 0;
    }
    return NVM_LINK_UP;
}

void lanai_link_changed(LanaiState *s)
{
    uint32_t link = lanai_link_state(s);

    if (link != s->link) {
        struct nvm_event ev = { .type = NVM_EV_LINK, .data = link };

        trace_lanai_link(link);
        s->link = link;
        lanai_event_post(s, &ev);
        if (link && !s->linksock) {
            qemu_flush_queued_packets(qemu_get_queue(s->nic));
        }
    }
}

/*
 * The stream netdev changes link_down without calling link_status_changed,
 * so the link is also watched by a slow virtual-clock timer.
 */
void lanai_link_timer(void *opaque)
{
    LanaiState *s = opaque;

    lanai_link_changed(s);
    timer_mod(s->link_timer, qemu_clock_get_ms(QEMU_CLOCK_VIRTUAL) +
              LANAI_LINK_POLL_MS);
}

static void lanai_link_status_changed(NetClientState *nc)
{
    lanai_link_changed(qemu_get_nic_opaque(nc));
}

/*
 * Route bytes (MSB set) lead the frame; the CRC covers what follows them
 * (header and payload, include/netvm/packet.h), so that a switch can strip
 * route bytes without recomputing it.
 */
size_t lanai_route_len(const uint8_t *buf, size_t len)
{
    size_t n = 0;

    while (n < len && n < NVM_ROUTE_MAX && (buf[n] & NVM_ROUTE_BYTE)) {
        n++;
    }
    return n;
}

/* ---- send-wire engine ---- */

static void lanai_send_done(LanaiState *s)
{
    s->send_busy = false;
    s->send_count++;
    s->send_queued = false;
    lanai_set_isr(s, LANAI_ISR_SEND);
    lanai_fw_kick(s);
}

static void lanai_send_sent(NetClientState *nc, ssize_t len)
{
    LanaiState *s = qemu_get_nic_opaque(nc);

    if (!s->send_queued) {
        return;
    }
    if (len == 0) {
        /*
         * Purged, not sent: QEMU drops the packets still queued when the
         * VM stops and says so with len 0.  The frame is still in SRAM;
         * it goes again when the VM runs (lanai_wire_vm_state) or after
         * a load (lanai_post_load).  Counting it as sent lost a frame
         * at every save that caught the link busy.
         */
        trace_lanai_send_purged();
        s->send_queued = false;
        return;
    }
    trace_lanai_send_sent(len);
    lanai_send_done(s);
}

/* The link socket took the rest of a frame, or dropped it (link down). */
void lanai_send_sent_by_link(LanaiState *s)
{
    if (s->send_queued) {
        trace_lanai_send_sent(0);
        lanai_send_done(s);
    }
}

void lanai_wire_vm_state(void *opaque, bool running, RunState state)
{
    LanaiState *s = opaque;

    if (running && s->send_busy && !s->send_queued) {
        qemu_bh_schedule(s->send_bh);
    }
    lanai_linksock_vm_state(s, running);
}

/* A frame the send-wire engine can take: in SRAM, and fits its buffer. */
bool lanai_send_range_ok(LanaiState *s, uint32_t off, uint32_t len)
{
    return len && len <= NVM_FRAME_MAX && off <= s->sram_size &&
           len <= s->sram_size - off;
}

/* The send ends without a frame on the link: the firmware is told. */
static void lanai_send_refuse(LanaiState *s)
{
    s->send_busy = false;
    s->send_queued = false;
    lanai_set_isr(s, LANAI_ISR_SEND);
    lanai_fw_kick(s);
}

void lanai_send_bh(void *opaque)
{
    LanaiState *s = opaque;
    uint8_t *sram = memory_region_get_ram_ptr(&s->sram);
    uint8_t frame[NVM_FRAME_MAX + NVM_PKT_CRC_LEN];
    /*
     * SEND_OFF and SEND_LEN stay writable while the engine is busy (a
     * halted firmware's debug port), and a migration stream sets them:
     * what was checked at SEND_CTRL is checked again here, on a copy.
     */
    uint32_t off = s->send_off;
    uint32_t len = s->send_len;
    ssize_t ret;

    if (!s->send_busy || s->send_queued || !runstate_is_running()) {
        return;     /* a stopped VM sends when it runs again */
    }
    if (!lanai_send_range_ok(s, off, len)) {
        LANAI_GUEST_ERR(s, lanai_err_send_range,
                        "frame at SRAM 0x%x len %u changed while sending",
                        off, len);
        lanai_send_refuse(s);
        return;
    }
    memcpy(frame, sram + off, len);
    if (s->myrinet & LANAI_MYRINET_CRC32_EN) {
        size_t rl = lanai_route_len(frame, len);
        uint32_t crc = fw_crc32(0, frame + rl, len - rl);

        stl_be_p(frame + len, crc);
        len += NVM_PKT_CRC_LEN;
    }
    trace_lanai_send(off, len);
    s->send_queued = true;
    if (s->linksock) {
        if (lanai_linksock_send(s, frame, len)) {
            lanai_send_done(s);
        }
        return;
    }
    ret = qemu_send_packet_async(qemu_get_queue(s->nic), frame, len,
                                 lanai_send_sent);
    if (ret != 0) {
        /* taken at once (or dropped because the link is down) */
        lanai_send_done(s);
    }
}

void lanai_send_start(LanaiState *s, uint32_t off, uint32_t len)
{
    if (s->send_busy) {
        trace_lanai_send_busy(off, len);
        return;
    }
    if (!lanai_send_range_ok(s, off, len)) {
        LANAI_GUEST_ERR(s, lanai_err_send_range,
                        "send of SRAM 0x%x len %u refused", off, len);
        lanai_send_refuse(s);
        return;
    }
    s->send_busy = true;
    s->send_off = off;
    s->send_len = len;
    if (!s->fw_running) {
        qemu_bh_schedule(s->send_bh);   /* else lanai_fw_run sends it */
    }
}

/* ---- receive-wire engine ---- */

/*
 * The receive ring as the engine uses it.  RECV_RING, RECV_SLOTS and
 * RECV_SLOT_SIZE stay writable while the engine runs (a halted
 * firmware's debug port), and a migration stream sets them and the next
 * slot: every use takes a copy and checks it, and a ring that no longer
 * fits SRAM stops the engine.
 */
typedef struct LanaiRxRing {
    uint32_t ring;
    uint32_t slots;
    uint32_t slot_size;
    uint32_t next;
} LanaiRxRing;

static bool lanai_rx_geometry_ok(LanaiState *s, uint32_t ring, uint32_t slots,
                                 uint32_t slot_size)
{
    return slots && slot_size > sizeof(struct fw_rx_slot) && !(ring & 3) &&
           !(slot_size & 3) && ring <= s->sram_size &&
           (uint64_t)slots * slot_size <= s->sram_size - ring;
}

bool lanai_rx_state_ok(LanaiState *s)
{
    return lanai_rx_geometry_ok(s, s->rx_ring, s->rx_slots,
                                s->rx_slot_size) && s->rx_next < s->rx_slots;
}

static bool lanai_rx_ring_get(LanaiState *s, LanaiRxRing *r)
{
    if (!s->rx_enabled) {
        return false;
    }
    r->ring = s->rx_ring;
    r->slots = s->rx_slots;
    r->slot_size = s->rx_slot_size;
    r->next = s->rx_next;
    if (!lanai_rx_geometry_ok(s, r->ring, r->slots, r->slot_size) ||
        r->next >= r->slots) {
        LANAI_GUEST_ERR(s, lanai_err_recv_ring,
                        "receive ring 0x%x, %u slots of %u, next %u: "
                        "changed while on, engine stopped",
                        r->ring, r->slots, r->slot_size, r->next);
        s->rx_enabled = false;
        return false;
    }
    return true;
}

static uint8_t *lanai_rx_slot(LanaiState *s, const LanaiRxRing *r)
{
    return (uint8_t *)memory_region_get_ram_ptr(&s->sram) + r->ring +
           (uint64_t)r->next * r->slot_size;
}

static bool lanai_rx_ready(LanaiState *s, LanaiRxRing *r)
{
    return lanai_rx_ring_get(s, r) &&
           ldl_le_p(lanai_rx_slot(s, r)) == FW_RX_SLOT_EMPTY;
}

bool lanai_wire_can_receive(LanaiState *s)
{
    LanaiRxRing r;

    return lanai_rx_ready(s, &r);
}

static bool lanai_can_receive(NetClientState *nc)
{
    return lanai_wire_can_receive(qemu_get_nic_opaque(nc));
}

/* A frame off the link (the netdev's or the link socket's), under the BQL. */
ssize_t lanai_wire_receive(LanaiState *s, const uint8_t *buf, size_t size)
{
    LanaiRxRing r;
    uint8_t *slot;
    size_t len = size;

    if (!lanai_rx_ready(s, &r)) {
        lanai_set_isr(s, LANAI_ISR_BUFF);
        return 0;   /* QEMU queues it and stops reading the link */
    }
    if (s->myrinet & LANAI_MYRINET_CRC32_EN) {
        /* route bytes left over (misrouted): the firmware drops it */
        size_t rl = size < NVM_PKT_CRC_LEN ? 0 :
                    lanai_route_len(buf, size - NVM_PKT_CRC_LEN);

        if (size < NVM_PKT_CRC_LEN ||
            fw_crc32(0, buf + rl, size - NVM_PKT_CRC_LEN - rl) !=
            ldl_be_p(buf + size - NVM_PKT_CRC_LEN)) {
            s->rx_crc_errors++;
            trace_lanai_recv_drop("crc", size);
            return size;
        }
        len -= NVM_PKT_CRC_LEN;
    }
    if (!lanai_linkauth_ok(s, buf, len)) {
        return size;    /* not from the peer: dropped, counted */
    }
    if (len > r.slot_size - sizeof(struct fw_rx_slot)) {
        s->rx_oversize++;
        trace_lanai_recv_drop("oversize", size);
        return size;
    }
    slot = lanai_rx_slot(s, &r);
    memcpy(slot + sizeof(struct fw_rx_slot), buf, len);
    stl_le_p(slot + 4, len);
    smp_wmb();      /* vCPUs poll the slot state: data before FULL */
    stl_le_p(slot, FW_RX_SLOT_FULL);
    trace_lanai_recv(r.next, len);
    s->rx_count++;
    s->rx_next = (r.next + 1) % r.slots;
    lanai_set_isr(s, LANAI_ISR_RECV);
    lanai_fw_now(s, LANAI_FW_ROUNDS, LANAI_FW_BY_FRAME);
    return size;
}

static ssize_t lanai_receive(NetClientState *nc, const uint8_t *buf,
                             size_t size)
{
    return lanai_wire_receive(qemu_get_nic_opaque(nc), buf, size);
}

void lanai_recv_setup(LanaiState *s, uint32_t ring, uint32_t slots,
                      uint32_t slot_size)
{
    if (!lanai_rx_geometry_ok(s, ring, slots, slot_size)) {
        LANAI_GUEST_ERR(s, lanai_err_recv_setup,
                        "receive ring 0x%x, %u slots of %u: refused",
                        ring, slots, slot_size);
        s->rx_enabled = false;
        return;
    }
    s->rx_ring = ring;
    s->rx_slots = slots;
    s->rx_slot_size = slot_size;
    s->rx_next = 0;
    s->rx_enabled = true;
    lanai_recv_kick(s);
}

void lanai_recv_kick(LanaiState *s)
{
    LanaiRxRing r;

    if (!lanai_rx_ready(s, &r)) {
        return;
    }
    if (s->linksock) {
        lanai_linksock_kick(s);
    } else {
        /* it schedules the main loop's notify BH, even with nothing queued */
        qemu_flush_queued_packets(qemu_get_queue(s->nic));
    }
}

void lanai_recv_stop(LanaiState *s)
{
    s->rx_enabled = false;
}

void lanai_wire_reset(LanaiState *s)
{
    s->send_count = 0;
    s->rx_count = 0;
    s->rx_crc_errors = 0;
    s->rx_oversize = 0;
    s->send_busy = false;
    s->send_queued = false;
    s->rx_enabled = false;
    s->rx_next = 0;
    lanai_linksock_reset(s);
}

NetClientInfo lanai_net_info = {
    .type = NET_CLIENT_DRIVER_NIC,
    .size = sizeof(NICState),
    .can_receive = lanai_can_receive,
    .receive = lanai_receive,
    .link_status_changed = lanai_link_status_changed,
};
