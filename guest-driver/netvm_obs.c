// SPDX-License-Identifier: GPL-2.0-only
/*
 * netvm.ko: observability of NetVM endpoints.
 *
 *   /sys/class/netvm/netvmN/endpoints/<port>/{pid,counters,exports}
 *       one directory per open user endpoint, gone when it closes;
 *   /sys/kernel/debug/netvm/netvmN/{pt,endpoints,fw_counters}
 *       the shadow page table as installed, the endpoints, and the
 *       firmware's counters;
 *   /sys/kernel/debug/netvm/netvmN/lock_hold
 *       a test hook (write-only): "PORT" makes the NI keep its lock on
 *       the next page it locks for endpoint PORT (NVM_KOP_LOCK_HOLD),
 *       "release" lets go of it; the page's "lock" in pt shows it.
 *
 * Lifetime: an endpoint's kobject is deleted (kobject_del waits for
 * running show() calls) before the endpoint is freed, so show() never
 * sees a freed endpoint.  The debugfs files are removed before the device
 * is torn down; debugfs waits for running readers.
 */
#include <linux/debugfs.h>
#include <linux/kobject.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/sysfs.h>
#include <linux/uaccess.h>

#include "netvm_drv.h"

static struct dentry *netvm_debug_root;

/* ---- /sys/class/netvm/netvmN/endpoints/<port>/ ---- */

struct netvm_ep_kobj {
	struct kobject kobj;
	struct netvm_ep *ep;	/* valid until kobject_del() returns */
};

static struct netvm_ep *kobj_ep(struct kobject *kobj)
{
	return container_of(kobj, struct netvm_ep_kobj, kobj)->ep;
}

static ssize_t pid_show(struct kobject *kobj, struct kobj_attribute *attr,
			char *buf)
{
	return sysfs_emit(buf, "%d\n", kobj_ep(kobj)->pid);
}

static ssize_t counters_show(struct kobject *kobj, struct kobj_attribute *attr,
			     char *buf)
{
	return netvm_ep_counters_fmt(kobj_ep(kobj), buf);
}

static ssize_t exports_show(struct kobject *kobj, struct kobj_attribute *attr,
			    char *buf)
{
	return netvm_ep_exports_fmt(kobj_ep(kobj), buf);
}

static struct kobj_attribute netvm_ep_attr_pid = __ATTR_RO(pid);
static struct kobj_attribute netvm_ep_attr_counters = __ATTR_RO(counters);
static struct kobj_attribute netvm_ep_attr_exports = __ATTR_RO(exports);

static struct attribute *netvm_ep_attrs[] = {
	&netvm_ep_attr_pid.attr,
	&netvm_ep_attr_counters.attr,
	&netvm_ep_attr_exports.attr,
	NULL,
};
ATTRIBUTE_GROUPS(netvm_ep);

static void netvm_ep_kobj_release(struct kobject *kobj)
{
	kfree(container_of(kobj, struct netvm_ep_kobj, kobj));
}

static const struct kobj_type netvm_ep_ktype = {
	.release = netvm_ep_kobj_release,
	.sysfs_ops = &kobj_sysfs_ops,
	.default_groups = netvm_ep_groups,
};

/* After the endpoint is in eps.ep[]; a failure only loses the directory. */
void netvm_obs_ep_add(struct netvm_ep *ep)
{
	struct kobject *dir = ep->nd->eps.ep_dir;
	struct netvm_ep_kobj *ek;

	if (!dir)
		return;
	ek = kzalloc(sizeof(*ek), GFP_KERNEL);
	if (!ek)
		return;
	ek->ep = ep;
	if (kobject_init_and_add(&ek->kobj, &netvm_ep_ktype, dir, "%u",
				 ep->port)) {
		kobject_put(&ek->kobj);
		return;
	}
	ep->kobj = &ek->kobj;
}

/* Before the endpoint is freed: no show() runs on it after this. */
void netvm_obs_ep_del(struct netvm_ep *ep)
{
	if (!ep->kobj)
		return;
	kobject_del(ep->kobj);
	kobject_put(ep->kobj);
	ep->kobj = NULL;
}

/* ---- /sys/kernel/debug/netvm/netvmN/ ---- */

static int pt_show(struct seq_file *m, void *v)
{
	return netvm_ep_pt_show(m, m->private);
}
DEFINE_SHOW_ATTRIBUTE(pt);

static int endpoints_show(struct seq_file *m, void *v)
{
	return netvm_ep_list_show(m, m->private);
}
DEFINE_SHOW_ATTRIBUTE(endpoints);

static int fw_counters_show(struct seq_file *m, void *v)
{
	char *buf = kzalloc(PAGE_SIZE, GFP_KERNEL);
	ssize_t n;

	if (!buf)
		return -ENOMEM;
	n = netvm_fw_counters_fmt(m->private, buf);
	if (n > 0)
		seq_write(m, buf, n);
	kfree(buf);
	return n < 0 ? n : 0;
}
DEFINE_SHOW_ATTRIBUTE(fw_counters);

static ssize_t lock_hold_write(struct file *f, const char __user *ubuf,
			       size_t len, loff_t *pos)
{
	struct netvm_dev *nd = f->private_data;
	u32 port = 0, on = 1;
	char buf[16];
	int ret;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = 0;
	if (sysfs_streq(buf, "release"))
		on = 0;
	else if (kstrtou32(buf, 0, &port) || port > U16_MAX)
		return -EINVAL;
	ret = nv_kcmd(nd, NVM_KOP_LOCK_HOLD, 0, (u16)port, on, 0, NULL, 0);
	return ret ? ret : len;
}

static const struct file_operations lock_hold_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = lock_hold_write,
};

/* After cdev_device_add(): the class device exists. */
void netvm_obs_add(struct netvm_dev *nd)
{
	struct netvm_eps *eps = &nd->eps;

	eps->ep_dir = kobject_create_and_add("endpoints", &nd->dev.kobj);
	if (!eps->ep_dir)
		dev_warn(&nd->pdev->dev, "no endpoints/ directory in sysfs\n");
	if (!netvm_debug_root)
		return;
	eps->debugfs = debugfs_create_dir(dev_name(&nd->dev), netvm_debug_root);
	debugfs_create_file("pt", 0400, eps->debugfs, nd, &pt_fops);
	debugfs_create_file("endpoints", 0400, eps->debugfs, nd,
			    &endpoints_fops);
	debugfs_create_file("fw_counters", 0400, eps->debugfs, nd,
			    &fw_counters_fops);
	debugfs_create_file("lock_hold", 0200, eps->debugfs, nd,
			    &lock_hold_fops);
}

/* First thing at remove: waits for running readers. */
void netvm_obs_del(struct netvm_dev *nd)
{
	struct netvm_eps *eps = &nd->eps;

	debugfs_remove_recursive(eps->debugfs);
	eps->debugfs = NULL;
	/* endpoints still open keep their (then detached) kobjects */
	kobject_put(eps->ep_dir);
	eps->ep_dir = NULL;
}

void netvm_obs_module_init(void)
{
	netvm_debug_root = debugfs_create_dir(NETVM_DRV_NAME, NULL);
	if (IS_ERR(netvm_debug_root))
		netvm_debug_root = NULL;
}

void netvm_obs_module_exit(void)
{
	debugfs_remove_recursive(netvm_debug_root);
	netvm_debug_root = NULL;
}
