// SPDX-License-Identifier: (GPL-2.0-only OR MIT)
/*
 * libnetvm: notifications -- the signal/ack counters in the endpoint's
 * SRAM, the notification ring the NI writes in host memory, and handlers
 * of armed notifications.
 *
 * NetVM calls handlers from a SIGUSR2 dispatcher; until the driver can
 * deliver a signal, one library-owned thread per handle sleeps in poll(2)
 * on the endpoint's descriptor and calls them.  Exactly once per event
 * (as NetVM's dispatcher): only that thread acknowledges an armed number,
 * one event after each call, while sig - ack > 0.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "netvm_priv.h"

#define NVL_POLL_MAX_MS	100	/* an event coalesced into a drained entry is
				 * seen at the latest after this long */

void nvl_notf_init(struct netvm *nv)
{
	pthread_mutex_init(&nv->notf_mu, NULL);
	pthread_mutex_init(&nv->arm_mu, NULL);
	pthread_cond_init(&nv->hd.done, NULL);
	nv->hd.wake_fd = -1;
}

void nvl_notf_fini(struct netvm *nv)
{
	pthread_cond_destroy(&nv->hd.done);
	pthread_mutex_destroy(&nv->notf_mu);
	pthread_mutex_destroy(&nv->arm_mu);
}

static int notf_ok(struct netvm *nv, uint32_t n)
{
	if (!nv)
		return -EINVAL;
	if (nv->efd < 0)
		return -ENXIO;
	return n >= 1 && n <= NETVM_NOTF_MAX ? 0 : -EINVAL;
}

static int pending(struct netvm *nv, uint32_t n)
{
	return (int)(*nvl_sram32(nv, NVM_EP_SIG + 4 * n) -
		     *nvl_sram32(nv, NVM_EP_ACK + 4 * n));
}

/* Acknowledge one event of n: the count left, or -EAGAIN.  notf_mu held. */
static int ack_one(struct netvm *nv, uint32_t n)
{
	uint32_t sig = *nvl_sram32(nv, NVM_EP_SIG + 4 * n);
	uint32_t ack = *nvl_sram32(nv, NVM_EP_ACK + 4 * n);

	if (sig == ack)
		return -EAGAIN;
	*nvl_sram32(nv, NVM_EP_ACK + 4 * n) = ack + 1;
	__sync_synchronize();
	return (int)(sig - ack - 1);
}

NETVM_PUBLIC int netvm_notf_test(struct netvm *nv, uint32_t n)
{
	int err = notf_ok(nv, n);

	return err ? err : pending(nv, n);
}

NETVM_PUBLIC int netvm_notf_ack(struct netvm *nv, uint32_t n)
{
	int err = notf_ok(nv, n);

	if (err)
		return err;
	pthread_mutex_lock(&nv->notf_mu);
	err = nv->hd.fn[n] ? -EBUSY : ack_one(nv, n);
	pthread_mutex_unlock(&nv->notf_mu);
	return err;
}

/* A tripwire hit: to the tripwire queue (netvm_trip.c); the oldest is
 * dropped when it is full.  notf_mu held. */
static void trip_take(struct netvm *nv, volatile struct nvm_notf_entry *e)
{
	struct netvm_trip_event *t;

	if (nv->tripq_count == NVL_TRIPQ) {
		nv->tripq_head = (nv->tripq_head + 1) % NVL_TRIPQ;
		nv->tripq_count--;
	}
	t = &nv->tripq[(nv->tripq_head + nv->tripq_count) % NVL_TRIPQ];
	t->id = e->notify - 1;
	t->node = e->src_node;
	t->port = e->src_port;
	t->access = e->info;
	nv->tripq_count++;
}

/*
 * Move the ring's new entries to the stash (entries of armed numbers are
 * the handler thread's, and hidden ones the sync library's: dropped;
 * tripwire hits go to their own queue); tell
 * the driver (poll).  notf_mu held.
 */
void nvl_notf_drain(struct netvm *nv)
{
	volatile uint32_t *cons = (volatile uint32_t *)(nv->host +
						      nv->ep.notf_cons_off);
	uint32_t len = nv->ep.notf_len;

	for (;;) {
		volatile struct nvm_notf_entry *e =
			(volatile struct nvm_notf_entry *)
			(nv->host + nv->ep.notf_off +
			 (nv->notf_cons % len) * sizeof(*e));
		uint32_t phase = (nv->notf_cons / len) & 1 ? 0 : 1;
		uint32_t n = e->notify;
		struct netvm_notf *s;

		if (nvl_ld32(&e->phase) != phase || !n)
			break;
		nv->notf_cons++;
		if (e->kind == NVM_NOTF_KIND_TRIP) {
			trip_take(nv, e);
			continue;
		}
		if (n < NVM_NOTF_COUNTING && nv->hd.fn[n])
			continue;
		if (n >= nv->hide_lo && n <= nv->hide_hi)
			continue;
		if (nv->stash_count == NVL_STASH) {	/* drop the oldest */
			nv->stash_head = (nv->stash_head + 1) % NVL_STASH;
			nv->stash_count--;
		}
		s = &nv->stash[(nv->stash_head + nv->stash_count) % NVL_STASH];
		s->notf = n;
		s->src_node = e->src_node;
		s->src_port = e->src_port;
		nv->stash_count++;
	}
	__atomic_store_n(cons, nv->notf_cons, __ATOMIC_RELEASE);
}

void nvl_notf_hide(struct netvm *nv, uint32_t lo, uint32_t hi)
{
	pthread_mutex_lock(&nv->notf_mu);
	nv->hide_lo = lo;
	nv->hide_hi = hi;
	pthread_mutex_unlock(&nv->notf_mu);
}

/*
 * The NI interrupts for a notification only when its arm byte is set.  An
 * interrupt costs the receiver, which usually spins on the queue, a trip
 * through its kernel (under TCG about a third of an 8-byte write's round
 * trip), so the counting numbers are armed only while someone can be
 * woken: a thread in nvl_notf_sleep, the handler thread while it has a
 * number armed, or for good once netvm_ep_fd() gave the descriptor away.
 * The queue's own arm (byte 0: one-shots, tripwire hits) only while a
 * thread sleeps in nvl_notf_sleep.  The NI reads the arm byte after the
 * queue entry has landed, so a sleeper that arms and then looks at the
 * queue misses nothing.  arm_mu held.
 */
static void arm_counting(struct netvm *nv, uint8_t on)
{
	uint32_t i;

	for (i = 1; i < 4; i++)
		*(volatile uint8_t *)(nv->sram + NVM_EP_ARM + i) = on;
	for (i = 4; i < NVM_NOTF_COUNTING; i += 4)
		*nvl_sram32(nv, NVM_EP_ARM + i) = on ? 0x01010101u : 0;
}

void nvl_arm_hold(struct netvm *nv, int one_shots)
{
	pthread_mutex_lock(&nv->arm_mu);
	if (nv->arm_holders++ == 0 && !nv->arm_forever)
		arm_counting(nv, 1);
	if (one_shots && nv->sleepers++ == 0)
		*(volatile uint8_t *)(nv->sram + NVM_EP_ARM) = 1;
	__sync_synchronize();
	pthread_mutex_unlock(&nv->arm_mu);
}

void nvl_arm_release(struct netvm *nv, int one_shots)
{
	pthread_mutex_lock(&nv->arm_mu);
	if (--nv->arm_holders == 0 && !nv->arm_forever)
		arm_counting(nv, 0);
	if (one_shots && --nv->sleepers == 0)
		*(volatile uint8_t *)(nv->sram + NVM_EP_ARM) = 0;
	pthread_mutex_unlock(&nv->arm_mu);
}

void nvl_arm_forever(struct netvm *nv)
{
	pthread_mutex_lock(&nv->arm_mu);
	if (!nv->arm_forever) {
		nv->arm_forever = 1;
		arm_counting(nv, 1);
		__sync_synchronize();
	}
	pthread_mutex_unlock(&nv->arm_mu);
}

/* Sleep in poll(2) until the ring may have something; 0, -ETIMEDOUT, -EINTR. */
int nvl_notf_sleep(struct netvm *nv, uint64_t deadline, int forever)
{
	struct pollfd pfd = { .fd = nv->efd, .events = POLLIN };
	int ms = NVL_POLL_MAX_MS, r;

	if (!forever) {
		uint64_t t = nvl_now_ns();

		if (t >= deadline)
			return -ETIMEDOUT;
		ms = (int)((deadline - t + 999999) / 1000000);
		if (ms > NVL_POLL_MAX_MS)
			ms = NVL_POLL_MAX_MS;
	}
	/* armed before poll(2) looks at the ring (arm_counting) */
	nvl_arm_hold(nv, 1);
	r = poll(&pfd, 1, ms);
	nvl_arm_release(nv, 1);
	if (r < 0)
		return errno == EINTR ? -EINTR : -errno;
	return 0;
}

uint64_t nvl_deadline(int timeout_ms)
{
	return nvl_now_ns() + (uint64_t)(timeout_ms < 0 ? 0 : timeout_ms) *
	       1000000ull;
}

/* A valid number, not armed (its events belong to the handler: -EBUSY). */
static int waitable(struct netvm *nv, uint32_t n)
{
	int busy = notf_ok(nv, n);

	if (busy)
		return busy;
	pthread_mutex_lock(&nv->notf_mu);
	busy = nv->hd.fn[n] != NULL;
	pthread_mutex_unlock(&nv->notf_mu);
	return busy ? -EBUSY : 0;
}

NETVM_PUBLIC int netvm_notf_wait(struct netvm *nv, uint32_t n, int timeout_ms)
{
	uint64_t deadline;
	int err = waitable(nv, n), c;

	if (err)
		return err;
	deadline = nvl_deadline(timeout_ms);
	for (;;) {
		c = pending(nv, n);
		if (c != 0)
			return c;
		pthread_mutex_lock(&nv->notf_mu);
		nvl_notf_drain(nv);
		pthread_mutex_unlock(&nv->notf_mu);
		c = pending(nv, n);
		if (c != 0)
			return c;
		/* the poll timeout is capped: an event that was coalesced
		 * into an entry already drained is seen on the next pass */
		err = nvl_notf_sleep(nv, deadline, timeout_ms < 0);
		if (err)
			return err;
	}
}

NETVM_PUBLIC int netvm_notf_spin(struct netvm *nv, uint32_t n, int timeout_ms)
{
	uint64_t deadline;
	unsigned int i;
	int err = waitable(nv, n), c;

	if (err)
		return err;
	deadline = nvl_deadline(timeout_ms);
	for (i = 1;; i++) {
		c = pending(nv, n);
		if (c != 0)
			return c;
		if (i % 64 == 0) {
			if (timeout_ms >= 0 && nvl_now_ns() >= deadline)
				return -ETIMEDOUT;
			/* guests may have one CPU: let the sender run */
			sched_yield();
		}
	}
}

NETVM_PUBLIC int netvm_notfq_remove(struct netvm *nv, struct netvm_notf *out)
{
	int err = 0;

	if (!nv || !out)
		return -EINVAL;
	if (nv->efd < 0)
		return -ENXIO;
	pthread_mutex_lock(&nv->notf_mu);
	nvl_notf_drain(nv);
	if (!nv->stash_count) {
		err = -EAGAIN;
	} else {
		*out = nv->stash[nv->stash_head];
		nv->stash_head = (nv->stash_head + 1) % NVL_STASH;
		nv->stash_count--;
	}
	pthread_mutex_unlock(&nv->notf_mu);
	return err;
}

NETVM_PUBLIC int netvm_notfq_wait(struct netvm *nv, int timeout_ms,
				  struct netvm_notf *out)
{
	uint64_t deadline;
	int err;

	if (!nv || !out)
		return -EINVAL;
	if (nv->efd < 0)
		return -ENXIO;
	deadline = nvl_deadline(timeout_ms);
	for (;;) {
		err = netvm_notfq_remove(nv, out);
		if (err != -EAGAIN)
			return err;
		err = nvl_notf_sleep(nv, deadline, timeout_ms < 0);
		if (err)
			return err;
	}
}

/* ---- handlers ---- */

/* Call the handlers of every pending event of the armed numbers. */
static void dispatch(struct netvm *nv)
{
	struct nvl_handlers *hd = &nv->hd;
	uint32_t i, n;

	for (i = 0; i < hd->n_armed && !hd->stop; i++) {
		n = hd->armed[i];
		while (hd->fn[n] && !hd->stop && pending(nv, n) > 0) {
			netvm_notf_handler fn = hd->fn[n];
			void *arg = hd->arg[n];

			hd->running = n;
			pthread_mutex_unlock(&nv->notf_mu);
			fn(nv, n, arg);
			pthread_mutex_lock(&nv->notf_mu);
			hd->running = 0;
			/* after the call: an event arriving meanwhile either
			 * finds sig > ack (no new entry, this loop sees it) or
			 * comes after this ack (a new entry wakes the poll) */
			ack_one(nv, n);
			pthread_cond_broadcast(&hd->done);
		}
	}
}

static void *handler_main(void *arg)
{
	struct netvm *nv = arg;
	struct pollfd pfd[2];
	uint64_t junk;

	pthread_mutex_lock(&nv->notf_mu);
	while (!nv->hd.stop) {
		nvl_notf_drain(nv);
		dispatch(nv);
		if (nv->hd.stop)
			break;
		pfd[0].fd = nv->efd;
		pfd[0].events = POLLIN;
		pfd[1].fd = nv->hd.wake_fd;
		pfd[1].events = POLLIN;
		pthread_mutex_unlock(&nv->notf_mu);
		if (poll(pfd, 2, NVL_POLL_MAX_MS) > 0 && (pfd[1].revents & POLLIN))
			(void)!read(nv->hd.wake_fd, &junk, sizeof(junk));
		pthread_mutex_lock(&nv->notf_mu);
	}
	pthread_mutex_unlock(&nv->notf_mu);
	return NULL;
}

static void wake(struct netvm *nv)
{
	uint64_t one = 1;

	(void)!write(nv->hd.wake_fd, &one, sizeof(one));
}

/* notf_mu held. */
static int start_thread(struct netvm *nv)
{
	sigset_t all, old;
	int err;

	nv->hd.wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (nv->hd.wake_fd < 0)
		return -errno;
	/* the application's signals are not delivered to our thread */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = -pthread_create(&nv->hd.thread, NULL, handler_main, nv);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		close(nv->hd.wake_fd);
		nv->hd.wake_fd = -1;
		return err;
	}
	nv->hd.started = 1;
	return 0;
}

/* Forget the stash's entries of n (they are the handler's now). */
static void stash_purge(struct netvm *nv, uint32_t n)
{
	uint32_t i, kept = 0;

	for (i = 0; i < nv->stash_count; i++) {
		struct netvm_notf e = nv->stash[(nv->stash_head + i) % NVL_STASH];

		if (e.notf != n)
			nv->stash[(nv->stash_head + kept++) % NVL_STASH] = e;
	}
	nv->stash_count = kept;
}

NETVM_PUBLIC int netvm_notf_arm(struct netvm *nv, uint32_t n,
				netvm_notf_handler fn, void *arg)
{
	int err = notf_ok(nv, n);

	if (err)
		return err;
	if (!fn)
		return -EINVAL;
	pthread_mutex_lock(&nv->notf_mu);
	if (nv->hd.fn[n]) {
		err = -EBUSY;
	} else if (!nv->hd.started) {
		err = start_thread(nv);
	}
	if (!err) {
		nv->hd.fn[n] = fn;
		nv->hd.arg[n] = arg;
		/* the thread sleeps in poll(2): interrupts wake it, but only
		 * while a number is armed (a spinner elsewhere on this handle
		 * pays for every interrupt) */
		if (nv->hd.n_armed == 0)
			nvl_arm_hold(nv, 0);
		nv->hd.armed[nv->hd.n_armed++] = (uint16_t)n;
		stash_purge(nv, n);
		/* events already pending are handled at once, by the thread */
		wake(nv);
	}
	pthread_mutex_unlock(&nv->notf_mu);
	return err;
}

NETVM_PUBLIC int netvm_notf_disarm(struct netvm *nv, uint32_t n)
{
	struct nvl_handlers *hd;
	uint32_t i;
	int err = notf_ok(nv, n);

	if (err)
		return err;
	hd = &nv->hd;
	pthread_mutex_lock(&nv->notf_mu);
	if (!hd->fn[n]) {
		pthread_mutex_unlock(&nv->notf_mu);
		return -ENOENT;
	}
	hd->fn[n] = NULL;
	hd->arg[n] = NULL;
	for (i = 0; i < hd->n_armed; i++) {
		if (hd->armed[i] == n) {
			hd->armed[i] = hd->armed[--hd->n_armed];
			break;
		}
	}
	if (hd->n_armed == 0)
		nvl_arm_release(nv, 0);
	/* once this returns, the handler is not running and never will */
	if (!pthread_equal(pthread_self(), hd->thread))
		while (hd->running == n)
			pthread_cond_wait(&hd->done, &nv->notf_mu);
	pthread_mutex_unlock(&nv->notf_mu);
	return 0;
}

int nvl_notf_stop(struct netvm *nv)
{
	struct nvl_handlers *hd = &nv->hd;

	pthread_mutex_lock(&nv->notf_mu);
	if (!hd->started) {
		pthread_mutex_unlock(&nv->notf_mu);
		return 0;
	}
	if (pthread_equal(pthread_self(), hd->thread)) {
		pthread_mutex_unlock(&nv->notf_mu);
		return -EDEADLK;
	}
	hd->stop = 1;
	wake(nv);
	pthread_mutex_unlock(&nv->notf_mu);
	pthread_join(hd->thread, NULL);
	pthread_mutex_lock(&nv->notf_mu);
	if (hd->n_armed)
		nvl_arm_release(nv, 0);
	close(hd->wake_fd);
	hd->wake_fd = -1;
	hd->started = 0;
	hd->stop = 0;
	hd->running = 0;
	hd->n_armed = 0;
	memset(hd->fn, 0, sizeof(hd->fn));
	memset(hd->arg, 0, sizeof(hd->arg));
	pthread_mutex_unlock(&nv->notf_mu);
	return 0;
}
