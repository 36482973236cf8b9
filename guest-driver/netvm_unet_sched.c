// SPDX-License-Identifier: GPL-2.0-only
/*
 * netvm.ko: FUGU's "process not running" for U-Net endpoints (docs/unet.md).
 *
 * A process that asks (NETVM_IOC_UNET_SCHED) has its calling thread
 * watched: a probe on the sched_switch tracepoint writes 1 into the
 * endpoint's desched word in SRAM when the thread leaves a CPU runnable
 * (preempted, or yielding) or stopped (SIGSTOP, ptrace), and 0 when it
 * is switched in again.  While the word is 1 the firmware diverts the
 * endpoint's messages to the driver, FUGU's buffered path, instead of
 * filling a queue nobody is draining; a thread that sleeps waiting for
 * messages (poll, a blocking receive) stays "running" for this purpose,
 * so its messages still go direct and wake it.
 *
 * The probe is registered at the first watch and stays until the module
 * goes.  The watch table is small and fixed: the probe reads each entry's
 * task without a lock; entries are filled and emptied under watch_lock,
 * and an emptied entry's task reference is dropped only after
 * synchronize_rcu(), when no probe (preemption disabled) can still see it.
 */
#include <linux/io.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sched/task.h>
#include <linux/tracepoint.h>

#include "netvm_drv.h"

#define UNET_WATCH_MAX	(NETVM_MAX_DEVS * NETVM_EP_MAX)

struct unet_watch {
	struct task_struct *task;	/* watch_lock; probe: READ_ONCE */
	void __iomem *flag;		/* the endpoint's desched word */
	bool off;			/* the probe's: what flag says */
};

static DEFINE_MUTEX(watch_lock);
static struct unet_watch watch[UNET_WATCH_MAX];
static struct tracepoint *tp_switch;	/* registered: watch_lock */

static void unet_sched_probe(void *data, bool preempt,
			     struct task_struct *prev,
			     struct task_struct *next,
			     unsigned int prev_state)
{
	bool off = preempt || prev_state == TASK_RUNNING ||
		   (prev_state & (__TASK_STOPPED | __TASK_TRACED));
	int i;

	for (i = 0; i < UNET_WATCH_MAX; i++) {
		struct unet_watch *w = &watch[i];
		struct task_struct *t = READ_ONCE(w->task);

		if (!t)
			continue;
		/* a thread leaves one CPU before it enters another */
		if (t == prev && off != w->off) {
			w->off = off;
			writel(off, w->flag);
		} else if (t == next && w->off) {
			w->off = false;
			writel(0, w->flag);
		}
	}
}

/* The endpoint's desched word in its SRAM region (the NI reads it). */
static void __iomem *desched_word(struct netvm_unet *u)
{
	return netvm_unet_region(u) + NVM_UNET_CTL +
	       offsetof(struct nvm_unet_ctl, desched);
}

static void find_switch(struct tracepoint *tp, void *priv)
{
	if (!strcmp(tp->name, "sched_switch"))
		*(struct tracepoint **)priv = tp;
}

static int probe_get(void)
{
	struct tracepoint *tp = NULL;
	int ret;

	if (tp_switch)
		return 0;
	for_each_kernel_tracepoint(find_switch, &tp);
	if (!tp)
		return -EOPNOTSUPP;
	ret = tracepoint_probe_register(tp, (void *)unet_sched_probe, NULL);
	if (!ret)
		tp_switch = tp;
	return ret;
}

static void watch_drop(int i)
{
	struct task_struct *t = watch[i].task;

	WRITE_ONCE(watch[i].task, NULL);
	synchronize_rcu();		/* no probe still looks at it */
	writel(0, watch[i].flag);
	watch[i].off = false;
	put_task_struct(t);
}

/*
 * Watch the calling thread for @u (on), or stop (off).  A second "on"
 * moves the watch to the caller.  -EOPNOTSUPP for a kernel-emulated
 * endpoint (no desched word the NI reads), -ENOSPC if the table is full.
 */
int netvm_unet_sched(struct netvm_unet *u, u32 __user *uarg)
{
	void __iomem *flag;
	int i, free = -1, ret;
	u32 on;

	if (get_user(on, uarg))
		return -EFAULT;
	if (on > 1)
		return -EINVAL;
	if (u->emulated)
		return -EOPNOTSUPP;
	flag = desched_word(u);
	mutex_lock(&watch_lock);
	for (i = 0; i < UNET_WATCH_MAX; i++) {
		if (watch[i].task && watch[i].flag == flag)
			watch_drop(i);
		if (!watch[i].task && free < 0)
			free = i;
	}
	ret = 0;
	if (on) {
		ret = probe_get();
		if (!ret && free < 0)
			ret = -ENOSPC;
		if (!ret) {
			watch[free].flag = flag;
			watch[free].off = false;
			writel(0, flag);
			get_task_struct(current);
			WRITE_ONCE(watch[free].task, current);
		}
	}
	mutex_unlock(&watch_lock);
	return ret;
}

/* The endpoint goes: its watch (if any) first. */
void netvm_unet_sched_release(struct netvm_unet *u)
{
	void __iomem *flag;
	int i;

	if (u->emulated)
		return;
	flag = desched_word(u);
	mutex_lock(&watch_lock);
	for (i = 0; i < UNET_WATCH_MAX; i++)
		if (watch[i].task && watch[i].flag == flag)
			watch_drop(i);
	mutex_unlock(&watch_lock);
}

void netvm_unet_sched_exit(void)
{
	mutex_lock(&watch_lock);
	if (tp_switch) {
		tracepoint_probe_unregister(tp_switch, (void *)unet_sched_probe,
					    NULL);
		tp_switch = NULL;
	}
	mutex_unlock(&watch_lock);
	tracepoint_synchronize_unregister();
}
