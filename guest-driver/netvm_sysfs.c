// SPDX-License-Identifier: GPL-2.0-only
/*
 * netvm.ko: sysfs attributes of /sys/class/netvm/netvmN.
 *
 * The attributes exist only between cdev_device_add() and
 * cdev_device_del(), while the BARs are mapped, so reading a register
 * from a show() callback is safe.
 */
#include <linux/device.h>
#include <linux/sysfs.h>

#include "netvm.h"

static struct netvm_dev *to_netvm(struct device *dev)
{
	return container_of(dev, struct netvm_dev, dev);
}

static ssize_t node_id_show(struct device *dev, struct device_attribute *attr,
			    char *buf)
{
	return sysfs_emit(buf, "%u\n", to_netvm(dev)->node_id);
}
static DEVICE_ATTR_RO(node_id);

static ssize_t link_state_show(struct device *dev,
			       struct device_attribute *attr, char *buf)
{
	u32 link = netvm_rd(to_netvm(dev), NVM_REG_LINK);

	return sysfs_emit(buf, "%s\n", (link & NVM_LINK_UP) ? "up" : "down");
}
static DEVICE_ATTR_RO(link_state);

static ssize_t fw_version_show(struct device *dev,
			       struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "0x%08x\n", to_netvm(dev)->fw_version);
}
static DEVICE_ATTR_RO(fw_version);

static ssize_t abi_version_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "0x%08x\n", to_netvm(dev)->abi_version);
}
static DEVICE_ATTR_RO(abi_version);

static ssize_t sram_size_show(struct device *dev,
			      struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", to_netvm(dev)->sram_size);
}
static DEVICE_ATTR_RO(sram_size);

static ssize_t selftest_show(struct device *dev, struct device_attribute *attr,
			     char *buf)
{
	return sysfs_emit(buf, "%s\n",
			  to_netvm(dev)->selftest_passed ? "passed" : "failed");
}
static DEVICE_ATTR_RO(selftest);

static const char * const netvm_fw_state_names[] = {
	[NVM_FW_HALTED] = "halted",
	[NVM_FW_BOOTING] = "booting",
	[NVM_FW_READY] = "ready",
	[NVM_FW_FAULT] = "fault",
};

static ssize_t fw_state_show(struct device *dev, struct device_attribute *attr,
			     char *buf)
{
	u32 st = netvm_rd(to_netvm(dev), NVM_REG_FW_STATE);

	if (st < ARRAY_SIZE(netvm_fw_state_names))
		return sysfs_emit(buf, "%s\n", netvm_fw_state_names[st]);
	return sysfs_emit(buf, "%u\n", st);
}
static DEVICE_ATTR_RO(fw_state);

/* Counters: one show() for all, the attribute says which counter. */
struct netvm_counter_attr {
	struct device_attribute dattr;
	size_t offset;		/* of an atomic64_t in struct netvm_stats */
};

static ssize_t netvm_counter_show(struct device *dev,
				  struct device_attribute *attr, char *buf)
{
	const struct netvm_counter_attr *ca =
		container_of(attr, struct netvm_counter_attr, dattr);
	atomic64_t *ctr = (void *)&to_netvm(dev)->stats + ca->offset;

	return sysfs_emit(buf, "%lld\n", atomic64_read(ctr));
}

static struct netvm_counter_attr netvm_counters[] = {
	{ __ATTR(raw_tx, 0444, netvm_counter_show, NULL),
	  offsetof(struct netvm_stats, raw_tx) },
	{ __ATTR(raw_tx_errors, 0444, netvm_counter_show, NULL),
	  offsetof(struct netvm_stats, raw_tx_errors) },
	{ __ATTR(raw_rx, 0444, netvm_counter_show, NULL),
	  offsetof(struct netvm_stats, raw_rx) },
	{ __ATTR(raw_rx_dropped, 0444, netvm_counter_show, NULL),
	  offsetof(struct netvm_stats, raw_rx_dropped) },
	{ __ATTR(raw_rx_errors, 0444, netvm_counter_show, NULL),
	  offsetof(struct netvm_stats, raw_rx_errors) },
	{ __ATTR(events, 0444, netvm_counter_show, NULL),
	  offsetof(struct netvm_stats, events) },
	{ __ATTR(errors, 0444, netvm_counter_show, NULL),
	  offsetof(struct netvm_stats, errors) },
	{ __ATTR(other_events, 0444, netvm_counter_show, NULL),
	  offsetof(struct netvm_stats, other_events) },
};

static struct attribute *netvm_attrs[] = {
	&dev_attr_node_id.attr,
	&dev_attr_link_state.attr,
	&dev_attr_fw_version.attr,
	&dev_attr_abi_version.attr,
	&dev_attr_sram_size.attr,
	&dev_attr_selftest.attr,
	&dev_attr_fw_state.attr,
	&netvm_counters[0].dattr.attr,
	&netvm_counters[1].dattr.attr,
	&netvm_counters[2].dattr.attr,
	&netvm_counters[3].dattr.attr,
	&netvm_counters[4].dattr.attr,
	&netvm_counters[5].dattr.attr,
	&netvm_counters[6].dattr.attr,
	&netvm_counters[7].dattr.attr,
	NULL,
};

static const struct attribute_group netvm_attr_group = {
	.attrs = netvm_attrs,
};

const struct attribute_group *netvm_attr_groups[] = {
	&netvm_attr_group,
	NULL,
};
