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
#include "system/runstate.h"
#include "lanai.h"
#include "trace.h"

bool lanai_selftest_args_ok(uint32_t cmd, uint32_t len)
{
    return (cmd == NVM_ST_CMD_FILL || cmd == NVM_ST_CMD_INVERT) &&
           len && len <= NVM_ST_MAX_LEN;
}

void lanai_selftest_bh(void *opaque)
{
    LanaiState *s = opaque;
    PCIDevice *pci = PCI_DEVICE(s);
    uint8_t buf[NVM_ST_MAX_LEN];
    /*
     * The argument registers stay writable while the test is busy (a
     * vCPU can write ST_LEN between ST_CMD and this bottom half), and a
     * migration stream sets them: they are checked here, on a copy.
     */
    uint64_t addr = s->st_addr;
    uint32_t len = s->st_len;
    uint32_t seed = s->st_seed;
    uint32_t cmd = s->st_cmd;
    MemTxResult res = MEMTX_OK;
    uint32_t i;

    if (s->st_status != NVM_ST_STATUS_BUSY) {
        return;
    }
    if (!runstate_is_running()) {
        return;     /* no DMA into a stopped VM; lanai_vm_state resumes */
    }
    if (!lanai_selftest_args_ok(cmd, len)) {
        LANAI_GUEST_ERR(s, lanai_err_selftest_args,
                        "self-test command %u, length %u changed while busy",
                        cmd, len);
        s->st_status = NVM_ST_STATUS_ERROR;
        return;
    }
    switch (cmd) {
    case NVM_ST_CMD_FILL:
        for (i = 0; i < len; i++) {
            buf[i] = nvm_st_pattern(seed, i);
        }
        res = pci_dma_write(pci, addr, buf, len);
        break;
    case NVM_ST_CMD_INVERT:
        res = pci_dma_read(pci, addr, buf, len);
        if (res == MEMTX_OK) {
            for (i = 0; i < len; i++) {
                buf[i] = ~buf[i];
            }
            res = pci_dma_write(pci, addr, buf, len);
        }
        break;
    }
    if (res != MEMTX_OK) {
        lanai_guest_error(s, "self-test DMA at 0x%" PRIx64 " len %u refused",
                          addr, len);
        s->st_status = NVM_ST_STATUS_ERROR;
    } else {
        s->st_status = NVM_ST_STATUS_DONE;
    }
    trace_lanai_selftest(cmd, s->st_status);
}

void lanai_selftest_vm_state(LanaiState *s, bool running)
{
    if (running && s->st_status == NVM_ST_STATUS_BUSY) {
        qemu_bh_schedule(s->st_bh);
    }
}

void lanai_selftest_start(LanaiState *s, uint32_t cmd)
{
    if (s->st_status == NVM_ST_STATUS_BUSY) {
        lanai_guest_error(s, "self-test command %u while busy", cmd);
        return;
    }
    s->st_cmd = cmd;
    if (!lanai_selftest_args_ok(cmd, s->st_len)) {
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
