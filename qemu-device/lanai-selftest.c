/*
 * LANai: self-test engine (after rocker's test registers).  The driver
 * asks for a pattern to be written to a host buffer, or for a buffer to be
 * read, inverted and written back, so DMA and interrupt wiring are checked
 * at probe before any firmware runs.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "hw/pci/pci.h"
#include "lanai.h"
#include "trace.h"

void lanai_selftest_bh(void *opaque)
{
    LanaiState *s = opaque;
    PCIDevice *pci = PCI_DEVICE(s);
    g_autofree uint8_t *buf = NULL;
    MemTxResult res = MEMTX_OK;
    uint32_t i;

    if (s->st_status != NVM_ST_STATUS_BUSY) {
        return;
    }
    buf = g_malloc(s->st_len);
    switch (s->st_cmd) {
    case NVM_ST_CMD_FILL:
        for (i = 0; i < s->st_len; i++) {
            buf[i] = nvm_st_pattern(s->st_seed, i);
        }
        res = pci_dma_write(pci, s->st_addr, buf, s->st_len);
        break;
    case NVM_ST_CMD_INVERT:
        res = pci_dma_read(pci, s->st_addr, buf, s->st_len);
        if (res == MEMTX_OK) {
            for (i = 0; i < s->st_len; i++) {
                buf[i] = ~buf[i];
            }
            res = pci_dma_write(pci, s->st_addr, buf, s->st_len);
        }
        break;
    }
    if (res != MEMTX_OK) {
        lanai_guest_error(s, "self-test DMA at 0x%" PRIx64 " len %u refused",
                          s->st_addr, s->st_len);
        s->st_status = NVM_ST_STATUS_ERROR;
    } else {
        s->st_status = NVM_ST_STATUS_DONE;
    }
    trace_lanai_selftest(s->st_cmd, s->st_status);
}

void lanai_selftest_start(LanaiState *s, uint32_t cmd)
{
    s->st_cmd = cmd;
    if (s->st_status == NVM_ST_STATUS_BUSY) {
        lanai_guest_error(s, "self-test command %u while busy", cmd);
        return;
    }
    if ((cmd != NVM_ST_CMD_FILL && cmd != NVM_ST_CMD_INVERT) ||
        !s->st_len || s->st_len > NVM_ST_MAX_LEN) {
        lanai_guest_error(s, "self-test command %u, length %u: refused",
                          cmd, s->st_len);
        s->st_status = NVM_ST_STATUS_ERROR;
        return;
    }
    s->st_status = NVM_ST_STATUS_BUSY;
    qemu_bh_schedule(s->st_bh);
}

void lanai_selftest_reset(LanaiState *s)
{
    s->st_addr = 0;
    s->st_len = 0;
    s->st_seed = 0;
    s->st_cmd = 0;
    s->st_status = NVM_ST_STATUS_IDLE;
}
