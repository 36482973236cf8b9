/*
 * LANai: the host DMA engine.  Walks a chain of LANai 9 style descriptors
 * in SRAM, moving data between host memory and SRAM in either direction.
 * It runs from its own bottom half, or, for a chain the firmware started,
 * in the firmware's run (lanai-fw.c: a bottom half, a doorbell write or a
 * frame's arrival, the device's re-entrancy guard held).  Every failure
 * (bad host address, SRAM range, looping chain) completes the descriptor
 * with an error status, raises an error event and ends the chain; the
 * chain's end always sets ISR.WAKE0 so the firmware is never left waiting.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "hw/pci/pci.h"
#include "lanai.h"
#include "trace.h"

static void lanai_hdma_error(LanaiState *s, enum nvm_error err, uint64_t arg)
{
    struct nvm_event ev = { .type = NVM_EV_ERROR, .data = err, .arg = arg };

    trace_lanai_hdma_error(err, arg);
    lanai_event_post(s, &ev);
}

/* 16-bit ones' complement sum, as the LANai's DMA checksum unit. */
static uint16_t lanai_csum(const uint8_t *p, uint32_t len)
{
    uint32_t sum = 0;
    uint32_t i;

    for (i = 0; i + 1 < len; i += 2) {
        sum += (uint32_t)p[i] << 8 | p[i + 1];
    }
    if (len & 1) {
        sum += (uint32_t)p[len - 1] << 8;
    }
    while (sum >> 16) {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    return sum;
}

/*
 * Host <-> SRAM through a bounce buffer, a chunk at a time.  The host
 * address may be this device's own SRAM BAR: RAM, which the re-entrancy
 * guard does not cover, so one pci_dma_read/write straight into SRAM
 * would be a memcpy between overlapping ranges of the same block
 * (undefined; AddressSanitizer stops QEMU on it).
 */
static MemTxResult lanai_hdma_copy(PCIDevice *pci, bool e2l, uint64_t host,
                                   uint8_t *sram, uint32_t len)
{
    uint8_t bounce[4096];
    MemTxResult res;
    uint32_t n;

    /*
     * Checked first: a read that fails part-way (unmapped host memory)
     * would leave the chunks before it in the SRAM.
     */
    if (e2l && !dma_memory_valid(pci_get_address_space(pci), host, len,
                                 DMA_DIRECTION_TO_DEVICE,
                                 MEMTXATTRS_UNSPECIFIED)) {
        return MEMTX_DECODE_ERROR;
    }
    for (uint32_t done = 0; done < len; done += n) {
        n = MIN(len - done, sizeof(bounce));
        if (e2l) {
            res = pci_dma_read(pci, host + done, bounce, n);
            if (res != MEMTX_OK) {
                return res;
            }
            memcpy(sram + done, bounce, n);
        } else {
            memcpy(bounce, sram + done, n);
            res = pci_dma_write(pci, host + done, bounce, n);
            if (res != MEMTX_OK) {
                return res;
            }
        }
    }
    return MEMTX_OK;
}

static uint32_t lanai_hdma_one(LanaiState *s, uint32_t off,
                               struct lanai_dma_desc *d)
{
    PCIDevice *pci = PCI_DEVICE(s);
    uint8_t *sram = memory_region_get_ram_ptr(&s->sram);
    uint64_t host = (uint64_t)d->eah << 32 | d->eal;
    bool e2l = d->next & LANAI_DMA_E2L;
    MemTxResult res;

    if (d->lar > s->sram_size || d->len > s->sram_size - d->lar) {
        lanai_hdma_error(s, NVM_ERR_SRAM_RANGE, d->lar);
        return NVM_DMA_ST_ERR_SRAM;
    }
    trace_lanai_hdma_desc(off, e2l, d->len, d->lar, host);
    if (!d->len) {
        return NVM_DMA_ST_DONE;
    }
    res = lanai_hdma_copy(pci, e2l, host, sram + d->lar, d->len);
    if (res != MEMTX_OK) {
        lanai_guest_error(s, "host DMA %s 0x%" PRIx64 " len %u refused",
                          e2l ? "from" : "to", host, d->len);
        lanai_hdma_error(s, NVM_ERR_HOST_DMA, host);
        return NVM_DMA_ST_ERR_HOST;
    }
    if (e2l) {
        d->csum[0] = lanai_csum(sram + d->lar, d->len);
    }
    return NVM_DMA_ST_DONE;
}

void lanai_hdma_bh(void *opaque)
{
    LanaiState *s = opaque;
    uint8_t *sram = memory_region_get_ram_ptr(&s->sram);
    uint32_t off = s->hdma_desc;
    uint32_t moved = 0;     /* bytes, at most s->sram_size */
    unsigned n;

    if (!s->hdma_busy) {
        return;
    }
    for (n = 0; n < LANAI_DMA_MAX_CHAIN; n++) {
        struct lanai_dma_desc d;

        if ((off & 7) || off > s->sram_size ||
            sizeof(d) > s->sram_size - off) {
            lanai_hdma_error(s, NVM_ERR_SRAM_RANGE, off);
            break;
        }
        memcpy(&d, sram + off, sizeof(d));
        /*
         * A chain moves at most SRAM's size in all (the firmware's move
         * a few KiB): 1024 descriptors of a whole SRAM each held the
         * main loop for 1024 times SRAM's size of copying per chain,
         * as often as the guest asks.  (A bad SRAM range is
         * lanai_hdma_one's ERR_SRAM.)
         */
        if (d.lar <= s->sram_size && d.len <= s->sram_size - d.lar &&
            d.len > s->sram_size - moved) {
            LANAI_GUEST_ERR(s, lanai_err_hdma_bytes,
                            "chain at 0x%x moves more than SRAM's size "
                            "(descriptor 0x%x, len %u)",
                            s->hdma_desc, off, d.len);
            lanai_hdma_error(s, NVM_ERR_DMA_CHAIN, off);
            d.status = NVM_DMA_ST_ERR_CHAIN;
            memcpy(sram + off, &d, sizeof(d));
            break;
        }
        moved += d.len;
        d.status = lanai_hdma_one(s, off, &d);
        memcpy(sram + off, &d, sizeof(d));
        if (d.status != NVM_DMA_ST_DONE || (d.next & LANAI_DMA_TERMINAL)) {
            break;
        }
        off = d.next & ~LANAI_DMA_FLAGS;
    }
    if (n == LANAI_DMA_MAX_CHAIN) {
        lanai_hdma_error(s, NVM_ERR_DMA_CHAIN, s->hdma_desc);
    }
    s->hdma_busy = false;
    s->hdma_chains++;
    lanai_landed(s);
    trace_lanai_hdma_done(s->hdma_desc, n);
    lanai_set_isr(s, LANAI_ISR_WAKE0);
    lanai_fw_kick(s);
}

void lanai_hdma_start(LanaiState *s, uint32_t desc)
{
    if (s->hdma_busy) {
        /* a firmware bug, not a guest's: keep going with the first chain */
        trace_lanai_hdma_busy(desc, s->hdma_desc);
        return;
    }
    s->hdma_busy = true;
    s->hdma_desc = desc;
    if (!s->fw_running) {
        qemu_bh_schedule(s->hdma_bh);
    }
}

void lanai_hdma_reset(LanaiState *s)
{
    s->hdma_busy = false;
    s->hdma_desc = 0;
    s->hdma_chains = 0;
}
