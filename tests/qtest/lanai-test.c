/*
 * QTest for the LANai device (-device lanai): registers, self-test DMA
 * and interrupts, doorbell capture, event queue, firmware boot, raw frames
 * between two QEMU processes, and hostile guest input.
 *
 * Built inside QEMU's tree (symlinked to tests/qtest/ by build-qemu.sh)
 * and run by netvm's meson suite "qtest".
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "libqtest.h"
#include "libqos/libqos-pc.h"
#include "libqos/pci.h"
#include "hw/pci/pci_regs.h"
#include "qobject/qdict.h"

#include "../../hw/misc/lanai/include/netvm/lanai_regs.h"
#include "../../hw/misc/lanai/include/netvm/lanai_sram.h"
#include "../../hw/misc/lanai/include/netvm/lanai_event.h"
#include "../../hw/misc/lanai/include/netvm/fw_counters.h"
#include "../../hw/misc/lanai/include/netvm/fw_saved_offsets.h"
#include "../../hw/misc/lanai/include/netvm/packet.h"
#include <poll.h>
#include <sys/un.h>

#define EVQ_LEN     64
#define WAIT_US     (5 * G_USEC_PER_SEC)

typedef struct Lanai {
    QOSState *qs;
    QPCIDevice *dev;
    QPCIBar regs, sram, db;
    uint64_t regs_size, sram_size, db_size;
    uint64_t evq;           /* guest address of the event ring */
    uint32_t evq_seen;      /* events consumed */
    uint64_t msix_addr[LANAI_MSIX_COUNT];
} Lanai;

static void save_fn(QPCIDevice *dev, int devfn, void *data)
{
    QPCIDevice **pdev = data;

    *pdev = dev;
}

static Lanai *lanai_boot(const char *extra)
{
    Lanai *l = g_new0(Lanai, 1);

    l->qs = qtest_pc_boot("-nodefaults -device lanai%s", extra ? extra : "");
    qpci_device_foreach(l->qs->pcibus, LANAI_PCI_VENDOR_ID,
                        LANAI_PCI_DEVICE_ID, save_fn, &l->dev);
    g_assert(l->dev);
    qpci_device_enable(l->dev);
    l->regs = qpci_iomap(l->dev, LANAI_BAR_REGS, &l->regs_size);
    l->sram = qpci_iomap(l->dev, LANAI_BAR_SRAM, &l->sram_size);
    l->db = qpci_iomap(l->dev, LANAI_BAR_DOORBELL, &l->db_size);
    return l;
}

static void lanai_free(Lanai *l)
{
    g_free(l->dev);
    qtest_shutdown(l->qs);
    g_free(l);
}

static QTestState *qts(Lanai *l)
{
    return l->qs->qts;
}

static uint32_t rd(Lanai *l, uint32_t off)
{
    return qpci_io_readl(l->dev, l->regs, off);
}

static void wr(Lanai *l, uint32_t off, uint32_t val)
{
    qpci_io_writel(l->dev, l->regs, off, val);
}

static uint32_t sram_rd(Lanai *l, uint32_t off)
{
    return qpci_io_readl(l->dev, l->sram, off);
}

static void sram_wr(Lanai *l, uint32_t off, uint32_t val)
{
    qpci_io_writel(l->dev, l->sram, off, val);
}

/* Route each MSI-X vector's message to a guest word we can poll. */
static void lanai_msix_setup(Lanai *l)
{
    qpci_msix_enable(l->dev);
    for (int i = 0; i < LANAI_MSIX_COUNT; i++) {
        uint64_t off = l->dev->msix_table_off + i * PCI_MSIX_ENTRY_SIZE;

        l->msix_addr[i] = guest_alloc(&l->qs->alloc, 4);
        qtest_writel(qts(l), l->msix_addr[i], 0);
        qpci_io_writel(l->dev, l->dev->msix_table_bar,
                       off + PCI_MSIX_ENTRY_LOWER_ADDR, l->msix_addr[i]);
        qpci_io_writel(l->dev, l->dev->msix_table_bar,
                       off + PCI_MSIX_ENTRY_UPPER_ADDR, l->msix_addr[i] >> 32);
        qpci_io_writel(l->dev, l->dev->msix_table_bar,
                       off + PCI_MSIX_ENTRY_DATA, 0x100 + i);
        qpci_io_writel(l->dev, l->dev->msix_table_bar,
                       off + PCI_MSIX_ENTRY_VECTOR_CTRL, 0);
    }
}

/* True (and re-armed) if vector v fired since the last call. */
static bool lanai_msix_fired(Lanai *l, int v)
{
    if (qtest_readl(qts(l), l->msix_addr[v]) != 0x100u + v) {
        return false;
    }
    qtest_writel(qts(l), l->msix_addr[v], 0);
    return true;
}

#define WAIT_FOR(cond) ({                                               \
    gint64 deadline_ = g_get_monotonic_time() + WAIT_US;                \
    bool ok_;                                                           \
    while (!(ok_ = (cond)) && g_get_monotonic_time() < deadline_) {     \
        g_usleep(1000);                                                 \
    }                                                                   \
    ok_;                                                                \
})

static void lanai_evq_setup(Lanai *l)
{
    l->evq = guest_alloc(&l->qs->alloc, EVQ_LEN * sizeof(struct nvm_event));
    g_assert_cmphex(l->evq & 15, ==, 0);
    qtest_memset(qts(l), l->evq, 0, EVQ_LEN * sizeof(struct nvm_event));
    wr(l, NVM_REG_EVQ_BASE_LO, l->evq);
    wr(l, NVM_REG_EVQ_BASE_HI, l->evq >> 32);
    wr(l, NVM_REG_EVQ_LEN, EVQ_LEN);
    l->evq_seen = 0;
}

/* Next event if one is there (phase bit protocol), else false. */
static bool lanai_event_next(Lanai *l, struct nvm_event *ev)
{
    uint32_t n = l->evq_seen;
    uint8_t want = ((n / EVQ_LEN) & 1) ? 0 : NVM_EV_F_PHASE;

    qtest_memread(qts(l), l->evq + (n % EVQ_LEN) * sizeof(*ev), ev,
                  sizeof(*ev));
    if ((ev->flags & NVM_EV_F_PHASE) != want || ev->type == NVM_EV_NONE) {
        return false;
    }
    l->evq_seen++;
    wr(l, NVM_REG_EVQ_CONS, l->evq_seen);
    return true;
}

/* Wait for an event of this type, skipping others. */
static struct nvm_event lanai_event_wait_at(Lanai *l, uint8_t type, int line)
{
    struct nvm_event ev = { 0 };

    if (!WAIT_FOR(lanai_event_next(l, &ev) && ev.type == type)) {
        g_error("line %d: no event of type %u (last seen: type %u data 0x%x)",
                line, type, ev.type, ev.data);
    }
    return ev;
}
#define lanai_event_wait(l, type) lanai_event_wait_at(l, type, __LINE__)

static void lanai_fw_start(Lanai *l)
{
    lanai_evq_setup(l);
    wr(l, LANAI_REG_EIMR, LANAI_ISR_HOST_W1C);
    wr(l, LANAI_REG_CPUC, LANAI_CPUC_RUN);
    g_assert_true(WAIT_FOR(rd(l, NVM_REG_FW_STATE) == NVM_FW_READY));
}

static void read_layout(Lanai *l, struct nvm_sram_layout *lay)
{
    qpci_memread(l->dev, l->sram, rd(l, NVM_REG_LAYOUT_OFF), lay,
                 sizeof(*lay));
    g_assert_cmphex(lay->magic, ==, NVM_LAYOUT_MAGIC);
}

/* ------------------------------------------------------------------ */

static void test_bars(void)
{
    Lanai *l = lanai_boot(",sram-size=1048576");

    g_assert_cmpuint(l->regs_size, ==, LANAI_REGS_SIZE);
    g_assert_cmpuint(l->sram_size, ==, 1024 * 1024);
    g_assert_cmpuint(l->db_size, ==, LANAI_DOORBELL_SIZE);
    g_assert_cmphex(qpci_config_readw(l->dev, PCI_VENDOR_ID), ==,
                    LANAI_PCI_VENDOR_ID);
    g_assert_cmphex(qpci_config_readw(l->dev, PCI_DEVICE_ID), ==,
                    LANAI_PCI_DEVICE_ID);
    g_assert_cmphex(qpci_find_capability(l->dev, PCI_CAP_ID_MSIX, 0), !=, 0);
    lanai_free(l);
}

static void test_reset_values(void)
{
    Lanai *l = lanai_boot(",node-id=5");

    g_assert_cmphex(rd(l, NVM_REG_ID), ==, NVM_ID_MAGIC);
    g_assert_cmphex(rd(l, NVM_REG_VERSION), ==, NVM_ABI_VERSION);
    g_assert_cmpuint(rd(l, NVM_REG_NODE_ID), ==, 5);
    g_assert_cmpuint(rd(l, NVM_REG_SRAM_SIZE), ==, LANAI_SRAM_DEFAULT);
    g_assert_cmphex(rd(l, LANAI_REG_ISR), ==, 0);
    g_assert_cmphex(rd(l, LANAI_REG_EIMR), ==, 0);
    g_assert_cmphex(rd(l, LANAI_REG_CPUC), ==, 0);
    g_assert_cmphex(rd(l, LANAI_REG_MYRINET), ==,
                    LANAI_MYRINET_NRES_EN | LANAI_MYRINET_CRC32_EN);
    g_assert_cmphex(rd(l, LANAI_REG_LED), ==, 0);
    g_assert_cmphex(rd(l, LANAI_REG_IT0), ==, 0);
    g_assert_cmpuint(rd(l, NVM_REG_FW_STATE), ==, NVM_FW_HALTED);
    g_assert_cmphex(rd(l, NVM_REG_FW_VERSION), ==, 0);
    g_assert_cmphex(rd(l, NVM_REG_LINK), ==, 0);     /* no netdev */
    g_assert_cmphex(rd(l, NVM_REG_EVQ_LEN), ==, 0);
    g_assert_cmphex(rd(l, NVM_REG_EVQ_PROD), ==, 0);
    g_assert_cmphex(rd(l, NVM_REG_DB_STATUS), ==, 0);
    g_assert_cmphex(rd(l, NVM_REG_DB_OVERFLOWS), ==, 0);
    g_assert_cmphex(rd(l, NVM_REG_DB_YIELDS), ==, 0);
    g_assert_cmphex(rd(l, NVM_REG_ST_STATUS), ==, NVM_ST_STATUS_IDLE);
    g_assert_cmphex(rd(l, NVM_REG_SCRATCH), ==, 0);
    g_assert_cmphex(rd(l, NVM_REG_EVQ_LOST), ==, 0);
    g_assert_cmphex(rd(l, NVM_REG_ERRORS), ==, 0);
    g_assert_cmphex(rd(l, LANAI_REG_IT1), ==, 0);
    g_assert_cmphex(rd(l, LANAI_REG_IT2), ==, 0);
    g_assert_cmphex(rd(l, NVM_REG_LAYOUT_OFF), ==, 0);
    g_assert_cmphex(rd(l, NVM_REG_HDMA_DESC), ==, 0);
    g_assert_cmphex(rd(l, NVM_REG_HDMA_STATUS), ==, 0);
    g_assert_cmphex(rd(l, NVM_REG_SEND_CTRL), ==, 0);
    g_assert_cmphex(rd(l, NVM_REG_SEND_COUNT), ==, 0);
    g_assert_cmphex(rd(l, NVM_REG_RECV_CTRL), ==, 0);
    g_assert_cmphex(rd(l, NVM_REG_RECV_COUNT), ==, 0);
    g_assert_cmphex(rd(l, NVM_REG_RECV_DROPS), ==, 0);
    g_assert_cmphex(rd(l, NVM_REG_ST_LEN), ==, 0);
    g_assert_cmphex(rd(l, NVM_REG_ST_ADDR_LO), ==, 0);
    lanai_free(l);
}

static void test_access_rules(void)
{
    Lanai *l = lanai_boot(",node-id=3");
    uint32_t rtc0, rtc1;

    wr(l, NVM_REG_SCRATCH, 0xdeadbeef);
    g_assert_cmphex(rd(l, NVM_REG_SCRATCH), ==, 0xdeadbeef);
    wr(l, LANAI_REG_EIMR, 0x00ff0000);
    g_assert_cmphex(rd(l, LANAI_REG_EIMR), ==, 0x00ff0000);

    /* read-only registers keep their value; each write is an error */
    wr(l, NVM_REG_ID, 0);
    wr(l, NVM_REG_NODE_ID, 9);
    wr(l, NVM_REG_FW_STATE, NVM_FW_READY);
    g_assert_cmphex(rd(l, NVM_REG_ID), ==, NVM_ID_MAGIC);
    g_assert_cmpuint(rd(l, NVM_REG_NODE_ID), ==, 3);
    g_assert_cmpuint(rd(l, NVM_REG_FW_STATE), ==, NVM_FW_HALTED);
    g_assert_cmpuint(rd(l, NVM_REG_ERRORS), ==, 3);

    /* unassigned offsets read 0 and are errors too */
    g_assert_cmphex(rd(l, 0x7fc), ==, 0);
    wr(l, 0x7fc, 1);
    g_assert_cmpuint(rd(l, NVM_REG_ERRORS), ==, 5);

    /* firmware-owned ISR bits cannot be cleared by the host */
    wr(l, LANAI_REG_ISR, LANAI_ISR_WAKE0);
    g_assert_cmpuint(rd(l, NVM_REG_ERRORS), ==, 6);

    /* bad event queue set-up is refused */
    wr(l, NVM_REG_EVQ_LEN, 3);
    g_assert_cmphex(rd(l, NVM_REG_EVQ_LEN), ==, 0);
    wr(l, NVM_REG_EVQ_CONS, 1);
    g_assert_cmpuint(rd(l, NVM_REG_ERRORS), ==, 8);

    /* the RTC runs on the virtual clock: 500 ns per tick */
    rtc0 = rd(l, LANAI_REG_RTC);
    qtest_clock_step(qts(l), 1000 * 1000);
    rtc1 = rd(l, LANAI_REG_RTC);
    g_assert_cmpuint(rtc1 - rtc0, ==, 2000);

    /* doorbell reads are refused and read 0 */
    g_assert_cmphex(qpci_io_readl(l->dev, l->db, 0), ==, 0);
    g_assert_cmpuint(rd(l, NVM_REG_ERRORS), ==, 9);
    g_assert_cmphex(qpci_io_readl(l->dev, l->db, LANAI_DB_YIELD - 4), ==, 0);
    g_assert_cmpuint(rd(l, NVM_REG_ERRORS), ==, 10);
    g_assert_cmpuint(rd(l, NVM_REG_DB_YIELDS), ==, 0);

    /* ... but a page's yield word: 0, counted, no error, no doorbell */
    g_assert_cmphex(qpci_io_readl(l->dev, l->db, LANAI_DB_YIELD), ==, 0);
    g_assert_cmphex(qpci_io_readl(l->dev, l->db,
                                  (LANAI_MAX_ENDPOINTS - 1) *
                                  LANAI_DOORBELL_PAGE + LANAI_DB_YIELD), ==, 0);
    g_assert_cmpuint(rd(l, NVM_REG_DB_YIELDS), ==, 2);
    g_assert_cmpuint(rd(l, NVM_REG_ERRORS), ==, 10);
    g_assert_cmphex(rd(l, NVM_REG_DB_STATUS), ==, 0);
    lanai_free(l);
}

static void test_selftest_dma(void)
{
    Lanai *l = lanai_boot(NULL);
    uint64_t buf = guest_alloc(&l->qs->alloc, NVM_ST_MAX_LEN);
    g_autofree uint8_t *data = g_malloc(NVM_ST_MAX_LEN);
    const uint32_t seed = 0x1234abcd;

    qtest_memset(qts(l), buf, 0x5a, NVM_ST_MAX_LEN);
    wr(l, NVM_REG_ST_ADDR_LO, buf);
    wr(l, NVM_REG_ST_ADDR_HI, buf >> 32);
    wr(l, NVM_REG_ST_LEN, NVM_ST_MAX_LEN);
    wr(l, NVM_REG_ST_SEED, seed);
    wr(l, NVM_REG_ST_CMD, NVM_ST_CMD_FILL);
    g_assert_true(WAIT_FOR(rd(l, NVM_REG_ST_STATUS) == NVM_ST_STATUS_DONE));
    qtest_memread(qts(l), buf, data, NVM_ST_MAX_LEN);
    for (int i = 0; i < NVM_ST_MAX_LEN; i++) {
        g_assert_cmphex(data[i], ==, nvm_st_pattern(seed, i));
    }

    wr(l, NVM_REG_ST_CMD, NVM_ST_CMD_INVERT);
    g_assert_true(WAIT_FOR(rd(l, NVM_REG_ST_STATUS) == NVM_ST_STATUS_DONE));
    qtest_memread(qts(l), buf, data, NVM_ST_MAX_LEN);
    for (int i = 0; i < NVM_ST_MAX_LEN; i++) {
        g_assert_cmphex(data[i], ==, (uint8_t)~nvm_st_pattern(seed, i));
    }
    g_assert_cmpuint(rd(l, NVM_REG_ERRORS), ==, 0);
    lanai_free(l);
}

static void test_selftest_irq(void)
{
    Lanai *l = lanai_boot(NULL);

    lanai_msix_setup(l);
    wr(l, NVM_REG_ST_IRQ, LANAI_MSIX_SELFTEST);
    g_assert_true(WAIT_FOR(lanai_msix_fired(l, LANAI_MSIX_SELFTEST)));
    g_assert_false(lanai_msix_fired(l, LANAI_MSIX_EVENTS));
    wr(l, NVM_REG_ST_IRQ, LANAI_MSIX_EVENTS);
    g_assert_true(WAIT_FOR(lanai_msix_fired(l, LANAI_MSIX_EVENTS)));
    wr(l, NVM_REG_ST_IRQ, 7);      /* no such vector */
    g_assert_cmpuint(rd(l, NVM_REG_ERRORS), ==, 1);
    lanai_free(l);
}

/* DMA the guest cannot have meant: refused, logged, QEMU keeps running. */
static void test_selftest_hostile(void)
{
    Lanai *l = lanai_boot(NULL);
    uint64_t guard = guest_alloc(&l->qs->alloc, NVM_ST_MAX_LEN);
    g_autofree uint8_t *got = g_malloc(NVM_ST_MAX_LEN);
    g_autofree uint8_t *want = g_malloc(NVM_ST_MAX_LEN);
    const uint64_t bad[] = {
        0xfffffffffffff000ull,      /* beyond any address space */
        0x00007ffffffff000ull,      /* unmapped */
    };

    for (unsigned i = 0; i < G_N_ELEMENTS(bad); i++) {
        wr(l, NVM_REG_ST_ADDR_LO, bad[i]);
        wr(l, NVM_REG_ST_ADDR_HI, bad[i] >> 32);
        wr(l, NVM_REG_ST_LEN, 64);
        wr(l, NVM_REG_ST_CMD, NVM_ST_CMD_FILL);
        g_assert_true(WAIT_FOR(rd(l, NVM_REG_ST_STATUS) ==
                               NVM_ST_STATUS_ERROR));
    }
    /* DMA aimed at the device's own registers (the re-entrancy case) */
    wr(l, NVM_REG_ST_ADDR_LO, l->regs.addr);
    wr(l, NVM_REG_ST_ADDR_HI, 0);
    wr(l, NVM_REG_ST_CMD, NVM_ST_CMD_INVERT);
    g_assert_true(WAIT_FOR(rd(l, NVM_REG_ST_STATUS) != NVM_ST_STATUS_BUSY));

    /*
     * zero and huge lengths, unknown commands: refused at once, and aimed
     * at real guest memory, which must stay as it was, every byte
     */
    memset(want, 0x5a, NVM_ST_MAX_LEN);
    qtest_memwrite(qts(l), guard, want, NVM_ST_MAX_LEN);
    wr(l, NVM_REG_ST_ADDR_LO, guard);
    wr(l, NVM_REG_ST_ADDR_HI, guard >> 32);
    wr(l, NVM_REG_ST_LEN, 0);
    wr(l, NVM_REG_ST_CMD, NVM_ST_CMD_FILL);
    g_assert_cmpuint(rd(l, NVM_REG_ST_STATUS), ==, NVM_ST_STATUS_ERROR);
    wr(l, NVM_REG_ST_LEN, 0x10000000);
    wr(l, NVM_REG_ST_CMD, NVM_ST_CMD_FILL);
    g_assert_cmpuint(rd(l, NVM_REG_ST_STATUS), ==, NVM_ST_STATUS_ERROR);
    wr(l, NVM_REG_ST_LEN, 16);
    wr(l, NVM_REG_ST_CMD, 99);
    g_assert_cmpuint(rd(l, NVM_REG_ST_STATUS), ==, NVM_ST_STATUS_ERROR);
    qtest_memread(qts(l), guard, got, NVM_ST_MAX_LEN);
    g_assert_cmpmem(got, NVM_ST_MAX_LEN, want, NVM_ST_MAX_LEN);

    g_assert_cmpuint(rd(l, NVM_REG_ERRORS), >=, 5);
    g_assert_cmphex(rd(l, NVM_REG_ID), ==, NVM_ID_MAGIC);   /* alive */
    lanai_free(l);
}

static void test_doorbell_fifo(void)
{
    Lanai *l = lanai_boot(NULL);
    struct nvm_event ev;
    int i;

    lanai_evq_setup(l);
    /* firmware halted: nothing drains the FIFO */
    for (i = 0; i < 10; i++) {
        qpci_io_writel(l->dev, l->db, (i % 4) * LANAI_DOORBELL_PAGE + 8 * i,
                       0x1000 + i);
    }
    g_assert_cmphex(rd(l, NVM_REG_DB_STATUS), ==, 10);
    for (; i < 300; i++) {
        qpci_io_writel(l->dev, l->db, 0, 0x1000 + i);
    }
    g_assert_cmphex(rd(l, NVM_REG_DB_STATUS), ==, 256 | NVM_DB_OVERFLOW);
    g_assert_cmpuint(rd(l, NVM_REG_DB_OVERFLOWS), ==, 300 - 256);
    ev = lanai_event_wait(l, NVM_EV_DB_OVERFLOW);
    g_assert_cmpuint(ev.data, ==, 1);         /* one event per episode */
    g_assert_false(lanai_event_next(l, &ev));

    /* the firmware drains it; unknown words are reported, in order */
    wr(l, LANAI_REG_CPUC, LANAI_CPUC_RUN);
    g_assert_true(WAIT_FOR(rd(l, NVM_REG_DB_STATUS) == 0));
    ev = lanai_event_wait(l, NVM_EV_FW_STATE);
    g_assert_cmpuint(ev.data, ==, NVM_FW_READY);
    for (i = 0; i < 10; i++) {
        ev = lanai_event_wait(l, NVM_EV_ERROR);
        g_assert_cmpuint(ev.data, ==, NVM_ERR_BAD_DOORBELL);
        g_assert_cmpuint(ev.endpoint, ==, i % 4);
        g_assert_cmphex(ev.arg, ==,
                        ((uint64_t)((i % 4) * LANAI_DOORBELL_PAGE + 8 * i)
                         << 32) | (0x1000 + i));
    }
    lanai_free(l);
}

static void test_firmware_boot(void)
{
    Lanai *l = lanai_boot(",node-id=7");
    struct nvm_sram_layout lay;
    struct nvm_event ev;

    lanai_msix_setup(l);
    lanai_fw_start(l);
    g_assert_cmphex(rd(l, NVM_REG_FW_VERSION), !=, 0);
    read_layout(l, &lay);
    g_assert_cmpuint(lay.version, ==, NVM_LAYOUT_VERSION);
    g_assert_cmpuint(lay.sram_size, ==, LANAI_SRAM_DEFAULT);
    g_assert_cmphex(lay.fw_version, ==, rd(l, NVM_REG_FW_VERSION));
    g_assert_cmpuint(lay.raw_tx_len, >, 0);
    g_assert_cmpuint(lay.raw_max_payload, ==, 4096);
    g_assert_cmpuint(lay.raw_tx_ring + lay.raw_tx_len *
                     sizeof(struct nvm_raw_desc), <=, lay.sram_size);

    ev = lanai_event_wait(l, NVM_EV_FW_STATE);
    g_assert_cmpuint(ev.data, ==, NVM_FW_READY);
    g_assert_true(ev.flags & NVM_EV_F_PHASE);
    g_assert_true(WAIT_FOR(lanai_msix_fired(l, LANAI_MSIX_EVENTS)));
    g_assert_cmphex(rd(l, LANAI_REG_ISR) & LANAI_ISR_EV_FW, !=, 0);

    /* coalescing: no new interrupt until the host clears ISR */
    wr(l, LANAI_REG_CPUC, 0);
    g_assert_true(WAIT_FOR(rd(l, NVM_REG_FW_STATE) == NVM_FW_HALTED));
    wr(l, LANAI_REG_ISR, LANAI_ISR_HOST_W1C);
    g_assert_cmphex(rd(l, LANAI_REG_ISR), ==, 0);
    wr(l, LANAI_REG_CPUC, LANAI_CPUC_RUN);
    ev = lanai_event_wait(l, NVM_EV_FW_STATE);
    g_assert_true(WAIT_FOR(lanai_msix_fired(l, LANAI_MSIX_EVENTS)));

    /* soft reset: firmware halted, layout gone from the registers */
    wr(l, LANAI_REG_CPUC, LANAI_CPUC_RESET);
    g_assert_cmpuint(rd(l, NVM_REG_FW_STATE), ==, NVM_FW_HALTED);
    g_assert_cmphex(rd(l, LANAI_REG_CPUC), ==, 0);
    lanai_free(l);
}

/* The event ring fills, events wait in order, nothing is lost. */
static void test_event_ring_full(void)
{
    Lanai *l = lanai_boot(NULL);
    struct nvm_event ev;
    const int n = EVQ_LEN + 20;
    int i;

    lanai_fw_start(l);
    lanai_event_wait(l, NVM_EV_FW_STATE);
    for (i = 0; i < n; i++) {
        qpci_io_writel(l->dev, l->db, 0, 0xbad00000 + i);
    }
    g_assert_true(WAIT_FOR(rd(l, NVM_REG_EVQ_PROD) - l->evq_seen == EVQ_LEN));
    for (i = 0; i < n; i++) {
        ev = lanai_event_wait(l, NVM_EV_ERROR);
        g_assert_cmphex(ev.arg & 0xffffffff, ==, 0xbad00000 + i);
    }
    g_assert_false(lanai_event_next(l, &ev));
    g_assert_cmpuint(rd(l, NVM_REG_EVQ_LOST), ==, 0);
    lanai_free(l);
}

/*
 * MSI-X is edge-triggered.  A cause raised after the host read ISR and
 * before it wrote the bits back (W1C) stays pending: acknowledging must
 * signal it again, or that node's driver is never interrupted again (a
 * 4-node guest test hung this way, about once in 30 runs).
 */
static void test_event_irq_rearm(void)
{
    Lanai *l = lanai_boot(NULL);
    uint32_t seen;

    lanai_msix_setup(l);
    wr(l, LANAI_REG_EIMR, LANAI_ISR_HOST_W1C);
    lanai_fw_start(l);
    lanai_event_wait(l, NVM_EV_FW_STATE);
    g_assert_true(WAIT_FOR(lanai_msix_fired(l, LANAI_MSIX_EVENTS)));
    /* the host reads ISR (the firmware-state cause) ... */
    seen = rd(l, LANAI_REG_ISR);
    g_assert_cmphex(seen & LANAI_ISR_EV_FW, !=, 0);
    /* ... the firmware raises another cause meanwhile (no new edge) ... */
    qpci_io_writel(l->dev, l->db, 0, 0xbad00001);
    g_assert_true(WAIT_FOR(rd(l, LANAI_REG_ISR) & LANAI_ISR_EV_ERROR));
    g_assert_false(lanai_msix_fired(l, LANAI_MSIX_EVENTS));
    /* ... and the host acknowledges what it read: the rest interrupts */
    wr(l, LANAI_REG_ISR, seen & LANAI_ISR_HOST_W1C);
    g_assert_cmphex(rd(l, LANAI_REG_ISR) & LANAI_ISR_EV_ERROR, !=, 0);
    g_assert_true(WAIT_FOR(lanai_msix_fired(l, LANAI_MSIX_EVENTS)));
    /* acknowledging everything leaves nothing to signal */
    wr(l, LANAI_REG_ISR, LANAI_ISR_HOST_W1C);
    g_assert_false(lanai_msix_fired(l, LANAI_MSIX_EVENTS));
    lanai_free(l);
}


/*
 * A guest gone mad: seeded random writes to every register, to SRAM
 * (firmware-private areas included) and to the doorbells, with the
 * firmware running and halted.  QEMU must stay up and the device usable.
 */
static void test_garbage_seed(uint32_t seed)
{
    Lanai *l = lanai_boot(NULL);
    GRand *rng = g_rand_new_with_seed(seed);
    uint64_t buf = guest_alloc(&l->qs->alloc, 4096);

    lanai_fw_start(l);
    for (int i = 0; i < 20000; i++) {
        uint32_t v = g_rand_int(rng);
        uint32_t what = g_rand_int_range(rng, 0, 10);

        if (what < 3) {
            uint32_t off = g_rand_int_range(rng, 0, LANAI_REGS_SIZE / 4) * 4;

            if (off == LANAI_REG_CPUC && g_rand_boolean(rng)) {
                v &= LANAI_CPUC_RUN;        /* mostly keep it running */
            }
            if (off == NVM_REG_EVQ_BASE_LO || off == NVM_REG_EVQ_BASE_HI ||
                off == NVM_REG_ST_ADDR_LO || off == NVM_REG_ST_ADDR_HI) {
                v = g_rand_boolean(rng) ? (uint32_t)buf : v;
            }
            wr(l, off, v);
        } else if (what < 7) {
            sram_wr(l, g_rand_int_range(rng, 0, 0x40000) * 4, v);
        } else {
            uint32_t off = g_rand_int_range(rng, 0, LANAI_DOORBELL_SIZE / 4);

            qpci_io_writel(l->dev, l->db, off * 4,
                           g_rand_boolean(rng) ? NVM_DB_RAW_TX : v);
        }
        if (i % 100 == 0) {
            qtest_clock_step(qts(l), 3 * 1000 * 1000);   /* timers too */
        }
    }
    /* alive, and a clean restart of the firmware works */
    g_assert_cmphex(rd(l, NVM_REG_ID), ==, NVM_ID_MAGIC);
    wr(l, LANAI_REG_CPUC, LANAI_CPUC_RESET);
    wr(l, LANAI_REG_ISR, LANAI_ISR_HOST_W1C);
    lanai_fw_start(l);
    g_assert_cmphex(rd(l, NVM_REG_FW_VERSION), !=, 0);
    g_rand_free(rng);
    lanai_free(l);
}

static void test_garbage(void)
{
    for (uint32_t seed = 1; seed <= 3; seed++) {
        test_garbage_seed(0x1a2a0 + seed);
    }
}

/* ---- the engines on their own, through the debug port ---- */

static void put_desc(Lanai *l, uint32_t off, uint32_t next, uint32_t len,
                     uint32_t lar, uint64_t host)
{
    struct lanai_dma_desc d = {
        .next = next, .len = len, .lar = lar,
        .eah = host >> 32, .eal = (uint32_t)host,
    };

    qpci_memwrite(l->dev, l->sram, off, &d, sizeof(d));
}

static struct lanai_dma_desc get_desc(Lanai *l, uint32_t off)
{
    struct lanai_dma_desc d;

    qpci_memread(l->dev, l->sram, off, &d, sizeof(d));
    return d;
}

static void hdma_run(Lanai *l, uint32_t desc)
{
    uint32_t chains = rd(l, NVM_REG_HDMA_STATUS) >> 16;

    wr(l, LANAI_REG_ISR, 0);
    wr(l, NVM_REG_HDMA_DESC, desc);
    g_assert_true(WAIT_FOR(rd(l, NVM_REG_HDMA_STATUS) >> 16 == chains + 1));
    g_assert_cmphex(rd(l, NVM_REG_HDMA_STATUS) & NVM_ENG_BUSY, ==, 0);
    g_assert_cmphex(rd(l, LANAI_REG_ISR) & LANAI_ISR_WAKE0, !=, 0);
}

static uint16_t ones_sum(const uint8_t *p, uint32_t n)
{
    uint32_t sum = 0;

    for (uint32_t i = 0; i < n; i += 2) {
        sum += (uint32_t)p[i] << 8 | (i + 1 < n ? p[i + 1] : 0);
    }
    while (sum >> 16) {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    return sum;
}

/* A chain of three descriptors, both directions, checked byte for byte. */
static void test_hdma_chain(void)
{
    Lanai *l = lanai_boot(NULL);
    uint64_t a = guest_alloc(&l->qs->alloc, 4096);
    uint64_t b = guest_alloc(&l->qs->alloc, 4096);
    uint64_t c = guest_alloc(&l->qs->alloc, 64);
    uint8_t pat[3000], got[3000], one;

    for (unsigned i = 0; i < sizeof(pat); i++) {
        pat[i] = (uint8_t)(i * 13 + 5);
    }
    qtest_memwrite(qts(l), a, pat, sizeof(pat));
    qtest_memset(qts(l), b, 0, sizeof(pat));
    qtest_writeb(qts(l), c, 0xa5);

    put_desc(l, 0x1000, 0x1020 | LANAI_DMA_E2L, sizeof(pat), 0x4001, a);
    put_desc(l, 0x1020, 0x1040 | LANAI_DMA_L2E, sizeof(pat), 0x4001, b);
    put_desc(l, 0x1040, LANAI_DMA_E2L | LANAI_DMA_TERMINAL | LANAI_DMA_WAKE,
             1, 0x5003, c);
    hdma_run(l, 0x1000);

    g_assert_cmpuint(get_desc(l, 0x1000).status, ==, NVM_DMA_ST_DONE);
    g_assert_cmpuint(get_desc(l, 0x1020).status, ==, NVM_DMA_ST_DONE);
    g_assert_cmpuint(get_desc(l, 0x1040).status, ==, NVM_DMA_ST_DONE);
    g_assert_cmphex(get_desc(l, 0x1000).csum[0], ==,
                    ones_sum(pat, sizeof(pat)));
    qtest_memread(qts(l), b, got, sizeof(got));
    g_assert_cmpmem(got, sizeof(got), pat, sizeof(pat));
    qpci_memread(l->dev, l->sram, 0x4001, got, sizeof(pat));
    g_assert_cmpmem(got, sizeof(pat), pat, sizeof(pat));
    qpci_memread(l->dev, l->sram, 0x5003, &one, 1);
    g_assert_cmphex(one, ==, 0xa5);
    g_assert_cmpuint(rd(l, NVM_REG_ERRORS), ==, 0);
    lanai_free(l);
}

/* A pattern no two 64-byte pieces of which look alike. */
static void guard_pattern(uint8_t *p, uint32_t n, uint32_t seed)
{
    for (uint32_t i = 0; i < n; i++) {
        p[i] = (uint8_t)((i + seed) * 0x9e3779b97f4a7c15ull >> 56);
    }
}

/* SRAM [off, off + n) and guest memory [a, a + 4096) as they were set. */
static void assert_untouched(Lanai *l, uint32_t off, uint32_t n,
                             const uint8_t *sram_want, uint64_t a,
                             const uint8_t *host_want)
{
    g_autofree uint8_t *got = g_malloc(n > 4096 ? n : 4096);

    qpci_memread(l->dev, l->sram, off, got, n);
    g_assert_cmpmem(got, n, sram_want, n);
    qtest_memread(qts(l), a, got, 4096);
    g_assert_cmpmem(got, 4096, host_want, 4096);
}

/* Chains a guest (or a buggy firmware) should not build. */
static void test_hdma_hostile(void)
{
    Lanai *l = lanai_boot(NULL);
    uint64_t a = guest_alloc(&l->qs->alloc, 4096);
    uint8_t host[4096], tail[32], mid[64];
    struct nvm_event ev;

    lanai_evq_setup(l);

    /* a loop: ends after 1024 descriptors with an error, WAKE0 set */
    put_desc(l, 0x1000, 0x1000 | LANAI_DMA_E2L, 16, 0x4000, a);
    hdma_run(l, 0x1000);
    ev = lanai_event_wait(l, NVM_EV_ERROR);
    g_assert_cmpuint(ev.data, ==, NVM_ERR_DMA_CHAIN);

    /* misaligned and out-of-SRAM descriptor addresses */
    hdma_run(l, 0x1004);
    ev = lanai_event_wait(l, NVM_EV_ERROR);
    g_assert_cmpuint(ev.data, ==, NVM_ERR_SRAM_RANGE);
    hdma_run(l, 0xfffffff8);
    ev = lanai_event_wait(l, NVM_EV_ERROR);
    g_assert_cmpuint(ev.data, ==, NVM_ERR_SRAM_RANGE);

    /*
     * From here on every refused transfer must leave its target alone:
     * the SRAM's last 32 bytes, SRAM 0x4000..+64 and the guest page a,
     * each holding a pattern the sources do not have.
     */
    guard_pattern(host, sizeof(host), 1);
    guard_pattern(tail, sizeof(tail), 5000);
    guard_pattern(mid, sizeof(mid), 9000);
    qtest_memwrite(qts(l), a, host, sizeof(host));
    qpci_memwrite(l->dev, l->sram, LANAI_SRAM_DEFAULT - 32, tail, sizeof(tail));
    qpci_memwrite(l->dev, l->sram, 0x4000, mid, sizeof(mid));

    /* an SRAM range past the end, and a huge length */
    put_desc(l, 0x1000, LANAI_DMA_E2L | LANAI_DMA_TERMINAL, 64,
             LANAI_SRAM_DEFAULT - 32, a);
    hdma_run(l, 0x1000);
    g_assert_cmpuint(get_desc(l, 0x1000).status, ==, NVM_DMA_ST_ERR_SRAM);
    assert_untouched(l, LANAI_SRAM_DEFAULT - 32, 32, tail, a, host);
    put_desc(l, 0x1000, LANAI_DMA_L2E | LANAI_DMA_TERMINAL, 0xfffffff0, 0, a);
    hdma_run(l, 0x1000);
    g_assert_cmpuint(get_desc(l, 0x1000).status, ==, NVM_DMA_ST_ERR_SRAM);
    assert_untouched(l, LANAI_SRAM_DEFAULT - 32, 32, tail, a, host);

    /* unmapped host memory, both directions: error status and event */
    put_desc(l, 0x1000, LANAI_DMA_E2L | LANAI_DMA_TERMINAL, 64, 0x4000,
             0x00007ffffffff000ull);
    hdma_run(l, 0x1000);
    g_assert_cmpuint(get_desc(l, 0x1000).status, ==, NVM_DMA_ST_ERR_HOST);
    assert_untouched(l, 0x4000, sizeof(mid), mid, a, host);
    put_desc(l, 0x1000, LANAI_DMA_L2E | LANAI_DMA_TERMINAL, 64, 0x4000,
             0xfffffffffffff000ull);
    hdma_run(l, 0x1000);
    g_assert_cmpuint(get_desc(l, 0x1000).status, ==, NVM_DMA_ST_ERR_HOST);
    assert_untouched(l, 0x4000, sizeof(mid), mid, a, host);
    /*
     * a read that starts in guest RAM (its last page) and runs past its
     * end: refused whole, not copied up to where it failed
     */
    put_desc(l, 0x1000, LANAI_DMA_E2L | LANAI_DMA_TERMINAL, 8192, 0x4000,
             0x8000000ull - 4096);
    hdma_run(l, 0x1000);
    g_assert_cmpuint(get_desc(l, 0x1000).status, ==, NVM_DMA_ST_ERR_HOST);
    assert_untouched(l, 0x4000, sizeof(mid), mid, a, host);
    do {
        ev = lanai_event_wait(l, NVM_EV_ERROR);
    } while (ev.data != NVM_ERR_HOST_DMA);

    /* the chain stops at the first error: the second stays pending */
    put_desc(l, 0x1000, 0x1020 | LANAI_DMA_E2L, 64, 0x4000, 0x10ull << 40);
    put_desc(l, 0x1020, LANAI_DMA_E2L | LANAI_DMA_TERMINAL, 64, 0x4000, a);
    hdma_run(l, 0x1000);
    g_assert_cmpuint(get_desc(l, 0x1020).status, ==, NVM_DMA_ST_PENDING);
    assert_untouched(l, 0x4000, sizeof(mid), mid, a, host);

    /* a zero length completes */
    put_desc(l, 0x1000, LANAI_DMA_E2L | LANAI_DMA_TERMINAL, 0, 0, a);
    hdma_run(l, 0x1000);
    g_assert_cmpuint(get_desc(l, 0x1000).status, ==, NVM_DMA_ST_DONE);

    /* the engines belong to the firmware while it runs */
    wr(l, LANAI_REG_CPUC, LANAI_CPUC_RUN);
    g_assert_true(WAIT_FOR(rd(l, NVM_REG_FW_STATE) == NVM_FW_READY));
    {
        uint32_t errs = rd(l, NVM_REG_ERRORS);

        wr(l, NVM_REG_HDMA_DESC, 0x1000);
        wr(l, NVM_REG_SEND_CTRL, 1);
        g_assert_cmpuint(rd(l, NVM_REG_ERRORS), ==, errs + 2);
    }
    g_assert_cmphex(rd(l, NVM_REG_ID), ==, NVM_ID_MAGIC);
    lanai_free(l);
}

static void link_pair(Lanai **a, Lanai **b);

#define SLOT_SIZE   4352

static void recv_start(Lanai *l, uint32_t ring, uint32_t slots)
{
    for (uint32_t i = 0; i < slots; i++) {
        sram_wr(l, ring + i * SLOT_SIZE, 0);
    }
    wr(l, NVM_REG_RECV_RING, ring);
    wr(l, NVM_REG_RECV_SLOTS, slots);
    wr(l, NVM_REG_RECV_SLOT_SIZE, SLOT_SIZE);
    wr(l, NVM_REG_RECV_CTRL, NVM_RECV_CTRL_START);
    g_assert_cmphex(rd(l, NVM_REG_RECV_CTRL) & NVM_ENG_BUSY, !=, 0);
}

static void send_frame(Lanai *l, uint32_t off, const uint8_t *f, uint32_t n)
{
    uint32_t sent = rd(l, NVM_REG_SEND_COUNT);

    qpci_memwrite(l->dev, l->sram, off, f, n);
    wr(l, NVM_REG_SEND_OFF, off);
    wr(l, NVM_REG_SEND_LEN, n);
    wr(l, NVM_REG_SEND_CTRL, 1);
    g_assert_true(WAIT_FOR(rd(l, NVM_REG_SEND_COUNT) == sent + 1));
}

static void check_slot(Lanai *l, uint32_t slot, const uint8_t *f, uint32_t n)
{
    uint8_t got[256];

    g_assert_cmpuint(sram_rd(l, slot), ==, 1);      /* FULL */
    g_assert_cmpuint(sram_rd(l, slot + 4), ==, n);
    qpci_memread(l->dev, l->sram, slot + 8, got, n);
    g_assert_cmpmem(got, n, f, n);
}

/* Send-wire and receive-wire engines alone, with back-pressure and CRC. */
static void test_wire_engines(void)
{
    Lanai *a, *b;
    uint8_t f[8][200];
    const uint32_t ring = 0x10000;

    for (int k = 0; k < 8; k++) {
        for (int i = 0; i < 200; i++) {
            f[k][i] = (uint8_t)(k * 31 + i);
        }
    }
    link_pair(&a, &b);
    recv_start(b, ring, 2);

    send_frame(a, 0x2000, f[0], 100);
    g_assert_true(WAIT_FOR(rd(b, NVM_REG_RECV_COUNT) == 1));
    check_slot(b, ring, f[0], 100);
    g_assert_cmphex(rd(b, LANAI_REG_ISR) & LANAI_ISR_RECV, !=, 0);

    /* fill the ring; further frames wait on the link, not dropped */
    for (int k = 1; k < 6; k++) {
        send_frame(a, 0x2000, f[k], 150 + k);
    }
    g_assert_true(WAIT_FOR(rd(b, NVM_REG_RECV_COUNT) == 2));
    g_usleep(100 * 1000);
    g_assert_cmpuint(rd(b, NVM_REG_RECV_COUNT), ==, 2);
    check_slot(b, ring + SLOT_SIZE, f[1], 151);
    for (int k = 2; k < 6; k++) {
        uint32_t slot = ring + (k % 2) * SLOT_SIZE;

        /* free the slot that will be filled next */
        sram_wr(b, slot, 0);
        wr(b, NVM_REG_RECV_CTRL, NVM_RECV_CTRL_RETRY);
        g_assert_true(WAIT_FOR(rd(b, NVM_REG_RECV_COUNT) == (uint32_t)k + 1));
        check_slot(b, slot, f[k], 150 + k);
    }
    g_assert_cmpuint(rd(b, NVM_REG_RECV_DROPS), ==, 0);

    /* a frame without its CRC is dropped and counted */
    sram_wr(b, ring, 0);
    sram_wr(b, ring + SLOT_SIZE, 0);
    wr(b, NVM_REG_RECV_CTRL, NVM_RECV_CTRL_START);
    wr(a, LANAI_REG_MYRINET, LANAI_MYRINET_NRES_EN);
    send_frame(a, 0x2000, f[6], 64);
    g_assert_true(WAIT_FOR(rd(b, NVM_REG_RECV_DROPS) == 1));
    g_assert_cmpuint(rd(b, NVM_REG_RECV_COUNT), ==, 6);

    /* a bad ring set-up is refused */
    wr(b, NVM_REG_RECV_RING, LANAI_SRAM_DEFAULT - 8);
    wr(b, NVM_REG_RECV_CTRL, NVM_RECV_CTRL_START);
    g_assert_cmphex(rd(b, NVM_REG_RECV_CTRL) & NVM_ENG_BUSY, ==, 0);
    lanai_free(b);
    lanai_free(a);
}

/* ---- two QEMU processes linked back to back ---- */

static void raw_post_rx(Lanai *l, const struct nvm_sram_layout *lay,
                        unsigned idx, uint64_t buf, uint32_t len)
{
    uint32_t d = lay->raw_rx_ring + idx * sizeof(struct nvm_raw_desc);

    sram_wr(l, d + 0, buf);
    sram_wr(l, d + 4, buf >> 32);
    sram_wr(l, d + 8, len);
    sram_wr(l, d + 12, NVM_RAW_OWN);
    qpci_io_writel(l->dev, l->db, 0, NVM_DB_RAW_RX);
}

static void raw_send(Lanai *l, const struct nvm_sram_layout *lay,
                     unsigned idx, uint64_t buf, uint32_t len)
{
    uint32_t d = lay->raw_tx_ring + idx * sizeof(struct nvm_raw_desc);

    sram_wr(l, d + 0, buf);
    sram_wr(l, d + 4, buf >> 32);
    sram_wr(l, d + 8, len);
    sram_wr(l, d + 16, 0);
    sram_wr(l, d + 12, NVM_RAW_OWN);  /* flags, route_len 0, status 0 */
    qpci_io_writel(l->dev, l->db, 0, NVM_DB_RAW_TX);
}

/*
 * The stream netdev reports its socket connected from the QEMU's main
 * loop, some time after the QEMU started: on a busy machine the link
 * register may still read down when the test first looks.
 */
static void link_wait_up(Lanai *l)
{
    g_assert_true(WAIT_FOR(rd(l, NVM_REG_LINK) == NVM_LINK_UP));
}

/*
 * link-socket (lanai-linksock.c) in place of the stream netdev: set by the
 * /lanai/linksock/ tests around the shared bodies.  The path is in a
 * directory of the test's own.
 */
static bool linksock_mode;
static char *linksock_dir;

static char *linksock_path(void)
{
    if (!linksock_dir) {
        linksock_dir = g_dir_make_tmp("lanai-test-XXXXXX", NULL);
        g_assert(linksock_dir);
    }
    return g_build_filename(linksock_dir, "link.sock", NULL);
}

/* Two QEMUs joined by link-socket: a listens, b connects. */
static void link_pair_sock(Lanai **a, Lanai **b, const char *extra)
{
    g_autofree char *path = linksock_path();
    g_autofree char *ea = NULL, *eb = NULL;

    unlink(path);
    ea = g_strdup_printf(",node-id=1%s,link-socket=%s,link-listen=on",
                         extra, path);
    eb = g_strdup_printf(",node-id=2%s,link-socket=%s", extra, path);
    *a = lanai_boot(ea);    /* listening once realized */
    *b = lanai_boot(eb);
    link_wait_up(*a);
    link_wait_up(*b);
    unlink(path);
}

/* Two QEMUs linked back to back; extra: more -device lanai options. */
static void link_pair_with(Lanai **a, Lanai **b, const char *extra)
{
    int sv[2];
    g_autofree char *ea = NULL, *eb = NULL;

    if (linksock_mode) {
        link_pair_sock(a, b, extra);
        return;
    }
    g_assert_cmpint(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), ==, 0);
    ea = g_strdup_printf(",netdev=l0,node-id=1%s -netdev stream,id=l0,"
                         "addr.type=fd,addr.str=%d", extra, sv[0]);
    eb = g_strdup_printf(",netdev=l0,node-id=2%s -netdev stream,id=l0,"
                         "addr.type=fd,addr.str=%d", extra, sv[1]);
    /* each QEMU must inherit only its own end, or it keeps the link alive */
    fcntl(sv[1], F_SETFD, FD_CLOEXEC);
    *a = lanai_boot(ea);
    fcntl(sv[1], F_SETFD, 0);
    fcntl(sv[0], F_SETFD, FD_CLOEXEC);
    *b = lanai_boot(eb);
    close(sv[0]);
    close(sv[1]);
    link_wait_up(*a);
    link_wait_up(*b);
}

static void link_pair(Lanai **a, Lanai **b)
{
    link_pair_with(a, b, "");
}

/*
 * Two linked QEMUs (extra: more -device lanai options), firmware running
 * on both, a 4 KiB buffer on each.
 */
static void raw_pair_up_with(Lanai **a, Lanai **b, struct nvm_sram_layout *la,
                             struct nvm_sram_layout *lb, uint64_t *tx,
                             uint64_t *rx, const char *extra)
{
    link_pair_with(a, b, extra);
    lanai_fw_start(*a);
    lanai_fw_start(*b);
    read_layout(*a, la);
    read_layout(*b, lb);
    *tx = guest_alloc(&(*a)->qs->alloc, 4096);
    *rx = guest_alloc(&(*b)->qs->alloc, 4096);
}

static void raw_pair_up(Lanai **a, Lanai **b, struct nvm_sram_layout *la,
                        struct nvm_sram_layout *lb, uint64_t *tx, uint64_t *rx)
{
    raw_pair_up_with(a, b, la, lb, tx, rx, "");
}

static void test_raw_frames(void)
{
    Lanai *a, *b;
    struct nvm_sram_layout la, lb;
    const uint32_t sizes[] = { 1, 2, 63, 64, 1000, 4095, 4096 };
    uint64_t tx, rx;
    g_autofree uint8_t *pat = g_malloc(4096);
    g_autofree uint8_t *got = g_malloc(4096);
    struct nvm_event ev;

    link_pair(&a, &b);
    g_assert_cmphex(rd(a, NVM_REG_LINK), ==, NVM_LINK_UP);
    g_assert_cmphex(rd(b, NVM_REG_LINK), ==, NVM_LINK_UP);
    lanai_fw_start(a);
    lanai_fw_start(b);
    read_layout(a, &la);
    read_layout(b, &lb);
    tx = guest_alloc(&a->qs->alloc, 4096);
    rx = guest_alloc(&b->qs->alloc, 4096);

    for (unsigned i = 0; i < G_N_ELEMENTS(sizes); i++) {
        uint32_t n = sizes[i];
        uint32_t d = lb.raw_rx_ring + (i % lb.raw_rx_len) *
                     sizeof(struct nvm_raw_desc);

        for (uint32_t k = 0; k < n; k++) {
            /* (k >> 8): no 256-byte period within a frame */
            pat[k] = (uint8_t)(k * 7 + i * 131 + (k >> 8) * 13);
        }
        qtest_memwrite(qts(a), tx, pat, n);
        qtest_memset(qts(b), rx, 0, 4096);
        raw_post_rx(b, &lb, i % lb.raw_rx_len, rx, 4096);
        raw_send(a, &la, i % la.raw_tx_len, tx, n);

        ev = lanai_event_wait(a, NVM_EV_RAW_TX);
        g_assert_cmpuint(ev.data, ==, i % la.raw_tx_len);
        g_assert_cmpuint(ev.arg, ==, NVM_RAW_OK);
        ev = lanai_event_wait(b, NVM_EV_RAW_RX);
        g_assert_cmpuint(ev.data, ==, i % lb.raw_rx_len);
        g_assert_cmpuint(ev.arg, ==, (1ull << 32) | n);  /* from node 1 */
        g_assert_cmpuint(sram_rd(b, d + 8), ==, n);
        g_assert_cmphex(sram_rd(b, d + 12) & NVM_RAW_OWN, ==, 0);
        qtest_memread(qts(b), rx, got, 4096);
        g_assert_cmpmem(got, n, pat, n);
        for (uint32_t k = n; k < 4096; k++) {
            g_assert_cmphex(got[k], ==, 0);   /* nothing past the frame */
        }
    }
    lanai_free(b);
    lanai_free(a);
}

/* A frame with no host buffer waits in SRAM; a bad tx address fails. */
static void test_raw_errors(void)
{
    Lanai *a, *b;
    struct nvm_sram_layout la, lb;
    uint64_t tx, rx;
    struct nvm_event ev;
    uint8_t got[8];

    raw_pair_up(&a, &b, &la, &lb, &tx, &rx);
    qtest_memwrite(qts(a), tx, "netvm!!", 8);

    /* unmapped host address: error completion and an error event */
    raw_send(a, &la, 0, 0x00007ffffffff000ull, 64);
    ev = lanai_event_wait(a, NVM_EV_ERROR);
    g_assert_cmpuint(ev.data, ==, NVM_ERR_HOST_DMA);
    ev = lanai_event_wait(a, NVM_EV_RAW_TX);
    g_assert_cmpuint(ev.arg, ==, NVM_RAW_ERR_DMA);
    /* zero and oversized lengths */
    raw_send(a, &la, 1, tx, 0);
    ev = lanai_event_wait(a, NVM_EV_RAW_TX);
    g_assert_cmpuint(ev.arg, ==, NVM_RAW_ERR_LEN);
    raw_send(a, &la, 2, tx, 4097);
    ev = lanai_event_wait(a, NVM_EV_RAW_TX);
    g_assert_cmpuint(ev.arg, ==, NVM_RAW_ERR_LEN);

    /* sent before the receiver posted a buffer: it waits, then arrives */
    raw_send(a, &la, 3, tx, 8);
    ev = lanai_event_wait(a, NVM_EV_RAW_TX);
    g_assert_cmpuint(ev.arg, ==, NVM_RAW_OK);
    g_assert_false(lanai_event_next(b, &ev) && ev.type == NVM_EV_RAW_RX);
    raw_post_rx(b, &lb, 0, rx, 4096);
    ev = lanai_event_wait(b, NVM_EV_RAW_RX);
    g_assert_cmpuint(ev.arg & 0xffffffff, ==, 8);
    qtest_memread(qts(b), rx, got, 8);
    g_assert_cmpmem(got, 8, "netvm!!", 8);

    g_assert_cmphex(rd(a, NVM_REG_ID), ==, NVM_ID_MAGIC);
    lanai_free(b);
    lanai_free(a);
}

/*
 * A doorbell serves an idle firmware in the write itself (doorbell-inline,
 * the default) or leaves it to the bottom half (doorbell-inline=off): the
 * same outcomes either way, frames byte for byte, and DMA aimed at the
 * device's own registers is refused by the re-entrancy guard in both (in
 * the write, the MMIO access holds it; in the bottom half, the BH's).
 */
static void doorbell_mode(const char *extra)
{
    Lanai *a, *b;
    struct nvm_sram_layout la, lb;
    uint64_t tx, rx;
    struct nvm_event ev;
    uint8_t got[64], pat[64];

    raw_pair_up_with(&a, &b, &la, &lb, &tx, &rx, extra);
    for (unsigned i = 0; i < sizeof(pat); i++) {
        pat[i] = 0xa5 ^ i;
    }
    qtest_memwrite(qts(a), tx, pat, sizeof(pat));
    raw_post_rx(b, &lb, 0, rx, 4096);

    raw_send(a, &la, 0, a->regs.addr, 64);
    ev = lanai_event_wait(a, NVM_EV_ERROR);
    g_assert_cmpuint(ev.data, ==, NVM_ERR_HOST_DMA);
    ev = lanai_event_wait(a, NVM_EV_RAW_TX);
    g_assert_cmpuint(ev.arg, ==, NVM_RAW_ERR_DMA);

    raw_send(a, &la, 1, tx, sizeof(pat));
    ev = lanai_event_wait(a, NVM_EV_RAW_TX);
    g_assert_cmpuint(ev.arg, ==, NVM_RAW_OK);
    ev = lanai_event_wait(b, NVM_EV_RAW_RX);
    g_assert_cmpuint(ev.arg & 0xffffffff, ==, sizeof(pat));
    qtest_memread(qts(b), rx, got, sizeof(got));
    g_assert_cmpmem(got, sizeof(got), pat, sizeof(pat));

    g_assert_cmphex(rd(a, NVM_REG_ID), ==, NVM_ID_MAGIC);
    lanai_free(b);
    lanai_free(a);
}

static void test_doorbell_inline(void)
{
    doorbell_mode("");
}

/*
 * yield-wait-us: a yield waits (at most that long, without the BQL) for
 * the device's next write to guest memory; nothing here writes any, so
 * each read returns after the bound, reads 0 and is counted, no error.
 */
static void test_doorbell_yield_wait(void)
{
    Lanai *l = lanai_boot(",yield-wait-us=2000");

    for (int i = 0; i < 3; i++) {
        g_assert_cmphex(qpci_io_readl(l->dev, l->db,
                                      i * LANAI_DOORBELL_PAGE +
                                      LANAI_DB_YIELD), ==, 0);
    }
    g_assert_cmpuint(rd(l, NVM_REG_DB_YIELDS), ==, 3);
    g_assert_cmpuint(rd(l, NVM_REG_ERRORS), ==, 0);
    g_assert_cmphex(rd(l, NVM_REG_DB_STATUS), ==, 0);
    lanai_free(l);
}

static void test_doorbell_bh(void)
{
    doorbell_mode(",doorbell-inline=off");
}

/*
 * The link's far end goes away: a LINK event (down), and the raw path
 * refuses to send.
 */
static void test_link_event(void)
{
    Lanai *a, *b;
    struct nvm_sram_layout la;
    struct nvm_event ev;
    uint64_t tx;

    link_pair(&a, &b);
    lanai_fw_start(a);
    read_layout(a, &la);
    tx = guest_alloc(&a->qs->alloc, 64);
    g_assert_cmphex(rd(a, NVM_REG_LINK), ==, NVM_LINK_UP);
    /* the link watch runs on the virtual clock: let it see the link up */
    qtest_clock_step(qts(a), 50 * 1000 * 1000);
    do {
        ev = lanai_event_wait(a, NVM_EV_LINK);
    } while (ev.data != NVM_LINK_UP);
    lanai_free(b);
    /* the link is watched on the virtual clock */
    for (int i = 0; i < 100 && (rd(a, NVM_REG_LINK) & NVM_LINK_UP); i++) {
        qtest_clock_step(qts(a), 20 * 1000 * 1000);
    }
    g_assert_cmphex(rd(a, NVM_REG_LINK), ==, 0);
    qtest_clock_step(qts(a), 50 * 1000 * 1000);
    ev = lanai_event_wait(a, NVM_EV_LINK);
    g_assert_cmpuint(ev.data, ==, 0);
    g_assert_cmphex(rd(a, LANAI_REG_ISR) & LANAI_ISR_LINK_DOWN, !=, 0);
    raw_send(a, &la, 0, tx, 64);
    ev = lanai_event_wait(a, NVM_EV_RAW_TX);
    g_assert_cmpuint(ev.arg, ==, NVM_RAW_ERR_LINK);
    lanai_free(a);
}

/* Reset the receiver in the middle of a stream: both stay usable. */
static void test_reset_mid_transfer(void)
{
    Lanai *a, *b;
    struct nvm_sram_layout la, lb;
    uint64_t tx, rx;
    struct nvm_event ev;
    uint8_t got[16];

    raw_pair_up(&a, &b, &la, &lb, &tx, &rx);
    qtest_memwrite(qts(a), tx, "after the reset", 16);

    /* a full tx ring toward a receiver that posts nothing */
    for (unsigned i = 0; i < la.raw_tx_len; i++) {
        raw_send(a, &la, i, tx, 1024);
    }
    g_assert_true(WAIT_FOR(rd(b, NVM_REG_RECV_COUNT) >= 1));
    wr(b, LANAI_REG_CPUC, LANAI_CPUC_RESET);
    g_assert_cmpuint(rd(b, NVM_REG_FW_STATE), ==, NVM_FW_HALTED);
    for (unsigned i = 0; i < la.raw_tx_len; i++) {
        ev = lanai_event_wait(a, NVM_EV_RAW_TX);
        g_assert_cmpuint(ev.arg, ==, NVM_RAW_OK);
    }

    /* QEMU's own reset of the sender, mid-stream */
    qtest_qmp_assert_success(qts(a), "{'execute': 'system_reset'}");
    /* PCI reset too: the BARs and bus mastering must be set up again */
    qpci_device_enable(a->dev);
    a->regs = qpci_iomap(a->dev, LANAI_BAR_REGS, NULL);
    a->sram = qpci_iomap(a->dev, LANAI_BAR_SRAM, NULL);
    a->db = qpci_iomap(a->dev, LANAI_BAR_DOORBELL, NULL);
    g_assert_cmpuint(rd(a, NVM_REG_FW_STATE), ==, NVM_FW_HALTED);
    g_assert_cmpuint(rd(a, NVM_REG_EVQ_LEN), ==, 0);

    /* both come back and carry a frame end to end */
    lanai_fw_start(b);
    lanai_fw_start(a);
    for (unsigned i = 0; i < lb.raw_rx_len; i++) {
        raw_post_rx(b, &lb, i, rx, 4096);
    }
    /* frames sent before the reset may still be queued on the link */
    for (unsigned i = 0; ; i++) {
        qtest_memset(qts(b), rx, 0, 16);
        raw_send(a, &la, i % la.raw_tx_len, tx, 16);
        lanai_event_wait(a, NVM_EV_RAW_TX);
        ev = lanai_event_wait(b, NVM_EV_RAW_RX);
        raw_post_rx(b, &lb, ev.data, rx, 4096);
        qtest_memread(qts(b), rx, got, 16);
        if ((ev.arg & 0xffffffff) == 16) {
            break;
        }
        g_assert_cmpuint(i, <, 64);
    }
    g_assert_cmpmem(got, 16, "after the reset", 16);
    lanai_free(b);
    lanai_free(a);
}

/* SRAM offset of the firmware counter called @name (fw_counters.h). */
static uint32_t fw_counter_off(const struct nvm_sram_layout *lay,
                               const char *name)
{
    static const char *const names[] = {
        NVM_FW_COUNTERS(NVM_FW_COUNTER_NAME)
    };

    for (unsigned i = 0; i < G_N_ELEMENTS(names); i++) {
        if (!strcmp(names[i], name)) {
            return lay->counters + 4 * i;
        }
    }
    g_assert_not_reached();
}

/* The device's rx-bad-src counter, read over QMP as the host does. */
static uint64_t bad_src_count(Lanai *l)
{
    QDict *r = qtest_qmp(qts(l), "{ 'execute': 'qom-get', 'arguments': { "
                         "'path': '/machine/peripheral/nic', "
                         "'property': 'rx-bad-src' } }");
    uint64_t v;

    g_assert(qdict_haskey(r, "return"));
    v = qdict_get_int(r, "return");
    qobject_unref(r);
    return v;
}

/*
 * Sender authentication on a back-to-back link (lanai-linkauth.c): both
 * are told peer-node=2, right for node 1 (a), wrong for node 2 (b).  a's
 * frames reach b's device and are dropped there, counted, never seen by
 * b's firmware; b's frames reach a.
 */
static void test_link_peer_auth(void)
{
    Lanai *a, *b;
    struct nvm_sram_layout la, lb;
    uint64_t tx, rx, atx, arx;
    struct nvm_event ev;
    uint32_t d;

    raw_pair_up_with(&a, &b, &la, &lb, &tx, &rx, ",peer-node=2,id=nic");
    raw_post_rx(b, &lb, 0, rx, 4096);
    qtest_memwrite(qts(a), tx, "forged?", 7);
    raw_send(a, &la, 0, tx, 7);
    lanai_event_wait(a, NVM_EV_RAW_TX);
    g_assert_true(WAIT_FOR(bad_src_count(b) == 1));
    g_assert_cmpuint(bad_src_count(a), ==, 0);

    /* the other way round the source is the configured peer */
    arx = guest_alloc(&a->qs->alloc, 4096);
    atx = guest_alloc(&b->qs->alloc, 4096);
    raw_post_rx(a, &la, 0, arx, 4096);
    qtest_memwrite(qts(b), atx, "from node 2", 11);
    raw_send(b, &lb, 0, atx, 11);
    ev = lanai_event_wait(a, NVM_EV_RAW_RX);
    g_assert_cmpuint(ev.arg, ==, (2ull << 32) | 11);
    g_assert_cmpuint(bad_src_count(a), ==, 0);
    /* b's buffer is still posted and untouched: nothing got through */
    g_assert_cmphex(sram_rd(b, lb.raw_rx_ring + 12) & NVM_RAW_OWN, ==,
                    NVM_RAW_OWN);
    g_assert_cmpuint(bad_src_count(b), ==, 1);

    /*
     * A route byte left in front (a mapper's probe on a back-to-back
     * link): the source is read after it, so the frame reaches the
     * firmware, which counts it misrouted; nothing is counted as forged.
     */
    d = lb.raw_tx_ring + sizeof(struct nvm_raw_desc);   /* b's next one */
    sram_wr(b, d + 0, atx);
    sram_wr(b, d + 4, atx >> 32);
    sram_wr(b, d + 8, 11);
    sram_wr(b, d + 16, 0x81);                           /* route[0] */
    sram_wr(b, d + 12, NVM_RAW_OWN | 1u << 16);         /* route_len 1 */
    qpci_io_writel(b->dev, b->db, 0, NVM_DB_RAW_TX);
    lanai_event_wait(b, NVM_EV_RAW_TX);
    g_assert_true(WAIT_FOR(sram_rd(a, fw_counter_off(&la, "rx_misrouted"))
                           == 1));
    g_assert_cmpuint(bad_src_count(a), ==, 0);
    lanai_free(b);
    lanai_free(a);
}

/* ---- engine state changed under a running engine (issue 14) ---- */

/* The device's link-socket connects to this test, which listens. */
static Lanai *lanai_boot_wired_sock(int *peer, const char *extra)
{
    g_autofree char *path = linksock_path();
    g_autofree char *opts = NULL;
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    int lfd = socket(AF_UNIX, SOCK_STREAM, 0);
    Lanai *l;

    g_assert_cmpint(lfd, >=, 0);
    g_assert_cmpuint(strlen(path), <, sizeof(sa.sun_path));
    strcpy(sa.sun_path, path);
    unlink(path);
    g_assert_cmpint(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), ==, 0);
    g_assert_cmpint(listen(lfd, 1), ==, 0);
    opts = g_strdup_printf(",node-id=1%s,link-socket=%s", extra, path);
    l = lanai_boot(opts);
    *peer = accept(lfd, NULL, NULL);
    g_assert_cmpint(*peer, >=, 0);
    close(lfd);
    unlink(path);
    link_wait_up(l);
    return l;
}

/*
 * One QEMU whose link's far end is this test: frames written to *peer
 * (stream netdev framing: a 4-byte big-endian length, then the frame)
 * arrive at the device.
 */
static Lanai *lanai_boot_wired(int *peer, const char *extra)
{
    int sv[2];
    g_autofree char *opts = NULL;
    Lanai *l;

    if (linksock_mode) {
        return lanai_boot_wired_sock(peer, extra);
    }
    g_assert_cmpint(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), ==, 0);
    fcntl(sv[0], F_SETFD, FD_CLOEXEC);
    opts = g_strdup_printf(",netdev=l0,node-id=1%s -netdev stream,id=l0,"
                           "addr.type=fd,addr.str=%d", extra, sv[1]);
    l = lanai_boot(opts);
    close(sv[1]);
    *peer = sv[0];
    link_wait_up(l);
    return l;
}

/*
 * One QEMU whose link-socket's far end is this test (lanai_boot_wired
 * over link-socket), CRC off: frames go as the test writes them.
 */
static Lanai *lanai_boot_linksock(int *peer, const char *extra)
{
    Lanai *l;

    linksock_mode = true;
    l = lanai_boot_wired(peer, extra);
    linksock_mode = false;
    wr(l, LANAI_REG_MYRINET, LANAI_MYRINET_NRES_EN);
    return l;
}

static void peer_send(int peer, const uint8_t *f, uint32_t n)
{
    uint8_t be[4] = { n >> 24, n >> 16, n >> 8, n };

    g_assert_cmpint(write(peer, be, 4), ==, 4);
    g_assert_cmpint(write(peer, f, n), ==, n);
}

static void sram_fill(Lanai *l, uint32_t off, uint8_t v, uint32_t n)
{
    g_autofree uint8_t *buf = g_malloc(n);

    memset(buf, v, n);
    qpci_memwrite(l->dev, l->sram, off, buf, n);
}

static void sram_assert_fill(Lanai *l, uint32_t off, uint8_t v, uint32_t n)
{
    g_autofree uint8_t *buf = g_malloc(n);

    qpci_memread(l->dev, l->sram, off, buf, n);
    for (uint32_t i = 0; i < n; i++) {
        if (buf[i] != v) {
            g_error("SRAM 0x%x is 0x%02x, not 0x%02x", off + i, buf[i], v);
        }
    }
}

/*
 * The receive engine is on, then RECV_RING is moved past SRAM: the
 * next look at the ring read outside SRAM (SIGSEGV).  Now the engine
 * checks its ring at every use and stops.
 */
static void test_recv_ring_moved(void)
{
    Lanai *l = lanai_boot(NULL);
    uint32_t errs;

    recv_start(l, 0x10000, 2);
    errs = rd(l, NVM_REG_ERRORS);
    wr(l, NVM_REG_RECV_RING, 0xfffffff0);
    wr(l, NVM_REG_RECV_CTRL, NVM_RECV_CTRL_RETRY);
    g_assert_cmpuint(rd(l, NVM_REG_ERRORS), ==, errs + 1);
    g_assert_cmphex(rd(l, NVM_REG_RECV_CTRL) & NVM_ENG_BUSY, ==, 0);
    g_assert_cmphex(rd(l, NVM_REG_ID), ==, NVM_ID_MAGIC);
    lanai_free(l);
}

/*
 * Receive ring changed while on, then a frame from the peer: the ring
 * must not be used.  slots: the new RECV_SLOTS, ring/size: the new
 * RECV_RING and RECV_SLOT_SIZE.  Checks that SRAM where the frame would
 * have gone (the old slot, the end of SRAM) is unchanged.
 */
static void recv_changed_then_frame(uint32_t ring, uint32_t slots,
                                    uint32_t size)
{
    int peer;
    Lanai *l = lanai_boot_wired(&peer, "");
    const uint32_t old = 0x10000, tail = LANAI_SRAM_DEFAULT - 0x2000;
    uint8_t f[200];
    uint32_t errs;

    for (unsigned i = 0; i < sizeof(f); i++) {
        f[i] = 0x80 ^ i;
    }
    wr(l, LANAI_REG_MYRINET, LANAI_MYRINET_NRES_EN);     /* no CRC */
    recv_start(l, old, 2);
    sram_fill(l, old + 8, 0xee, 2 * SLOT_SIZE - 8);
    sram_fill(l, tail, 0, 0x2000);     /* slot states there read EMPTY */
    errs = rd(l, NVM_REG_ERRORS);
    wr(l, NVM_REG_RECV_RING, ring);
    wr(l, NVM_REG_RECV_SLOTS, slots);
    wr(l, NVM_REG_RECV_SLOT_SIZE, size);
    peer_send(peer, f, sizeof(f));
    g_assert_true(WAIT_FOR(rd(l, NVM_REG_ERRORS) == errs + 1));
    g_assert_cmphex(rd(l, NVM_REG_RECV_CTRL) & NVM_ENG_BUSY, ==, 0);
    g_assert_cmpuint(rd(l, NVM_REG_RECV_COUNT), ==, 0);
    g_assert_cmpuint(sram_rd(l, old), ==, 0);            /* still EMPTY */
    sram_assert_fill(l, old + 8, 0xee, 2 * SLOT_SIZE - 8);
    sram_assert_fill(l, tail, 0, 0x2000);
    g_assert_cmphex(rd(l, NVM_REG_ID), ==, NVM_ID_MAGIC);
    close(peer);
    lanai_free(l);
}

/* Reads exactly n bytes from the peer's end. */
static void peer_read(int peer, uint8_t *buf, size_t n)
{
    while (n) {
        ssize_t k = read(peer, buf, n);

        g_assert_cmpint(k, >, 0);
        buf += k;
        n -= k;
    }
}

/*
 * link-socket against a peer that is this test: a frame longer than the
 * engine takes is skipped whole and counted, the stream stays in step;
 * a full ring stops the reading, so the frame after it waits, not
 * dropped, until a slot is freed; a frame the device sends arrives with
 * the stream framing; the peer leaving takes the link down.
 */
static void test_linksock_wire(void)
{
    const uint32_t ring = 0x10000, big = NVM_FRAME_MAX + NVM_PKT_CRC_LEN + 1;
    g_autofree uint8_t *huge = g_malloc0(big);
    uint8_t f[3][100], out[100], got[4 + sizeof(out)];
    int peer;
    Lanai *l;

    linksock_mode = true;
    l = lanai_boot_wired(&peer, "");
    linksock_mode = false;
    for (unsigned k = 0; k < 3; k++) {
        for (unsigned i = 0; i < sizeof(f[k]); i++) {
            f[k][i] = (uint8_t)(i * 5 + k * 77 + 1);
        }
    }
    wr(l, LANAI_REG_MYRINET, LANAI_MYRINET_NRES_EN);     /* no CRC */
    recv_start(l, ring, 2);
    peer_send(peer, huge, big);
    for (unsigned k = 0; k < 3; k++) {
        peer_send(peer, f[k], sizeof(f[k]));
    }
    g_assert_true(WAIT_FOR(rd(l, NVM_REG_RECV_COUNT) == 2));
    g_assert_cmpuint(rd(l, NVM_REG_RECV_DROPS), ==, 1);
    for (unsigned k = 0; k < 2; k++) {
        uint32_t slot = ring + k * SLOT_SIZE;
        uint8_t data[sizeof(f[k])];

        g_assert_cmpuint(sram_rd(l, slot), !=, 0);           /* FULL */
        g_assert_cmpuint(sram_rd(l, slot + 4), ==, sizeof(f[k]));
        qpci_memread(l->dev, l->sram, slot + 8, data, sizeof(data));
        g_assert_cmpmem(data, sizeof(data), f[k], sizeof(f[k]));
    }
    /* the ring is full: the third frame waits in the stream */
    g_assert_cmpuint(rd(l, NVM_REG_RECV_COUNT), ==, 2);
    sram_fill(l, ring + 8, 0, sizeof(f[0]));
    sram_wr(l, ring, 0);                                     /* EMPTY */
    wr(l, NVM_REG_RECV_CTRL, NVM_RECV_CTRL_RETRY);
    g_assert_true(WAIT_FOR(rd(l, NVM_REG_RECV_COUNT) == 3));
    g_assert_cmpuint(sram_rd(l, ring + 4), ==, sizeof(f[2]));
    {
        uint8_t data[sizeof(f[2])];

        qpci_memread(l->dev, l->sram, ring + 8, data, sizeof(data));
        g_assert_cmpmem(data, sizeof(data), f[2], sizeof(f[2]));
    }
    g_assert_cmpuint(rd(l, NVM_REG_RECV_DROPS), ==, 1);

    for (unsigned i = 0; i < sizeof(out); i++) {
        out[i] = (uint8_t)(0xa5 ^ i);
    }
    send_frame(l, 0x2000, out, sizeof(out));
    peer_read(peer, got, sizeof(got));
    g_assert_cmpuint((uint32_t)got[0] << 24 | got[1] << 16 | got[2] << 8 |
                     got[3], ==, sizeof(out));
    g_assert_cmpmem(got + 4, sizeof(out), out, sizeof(out));

    close(peer);
    g_assert_true(WAIT_FOR(rd(l, NVM_REG_LINK) == 0));
    g_assert_cmphex(rd(l, NVM_REG_ID), ==, NVM_ID_MAGIC);
    lanai_free(l);
}

/*
 * link-inject (./netvm inject's FIFO, read by the link thread): its
 * frames reach the ring as the link's do, and writers may come and go.
 */
static void test_linksock_inject(void)
{
    const uint32_t ring = 0x10000;
    g_autofree char *sock = linksock_path();
    g_autofree char *fifo = g_build_filename(linksock_dir, "inject", NULL);
    g_autofree char *extra = g_strdup_printf(",link-inject=%s", fifo);
    uint8_t f[2][64], data[64];
    int peer, w;
    Lanai *l;

    unlink(fifo);
    g_assert_cmpint(mkfifo(fifo, 0600), ==, 0);
    l = lanai_boot_linksock(&peer, extra);
    recv_start(l, ring, 2);
    for (unsigned k = 0; k < 2; k++) {
        for (unsigned i = 0; i < sizeof(f[k]); i++) {
            f[k][i] = (uint8_t)(i * 3 + k * 101 + 7);
        }
        /* QEMU holds the FIFO open: this open does not wait */
        w = open(fifo, O_WRONLY);
        g_assert_cmpint(w, >=, 0);
        peer_send(w, f[k], sizeof(f[k]));
        close(w);
        g_assert_true(WAIT_FOR(rd(l, NVM_REG_RECV_COUNT) == k + 1));
        g_assert_cmpuint(sram_rd(l, ring + k * SLOT_SIZE + 4), ==,
                         sizeof(f[k]));
        qpci_memread(l->dev, l->sram, ring + k * SLOT_SIZE + 8, data,
                     sizeof(data));
        g_assert_cmpmem(data, sizeof(data), f[k], sizeof(f[k]));
    }
    close(peer);
    lanai_free(l);
    unlink(fifo);
}

/* A listening unix socket of the test's at path. */
static int test_listen(const char *path)
{
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    int lfd = socket(AF_UNIX, SOCK_STREAM, 0);

    g_assert_cmpint(lfd, >=, 0);
    g_assert_cmpuint(strlen(path), <, sizeof(sa.sun_path));
    strcpy(sa.sun_path, path);
    unlink(path);
    g_assert_cmpint(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), ==, 0);
    g_assert_cmpint(listen(lfd, 1), ==, 0);
    return lfd;
}

static void fill_pattern(uint8_t *f, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++) {
        f[i] = (uint8_t)(i * 7 + seed * 131 + (i >> 8) * 13 + 3);
    }
}

static void check_ring_slot(Lanai *l, uint32_t slot, const uint8_t *f,
                            uint32_t n)
{
    g_autofree uint8_t *data = g_malloc(n);

    g_assert_cmpuint(sram_rd(l, slot), !=, 0);               /* FULL */
    g_assert_cmpuint(sram_rd(l, slot + 4), ==, n);
    qpci_memread(l->dev, l->sram, slot + 8, data, n);
    g_assert_cmpmem(data, n, f, n);
}

/*
 * The VM stopped: a frame that arrives is not taken, and the peer
 * leaving changes nothing the device shows (a save then stores one
 * state); each happens when it runs again.
 */
static void test_linksock_stopped(void)
{
    const uint32_t ring = 0x10000;
    uint8_t f[120];
    int peer;
    Lanai *l;

    fill_pattern(f, sizeof(f), 1);
    l = lanai_boot_linksock(&peer, "");
    recv_start(l, ring, 2);
    qtest_qmp_assert_success(qts(l), "{'execute': 'stop'}");
    peer_send(peer, f, sizeof(f));
    g_usleep(200 * 1000);
    g_assert_cmpuint(rd(l, NVM_REG_RECV_COUNT), ==, 0);
    qtest_qmp_assert_success(qts(l), "{'execute': 'cont'}");
    g_assert_true(WAIT_FOR(rd(l, NVM_REG_RECV_COUNT) == 1));
    check_ring_slot(l, ring, f, sizeof(f));

    qtest_qmp_assert_success(qts(l), "{'execute': 'stop'}");
    close(peer);
    g_usleep(300 * 1000);
    g_assert_cmphex(rd(l, NVM_REG_LINK), ==, NVM_LINK_UP);
    qtest_qmp_assert_success(qts(l), "{'execute': 'cont'}");
    g_assert_true(WAIT_FOR(rd(l, NVM_REG_LINK) == 0));
    g_assert_cmphex(rd(l, NVM_REG_ID), ==, NVM_ID_MAGIC);
    lanai_free(l);
}

/*
 * The ring full, a frame waiting for it, and the peer leaves: the link
 * goes down then, not once a slot is freed.
 */
static void test_linksock_gone_while_full(void)
{
    const uint32_t ring = 0x10000;
    uint8_t f[80];
    int peer;
    Lanai *l;

    fill_pattern(f, sizeof(f), 7);
    l = lanai_boot_linksock(&peer, "");
    recv_start(l, ring, 1);
    peer_send(peer, f, sizeof(f));
    g_assert_true(WAIT_FOR(rd(l, NVM_REG_RECV_COUNT) == 1));
    peer_send(peer, f, sizeof(f));      /* waits: the one slot is full */
    g_usleep(100 * 1000);
    close(peer);
    g_assert_true(WAIT_FOR(rd(l, NVM_REG_LINK) == 0));
    g_assert_cmpuint(rd(l, NVM_REG_RECV_COUNT), ==, 1);
    check_ring_slot(l, ring, f, sizeof(f));
    lanai_free(l);
}

/*
 * The peer leaves (and its listener with it); a new one listens on the
 * same path: the device connects again by itself, and frames pass both
 * ways, byte for byte.
 */
static void test_linksock_reconnect(void)
{
    const uint32_t ring = 0x10000;
    g_autofree char *path = linksock_path();
    g_autofree char *opts = g_strdup_printf(",node-id=1,link-socket=%s", path);
    uint8_t f[2][300], out[200], got[4 + sizeof(out)];
    int lfd = test_listen(path), peer;
    Lanai *l = lanai_boot(opts);

    peer = accept(lfd, NULL, NULL);
    g_assert_cmpint(peer, >=, 0);
    link_wait_up(l);
    wr(l, LANAI_REG_MYRINET, LANAI_MYRINET_NRES_EN);     /* no CRC */
    recv_start(l, ring, 2);
    fill_pattern(f[0], sizeof(f[0]), 2);
    peer_send(peer, f[0], sizeof(f[0]));
    g_assert_true(WAIT_FOR(rd(l, NVM_REG_RECV_COUNT) == 1));
    check_ring_slot(l, ring, f[0], sizeof(f[0]));
    close(lfd);
    unlink(path);
    close(peer);
    g_assert_true(WAIT_FOR(rd(l, NVM_REG_LINK) == 0));

    lfd = test_listen(path);
    peer = accept(lfd, NULL, NULL);     /* the device's next try */
    g_assert_cmpint(peer, >=, 0);
    link_wait_up(l);
    fill_pattern(f[1], sizeof(f[1]), 3);
    peer_send(peer, f[1], sizeof(f[1]));
    g_assert_true(WAIT_FOR(rd(l, NVM_REG_RECV_COUNT) == 2));
    check_ring_slot(l, ring + SLOT_SIZE, f[1], sizeof(f[1]));
    fill_pattern(out, sizeof(out), 4);
    send_frame(l, 0x2000, out, sizeof(out));
    peer_read(peer, got, sizeof(got));
    g_assert_cmpuint(ldl_be_p(got), ==, sizeof(out));
    g_assert_cmpmem(got + 4, sizeof(out), out, sizeof(out));
    close(peer);
    close(lfd);
    unlink(path);
    lanai_free(l);
}

/*
 * Framing at its edges: an oversize frame that comes in pieces, over
 * many reads, is skipped whole; frames of 0 to 3 bytes, shorter than
 * their CRC, are dropped as CRC errors; the frame after them arrives.
 */
static void test_linksock_framing(void)
{
    const uint32_t ring = 0x10000, big = 5 * 4096 + 17;
    g_autofree uint8_t *huge = g_malloc(big);
    uint8_t f[64], be[4];
    int peer;
    Lanai *l;

    fill_pattern(huge, big, 5);
    fill_pattern(f, sizeof(f), 6);
    stl_be_p(be, big);
    l = lanai_boot_linksock(&peer, "");
    recv_start(l, ring, 2);
    g_assert_cmpint(write(peer, be, 4), ==, 4);
    for (uint32_t off = 0; off < big; off += 1000) {
        uint32_t n = MIN(1000, big - off);

        g_assert_cmpint(write(peer, huge + off, n), ==, n);
        g_usleep(5 * 1000);     /* a read of its own, most likely */
    }
    peer_send(peer, f, sizeof(f));
    g_assert_true(WAIT_FOR(rd(l, NVM_REG_RECV_COUNT) == 1));
    check_ring_slot(l, ring, f, sizeof(f));
    g_assert_cmpuint(rd(l, NVM_REG_RECV_DROPS), ==, 1);

    wr(l, LANAI_REG_MYRINET, LANAI_MYRINET_NRES_EN | LANAI_MYRINET_CRC32_EN);
    for (uint32_t n = 0; n < 4; n++) {
        peer_send(peer, f, n);
    }
    g_assert_true(WAIT_FOR(rd(l, NVM_REG_RECV_DROPS) == 5));
    g_assert_cmpuint(rd(l, NVM_REG_RECV_COUNT), ==, 1);
    g_assert_cmpuint(sram_rd(l, ring + SLOT_SIZE), ==, 0);  /* EMPTY */
    g_assert_cmphex(rd(l, NVM_REG_ID), ==, NVM_ID_MAGIC);
    close(peer);
    lanai_free(l);
}

/*
 * The next frame from the device, read by the peer into got (4 + len
 * bytes), is len bytes of fill_pattern(seed) with its length in front;
 * f: room for len bytes.
 */
static void peer_expect(int peer, uint8_t *got, uint8_t *f, uint32_t len,
                        unsigned seed)
{
    peer_read(peer, got, 4 + len);
    fill_pattern(f, len, seed);
    g_assert_cmpuint(ldl_be_p(got), ==, len);
    g_assert_cmpmem(got + 4, len, f, len);
}

/*
 * Sends faster than the peer reads: the socket fills, a frame goes in
 * part and the engine waits for the rest; every frame still arrives
 * whole, in order, with its own length.
 */
static void test_linksock_send_full(void)
{
    enum { N = 96, LEN = 4000 };
    g_autofree uint8_t *f = g_malloc(LEN), *got = g_malloc(4 + LEN);
    unsigned waited = 0, read_upto = 0;
    int peer;
    Lanai *l;

    l = lanai_boot_linksock(&peer, "");
    for (unsigned k = 0; k < N; k++) {
        gint64 until = g_get_monotonic_time() + 50 * 1000;

        fill_pattern(f, LEN, 100 + k);
        qpci_memwrite(l->dev, l->sram, 0x2000, f, LEN);
        wr(l, NVM_REG_SEND_OFF, 0x2000);
        wr(l, NVM_REG_SEND_LEN, LEN);
        wr(l, NVM_REG_SEND_CTRL, 1);
        while (rd(l, NVM_REG_SEND_COUNT) != k + 1 &&
               g_get_monotonic_time() < until) {
            g_usleep(1000);
        }
        if (rd(l, NVM_REG_SEND_COUNT) == k + 1) {
            continue;
        }
        /* the socket is full: read what was sent, the engine goes on */
        waited++;
        for (; read_upto < k; read_upto++) {
            peer_expect(peer, got, f, LEN, 100 + read_upto);
        }
        g_assert_true(WAIT_FOR(rd(l, NVM_REG_SEND_COUNT) == k + 1));
    }
    g_assert_cmpuint(waited, >, 0);
    for (; read_upto < N; read_upto++) {
        peer_expect(peer, got, f, LEN, 100 + read_upto);
    }
    g_assert_cmphex(rd(l, NVM_REG_ID), ==, NVM_ID_MAGIC);
    close(peer);
    lanai_free(l);
}

/*
 * Sends the device frames of len bytes (pattern 100 + k) until one is
 * not taken within 50 ms: the socket is full and part of that frame
 * waits.  Returns how many were started.
 */
static unsigned linksock_fill_socket(Lanai *l, uint8_t *f, uint32_t len)
{
    for (unsigned k = 0; k < 1000; k++) {
        gint64 until = g_get_monotonic_time() + 50 * 1000;

        fill_pattern(f, len, 100 + k);
        qpci_memwrite(l->dev, l->sram, 0x2000, f, len);
        wr(l, NVM_REG_SEND_OFF, 0x2000);
        wr(l, NVM_REG_SEND_LEN, len);
        wr(l, NVM_REG_SEND_CTRL, 1);
        while (rd(l, NVM_REG_SEND_COUNT) != k + 1 &&
               g_get_monotonic_time() < until) {
            g_usleep(1000);
        }
        if (rd(l, NVM_REG_SEND_COUNT) != k + 1) {
            return k + 1;
        }
    }
    g_assert_not_reached();
}

/*
 * Reset with a frame sent in part: the rest cannot be taken back from
 * the peer's stream, so the connection ends (the peer reads every
 * whole frame intact, then the end, never bytes out of step).  (The
 * reset unmaps the BARs: nothing more is read of the device.)  Before,
 * the stream stayed open and the frames after the reset were counted as
 * sent and never written.
 */
static void test_linksock_reset_mid_send(void)
{
    enum { LEN = 4000 };
    g_autofree uint8_t *f = g_malloc(LEN), *got = g_malloc(4 + LEN);
    unsigned started, whole = 0;
    int peer;
    Lanai *l;

    l = lanai_boot_linksock(&peer, "");
    started = linksock_fill_socket(l, f, LEN);
    qtest_qmp_assert_success(qts(l), "{'execute': 'system_reset'}");
    for (;;) {
        struct pollfd p = { .fd = peer, .events = POLLIN };
        size_t have = 0;
        ssize_t n = 0;

        while (have < 4 + LEN) {
            g_assert_cmpint(poll(&p, 1, WAIT_US / 1000), ==, 1);
            n = read(peer, got + have, 4 + LEN - have);
            g_assert_cmpint(n, >=, 0);
            if (n == 0) {
                break;
            }
            have += n;
        }
        if (n == 0) {
            break;      /* the end, inside a frame or between two */
        }
        fill_pattern(f, LEN, 100 + whole);
        g_assert_cmpuint(ldl_be_p(got), ==, LEN);
        g_assert_cmpmem(got + 4, LEN, f, LEN);
        whole++;
    }
    g_assert_cmpuint(whole, <, started);
    close(peer);
    lanai_free(l);
}

/*
 * An inject frame waits for the ring while the link goes down: it
 * arrives intact once a slot is free, and the one written after it
 * too.  Before, the link going down let the FIFO be read again under
 * the waiting frame, which then pointed at other bytes.
 */
static void test_linksock_inject_while_full(void)
{
    const uint32_t ring = 0x10000;
    g_autofree char *sock = linksock_path();    /* makes linksock_dir */
    g_autofree char *fifo = g_build_filename(linksock_dir, "inject", NULL);
    g_autofree char *extra = g_strdup_printf(",link-inject=%s", fifo);
    uint8_t f[3][90];
    int peer, w;
    Lanai *l;

    unlink(fifo);
    g_assert_cmpint(mkfifo(fifo, 0600), ==, 0);
    for (unsigned k = 0; k < 3; k++) {
        fill_pattern(f[k], sizeof(f[k]), 20 + k);
    }
    l = lanai_boot_linksock(&peer, extra);
    recv_start(l, ring, 1);
    peer_send(peer, f[0], sizeof(f[0]));
    g_assert_true(WAIT_FOR(rd(l, NVM_REG_RECV_COUNT) == 1));
    w = open(fifo, O_WRONLY);
    g_assert_cmpint(w, >=, 0);
    peer_send(w, f[1], sizeof(f[1]));   /* waits: the one slot is full */
    g_usleep(100 * 1000);
    close(peer);
    g_assert_true(WAIT_FOR(rd(l, NVM_REG_LINK) == 0));
    peer_send(w, f[2], sizeof(f[2]));
    g_usleep(100 * 1000);
    for (unsigned k = 1; k < 3; k++) {
        sram_wr(l, ring, 0);                                 /* EMPTY */
        wr(l, NVM_REG_RECV_CTRL, NVM_RECV_CTRL_RETRY);
        g_assert_true(WAIT_FOR(rd(l, NVM_REG_RECV_COUNT) == k + 1));
        check_ring_slot(l, ring, f[k], sizeof(f[k]));
    }
    close(w);
    lanai_free(l);
    unlink(fifo);
}

/*
 * Refused at start, and QEMU says why: the accelerator, the device, one
 * more option (opt, its value; or NULL), the message (or, if not NULL,
 * alt: a build without what opt needs).
 */
static void linksock_refused(const char *accel, const char *dev,
                             const char *opt, const char *val,
                             const char *msg, const char *alt)
{
    const char *argv[] = {
        getenv("QTEST_QEMU_BINARY"), "-M", "pc", "-nodefaults",
        "-display", "none", "-accel", accel, "-device", dev, opt, val, NULL,
    };
    g_autofree char *err = NULL;
    int status;

    g_assert_nonnull(argv[0]);
    g_assert_true(g_spawn_sync(NULL, (char **)argv, NULL,
                               G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL,
                               &err, &status, NULL));
    g_assert_true(WIFEXITED(status) && WEXITSTATUS(status) != 0);
    if (alt && strstr(err, alt)) {
        g_test_message("not checked here: %s", alt);
        return;
    }
    g_assert_nonnull(strstr(err, msg));
}

/*
 * link-socket with a netdev too, link-inject without link-socket,
 * link-socket under icount (its frames and timers follow the host; the
 * ASan build, with no TCG, cannot run icount at all).
 */
static void test_linksock_refused(void)
{
    linksock_refused("qtest",
                     "lanai,netdev=l0,link-socket=/nonexistent/link.sock",
                     "-netdev", "hubport,id=l0,hubid=0",
                     "link-socket and netdev exclude each other", NULL);
    linksock_refused("qtest", "lanai,link-inject=/nonexistent/inject",
                     NULL, NULL, "link-inject goes with link-socket", NULL);
    linksock_refused("tcg", "lanai,link-socket=/nonexistent/link.sock",
                     "-icount", "shift=0",
                     "link-socket does not follow icount or record/replay",
                     "TCG support not available");
}

/* RECV_SLOTS 0 while on: the next slot was computed modulo 0 (SIGFPE). */
static void test_recv_slots_zero(void)
{
    recv_changed_then_frame(0x10000, 0, SLOT_SIZE);
}

/* The same bodies over link-socket instead of the stream netdev. */
static void test_linksock_raw_frames(void)
{
    linksock_mode = true;
    test_raw_frames();
    linksock_mode = false;
}

static void test_linksock_link_event(void)
{
    linksock_mode = true;
    test_link_event();
    linksock_mode = false;
}

static void test_linksock_recv_slots_zero(void)
{
    linksock_mode = true;
    test_recv_slots_zero();
    linksock_mode = false;
}

/*
 * RECV_SLOT_SIZE 4 while on, the ring at the end of SRAM: a slot's room
 * (size - 8) wrapped to 4 GiB and the peer's frame was copied past the
 * end of SRAM.
 */
static void test_recv_slot_size_small(void)
{
    recv_changed_then_frame(LANAI_SRAM_DEFAULT - 16, 2, 4);
}

/*
 * A send is started (frame at SEND_OFF, SEND_LEN checked), and waits
 * because the VM is stopped; then SEND_OFF or SEND_LEN changes.  When the
 * VM runs, the engine sent with the new values: 2 MiB copied into its
 * 4 KiB stack buffer, or a frame read past the end of SRAM.  Now it
 * checks them again and refuses the send.
 */
static void send_changed_while_busy(uint32_t reg, uint32_t val)
{
    Lanai *l = lanai_boot(NULL);
    uint32_t errs;

    sram_fill(l, 0x2000, 0x42, 100);
    qtest_qmp_assert_success(qts(l), "{'execute': 'stop'}");
    wr(l, NVM_REG_SEND_OFF, 0x2000);
    wr(l, NVM_REG_SEND_LEN, 100);
    wr(l, NVM_REG_SEND_CTRL, 1);
    g_assert_cmphex(rd(l, NVM_REG_SEND_CTRL) & NVM_ENG_BUSY, !=, 0);
    errs = rd(l, NVM_REG_ERRORS);
    wr(l, reg, val);
    qtest_qmp_assert_success(qts(l), "{'execute': 'cont'}");
    g_assert_true(WAIT_FOR(!(rd(l, NVM_REG_SEND_CTRL) & NVM_ENG_BUSY)));
    g_assert_cmpuint(rd(l, NVM_REG_ERRORS), ==, errs + 1);
    g_assert_cmpuint(rd(l, NVM_REG_SEND_COUNT), ==, 0);
    g_assert_cmphex(rd(l, LANAI_REG_ISR) & LANAI_ISR_SEND, !=, 0);
    sram_assert_fill(l, 0x2000, 0x42, 100);
    g_assert_cmphex(rd(l, NVM_REG_ID), ==, NVM_ID_MAGIC);
    lanai_free(l);
}

static void test_send_len_while_busy(void)
{
    send_changed_while_busy(NVM_REG_SEND_LEN, LANAI_SRAM_DEFAULT - 0x2000);
}

static void test_send_off_while_busy(void)
{
    send_changed_while_busy(NVM_REG_SEND_OFF, LANAI_SRAM_DEFAULT - 16);
}

/*
 * ST_LEN changed after ST_CMD, before the engine ran (a vCPU can, beside
 * the main loop; here the VM is stopped, and the self-test waits for it
 * to run): the engine allocated and filled what ST_LEN said (up to 4
 * GiB) and wrote it over guest memory past the buffer.  Now it checks
 * the length it uses and fails the test, with no DMA at all.
 */
static void test_selftest_len_while_busy(void)
{
    Lanai *l = lanai_boot(NULL);
    const uint32_t span = 2 * 1024 * 1024;
    uint64_t buf = guest_alloc(&l->qs->alloc, span);
    g_autofree uint8_t *got = g_malloc(span);
    uint32_t errs;

    qtest_memset(qts(l), buf, 0x5a, span);
    qtest_qmp_assert_success(qts(l), "{'execute': 'stop'}");
    wr(l, NVM_REG_ST_ADDR_LO, buf);
    wr(l, NVM_REG_ST_ADDR_HI, buf >> 32);
    wr(l, NVM_REG_ST_LEN, NVM_ST_MAX_LEN);
    wr(l, NVM_REG_ST_CMD, NVM_ST_CMD_FILL);
    /* no DMA into a stopped VM: still busy, memory untouched */
    g_assert_cmpuint(rd(l, NVM_REG_ST_STATUS), ==, NVM_ST_STATUS_BUSY);
    errs = rd(l, NVM_REG_ERRORS);
    wr(l, NVM_REG_ST_LEN, span);
    qtest_qmp_assert_success(qts(l), "{'execute': 'cont'}");
    g_assert_true(WAIT_FOR(rd(l, NVM_REG_ST_STATUS) != NVM_ST_STATUS_BUSY));
    g_assert_cmpuint(rd(l, NVM_REG_ST_STATUS), ==, NVM_ST_STATUS_ERROR);
    g_assert_cmpuint(rd(l, NVM_REG_ERRORS), ==, errs + 1);
    qtest_memread(qts(l), buf, got, span);
    for (uint32_t i = 0; i < span; i++) {
        if (got[i] != 0x5a) {
            g_error("guest byte at +0x%x changed to 0x%02x", i, got[i]);
        }
    }
    /* a good command afterwards works */
    wr(l, NVM_REG_ST_LEN, 16);
    wr(l, NVM_REG_ST_CMD, NVM_ST_CMD_FILL);
    g_assert_true(WAIT_FOR(rd(l, NVM_REG_ST_STATUS) == NVM_ST_STATUS_DONE));
    qtest_memread(qts(l), buf, got, 17);
    for (uint32_t i = 0; i < 16; i++) {
        g_assert_cmphex(got[i], ==, nvm_st_pattern(0, i));
    }
    g_assert_cmphex(got[16], ==, 0x5a);
    lanai_free(l);
}

/*
 * DMA the device makes outside an MMIO access (here the link watch, a
 * timer) aimed at its own BARs: the event ring at the doorbell BAR, the
 * MSI-X vector at the SCRATCH register.  Both writes re-entered the
 * device (doorbell words latched, SCRATCH overwritten); now the device's
 * re-entrancy guard refuses them: the event is lost and counted.
 */
static void test_reentry_from_timer(void)
{
    int peer;
    Lanai *l = lanai_boot_wired(&peer, "");
    uint64_t off = l->dev->msix_table_off;
    struct nvm_event ev;

    lanai_evq_setup(l);
    qtest_clock_step(qts(l), 50 * 1000 * 1000);
    while (lanai_event_next(l, &ev)) {
        /* the link-up event, if the watch saw one */
    }
    g_assert_cmphex(rd(l, NVM_REG_LINK), ==, NVM_LINK_UP);
    qpci_msix_enable(l->dev);
    qpci_io_writel(l->dev, l->dev->msix_table_bar,
                   off + PCI_MSIX_ENTRY_LOWER_ADDR,
                   l->regs.addr + NVM_REG_SCRATCH);
    qpci_io_writel(l->dev, l->dev->msix_table_bar,
                   off + PCI_MSIX_ENTRY_UPPER_ADDR, l->regs.addr >> 32);
    qpci_io_writel(l->dev, l->dev->msix_table_bar,
                   off + PCI_MSIX_ENTRY_DATA, 0x5ca7);
    qpci_io_writel(l->dev, l->dev->msix_table_bar,
                   off + PCI_MSIX_ENTRY_VECTOR_CTRL, 0);
    wr(l, LANAI_REG_ISR, LANAI_ISR_HOST_W1C);
    wr(l, LANAI_REG_EIMR, LANAI_ISR_HOST_W1C);
    wr(l, NVM_REG_EVQ_LEN, 0);
    wr(l, NVM_REG_EVQ_BASE_LO, l->db.addr);
    wr(l, NVM_REG_EVQ_BASE_HI, l->db.addr >> 32);
    wr(l, NVM_REG_EVQ_LEN, EVQ_LEN);
    g_assert_cmpuint(rd(l, NVM_REG_EVQ_LOST), ==, 0);

    wr(l, LANAI_REG_MYRINET, 0);            /* link down, seen by a timer */
    qtest_clock_step(qts(l), 50 * 1000 * 1000);
    g_assert_cmpuint(rd(l, NVM_REG_EVQ_LOST), ==, 1);
    g_assert_cmphex(rd(l, NVM_REG_DB_STATUS), ==, 0);
    g_assert_cmphex(rd(l, NVM_REG_SCRATCH), ==, 0);
    g_assert_cmphex(rd(l, LANAI_REG_ISR) & LANAI_ISR_EV_ERROR, !=, 0);
    close(peer);
    lanai_free(l);
}

/*
 * A host DMA chain whose host address is the device's own SRAM BAR,
 * overlapping the SRAM range it copies to: the engine copied SRAM to SRAM
 * with one memcpy between overlapping ranges (undefined behaviour; the
 * ASan build of QEMU stops on it, memcpy-param-overlap).  Now it goes
 * through a bounce buffer: the bytes move as a bus read then write would
 * move them.  Both directions.
 */
static void test_hdma_own_sram(void)
{
    Lanai *l = lanai_boot(NULL);
    uint8_t pat[0x180], got[0x100];

    for (unsigned i = 0; i < sizeof(pat); i++) {
        pat[i] = (uint8_t)(i * 7 + 1);
    }
    /* E2L: "host" SRAM 0x4080.. into SRAM 0x4000.. */
    qpci_memwrite(l->dev, l->sram, 0x4000, pat, sizeof(pat));
    put_desc(l, 0x1000, LANAI_DMA_E2L | LANAI_DMA_TERMINAL, 0x100, 0x4000,
             l->sram.addr + 0x4080);
    hdma_run(l, 0x1000);
    g_assert_cmpuint(get_desc(l, 0x1000).status, ==, NVM_DMA_ST_DONE);
    qpci_memread(l->dev, l->sram, 0x4000, got, sizeof(got));
    g_assert_cmpmem(got, sizeof(got), pat + 0x80, 0x100);
    /* L2E: SRAM 0x8000.. out to "host" SRAM 0x8080.. */
    qpci_memwrite(l->dev, l->sram, 0x8000, pat, sizeof(pat));
    put_desc(l, 0x1000, LANAI_DMA_L2E | LANAI_DMA_TERMINAL, 0x100, 0x8000,
             l->sram.addr + 0x8080);
    hdma_run(l, 0x1000);
    g_assert_cmpuint(get_desc(l, 0x1000).status, ==, NVM_DMA_ST_DONE);
    qpci_memread(l->dev, l->sram, 0x8080, got, sizeof(got));
    g_assert_cmpmem(got, sizeof(got), pat, 0x100);
    g_assert_cmpuint(rd(l, NVM_REG_ERRORS), ==, 0);
    lanai_free(l);
}

/*
 * Hot-unplug with work pending in every engine: a self-test and a send
 * waiting for a stopped VM (their bottom halves and the VM change-state
 * handler armed), a host DMA chain, the doorbell FIFO full, the link
 * watch armed.  After the unplug the VM runs again: nothing the device
 * left behind may run (QEMU stays up and serves).
 */
static void test_unplug_busy(void)
{
    Lanai *l = lanai_boot(NULL);
    QPCIDevice *dev;
    QPCIBar regs, sram, db;
    uint64_t buf = guest_alloc(&l->qs->alloc, 4096);

    qtest_qmp_device_add(qts(l), "lanai", "nic1", "{'addr': '0x06'}");
    dev = qpci_device_find(l->qs->pcibus, QPCI_DEVFN(6, 0));
    g_assert_nonnull(dev);
    qpci_device_enable(dev);
    regs = qpci_iomap(dev, LANAI_BAR_REGS, NULL);
    sram = qpci_iomap(dev, LANAI_BAR_SRAM, NULL);
    db = qpci_iomap(dev, LANAI_BAR_DOORBELL, NULL);
    g_assert_cmphex(qpci_io_readl(dev, regs, NVM_REG_ID), ==, NVM_ID_MAGIC);

    qtest_qmp_assert_success(qts(l), "{'execute': 'stop'}");
    qpci_io_writel(dev, regs, NVM_REG_ST_ADDR_LO, buf);
    qpci_io_writel(dev, regs, NVM_REG_ST_ADDR_HI, buf >> 32);
    qpci_io_writel(dev, regs, NVM_REG_ST_LEN, 64);
    qpci_io_writel(dev, regs, NVM_REG_ST_CMD, NVM_ST_CMD_FILL);
    qpci_io_writel(dev, sram, 0x2000, 0x01010001);
    qpci_io_writel(dev, regs, NVM_REG_SEND_OFF, 0x2000);
    qpci_io_writel(dev, regs, NVM_REG_SEND_LEN, 64);
    qpci_io_writel(dev, regs, NVM_REG_SEND_CTRL, 1);
    qpci_io_writel(dev, regs, NVM_REG_HDMA_DESC, 0x1000);
    for (int i = 0; i < 300; i++) {
        qpci_io_writel(dev, db, 0, i);
    }
    g_assert_cmpuint(qpci_io_readl(dev, regs, NVM_REG_ST_STATUS), ==,
                     NVM_ST_STATUS_BUSY);

    qpci_unplug_acpi_device_test(qts(l), "nic1", 6);
    g_free(dev);
    qtest_qmp_assert_success(qts(l), "{'execute': 'cont'}");
    qtest_clock_step(qts(l), 100 * 1000 * 1000);
    /* the other lanai still serves */
    g_assert_cmphex(rd(l, NVM_REG_ID), ==, NVM_ID_MAGIC);
    qtest_qmp_assert_success(qts(l), "{'execute': 'query-status'}");
    lanai_free(l);
}

/*
 * A link-socket device whose realize fails (its listening path taken)
 * left its run-state callback registered on the freed device: the next
 * stop or cont called into freed memory (the ASan build sees it).  Then a
 * link-socket device plugged, connected to by this test, with a frame
 * waiting for a ring it has not set up, unplugged: its thread ends and
 * its connection closes (the test reads the end of the stream, or a
 * reset when the frame was still in the device's socket).
 */
static void test_linksock_add_refused_unplug(void)
{
    Lanai *l = lanai_boot(NULL);
    g_autofree char *path = linksock_path();
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    uint8_t frame[64] = { 1, 2, 3 }, b;
    QDict *resp;
    int fd, peer = -1;
    ssize_t n;

    fd = open(path, O_CREAT | O_WRONLY, 0600);  /* bind: EADDRINUSE */
    g_assert_cmpint(fd, >=, 0);
    close(fd);
    resp = qtest_qmp(qts(l), "{'execute': 'device_add', 'arguments': "
                     "{'driver': 'lanai', 'id': 'bad', 'addr': '0x06', "
                     "'link-socket': %s, 'link-listen': true}}", path);
    g_assert_true(qdict_haskey(resp, "error"));
    qobject_unref(resp);
    qtest_qmp_assert_success(qts(l), "{'execute': 'stop'}");
    qtest_qmp_assert_success(qts(l), "{'execute': 'cont'}");
    unlink(path);

    qtest_qmp_device_add(qts(l), "lanai", "nic1",
                         "{'addr': '0x06', 'link-socket': %s, "
                         "'link-listen': true}", path);
    strcpy(sa.sun_path, path);
    for (int i = 0; i < 100 && peer < 0; i++) {
        peer = socket(AF_UNIX, SOCK_STREAM, 0);
        g_assert_cmpint(peer, >=, 0);
        if (connect(peer, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
            close(peer);
            peer = -1;
            g_usleep(10 * 1000);
        }
    }
    g_assert_cmpint(peer, >=, 0);
    peer_send(peer, frame, sizeof(frame));
    qpci_unplug_acpi_device_test(qts(l), "nic1", 6);
    /* closed: the end, or a reset if the frame was still unread there */
    n = read(peer, &b, 1);
    g_assert_true(n == 0 || (n < 0 && errno == ECONNRESET));
    close(peer);
    unlink(path);
    g_assert_cmphex(rd(l, NVM_REG_ID), ==, NVM_ID_MAGIC);
    qtest_qmp_assert_success(qts(l), "{'execute': 'query-status'}");
    lanai_free(l);
}

/*
 * A chain that loops on a descriptor moving half of SRAM: the engine ran
 * all 1024 descriptors (1 GiB of copying in the main loop per chain, as
 * often as the guest writes HDMA_DESC).  A chain now
 * moves at most SRAM's size: the third pass is refused with ERR_CHAIN
 * and an NVM_ERR_DMA_CHAIN event naming the descriptor.
 */
static void test_hdma_chain_bytes(void)
{
    Lanai *l = lanai_boot(NULL);
    const uint32_t half = LANAI_SRAM_DEFAULT / 2;
    uint64_t a = guest_alloc(&l->qs->alloc, half);
    struct nvm_event ev;
    uint32_t errs;

    lanai_evq_setup(l);
    put_desc(l, 0x1000, 0x1000 | LANAI_DMA_L2E, half, 0, a);
    errs = rd(l, NVM_REG_ERRORS);
    hdma_run(l, 0x1000);
    g_assert_cmpuint(get_desc(l, 0x1000).status, ==, NVM_DMA_ST_ERR_CHAIN);
    ev = lanai_event_wait(l, NVM_EV_ERROR);
    g_assert_cmpuint(ev.data, ==, NVM_ERR_DMA_CHAIN);
    g_assert_cmphex(ev.arg, ==, 0x1000);
    g_assert_false(lanai_event_next(l, &ev));
    g_assert_cmpuint(rd(l, NVM_REG_ERRORS), ==, errs + 1);
    /* a chain within the budget still runs: the whole SRAM, twice half */
    put_desc(l, 0x1000, 0x1020 | LANAI_DMA_L2E, half, 0, a);
    put_desc(l, 0x1020, LANAI_DMA_L2E | LANAI_DMA_TERMINAL, half, half, a);
    hdma_run(l, 0x1000);
    g_assert_cmpuint(get_desc(l, 0x1000).status, ==, NVM_DMA_ST_DONE);
    g_assert_cmpuint(get_desc(l, 0x1020).status, ==, NVM_DMA_ST_DONE);
    lanai_free(l);
}

/* ---- saved state is input too ---- */

#define MIG_LED         0x1ed0c0deu
#define MIG_SCRATCH     0x5ca7c4edu

/*
 * Offsets of the device's fields in its section of the stream, from
 * SCRATCH on (VMState order in lanai-pci.c: big-endian integers, bools
 * one byte, arrays inline).
 */
enum {
    MIG_EVQ_LEN = 65,
    MIG_BACKLOG_HEAD = 4177,
    MIG_DB_COUNT = 6237,
    MIG_SEND_BUSY = 6255,
    MIG_SEND_OFF = 6256,
    MIG_SEND_LEN = 6260,
    MIG_RX_RING = 6269,
    MIG_RX_SLOTS = 6273,
    MIG_RX_SLOT_SIZE = 6277,
    MIG_RX_NEXT = 6281,
    MIG_ST_LEN = 6305,
    MIG_ST_CMD = 6313,
    MIG_ST_STATUS = 6317,
    MIG_FW = 6321,              /* struct fw from 'state' on, host order */
    MIG_FW_LAYOUT = MIG_FW + 8,
};

static void mig_wait(QTestState *q, const char *want)
{
    for (int i = 0; i < 3000; i++) {
        QDict *rsp = qtest_qmp_assert_success_ref(q,
                                                  "{'execute': 'query-migrate'}");
        const char *st = qdict_haskey(rsp, "status") ?
                         qdict_get_str(rsp, "status") : "none";
        bool done = !strcmp(st, "completed") || !strcmp(st, "failed");

        if (done) {
            g_assert_cmpstr(st, ==, want);
            qobject_unref(rsp);
            return;
        }
        qobject_unref(rsp);
        g_usleep(10 * 1000);
    }
    g_error("migration did not end");
}

static uint32_t be32_at(const gchar *p)
{
    const uint8_t *b = (const uint8_t *)p;

    return (uint32_t)b[0] << 24 | b[1] << 16 | b[2] << 8 | b[3];
}

static void be32_put(gchar *p, uint32_t v)
{
    uint8_t *b = (uint8_t *)p;

    b[0] = v >> 24;
    b[1] = v >> 16;
    b[2] = v >> 8;
    b[3] = v;
}

/*
 * A device with state worth saving: event ring and markers; the receive
 * ring on through the debug port, or (lay) the firmware running.
 */
static gchar *mig_save(gsize *len, gsize *scratch,
                       struct nvm_sram_layout *lay)
{
    Lanai *l = lanai_boot(",node-id=1");
    g_autofree char *path = g_strdup_printf("/tmp/lanai-mig-%d", getpid());
    g_autofree char *uri = g_strdup_printf("file:%s", path);
    gchar *data;
    uint8_t mark[8];
    uint8_t *hit, *id;

    if (lay) {
        lanai_fw_start(l);
        read_layout(l, lay);
    } else {
        lanai_evq_setup(l);
        recv_start(l, 0x10000, 2);
    }
    wr(l, LANAI_REG_LED, MIG_LED);
    wr(l, NVM_REG_SCRATCH, MIG_SCRATCH);
    be32_put((gchar *)mark, MIG_LED);
    be32_put((gchar *)mark + 4, MIG_SCRATCH);
    qtest_qmp_assert_success(qts(l),
                             "{'execute': 'migrate', 'arguments': "
                             "{'uri': %s}}", uri);
    mig_wait(qts(l), "completed");
    lanai_free(l);
    g_assert_true(g_file_get_contents(path, &data, len, NULL));
    unlink(path);
    hit = memmem(data, *len, mark, sizeof(mark));
    g_assert_nonnull(hit);
    g_assert_null(memmem(hit + 1, *len - (hit + 1 - (uint8_t *)data), mark,
                         sizeof(mark)));
    *scratch = hit + 4 - (uint8_t *)data;
    /*
     * The device section's idstr ends in "/lanai", the last one before
     * the fields (SRAM's RAM block is named ".../lanai.sram"): the guest
     * suite finds the firmware block in a saved file from there.
     */
    id = NULL;
    for (uint8_t *p = (uint8_t *)data; (p = memmem(p, hit - p, "/lanai", 6));
         p++) {
        id = p;
    }
    g_assert_nonnull(id);
    g_assert_cmpuint(id[6], !=, '.');
    g_assert_cmpuint(*scratch + MIG_FW - (id + 6 - (uint8_t *)data), ==,
                     NVM_DEV_SAVED_FW_FROM_IDSTR);
    return data;
}

/* Load a stream into a new QEMU: "completed" or "failed", and alive. */
static void mig_load(const gchar *data, gsize len, const char *want)
{
    g_autofree char *path = g_strdup_printf("/tmp/lanai-mig-in-%d", getpid());
    g_autofree char *uri = g_strdup_printf("file:%s", path);
    QTestState *q;

    g_assert_true(g_file_set_contents(path, data, len, NULL));
    q = qtest_init("-nodefaults -device lanai,node-id=1 -incoming defer");
    qtest_qmp_assert_success(q, "{'execute': 'migrate-incoming', "
                             "'arguments': {'uri': %s, "
                             "'exit-on-error': false}}", uri);
    mig_wait(q, want);
    qtest_qmp_assert_success(q, "{'execute': 'query-status'}");
    qtest_quit(q);
    unlink(path);
}

/*
 * A saved device whose stream is corrupted: an index out of range, a
 * ring position past its ring, a length too big.  Each was trusted by
 * the device (and used by its engines: the receive ring at the next
 * frame, the send and self-test in bottom halves right after the load);
 * now the load is refused and the incoming QEMU stays up.  The stream
 * as saved loads.
 */
static void test_migration_corrupt(void)
{
    static const struct {
        unsigned off;       /* from SCRATCH */
        uint32_t was;       /* what the saved device had */
        uint32_t bad;
    } cases[] = {
        { MIG_RX_NEXT, 0, 2 },                  /* next slot past the ring */
        { MIG_RX_SLOTS, 2, 0 },
        { MIG_RX_SLOT_SIZE, SLOT_SIZE, 4 },
        { MIG_RX_RING, 0x10000, LANAI_SRAM_DEFAULT - 16 },
        { MIG_EVQ_LEN, EVQ_LEN, 3 },
        { MIG_BACKLOG_HEAD, 0, 256 },
        { MIG_DB_COUNT, 0, 257 },
    };
    gsize len, sc;
    g_autofree gchar *data = mig_save(&len, &sc, NULL);
    g_autofree gchar *bad = g_memdup2(data, len);

    g_assert_cmphex(be32_at(data + sc - 4), ==, MIG_LED);
    mig_load(data, len, "completed");
    for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++) {
        memcpy(bad, data, len);
        g_assert_cmphex(be32_at(bad + sc + cases[i].off), ==, cases[i].was);
        be32_put(bad + sc + cases[i].off, cases[i].bad);
        mig_load(bad, len, "failed");
    }
    /* a send in flight with a length past the frame buffer */
    memcpy(bad, data, len);
    g_assert_cmpuint((uint8_t)bad[sc + MIG_SEND_BUSY], ==, 0);
    bad[sc + MIG_SEND_BUSY] = 1;
    be32_put(bad + sc + MIG_SEND_OFF, 0x2000);
    be32_put(bad + sc + MIG_SEND_LEN, 0x100000);
    mig_load(bad, len, "failed");
    /* a self-test in flight with a 4 GiB length */
    memcpy(bad, data, len);
    g_assert_cmpuint(be32_at(bad + sc + MIG_ST_STATUS), ==,
                     NVM_ST_STATUS_IDLE);
    be32_put(bad + sc + MIG_ST_STATUS, NVM_ST_STATUS_BUSY);
    be32_put(bad + sc + MIG_ST_CMD, NVM_ST_CMD_FILL);
    be32_put(bad + sc + MIG_ST_LEN, 0xffffffff);
    mig_load(bad, len, "failed");
}

/*
 * The firmware's saved state: its layout gives the SRAM offsets it writes
 * (counters, rings) and the ring lengths its raw program divides by,
 * unchecked.  A stream with the counters at the end of SRAM made the
 * loaded firmware copy them past SRAM; one with a raw ring of length 0
 * or a wire ring past SRAM is as bad.  Each is refused.
 */
static void test_migration_corrupt_firmware(void)
{
    struct nvm_sram_layout lay;
    gsize len, sc;
    g_autofree gchar *data = mig_save(&len, &sc, &lay);
    g_autofree gchar *bad = g_memdup2(data, len);
    const struct {
        unsigned field;     /* uint32_t index in struct nvm_sram_layout */
        uint32_t bad;
    } cases[] = {
        { offsetof(struct nvm_sram_layout, counters) / 4,
          LANAI_SRAM_DEFAULT - 4 },
        { offsetof(struct nvm_sram_layout, raw_tx_len) / 4, 0 },
        { offsetof(struct nvm_sram_layout, wire_rx_ring) / 4,
          LANAI_SRAM_DEFAULT - 64 },
    };
    uint32_t v;     /* the firmware block is saved in host order */

    memcpy(&v, data + sc + MIG_FW, 4);
    g_assert_cmpuint(v, ==, NVM_FW_READY);
    mig_load(data, len, "completed");
    for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++) {
        gchar *f = bad + sc + MIG_FW_LAYOUT + 4 * cases[i].field;

        memcpy(bad, data, len);
        memcpy(&v, f, 4);
        g_assert_cmphex(v, ==, ((uint32_t *)&lay)[cases[i].field]);
        v = cases[i].bad;
        memcpy(f, &v, 4);
        mig_load(bad, len, "failed");
    }
}

/*
 * The firmware's own tables in the saved block: an engine-queue position,
 * NetVM's round-robin endpoint and a peer's wait-queue head, a tripwire
 * bucket's first id, the U-Net divert ring's size, the peer a tx buffer
 * is held for (an index into the per-peer share), the Ethernet program's
 * next tx descriptor and a tx buffer's state, descriptor count, frame
 * start and the received frame's checksum.  The firmware uses each as
 * an array index (or divides by it) without a check; a stream with any
 * of them out of range is refused by fw_state_ok and the incoming QEMU
 * stays up.  NetVM's tick bookkeeping (tick_armed_ns, tick_rem_ns) is
 * not refused but bounded where it is used (fw_nv_tx.c, ticks_passed: a
 * remainder of a tick or more counts as none, the ticks one callback
 * stands for are capped at the give-up): any value loads.
 */
static void test_migration_corrupt_fw_tables(void)
{
    struct nvm_sram_layout lay;
    gsize len, sc;
    g_autofree gchar *data = mig_save(&len, &sc, &lay);
    g_autofree gchar *bad = g_memdup2(data, len);
    static const struct {
        unsigned off;       /* in the firmware block */
        unsigned size;      /* bytes: 1, 2, 4 or 8, host order */
        uint64_t bad;
        const char *want;   /* the load's end */
    } cases[] = {
        { NVM_FW_SAVED_HDMA_HEAD, 4, 0x10000, "failed" },
        { NVM_FW_SAVED_NV_RR_EP, 4, 0x10000, "failed" },
        { NVM_FW_SAVED_PEER1_WQ_HEAD, 4, 0x10000, "failed" },
        { NVM_FW_SAVED_TW_HEAD0, 2, 0xffff, "failed" },
        { NVM_FW_SAVED_UNET_EP1_STATE, 4, 0x10000, "failed" }, /* no state */
        { NVM_FW_SAVED_UNET_DIV_SLOTS, 4, 0x10000, "failed" },
        { NVM_FW_SAVED_NV_TXBUF_PEER0, 1, 0xff, "failed" },
        { NVM_FW_SAVED_ETH_TX_NEXT, 4, 0x10000, "failed" },
        { NVM_FW_SAVED_ETH_TB_STATE0, 4, 0x10000, "failed" },
        { NVM_FW_SAVED_ETH_TB_NDESC0, 4, 9, "failed" }, /* > 8 pieces */
        { NVM_FW_SAVED_ETH_TB_FRAME0, 4, 0x10000, "failed" }, /* > tb_len */
        { NVM_FW_SAVED_ETH_RX_CSUM, 4, 0x10000, "failed" }, /* > 16 bits */
        { NVM_FW_SAVED_NV_TICK_ARMED, 8, UINT64_MAX, "completed" },
        { NVM_FW_SAVED_NV_TICK_REM, 8, UINT64_MAX, "completed" },
    };

    mig_load(data, len, "completed");
    for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++) {
        gchar *f = bad + sc + MIG_FW + cases[i].off;
        uint64_t v = 0;

        g_assert_cmpuint(sc + MIG_FW + cases[i].off + cases[i].size, <=, len);
        memcpy(bad, data, len);
        memcpy(&v, f, cases[i].size);   /* little-endian host: low bytes */
        g_assert_cmpuint(v, <, cases[i].bad);
        memcpy(f, &cases[i].bad, cases[i].size);
        mig_load(bad, len, cases[i].want);
    }
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/lanai/bars", test_bars);
    qtest_add_func("/lanai/reset-values", test_reset_values);
    qtest_add_func("/lanai/access-rules", test_access_rules);
    qtest_add_func("/lanai/selftest/dma", test_selftest_dma);
    qtest_add_func("/lanai/selftest/irq", test_selftest_irq);
    qtest_add_func("/lanai/selftest/hostile", test_selftest_hostile);
    qtest_add_func("/lanai/doorbell/fifo", test_doorbell_fifo);
    qtest_add_func("/lanai/doorbell/inline", test_doorbell_inline);
    qtest_add_func("/lanai/doorbell/bh", test_doorbell_bh);
    qtest_add_func("/lanai/doorbell/yield-wait", test_doorbell_yield_wait);
    qtest_add_func("/lanai/firmware/boot", test_firmware_boot);
    qtest_add_func("/lanai/events/ring-full", test_event_ring_full);
    qtest_add_func("/lanai/events/irq-rearm", test_event_irq_rearm);
    qtest_add_func("/lanai/raw/frames", test_raw_frames);
    qtest_add_func("/lanai/raw/errors", test_raw_errors);
    qtest_add_func("/lanai/engines/hdma-chain", test_hdma_chain);
    qtest_add_func("/lanai/engines/hdma-hostile", test_hdma_hostile);
    qtest_add_func("/lanai/engines/wire", test_wire_engines);
    qtest_add_func("/lanai/reset/mid-transfer", test_reset_mid_transfer);
    qtest_add_func("/lanai/events/link", test_link_event);
    qtest_add_func("/lanai/hostile/garbage", test_garbage);
    qtest_add_func("/lanai/link/peer-auth", test_link_peer_auth);
    qtest_add_func("/lanai/hostile/recv-ring-moved", test_recv_ring_moved);
    qtest_add_func("/lanai/linksock/raw-frames", test_linksock_raw_frames);
    qtest_add_func("/lanai/linksock/link-event", test_linksock_link_event);
    qtest_add_func("/lanai/linksock/recv-slots-zero",
                   test_linksock_recv_slots_zero);
    qtest_add_func("/lanai/linksock/wire", test_linksock_wire);
    qtest_add_func("/lanai/linksock/inject", test_linksock_inject);
    qtest_add_func("/lanai/linksock/stopped", test_linksock_stopped);
    qtest_add_func("/lanai/linksock/gone-while-full",
                   test_linksock_gone_while_full);
    qtest_add_func("/lanai/linksock/reconnect", test_linksock_reconnect);
    qtest_add_func("/lanai/linksock/framing", test_linksock_framing);
    qtest_add_func("/lanai/linksock/send-full", test_linksock_send_full);
    qtest_add_func("/lanai/linksock/reset-mid-send",
                   test_linksock_reset_mid_send);
    qtest_add_func("/lanai/linksock/inject-while-full",
                   test_linksock_inject_while_full);
    qtest_add_func("/lanai/linksock/refused", test_linksock_refused);
    qtest_add_func("/lanai/linksock/add-refused-unplug",
                   test_linksock_add_refused_unplug);
    qtest_add_func("/lanai/hostile/recv-slots-zero", test_recv_slots_zero);
    qtest_add_func("/lanai/hostile/recv-slot-size-small",
                   test_recv_slot_size_small);
    qtest_add_func("/lanai/hostile/send-len-while-busy",
                   test_send_len_while_busy);
    qtest_add_func("/lanai/hostile/send-off-while-busy",
                   test_send_off_while_busy);
    qtest_add_func("/lanai/hostile/selftest-len-while-busy",
                   test_selftest_len_while_busy);
    qtest_add_func("/lanai/hostile/reentry-from-timer",
                   test_reentry_from_timer);
    qtest_add_func("/lanai/hostile/hdma-own-sram", test_hdma_own_sram);
    qtest_add_func("/lanai/hostile/unplug-busy", test_unplug_busy);
    qtest_add_func("/lanai/hostile/hdma-chain-bytes", test_hdma_chain_bytes);
    qtest_add_func("/lanai/migration/corrupt", test_migration_corrupt);
    qtest_add_func("/lanai/migration/corrupt-firmware",
                   test_migration_corrupt_firmware);
    qtest_add_func("/lanai/migration/corrupt-fw-tables",
                   test_migration_corrupt_fw_tables);
    return g_test_run();
}
