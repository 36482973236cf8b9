// SPDX-License-Identifier: MIT
/*
 * Counters (fi_cntr_open, on a domain opened for RDM endpoints): a count
 * of completed operations and one of failed ones, bound to endpoints for
 * sends, receives, reads and writes (FI_SEND, FI_RECV, FI_READ,
 * FI_WRITE; NetVM tells a target nothing, so not FI_REMOTE_*).  Every
 * operation counts once, when it completes, with or without a
 * completion-queue entry (injects, FI_SELECTIVE_COMPLETION); what a call
 * refuses (a negative return) never started and does not count.
 * Reading progresses the bound endpoints (manual progress);
 * fi_cntr_wait sleeps in poll(2) like fi_cq_sread.
 */
#include <poll.h>
#include <stdlib.h>

#include "fnv_rdm.h"

void fnv_cntr_count_locked(struct fnv_cntr *c, int err)
{
	if (!c)
		return;
	if (err)
		c->err++;
	else
		c->value++;
}

int fnv_cntr_attach_locked(struct fnv_cntr *c, struct fnv_ep *ep)
{
	for (int i = 0; i < FNV_CQ_EPS; i++)
		if (c->eps[i] == ep)
			return 0;
	for (int i = 0; i < FNV_CQ_EPS; i++)
		if (!c->eps[i]) {
			c->eps[i] = ep;
			c->refs++;
			return 0;
		}
	return -FI_ENOSPC;
}

void fnv_cntr_detach_locked(struct fnv_cntr *c, struct fnv_ep *ep)
{
	for (int i = 0; i < FNV_CQ_EPS; i++)
		if (c->eps[i] == ep) {
			c->eps[i] = NULL;
			c->refs--;
		}
}

/* Only RDM endpoints are bound (fnv_ep.c). */
static void progress_locked(struct fnv_cntr *c)
{
	for (int i = 0; i < FNV_CQ_EPS; i++)
		if (c->eps[i])
			fnv_rdm_progress_locked(c->eps[i]);
}

static uint64_t c_read(struct fid_cntr *fc)
{
	struct fnv_cntr *c = (struct fnv_cntr *)fc;
	uint64_t v;

	pthread_mutex_lock(&c->dom->lock);
	progress_locked(c);
	v = c->value;
	pthread_mutex_unlock(&c->dom->lock);
	return v;
}

static uint64_t c_readerr(struct fid_cntr *fc)
{
	struct fnv_cntr *c = (struct fnv_cntr *)fc;
	uint64_t v;

	pthread_mutex_lock(&c->dom->lock);
	progress_locked(c);
	v = c->err;
	pthread_mutex_unlock(&c->dom->lock);
	return v;
}

static int change(struct fid_cntr *fc, uint64_t v, bool err, bool add)
{
	struct fnv_cntr *c = (struct fnv_cntr *)fc;
	uint64_t *p = err ? &c->err : &c->value;

	pthread_mutex_lock(&c->dom->lock);
	*p = add ? *p + v : v;
	pthread_mutex_unlock(&c->dom->lock);
	return 0;
}

static int c_add(struct fid_cntr *fc, uint64_t v)
{
	return change(fc, v, false, true);
}

static int c_set(struct fid_cntr *fc, uint64_t v)
{
	return change(fc, v, false, false);
}

static int c_adderr(struct fid_cntr *fc, uint64_t v)
{
	return change(fc, v, true, true);
}

static int c_seterr(struct fid_cntr *fc, uint64_t v)
{
	return change(fc, v, true, false);
}

/* Until the count reaches threshold (0), an operation fails (the error
 * count changes: -FI_EAVAIL) or timeout ms pass (-FI_ETIMEDOUT; < 0: no
 * limit). */
static int c_wait(struct fid_cntr *fc, uint64_t threshold, int timeout)
{
	struct fnv_cntr *c = (struct fnv_cntr *)fc;
	int64_t end = fnv_now_ms() + timeout;
	struct pollfd pfd[2 * FNV_CQ_EPS];
	uint64_t err0;
	int r;

	if (c->wait == FI_WAIT_NONE)
		return -FI_EINVAL;
	pthread_mutex_lock(&c->dom->lock);
	err0 = c->err;
	for (;;) {
		int n = 0, wait = -1, ready = 0;

		progress_locked(c);
		if (c->value >= threshold) {
			r = 0;
			break;
		}
		if (c->err != err0) {
			r = -FI_EAVAIL;
			break;
		}
		for (int i = 0; i < FNV_CQ_EPS; i++) {
			int fds[2], t;

			if (!c->eps[i] || !c->eps[i]->enabled)
				continue;
			ready |= fnv_wire_arm(&c->eps[i]->w, fds);
			pfd[n].fd = fds[0];
			pfd[n++].events = POLLIN;
			pfd[n].fd = fds[1];
			pfd[n++].events = POLLIN;
			t = fnv_rdm_timer_ms(c->eps[i]);
			if (t >= 0 && (wait < 0 || t < wait))
				wait = t;
		}
		if (ready)
			continue;
		if (timeout >= 0) {
			int64_t left = end - fnv_now_ms();

			if (left <= 0) {
				r = -FI_ETIMEDOUT;
				break;
			}
			if (wait < 0 || left < wait)
				wait = (int)left;
		}
		/* the RDM acks deferred: nothing carries them now */
		fnv_rdm_flush_bound_locked(c->eps);
		pthread_mutex_unlock(&c->dom->lock);
		poll(pfd, (nfds_t)n, wait);
		pthread_mutex_lock(&c->dom->lock);
	}
	pthread_mutex_unlock(&c->dom->lock);
	return r;
}

static int c_close(struct fid *fid)
{
	struct fnv_cntr *c = (struct fnv_cntr *)fid;
	struct fnv_domain *d = c->dom;

	pthread_mutex_lock(&d->lock);
	if (c->refs) {
		pthread_mutex_unlock(&d->lock);
		return -FI_EBUSY;
	}
	d->refs--;
	pthread_mutex_unlock(&d->lock);
	free(c);
	return 0;
}

static struct fi_ops cntr_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = c_close,
	.bind = fnv_no_bind,
	.control = fnv_no_control,
	.ops_open = fnv_no_ops_open,
	.tostr = fnv_tostr,
	.ops_set = fnv_no_ops_set,
};

static struct fi_ops_cntr cntr_ops = {
	.size = sizeof(struct fi_ops_cntr),
	.read = c_read,
	.readerr = c_readerr,
	.add = c_add,
	.set = c_set,
	.wait = c_wait,
	.adderr = c_adderr,
	.seterr = c_seterr,
};

int fnv_cntr_open(struct fid_domain *fd, struct fi_cntr_attr *attr,
		  struct fid_cntr **fc, void *context)
{
	struct fnv_domain *d = (struct fnv_domain *)fd;
	/* no attributes: the defaults (fi_cntr(3)) */
	struct fi_cntr_attr a = attr ? *attr : (struct fi_cntr_attr){
		.events = FI_CNTR_EVENTS_COMP, .wait_obj = FI_WAIT_NONE,
	};
	struct fnv_cntr *c;

	if (!d->rdm)
		return -FI_ENOSYS;	/* datagram domains: no counters */
	if (a.flags)
		return -FI_EBADFLAGS;	/* reserved, must be 0 */
	/* as completion queues: sleeping is in fi_cntr_wait only, no
	 * descriptor or wait set to give out */
	if (a.events != FI_CNTR_EVENTS_COMP ||
	    (a.wait_obj != FI_WAIT_NONE && a.wait_obj != FI_WAIT_UNSPEC))
		return -FI_ENOSYS;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -FI_ENOMEM;
	c->dom = d;
	c->wait = a.wait_obj;
	c->cntr.fid.fclass = FI_CLASS_CNTR;
	c->cntr.fid.context = context;
	c->cntr.fid.ops = &cntr_fi_ops;
	c->cntr.ops = &cntr_ops;
	pthread_mutex_lock(&d->lock);
	d->refs++;
	pthread_mutex_unlock(&d->lock);
	*fc = &c->cntr;
	return 0;
}
