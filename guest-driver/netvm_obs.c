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
 *   /sys/class/netvm/netvmN/ep_counters
 *       the device's paging counters (in netvm_sysfs.c's group).
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
#include "netvm_ep_priv.h"

static struct dentry *netvm_debug_root;

/* ---- /sys/class/netvm/netvmN/endpoints/<port>/ ---- */

static u32 ep_status_word(struct netvm_ep *ep, size_t field)
{
	struct netvm_dev *nd = ep->nd;

	return readl(nd->sram + nd->layout.ep_base + ep->port * NVM_EP_STRIDE +
		     NVM_EP_STATUS + field);
}

/* Translations of @exp in the NIC now; pt_lock held. */
static unsigned long ep_export_pages(struct netvm_export *exp)
{
	unsigned long i, n = 0;

	for (i = 0; i < exp->npages; i++)
		n += !!exp->ppn[i];
	return n;
}

/*
 * endpoints/<port>/counters: the endpoint's paging counters, then the
 * firmware's view of its queue (struct nvm_ep_status in SRAM).
 */
static ssize_t netvm_ep_counters_fmt(struct netvm_ep *ep, char *buf)
{
	int len = 0, c;

	for (c = 0; c < EPC_PER_EP; c++)
		len += sysfs_emit_at(buf, len, "%s %lld\n",
				     netvm_ep_counter_names[c],
				     atomic64_read(&ep->cnt[c]));
	if (READ_ONCE(ep->nd->dead))
		return len;
	len += sysfs_emit_at(buf, len,
			     "consumed %u\ndone %u\nerrors %u\nnotf_queued %u\ncredit_stalls %u\n",
			     ep_status_word(ep, offsetof(struct nvm_ep_status, consumed)),
			     ep_status_word(ep, offsetof(struct nvm_ep_status, done)),
			     ep_status_word(ep, offsetof(struct nvm_ep_status, errors)),
			     ep_status_word(ep, offsetof(struct nvm_ep_status, notf_queued)),
			     ep_status_word(ep, offsetof(struct nvm_ep_status, credit_stalls)));
	return len;
}

/* endpoints/<port>/exports: "NAME START PAGES MAPPED rw|ro" per export. */
static ssize_t netvm_ep_exports_fmt(struct netvm_ep *ep, char *buf)
{
	struct netvm_eps *eps = &ep->nd->eps;
	struct netvm_export *exp;
	int len = 0;

	mutex_lock(&ep->lock);
	mutex_lock(&eps->pt_lock);
	list_for_each_entry(exp, &ep->exports, node)
		len += sysfs_emit_at(buf, len, "%s %#lx %lu %lu %s\n",
				     exp->name, exp->start, exp->npages,
				     ep_export_pages(exp),
				     exp->ro ? "ro" : "rw");
	mutex_unlock(&eps->pt_lock);
	mutex_unlock(&ep->lock);
	return len;
}

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

/* debugfs netvm/netvmN/endpoints: one line per open endpoint. */
static int netvm_ep_list_show(struct seq_file *m, struct netvm_dev *nd)
{
	struct netvm_eps *eps = &nd->eps;
	struct netvm_export *exp;
	unsigned long pages;
	u32 port, nexp;

	mutex_lock(&eps->lock);
	for (port = 0; port < NETVM_EP_MAX; port++) {
		struct netvm_ep *ep = eps->ep[port];

		if (!ep)
			continue;
		nexp = 0;
		pages = 0;
		mutex_lock(&ep->lock);
		mutex_lock(&eps->pt_lock);
		list_for_each_entry(exp, &ep->exports, node) {
			nexp++;
			pages += ep_export_pages(exp);
		}
		mutex_unlock(&eps->pt_lock);
		mutex_unlock(&ep->lock);
		seq_printf(m, "port %u pid %d exports %u mapped %lu done %u errors %u\n",
			   port, ep->pid, nexp, pages,
			   ep_status_word(ep, offsetof(struct nvm_ep_status, done)),
			   ep_status_word(ep, offsetof(struct nvm_ep_status, errors)));
	}
	mutex_unlock(&eps->lock);
	return 0;
}

/*
 * debugfs netvm/netvmN/pt: every translation the driver has installed,
 * with what the NIC holds for it (row, way, PMAP flags, dirty and lock
 * bytes).  "way -1" would mean the PPN is missing from its row: a bug.
 */
static int netvm_ep_pt_show(struct seq_file *m, struct netvm_dev *nd)
{
	struct netvm_eps *eps = &nd->eps;
	const struct nvm_sram_layout *l = &nd->layout;
	unsigned long n = 0;
	u32 ppn;

	mutex_lock(&eps->pt_lock);
	if (!eps->ready || READ_ONCE(nd->dead)) {
		mutex_unlock(&eps->pt_lock);
		seq_puts(m, "NetVM off\n");
		return 0;
	}
	for (ppn = 0; ppn < eps->max_ppn; ppn++)
		n += !!eps->owner[ppn];
	seq_printf(m, "max_ppn %u pt_rows %u ways %u mapped %lu\n",
		   eps->max_ppn, eps->pt_rows, NVM_PT_WAYS, n);
	for (ppn = 0; ppn < eps->max_ppn; ppn++) {
		struct netvm_export *exp = eps->owner[ppn];
		unsigned long va;
		void __iomem *r;
		u32 row;
		int w, way = -1;

		if (!exp)
			continue;
		va = exp->start + eps->owner_idx[ppn] * PAGE_SIZE;
		row = netvm_pt_ep_row(nd, exp->ep->port, va);
		r = netvm_pt_row(nd, row);
		for (w = 0; w < NVM_PT_WAYS; w++)
			if (readl(r + w * 4) == ppn)
				way = w;
		seq_printf(m, "port %u va %#lx ppn %#x row %u way %d flags %#x hdirty %u ndirty %u lock %u\n",
			   exp->ep->port, va, ppn, row, way,
			   readb(nd->sram + l->pmap_flags + ppn),
			   readb(nd->sram + l->pmap_hdirty + ppn),
			   readb(nd->sram + l->pmap_ndirty + ppn),
			   readb(nd->sram + l->pmap_lock + ppn));
	}
	mutex_unlock(&eps->pt_lock);
	return 0;
}

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

/* ---- /sys/class/netvm/netvmN/ep_counters ---- */

static ssize_t ep_counters_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	struct netvm_dev *nd = container_of(dev, struct netvm_dev, dev);
	struct netvm_eps *eps = &nd->eps;
	u32 open = 0, p;
	int len, c;

	for (p = 0; p < NETVM_EP_MAX; p++)
		open += !!READ_ONCE(eps->ep[p]);
	len = sysfs_emit(buf, "endpoints %u\n", open);
	for (c = 0; c < EPC_MAX; c++)
		len += sysfs_emit_at(buf, len, "%s %lld\n",
				     netvm_ep_counter_names[c],
				     atomic64_read(&eps->cnt[c]));
	return len;
}
DEVICE_ATTR_RO(ep_counters);

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
