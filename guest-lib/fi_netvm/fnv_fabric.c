// SPDX-License-Identifier: MIT
/*
 * The fabric, its domains (one per /dev/netvmN) and a quiet event queue
 * (no connection events).  Memory regions are fnv_mr.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fnv_nvm.h"

/* ---- domain ---- */

static int dom_close(struct fid *fid)
{
	struct fnv_domain *d = (struct fnv_domain *)fid;

	if (d->refs)
		return -FI_EBUSY;
	fnv_nvm_fini(d);
	netvm_close(d->nv);
	pthread_mutex_destroy(&d->lock);
	free(d);
	return 0;
}

static struct fi_ops dom_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = dom_close,
	.bind = fnv_no_bind,
	.control = fnv_no_control,
	.ops_open = fnv_no_ops_open,
	.tostr = fnv_tostr,
	.ops_set = fnv_no_ops_set,
};

/* fi_endpoint2: fi_endpoint's; its flags (FI_PEER, ...) are not offered */
static int dom_endpoint2(struct fid_domain *d, struct fi_info *info,
			 struct fid_ep **ep, uint64_t flags, void *context)
{
	if (flags)
		return -FI_ENOSYS;
	return fnv_ep_open(d, info, ep, context);
}

static struct fi_ops_domain dom_ops = {
	.size = sizeof(struct fi_ops_domain),
	.av_open = fnv_av_open,
	.cq_open = fnv_cq_open,
	.endpoint = fnv_ep_open,
	.scalable_ep = fnv_no_scalable_ep,
	.cntr_open = fnv_cntr_open,
	.poll_open = fnv_no_poll_open,
	.stx_ctx = fnv_no_stx_ctx,
	.srx_ctx = fnv_no_srx_ctx,
	.query_atomic = fnv_query_atomic,
	.query_collective = fnv_no_query_collective,
	.endpoint2 = dom_endpoint2,
};

static int dom_open(struct fid_fabric *fab, struct fi_info *info,
		    struct fid_domain **dom, void *context)
{
	struct netvm_info ni;
	struct fnv_domain *d;
	int index, err;

	(void)fab;
	if (!info || !info->domain_attr || !info->domain_attr->name ||
	    sscanf(info->domain_attr->name, "netvm%d", &index) != 1 ||
	    index < 0 || index >= FNV_DOMAINS)
		return -FI_EINVAL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -FI_ENOMEM;
	err = netvm_open(index, &d->nv);
	if (!err)
		err = netvm_info(d->nv, &ni);
	if (err) {
		FI_WARN(&fnv_prov, FI_LOG_DOMAIN, "/dev/netvm%d: %d\n", index,
			err);
		netvm_close(d->nv);
		free(d);
		return -FI_ENODEV;
	}
	pthread_mutex_init(&d->lock, NULL);
	d->index = index;
	d->node = (uint16_t)ni.node_id;
	d->dom.fid.fclass = FI_CLASS_DOMAIN;
	d->dom.fid.context = context;
	d->dom.fid.ops = &dom_fi_ops;
	d->dom.ops = &dom_ops;
	d->dom.mr = &fnv_mr_ops;
	/* regions are NetVM exports only where keys are the provider's */
	d->prov_key = info->domain_attr->mr_mode & FI_MR_PROV_KEY;
	d->rdm = info->ep_attr && info->ep_attr->type == FI_EP_RDM;
	*dom = &d->dom;
	return 0;
}

/* ---- event queue: nothing ever happens on it ---- */

struct fnv_eq {
	struct fid_eq eq;
};

static int eq_close(struct fid *fid)
{
	free(fid);
	return 0;
}

static ssize_t eq_read(struct fid_eq *eq, uint32_t *event, void *buf,
		       size_t len, uint64_t flags)
{
	(void)eq; (void)event; (void)buf; (void)len; (void)flags;
	return -FI_EAGAIN;
}

static ssize_t eq_readerr(struct fid_eq *eq, struct fi_eq_err_entry *buf,
			  uint64_t flags)
{
	(void)eq; (void)buf; (void)flags;
	return -FI_EAGAIN;
}

static ssize_t eq_sread(struct fid_eq *eq, uint32_t *event, void *buf,
			size_t len, int timeout, uint64_t flags)
{
	(void)eq; (void)event; (void)buf; (void)len; (void)timeout;
	(void)flags;
	return -FI_EAGAIN;	/* no event will come: do not sleep */
}

static ssize_t eq_write(struct fid_eq *eq, uint32_t event, const void *buf,
			size_t len, uint64_t flags)
{
	(void)eq; (void)event; (void)buf; (void)len; (void)flags;
	return -FI_ENOSYS;
}

static const char *eq_strerror(struct fid_eq *eq, int prov_errno,
			       const void *err_data, char *buf, size_t len)
{
	(void)eq; (void)err_data;
	if (!buf || !len)
		return fi_strerror(prov_errno);
	snprintf(buf, len, "%s", fi_strerror(prov_errno));
	return buf;
}

static struct fi_ops eq_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = eq_close,
	.bind = fnv_no_bind,
	.control = fnv_no_control,
	.ops_open = fnv_no_ops_open,
	.tostr = fnv_tostr,
	.ops_set = fnv_no_ops_set,
};

static struct fi_ops_eq eq_ops = {
	.size = sizeof(struct fi_ops_eq),
	.read = eq_read,
	.readerr = eq_readerr,
	.write = eq_write,
	.sread = eq_sread,
	.strerror = eq_strerror,
};

static int eq_open(struct fid_fabric *fab, struct fi_eq_attr *attr,
		   struct fid_eq **eq, void *context)
{
	struct fnv_eq *e;

	(void)fab;
	if (attr && (attr->wait_obj == FI_WAIT_FD ||
		     attr->wait_obj == FI_WAIT_SET))
		return -FI_ENOSYS;
	e = calloc(1, sizeof(*e));
	if (!e)
		return -FI_ENOMEM;
	e->eq.fid.fclass = FI_CLASS_EQ;
	e->eq.fid.context = context;
	e->eq.fid.ops = &eq_fi_ops;
	e->eq.ops = &eq_ops;
	*eq = &e->eq;
	return 0;
}

/* ---- fabric ---- */

static int fab_close(struct fid *fid)
{
	free(fid);
	return 0;
}

static struct fi_ops fab_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = fab_close,
	.bind = fnv_no_bind,
	.control = fnv_no_control,
	.ops_open = fnv_no_ops_open,
	.tostr = fnv_tostr,
	.ops_set = fnv_no_ops_set,
};

/* fi_domain2: fi_domain's; its flags (FI_PEER) are not offered */
static int dom_open2(struct fid_fabric *fab, struct fi_info *info,
		     struct fid_domain **dom, uint64_t flags, void *context)
{
	if (flags)
		return -FI_ENOSYS;
	return dom_open(fab, info, dom, context);
}

static struct fi_ops_fabric fab_ops = {
	.size = sizeof(struct fi_ops_fabric),
	.domain = dom_open,
	.passive_ep = fnv_no_passive_ep,
	.eq_open = eq_open,
	.wait_open = fnv_no_wait_open,
	.trywait = fnv_no_trywait,
	.domain2 = dom_open2,
};

int fnv_fabric_open(struct fi_fabric_attr *attr, struct fid_fabric **fab,
		    void *context)
{
	struct fnv_fabric *f;

	if (attr && attr->name && strcmp(attr->name, FNV_NAME))
		return -FI_EINVAL;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -FI_ENOMEM;
	f->fab.fid.fclass = FI_CLASS_FABRIC;
	f->fab.fid.context = context;
	f->fab.fid.ops = &fab_fi_ops;
	f->fab.ops = &fab_ops;
	f->fab.api_version = FNV_API;
	*fab = &f->fab;
	return 0;
}
