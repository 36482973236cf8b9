/*
 * LANai: an emulated Myrinet LANai 9 NIC running netvm's firmware.
 * Internal interfaces between the device's files.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef HW_MISC_LANAI_H
#define HW_MISC_LANAI_H

#include "hw/pci/pci_device.h"
#include "net/net.h"
#include "qom/object.h"
#include "qemu/event_notifier.h"

#include "netvm/lanai_regs.h"
#include "netvm/lanai_sram.h"
#include "netvm/lanai_event.h"
#include "netvm/packet.h"
#include "fw.h"

#define TYPE_LANAI "lanai"
OBJECT_DECLARE_SIMPLE_TYPE(LanaiState, LANAI)

#define LANAI_DB_DEPTH          256   /* doorbell FIFO entries */
#define LANAI_EV_BACKLOG        256   /* events held while the ring is full */
#define LANAI_DMA_MAX_CHAIN     1024  /* longer chains are loops */
#define LANAI_LINK_POLL_MS      20
#define LANAI_FW_ROUNDS         16    /* firmware passes per BH or frame */
#define LANAI_FW_INLINE_ROUNDS  4     /* ... per doorbell write */
#define LANAI_PEER_ANY          UINT32_MAX  /* peer-node unset */

typedef struct LanaiLinkSock LanaiLinkSock;

typedef struct LanaiDoorbell {
    uint32_t offset;
    uint32_t data;
} LanaiDoorbell;

struct LanaiState {
    PCIDevice parent_obj;

    MemoryRegion regs;
    MemoryRegion sram;
    MemoryRegion doorbell;
    NICState *nic;
    NICConf conf;

    /* properties */
    uint32_t sram_size;
    uint32_t node_id;

    /* LANai special registers and host interface registers */
    uint32_t isr;
    uint32_t eimr;
    uint32_t cpuc;
    uint32_t myrinet;
    uint32_t led;
    uint32_t scratch;
    uint32_t errors;          /* guest errors logged */
    int64_t rtc_base_ns;
    bool irq_level;           /* ISR & EIMR was non-zero at last update */
    uint32_t link;            /* NVM_LINK_* as last reported */
    QEMUTimer *it_timer[3];   /* interval timers IT0-IT2 */
    int64_t it_deadline[3];   /* virtual ns, 0 = not armed */
    QEMUTimer *link_timer;

    /* firmware-published state */
    uint32_t fw_state;
    uint32_t fw_version;
    uint32_t layout_off;

    /* event queue (lanai-events.c) */
    uint64_t evq_base;
    uint32_t evq_len;
    uint32_t evq_prod;
    uint32_t evq_cons;
    uint32_t evq_lost;
    struct nvm_event backlog[LANAI_EV_BACKLOG];
    uint32_t backlog_head;
    uint32_t backlog_count;

    /* doorbell FIFO (lanai-doorbell.c) */
    LanaiDoorbell db[LANAI_DB_DEPTH];
    uint32_t db_head;
    uint32_t db_count;
    uint32_t db_overflows;
    uint32_t db_yields;       /* not migrated: a statistic */
    /*
     * yield-wait-us (lanai-doorbell.c): a yield waits this long at most
     * for the device's next write to guest memory; 0: sched_yield only.
     * landed_gen counts those writes (atomic), yield_seen is each
     * endpoint's count at its last yield, yield_waiters the vCPUs waiting
     * (without the BQL) on landed.
     */
    uint32_t yield_wait_us;
    uint32_t landed_gen;
    uint32_t yield_waiters;
    bool yield_closing;
    uint32_t yield_seen[LANAI_MAX_ENDPOINTS];
    EventNotifier landed;
    bool db_overflow;

    /* host DMA engine (lanai-hostdma.c) */
    bool hdma_busy;
    uint32_t hdma_desc;
    uint32_t hdma_chains;
    QEMUBH *hdma_bh;

    /* send-wire engine (lanai-wire.c) */
    bool send_busy;           /* started, not yet taken by the link */
    bool send_queued;         /* handed to the net layer, awaiting sent_cb */
    uint32_t send_off;
    uint32_t send_len;
    uint32_t send_count;
    QEMUBH *send_bh;
    VMChangeStateEntry *vm_state;   /* resends a purged frame on run */

    /* receive-wire engine (lanai-wire.c) */
    bool rx_enabled;
    uint32_t rx_ring;
    uint32_t rx_slots;
    uint32_t rx_slot_size;
    uint32_t rx_next;
    uint32_t rx_count;
    uint32_t rx_crc_errors;
    uint32_t rx_oversize;

    /* the link as a socket of its own (lanai-linksock.c) */
    char *link_socket;              /* property; NULL: the netdev */
    bool link_listen;               /* property: listen, not connect */
    char *link_inject;              /* property: a FIFO of frames to take */
    LanaiLinkSock *linksock;

    /* sender authentication (lanai-linkauth.c) */
    uint32_t peer_node;             /* property; LANAI_PEER_ANY: unchecked */
    uint64_t rx_bad_src;            /* not reset, not migrated */

    /* self-test engine (lanai-selftest.c) */
    uint64_t st_addr;
    uint32_t st_len;
    uint32_t st_seed;
    uint32_t st_cmd;
    uint32_t st_status;
    QEMUBH *st_bh;

    /* firmware (lanai-fw.c) */
    struct fw fw;
    struct fw_chip chip;
    QEMUBH *fw_bh;
    /*
     * Only while the firmware runs (lanai_fw_run, from the bottom half, a
     * doorbell write or a frame's arrival; under the BQL, as every access
     * here):
     * engines the firmware starts wait for it instead of a BH, kicks ask
     * it for another run.  Never set between main-loop iterations, so
     * not migrated.
     */
    bool fw_running;
    bool fw_again;
    /* property doorbell-inline: a doorbell runs an idle firmware at once */
    bool doorbell_inline;
};

/* lanai-regs.c */
extern const MemoryRegionOps lanai_regs_ops;
void lanai_regs_reset(LanaiState *s);
void lanai_guest_error(LanaiState *s, const char *fmt, ...) G_GNUC_PRINTF(2, 3);

/*
 * A guest error with its own trace event, as hw/nvme's NVME_GUEST_ERR:
 * logged (LOG_GUEST_ERROR), counted in ERRORS, and traced as
 * trace_<trace>(args...).
 */
#define LANAI_GUEST_ERR(s, trace, fmt, ...)                             \
    do {                                                                \
        trace_##trace(__VA_ARGS__);                                     \
        lanai_guest_error(s, #trace ": " fmt, ## __VA_ARGS__);          \
    } while (0)

/*
 * The device's re-entrancy guard, engaged around every DMA and MSI write
 * the device makes, whoever makes it (an MMIO access holds it already; a
 * timer or a net-layer callback does not): a write the guest aimed at
 * this device's own BARs is then refused by the memory core instead of
 * re-entering the device in the middle of an update.
 */
static inline bool lanai_guard_enter(LanaiState *s)
{
    MemReentrancyGuard *guard = &DEVICE(s)->mem_reentrancy_guard;
    bool engaged = guard->engaged_in_io;

    guard->engaged_in_io = true;
    return engaged;
}

static inline void lanai_guard_leave(LanaiState *s, bool engaged)
{
    DEVICE(s)->mem_reentrancy_guard.engaged_in_io = engaged;
}

/* lanai-events.c */
void lanai_update_irq(LanaiState *s);
void lanai_set_isr(LanaiState *s, uint32_t bits);
void lanai_event_post(LanaiState *s, const struct nvm_event *ev);
void lanai_evq_flush(LanaiState *s);
void lanai_evq_reset(LanaiState *s);

/* lanai-doorbell.c */
extern const MemoryRegionOps lanai_doorbell_ops;
bool lanai_doorbell_pop(LanaiState *s, uint32_t *offset, uint32_t *data);
void lanai_doorbell_reset(LanaiState *s);
void lanai_yield_init(LanaiState *s);
void lanai_yield_exit(LanaiState *s);
void lanai_landed(LanaiState *s);

/* lanai-hostdma.c */
void lanai_hdma_start(LanaiState *s, uint32_t desc);
void lanai_hdma_bh(void *opaque);
void lanai_hdma_reset(LanaiState *s);

/* lanai-wire.c */
extern NetClientInfo lanai_net_info;
void lanai_send_start(LanaiState *s, uint32_t off, uint32_t len);
void lanai_send_bh(void *opaque);
void lanai_wire_vm_state(void *opaque, bool running, RunState state);
void lanai_recv_setup(LanaiState *s, uint32_t ring, uint32_t slots,
                      uint32_t slot_size);
void lanai_recv_kick(LanaiState *s);
bool lanai_send_range_ok(LanaiState *s, uint32_t off, uint32_t len);
bool lanai_rx_state_ok(LanaiState *s);
void lanai_recv_stop(LanaiState *s);
uint32_t lanai_link_state(LanaiState *s);
void lanai_link_changed(LanaiState *s);
bool lanai_wire_can_receive(LanaiState *s);
ssize_t lanai_wire_receive(LanaiState *s, const uint8_t *buf, size_t size);
void lanai_send_sent_by_link(LanaiState *s);
void lanai_link_timer(void *opaque);
void lanai_wire_reset(LanaiState *s);
size_t lanai_route_len(const uint8_t *buf, size_t len);

/* lanai-linksock.c */
bool lanai_linksock_realize(LanaiState *s, Error **errp);
void lanai_linksock_start(LanaiState *s);
void lanai_linksock_stop(LanaiState *s);
void lanai_linksock_free(LanaiState *s);
QEMUTimerListGroup *lanai_linksock_timers(LanaiState *s);
bool lanai_linksock_up(LanaiState *s);
bool lanai_linksock_send(LanaiState *s, const uint8_t *frame, size_t len);
void lanai_linksock_kick(LanaiState *s);
void lanai_linksock_vm_state(LanaiState *s, bool running);
void lanai_linksock_reset(LanaiState *s);

/* lanai-linkauth.c */
bool lanai_linkauth_realize(LanaiState *s, Error **errp);
bool lanai_linkauth_ok(LanaiState *s, const uint8_t *buf, size_t len);
void lanai_linkauth_class_init(ObjectClass *klass);

/* lanai-timers.c */
void lanai_timers_init(LanaiState *s);
void lanai_timers_free(LanaiState *s);
void lanai_timer_arm(LanaiState *s, unsigned which, uint64_t delay_ns);
uint32_t lanai_timer_ticks(LanaiState *s, unsigned which);
void lanai_timers_reset(LanaiState *s);
void lanai_timers_post_load(LanaiState *s);

/* lanai-selftest.c */
void lanai_selftest_start(LanaiState *s, uint32_t cmd);
void lanai_selftest_bh(void *opaque);
void lanai_selftest_reset(LanaiState *s);
bool lanai_selftest_args_ok(uint32_t cmd, uint32_t len);
void lanai_selftest_vm_state(LanaiState *s, bool running);

/* lanai-load.c: false (and the failed check) for a stream to refuse */
bool lanai_load_ok(LanaiState *s, const char **what);

/* lanai-fw.c */
void lanai_fw_init(LanaiState *s);
/* who runs the firmware (trace event lanai_fw_bh) */
enum lanai_fw_caller {
    LANAI_FW_BY_BH,
    LANAI_FW_BY_DOORBELL,
    LANAI_FW_BY_FRAME,
    LANAI_FW_BY_TIMER,
};
extern const char *const lanai_fw_caller_name[];

void lanai_fw_kick(LanaiState *s);
void lanai_fw_now(LanaiState *s, unsigned max_rounds,
                  enum lanai_fw_caller caller);
void lanai_fw_doorbell(LanaiState *s);
void lanai_fw_bh(void *opaque);
void lanai_fw_reset(LanaiState *s);

#endif
