// SPDX-License-Identifier: MIT
/*
 * Address vectors.  An address is (node, port, NIC index) with a magic
 * word, checked on insertion: the bytes come from peers (fi_getname's
 * output, exchanged out of band) and are judged like any input.
 * FI_AV_TABLE hands out indices; FI_AV_MAP encodes the address itself
 * in fi_addr_t, and both remember what was inserted so a receive can be
 * named (FI_SOURCE) and a removed address refused.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fnv.h"

#define MAP_MARK	(1ull << 40)	/* fi_addr_t of a map entry */

static fi_addr_t map_addr(const struct fnv_addr *a)
{
	return MAP_MARK | (uint64_t)a->nic << 32 | (uint64_t)a->node << 16 |
	       a->port;
}

static bool addr_ok(const struct fnv_addr *a)
{
	return a->magic == FNV_ADDR_MAGIC && a->node < NVM_UNET_NODES &&
	       a->port && a->port < NVM_UNET_CHANNELS && a->nic < FNV_DOMAINS;
}

static bool same(const struct fnv_addr *a, const struct fnv_addr *b)
{
	return a->node == b->node && a->port == b->port && a->nic == b->nic;
}

int fnv_av_resolve(const struct fnv_av *av, fi_addr_t fa,
		   struct fnv_addr *out)
{
	if (!av)
		return -FI_EINVAL;
	if (av->type == FI_AV_TABLE) {
		if (fa >= av->count || !av->used[fa])
			return -FI_EINVAL;
		*out = av->addr[fa];
		return 0;
	}
	for (size_t i = 0; i < av->count; i++)
		if (av->used[i] && map_addr(&av->addr[i]) == fa) {
			*out = av->addr[i];
			return 0;
		}
	return -FI_EINVAL;
}

fi_addr_t fnv_av_reverse(const struct fnv_av *av, uint16_t node,
			 uint16_t port)
{
	if (!av)
		return FI_ADDR_NOTAVAIL;
	for (size_t i = 0; i < av->count; i++)
		if (av->used[i] && av->addr[i].node == node &&
		    av->addr[i].port == port && av->addr[i].nic == av->dom->index)
			return av->type == FI_AV_TABLE ? (fi_addr_t)i :
			       map_addr(&av->addr[i]);
	return FI_ADDR_NOTAVAIL;
}

static int grow(struct fnv_av *av, size_t need)
{
	size_t cap = av->cap ? av->cap : 16;
	struct fnv_addr *a;
	bool *u;

	while (cap < need)
		cap *= 2;
	if (cap == av->cap)
		return 0;
	a = realloc(av->addr, cap * sizeof(*a));
	if (!a)
		return -FI_ENOMEM;
	av->addr = a;
	u = realloc(av->used, cap * sizeof(*u));
	if (!u)
		return -FI_ENOMEM;
	av->used = u;
	av->cap = cap;
	return 0;
}

static int av_insert(struct fid_av *fav, const void *addr, size_t count,
		     fi_addr_t *fi_addr, uint64_t flags, void *context)
{
	struct fnv_av *av = (struct fnv_av *)fav;
	int good = 0;

	(void)context;
	if (flags || (!addr && count))
		return -FI_EINVAL;
	pthread_mutex_lock(&av->dom->lock);
	if (grow(av, av->count + count)) {
		pthread_mutex_unlock(&av->dom->lock);
		return -FI_ENOMEM;
	}
	for (size_t i = 0; i < count; i++) {
		struct fnv_addr a;
		fi_addr_t fa = FI_ADDR_NOTAVAIL;

		memcpy(&a, (const uint8_t *)addr + i * sizeof(a), sizeof(a));
		if (addr_ok(&a)) {
			size_t k = av->count;

			/* a map gives one fi_addr_t per address: reuse */
			if (av->type == FI_AV_MAP)
				for (k = 0; k < av->count; k++)
					if (av->used[k] && same(&av->addr[k], &a))
						break;
			if (k == av->count)
				av->count++;
			av->addr[k] = a;
			av->used[k] = true;
			fa = av->type == FI_AV_TABLE ? (fi_addr_t)k : map_addr(&a);
			good++;
		}
		if (fi_addr)
			fi_addr[i] = fa;
	}
	pthread_mutex_unlock(&av->dom->lock);
	return good;
}

static int av_insertsvc(struct fid_av *fav, const char *node,
			const char *service, fi_addr_t *fi_addr,
			uint64_t flags, void *context)
{
	struct fnv_addr a;

	(void)service;
	if (!node || !fnv_parse_addr(node, &a))
		return -FI_EINVAL;
	return av_insert(fav, &a, 1, fi_addr, flags, context);
}

static int av_insertsym(struct fid_av *fav, const char *node, size_t nodecnt,
			const char *service, size_t svccnt, fi_addr_t *fi_addr,
			uint64_t flags, void *context)
{
	(void)fav; (void)node; (void)nodecnt; (void)service; (void)svccnt;
	(void)fi_addr; (void)flags; (void)context;
	return -FI_ENOSYS;
}

static int av_remove(struct fid_av *fav, fi_addr_t *fi_addr, size_t count,
		     uint64_t flags)
{
	struct fnv_av *av = (struct fnv_av *)fav;
	int ret = 0;

	if (flags)
		return -FI_EINVAL;
	pthread_mutex_lock(&av->dom->lock);
	for (size_t i = 0; i < count; i++) {
		size_t k;

		if (av->type == FI_AV_TABLE) {
			k = fi_addr[i];
		} else {
			for (k = 0; k < av->count; k++)
				if (av->used[k] &&
				    map_addr(&av->addr[k]) == fi_addr[i])
					break;
		}
		if (k >= av->count || !av->used[k])
			ret = -FI_EINVAL;
		else
			av->used[k] = false;
	}
	pthread_mutex_unlock(&av->dom->lock);
	return ret;
}

static int av_lookup(struct fid_av *fav, fi_addr_t fa, void *addr,
		     size_t *addrlen)
{
	struct fnv_av *av = (struct fnv_av *)fav;
	struct fnv_addr a;
	int err;

	pthread_mutex_lock(&av->dom->lock);
	err = fnv_av_resolve(av, fa, &a);
	pthread_mutex_unlock(&av->dom->lock);
	if (err)
		return -FI_ENOENT;
	memcpy(addr, &a, *addrlen < sizeof(a) ? *addrlen : sizeof(a));
	err = *addrlen < sizeof(a) ? -FI_ETOOSMALL : 0;
	*addrlen = sizeof(a);
	return err;
}

static const char *av_straddr(struct fid_av *fav, const void *addr,
			      char *buf, size_t *len)
{
	struct fnv_addr a;
	char s[48];
	int n;

	(void)fav;
	memcpy(&a, addr, sizeof(a));
	if (a.magic != FNV_ADDR_MAGIC)
		n = snprintf(s, sizeof(s), "netvm:invalid");
	else if (a.nic)
		n = snprintf(s, sizeof(s), "netvm:%u:%u/%u", a.node, a.port,
			     a.nic);
	else
		n = snprintf(s, sizeof(s), "netvm:%u:%u", a.node, a.port);
	if (buf && *len)
		snprintf(buf, *len, "%s", s);
	*len = (size_t)n + 1;
	return buf;
}

static int av_close(struct fid *fid)
{
	struct fnv_av *av = (struct fnv_av *)fid;
	struct fnv_domain *d = av->dom;

	pthread_mutex_lock(&d->lock);
	if (av->refs) {
		pthread_mutex_unlock(&d->lock);
		return -FI_EBUSY;
	}
	d->refs--;
	pthread_mutex_unlock(&d->lock);
	free(av->addr);
	free(av->used);
	free(av);
	return 0;
}

static struct fi_ops av_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = av_close,
	.bind = fnv_no_bind,
	.control = fnv_no_control,
	.ops_open = fnv_no_ops_open,
	.tostr = fnv_tostr,
	.ops_set = fnv_no_ops_set,
};

static struct fi_ops_av av_ops = {
	.size = sizeof(struct fi_ops_av),
	.insert = av_insert,
	.insertsvc = av_insertsvc,
	.insertsym = av_insertsym,
	.remove = av_remove,
	.lookup = av_lookup,
	.straddr = av_straddr,
	.av_set = fnv_no_av_set,
};

int fnv_av_open(struct fid_domain *fd, struct fi_av_attr *attr,
		struct fid_av **fav, void *context)
{
	struct fnv_domain *d = (struct fnv_domain *)fd;
	struct fnv_av *av;

	if (!attr || attr->flags || attr->name || attr->rx_ctx_bits ||
	    (attr->type != FI_AV_UNSPEC && attr->type != FI_AV_MAP &&
	     attr->type != FI_AV_TABLE))
		return -FI_EINVAL;
	av = calloc(1, sizeof(*av));
	if (!av)
		return -FI_ENOMEM;
	av->dom = d;
	av->type = attr->type == FI_AV_TABLE ? FI_AV_TABLE : FI_AV_MAP;
	if (attr->count && grow(av, attr->count)) {
		free(av->addr);
		free(av);
		return -FI_ENOMEM;
	}
	av->av.fid.fclass = FI_CLASS_AV;
	av->av.fid.context = context;
	av->av.fid.ops = &av_fi_ops;
	av->av.ops = &av_ops;
	pthread_mutex_lock(&d->lock);
	d->refs++;
	pthread_mutex_unlock(&d->lock);
	*fav = &av->av;
	return 0;
}
