// SPDX-License-Identifier: GPL-2.0
/*
 * nproc's in-kernel benchmark: the kernel time GET_TASKS spends per task,
 * measured where kernel code runs natively (User-Mode Linux, or real
 * hardware) rather than in an emulator that charges every instruction
 * alike. It runs the dump's own code, nproc_tasks_next() and
 * nproc_fill_task(), over every task of the caller's pid namespace into
 * one buffer the size a dump chunk gets (32 KiB, what netlink allocates
 * for a reader whose receive buffer is that large), emptied when full as
 * the next chunk would start; what it leaves out is netlink's copy of each
 * chunk to userspace and the system calls. Times come from ktime_get_ns();
 * nothing here asserts a time.
 *
 *	echo "processes base" > /sys/kernel/debug/nproc/bench
 *	cat /sys/kernel/debug/nproc/bench
 *
 * The request: a scope (processes or threads), the fields (names
 * separated by commas, as nps --fields lists them, where "base" stands
 * for every field the table does not flag expensive, that is all but
 * wchan and cmdline, and "all" for every field), and optionally the
 * number of passes over all tasks (1 to 1000, default 20). The report:
 * tasks per pass, the median and the fastest pass's nanoseconds per task
 * (a UML kernel shares the host's CPUs, so a pass may lose the CPU for a
 * while: the mean would measure the host), the message bytes per task and
 * how many tasks one chunk held.
 */

#define pr_fmt(fmt) "nproc: " fmt

#include <linux/debugfs.h>
#include <linux/init.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/mutex.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "nproc.h"

#define NPROC_BENCH_CHUNK	SKB_WITH_OVERHEAD(32768)
#define NPROC_BENCH_PASSES	20
#define NPROC_BENCH_PASSES_MAX	1000
/* A scope, every field name and a count fit with room to spare. */
#define NPROC_BENCH_REQUEST_MAX	1024

static DEFINE_MUTEX(nproc_bench_lock);
/* The last report; under nproc_bench_lock. */
static char nproc_bench_report[256] = "no run yet\n";

struct nproc_bench_pass {
	u64 ns;
	u64 tasks;
	u64 bytes;
	u64 chunks;
};

/*
 * The field bitmap for @list: names separated by commas, where "base"
 * stands for every field not flagged expensive and "all" for every
 * field. -EINVAL for an unknown name.
 */
static int nproc_bench_fields(char *list, u32 *words)
{
	struct nproc_field_desc d;
	unsigned int i;
	char *name;

	while ((name = strsep(&list, ","))) {
		bool base = !strcmp(name, "base"), all = !strcmp(name, "all");

		if (base || all) {
			for (i = 0; nproc_proto_desc(NPROC_SET_TASK, i, &d); i++)
				if (all || !(d.flags & NPROC_FLAG_EXPENSIVE))
					words[d.id / 32] |= BIT(d.id % 32);
			continue;
		}
		for (i = 0; nproc_proto_desc(NPROC_SET_TASK, i, &d); i++)
			if (!strcmp(d.name, name))
				break;
		if (!nproc_proto_desc(NPROC_SET_TASK, i, &d)) {
			pr_info("bench: unknown field '%s'\n", name);
			return -EINVAL;
		}
		words[d.id / 32] |= BIT(d.id % 32);
	}
	return 0;
}

/* One pass over every task: the dump's loop, a chunk emptied when full. */
static int nproc_bench_pass(struct sk_buff *skb, const u32 *words, u32 scope,
			    struct nproc_bench_pass *p)
{
	struct nproc_tasks_ctx ctx;
	struct nproc_view view;
	struct task_struct *task;
	struct nproc_puts puts;
	u64 t0;
	int err = 0;

	memset(p, 0, sizeof(*p));
	nproc_view_init_bench(&view);
	nproc_ctx_init(&ctx, &view, words, scope, 0);
	t0 = ktime_get_ns();
	/* Once per pass: the dump works it out once per chunk. */
	nproc_puts_init(&ctx, &puts);
	while (!IS_ERR_OR_NULL(task = nproc_tasks_next(&ctx))) {
		err = nproc_fill_task(skb, 0, 0, &ctx, &puts, task);
		if (err == -EMSGSIZE && skb->len) {
			p->chunks++;
			p->bytes += skb->len;
			skb_trim(skb, 0);
			err = nproc_fill_task(skb, 0, 0, &ctx, &puts, task);
		}
		put_task_struct(task);
		if (err)
			break;
		p->tasks++;
		ctx.next++;
		cond_resched();
	}
	if (IS_ERR(task))
		err = PTR_ERR(task);
	p->ns = ktime_get_ns() - t0;
	if (skb->len)
		p->chunks++;
	p->bytes += skb->len;
	skb_trim(skb, 0);
	nproc_view_release(&view);
	return err;
}

static int nproc_bench_cmp(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

static int nproc_bench_run(const u32 *words, u32 scope, const char *what,
			   unsigned int passes)
{
	u64 tasks = 0, bytes = 0, chunks = 0, *per_task;
	struct nproc_bench_pass p;
	unsigned int i, n = 0;
	struct sk_buff *skb;
	int err = 0;

	per_task = kmalloc_array(passes, sizeof(*per_task), GFP_KERNEL);
	skb = alloc_skb(NPROC_BENCH_CHUNK, GFP_KERNEL);
	if (!skb || !per_task) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < passes && !err; i++) {
		if (fatal_signal_pending(current)) {
			err = -EINTR;
			break;
		}
		err = nproc_bench_pass(skb, words, scope, &p);
		if (!p.tasks)
			continue;
		tasks += p.tasks;
		bytes += p.bytes;
		chunks += p.chunks;
		per_task[n++] = div64_u64(p.ns, p.tasks);
	}
	if (!err && !n)
		err = -ESRCH;
	if (err)
		goto out;
	sort(per_task, n, sizeof(*per_task), nproc_bench_cmp, NULL);
	snprintf(nproc_bench_report, sizeof(nproc_bench_report),
		 "%s %s: %llu tasks x %u passes: %llu ns/task median, %llu ns/task best pass, %llu bytes/task, %llu tasks/chunk\n",
		 scope == NPROC_SCOPE_THREADS ? "threads" : "processes", what,
		 div_u64(tasks, n), n, per_task[n / 2], per_task[0],
		 div64_u64(bytes, tasks), div64_u64(tasks, chunks));
out:
	kfree_skb(skb);
	kfree(per_task);
	return err;
}

static ssize_t nproc_bench_write(struct file *file, const char __user *ubuf,
				 size_t count, loff_t *ppos)
{
	u32 words[NPROC_BITMAP_WORDS_MAX] = {};
	unsigned int passes = NPROC_BENCH_PASSES;
	char label[64], *buf, *p, *scope, *fields, *n;
	u32 sc;
	int err;

	if (count > NPROC_BENCH_REQUEST_MAX)
		return -EINVAL;
	buf = memdup_user_nul(ubuf, count);
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	p = strim(buf);
	scope = strsep(&p, " ");
	fields = strsep(&p, " ");
	n = strsep(&p, " ");
	err = -EINVAL;
	if (!strcmp(scope, "processes"))
		sc = NPROC_SCOPE_PROCESSES;
	else if (!strcmp(scope, "threads"))
		sc = NPROC_SCOPE_THREADS;
	else
		goto out;
	if (!fields || p || (n && (kstrtouint(n, 10, &passes) || !passes ||
				   passes > NPROC_BENCH_PASSES_MAX)))
		goto out;
	/* The report names the fields as asked; parsing cuts the list. */
	strscpy(label, fields, sizeof(label));
	mutex_lock(&nproc_bench_lock);
	err = nproc_bench_fields(fields, words);
	if (!err)
		err = nproc_bench_run(words, sc, label, passes);
	mutex_unlock(&nproc_bench_lock);
out:
	kfree(buf);
	return err ?: count;
}

static ssize_t nproc_bench_read(struct file *file, char __user *ubuf,
				size_t count, loff_t *ppos)
{
	ssize_t ret;

	mutex_lock(&nproc_bench_lock);
	ret = simple_read_from_buffer(ubuf, count, ppos, nproc_bench_report,
				      strlen(nproc_bench_report));
	mutex_unlock(&nproc_bench_lock);
	return ret;
}

static const struct file_operations nproc_bench_fops = {
	.owner = THIS_MODULE,
	.read = nproc_bench_read,
	.write = nproc_bench_write,
	.llseek = default_llseek,
};

static int __init nproc_bench_init(void)
{
	struct dentry *dir = debugfs_create_dir("nproc", NULL);

	debugfs_create_file("bench", 0600, dir, NULL, &nproc_bench_fops);
	return 0;
}
late_initcall(nproc_bench_init);
