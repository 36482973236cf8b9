// SPDX-License-Identifier: GPL-2.0-only
/*
 * netvm.ko: NetVM source routes, /sys/class/netvm/netvmN/routes (root).
 *
 * Write: one "NODE HEX" line per route, HEX the route bytes in hex (each
 * with its MSB set, at most NVM_ROUTE_MAX), or "NODE -" for no route
 * (back to back).  Each line becomes an NVM_KOP_ROUTE command on the
 * kernel endpoint; the first bad line or refused command ends the write
 * with an error (lines before it are in effect).
 * Read: the routes set so far, one "NODE HEX" line each.
 *
 * The firmware loses its table when it restarts (driver reload), and so
 * does this copy: whoever set the routes sets them again (./netvm up).
 */
#include <linux/ctype.h>
#include <linux/device.h>
#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/sysfs.h>

#include "netvm_drv.h"

int netvm_route_set(struct netvm_dev *nd, u32 node, const u8 *route, u32 len)
{
	struct netvm_nv *nv = &nd->nv;
	int ret;

	ret = nv_kcmd(nd, NVM_KOP_ROUTE, (u16)node, NVM_EP_KERNEL, len, 0,
		      route, len);
	if (!ret) {
		/* the copy shown in sysfs */
		mutex_lock(&nv->lock);
		memcpy(nv->route[node], route, len);
		nv->route_len[node] = len;
		mutex_unlock(&nv->lock);
	}
	return ret;
}

/*
 * The mapper found @node gone: no route at all, so that operations towards
 * it fail at once (NVM_ROUTE_F_NONE) instead of timing out.
 */
int netvm_route_clear(struct netvm_dev *nd, u32 node)
{
	struct netvm_nv *nv = &nd->nv;
	int ret;

	ret = nv_kcmd(nd, NVM_KOP_ROUTE, (u16)node, NVM_EP_KERNEL, 0,
		      NVM_ROUTE_F_NONE, NULL, 0);
	if (!ret) {
		mutex_lock(&nv->lock);
		nv->route_len[node] = 0;
		mutex_unlock(&nv->lock);
	}
	return ret;
}

/* One line "NODE HEX" or "NODE -"; returns 0 or -EINVAL. */
static int netvm_route_parse(char *line, u32 *node, u8 *route, u32 *len)
{
	char *tok = strsep(&line, " \t");
	size_t n, i;

	if (!tok || kstrtou32(tok, 0, node) || *node >= NETVM_NV_ROUTE_NODES)
		return -EINVAL;
	line = skip_spaces(line ? line : "");
	strim(line);
	*len = 0;
	if (!strcmp(line, "-"))
		return 0;
	n = strlen(line);
	if (!n || n % 2 || n / 2 > NVM_ROUTE_MAX ||
	    hex2bin(route, line, n / 2))
		return -EINVAL;
	for (i = 0; i < n / 2; i++)
		if (!(route[i] & NVM_ROUTE_BYTE))
			return -EINVAL;
	*len = n / 2;
	return 0;
}

static ssize_t routes_store(struct device *dev, struct device_attribute *attr,
			    const char *buf, size_t count)
{
	struct netvm_dev *nd = container_of(dev, struct netvm_dev, dev);
	char *copy, *p, *line;
	int ret = 0;

	if (!nd->nv.enabled)
		return -ENODEV;
	copy = kstrndup(buf, count, GFP_KERNEL);
	if (!copy)
		return -ENOMEM;
	p = copy;
	while (!ret && (line = strsep(&p, "\n")) != NULL) {
		u8 route[NVM_ROUTE_MAX];
		u32 node, len;

		line = strim(line);
		if (!*line)
			continue;
		ret = netvm_route_parse(line, &node, route, &len);
		if (!ret)
			ret = netvm_route_set(nd, node, route, len);
	}
	kfree(copy);
	return ret ? ret : count;
}

static ssize_t routes_show(struct device *dev, struct device_attribute *attr,
			   char *buf)
{
	struct netvm_dev *nd = container_of(dev, struct netvm_dev, dev);
	struct netvm_nv *nv = &nd->nv;
	int len = 0;
	u32 node;

	if (!nv->enabled)
		return -ENODEV;
	mutex_lock(&nv->lock);
	for (node = 0; node < NETVM_NV_ROUTE_NODES; node++) {
		if (!nv->route_len[node])
			continue;
		len += sysfs_emit_at(buf, len, "%u %*phN\n", node,
				     nv->route_len[node], nv->route[node]);
	}
	mutex_unlock(&nv->lock);
	return len;
}

DEVICE_ATTR_ADMIN_RW(routes);
