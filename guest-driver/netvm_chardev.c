// SPDX-License-Identifier: GPL-2.0-only
/*
 * netvm.ko: the "netvm" class, /dev/netvmN and its ioctls.
 *
 * Each NIC's struct device (class "netvm", name netvmN) is embedded in
 * struct netvm_dev and carries its lifetime: every open file holds a
 * reference, and the release callback frees the netvm_dev.  After the PCI
 * device is removed, open files get -ENODEV from every ioctl.
 */
#include <linux/cdev.h>
#include <linux/compat.h>
#include <linux/device.h>
#include <linux/fs.h>
#include <linux/idr.h>
#include <linux/module.h>
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "netvm_drv.h"

static dev_t netvm_devt;
/* static and registered: class_create() changed between 6.1 and 6.12 */
static struct class netvm_class = {
	.name = NETVM_DRV_NAME,
};

static DEFINE_IDA(netvm_ida);

static int netvm_open(struct inode *inode, struct file *file)
{
	struct netvm_dev *nd = container_of(inode->i_cdev, struct netvm_dev,
					    cdev);
	struct netvm_file *nf;

	nf = kzalloc(sizeof(*nf), GFP_KERNEL);
	if (!nf)
		return -ENOMEM;
	nf->nd = nd;
	mutex_init(&nf->lock);
	get_device(&nd->dev);
	file->private_data = nf;
	return nonseekable_open(inode, file);
}

static int netvm_release(struct inode *inode, struct file *file)
{
	struct netvm_file *nf = file->private_data;
	struct netvm_dev *nd = nf->nd;

	netvm_ep_release(nf);	/* closes its endpoint, drops its exports */
	netvm_unet_release(nf);
	kfree(nf);
	put_device(&nd->dev);
	return 0;
}

/*
 * Every ioctl handler has this shape; the table below routes to them (what
 * it does not list is -ENOTTY before the device is touched).
 */
typedef long (*netvm_ioc_fn)(struct netvm_file *nf, unsigned int cmd,
			     void __user *uarg);

static long netvm_ioc_info(struct netvm_file *nf, unsigned int cmd,
			   void __user *uarg)
{
	struct netvm_dev *nd = nf->nd;
	struct netvm_info info;
	u32 eps = nd->layout.ep_count;

	memset(&info, 0, sizeof(info));
	info.abi_version = nd->abi_version;
	info.fw_version = nd->fw_version;
	info.node_id = nd->node_id;
	info.link = netvm_rd(nd, NVM_REG_LINK);
	info.sram_size = nd->sram_size;
	info.max_endpoints = (eps && eps < LANAI_MAX_ENDPOINTS) ?
			     eps : LANAI_MAX_ENDPOINTS;
	info.raw_max_payload = nd->raw.max_payload;

	if (copy_to_user(uarg, &info, sizeof(info)))
		return -EFAULT;
	return 0;
}

static long netvm_ioc_raw_send(struct netvm_file *nf, unsigned int cmd,
			       void __user *uarg)
{
	struct netvm_dev *nd = nf->nd;
	struct netvm_raw_send req;
	int i;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	for (i = 0; i < ARRAY_SIZE(req.reserved); i++)
		if (req.reserved[i])
			return -EINVAL;
	if (!req.buf || !req.len || req.route_len > ARRAY_SIZE(req.route))
		return -EINVAL;
	if (req.len > nd->raw.max_payload)
		return -EMSGSIZE;
	return netvm_raw_send(nd, u64_to_user_ptr(req.buf), req.len,
			      req.route_len, req.route);
}

static long netvm_ioc_raw_recv(struct netvm_file *nf, unsigned int cmd,
			       void __user *uarg)
{
	struct netvm_dev *nd = nf->nd;
	struct netvm_raw_recv req;
	int ret;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if (req.reserved || !req.buf || !req.len)
		return -EINVAL;

	req.src_node = 0;
	ret = netvm_raw_recv(nd, u64_to_user_ptr(req.buf), &req.len,
			     &req.src_node, req.timeout_ms);
	if (ret && ret != -EMSGSIZE)
		return ret;
	/* On -EMSGSIZE, len tells the caller the size it needs. */
	if (copy_to_user(uarg, &req, sizeof(req)))
		return -EFAULT;
	return ret;
}

static long netvm_ioc_ktest(struct netvm_file *nf, unsigned int cmd,
			    void __user *uarg)
{
	return netvm_nv_ioc_ktest(nf->nd, uarg);
}

static long netvm_ioc_kbench(struct netvm_file *nf, unsigned int cmd,
			     void __user *uarg)
{
	return netvm_nv_ioc_kbench(nf->nd, uarg);
}

static long netvm_ioc_import(struct netvm_file *nf, unsigned int cmd,
			     void __user *uarg)
{
	return netvm_import_ioctl(nf->nd, uarg);
}

/* A file is a NetVM or a U-Net endpoint, not both. */
static long netvm_ioc_ep(struct netvm_file *nf, unsigned int cmd,
			 void __user *uarg)
{
	return READ_ONCE(nf->unet) ? -EBUSY : netvm_ep_ioctl(nf, cmd, uarg);
}

static const struct {
	unsigned int cmd;
	netvm_ioc_fn fn;
} netvm_iocs[] = {
	{ NETVM_IOC_INFO,		netvm_ioc_info },
	{ NETVM_IOC_RAW_SEND,		netvm_ioc_raw_send },
	{ NETVM_IOC_RAW_RECV,		netvm_ioc_raw_recv },
	{ NETVM_IOC_KTEST,		netvm_ioc_ktest },
	{ NETVM_IOC_KBENCH,		netvm_ioc_kbench },
	{ NETVM_IOC_IMPORT,		netvm_ioc_import },
	{ NETVM_IOC_TRIP_SET,		netvm_trip_ioctl },
	{ NETVM_IOC_TRIP_CLEAR,		netvm_trip_ioctl },
	{ NETVM_IOC_EP_OPEN,		netvm_ioc_ep },
	{ NETVM_IOC_EP_INFO,		netvm_ioc_ep },
	{ NETVM_IOC_EXPORT,		netvm_ioc_ep },
	{ NETVM_IOC_UNEXPORT,		netvm_ioc_ep },
	{ NETVM_IOC_REKEY,		netvm_ioc_ep },
	{ NETVM_IOC_PTBENCH,		netvm_ioc_ep },
	{ NETVM_IOC_UNET_OPEN,		netvm_unet_ioctl },
	{ NETVM_IOC_UNET_CHANNEL,	netvm_unet_ioctl },
	{ NETVM_IOC_UNET_UNCHANNEL,	netvm_unet_ioctl },
	{ NETVM_IOC_UNET_DRECV,		netvm_unet_ioctl },
	{ NETVM_IOC_UNET_KICK,		netvm_unet_ioctl },
	{ NETVM_IOC_UNET_SCHED,		netvm_unet_ioctl },
};

static long netvm_ioctl(struct file *file, unsigned int cmd,
			unsigned long arg)
{
	struct netvm_file *nf = file->private_data;
	struct netvm_dev *nd = nf->nd;
	netvm_ioc_fn fn = NULL;
	unsigned int i;
	long ret;

	for (i = 0; i < ARRAY_SIZE(netvm_iocs) && !fn; i++)
		if (netvm_iocs[i].cmd == cmd)
			fn = netvm_iocs[i].fn;
	if (!fn)
		return -ENOTTY;

	down_read(&nd->lifetime);
	if (READ_ONCE(nd->dead)) {
		up_read(&nd->lifetime);
		return -ENODEV;
	}
	ret = fn(nf, cmd, (void __user *)arg);
	up_read(&nd->lifetime);
	return ret;
}

/*
 * Readable when a raw frame is queued or the file's endpoint has a new
 * notification; hung up once the NIC is removed.
 */
static __poll_t netvm_poll(struct file *file, poll_table *wait)
{
	struct netvm_file *nf = file->private_data;
	struct netvm_dev *nd = nf->nd;
	__poll_t mask = 0;

	poll_wait(file, &nd->raw.rx_wq, wait);
	mask |= netvm_ep_poll(nf, file, wait);
	mask |= netvm_unet_poll(nf, file, wait);
	if (READ_ONCE(nd->dead))
		return EPOLLHUP | EPOLLERR;
	if (READ_ONCE(nd->raw.rxq_count))
		mask |= EPOLLIN | EPOLLRDNORM;
	return mask;
}

/* The endpoint's own memory only (netvm_ep_mmap.c). */
static int netvm_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct netvm_file *nf = file->private_data;

	if (READ_ONCE(nf->unet))
		return netvm_unet_mmap(nf, vma);
	return netvm_ep_mmap(nf, vma);
}

/*
 * O_ASYNC: upcalls of a U-Net endpoint (netvm_unet.c), or signals for a
 * NetVM endpoint's notifications (netvm_ep.c).
 */
static int netvm_fasync(int fd, struct file *file, int on)
{
	struct netvm_file *nf = file->private_data;

	if (READ_ONCE(nf->unet))
		return netvm_unet_fasync(nf, fd, file, on);
	return netvm_ep_fasync(nf, fd, file, on);
}

static const struct file_operations netvm_fops = {
	.owner = THIS_MODULE,
	.open = netvm_open,
	.release = netvm_release,
	.poll = netvm_poll,
	.mmap = netvm_mmap,
	.fasync = netvm_fasync,
	.unlocked_ioctl = netvm_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
};

static void netvm_dev_release(struct device *dev)
{
	struct netvm_dev *nd = container_of(dev, struct netvm_dev, dev);

	if (nd->index >= 0)
		ida_free(&netvm_ida, nd->index);
	kfree(nd);
}

/*
 * Reserve an index and initialise the class device and cdev; nothing is
 * visible until probe calls cdev_device_add().  On failure nd is freed;
 * on success it is freed by netvm_chardev_del() (the last put_device()).
 */
int netvm_chardev_add(struct netvm_dev *nd)
{
	int ret;

	ret = ida_alloc_max(&netvm_ida, NETVM_MAX_DEVS - 1, GFP_KERNEL);
	if (ret < 0) {
		kfree(nd);
		return ret;
	}
	nd->index = ret;

	device_initialize(&nd->dev);
	nd->dev.class = &netvm_class;
	nd->dev.parent = &nd->pdev->dev;
	nd->dev.devt = MKDEV(MAJOR(netvm_devt), nd->index);
	nd->dev.groups = netvm_attr_groups;
	nd->dev.release = netvm_dev_release;
	ret = dev_set_name(&nd->dev, NETVM_DEV_PREFIX "%d", nd->index);
	if (ret) {
		put_device(&nd->dev);	/* frees nd and its index */
		return ret;
	}
	cdev_init(&nd->cdev, &netvm_fops);
	nd->cdev.owner = THIS_MODULE;
	return 0;
}

/* Drop probe's reference; frees nd once no file holds it open. */
void netvm_chardev_del(struct netvm_dev *nd)
{
	put_device(&nd->dev);
}

int netvm_chardev_init(void)
{
	int ret;

	ret = alloc_chrdev_region(&netvm_devt, 0, NETVM_MAX_DEVS,
				  NETVM_DRV_NAME);
	if (ret)
		return ret;
	ret = class_register(&netvm_class);
	if (ret)
		unregister_chrdev_region(netvm_devt, NETVM_MAX_DEVS);
	return ret;
}

void netvm_chardev_exit(void)
{
	class_unregister(&netvm_class);
	unregister_chrdev_region(netvm_devt, NETVM_MAX_DEVS);
	ida_destroy(&netvm_ida);
}
