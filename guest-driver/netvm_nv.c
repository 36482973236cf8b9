// SPDX-License-Identifier: GPL-2.0-only
/*
 * netvm.ko: NetVM bring-up and the kernel endpoint.
 *
 * After the firmware is ready and its layout read, probe calls
 * netvm_nv_init(): allocate the bounce buffer and endpoint 0's host areas,
 * configure the firmware (NVM_KOP_CONFIG: PMAP and page-table sizes,
 * bounce buffer, epoch) and open endpoint 0 (NVM_KOP_EP_OPEN).  Then the
 * kernel can issue physical-address commands (NVM_CF_PHYS) to the other
 * nodes' kernels: nv_write_phys(), nv_read_phys(), nv_atomic_phys().
 *
 * Issuing: command n goes to slot n % 64 of the SRAM queue, seq = n + 1
 * written last (after a wmb), then the count n + 1 to doorbell page 0.
 * Completion: the firmware DMAs struct nvm_shadow to host memory every 32
 * completions, on NVM_CF_SHADOW, on error and when the endpoint goes idle;
 * callers poll it.  At most NETVM_NV_INFLIGHT commands are issued and not
 * done, so never more than 64 issued and not consumed.  Failed commands
 * leave a struct nvm_err_rec in the error ring; its seq tells whose it is.
 *
 * Locking: see netvm_nv.h.
 */
#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/io.h>
#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/uaccess.h>

#include "netvm_drv.h"

#define NV_HOST_SIZE		(2 * PAGE_SIZE)
#define NV_HOST_SHADOW		0
#define NV_HOST_REPLY		64
#define NV_HOST_ERR		1024
#define NV_HOST_NOTF		4096
#define NV_SHADOW_BATCH		8	/* NVM_CF_SHADOW every 8th command */
#define NV_KBENCH_MAX_ITER	100000
#define NV_PHYS_WIN_KTEST	0	/* the test window's NVM_KOP_PHYS_WIN slot */

static_assert(NV_HOST_ERR + NVM_ERR_RING_LEN * sizeof(struct nvm_err_rec) <=
	      NV_HOST_NOTF);
static_assert(NV_HOST_NOTF + NETVM_NV_NOTF_LEN * sizeof(struct nvm_notf_entry)
	      <= 2 * 4096);
static_assert(NETVM_NV_INFLIGHT <= NVM_CMDQ_LEN);

/*
 * A peer that acknowledges nothing and answers nothing this long is dead:
 * every operation towards it fails with -EHOSTUNREACH (the firmware's
 * give-up, NVM_KOP_CONFIG).  Read at probe, so a change affects NICs
 * probed later (rmmod/insmod, ./netvm reload-driver).
 */
static unsigned int nv_giveup_ms = NVM_GIVEUP_MS_DEFAULT;
module_param(nv_giveup_ms, uint, 0444);
MODULE_PARM_DESC(nv_giveup_ms,
		 "NetVM: ms without an answer before a peer is given up (clamped to "
		 __stringify(NVM_GIVEUP_MS_MIN) ".." __stringify(NVM_GIVEUP_MS_MAX)
		 ", default " __stringify(NVM_GIVEUP_MS_DEFAULT) ")");

/* The kernel's own wait for a command: past the firmware's give-up. */
static unsigned long nv_deadline(struct netvm_nv *nv)
{
	return jiffies + msecs_to_jiffies(nv->giveup_ms + NETVM_NV_GRACE_MS);
}

static u32 nv_page_left(u64 a)
{
	return NVM_PAGE_SIZE - (u32)(a & (NVM_PAGE_SIZE - 1));
}

/* Write one command into the queue (body, wmb, seq); the caller rings. */
static void nv_post(struct netvm_nv *nv, struct nvm_cmd *c)
{
	void __iomem *slot = nv->ep + NVM_EP_CMDQ +
			     (nv->issued % NVM_CMDQ_LEN) * NVM_CMD_SIZE;

	c->seq = nv->issued + 1;
	memcpy_toio(slot, c, offsetof(struct nvm_cmd, seq));
	wmb();	/* the body before its seq */
	writel(c->seq, slot + offsetof(struct nvm_cmd, seq));
	nv->issued++;
}

static void nv_ring(struct netvm_nv *nv)
{
	wmb();	/* the commands before the doorbell */
	writel(nv->issued, nv->doorbell);
}

static int nv_status_errno(u8 status)
{
	switch (status) {
	case NVM_ST_OK:
		return 0;
	case NVM_ST_UNREACHABLE:
	case NVM_ST_NO_PORT:
		return -EHOSTUNREACH;
	case NVM_ST_PERM:
	case NVM_ST_BAD_KEY:
	case NVM_ST_READ_ONLY:
		return -EPERM;
	case NVM_ST_BAD_CMD:
		return -EINVAL;
	case NVM_ST_PEER_RESET:
		return -ECONNRESET;
	case NVM_ST_BUSY:
		return -EBUSY;
	default:
		return -EIO;
	}
}

/*
 * Consume new error records; the first one for a command numbered
 * (first, last] gives the result.  Records of earlier commands (whose
 * caller timed out) are only logged.
 */
static int nv_collect_errors(struct netvm_dev *nd, u32 first, u32 last)
{
	struct netvm_nv *nv = &nd->nv;
	u32 errors = READ_ONCE(nv->shadow->errors);
	int ret = 0;

	rmb();	/* the records after the count */
	while (nv->err_seen != errors) {
		struct nvm_err_rec r = nv->err_ring[nv->err_seen %
						    NVM_ERR_RING_LEN];

		nv->err_seen++;
		if (r.seq - first - 1 < last - first) {
			if (!ret)
				ret = nv_status_errno(r.status);
			dev_dbg(&nd->pdev->dev,
				"NetVM command %u (op %u) failed: status %u, node %u\n",
				r.seq, r.op, r.status, r.detail);
		} else {
			dev_warn_ratelimited(&nd->pdev->dev,
					     "NetVM: late error for command %u: status %u\n",
					     r.seq, r.status);
		}
	}
	return ret;
}

/* Sleep-poll until fewer than @outstanding of our commands are not done. */
static int nv_wait(struct netvm_dev *nd, u32 outstanding, unsigned long deadline)
{
	struct netvm_nv *nv = &nd->nv;
	unsigned int spins = 0;

	while (nv->issued - READ_ONCE(nv->shadow->done) > outstanding) {
		if (READ_ONCE(nd->dead))
			return -ENODEV;
		if (time_after(jiffies, deadline))
			return -ETIMEDOUT;
		if (++spins < 64)
			cpu_relax();
		else
			usleep_range(2, 10);
	}
	rmb();	/* data, reply and error records after the counters */
	return 0;
}

/*
 * Issue a write or read of @len bytes, fragmented so that no command
 * crosses a page on either side, with at most @inflight in flight, and
 * wait for all of it.  Caller holds nv->lock.
 */
static int nv_xfer_locked(struct netvm_dev *nd, u8 op, u16 node, u64 local_pa,
			  const u8 *local_va, u64 remote_pa, u32 len,
			  u32 inflight)
{
	struct netvm_nv *nv = &nd->nv;
	unsigned long deadline = nv_deadline(nv);
	u32 first = nv->issued, done = 0, n;
	int ret = 0, err;

	while (done < len) {
		struct nvm_cmd c;

		n = min3(len - done, nv_page_left(local_pa + done),
			 nv_page_left(remote_pa + done));
		memset(&c, 0, sizeof(c));
		c.op = op;
		c.flags = NVM_CF_PHYS;
		c.dst_node = node;
		c.dst_port = NVM_EP_KERNEL;
		c.len = n;
		c.dst_va = remote_pa + done;
		c.tag = done;
		if (op == NVM_OP_WRITE && local_va && n <= NVM_INLINE_MAX) {
			c.flags |= NVM_CF_INLINE;
			memcpy(c.inline_data, local_va + done, n);
		} else {
			c.nfrag = 1;
			c.src[0].va = local_pa + done;
			c.src[0].len = n;
		}
		done += n;
		if (done == len || (nv->issued + 1) % NV_SHADOW_BATCH == 0)
			c.flags |= NVM_CF_SHADOW;
		/* we wait for the last: the receiver acknowledges it at once */
		if (done == len && op == NVM_OP_WRITE)
			c.flags |= NVM_CF_ACK_NOW;
		/* room for this one: fewer than @inflight outstanding */
		if (nv->issued - READ_ONCE(nv->shadow->done) >= inflight) {
			nv_ring(nv);
			ret = nv_wait(nd, inflight - 1, deadline);
			if (ret)
				break;
		}
		nv_post(nv, &c);
	}
	nv_ring(nv);
	if (!ret)
		ret = nv_wait(nd, 0, deadline);
	err = nv_collect_errors(nd, first, nv->issued);
	if (ret == -ETIMEDOUT)
		dev_warn_ratelimited(&nd->pdev->dev,
				     "NetVM: %s of %u bytes to node %u timed out\n",
				     op == NVM_OP_WRITE ? "write" : "read", len,
				     node);
	return ret ? ret : err;
}

int nv_xfer_phys(struct netvm_dev *nd, u8 op, u16 node, u64 local_pa,
		 const void *local_va, u64 remote_pa, u32 len, u32 inflight)
{
	struct netvm_nv *nv = &nd->nv;
	int ret;

	if (!nv->enabled)
		return -ENODEV;
	if ((op != NVM_OP_WRITE && op != NVM_OP_READ) || !len || !inflight ||
	    inflight > NETVM_NV_INFLIGHT)
		return -EINVAL;
	if (op == NVM_OP_READ)
		local_va = NULL;
	mutex_lock(&nv->lock);
	ret = nv_xfer_locked(nd, op, node, local_pa, local_va, remote_pa, len,
			     inflight);
	mutex_unlock(&nv->lock);
	return ret;
}

int nv_write_phys(struct netvm_dev *nd, u16 node, u64 local_pa, u64 remote_pa,
		  u32 len)
{
	return nv_xfer_phys(nd, NVM_OP_WRITE, node, local_pa, NULL, remote_pa,
			    len, NETVM_NV_INFLIGHT);
}

int nv_read_phys(struct netvm_dev *nd, u16 node, u64 local_pa, u64 remote_pa,
		 u32 len)
{
	return nv_xfer_phys(nd, NVM_OP_READ, node, local_pa, NULL, remote_pa,
			    len, NETVM_NV_INFLIGHT);
}

int nv_atomic_phys(struct netvm_dev *nd, u16 node, u64 remote_pa, u32 op,
		   u32 a0, u32 a1, u32 r[3])
{
	struct netvm_nv *nv = &nd->nv;
	unsigned long deadline = nv_deadline(nv);
	struct nvm_cmd c;
	u32 first;
	int ret, err;

	if (!nv->enabled)
		return -ENODEV;
	if (!op || op >= NVM_AT_COUNT || (remote_pa & 3))
		return -EINVAL;
	memset(&c, 0, sizeof(c));
	c.op = NVM_OP_ATOMIC;
	c.flags = NVM_CF_PHYS | NVM_CF_SHADOW;
	c.dst_node = node;
	c.dst_port = NVM_EP_KERNEL;
	c.dst_va = remote_pa;
	c.atomic_op = op;
	c.arg[0] = a0;
	c.arg[1] = a1;

	mutex_lock(&nv->lock);
	first = nv->issued;
	nv_post(nv, &c);
	nv_ring(nv);
	ret = nv_wait(nd, 0, deadline);
	err = nv_collect_errors(nd, first, nv->issued);
	if (!ret)
		ret = err;
	if (!ret) {
		/* the reply is written before the completion; check anyway */
		while (READ_ONCE(nv->reply->seq) != c.seq) {
			if (time_after(jiffies, deadline)) {
				ret = -EIO;
				break;
			}
			usleep_range(2, 10);
		}
		rmb();	/* r[] after seq */
		if (!ret)
			memcpy(r, nv->reply->r, sizeof(nv->reply->r));
	}
	mutex_unlock(&nv->lock);
	return ret;
}

/*
 * Issue one kernel control command (NVM_KOP_*) on the open endpoint and
 * wait for it.  Caller holds nv->lock.
 */
int nv_kcmd_locked(struct netvm_dev *nd, struct nvm_cmd *c)
{
	struct netvm_nv *nv = &nd->nv;
	unsigned long deadline = jiffies + msecs_to_jiffies(NETVM_FW_TIMEOUT_MS);
	u32 first = nv->issued;
	int ret, err;

	if (!nv->enabled)
		return -ENODEV;
	c->flags |= NVM_CF_SHADOW;
	nv_post(nv, c);
	nv_ring(nv);
	ret = nv_wait(nd, 0, deadline);
	err = nv_collect_errors(nd, first, nv->issued);
	ret = ret ? ret : err;
	if (ret)
		dev_dbg(&nd->pdev->dev, "NetVM: kernel command %s (0x%x): %d\n",
			nvm_kop_name(c->op) ?: "?", c->op, ret);
	return ret;
}

/*
 * One kernel control command (NVM_KOP_*) on the kernel endpoint, waited
 * for; the payload goes in the command's inline data.  Takes nv->lock.
 */
int nv_kcmd(struct netvm_dev *nd, u8 op, u16 node, u16 port, u32 a0, u32 a1,
	    const void *data, size_t len)
{
	struct nvm_cmd c;
	int ret;

	if (len > sizeof(c.inline_data))
		return -EINVAL;
	memset(&c, 0, sizeof(c));
	c.op = op;
	c.dst_node = node;
	c.dst_port = port;
	c.arg[0] = a0;
	c.arg[1] = a1;
	if (data)
		memcpy(c.inline_data, data, len);
	mutex_lock(&nd->nv.lock);
	ret = nv_kcmd_locked(nd, &c);
	mutex_unlock(&nd->nv.lock);
	return ret;
}

/* ---- bring-up ---- */

/* A control command, before or after EP_OPEN: poll the SRAM status. */
static int nv_kop(struct netvm_dev *nd, u8 op, const void *arg, size_t len)
{
	struct netvm_nv *nv = &nd->nv;
	unsigned long deadline = jiffies + msecs_to_jiffies(NETVM_FW_TIMEOUT_MS);
	void __iomem *st = nv->ep + NVM_EP_STATUS;
	struct nvm_cmd c;
	u32 errors;

	memset(&c, 0, sizeof(c));
	c.op = op;
	memcpy(c.inline_data, arg, len);
	errors = readl(st + offsetof(struct nvm_ep_status, errors));
	nv_post(nv, &c);
	nv_ring(nv);
	while (readl(st + offsetof(struct nvm_ep_status, done)) != nv->issued) {
		if (time_after(jiffies, deadline))
			return -ETIMEDOUT;
		usleep_range(100, 200);
	}
	if (readl(st + offsetof(struct nvm_ep_status, errors)) != errors) {
		nv->err_seen++;
		return -EINVAL;
	}
	return 0;
}

/* The highest RAM page frame number + 1. */
static u32 nv_max_pfn(void)
{
	unsigned long end = 0;
	int nid;

	for_each_online_node(nid)
		end = max(end, node_end_pfn(nid));
	return (u32)min_t(unsigned long, end, U32_MAX);
}

static void nv_free_buffers(struct netvm_dev *nd)
{
	struct netvm_nv *nv = &nd->nv;
	struct device *dev = &nd->pdev->dev;

	if (nv->ktest)
		dma_free_coherent(dev, NETVM_KTEST_WINDOW, nv->ktest,
				  nv->ktest_dma);
	if (nv->bounce)
		dma_free_coherent(dev, nv->bounce_size, nv->bounce,
				  nv->bounce_dma);
	if (nv->host)
		dma_free_coherent(dev, NV_HOST_SIZE, nv->host, nv->host_dma);
	nv->ktest = NULL;
	nv->bounce = NULL;
	nv->host = NULL;
}

/* The firmware's endpoint pages: where it says, inside the SRAM BAR. */
static bool nv_layout_ok(struct netvm_dev *nd)
{
	const struct nvm_sram_layout *l = &nd->layout;

	if (!l->ep_count) {
		dev_info(&nd->pdev->dev, "NetVM: firmware has no endpoints (SRAM %u KiB); NetVM off\n",
			 l->sram_size / 1024);
		return false;
	}
	if (l->ep_stride != NVM_EP_STRIDE || l->ep_base % NVM_PAGE_SIZE ||
	    (u64)l->ep_base + (u64)l->ep_count * l->ep_stride > nd->sram_len ||
	    l->sram_size > nd->sram_len) {
		dev_err(&nd->pdev->dev, "NetVM: bad endpoint layout (base %#x, %u x %#x); NetVM off\n",
			l->ep_base, l->ep_count, l->ep_stride);
		return false;
	}
	return true;
}

/*
 * The firmware's tables, in the SRAM after the endpoints: max_ppn *
 * (16 + 4) + pt_rows * 16 bytes.  False if nothing fits.
 */
static bool nv_size_tables(struct netvm_dev *nd)
{
	struct netvm_nv *nv = &nd->nv;
	const struct nvm_sram_layout *l = &nd->layout;
	u64 tables, avail, need;

	tables = ALIGN((u64)l->ep_base + (u64)l->ep_count * l->ep_stride,
		       NVM_PAGE_SIZE);
	avail = l->sram_size > tables ? l->sram_size - tables : 0;
	nv->max_ppn = nv_max_pfn();
	if ((u64)nv->max_ppn * 20 + 16 > avail) {
		dev_warn(&nd->pdev->dev, "NetVM: %u pages of RAM but SRAM for %llu: PMAP clamped\n",
			 nv->max_ppn, (avail - 16) / 20);
		nv->max_ppn = (u32)((avail - 16) / 20);
	}
	nv->pt_rows = max(nv->max_ppn / 4, 1u);
	need = (u64)nv->max_ppn * 20;
	if (need + (u64)nv->pt_rows * 16 > avail)
		nv->pt_rows = (u32)((avail - need) / 16);
	if (!nv->max_ppn || !nv->pt_rows) {
		dev_err(&nd->pdev->dev, "NetVM: no SRAM left for the page tables (%llu bytes); NetVM off\n",
			avail);
		return false;
	}
	return true;
}

/* The host areas the NIC writes to, the bounce buffer, the test window. */
static bool nv_alloc_buffers(struct netvm_dev *nd)
{
	struct netvm_nv *nv = &nd->nv;
	struct device *dev = &nd->pdev->dev;

	nv->host = dma_alloc_coherent(dev, NV_HOST_SIZE, &nv->host_dma,
				      GFP_KERNEL);
	nv->bounce_size = nvm_bounce_bytes(NETVM_NV_MAX_NODES);
	nv->bounce = dma_alloc_coherent(dev, nv->bounce_size, &nv->bounce_dma,
					GFP_KERNEL);
	nv->ktest = dma_alloc_coherent(dev, NETVM_KTEST_WINDOW, &nv->ktest_dma,
				       GFP_KERNEL);
	if (!nv->host || !nv->bounce || !nv->ktest) {
		dev_err(dev, "NetVM: cannot allocate the bounce buffer and host areas; NetVM off\n");
		nv_free_buffers(nd);
		return false;
	}
	nv->shadow = nv->host + NV_HOST_SHADOW;
	nv->reply = nv->host + NV_HOST_REPLY;
	nv->err_ring = nv->host + NV_HOST_ERR;
	nv->notf = nv->host + NV_HOST_NOTF;
	return true;
}

/* NVM_KOP_CONFIG: the tables' sizes, the bounce buffer, a fresh epoch. */
static int nv_configure(struct netvm_dev *nd)
{
	struct netvm_nv *nv = &nd->nv;
	struct nvm_k_config kc;

	memset(&kc, 0, sizeof(kc));
	kc.max_ppn = nv->max_ppn;
	kc.pt_rows = nv->pt_rows;
	kc.bounce_base = nv->bounce_dma;
	kc.bounce_slots = NVM_WIN * NETVM_NV_MAX_NODES;
	kc.max_nodes = NETVM_NV_MAX_NODES;
	nv->giveup_ms = clamp_t(u32, nv_giveup_ms, NVM_GIVEUP_MS_MIN,
				NVM_GIVEUP_MS_MAX);
	kc.giveup_ms = nv->giveup_ms;
	do {
		nv->epoch = get_random_u32();
	} while (!nv->epoch);
	kc.epoch = nv->epoch;
	return nv_kop(nd, NVM_KOP_CONFIG, &kc, sizeof(kc));
}

/* NVM_KOP_EP_OPEN of the kernel's own endpoint, on the host areas. */
static int nv_open_kernel_ep(struct netvm_dev *nd)
{
	struct netvm_nv *nv = &nd->nv;
	struct nvm_k_ep_open ko;

	memset(&ko, 0, sizeof(ko));
	ko.shadow = nv->host_dma + NV_HOST_SHADOW;
	ko.err_ring = nv->host_dma + NV_HOST_ERR;
	ko.reply = nv->host_dma + NV_HOST_REPLY;
	ko.notf_ring = nv->host_dma + NV_HOST_NOTF;
	ko.notf_len = NETVM_NV_NOTF_LEN;
	ko.port = NVM_EP_KERNEL;
	ko.flags = NVM_EPF_KERNEL;
	return nv_kop(nd, NVM_KOP_EP_OPEN, &ko, sizeof(ko));
}

/*
 * The test window is the only memory the other nodes' kernels may
 * reach by physical address (writeP/readP/atomics): the firmware
 * refuses every other physical access from the network.
 */
static int nv_open_test_window(struct netvm_dev *nd)
{
	struct nvm_k_phys_win pw;

	memset(&pw, 0, sizeof(pw));
	pw.base = nd->nv.ktest_dma;
	pw.len = NETVM_KTEST_WINDOW;
	pw.peers = U64_MAX;
	pw.slot = NV_PHYS_WIN_KTEST;
	pw.access = NVM_PW_READ | NVM_PW_WRITE;
	return nv_kop(nd, NVM_KOP_PHYS_WIN, &pw, sizeof(pw));
}

/* Every failure leaves NetVM off and the device up (return 0). */
int netvm_nv_init(struct netvm_dev *nd)
{
	struct netvm_nv *nv = &nd->nv;
	const struct nvm_sram_layout *l = &nd->layout;
	struct device *dev = &nd->pdev->dev;
	int ret;

	mutex_init(&nv->lock);
	if (!nv_layout_ok(nd))
		return 0;
	nv->ep = nd->sram + l->ep_base;
	nv->doorbell = nd->db;
	if (!nv_size_tables(nd) || !nv_alloc_buffers(nd))
		return 0;
	ret = nv_configure(nd);
	if (ret) {
		dev_err(dev, "NetVM: CONFIG refused (max_ppn %u, pt_rows %u, SRAM %u KiB): %d; NetVM off\n",
			nv->max_ppn, nv->pt_rows, l->sram_size / 1024, ret);
		nv_free_buffers(nd);
		return 0;
	}
	ret = nv_open_kernel_ep(nd);
	if (ret) {
		dev_err(dev, "NetVM: EP_OPEN of the kernel endpoint failed: %d; NetVM off\n",
			ret);
		nv_free_buffers(nd);
		return 0;
	}
	ret = nv_open_test_window(nd);
	if (ret)	/* the NIC uses our buffers now: keep them */
		dev_warn(dev, "NetVM: the test window was refused (%d): peers cannot reach it\n",
			 ret);
	nv->enabled = true;
	netvm_port_own(nd, NVM_EP_KERNEL, NETVM_PORT_KERNEL);
	dev_info(dev, "NetVM: on (max_ppn %u, pt_rows %u, epoch %#x, test window at %pad)\n",
		 nv->max_ppn, nv->pt_rows, nv->epoch, &nv->ktest_dma);
	return 0;
}

/* After the NIC is halted: it no longer DMAs into these buffers. */
void netvm_nv_free(struct netvm_dev *nd)
{
	nd->nv.enabled = false;
	nv_free_buffers(nd);
}

void netvm_nv_event(struct netvm_dev *nd, const struct nvm_event *ev)
{
	struct netvm_nv *nv = &nd->nv;
	u64 arg = le64_to_cpu((__force __le64)ev->arg);

	/* counted here; netvm_ep_miss.c serves them (a trace for debugging) */
	switch (ev->type) {
	case NVM_EV_PAGE_MISS:
		atomic64_inc(&nv->ev_page_miss);
		dev_dbg(&nd->pdev->dev, "NetVM: page miss, endpoint %u, va %#llx\n",
			ev->endpoint, arg);
		break;
	case NVM_EV_BOUNCE:
		atomic64_inc(&nv->ev_bounce);
		dev_dbg(&nd->pdev->dev, "NetVM: bounce, endpoint %u\n",
			ev->endpoint);
		break;
	default:
		atomic64_inc(&nv->ev_notify);
		break;
	}
}

/* ---- test ioctls ---- */

static bool nv_window_ok(u32 off, u32 len)
{
	return len && (u64)off + len <= NETVM_KTEST_WINDOW;
}

long netvm_nv_ioc_ktest(struct netvm_dev *nd, void __user *uarg)
{
	struct netvm_nv *nv = &nd->nv;
	struct netvm_ktest k;
	u8 *win;
	u32 i;
	int ret = 0;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	if (copy_from_user(&k, uarg, sizeof(k)))
		return -EFAULT;
	if (!nv->enabled)
		return -ENODEV;
	for (i = 0; i < ARRAY_SIZE(k.reserved); i++)
		if (k.reserved[i])
			return -EINVAL;
	if (k.node > U16_MAX)
		return -EINVAL;
	win = nv->ktest;
	switch (k.op) {
	case NETVM_KTEST_WRITE:
	case NETVM_KTEST_READ:
		if (!nv_window_ok(k.offset, k.len) ||
		    k.remote_pa + k.len < k.remote_pa)
			return -EINVAL;
		ret = nv_xfer_phys(nd, k.op == NETVM_KTEST_WRITE ?
				   NVM_OP_WRITE : NVM_OP_READ, (u16)k.node,
				   nv->ktest_dma + k.offset, win + k.offset,
				   k.remote_pa, k.len, NETVM_NV_INFLIGHT);
		break;
	case NETVM_KTEST_ATOMIC:
		if (!k.atomic_op || k.atomic_op >= NVM_AT_COUNT ||
		    (k.remote_pa & 3))
			return -EINVAL;
		ret = nv_atomic_phys(nd, (u16)k.node, k.remote_pa, k.atomic_op,
				     k.arg[0], k.arg[1], k.result);
		break;
	case NETVM_KTEST_FILL:
		if (!nv_window_ok(k.offset, k.len))
			return -EINVAL;
		for (i = 0; i < k.len; i++)
			win[k.offset + i] = netvm_ktest_pattern(k.seed, i);
		break;
	case NETVM_KTEST_CHECK:
		if (!nv_window_ok(k.offset, k.len))
			return -EINVAL;
		k.bad_offset = U32_MAX;
		for (i = 0; i < k.len; i++) {
			u8 want = netvm_ktest_pattern(k.seed, i);

			if (win[k.offset + i] != want) {
				k.bad_offset = k.offset + i;
				k.result[0] = win[k.offset + i];
				k.result[1] = want;
				break;
			}
		}
		break;
	case NETVM_KTEST_INFO:
		break;
	default:
		return -EINVAL;
	}
	if (ret)
		return ret;
	k.window_pa = nv->ktest_dma;
	k.window_size = NETVM_KTEST_WINDOW;
	if (copy_to_user(uarg, &k, sizeof(k)))
		return -EFAULT;
	return 0;
}

static int nv_cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

long netvm_nv_ioc_kbench(struct netvm_dev *nd, void __user *uarg)
{
	struct netvm_nv *nv = &nd->nv;
	struct netvm_kbench b;
	u64 *t, t0, start;
	u32 i;
	int ret = 0;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	if (copy_from_user(&b, uarg, sizeof(b)))
		return -EFAULT;
	if (!nv->enabled)
		return -ENODEV;
	for (i = 0; i < ARRAY_SIZE(b.reserved); i++)
		if (b.reserved[i])
			return -EINVAL;
	if ((b.op != NETVM_KTEST_WRITE && b.op != NETVM_KTEST_READ) ||
	    b.node > U16_MAX || b.reserved0 ||
	    !nv_window_ok(0, b.size) || !b.iterations ||
	    b.iterations > NV_KBENCH_MAX_ITER || !b.inflight ||
	    b.inflight > NETVM_NV_INFLIGHT ||
	    b.remote_pa + b.size < b.remote_pa)
		return -EINVAL;
	t = kvmalloc_array(b.iterations, sizeof(*t), GFP_KERNEL);
	if (!t)
		return -ENOMEM;
	start = ktime_get_ns();
	for (i = 0; i < b.iterations; i++) {
		t0 = ktime_get_ns();
		ret = nv_xfer_phys(nd, b.op == NETVM_KTEST_WRITE ? NVM_OP_WRITE :
				   NVM_OP_READ, (u16)b.node, nv->ktest_dma,
				   nv->ktest, b.remote_pa, b.size, b.inflight);
		t[i] = ktime_get_ns() - t0;
		if (ret)
			break;
		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			break;
		}
		cond_resched();
	}
	b.total_ns = ktime_get_ns() - start;
	if (!ret) {
		sort(t, b.iterations, sizeof(*t), nv_cmp_u64, NULL);
		b.min_ns = t[0];
		b.median_ns = t[b.iterations / 2];
		b.p99_ns = t[(u64)b.iterations * 99 / 100];
		b.bytes = (u64)b.size * b.iterations;
	}
	kvfree(t);
	if (ret)
		return ret;
	if (copy_to_user(uarg, &b, sizeof(b)))
		return -EFAULT;
	return 0;
}
