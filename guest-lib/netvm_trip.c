// SPDX-License-Identifier: (GPL-2.0-only OR MIT)
/*
 * libnetvm: tripwires (docs/tripwire.md).  Setting and clearing go to the
 * driver (NETVM_IOC_TRIP_*); hits come back on the endpoint's notification
 * queue, where netvm_notf.c sorts them into the handle's tripwire queue.
 * A range is cut at page boundaries, one tripwire per piece, all in one
 * tripset.
 */
#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>

#include "netvm_priv.h"

_Static_assert(NETVM_TRIP_READ == NVM_TW_READ &&
	       NETVM_TRIP_WRITE == NVM_TW_WRITE &&
	       NETVM_TRIP_ONCE == NVM_TW_ONCE &&
	       NETVM_TRIP_OUTGOING == NVM_TW_OUTGOING &&
	       NETVM_TRIP_MAX == NVM_TW_MAX, "public tripwire flags");

static int trip_ok(struct netvm *nv, const struct netvm_tripset *ts)
{
	if (!nv || !ts || ts->n > NETVM_TRIPSET_MAX)
		return -EINVAL;
	return nv->efd < 0 ? -ENXIO : 0;
}

static int clear_one(struct netvm *nv, uint32_t id)
{
	return ioctl(nv->efd, NETVM_IOC_TRIP_CLEAR, &id) < 0 ? -errno : 0;
}

/* One tripwire per page piece of [va, +len), added to *ts; all or none. */
static int set_range(struct netvm *nv, uint64_t va, size_t len,
		     unsigned int flags, uint16_t node, uint16_t port,
		     struct netvm_tripset *ts)
{
	unsigned int first = ts->n;
	uint64_t end = va + len;
	int err = 0;

	if (!len || end < va)
		return -EINVAL;
	if (flags & ~(NETVM_TRIP_READ | NETVM_TRIP_WRITE | NETVM_TRIP_ONCE |
		      NETVM_TRIP_OUTGOING) ||
	    !(flags & (NETVM_TRIP_READ | NETVM_TRIP_WRITE)))
		return -EINVAL;
	while (va < end) {
		uint64_t piece = NVM_PAGE_SIZE - (va & (NVM_PAGE_SIZE - 1));
		struct netvm_trip_req r = {
			.va = va, .flags = flags, .node = node, .port = port,
		};

		if (piece > end - va)
			piece = end - va;
		r.len = (uint32_t)piece;
		if (ts->n == NETVM_TRIPSET_MAX) {
			err = -ENOSPC;
			break;
		}
		if (ioctl(nv->efd, NETVM_IOC_TRIP_SET, &r) < 0) {
			err = -errno;
			break;
		}
		ts->id[ts->n++] = r.id;
		va += piece;
	}
	if (err) {
		while (ts->n > first)
			clear_one(nv, ts->id[--ts->n]);
	}
	return err;
}

NETVM_PUBLIC int netvm_trip_set(struct netvm *nv, const void *addr,
				size_t len, unsigned int flags,
				struct netvm_tripset *ts)
{
	int err = trip_ok(nv, ts);

	if (err)
		return err;
	if (!addr || (flags & NETVM_TRIP_OUTGOING))
		return -EINVAL;
	return set_range(nv, (uint64_t)(uintptr_t)addr, len, flags, 0, 0, ts);
}

NETVM_PUBLIC int netvm_trip_set_remote(struct netvm *nv, int seg,
				       uint64_t off, size_t len,
				       unsigned int flags,
				       struct netvm_tripset *ts)
{
	struct netvm_segment s;
	int err = trip_ok(nv, ts);

	if (err)
		return err;
	err = netvm_import_info(nv, seg, &s);
	if (err)
		return err;
	if (off > s.len || len > s.len - off)
		return -ERANGE;
	return set_range(nv, s.addr + off, len, flags | NETVM_TRIP_OUTGOING,
			 (uint16_t)s.node, (uint16_t)s.port, ts);
}

static int in_set(const struct netvm_tripset *ts, uint32_t id)
{
	for (unsigned int i = 0; i < ts->n; i++)
		if (ts->id[i] == id)
			return 1;
	return 0;
}

/* Take (or, with out NULL, count) hits of *ts in the queue.  notf_mu held. */
static int take(struct netvm *nv, const struct netvm_tripset *ts,
		struct netvm_trip_event *out)
{
	int found = 0;

	for (uint32_t i = 0; i < nv->tripq_count; i++) {
		uint32_t k = (nv->tripq_head + i) % NVL_TRIPQ;

		if (!in_set(ts, nv->tripq[k].id))
			continue;
		if (!out) {
			found++;
			continue;
		}
		*out = nv->tripq[k];
		/* close the gap: the queue keeps its order */
		for (uint32_t j = i; j + 1 < nv->tripq_count; j++)
			nv->tripq[(nv->tripq_head + j) % NVL_TRIPQ] =
				nv->tripq[(nv->tripq_head + j + 1) % NVL_TRIPQ];
		nv->tripq_count--;
		return 1;
	}
	return found;
}

NETVM_PUBLIC int netvm_trip_clear(struct netvm *nv, struct netvm_tripset *ts)
{
	struct netvm_trip_event ev;
	int err = trip_ok(nv, ts), e;

	if (err)
		return err;
	for (unsigned int i = 0; i < ts->n; i++) {
		e = clear_one(nv, ts->id[i]);
		if (e && !err)
			err = e;
	}
	pthread_mutex_lock(&nv->notf_mu);
	nvl_notf_drain(nv);
	while (take(nv, ts, &ev))
		;
	pthread_mutex_unlock(&nv->notf_mu);
	ts->n = 0;
	return err;
}

NETVM_PUBLIC int netvm_trip_test(struct netvm *nv,
				 const struct netvm_tripset *ts)
{
	int err = trip_ok(nv, ts), n;

	if (err)
		return err;
	pthread_mutex_lock(&nv->notf_mu);
	nvl_notf_drain(nv);
	n = take(nv, ts, NULL);
	pthread_mutex_unlock(&nv->notf_mu);
	return n;
}

NETVM_PUBLIC int netvm_trip_wait(struct netvm *nv,
				 const struct netvm_tripset *ts,
				 int timeout_ms, struct netvm_trip_event *ev)
{
	uint64_t deadline;
	int err = trip_ok(nv, ts), got;

	if (err)
		return err;
	if (!ev || !ts->n)
		return -EINVAL;
	deadline = nvl_deadline(timeout_ms);
	for (;;) {
		pthread_mutex_lock(&nv->notf_mu);
		nvl_notf_drain(nv);
		got = take(nv, ts, ev);
		pthread_mutex_unlock(&nv->notf_mu);
		if (got)
			return 0;
		err = nvl_notf_sleep(nv, deadline, timeout_ms < 0);
		if (err)
			return err;
	}
}
