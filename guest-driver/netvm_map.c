// SPDX-License-Identifier: GPL-2.0-only
/*
 * netvm.ko: answering the mapper (include/netvm/mapper.h, docs/fabric.md).
 *
 * A mapper (netvm-mapper, on any node) explores the fabric with switch
 * probes, which the switches answer, and scouts, which we answer here with
 * our node id.  It then sends every node its route table (ROUTES); we
 * install it through NVM_KOP_ROUTE, as the sysfs routes file does, drop
 * the routes it no longer lists (a node that left) and acknowledge.
 *
 * Both arrive as raw frames.  The raw receive IRQ handler gives each frame
 * to netvm_map_rx() first: SCOUT and ROUTES are taken and queued for the
 * work item; the replies meant for a mapper on this node (SWITCH_REPLY,
 * SCOUT_REPLY, ROUTES_ACK) go on to the raw readers.
 */
#include <linux/device.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/sysfs.h>

#include "netvm_drv.h"
#include <netvm/mapper.h>

#define NETVM_MAP_MAX_LEN \
	(sizeof(struct nvm_map_msg) + \
	 NVM_MAP_MAX_ENTRIES * sizeof(struct nvm_map_route))

struct netvm_map_req {
	u32 len;
	u32 src;
	union {
		struct nvm_map_msg msg;
		u8 bytes[NETVM_MAP_MAX_LEN];
	};
};

static bool netvm_map_route_ok(const u8 *route, u32 len)
{
	u32 i;

	if (len > NVM_ROUTE_MAX)
		return false;
	for (i = 0; i < len; i++)
		if (!(route[i] & NVM_ROUTE_BYTE))
			return false;
	return true;
}

/* IRQ context: true if @buf is a SCOUT or ROUTES (consumed here). */
bool netvm_map_rx(struct netvm_dev *nd, const void *buf, u32 len, u32 src)
{
	struct netvm_map *map = &nd->map;
	const struct nvm_map_msg *m = buf;
	struct netvm_map_req *r;

	if (len < sizeof(*m) ||
	    memcmp(m->magic, NVM_MAP_MAGIC, NVM_MAP_MAGIC_LEN) ||
	    (m->kind != NVM_MAP_SCOUT && m->kind != NVM_MAP_ROUTES))
		return false;
	if (!map->reqq || len > NETVM_MAP_MAX_LEN) {
		atomic64_inc(&map->dropped);
		return true;
	}
	spin_lock(&map->lock);
	if (map->req_count < NETVM_MAP_REQQ) {
		r = &map->reqq[(map->req_head + map->req_count) %
			       NETVM_MAP_REQQ];
		memcpy(r->bytes, buf, len);
		r->len = len;
		r->src = src;
		map->req_count++;
		queue_work(system_unbound_wq, &map->work);
	} else {
		atomic64_inc(&map->dropped);	/* the mapper asks again */
	}
	spin_unlock(&map->lock);
	return true;
}

/* Install @m's table; returns the number of routes set or an errno. */
static int netvm_map_install(struct netvm_dev *nd,
			     const struct netvm_map_req *r)
{
	const struct nvm_map_msg *m = &r->msg;
	u32 count = be16_to_cpu(m->count);
	DECLARE_BITMAP(listed, NETVM_NV_ROUTE_NODES);
	struct netvm_nv *nv = &nd->nv;
	u32 i, node, installed = 0;
	int ret;

	if (!nv->enabled)
		return -ENODEV;
	if (be16_to_cpu(m->node) != nd->node_id)
		return -EHOSTUNREACH;
	if (count > NVM_MAP_MAX_ENTRIES ||
	    r->len < sizeof(*m) + count * sizeof(m->entries[0]))
		return -EINVAL;
	bitmap_zero(listed, NETVM_NV_ROUTE_NODES);
	/* check the whole table before changing anything */
	for (i = 0; i < count; i++) {
		const struct nvm_map_route *e = &m->entries[i];

		node = be16_to_cpu(e->node);
		if (node >= NETVM_NV_ROUTE_NODES ||
		    !netvm_map_route_ok(e->route, e->len))
			return -EINVAL;
	}
	for (i = 0; i < count; i++) {
		const struct nvm_map_route *e = &m->entries[i];

		node = be16_to_cpu(e->node);
		if (node == nd->node_id)
			continue;
		ret = netvm_route_set(nd, node, e->route, e->len);
		if (ret)
			return ret;
		__set_bit(node, listed);
		installed++;
	}
	/* nodes the map does not have: their traffic fails at once */
	for (node = 0; node < NETVM_NV_ROUTE_NODES; node++) {
		if (test_bit(node, listed) || node == nd->node_id)
			continue;
		ret = netvm_route_clear(nd, node);
		if (ret)
			return ret;
	}
	nd->map.generation = be32_to_cpu(m->generation);
	nd->map.mapper_node = r->src;
	return installed;
}

static void netvm_map_answer(struct netvm_dev *nd,
			     const struct netvm_map_req *r)
{
	const struct nvm_map_msg *m = &r->msg;
	struct nvm_map_msg a;
	int ret = 0;

	if (!netvm_map_route_ok(m->ret_route, m->ret_len)) {
		atomic64_inc(&nd->map.dropped);
		return;
	}
	memset(&a, 0, sizeof(a));
	memcpy(a.magic, NVM_MAP_MAGIC, NVM_MAP_MAGIC_LEN);
	a.cookie = m->cookie;
	a.generation = m->generation;
	a.node = cpu_to_be16(nd->node_id);
	if (m->kind == NVM_MAP_SCOUT) {
		a.kind = NVM_MAP_SCOUT_REPLY;
		atomic64_inc(&nd->map.scouts);
	} else {
		a.kind = NVM_MAP_ROUTES_ACK;
		ret = netvm_map_install(nd, r);
		if (ret >= 0) {
			a.count = cpu_to_be16(ret);
			atomic64_inc(&nd->map.tables);
		} else {
			a.status = cpu_to_be16(-ret);
		}
	}
	ret = netvm_raw_send_kernel(nd, &a, sizeof(a), m->ret_len,
				    m->ret_route);
	if (ret)
		dev_warn_ratelimited(&nd->pdev->dev,
				     "mapper: reply to node %u failed: %d\n",
				     r->src, ret);
}

static void netvm_map_work(struct work_struct *work)
{
	struct netvm_map *map = container_of(work, struct netvm_map, work);
	struct netvm_dev *nd = container_of(map, struct netvm_dev, map);
	struct netvm_map_req *r;

	r = kmalloc(sizeof(*r), GFP_KERNEL);
	for (;;) {
		spin_lock_irq(&map->lock);
		if (!map->req_count || READ_ONCE(nd->dead)) {
			spin_unlock_irq(&map->lock);
			break;
		}
		if (r)
			*r = map->reqq[map->req_head];
		map->req_head = (map->req_head + 1) % NETVM_MAP_REQQ;
		map->req_count--;
		spin_unlock_irq(&map->lock);
		if (r)
			netvm_map_answer(nd, r);
		else
			atomic64_inc(&map->dropped);
	}
	kfree(r);
}

int netvm_map_init(struct netvm_dev *nd)
{
	struct netvm_map *map = &nd->map;

	spin_lock_init(&map->lock);
	INIT_WORK(&map->work, netvm_map_work);
	map->reqq = kcalloc(NETVM_MAP_REQQ, sizeof(*map->reqq), GFP_KERNEL);
	return map->reqq ? 0 : -ENOMEM;
}

/* After the IRQs are gone: nothing queues work any more. */
void netvm_map_free(struct netvm_dev *nd)
{
	struct netvm_map *map = &nd->map;

	if (map->reqq)
		cancel_work_sync(&map->work);
	kfree(map->reqq);
	map->reqq = NULL;
}

static ssize_t mapper_show(struct device *dev, struct device_attribute *attr,
			   char *buf)
{
	struct netvm_dev *nd = container_of(dev, struct netvm_dev, dev);
	struct netvm_map *map = &nd->map;

	return sysfs_emit(buf,
			  "generation %u\nmapper_node %u\nscouts %lld\ntables %lld\ndropped %lld\n",
			  READ_ONCE(map->generation),
			  READ_ONCE(map->mapper_node),
			  atomic64_read(&map->scouts),
			  atomic64_read(&map->tables),
			  atomic64_read(&map->dropped));
}

DEVICE_ATTR_RO(mapper);
