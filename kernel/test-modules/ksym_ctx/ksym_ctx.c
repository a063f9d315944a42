// SPDX-License-Identifier: GPL-2.0
/*
 * ksym_ctx - formats %pS of its own addresses from contexts in which the
 * %pS path must not sleep, take locks, allocate or queue work: under the
 * current task's pi_lock (a scheduler lock, irqs off), in a hard-irq
 * hrtimer callback and inside a work item. The text is formatted in the
 * context and printed after it, as "ksym_ctx: <context>: <text>", so that
 * the printing itself (console locks) stays out of the picture.
 *
 * A kthread spinning in ksym_ctx_spin_loop() on the last online CPU gives
 * an NMI backtrace (echo l > /proc/sysrq-trigger, from another CPU) module
 * frames to print from NMI.
 *
 *   echo 1 > /sys/module/ksym_ctx/parameters/run    # every context, once
 *   echo 1 > /sys/module/ksym_ctx/parameters/spin   # start the spinner
 *   echo 0 > /sys/module/ksym_ctx/parameters/spin   # stop it
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/hrtimer.h>
#include <linux/jiffies.h>
#include <linux/kallsyms.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/sched/task.h>
#include <linux/workqueue.h>

/* Room for every address of ksym_ctx_addrs[] in one context. */
#define KSYM_CTX_TEXT	(4 * KSYM_SYMBOL_LEN)

/* The spinner gives up after this long even if never stopped. */
#define KSYM_CTX_SPIN_MAX	(30 * HZ)

static const char ksym_ctx_rodata[64] = "a module rodata object";

static noinline void ksym_ctx_target(void)
{
	/* Only its address matters; keep the body from being merged. */
	asm volatile("" ::: "memory");
}

static noinline int ksym_ctx_spin_loop(unsigned long until);

/* Function starts, inside a function, data: what %pS is asked about. */
static const void *ksym_ctx_addrs(unsigned int i)
{
	switch (i) {
	case 0:
		return ksym_ctx_target;
	case 1:
		return (const char *)ksym_ctx_target + 1;
	case 2:
		return (const char *)ksym_ctx_spin_loop + 4;
	case 3:
		return ksym_ctx_rodata + 8;
	default:
		return NULL;
	}
}

/* Formats %pS of every address into @buf; no sleeping, no allocation. */
static void ksym_ctx_format(char *buf, size_t len)
{
	const void *addr;
	size_t n = 0;
	unsigned int i;

	buf[0] = '\0';
	for (i = 0; (addr = ksym_ctx_addrs(i)) && n < len; i++)
		n += scnprintf(buf + n, len - n, "%s%pS", i ? " " : "", addr);
}

/* Serialises runs: the buffers below are shared. */
static DEFINE_MUTEX(ksym_ctx_lock);
static char ksym_ctx_text[KSYM_CTX_TEXT];

static void ksym_ctx_pi_lock(void)
{
	unsigned long flags;

	raw_spin_lock_irqsave(&current->pi_lock, flags);
	ksym_ctx_format(ksym_ctx_text, sizeof(ksym_ctx_text));
	raw_spin_unlock_irqrestore(&current->pi_lock, flags);
	pr_info("pi_lock: %s\n", ksym_ctx_text);
}

struct ksym_ctx_timer {
	struct hrtimer timer;
	struct completion done;
};

static enum hrtimer_restart ksym_ctx_timer_fn(struct hrtimer *t)
{
	struct ksym_ctx_timer *kt = container_of(t, struct ksym_ctx_timer,
						 timer);

	ksym_ctx_format(ksym_ctx_text, sizeof(ksym_ctx_text));
	complete(&kt->done);
	return HRTIMER_NORESTART;
}

static void ksym_ctx_hrtimer(void)
{
	struct ksym_ctx_timer kt;

	init_completion(&kt.done);
	hrtimer_init_on_stack(&kt.timer, CLOCK_MONOTONIC,
			      HRTIMER_MODE_REL_HARD);
	kt.timer.function = ksym_ctx_timer_fn;
	hrtimer_start(&kt.timer, ns_to_ktime(100 * NSEC_PER_USEC),
		      HRTIMER_MODE_REL_HARD);
	wait_for_completion(&kt.done);
	hrtimer_cancel(&kt.timer);
	destroy_hrtimer_on_stack(&kt.timer);
	pr_info("hrtimer: %s\n", ksym_ctx_text);
}

static void ksym_ctx_work_fn(struct work_struct *work)
{
	ksym_ctx_format(ksym_ctx_text, sizeof(ksym_ctx_text));
}

static DECLARE_WORK(ksym_ctx_work, ksym_ctx_work_fn);

static void ksym_ctx_in_work(void)
{
	queue_work(system_wq, &ksym_ctx_work);
	flush_work(&ksym_ctx_work);
	pr_info("work: %s\n", ksym_ctx_text);
}

static int ksym_ctx_run_set(const char *val, const struct kernel_param *kp)
{
	mutex_lock(&ksym_ctx_lock);
	ksym_ctx_pi_lock();
	ksym_ctx_hrtimer();
	ksym_ctx_in_work();
	mutex_unlock(&ksym_ctx_lock);
	return 0;
}

static const struct kernel_param_ops ksym_ctx_run_ops = {
	.set = ksym_ctx_run_set,
};

module_param_cb(run, &ksym_ctx_run_ops, NULL, 0200);
MODULE_PARM_DESC(run, "write anything: format %pS in every context and print it");

static struct task_struct *ksym_ctx_spinner;

/*
 * Busy in module code until stopped or @until, with a reschedule point
 * every few thousand iterations (the kernel may not be preemptible). An NMI
 * almost always lands in this loop.
 */
static noinline int ksym_ctx_spin_loop(unsigned long until)
{
	unsigned int i;

	while (!kthread_should_stop() && time_before(jiffies, until)) {
		for (i = 0; i < 100000; i++)
			cpu_relax();
		cond_resched();
	}
	return 0;
}

static int ksym_ctx_spin_thread(void *unused)
{
	ksym_ctx_spin_loop(jiffies + KSYM_CTX_SPIN_MAX);
	/* Parked until kthread_stop(): the thread must not exit first. */
	while (!kthread_should_stop())
		schedule_timeout_interruptible(HZ);
	return 0;
}

static void ksym_ctx_spin_stop(void)
{
	if (ksym_ctx_spinner) {
		kthread_stop(ksym_ctx_spinner);
		put_task_struct(ksym_ctx_spinner);
		ksym_ctx_spinner = NULL;
	}
}

static int ksym_ctx_spin_set(const char *val, const struct kernel_param *kp)
{
	struct task_struct *t;
	bool on;
	int ret = kstrtobool(val, &on);

	if (ret)
		return ret;
	mutex_lock(&ksym_ctx_lock);
	if (on && !ksym_ctx_spinner) {
		t = kthread_create(ksym_ctx_spin_thread, NULL, "ksym_ctx_spin");
		if (IS_ERR(t)) {
			ret = PTR_ERR(t);
		} else {
			kthread_bind(t, cpumask_last(cpu_online_mask));
			get_task_struct(t);
			ksym_ctx_spinner = t;
			wake_up_process(t);
		}
	} else if (!on) {
		ksym_ctx_spin_stop();
	}
	mutex_unlock(&ksym_ctx_lock);
	return ret;
}

static const struct kernel_param_ops ksym_ctx_spin_ops = {
	.set = ksym_ctx_spin_set,
};

module_param_cb(spin, &ksym_ctx_spin_ops, NULL, 0200);
MODULE_PARM_DESC(spin, "1: start a kthread spinning in this module, 0: stop it");

static int __init ksym_ctx_init(void)
{
	return 0;
}

static void __exit ksym_ctx_exit(void)
{
	mutex_lock(&ksym_ctx_lock);
	ksym_ctx_spin_stop();
	mutex_unlock(&ksym_ctx_lock);
}

module_init(ksym_ctx_init);
module_exit(ksym_ctx_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("%pS from scheduler, hard-irq, workqueue and NMI contexts");
