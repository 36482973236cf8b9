// SPDX-License-Identifier: (GPL-2.0-only OR MIT)
/*
 * libnetvm: NetVM's synchronisation algorithms (thesis tables 17-23) over
 * the transport of netvm_sync_algo.h.  Members spin only on their own
 * memory; central blocks change only through the NI's atomics.
 */
#include <errno.h>
#include <sched.h>
#include <time.h>

#include <netvm/netvm_fw.h>

#include "netvm_sync_algo.h"

#define EMPTY		NETVM_WQ_EMPTY

void nvs_area_init(volatile uint32_t *area, uint32_t n)
{
	uint32_t i, k;

	for (i = 0; i < NVS_AREA_SIZE / 4; i++)
		area[i] = 0;
	area[NVS_HDR_MAGIC / 4] = NVS_MAGIC;
	area[4 / 4] = n;
	for (k = 0; k < NETVM_SYNC_OBJS; k++) {
		area[NVS_CENTRAL(k) / 4] = EMPTY;		/* H, MCS tail */
		area[NVS_CENTRAL(k) / 4 + 1] = EMPTY;		/* T */
		area[(NVS_QNODE(k) + NVS_Q_NEXT) / 4] = EMPTY;
	}
}

static volatile uint32_t *qword(struct netvm_sync *s, uint32_t id,
				uint32_t field)
{
	return &s->area[(NVS_QNODE(id) + field) / 4];
}

static uint32_t notf_of(uint32_t id)
{
	return NETVM_SYNC_NOTF_BASE + id;
}

static uint64_t ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Spin on our own queue node until a successor names itself there. */
static int await_next(struct netvm_sync *s, uint32_t id, uint32_t *next)
{
	uint64_t t0 = ms_now();
	unsigned int i;

	for (i = 1;; i++) {
		*next = __atomic_load_n(qword(s, id, NVS_Q_NEXT),
					__ATOMIC_ACQUIRE);
		if (*next != EMPTY)
			return *next < s->n ? 0 : -EIO;
		if (i % 64 == 0) {
			if (ms_now() - t0 > (uint64_t)s->timeout_ms)
				return -ETIMEDOUT;
			sched_yield();
		}
	}
}

static int obj_init(struct netvm_sync *s, struct netvm_sync_obj *o,
		    unsigned int home, unsigned int id)
{
	if (!s || !o || home >= s->n || id >= NETVM_SYNC_OBJS)
		return -EINVAL;
	o->s = s;
	o->home = home;
	o->id = id;
	o->state = 0;
	return 0;
}

static int obj_ok(const struct netvm_sync_obj *o)
{
	return o && o->s && o->home < o->s->n && o->id < NETVM_SYNC_OBJS ?
	       0 : -EINVAL;
}

static int at(struct netvm_sync_obj *o, uint32_t op, uint32_t a0,
	      uint32_t a1, uint32_t r[3])
{
	struct netvm_sync *s = o->s;

	return s->ops->atomic(s->ctx, o->home, NVS_CENTRAL(o->id), op, a0, a1,
			      r);
}

static int wait_wake(struct netvm_sync_obj *o)
{
	struct netvm_sync *s = o->s;

	return s->ops->wait(s->ctx, notf_of(o->id), s->timeout_ms);
}

/* A notifying write to member m's queue node of this object. */
static int wake(struct netvm_sync_obj *o, uint32_t m, uint32_t field,
		uint32_t val)
{
	struct netvm_sync *s = o->s;

	return s->ops->put(s->ctx, m, NVS_QNODE(o->id) + field, val,
			   notf_of(o->id));
}

/* Link this member behind its predecessor t (if any). */
static int link_behind(struct netvm_sync_obj *o, uint32_t t)
{
	struct netvm_sync *s = o->s;

	if (t == EMPTY)
		return 0;
	if (t >= s->n)
		return -EIO;
	return s->ops->put(s->ctx, t, NVS_QNODE(o->id) + NVS_Q_NEXT, s->me, 0);
}

/* ---- MCS lock (table 17) ---- */

NETVM_PUBLIC int netvm_mcs_init(struct netvm_sync *s,
				struct netvm_sync_obj *lock,
				unsigned int home, unsigned int id)
{
	return obj_init(s, lock, home, id);
}

NETVM_PUBLIC int netvm_mcs_acquire(struct netvm_sync_obj *o)
{
	uint32_t r[3];
	int err = obj_ok(o);

	if (err)
		return err;
	if (o->state & NVS_HELD)
		return -EDEADLK;
	__atomic_store_n(qword(o->s, o->id, NVS_Q_NEXT), EMPTY,
			 __ATOMIC_RELEASE);
	err = at(o, NVM_AT_SWAP, o->s->me, 0, r);
	if (err)
		return err;
	if (r[0] != EMPTY) {
		err = link_behind(o, r[0]);
		if (!err)
			err = wait_wake(o);
		if (err)
			return err;
	}
	o->state |= NVS_HELD;
	return 0;
}

NETVM_PUBLIC int netvm_mcs_release(struct netvm_sync_obj *o)
{
	uint32_t r[3], next;
	int err = obj_ok(o);

	if (err)
		return err;
	if (!(o->state & NVS_HELD))
		return -EPERM;
	next = __atomic_load_n(qword(o->s, o->id, NVS_Q_NEXT),
			       __ATOMIC_ACQUIRE);
	if (next == EMPTY) {
		err = at(o, NVM_AT_CSWAP, o->s->me, EMPTY, r);
		if (err)
			return err;
		if (r[0] == o->s->me) {
			o->state &= ~NVS_HELD;
			return 0;
		}
		/* someone swapped itself in: it is about to link behind us */
		err = await_next(o->s, o->id, &next);
		if (err)
			return err;
	}
	err = wake(o, next, NVS_Q_GRANT, 1);
	if (!err)
		o->state &= ~NVS_HELD;
	return err;
}

/* ---- wait queues (tables 19, 20) ---- */

NETVM_PUBLIC int netvm_wq_init(struct netvm_sync *s, struct netvm_sync_obj *wq,
			       unsigned int home, unsigned int id)
{
	return obj_init(s, wq, home, id);
}

static void qnode_reset(struct netvm_sync_obj *o)
{
	__atomic_store_n(qword(o->s, o->id, NVS_Q_NEXT), EMPTY,
			 __ATOMIC_RELAXED);
	__atomic_store_n(qword(o->s, o->id, NVS_Q_CNT), 0, __ATOMIC_RELEASE);
}

/* enqueue or semP with this member's id, its queue node reset first. */
static int enqueue_self(struct netvm_sync_obj *o, uint32_t op, uint32_t r[3])
{
	int err = obj_ok(o);

	if (err)
		return err;
	if (o->state & NVS_QUEUED)
		return -EALREADY;
	qnode_reset(o);
	return at(o, op, o->s->me, 0, r);
}

NETVM_PUBLIC int netvm_wq_insert(struct netvm_sync_obj *o)
{
	uint32_t r[3];
	int err = enqueue_self(o, NVM_AT_ENQUEUE, r);

	if (err)
		return err;
	o->state |= NVS_QUEUED;
	return link_behind(o, r[0]);
}

/* Woken as the front: hand the head on to our successor, if any. */
static int woken(struct netvm_sync_obj *o)
{
	uint32_t r[3], next, c;
	int err;

	o->state &= ~NVS_QUEUED;
	c = __atomic_load_n(qword(o->s, o->id, NVS_Q_CNT), __ATOMIC_ACQUIRE);
	if (c == 0)
		return 0;
	err = await_next(o->s, o->id, &next);
	if (err)
		return err;
	err = at(o, NVM_AT_NEWHEAD, next, 0, r);
	if (err)
		return err;
	/* a wake-up came while the head was unknown: it is the successor's */
	if (r[0])
		return wake(o, next, NVS_Q_CNT, r[1]);
	return 0;
}

NETVM_PUBLIC int netvm_wq_wait(struct netvm_sync_obj *o)
{
	int err = obj_ok(o);

	if (err)
		return err;
	if (!(o->state & NVS_QUEUED))
		return -EINVAL;
	err = wait_wake(o);
	if (err)
		return err;
	return woken(o);
}

/* Wake the front of a dequeue/semV result; 1 if woken, 0 if none. */
static int wake_front(struct netvm_sync_obj *o, const uint32_t r[3])
{
	int err;

	if (r[0] == EMPTY)
		return 0;
	if (r[0] >= o->s->n)
		return -EIO;
	err = wake(o, r[0], NVS_Q_CNT, r[1]);
	return err ? err : 1;
}

NETVM_PUBLIC int netvm_wq_remove(struct netvm_sync_obj *o)
{
	uint32_t r[3];
	int err = obj_ok(o);

	if (err)
		return err;
	err = at(o, NVM_AT_DEQUEUE, 0, 0, r);
	return err ? err : wake_front(o, r);
}

/* ---- monitors (table 21) ---- */

NETVM_PUBLIC int netvm_mon_enter(struct netvm_sync_obj *mon)
{
	return netvm_mcs_acquire(mon);
}

NETVM_PUBLIC int netvm_mon_exit(struct netvm_sync_obj *mon)
{
	return netvm_mcs_release(mon);
}

NETVM_PUBLIC int netvm_cond_wait(struct netvm_sync_obj *mon,
				 struct netvm_sync_obj *cv)
{
	int err = obj_ok(mon);

	if (!err)
		err = obj_ok(cv);
	if (err)
		return err;
	if (!(mon->state & NVS_HELD))
		return -EPERM;
	err = netvm_wq_insert(cv);
	if (!err)
		err = netvm_mcs_release(mon);
	if (!err)
		err = netvm_wq_wait(cv);
	if (!err)
		err = netvm_mcs_acquire(mon);
	return err;
}

NETVM_PUBLIC int netvm_cond_signal(struct netvm_sync_obj *mon,
				   struct netvm_sync_obj *cv)
{
	int err = obj_ok(mon);

	if (err)
		return err;
	if (!(mon->state & NVS_HELD))
		return -EPERM;
	return netvm_wq_remove(cv);
}

/* ---- semaphores (tables 22, 23) ---- */

NETVM_PUBLIC int netvm_sem_init(struct netvm_sync *s,
				struct netvm_sync_obj *sem, unsigned int home,
				unsigned int id, uint32_t value)
{
	int err = obj_init(s, sem, home, id);

	if (!err && home == s->me)
		__atomic_store_n(&s->area[NVS_CENTRAL(id) / 4 + 4], value,
				 __ATOMIC_RELEASE);
	return err;
}

NETVM_PUBLIC int netvm_sem_wait(struct netvm_sync_obj *o)
{
	uint32_t r[3];
	int err = enqueue_self(o, NVM_AT_SEMP, r);

	if (err)
		return err;
	if (r[1] > 0)
		return (int)(r[1] & 0x7fffffff);
	o->state |= NVS_QUEUED;
	err = link_behind(o, r[0]);
	if (!err)
		err = netvm_wq_wait(o);
	return err;
}

NETVM_PUBLIC int netvm_sem_signal(struct netvm_sync_obj *o)
{
	uint32_t r[3];
	int err = obj_ok(o);

	if (err)
		return err;
	err = at(o, NVM_AT_SEMV, 0, 0, r);
	if (err)
		return err;
	if (r[0] != EMPTY) {
		err = wake_front(o, r);
		return err < 0 ? err : 0;
	}
	return (int)(r[2] & 0x7fffffff);
}

/* ---- barrier ---- */

NETVM_PUBLIC int netvm_sync_barrier(struct netvm_sync *s)
{
	uint32_t r[3], gen, m;
	int err;

	if (!s)
		return -EINVAL;
	gen = s->bar_gen + 1;
	err = s->ops->atomic(s->ctx, 0, NVS_BAR_COUNT, NVM_AT_INC, 0, 0, r);
	if (err)
		return err;
	s->bar_gen = gen;
	if (r[0] + 1 == gen * s->n) {
		/* the last to arrive releases the others */
		for (m = 0; m < s->n && !err; m++)
			if (m != s->me)
				err = s->ops->put(s->ctx, m, NVS_BAR_RELEASE,
						  gen, NETVM_SYNC_NOTF_BARRIER);
		return err;
	}
	return s->ops->wait(s->ctx, NETVM_SYNC_NOTF_BARRIER, s->timeout_ms);
}

NETVM_PUBLIC unsigned int netvm_sync_rank(const struct netvm_sync *s)
{
	return s ? s->me : 0;
}

NETVM_PUBLIC unsigned int netvm_sync_size(const struct netvm_sync *s)
{
	return s ? s->n : 0;
}
