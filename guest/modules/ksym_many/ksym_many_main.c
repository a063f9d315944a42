// SPDX-License-Identifier: GPL-2.0
/*
 * ksym_many - a module with a very large symbol table for kallsyms tests.
 *
 * The generated parts (ksym_many_gen*.c) hold >= 60,000 distinct functions
 * and some data objects; this part references their tables so nothing is
 * discarded, and starts kthreads that sleep inside this module's own
 * functions, so /proc/PID/wchan of those threads resolves into the module.
 */

#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/wait.h>

#include "ksym_many_gen.h"

static DECLARE_WAIT_QUEUE_HEAD(ksm_wq);
static struct task_struct **ksm_threads;
static unsigned int ksm_nr_threads;

/*
 * kthreads to start: the first four sleep in four different ways, the rest
 * (for wchan scale tests) all sleep in ksm_nap_deep().
 */
static unsigned int nr_threads = 4;
module_param(nr_threads, uint, 0444);
MODULE_PARM_DESC(nr_threads, "kthreads sleeping in this module (default 4, max 16384)");

/*
 * fail_load=1 refuses the load from parse_args(), which runs after
 * complete_formation(): load_module()'s error path then unlinks a module
 * that lookups could already find (the wchan cache must forget it).
 */
static int ksm_set_fail_load(const char *val, const struct kernel_param *kp)
{
	bool fail;
	int ret = kstrtobool(val, &fail);

	if (ret)
		return ret;
	return fail ? -ECANCELED : 0;
}

static const struct kernel_param_ops ksm_fail_load_ops = {
	.set = ksm_set_fail_load,
};
module_param_cb(fail_load, &ksm_fail_load_ops, NULL, 0);
MODULE_PARM_DESC(fail_load, "1: fail the load while parsing parameters");
static unsigned long ksm_checksum;

static noinline void ksm_nap_deep(void)
{
	schedule_timeout_interruptible(10 * HZ);
}

static noinline int ksm_thread_nap(void *arg)
{
	while (!kthread_should_stop())
		ksm_nap_deep();
	return 0;
}

static noinline int ksm_wait_for_godot(void)
{
	return wait_event_interruptible_timeout(ksm_wq, kthread_should_stop(),
						10 * HZ);
}

static noinline int ksm_thread_wait(void *arg)
{
	while (!kthread_should_stop())
		ksm_wait_for_godot();
	return 0;
}

noinline void ksm_global_sleeper(void)
{
	set_current_state(TASK_INTERRUPTIBLE);
	if (!kthread_should_stop())
		schedule_timeout(10 * HZ);
	__set_current_state(TASK_RUNNING);
}

static noinline int ksm_thread_global(void *arg)
{
	while (!kthread_should_stop())
		ksm_global_sleeper();
	return 0;
}

static noinline int ksm_thread_msleep(void *arg)
{
	while (!kthread_should_stop())
		msleep_interruptible(10000);
	return 0;
}

static int (*const ksm_thread_fns[4])(void *) = {
	ksm_thread_nap, ksm_thread_wait, ksm_thread_global, ksm_thread_msleep,
};

static int __init ksm_init_sum(void)
{
	unsigned int i, p;

	for (p = 0; p < KSM_PARTS; p++)
		for (i = 0; i < ksm_part_len[p]; i++)
			ksm_checksum += ksm_parts[p][i](i);
	return 0;
}

/*
 * kthread_stop() wakes each thread, and every sleeper re-checks
 * kthread_should_stop(). A global "wake" flag set before the stops would
 * make ksm_thread_wait() spin without sleeping until its own turn, which on
 * a non-preemptible kernel starves the CPU (RCU stalls).
 */
static void ksm_stop_threads(void)
{
	unsigned int i;

	for (i = 0; i < ksm_nr_threads; i++)
		kthread_stop(ksm_threads[i]);
	kfree(ksm_threads);
}

static int __init ksym_many_init(void)
{
	unsigned int i;

	if (nr_threads > 16384)
		return -EINVAL;
	ksm_init_sum();
	ksm_threads = kcalloc(max(nr_threads, 1U), sizeof(*ksm_threads),
			      GFP_KERNEL);
	if (!ksm_threads)
		return -ENOMEM;
	for (i = 0; i < nr_threads; i++) {
		int (*fn)(void *) = ksm_thread_nap;
		struct task_struct *t;

		if (i < ARRAY_SIZE(ksm_thread_fns))
			fn = ksm_thread_fns[i];
		t = kthread_run(fn, NULL, "ksym_many/%u", i);
		if (IS_ERR(t)) {
			ksm_stop_threads();
			return PTR_ERR(t);
		}
		ksm_threads[i] = t;
		ksm_nr_threads = i + 1;
	}
	pr_info("ksym_many: %u functions, checksum %lx, %u kthreads\n",
		KSM_FUNCS, ksm_checksum, ksm_nr_threads);
	return 0;
}

static void __exit ksym_many_exit(void)
{
	ksm_stop_threads();
}

module_init(ksym_many_init);
module_exit(ksym_many_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Module with a very large symbol table for kallsyms tests");
