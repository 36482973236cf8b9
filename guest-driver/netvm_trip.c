// SPDX-License-Identifier: GPL-2.0-only
/*
 * netvm.ko: tripwires (include/netvm/tripwire.h, docs/tripwire.md).
 *
 * The firmware matches them; the driver hands out the NIC's ids and
 * checks what a process may watch: incoming tripwires only inside its own
 * exports (so it learns nothing about memory that is not its own), and
 * outgoing ones only on its own accesses (the firmware matches those by
 * the issuing endpoint's node and port, nothing else).  Hits reach the
 * process on its notification queue without the driver.
 */
#include <linux/device.h>
#include <linux/slab.h>
#include <linux/sysfs.h>
#include <linux/uaccess.h>

#include <netvm/tripwire.h>

#include "netvm_drv.h"

int netvm_trip_init(struct netvm_dev *nd)
{
	struct netvm_trips *t = &nd->trips;

	mutex_init(&t->lock);
	t->owner = kcalloc(NVM_TW_MAX, sizeof(*t->owner), GFP_KERNEL);
	return t->owner ? 0 : -ENOMEM;
}

void netvm_trip_free(struct netvm_dev *nd)
{
	kfree(nd->trips.owner);
	nd->trips.owner = NULL;
}

/* Is [va, va + len) inside one of @ep's exports? */
static bool netvm_trip_exported(struct netvm_ep *ep, u64 va, u32 len)
{
	struct netvm_export *exp;
	bool ok = false;

	mutex_lock(&ep->lock);
	list_for_each_entry(exp, &ep->exports, node) {
		if (va >= exp->addr && va + len <= exp->addr + exp->len) {
			ok = true;
			break;
		}
	}
	mutex_unlock(&ep->lock);
	return ok;
}

static int netvm_trip_set(struct netvm_dev *nd, struct netvm_ep *ep,
			  struct netvm_trip_req *r)
{
	struct netvm_trips *t = &nd->trips;
	bool out = r->flags & NVM_TW_OUTGOING;
	struct nvm_cmd c;
	u32 id;
	int ret;

	if ((r->flags & ~NVM_TW_FLAGS) ||
	    !(r->flags & (NVM_TW_READ | NVM_TW_WRITE)) || !r->len ||
	    r->len > PAGE_SIZE || (r->va & ~PAGE_MASK) + r->len > PAGE_SIZE)
		return -EINVAL;
	if (out && (r->node == nd->node_id ||
		    r->node >= NETVM_NV_ROUTE_NODES || r->port >= NETVM_EP_MAX))
		return -EINVAL;
	if (!out && !netvm_trip_exported(ep, r->va, r->len))
		return -ENOENT;

	memset(&c, 0, sizeof(c));
	c.op = NVM_KOP_TRIP_SET;
	c.dst_node = out ? r->node : nd->node_id;
	c.dst_port = out ? r->port : ep->port;
	c.dst_va = r->va;
	c.len = r->len;
	c.arg[1] = r->flags;
	c.arg[2] = ep->port;

	mutex_lock(&t->lock);
	for (id = 0; id < NVM_TW_MAX && t->owner[id]; id++)
		;
	if (id == NVM_TW_MAX) {
		ret = -ENOSPC;
		goto out;
	}
	c.arg[0] = id;
	mutex_lock(&nd->nv.lock);
	ret = nv_kcmd_locked(nd, &c);
	mutex_unlock(&nd->nv.lock);
	if (!ret) {
		t->owner[id] = ep;
		t->count++;
		r->id = id;
		atomic64_inc(&t->set);
	}
out:
	mutex_unlock(&t->lock);
	if (ret)
		atomic64_inc(&t->refused);
	return ret;
}

static int netvm_trip_clear(struct netvm_dev *nd, struct netvm_ep *ep, u32 id)
{
	struct netvm_trips *t = &nd->trips;
	int ret;

	if (id >= NVM_TW_MAX)
		return -ENOENT;
	mutex_lock(&t->lock);
	if (t->owner[id] != ep) {
		ret = -ENOENT;
	} else {
		ret = nv_kcmd(nd, NVM_KOP_TRIP_CLEAR, 0, NVM_EP_KERNEL, id, 0,
			      NULL, 0);
		/*
		 * A ONCE tripwire that fired is gone from the NIC already:
		 * the id is free either way.
		 */
		t->owner[id] = NULL;
		t->count--;
		atomic64_inc(&t->cleared);
		if (ret == -EINVAL)
			ret = 0;
	}
	mutex_unlock(&t->lock);
	return ret;
}

long netvm_trip_ioctl(struct netvm_file *nf, unsigned int cmd,
		      void __user *u)
{
	struct netvm_dev *nd = nf->nd;
	struct netvm_trip_req r;
	struct netvm_ep *ep;
	long ret;
	u32 id;

	mutex_lock(&nf->lock);
	ep = nf->ep;
	if (!ep) {
		ret = -ENXIO;
	} else if (cmd == NETVM_IOC_TRIP_SET) {
		ret = copy_from_user(&r, u, sizeof(r)) ? -EFAULT :
		      netvm_trip_set(nd, ep, &r);
		if (!ret && copy_to_user(u, &r, sizeof(r)))
			ret = -EFAULT;	/* set; cleared with the endpoint */
	} else {
		ret = get_user(id, (u32 __user *)u) ? -EFAULT :
		      netvm_trip_clear(nd, ep, id);
	}
	mutex_unlock(&nf->lock);
	return ret;
}

/*
 * @ep is closing: the firmware dropped its tripwires with the endpoint
 * (NVM_KOP_EP_CLOSE); give their ids back.
 */
void netvm_trip_release(struct netvm_dev *nd, struct netvm_ep *ep)
{
	struct netvm_trips *t = &nd->trips;
	u32 id;

	if (!t->owner)
		return;
	mutex_lock(&t->lock);
	for (id = 0; id < NVM_TW_MAX && t->count; id++) {
		if (t->owner[id] == ep) {
			t->owner[id] = NULL;
			t->count--;
		}
	}
	mutex_unlock(&t->lock);
}

static ssize_t tripwires_show(struct device *dev,
			      struct device_attribute *attr, char *buf)
{
	struct netvm_dev *nd = container_of(dev, struct netvm_dev, dev);
	struct netvm_trips *t = &nd->trips;

	return sysfs_emit(buf, "in_use %u\nmax %u\nset %lld\ncleared %lld\nrefused %lld\n",
			  READ_ONCE(t->count), NVM_TW_MAX,
			  atomic64_read(&t->set), atomic64_read(&t->cleared),
			  atomic64_read(&t->refused));
}

DEVICE_ATTR_RO(tripwires);
