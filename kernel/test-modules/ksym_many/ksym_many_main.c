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
#include <linux/wait.h>

#include "ksym_many_gen.h"

static DECLARE_WAIT_QUEUE_HEAD(ksm_wq);
static bool ksm_wake;
static struct task_struct *ksm_threads[4];
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
	return wait_event_interruptible_timeout(ksm_wq, READ_ONCE(ksm_wake) ||
						kthread_should_stop(), 10 * HZ);
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

static int __init ksym_many_init(void)
{
	int i;

	ksm_init_sum();
	for (i = 0; i < ARRAY_SIZE(ksm_threads); i++) {
		struct task_struct *t;

		t = kthread_run(ksm_thread_fns[i], NULL, "ksym_many/%d", i);
		if (IS_ERR(t)) {
			while (--i >= 0)
				kthread_stop(ksm_threads[i]);
			return PTR_ERR(t);
		}
		ksm_threads[i] = t;
	}
	pr_info("ksym_many: %u functions, checksum %lx\n", KSM_FUNCS,
		ksm_checksum);
	return 0;
}

static void __exit ksym_many_exit(void)
{
	int i;

	WRITE_ONCE(ksm_wake, true);
	wake_up_all(&ksm_wq);
	for (i = 0; i < ARRAY_SIZE(ksm_threads); i++)
		kthread_stop(ksm_threads[i]);
}

module_init(ksym_many_init);
module_exit(ksym_many_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Module with a very large symbol table for kallsyms tests");
