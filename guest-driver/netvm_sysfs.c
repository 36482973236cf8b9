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

#include <netvm/fw_counters.h>

#include "netvm_drv.h"

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

/* reads of the doorbell pages' yield word (netvm_unet_yield) */
static ssize_t db_yields_show(struct device *dev,
			      struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", netvm_rd(to_netvm(dev),
						 NVM_REG_DB_YIELDS));
}
static DEVICE_ATTR_RO(db_yields);

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

/* NetVM: the kernel test window's physical (bus) address. */
static ssize_t ktest_pa_show(struct device *dev, struct device_attribute *attr,
			     char *buf)
{
	struct netvm_dev *nd = to_netvm(dev);

	if (!nd->nv.enabled)
		return -ENODEV;
	return sysfs_emit(buf, "0x%llx\n", (unsigned long long)nd->nv.ktest_dma);
}
static DEVICE_ATTR_RO(ktest_pa);

static ssize_t nv_state_show(struct device *dev, struct device_attribute *attr,
			     char *buf)
{
	return sysfs_emit(buf, "%s\n", to_netvm(dev)->nv.enabled ? "on" : "off");
}
static DEVICE_ATTR_RO(nv_state);

/* Names of the firmware's counters, in enum fw_counter order (fw_names.c). */
/* the firmware's own list (netvm/fw_counters.h) */
static const char * const netvm_fw_counter_names[] = {
	NVM_FW_COUNTERS(NVM_FW_COUNTER_NAME)
};

/*
 * One "name value" line per firmware counter (read from SRAM) into @buf
 * (PAGE_SIZE bytes); also debugfs netvm/netvmN/fw_counters.
 */
ssize_t netvm_fw_counters_fmt(struct netvm_dev *nd, char *buf)
{
	u32 off = nd->layout.counters, n = nd->layout.counters_len, i;
	int len = 0;

	if (!n || off > nd->sram_len || (nd->sram_len - off) / 4 < n)
		return -ENODEV;
	n = min_t(u32, n, 256);
	for (i = 0; i < n; i++) {
		u32 v = readl(nd->sram + off + i * 4);

		if (i < ARRAY_SIZE(netvm_fw_counter_names))
			len += sysfs_emit_at(buf, len, "%s %u\n",
					     netvm_fw_counter_names[i], v);
		else
			len += sysfs_emit_at(buf, len, "counter%u %u\n", i, v);
	}
	return len;
}

static ssize_t fw_counters_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	return netvm_fw_counters_fmt(to_netvm(dev), buf);
}
static DEVICE_ATTR_RO(fw_counters);

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

/* NetVM events seen (handled by the next issue). */
static ssize_t netvm_nv_counter_show(struct device *dev,
				     struct device_attribute *attr, char *buf);
static struct device_attribute netvm_nv_counters[] = {
	__ATTR(nv_page_misses, 0444, netvm_nv_counter_show, NULL),
	__ATTR(nv_bounces, 0444, netvm_nv_counter_show, NULL),
	__ATTR(nv_notifications, 0444, netvm_nv_counter_show, NULL),
};

static ssize_t netvm_nv_counter_show(struct device *dev,
				     struct device_attribute *attr, char *buf)
{
	struct netvm_nv *nv = &to_netvm(dev)->nv;
	atomic64_t *c[] = { &nv->ev_page_miss, &nv->ev_bounce, &nv->ev_notify };
	size_t i = attr - netvm_nv_counters;

	if (i >= ARRAY_SIZE(c))
		return -EINVAL;
	return sysfs_emit(buf, "%lld\n", atomic64_read(c[i]));
}

static struct attribute *netvm_attrs[] = {
	&dev_attr_node_id.attr,
	&dev_attr_link_state.attr,
	&dev_attr_db_yields.attr,
	&dev_attr_fw_version.attr,
	&dev_attr_abi_version.attr,
	&dev_attr_sram_size.attr,
	&dev_attr_selftest.attr,
	&dev_attr_fw_state.attr,
	&dev_attr_ktest_pa.attr,
	&dev_attr_nv_state.attr,
	&dev_attr_fw_counters.attr,
	&dev_attr_mapper.attr,
	&dev_attr_tripwires.attr,
	&dev_attr_routes.attr,
	&dev_attr_ep_counters.attr,
	&netvm_nv_counters[0].attr,
	&netvm_nv_counters[1].attr,
	&netvm_nv_counters[2].attr,
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
