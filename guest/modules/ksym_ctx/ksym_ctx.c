// SPDX-License-Identifier: GPL-2.0
/*
 * ksym_ctx - formats %pS of its own addresses from contexts in which the
 * %pS path must not sleep, take locks, allocate or queue work: under the
 * current task's pi_lock (a scheduler lock, irqs off), in a hard-irq
 * hrtimer callback, inside a work item, and in an NMI handler (an NMI this
 * module sends its own CPU through the local APIC, so one CPU is enough).
 * The text is formatted in the context and printed after it, as
 * "ksym_ctx: <context>: <text>", so that the printing itself (console
 * locks) stays out of the picture.
 *
 *   echo 1 > /sys/module/ksym_ctx/parameters/run    # every context, once
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/hrtimer.h>
#include <linux/kallsyms.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/workqueue.h>

#include <asm/apic.h>
#include <asm/nmi.h>

/* Room for every address of ksym_ctx_addrs[] in one context. */
#define KSYM_CTX_TEXT	(4 * KSYM_SYMBOL_LEN)

/*
 * How long to wait for the self-NMI at least (it arrives at once on real
 * and emulated APICs alike).
 */
#define KSYM_CTX_NMI_WAIT_US	(1000 * 1000)

static const char ksym_ctx_rodata[64] = "a module rodata object";

static noinline void ksym_ctx_target(void)
{
	/* Only its address matters; keep the body from being merged. */
	asm volatile("" ::: "memory");
}

static void ksym_ctx_format(char *buf, size_t len);

/* Function starts, inside a function, data: what %pS is asked about. */
static const void *ksym_ctx_addrs(unsigned int i)
{
	switch (i) {
	case 0:
		return ksym_ctx_target;
	case 1:
		return (const char *)ksym_ctx_target + 1;
	case 2:
		return (const char *)ksym_ctx_format + 4;
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
#ifdef KSYM_CTX_HRTIMER_SETUP
	/* 6.13 replaced hrtimer_init_on_stack() with this (Kbuild probes). */
	hrtimer_setup_on_stack(&kt.timer, ksym_ctx_timer_fn, CLOCK_MONOTONIC,
			       HRTIMER_MODE_REL_HARD);
#else
	hrtimer_init_on_stack(&kt.timer, CLOCK_MONOTONIC,
			      HRTIMER_MODE_REL_HARD);
	kt.timer.function = ksym_ctx_timer_fn;
#endif
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

/* Armed by ksym_ctx_nmi() for one NMI; set to 1 by the handler when done. */
static atomic_t ksym_ctx_nmi_armed = ATOMIC_INIT(0);
static int ksym_ctx_nmi_done;
static bool ksym_ctx_nmi_in_nmi;

static int ksym_ctx_nmi_handler(unsigned int type, struct pt_regs *regs)
{
	if (!atomic_xchg(&ksym_ctx_nmi_armed, 0))
		return NMI_DONE;
	ksym_ctx_nmi_in_nmi = in_nmi();
	ksym_ctx_format(ksym_ctx_text, sizeof(ksym_ctx_text));
	/* Publishes the text: pairs with the acquire in ksym_ctx_nmi(). */
	smp_store_release(&ksym_ctx_nmi_done, 1);
	return NMI_HANDLED;
}

static int ksym_ctx_nmi(void)
{
	unsigned int us;

	WRITE_ONCE(ksym_ctx_nmi_done, 0);
	ksym_ctx_text[0] = '\0';
	atomic_set(&ksym_ctx_nmi_armed, 1);
	preempt_disable();
	__apic_send_IPI_mask(cpumask_of(smp_processor_id()), NMI_VECTOR);
	preempt_enable();
	for (us = 0; us < KSYM_CTX_NMI_WAIT_US; us += 10) {
		/* Sees the handler's text: pairs with its release. */
		if (smp_load_acquire(&ksym_ctx_nmi_done))
			break;
		usleep_range(10, 20);
	}
	atomic_set(&ksym_ctx_nmi_armed, 0);
	/* As above: the text is complete once done reads 1. */
	if (!smp_load_acquire(&ksym_ctx_nmi_done)) {
		pr_err("nmi: no NMI arrived\n");
		return -ETIMEDOUT;
	}
	pr_info("nmi: %s%s\n", ksym_ctx_nmi_in_nmi ? "" : "(not in_nmi()) ",
		ksym_ctx_text);
	return 0;
}

static int ksym_ctx_run_set(const char *val, const struct kernel_param *kp)
{
	int ret;

	mutex_lock(&ksym_ctx_lock);
	ksym_ctx_pi_lock();
	ksym_ctx_hrtimer();
	ksym_ctx_in_work();
	ret = ksym_ctx_nmi();
	mutex_unlock(&ksym_ctx_lock);
	return ret;
}

static const struct kernel_param_ops ksym_ctx_run_ops = {
	.set = ksym_ctx_run_set,
};

module_param_cb(run, &ksym_ctx_run_ops, NULL, 0200);
MODULE_PARM_DESC(run, "write anything: format %pS in every context and print it");

static int __init ksym_ctx_init(void)
{
	return register_nmi_handler(NMI_LOCAL, ksym_ctx_nmi_handler, 0,
				    "ksym_ctx");
}

static void __exit ksym_ctx_exit(void)
{
	unregister_nmi_handler(NMI_LOCAL, "ksym_ctx");
}

module_init(ksym_ctx_init);
module_exit(ksym_ctx_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("%pS from scheduler-lock, hard-irq, work-item and NMI contexts");
