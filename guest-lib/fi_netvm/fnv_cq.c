// SPDX-License-Identifier: MIT
#define _GNU_SOURCE	/* ppoll */
/*
 * Completion queues: a ring of entries the endpoints' operations leave,
 * read in the four formats FI_CQ_FORMAT_CONTEXT, _MSG, _DATA and _TAGGED
 * (remote data and tags from RDM endpoints), the sender's address with readfrom (FI_SOURCE),
 * errors with readerr.  Reading progresses the bound endpoints (manual
 * progress); sread sleeps in poll(2) on their descriptors, woken by the
 * NI's one interrupt per arming, and so does a read that follows a run
 * of empty reads longer than FI_NETVM_SPIN_US, for at most FI_NETVM_NAP_US
 * (fnv_nap.c says why).  Error entries keep their place: a read
 * that meets one returns what came before, then -FI_EAVAIL.
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fnv_rdm.h"

bool fnv_cq_room_locked(const struct fnv_cq *cq, size_t n)
{
	return cq->size - cq->n >= n;
}

void fnv_cq_push_locked(struct fnv_cq *cq, const struct fnv_cqe *e)
{
	cq->ring[(cq->head + cq->n) % cq->size] = *e;
	cq->n++;
}

int fnv_cq_attach_locked(struct fnv_cq *cq, struct fnv_ep *ep)
{
	for (int i = 0; i < FNV_CQ_EPS; i++)
		if (cq->eps[i] == ep)
			return 0;
	for (int i = 0; i < FNV_CQ_EPS; i++)
		if (!cq->eps[i]) {
			cq->eps[i] = ep;
			cq->refs++;
			return 0;
		}
	return -FI_ENOSPC;
}

void fnv_cq_detach_locked(struct fnv_cq *cq, struct fnv_ep *ep)
{
	for (int i = 0; i < FNV_CQ_EPS; i++)
		if (cq->eps[i] == ep) {
			cq->eps[i] = NULL;
			cq->refs--;
		}
}

static size_t entry_size(enum fi_cq_format f)
{
	switch (f) {
	case FI_CQ_FORMAT_CONTEXT:	return sizeof(struct fi_cq_entry);
	case FI_CQ_FORMAT_MSG:		return sizeof(struct fi_cq_msg_entry);
	case FI_CQ_FORMAT_DATA:		return sizeof(struct fi_cq_data_entry);
	default:			return sizeof(struct fi_cq_tagged_entry);
	}
}

static void write_entry(const struct fnv_cq *cq, void *out,
			const struct fnv_cqe *e)
{
	struct fi_cq_tagged_entry d = {
		.op_context = e->ctx, .flags = e->flags, .len = e->len,
		.buf = e->buf, .data = e->data, .tag = e->tag,
	};

	/* the four formats share their leading fields */
	memcpy(out, &d, entry_size(cq->format));
}

static void progress_locked(struct fnv_cq *cq)
{
	for (int i = 0; i < FNV_CQ_EPS; i++)
		if (cq->eps[i])
			fnv_ep_progress_locked(cq->eps[i]);
}

static ssize_t read_locked(struct fnv_cq *cq, void *buf, size_t count,
			   fi_addr_t *src)
{
	size_t k = 0;

	progress_locked(cq);
	while (k < count && cq->n) {
		const struct fnv_cqe *e = &cq->ring[cq->head];

		if (e->err)
			break;
		write_entry(cq, (uint8_t *)buf + k * entry_size(cq->format), e);
		if (src)
			src[k] = e->src;
		cq->head = (cq->head + 1) % cq->size;
		cq->n--;
		k++;
	}
	if (k)
		return (ssize_t)k;
	return cq->n ? -FI_EAVAIL : -FI_EAGAIN;
}

static ssize_t nap_locked(struct fnv_cq *cq, void *buf, size_t count,
			  fi_addr_t *src);

/*
 * Every yield_every-th empty read in a row offers the host CPU to another
 * vCPU (netvm_unet_yield): on a host with fewer CPUs than spinning vCPUs,
 * the one this reader waits for may be queued behind it for a whole host
 * time slice.  Unlike a nap it never delays the reader where it has its
 * CPU to itself; the cost there is one exit every yield_every reads.
 */
static void yield_locked(struct fnv_cq *cq)
{
	if (!cq->yield_every || ++cq->empties % cq->yield_every)
		return;
	for (int i = 0; i < FNV_CQ_EPS; i++) {
		if (cq->eps[i] && cq->eps[i]->w.u) {
			netvm_unet_yield(cq->eps[i]->w.u);
			cq->yields++;
			return;
		}
	}
}

static ssize_t cq_readfrom(struct fid_cq *fcq, void *buf, size_t count,
			   fi_addr_t *src)
{
	struct fnv_cq *cq = (struct fnv_cq *)fcq;
	ssize_t r;

	if (!buf && count)
		return -FI_EINVAL;
	pthread_mutex_lock(&cq->dom->lock);
	r = read_locked(cq, buf, count, src);
	if (r == -FI_EAGAIN)
		r = nap_locked(cq, buf, count, src);
	else
		fnv_nap_busy(&cq->nap);
	if (r == -FI_EAGAIN)
		yield_locked(cq);
	else
		cq->empties = 0;
	pthread_mutex_unlock(&cq->dom->lock);
	return r;
}

static ssize_t cq_read(struct fid_cq *fcq, void *buf, size_t count)
{
	return cq_readfrom(fcq, buf, count, NULL);
}

static ssize_t cq_readerr(struct fid_cq *fcq, struct fi_cq_err_entry *buf,
			  uint64_t flags)
{
	struct fnv_cq *cq = (struct fnv_cq *)fcq;
	const struct fnv_cqe *e;
	ssize_t r = -FI_EAGAIN;

	(void)flags;
	pthread_mutex_lock(&cq->dom->lock);
	e = cq->n ? &cq->ring[cq->head] : NULL;
	if (e && e->err) {
		/* err_data_size is the caller's (API >= 1.5): no err_data */
		buf->op_context = e->ctx;
		buf->flags = e->flags;
		buf->len = e->len;
		buf->buf = e->buf;
		buf->data = e->data;
		buf->tag = e->tag;
		buf->olen = e->olen;
		buf->err = e->err;
		buf->prov_errno = e->err;
		buf->err_data_size = 0;
		cq->head = (cq->head + 1) % cq->size;
		cq->n--;
		r = 1;
	}
	pthread_mutex_unlock(&cq->dom->lock);
	return r;
}

static int64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static int64_t now_ms(void)
{
	return now_ns() / 1000000;
}

/* How long sread may sleep before an endpoint's timers (RDM resends and
 * acks) need progress: the soonest, or -1 for none. */
static int timers_locked(struct fnv_cq *cq)
{
	int due = -1;

	for (int i = 0; i < FNV_CQ_EPS; i++) {
		int t;

		if (!cq->eps[i] || !cq->eps[i]->rdm)
			continue;
		t = fnv_rdm_timer_ms(cq->eps[i]);
		if (t >= 0 && (due < 0 || t < due))
			due = t;
	}
	return due;
}

/* Arm every bound endpoint; 1 if one has a message already. */
static int arm_locked(struct fnv_cq *cq, struct pollfd *pfd, int *npfd)
{
	int ready = 0;

	*npfd = 0;
	for (int i = 0; i < FNV_CQ_EPS; i++) {
		int fds[2];

		if (!cq->eps[i] || !cq->eps[i]->enabled)
			continue;
		if (fnv_wire_arm(&cq->eps[i]->w, fds))
			ready = 1;
		for (int j = 0; j < 2; j++) {
			pfd[*npfd].fd = fds[j];
			pfd[*npfd].events = POLLIN;
			(*npfd)++;
		}
	}
	return ready;
}

/*
 * Sleep in poll(2) on the armed endpoints' descriptors until one has a
 * message, an endpoint's timer is due or wait_us pass (-1: no limit).
 * The RDM acks held back for a reply are sent first: nothing will carry
 * them while this process sleeps.
 */
static void sleep_locked(struct fnv_cq *cq, struct pollfd *pfd, int npfd,
			 int64_t wait_us)
{
	int timer = timers_locked(cq);
	struct timespec ts, *tsp = NULL;

	if (timer >= 0 && (wait_us < 0 || timer * 1000LL < wait_us))
		wait_us = timer * 1000LL;
	if (wait_us >= 0) {
		ts.tv_sec = wait_us / 1000000;
		ts.tv_nsec = wait_us % 1000000 * 1000;
		tsp = &ts;
	}
	fnv_rdm_flush_bound_locked(cq->eps);
	pthread_mutex_unlock(&cq->dom->lock);
	ppoll(pfd, (nfds_t)npfd, tsp, NULL);
	pthread_mutex_lock(&cq->dom->lock);
}

/* An empty read: after a run of them as long as FI_NETVM_SPIN_US, sleep
 * (at most FI_NETVM_NAP_US) and read again. */
static ssize_t nap_locked(struct fnv_cq *cq, void *buf, size_t count,
			  fi_addr_t *src)
{
	struct pollfd pfd[2 * FNV_CQ_EPS];
	int npfd;
	ssize_t r;

	/* off (the default): not even the clock is read (the guest's
	 * clocksource may cost a system call and an emulated port read) */
	if (cq->spin_ns < 0 ||
	    !fnv_nap_empty(&cq->nap, now_ns(), cq->spin_ns))
		return -FI_EAGAIN;
	if (!arm_locked(cq, pfd, &npfd)) {
		sleep_locked(cq, pfd, npfd, cq->nap_us);
		cq->naps++;
	}
	r = read_locked(cq, buf, count, src);
	if (r == -FI_EAGAIN) {
		fnv_nap_slept(&cq->nap, now_ns());
	} else {
		cq->naps_woken++;
		fnv_nap_busy(&cq->nap);
	}
	return r;
}

static ssize_t cq_sreadfrom(struct fid_cq *fcq, void *buf, size_t count,
			    fi_addr_t *src, const void *cond, int timeout)
{
	struct fnv_cq *cq = (struct fnv_cq *)fcq;
	int64_t end = timeout >= 0 ? now_ms() + timeout : 0;
	struct pollfd pfd[2 * FNV_CQ_EPS];
	ssize_t r;

	(void)cond;	/* FI_CQ_COND_NONE only: one entry wakes */
	if (cq->wait == FI_WAIT_NONE)
		return -FI_EINVAL;
	pthread_mutex_lock(&cq->dom->lock);
	for (;;) {
		int npfd;
		int64_t wait = -1;

		r = read_locked(cq, buf, count, src);
		if (r != -FI_EAGAIN)
			break;
		if (arm_locked(cq, pfd, &npfd))
			continue;	/* a message came: progress again */
		if (timeout >= 0) {
			int64_t left = end - now_ms();

			if (left <= 0)
				break;	/* -FI_EAGAIN: timed out */
			wait = left * 1000;
		}
		sleep_locked(cq, pfd, npfd, wait);
	}
	pthread_mutex_unlock(&cq->dom->lock);
	return r;
}

static ssize_t cq_sread(struct fid_cq *fcq, void *buf, size_t count,
			const void *cond, int timeout)
{
	return cq_sreadfrom(fcq, buf, count, NULL, cond, timeout);
}

static const char *cq_strerror(struct fid_cq *fcq, int prov_errno,
			       const void *err_data, char *buf, size_t len)
{
	(void)fcq; (void)err_data;
	if (!buf || !len)
		return fi_strerror(prov_errno);
	snprintf(buf, len, "%s", fi_strerror(prov_errno));
	return buf;
}

static int cq_signal(struct fid_cq *fcq)
{
	(void)fcq;
	return -FI_ENOSYS;
}

static int cq_close(struct fid *fid)
{
	struct fnv_cq *cq = (struct fnv_cq *)fid;
	struct fnv_domain *d = cq->dom;

	pthread_mutex_lock(&d->lock);
	if (cq->refs) {
		pthread_mutex_unlock(&d->lock);
		return -FI_EBUSY;
	}
	d->refs--;
	pthread_mutex_unlock(&d->lock);
	FI_INFO(&fnv_prov, FI_LOG_CQ,
		"completion queue closed: %llu naps, %llu reads after a sleep or an armed endpoint found something, %llu yields\n",
		(unsigned long long)cq->naps,
		(unsigned long long)cq->naps_woken,
		(unsigned long long)cq->yields);
	free(cq->ring);
	free(cq);
	return 0;
}

static struct fi_ops cq_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = cq_close,
	.bind = fnv_no_bind,
	.control = fnv_no_control,
	.ops_open = fnv_no_ops_open,
	.tostr = fnv_tostr,
	.ops_set = fnv_no_ops_set,
};

static struct fi_ops_cq cq_ops = {
	.size = sizeof(struct fi_ops_cq),
	.read = cq_read,
	.readfrom = cq_readfrom,
	.readerr = cq_readerr,
	.sread = cq_sread,
	.sreadfrom = cq_sreadfrom,
	.signal = cq_signal,
	.strerror = cq_strerror,
};

int fnv_cq_open(struct fid_domain *fd, struct fi_cq_attr *attr,
		struct fid_cq **fcq, void *context)
{
	struct fnv_domain *d = (struct fnv_domain *)fd;
	struct fnv_cq *cq;

	if (!attr || attr->flags ||
	    attr->wait_cond != FI_CQ_COND_NONE)
		return -FI_ENOSYS;
	switch (attr->format) {
	case FI_CQ_FORMAT_UNSPEC:
	case FI_CQ_FORMAT_CONTEXT:
	case FI_CQ_FORMAT_MSG:
	case FI_CQ_FORMAT_DATA:
	case FI_CQ_FORMAT_TAGGED:
		break;
	default:
		return -FI_ENOSYS;
	}
	/* sleeping is in sread only: no descriptor or wait set to give out */
	if (attr->wait_obj != FI_WAIT_NONE && attr->wait_obj != FI_WAIT_UNSPEC)
		return -FI_ENOSYS;
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return -FI_ENOMEM;
	cq->size = attr->size ? attr->size : FNV_CQ_SIZE;
	cq->ring = calloc(cq->size, sizeof(*cq->ring));
	if (!cq->ring) {
		free(cq);
		return -FI_ENOMEM;
	}
	cq->format = attr->format == FI_CQ_FORMAT_UNSPEC ?
		     FI_CQ_FORMAT_CONTEXT : attr->format;
	cq->wait = attr->wait_obj;
	fnv_nap_params(&cq->spin_ns, &cq->nap_us);
	cq->yield_every = fnv_yield_param();
	cq->dom = d;
	cq->cq.fid.fclass = FI_CLASS_CQ;
	cq->cq.fid.context = context;
	cq->cq.fid.ops = &cq_fi_ops;
	cq->cq.ops = &cq_ops;
	pthread_mutex_lock(&d->lock);
	d->refs++;
	pthread_mutex_unlock(&d->lock);
	*fcq = &cq->cq;
	return 0;
}
