// SPDX-License-Identifier: (GPL-2.0-only OR MIT)
/*
 * Unit tests for libnetvm's synchronisation logic (netvm_sync_algo.c) and
 * channel credits (netvm_credit.c), without a NIC: a simulated group of
 * members, one thread each, whose transport applies the firmware's own
 * atomics (fw_nv_atomic_apply) to in-memory sync areas and counts
 * notifications as the NI does.  Checks mutual exclusion, FIFO wake-ups,
 * the pending-wakeup path of wait queues, semaphore counts, monitors,
 * barriers and the lock/queue state left behind.
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <netvm/netvm_fw.h>

#include "fw_nv.h"
#include "netvm_credit.h"
#include "netvm_sync_algo.h"

#define NM	4
#define EMPTY	NETVM_WQ_EMPTY

struct sim;

struct simctx {
	struct sim *sim;
	uint32_t me;
};

struct sim {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	uint32_t area[NM][NVS_AREA_SIZE / 4];
	uint32_t sig[NM][NVM_NOTF_COUNTING];
	uint32_t ack[NM][NVM_NOTF_COUNTING];
	struct simctx ctx[NM];
	struct netvm_sync s[NM];
};

static int sim_atomic(void *c, uint32_t m, uint32_t off, uint32_t op,
		      uint32_t a0, uint32_t a1, uint32_t r[3])
{
	struct simctx *x = c;
	struct sim *sim = x->sim;
	uint32_t arg[3] = { a0, a1, 0 };

	pthread_mutex_lock(&sim->mu);
	fw_nv_atomic_apply(op, &sim->area[m][off / 4], arg, r);
	pthread_mutex_unlock(&sim->mu);
	return 0;
}

static int sim_put(void *c, uint32_t m, uint32_t off, uint32_t val,
		   uint32_t notf)
{
	struct simctx *x = c;
	struct sim *sim = x->sim;

	pthread_mutex_lock(&sim->mu);
	__atomic_store_n(&sim->area[m][off / 4], val, __ATOMIC_RELEASE);
	if (notf) {
		sim->sig[m][notf]++;
		pthread_cond_broadcast(&sim->cv);
	}
	pthread_mutex_unlock(&sim->mu);
	return 0;
}

static int sim_wait(void *c, uint32_t notf, int timeout_ms)
{
	struct simctx *x = c;
	struct sim *sim = x->sim;
	struct timespec ts;
	int err = 0;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += timeout_ms / 1000;
	ts.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&sim->mu);
	while (sim->sig[x->me][notf] == sim->ack[x->me][notf] && !err)
		err = pthread_cond_timedwait(&sim->cv, &sim->mu, &ts);
	if (sim->sig[x->me][notf] != sim->ack[x->me][notf]) {
		sim->ack[x->me][notf]++;
		err = 0;
	} else {
		err = -ETIMEDOUT;
	}
	pthread_mutex_unlock(&sim->mu);
	return err;
}

static const struct nvs_ops sim_ops = {
	.atomic = sim_atomic, .put = sim_put, .wait = sim_wait,
};

static struct sim *sim_new(uint32_t n, int timeout_ms)
{
	struct sim *sim = calloc(1, sizeof(*sim));
	uint32_t m;

	ck_assert_ptr_nonnull(sim);
	pthread_mutex_init(&sim->mu, NULL);
	pthread_cond_init(&sim->cv, NULL);
	for (m = 0; m < n; m++) {
		nvs_area_init(sim->area[m], n);
		sim->ctx[m].sim = sim;
		sim->ctx[m].me = m;
		sim->s[m].ops = &sim_ops;
		sim->s[m].ctx = &sim->ctx[m];
		sim->s[m].me = m;
		sim->s[m].n = n;
		sim->s[m].area = sim->area[m];
		sim->s[m].timeout_ms = timeout_ms;
	}
	return sim;
}

static void sim_free(struct sim *sim)
{
	pthread_mutex_destroy(&sim->mu);
	pthread_cond_destroy(&sim->cv);
	free(sim);
}

static uint32_t central(struct sim *sim, uint32_t home, uint32_t id,
			uint32_t word)
{
	return sim->area[home][NVS_CENTRAL(id) / 4 + word];
}

/* Runs fn(arg[m]) in one thread per member and joins them. */
struct member {
	struct sim *sim;
	uint32_t me;
	int err;
	int iters;
};

static void run_members(struct sim *sim, uint32_t n, void *(*fn)(void *),
			struct member *mb, int iters)
{
	pthread_t th[NM];
	uint32_t m;

	for (m = 0; m < n; m++) {
		mb[m].sim = sim;
		mb[m].me = m;
		mb[m].err = 0;
		mb[m].iters = iters;
		ck_assert_int_eq(pthread_create(&th[m], NULL, fn, &mb[m]), 0);
	}
	for (m = 0; m < n; m++) {
		pthread_join(th[m], NULL);
		ck_assert_msg(mb[m].err == 0, "member %u: error %d", m,
			      mb[m].err);
	}
}

/* ---- MCS ---- */

static int inside, counter, max_inside;

static void *mcs_member(void *arg)
{
	struct member *mb = arg;
	struct netvm_sync_obj lock;
	int i;

	netvm_mcs_init(&mb->sim->s[mb->me], &lock, 1, 3);
	for (i = 0; i < mb->iters && !mb->err; i++) {
		mb->err = netvm_mcs_acquire(&lock);
		if (mb->err)
			break;
		if (__atomic_add_fetch(&inside, 1, __ATOMIC_SEQ_CST) > 1)
			mb->err = -EBUSY;	/* two in the critical section */
		counter++;
		if (i % 7 == 0)
			sched_yield();
		__atomic_sub_fetch(&inside, 1, __ATOMIC_SEQ_CST);
		if (!mb->err)
			mb->err = netvm_mcs_release(&lock);
		if (!mb->err && lock.state)
			mb->err = -EIO;
	}
	return NULL;
}

START_TEST(mcs_mutual_exclusion)
{
	struct sim *sim = sim_new(NM, 20000);
	struct member mb[NM];

	inside = 0;
	counter = 0;
	run_members(sim, NM, mcs_member, mb, 400);
	ck_assert_int_eq(counter, NM * 400);
	/* released for good: the tail is empty again */
	ck_assert_uint_eq(central(sim, 1, 3, 0), EMPTY);
	sim_free(sim);
}
END_TEST

static void *acquire_then_release(void *arg)
{
	struct member *mb = arg;
	struct netvm_sync_obj lock;

	netvm_mcs_init(&mb->sim->s[mb->me], &lock, 0, 5);
	mb->err = netvm_mcs_acquire(&lock);
	if (!mb->err)
		mb->err = netvm_mcs_release(&lock);
	return NULL;
}

START_TEST(mcs_state)
{
	struct sim *sim = sim_new(2, 20000);
	struct netvm_sync_obj lock, bad;
	struct member mb;
	pthread_t th;
	int i;

	ck_assert_int_eq(netvm_mcs_init(&sim->s[0], &bad, 2, 0), -EINVAL);
	ck_assert_int_eq(netvm_mcs_init(&sim->s[0], &bad, 0,
					NETVM_SYNC_OBJS), -EINVAL);
	ck_assert_int_eq(netvm_mcs_init(&sim->s[0], &lock, 0, 5), 0);
	ck_assert_int_eq(netvm_mcs_release(&lock), -EPERM);
	ck_assert_int_eq(netvm_mcs_acquire(&lock), 0);
	ck_assert_uint_eq(lock.state, NVS_HELD);
	ck_assert_uint_eq(central(sim, 0, 5, 0), 0);	/* tail: member 0 */
	ck_assert_int_eq(netvm_mcs_acquire(&lock), -EDEADLK);

	/* member 1 queues behind us: swaps itself in, links into our node */
	mb.sim = sim;
	mb.me = 1;
	mb.err = 0;
	ck_assert_int_eq(pthread_create(&th, NULL, acquire_then_release, &mb),
			 0);
	for (i = 0; i < 5000 &&
	     __atomic_load_n(&sim->area[0][(NVS_QNODE(5) + NVS_Q_NEXT) / 4],
			     __ATOMIC_ACQUIRE) != 1; i++)
		usleep(1000);
	ck_assert_uint_eq(sim->area[0][(NVS_QNODE(5) + NVS_Q_NEXT) / 4], 1);
	ck_assert_uint_eq(central(sim, 0, 5, 0), 1);	/* tail: member 1 */
	/* hand-off: a notifying write of member 1's grant word */
	ck_assert_int_eq(netvm_mcs_release(&lock), 0);
	ck_assert_uint_eq(lock.state, 0);
	pthread_join(th, NULL);
	ck_assert_int_eq(mb.err, 0);
	ck_assert_uint_eq(sim->area[1][(NVS_QNODE(5) + NVS_Q_GRANT) / 4], 1);
	ck_assert_uint_eq(central(sim, 0, 5, 0), EMPTY);
	sim_free(sim);
}
END_TEST

START_TEST(mcs_timeout)
{
	struct sim *sim = sim_new(2, 50);
	struct netvm_sync_obj l0, l1;

	netvm_mcs_init(&sim->s[0], &l0, 0, 1);
	netvm_mcs_init(&sim->s[1], &l1, 0, 1);
	ck_assert_int_eq(netvm_mcs_acquire(&l0), 0);
	ck_assert_int_eq(netvm_mcs_acquire(&l1), -ETIMEDOUT);
	ck_assert_uint_eq(l1.state, 0);
	sim_free(sim);
}
END_TEST

/* ---- wait queues ---- */

/* Single-threaded: the second removeQ comes before the first woken
 * member names its successor, so the NI counts a pending wake-up (P) and
 * newhead makes the woken member wake its successor itself. */
START_TEST(wq_pending_wakeup)
{
	struct sim *sim = sim_new(4, 100);
	struct netvm_sync_obj q[4];
	uint32_t m;

	for (m = 0; m < 4; m++)
		ck_assert_int_eq(netvm_wq_init(&sim->s[m], &q[m], 3, 9), 0);
	ck_assert_int_eq(netvm_wq_wait(&q[0]), -EINVAL);	/* not queued */
	ck_assert_int_eq(netvm_wq_remove(&q[3]), 0);	/* empty: lost */
	for (m = 0; m < 3; m++)
		ck_assert_int_eq(netvm_wq_insert(&q[m]), 0);
	ck_assert_int_eq(netvm_wq_insert(&q[1]), -EALREADY);
	ck_assert_uint_eq(central(sim, 3, 9, 0), 0);	/* H */
	ck_assert_uint_eq(central(sim, 3, 9, 1), 2);	/* T */
	ck_assert_uint_eq(central(sim, 3, 9, 2), 3);	/* C */
	/* chained: 0 -> 1 -> 2 */
	ck_assert_uint_eq(sim->area[0][(NVS_QNODE(9) + NVS_Q_NEXT) / 4], 1);
	ck_assert_uint_eq(sim->area[1][(NVS_QNODE(9) + NVS_Q_NEXT) / 4], 2);

	ck_assert_int_eq(netvm_wq_remove(&q[3]), 1);	/* wakes 0 */
	ck_assert_int_eq(netvm_wq_remove(&q[3]), 0);	/* head unknown */
	ck_assert_uint_eq(central(sim, 3, 9, 3), 1);	/* P */
	/* 0 wakes, names 1 as head: P > 0, so 0 wakes 1 at once */
	ck_assert_int_eq(netvm_wq_wait(&q[0]), 0);
	ck_assert_uint_eq(central(sim, 3, 9, 3), 0);
	ck_assert_int_eq(netvm_wq_wait(&q[1]), 0);
	ck_assert_uint_eq(central(sim, 3, 9, 0), 2);	/* H = 2 */
	ck_assert_uint_eq(central(sim, 3, 9, 2), 1);
	/* 2 has not been signalled: its wait times out */
	ck_assert_int_eq(netvm_wq_wait(&q[2]), -ETIMEDOUT);
	ck_assert_int_eq(netvm_wq_insert(&q[0]), 0);	/* 0 again, after 2 */
	ck_assert_int_eq(netvm_wq_remove(&q[3]), 1);	/* wakes 2 */
	q[2].state = NVS_QUEUED;	/* (its timed-out wait left it) */
	ck_assert_int_eq(netvm_wq_wait(&q[2]), 0);
	ck_assert_int_eq(netvm_wq_remove(&q[3]), 1);	/* wakes 0 */
	ck_assert_int_eq(netvm_wq_wait(&q[0]), 0);
	ck_assert_uint_eq(central(sim, 3, 9, 0), EMPTY);
	ck_assert_uint_eq(central(sim, 3, 9, 2), 0);
	ck_assert_uint_eq(central(sim, 3, 9, 3), 0);
	for (m = 0; m < 4; m++)
		ck_assert_uint_eq(q[m].state, 0);
	sim_free(sim);
}
END_TEST

static int woken_count;

static void *wq_waiter(void *arg)
{
	struct member *mb = arg;
	struct netvm_sync_obj q;
	int i;

	netvm_wq_init(&mb->sim->s[mb->me], &q, 0, 2);
	for (i = 0; i < mb->iters && !mb->err; i++) {
		mb->err = netvm_wq_insert(&q);
		if (!mb->err)
			mb->err = netvm_wq_wait(&q);
		__atomic_add_fetch(&woken_count, 1, __ATOMIC_SEQ_CST);
	}
	return NULL;
}

START_TEST(wq_threads)
{
	struct sim *sim = sim_new(NM, 20000);
	struct netvm_sync_obj q;
	struct member mb[NM];
	pthread_t th[NM - 1];
	uint32_t m;
	int r, signals = 0, total = (NM - 1) * 100, guard = 0;

	woken_count = 0;
	netvm_wq_init(&sim->s[NM - 1], &q, 0, 2);
	for (m = 0; m < NM - 1; m++) {
		mb[m].sim = sim;
		mb[m].me = m;
		mb[m].err = 0;
		mb[m].iters = 100;
		pthread_create(&th[m], NULL, wq_waiter, &mb[m]);
	}
	/* signals to an empty queue are lost: keep signalling until every
	 * wait has returned */
	while (__atomic_load_n(&woken_count, __ATOMIC_SEQ_CST) < total &&
	       guard++ < 2000000) {
		r = netvm_wq_remove(&q);
		ck_assert_int_ge(r, 0);
		signals += r;
		if (!r)
			sched_yield();
	}
	for (m = 0; m < NM - 1; m++) {
		pthread_join(th[m], NULL);
		ck_assert_int_eq(mb[m].err, 0);
	}
	ck_assert_int_eq(woken_count, total);
	ck_assert_int_le(signals, total);
	ck_assert_uint_eq(central(sim, 0, 2, 2), 0);	/* C */
	/* (P may stay > 0: removes while a woken member had not yet named
	 * its successor are banked, as NetVM's dequeue does) */
	sim_free(sim);
}
END_TEST

/* ---- semaphores ---- */

/* initialised by everyone before anyone uses it (as after a barrier) */
static struct netvm_sync_obj sems[NM];

static void *sem_member(void *arg)
{
	struct member *mb = arg;
	struct netvm_sync_obj sem = sems[mb->me];
	int i, in, r;

	for (i = 0; i < mb->iters && !mb->err; i++) {
		r = netvm_sem_wait(&sem);
		if (r < 0) {
			mb->err = r;
			break;
		}
		in = __atomic_add_fetch(&inside, 1, __ATOMIC_SEQ_CST);
		if (in > 2)
			mb->err = -EBUSY;
		if (in > max_inside)
			max_inside = in;
		sched_yield();
		__atomic_sub_fetch(&inside, 1, __ATOMIC_SEQ_CST);
		r = netvm_sem_signal(&sem);
		if (r < 0)
			mb->err = r;
	}
	return NULL;
}

START_TEST(sem_counts)
{
	struct sim *sim = sim_new(NM, 20000);
	struct member mb[NM];
	struct netvm_sync_obj sem;
	int i;

	/* the home sets the count before anyone uses it */
	ck_assert_int_eq(netvm_sem_init(&sim->s[2], &sem, 2, 4, 2), 0);
	ck_assert_uint_eq(central(sim, 2, 4, 4), 2);
	ck_assert_int_eq(netvm_sem_wait(&sem), 2);	/* count was 2 */
	ck_assert_int_eq(netvm_sem_signal(&sem), 2);	/* count is 2 */
	inside = 0;
	max_inside = 0;
	for (i = 0; i < NM; i++)
		ck_assert_int_eq(netvm_sem_init(&sim->s[i], &sems[i], 2, 4, 2),
				 0);
	run_members(sim, NM, sem_member, mb, 200);
	ck_assert_int_le(max_inside, 2);
	ck_assert_uint_eq(central(sim, 2, 4, 4), 2);	/* S */
	ck_assert_uint_eq(central(sim, 2, 4, 2), 0);	/* C */
	ck_assert_uint_eq(central(sim, 2, 4, 3), 0);	/* P */
	sim_free(sim);
}
END_TEST

/* ---- monitor: a bounded buffer of 2 ---- */

static int buf_count, produced_sum, consumed_sum;

static void *mon_member(void *arg)
{
	struct member *mb = arg;
	struct netvm_sync *s = &mb->sim->s[mb->me];
	struct netvm_sync_obj mon, notfull, notempty;
	int i, producer = mb->me % 2 == 0;

	netvm_mcs_init(s, &mon, 0, 10);
	netvm_wq_init(s, &notfull, 1, 11);
	netvm_wq_init(s, &notempty, 2, 12);
	for (i = 1; i <= mb->iters && !mb->err; i++) {
		mb->err = netvm_mon_enter(&mon);
		while (!mb->err && (producer ? buf_count == 2 : buf_count == 0))
			mb->err = netvm_cond_wait(&mon, producer ? &notfull :
						  &notempty);
		if (mb->err)
			break;
		if (producer) {
			buf_count++;
			produced_sum += i;
		} else {
			buf_count--;
			consumed_sum += i;
		}
		if (buf_count < 0 || buf_count > 2)
			mb->err = -ERANGE;
		if (!mb->err) {
			int r = netvm_cond_signal(&mon, producer ? &notempty :
						  &notfull);
			mb->err = r < 0 ? r : 0;
		}
		if (!mb->err)
			mb->err = netvm_mon_exit(&mon);
	}
	return NULL;
}

START_TEST(monitor_bounded_buffer)
{
	struct sim *sim = sim_new(NM, 20000);
	struct member mb[NM];
	struct netvm_sync_obj mon, cv;

	netvm_mcs_init(&sim->s[0], &mon, 0, 20);
	netvm_wq_init(&sim->s[0], &cv, 0, 21);
	ck_assert_int_eq(netvm_cond_signal(&mon, &cv), -EPERM);
	ck_assert_int_eq(netvm_cond_wait(&mon, &cv), -EPERM);

	buf_count = produced_sum = consumed_sum = 0;
	/* 2 producers and 2 consumers of 300 items each */
	run_members(sim, NM, mon_member, mb, 300);
	ck_assert_int_eq(buf_count, 0);
	ck_assert_int_eq(produced_sum, consumed_sum);
	ck_assert_int_eq(produced_sum, 2 * 300 * 301 / 2);
	ck_assert_uint_eq(central(sim, 0, 10, 0), EMPTY);
	sim_free(sim);
}
END_TEST

/* ---- barrier ---- */

static int phase[NM];

static void *bar_member(void *arg)
{
	struct member *mb = arg;
	struct netvm_sync *s = &mb->sim->s[mb->me];
	uint32_t m;
	int i;

	for (i = 0; i < mb->iters && !mb->err; i++) {
		__atomic_store_n(&phase[mb->me], i + 1, __ATOMIC_SEQ_CST);
		mb->err = netvm_sync_barrier(s);
		/* past barrier i, everyone has reached phase i + 1 */
		for (m = 0; m < s->n && !mb->err; m++)
			if (__atomic_load_n(&phase[m], __ATOMIC_SEQ_CST) < i + 1)
				mb->err = -EIO;
	}
	return NULL;
}

START_TEST(barrier_rounds)
{
	struct sim *sim = sim_new(NM, 20000);
	struct member mb[NM];

	memset(phase, 0, sizeof(phase));
	run_members(sim, NM, bar_member, mb, 200);
	ck_assert_uint_eq(sim->area[0][NVS_BAR_COUNT / 4], NM * 200);
	sim_free(sim);
}
END_TEST

/* ---- channel credits ---- */

START_TEST(credit_rules)
{
	struct nvl_credit c;
	int r, i;

	ck_assert_int_eq(nvl_credit_init(&c, 1, 1), -EINVAL);
	ck_assert_int_eq(nvl_credit_init(&c, 4, 0), -EINVAL);
	ck_assert_int_eq(nvl_credit_init(&c, 4, 4), -EINVAL);
	ck_assert_int_eq(nvl_credit_init(&c, 4, 3), 0);
	/* nbuf - 1 credits, in ring order */
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(nvl_credit_take(&c), i);
	ck_assert_int_eq(nvl_credit_take(&c), -EAGAIN);
	ck_assert_uint_eq(nvl_credit_recv(&c, &r), 0);
	ck_assert_int_eq(r, 0);
	ck_assert_uint_eq(nvl_credit_recv(&c, &r), 1);
	ck_assert_int_eq(r, 0);
	ck_assert_uint_eq(nvl_credit_recv(&c, &r), 2);
	ck_assert_int_eq(r, 1);		/* every 3rd: replenish */
	nvl_credit_replenish(&c);
	ck_assert_int_eq(nvl_credit_take(&c), 3);
	ck_assert_int_eq(nvl_credit_take(&c), 0);	/* wraps */
}
END_TEST

/*
 * Random interleavings of a sender and a receiver: a message never lands
 * in an entry holding an unreceived message or the one the receiver
 * holds, messages arrive in order, and nothing deadlocks.
 */
START_TEST(credit_random)
{
	static const uint32_t shapes[][2] = { {2, 1}, {4, 1}, {4, 3}, {8, 2},
					      {16, 5}, {64, 32} };
	uint64_t rng = 88172645463325252ull;
	unsigned int k;

	for (k = 0; k < sizeof(shapes) / sizeof(shapes[0]); k++) {
		struct nvl_credit snd, rcv;
		uint32_t nbuf = shapes[k][0], ring[64];
		uint32_t sent = 0, recvd = 0, repl_pending = 0;
		int r, rep, held = -1, steps;

		ck_assert_int_eq(nvl_credit_init(&snd, nbuf, shapes[k][1]), 0);
		ck_assert_int_eq(nvl_credit_init(&rcv, nbuf, shapes[k][1]), 0);
		memset(ring, 0, sizeof(ring));
		for (steps = 0; recvd < 5000; steps++) {
			ck_assert_int_lt(steps, 1000000);
			rng ^= rng << 13;
			rng ^= rng >> 7;
			rng ^= rng << 17;
			if (rng % 3 == 0) {		/* sender */
				r = nvl_credit_take(&snd);
				if (r == -EAGAIN) {
					if (!repl_pending)
						continue;	/* would wait */
					repl_pending--;
					nvl_credit_replenish(&snd);
					r = nvl_credit_take(&snd);
				}
				ck_assert_int_ge(r, 0);
				/* unreceived or held by the receiver: never */
				ck_assert_msg(!ring[r], "entry %d overwritten",
					      r);
				ring[r] = ++sent;
			} else if (recvd < sent) {	/* receiver */
				r = (int)nvl_credit_recv(&rcv, &rep);
				ck_assert_uint_eq(ring[r], recvd + 1);
				recvd++;
				/* receiving frees the message held before */
				if (held >= 0)
					ring[held] = 0;
				held = r;
				repl_pending += rep;
			}
		}
	}
}
END_TEST

static Suite *sync_suite(void)
{
	Suite *s = suite_create("netvm-sync");
	TCase *tc = tcase_create("sync");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, mcs_mutual_exclusion);
	tcase_add_test(tc, mcs_state);
	tcase_add_test(tc, mcs_timeout);
	tcase_add_test(tc, wq_pending_wakeup);
	tcase_add_test(tc, wq_threads);
	tcase_add_test(tc, sem_counts);
	tcase_add_test(tc, monitor_bounded_buffer);
	tcase_add_test(tc, barrier_rounds);
	tcase_add_test(tc, credit_rules);
	tcase_add_test(tc, credit_random);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(sync_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
