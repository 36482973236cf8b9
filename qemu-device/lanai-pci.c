/*
 * LANai: an emulated Myrinet LANai 9 PCI NIC running netvm's firmware.
 * QOM and PCI glue: properties, realize/exit, reset, migration.  The
 * engines live in their own files (see lanai.h).
 *
 * BAR0 registers, BAR1 MSI-X, BAR2 SRAM (RAM-backed), BAR4 doorbells.
 * docs/hardware.md describes the device as a driver developer sees it.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qemu/error-report.h"
#include "qemu/module.h"
#include "qemu/timer.h"
#include "qemu/units.h"
#include "hw/pci/msix.h"
#include "hw/pci/pci.h"
#include "hw/qdev-properties.h"
#include "migration/vmstate.h"
#include "system/runstate.h"
#include "lanai.h"
#include "trace.h"

/* Engines that wait while the VM is stopped go on when it runs. */
static void lanai_vm_state(void *opaque, bool running, RunState state)
{
    LanaiState *s = opaque;

    lanai_wire_vm_state(s, running, state);
    lanai_selftest_vm_state(s, running);
}

static void lanai_realize(PCIDevice *pci, Error **errp)
{
    LanaiState *s = LANAI(pci);
    DeviceState *dev = DEVICE(pci);

    if (s->sram_size < LANAI_SRAM_MIN || s->sram_size > LANAI_SRAM_MAX ||
        !is_power_of_2(s->sram_size)) {
        error_setg(errp, "lanai: sram-size must be a power of two from "
                   "512K to 8M, not %u", s->sram_size);
        return;
    }
    if (s->node_id > 0xfffe) {
        error_setg(errp, "lanai: node-id must be below 65535");
        return;
    }
    if (s->yield_wait_us > LANAI_YIELD_WAIT_MAX_US) {
        error_setg(errp, "lanai: yield-wait-us must be at most %u, not %u",
                   LANAI_YIELD_WAIT_MAX_US, s->yield_wait_us);
        return;
    }
    if (!lanai_linkauth_realize(s, errp)) {
        return;
    }
    /* its sockets before anything is registered: a failure leaves none */
    if (!lanai_linksock_realize(s, errp)) {
        return;
    }

    pci->config[PCI_INTERRUPT_PIN] = 1;

    memory_region_init_io(&s->regs, OBJECT(s), &lanai_regs_ops, s,
                          "lanai.regs", LANAI_REGS_SIZE);
    pci_register_bar(pci, LANAI_BAR_REGS, PCI_BASE_ADDRESS_SPACE_MEMORY,
                     &s->regs);

    if (!memory_region_init_ram(&s->sram, OBJECT(s), "lanai.sram",
                                s->sram_size, errp)) {
        lanai_linksock_free(s);
        return;
    }
    pci_register_bar(pci, LANAI_BAR_SRAM, PCI_BASE_ADDRESS_SPACE_MEMORY |
                     PCI_BASE_ADDRESS_MEM_PREFETCH, &s->sram);

    memory_region_init_io(&s->doorbell, OBJECT(s), &lanai_doorbell_ops, s,
                          "lanai.doorbell", LANAI_DOORBELL_SIZE);
    pci_register_bar(pci, LANAI_BAR_DOORBELL, PCI_BASE_ADDRESS_SPACE_MEMORY,
                     &s->doorbell);

    if (msix_init_exclusive_bar(pci, LANAI_MSIX_COUNT, LANAI_BAR_MSIX,
                                errp)) {
        lanai_linksock_free(s);
        return;
    }
    for (unsigned i = 0; i < LANAI_MSIX_COUNT; i++) {
        msix_vector_use(pci, i);
    }

    s->nic = qemu_new_nic(&lanai_net_info, &s->conf,
                          object_get_typename(OBJECT(s)), dev->id,
                          &dev->mem_reentrancy_guard, s);
    qemu_format_nic_info_str(qemu_get_queue(s->nic), s->conf.macaddr.a);

    /* engines run from bottom halves guarded against DMA re-entry */
    s->fw_bh = qemu_bh_new_guarded(lanai_fw_bh, s, &dev->mem_reentrancy_guard);
    s->hdma_bh = qemu_bh_new_guarded(lanai_hdma_bh, s,
                                     &dev->mem_reentrancy_guard);
    s->send_bh = qemu_bh_new_guarded(lanai_send_bh, s,
                                     &dev->mem_reentrancy_guard);
    s->st_bh = qemu_bh_new_guarded(lanai_selftest_bh, s,
                                   &dev->mem_reentrancy_guard);
    s->vm_state = qemu_add_vm_change_state_handler(lanai_vm_state, s);
    lanai_timers_init(s);
    s->link_timer = timer_new_ms(QEMU_CLOCK_VIRTUAL, lanai_link_timer, s);
    timer_mod(s->link_timer, qemu_clock_get_ms(QEMU_CLOCK_VIRTUAL) +
              LANAI_LINK_POLL_MS);

    lanai_fw_init(s);
    lanai_yield_init(s);
    lanai_linksock_start(s);    /* last: it runs the firmware and timers */
}

static void lanai_exit(PCIDevice *pci)
{
    LanaiState *s = LANAI(pci);

    lanai_linksock_stop(s);         /* first: its thread uses the rest */
    lanai_yield_exit(s);
    qemu_del_vm_change_state_handler(s->vm_state);
    timer_free(s->link_timer);
    lanai_timers_free(s);
    lanai_linksock_free(s);         /* after the timers on its list */
    qemu_bh_delete(s->fw_bh);
    qemu_bh_delete(s->hdma_bh);
    qemu_bh_delete(s->send_bh);
    qemu_bh_delete(s->st_bh);
    qemu_del_nic(s->nic);
    msix_uninit_exclusive_bar(pci);
}

static void lanai_reset(DeviceState *dev)
{
    LanaiState *s = LANAI(dev);

    lanai_fw_reset(s);
    lanai_regs_reset(s);
    lanai_evq_reset(s);
    lanai_selftest_reset(s);
    s->errors = 0;
    s->link = lanai_link_state(s);
}

static int lanai_post_load(void *opaque, int version_id)
{
    LanaiState *s = opaque;
    const char *what;

    if (!lanai_load_ok(s, &what)) {
        trace_lanai_err_load(what);
        error_report("lanai: migration stream refused: %s is false", what);
        return -EINVAL;
    }
    /* the chip binding is not migrated: rebind it, resume engines */
    s->fw.chip = &s->chip;
    if (s->hdma_busy) {
        qemu_bh_schedule(s->hdma_bh);
    }
    lanai_linksock_reset(s);        /* a frame sent in part: not ours now */
    if (s->send_busy) {
        s->send_queued = false;     /* resend: the net queue was not saved */
        qemu_bh_schedule(s->send_bh);
    }
    if (s->st_status == NVM_ST_STATUS_BUSY) {
        qemu_bh_schedule(s->st_bh);
    }
    lanai_timers_post_load(s);
    lanai_fw_kick(s);
    lanai_linksock_kick(s);
    return 0;
}

static const VMStateDescription vmstate_lanai_event = {
    .name = "lanai/event",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT8(type, struct nvm_event),
        VMSTATE_UINT8(flags, struct nvm_event),
        VMSTATE_UINT16(endpoint, struct nvm_event),
        VMSTATE_UINT32(data, struct nvm_event),
        VMSTATE_UINT64(arg, struct nvm_event),
        VMSTATE_END_OF_LIST()
    },
};

static const VMStateDescription vmstate_lanai_doorbell = {
    .name = "lanai/doorbell",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32(offset, LanaiDoorbell),
        VMSTATE_UINT32(data, LanaiDoorbell),
        VMSTATE_END_OF_LIST()
    },
};

/*
 * The firmware keeps all its state in struct fw as plain integers and
 * arrays (no pointers past the chip binding), so it travels as one block.
 */
static const VMStateDescription vmstate_lanai_fw = {
    .name = "lanai/firmware",
    /*
     * 4: tripwires; 5: U-Net; 6: DSM; 7: tx_desc; 8: pageable U-Net; 9: arm;
     * 10: U-Net overflow control; 11: Ethernet (and a longer SRAM layout);
     * 12: U-Net endpoint and send states (enums in place of flag words);
     * 13: Ethernet offloads (checksum, scatter-gather)
     */
    .version_id = 13,
    .minimum_version_id = 13,
    .fields = (const VMStateField[]) {
        VMSTATE_BUFFER_UNSAFE(state, struct fw, 0, FW_SAVED_SIZE),
        VMSTATE_END_OF_LIST()
    },
};

static const VMStateDescription vmstate_lanai = {
    .name = TYPE_LANAI,
    .version_id = 10,
    .minimum_version_id = 10,
    .post_load = lanai_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_PCI_DEVICE(parent_obj, LanaiState),
        VMSTATE_MSIX(parent_obj, LanaiState),
        VMSTATE_UINT32(isr, LanaiState),
        VMSTATE_UINT32(eimr, LanaiState),
        VMSTATE_UINT32(cpuc, LanaiState),
        VMSTATE_UINT32(myrinet, LanaiState),
        VMSTATE_UINT32(led, LanaiState),
        VMSTATE_UINT32(scratch, LanaiState),
        VMSTATE_UINT32(errors, LanaiState),
        VMSTATE_INT64(rtc_base_ns, LanaiState),
        VMSTATE_BOOL(irq_level, LanaiState),
        VMSTATE_UINT32(link, LanaiState),
        VMSTATE_INT64_ARRAY(it_deadline, LanaiState, 3),
        VMSTATE_UINT32(fw_state, LanaiState),
        VMSTATE_UINT32(fw_version, LanaiState),
        VMSTATE_UINT32(layout_off, LanaiState),
        VMSTATE_UINT64(evq_base, LanaiState),
        VMSTATE_UINT32(evq_len, LanaiState),
        VMSTATE_UINT32(evq_prod, LanaiState),
        VMSTATE_UINT32(evq_cons, LanaiState),
        VMSTATE_UINT32(evq_lost, LanaiState),
        VMSTATE_STRUCT_ARRAY(backlog, LanaiState, LANAI_EV_BACKLOG, 1,
                             vmstate_lanai_event, struct nvm_event),
        VMSTATE_UINT32(backlog_head, LanaiState),
        VMSTATE_UINT32(backlog_count, LanaiState),
        VMSTATE_STRUCT_ARRAY(db, LanaiState, LANAI_DB_DEPTH, 1,
                             vmstate_lanai_doorbell, LanaiDoorbell),
        VMSTATE_UINT32(db_head, LanaiState),
        VMSTATE_UINT32(db_count, LanaiState),
        VMSTATE_UINT32(db_overflows, LanaiState),
        VMSTATE_BOOL(db_overflow, LanaiState),
        VMSTATE_BOOL(hdma_busy, LanaiState),
        VMSTATE_UINT32(hdma_desc, LanaiState),
        VMSTATE_UINT32(hdma_chains, LanaiState),
        VMSTATE_BOOL(send_busy, LanaiState),
        VMSTATE_UINT32(send_off, LanaiState),
        VMSTATE_UINT32(send_len, LanaiState),
        VMSTATE_UINT32(send_count, LanaiState),
        VMSTATE_BOOL(rx_enabled, LanaiState),
        VMSTATE_UINT32(rx_ring, LanaiState),
        VMSTATE_UINT32(rx_slots, LanaiState),
        VMSTATE_UINT32(rx_slot_size, LanaiState),
        VMSTATE_UINT32(rx_next, LanaiState),
        VMSTATE_UINT32(rx_count, LanaiState),
        VMSTATE_UINT32(rx_crc_errors, LanaiState),
        VMSTATE_UINT32(rx_oversize, LanaiState),
        VMSTATE_UINT64(st_addr, LanaiState),
        VMSTATE_UINT32(st_len, LanaiState),
        VMSTATE_UINT32(st_seed, LanaiState),
        VMSTATE_UINT32(st_cmd, LanaiState),
        VMSTATE_UINT32(st_status, LanaiState),
        VMSTATE_STRUCT(fw, LanaiState, 3, vmstate_lanai_fw, struct fw),
        VMSTATE_END_OF_LIST()
    },
};

static const Property lanai_properties[] = {
    DEFINE_NIC_PROPERTIES(LanaiState, conf),
    DEFINE_PROP_UINT32("sram-size", LanaiState, sram_size,
                       LANAI_SRAM_DEFAULT),
    DEFINE_PROP_UINT32("node-id", LanaiState, node_id, 0),
    DEFINE_PROP_UINT32("peer-node", LanaiState, peer_node, LANAI_PEER_ANY),
    DEFINE_PROP_BOOL("doorbell-inline", LanaiState, doorbell_inline, true),
    DEFINE_PROP_UINT32("yield-wait-us", LanaiState, yield_wait_us, 0),
    DEFINE_PROP_STRING("link-socket", LanaiState, link_socket),
    DEFINE_PROP_BOOL("link-listen", LanaiState, link_listen, false),
    DEFINE_PROP_STRING("link-inject", LanaiState, link_inject),
};

static void lanai_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    PCIDeviceClass *k = PCI_DEVICE_CLASS(klass);

    k->realize = lanai_realize;
    k->exit = lanai_exit;
    k->vendor_id = LANAI_PCI_VENDOR_ID;
    k->device_id = LANAI_PCI_DEVICE_ID;
    k->revision = LANAI_PCI_REVISION;
    k->class_id = PCI_CLASS_NETWORK_OTHER;
    dc->desc = "Myrinet LANai 9 NIC running netvm firmware";
    set_bit(DEVICE_CATEGORY_NETWORK, dc->categories);
    device_class_set_legacy_reset(dc, lanai_reset);
    device_class_set_props(dc, lanai_properties);
    dc->vmsd = &vmstate_lanai;
    lanai_linkauth_class_init(klass);
}

static const TypeInfo lanai_types[] = {
    {
        .name = TYPE_LANAI,
        .parent = TYPE_PCI_DEVICE,
        .instance_size = sizeof(LanaiState),
        .class_init = lanai_class_init,
        .interfaces = (InterfaceInfo[]) {
            { INTERFACE_CONVENTIONAL_PCI_DEVICE },
            { },
        },
    },
};

DEFINE_TYPES(lanai_types)
