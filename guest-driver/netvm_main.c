// SPDX-License-Identifier: GPL-2.0-only
/*
 * netvm.ko: PCI probe and remove, BARs, MSI-X, firmware start.
 *
 * Probe order: enable and map the device, check its identity, reset the
 * firmware, set up MSI-X and the event queue, run the self-test (firmware
 * halted), start the firmware, read the SRAM layout it publishes, post the
 * raw receive buffers and finally create /dev/netvmN and its sysfs node.
 * Remove undoes it in reverse and leaves the NIC halted.
 */
#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/interrupt.h>
#include <linux/io.h>
#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/slab.h>

#include "netvm_drv.h"

#define NETVM_BARS	(BIT(LANAI_BAR_REGS) | BIT(LANAI_BAR_SRAM) | \
			 BIT(LANAI_BAR_DOORBELL))

static const struct pci_device_id netvm_pci_ids[] = {
	{ PCI_DEVICE(LANAI_PCI_VENDOR_ID, LANAI_PCI_DEVICE_ID) },
	{ }
};
MODULE_DEVICE_TABLE(pci, netvm_pci_ids);

/* Halt the firmware and stop every source of DMA and interrupts. */
static void netvm_hw_quiesce(struct netvm_dev *nd)
{
	netvm_wr(nd, LANAI_REG_EIMR, 0);
	netvm_wr(nd, LANAI_REG_CPUC, 0);
	netvm_evq_stop(nd);
	netvm_wr(nd, LANAI_REG_ISR, LANAI_ISR_HOST_W1C);
}

static int netvm_wait_fw_state(struct netvm_dev *nd, u32 want,
			       unsigned int timeout_ms)
{
	unsigned long deadline = jiffies + msecs_to_jiffies(timeout_ms);
	u32 state;

	for (;;) {
		state = netvm_rd(nd, NVM_REG_FW_STATE);
		if (state == want)
			return 0;
		if (state == NVM_FW_FAULT)
			return -EIO;
		if (time_after(jiffies, deadline))
			return -ETIMEDOUT;
		usleep_range(500, 1000);
	}
}

static int netvm_read_layout(struct netvm_dev *nd)
{
	struct nvm_sram_layout *l = &nd->layout;
	u32 off = netvm_rd(nd, NVM_REG_LAYOUT_OFF);
	struct device *dev = &nd->pdev->dev;

	if (off > nd->sram_len || nd->sram_len - off < sizeof(*l)) {
		dev_err(dev, "SRAM layout offset %#x outside SRAM\n", off);
		return -EIO;
	}
	memcpy_fromio(l, nd->sram + off, sizeof(*l));
	if (l->magic != NVM_LAYOUT_MAGIC) {
		dev_err(dev, "bad SRAM layout magic %#x\n", l->magic);
		return -EIO;
	}
	if (l->version != NVM_LAYOUT_VERSION) {
		dev_err(dev, "unsupported SRAM layout version %u\n", l->version);
		return -EIO;
	}
	return 0;
}

static int netvm_start_firmware(struct netvm_dev *nd)
{
	struct device *dev = &nd->pdev->dev;
	int ret;

	netvm_wr(nd, LANAI_REG_EIMR, LANAI_ISR_LINK_DOWN |
		 LANAI_ISR_EV_PAGE_MISS | LANAI_ISR_EV_BOUNCE |
		 LANAI_ISR_EV_NOTIFY | LANAI_ISR_EV_ERROR |
		 LANAI_ISR_EV_DB_OVERFLOW | LANAI_ISR_EV_RAW | LANAI_ISR_EV_FW);
	netvm_wr(nd, LANAI_REG_CPUC, LANAI_CPUC_RUN);

	ret = netvm_wait_fw_state(nd, NVM_FW_READY, NETVM_FW_TIMEOUT_MS);
	if (ret) {
		dev_err(dev, "firmware did not become ready (state %u): %d\n",
			netvm_rd(nd, NVM_REG_FW_STATE), ret);
		return ret;
	}
	WRITE_ONCE(nd->fw_state, NVM_FW_READY);
	return netvm_read_layout(nd);
}

static void netvm_free_irqs(struct netvm_dev *nd)
{
	int i;

	for (i = 0; i < LANAI_MSIX_COUNT; i++) {
		if (nd->irq_requested[i])
			free_irq(pci_irq_vector(nd->pdev, i), nd);
		nd->irq_requested[i] = false;
	}
}

static int netvm_setup_irqs(struct netvm_dev *nd)
{
	struct pci_dev *pdev = nd->pdev;
	int ret;

	ret = pci_alloc_irq_vectors(pdev, LANAI_MSIX_COUNT, LANAI_MSIX_COUNT,
				    PCI_IRQ_MSIX);
	if (ret < 0) {
		dev_err(&pdev->dev, "cannot allocate %d MSI-X vectors: %d\n",
			LANAI_MSIX_COUNT, ret);
		return ret;
	}

	snprintf(nd->irq_names[LANAI_MSIX_EVENTS],
		 sizeof(nd->irq_names[0]), "netvm%d-events", nd->index);
	snprintf(nd->irq_names[LANAI_MSIX_SELFTEST],
		 sizeof(nd->irq_names[0]), "netvm%d-selftest", nd->index);

	ret = request_irq(pci_irq_vector(pdev, LANAI_MSIX_EVENTS),
			  netvm_evq_irq, 0, nd->irq_names[LANAI_MSIX_EVENTS],
			  nd);
	if (ret)
		goto err;
	nd->irq_requested[LANAI_MSIX_EVENTS] = true;

	ret = request_irq(pci_irq_vector(pdev, LANAI_MSIX_SELFTEST),
			  netvm_selftest_irq, 0,
			  nd->irq_names[LANAI_MSIX_SELFTEST], nd);
	if (ret)
		goto err;
	nd->irq_requested[LANAI_MSIX_SELFTEST] = true;
	return 0;

err:
	dev_err(&pdev->dev, "cannot request MSI-X interrupt: %d\n", ret);
	netvm_free_irqs(nd);
	pci_free_irq_vectors(pdev);
	return ret;
}

/*
 * Undo netvm_setup_irqs() and everything after it: halt the NIC first so
 * that it no longer DMAs or interrupts, then free IRQs and memory.
 */
static void netvm_teardown(struct netvm_dev *nd)
{
	netvm_hw_quiesce(nd);
	netvm_free_irqs(nd);
	pci_free_irq_vectors(nd->pdev);
	netvm_import_free(nd);
	netvm_map_free(nd);
	netvm_trip_free(nd);
	netvm_raw_free(nd);
	netvm_ep_free(nd);
	netvm_nv_free(nd);
	netvm_evq_free(nd);
}

static int netvm_check_identity(struct netvm_dev *nd)
{
	struct device *dev = &nd->pdev->dev;
	u32 id = netvm_rd(nd, NVM_REG_ID);
	u32 ver = netvm_rd(nd, NVM_REG_VERSION);

	if (id != NVM_ID_MAGIC) {
		dev_err(dev, "bad device id %#x (want %#x)\n", id, NVM_ID_MAGIC);
		return -ENODEV;
	}
	if ((ver >> 16) != (NVM_ABI_VERSION >> 16)) {
		dev_err(dev, "unsupported ABI version %u.%u (driver %u.%u)\n",
			ver >> 16, ver & 0xffff, NVM_ABI_VERSION >> 16,
			NVM_ABI_VERSION & 0xffff);
		return -ENODEV;
	}
	nd->abi_version = ver;
	return 0;
}

/* Enable the device and map its three BARs, checking their sizes. */
static int netvm_map_bars(struct netvm_dev *nd)
{
	struct pci_dev *pdev = nd->pdev;
	void __iomem * const *bars;
	int ret;

	ret = pcim_enable_device(pdev);
	if (ret)
		return ret;
	ret = pcim_iomap_regions(pdev, NETVM_BARS, NETVM_DRV_NAME);
	if (ret) {
		dev_err(&pdev->dev, "cannot map BARs: %d\n", ret);
		return ret;
	}
	bars = pcim_iomap_table(pdev);
	nd->regs = bars[LANAI_BAR_REGS];
	nd->sram = bars[LANAI_BAR_SRAM];
	nd->db = bars[LANAI_BAR_DOORBELL];
	nd->sram_len = pci_resource_len(pdev, LANAI_BAR_SRAM);
	if (pci_resource_len(pdev, LANAI_BAR_REGS) < LANAI_REGS_SIZE ||
	    pci_resource_len(pdev, LANAI_BAR_DOORBELL) < LANAI_DOORBELL_PAGE) {
		dev_err(&pdev->dev, "BARs too small\n");
		return -ENODEV;
	}
	return 0;
}

/* Our device and ABI, 64-bit DMA, bus master, and a halted, reset NIC. */
static int netvm_prepare_hw(struct netvm_dev *nd)
{
	struct pci_dev *pdev = nd->pdev;
	int ret;

	ret = netvm_check_identity(nd);
	if (ret)
		return ret;
	ret = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64));
	if (ret) {
		dev_err(&pdev->dev, "no usable 64-bit DMA: %d\n", ret);
		return ret;
	}
	pci_set_master(pdev);

	/* Start from a halted, freshly reset NIC whatever ran before. */
	netvm_wr(nd, LANAI_REG_CPUC, LANAI_CPUC_RESET);
	netvm_hw_quiesce(nd);
	return 0;
}

/*
 * With IRQs set up: the event queue, the self-test (firmware halted),
 * then the firmware, and what it tells about the NIC.
 */
static int netvm_start_nic(struct netvm_dev *nd)
{
	int ret;

	ret = netvm_evq_init(nd);
	if (ret)
		return ret;
	ret = netvm_selftest(nd);
	if (ret)
		return ret;
	nd->selftest_passed = true;
	ret = netvm_start_firmware(nd);
	if (ret)
		return ret;
	nd->node_id = netvm_rd(nd, NVM_REG_NODE_ID);
	nd->fw_version = netvm_rd(nd, NVM_REG_FW_VERSION);
	nd->sram_size = netvm_rd(nd, NVM_REG_SRAM_SIZE);
	WRITE_ONCE(nd->link, netvm_rd(nd, NVM_REG_LINK));
	return 0;
}

/* With the firmware running: the services built on it, in order. */
static int netvm_start_services(struct netvm_dev *nd)
{
	int ret;

	netvm_unet_dev_init(nd);
	ret = netvm_import_init(nd);
	if (ret)
		return ret;
	ret = netvm_map_init(nd);
	if (ret)
		return ret;
	ret = netvm_trip_init(nd);
	if (ret)
		return ret;
	ret = netvm_raw_init(nd);
	if (ret)
		return ret;

	/* NetVM: off (logged) when the firmware or SRAM cannot have it */
	ret = netvm_nv_init(nd);
	if (ret)
		return ret;
	return netvm_ep_init(nd);
}

/* Create /dev/netvmN and its sysfs and debugfs entries. */
static int netvm_publish(struct netvm_dev *nd)
{
	struct pci_dev *pdev = nd->pdev;
	int ret;

	ret = cdev_device_add(&nd->cdev, &nd->dev);
	if (ret) {
		dev_err(&pdev->dev, "cannot add /dev/%s: %d\n",
			dev_name(&nd->dev), ret);
		return ret;
	}
	netvm_obs_add(nd);

	dev_info(&pdev->dev,
		 "%s: node %u, firmware %#x, %u KiB SRAM, link %s\n",
		 dev_name(&nd->dev), nd->node_id, nd->fw_version,
		 nd->sram_size / 1024,
		 (nd->link & NVM_LINK_UP) ? "up" : "down");
	return 0;
}

/*
 * Everything from the IRQs to /dev/netvmN; on failure, undone (the
 * character device's index stays reserved for the caller to release).
 */
static int netvm_bring_up(struct netvm_dev *nd)
{
	int ret;

	ret = netvm_setup_irqs(nd);
	if (ret)
		return ret;
	ret = netvm_start_nic(nd);
	if (!ret)
		ret = netvm_start_services(nd);
	if (!ret)
		ret = netvm_publish(nd);
	if (ret)
		netvm_teardown(nd);
	return ret;
}

static int netvm_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct netvm_dev *nd;
	int ret;

	nd = kzalloc(sizeof(*nd), GFP_KERNEL);
	if (!nd)
		return -ENOMEM;
	nd->pdev = pdev;
	nd->index = -1;
	init_rwsem(&nd->lifetime);
	init_completion(&nd->st_irq_done);
	pci_set_drvdata(pdev, nd);

	ret = netvm_map_bars(nd);
	if (!ret)
		ret = netvm_prepare_hw(nd);
	if (ret) {
		pci_set_drvdata(pdev, NULL);
		kfree(nd);
		return ret;
	}

	ret = netvm_chardev_add(nd);	/* reserves the index, not visible yet */
	if (ret) {
		pci_set_drvdata(pdev, NULL);	/* nd is already freed */
		return ret;
	}

	ret = netvm_bring_up(nd);
	if (ret) {
		pci_clear_master(pdev);
		pci_set_drvdata(pdev, NULL);
		netvm_chardev_del(nd);	/* drops the last reference: frees nd */
	}
	return ret;
}

static void netvm_remove(struct pci_dev *pdev)
{
	struct netvm_dev *nd = pci_get_drvdata(pdev);

	/* No new opens; open files see -ENODEV from now on. */
	cdev_device_del(&nd->cdev, &nd->dev);

	WRITE_ONCE(nd->dead, true);
	netvm_raw_wake_all(nd);
	down_write(&nd->lifetime);	/* wait for running ioctls */
	up_write(&nd->lifetime);
	netvm_obs_del(nd);	/* debugfs readers done; endpoints/ gone */

	netvm_teardown(nd);
	pci_clear_master(pdev);
	pci_set_drvdata(pdev, NULL);
	netvm_chardev_del(nd);
}

static struct pci_driver netvm_pci_driver = {
	.name = NETVM_DRV_NAME,
	.id_table = netvm_pci_ids,
	.probe = netvm_probe,
	.remove = netvm_remove,
};

static int __init netvm_init(void)
{
	int ret;

	ret = netvm_chardev_init();
	if (ret)
		return ret;
	netvm_obs_module_init();
	ret = pci_register_driver(&netvm_pci_driver);
	if (ret) {
		netvm_obs_module_exit();
		netvm_chardev_exit();
	}
	return ret;
}

static void __exit netvm_exit(void)
{
	pci_unregister_driver(&netvm_pci_driver);
	netvm_unet_sched_exit();
	netvm_obs_module_exit();
	netvm_chardev_exit();
}

module_init(netvm_init);
module_exit(netvm_exit);

MODULE_DESCRIPTION("netvm emulated Myrinet/LANai NIC");
MODULE_LICENSE("GPL");
