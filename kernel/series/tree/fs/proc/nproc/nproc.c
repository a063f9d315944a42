// SPDX-License-Identifier: GPL-2.0
/*
 * nproc: process information over generic netlink.
 *
 * The values /proc/PID/stat, status, statm and wchan show, in binary, for
 * every task in one dump: a ps reads two netlink messages per few dozen
 * tasks instead of opening four or five files per task. The field table
 * (ids, names, types, units, flags) comes from the nproc-proto crate
 * (proto/, through nproc_table.rs): NPROC_CMD_GET_FIELDS sends it, so a
 * client needs no compiled-in knowledge of the fields, and every value is
 * encoded with the type the table gives.
 *
 * Semantics, for the one reader: the process that opened the socket and
 * sent the request, with the credentials it opened it with:
 *  - the request names a procfs mount (NPROC_A_PROCFS_FD): its pid
 *    namespace gives the pids, and the dump lists what that mount's /proc
 *    lists to the reader, hidepid= and gid= applied (nproc_access.c has
 *    the access model: the one reader, the LSM check per task, the
 *    sysctl, the rules read again for each chunk);
 *  - ids are mapped into the requester's user namespace, times into its
 *    time namespace, as /proc does for the opener of the file;
 *  - every value is computed as in fs/proc/array.c do_task_stat(),
 *    task_state() and fs/proc/task_mmu.c task_statm(): /proc/PID/stat
 *    (whole thread group: summed faults and CPU times) in the processes,
 *    pid and children scopes, /proc/PID/task/TID/stat in the threads scope;
 *  - wchan is exactly /proc/PID/wchan: "0" unless
 *    ptrace_may_access(PTRACE_MODE_READ_FSCREDS) allows it to the reader
 *    (nproc_may_read_wchan()), else the symbol lookup_symbol_name() gives
 *    for get_wchan(), or "0";
 *  - cmdline is what a read of /proc/PID/cmdline from position 0 returns
 *    (get_mm_cmdline(), setproctitle() rules included), cut at
 *    NPROC_CMDLINE_MAX bytes;
 *  - a task the mount lists but whose files the reader may not read
 *    (hidepid=noaccess, or an LSM refusing a file of a requested field)
 *    is sent as its tgid alone, whatever was asked;
 *  - a GET_TASKS dump begins with one message that carries no task.
 */

#include <linux/bitmap.h>
#include <linux/cred.h>
#include <linux/kallsyms.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/nproc.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/sched/cputime.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/time_namespace.h>
#include <linux/tty.h>
#include <linux/unaligned.h>
#include <linux/workqueue.h>
#include <net/genetlink.h>

#include "../internal.h"
#include "nproc.h"

/* NPROC_TYPE_* of each id, from the crate's table at init. */
static u8 nproc_task_type[NPROC_F_MAX + 1] __ro_after_init;
static u8 nproc_global_type[NPROC_G_MAX + 1] __ro_after_init;

/*
 * What a task's values cost beyond reading its task_struct. A dump
 * computes a group only when a requested field needs it: ps asks for a
 * dozen of the 45 fields, and /proc computes each value only for the
 * file that shows it. A value is the same whether or not its neighbours
 * were computed: every group is read as the /proc file showing the field
 * reads it.
 */
#define NPROC_NEED_CRED		BIT(0)	/* the task's credentials */
#define NPROC_NEED_MM		BIT(1)	/* the mm, under task_lock() */
#define NPROC_NEED_STATM	BIT(2)	/* task_statm(): per-CPU counter sums */
#define NPROC_NEED_SIGHAND	BIT(3)	/* lock_task_sighand(): tty, ids */
#define NPROC_NEED_STATS	BIT(4)	/* sig->stats_lock, faults walk */
#define NPROC_NEED_CPUTIME	BIT(5)	/* (thread-group) CPU times */
#define NPROC_NEED_COMM		BIT(6)	/* proc_task_name() */
#define NPROC_NEED_WCHAN	BIT(7)	/* exec_update_lock, ptrace check */

static const u8 nproc_field_need[NPROC_F_MAX + 1] = {
	[NPROC_F_PPID] = NPROC_NEED_SIGHAND,
	[NPROC_F_PGID] = NPROC_NEED_SIGHAND,
	[NPROC_F_SID] = NPROC_NEED_SIGHAND,
	[NPROC_F_TTY_NR] = NPROC_NEED_SIGHAND,
	[NPROC_F_TPGID] = NPROC_NEED_SIGHAND,
	[NPROC_F_NR_THREADS] = NPROC_NEED_SIGHAND,
	[NPROC_F_RSSLIM] = NPROC_NEED_SIGHAND,
	[NPROC_F_UID ... NPROC_F_FSGID] = NPROC_NEED_CRED,
	[NPROC_F_COMM] = NPROC_NEED_COMM,
	[NPROC_F_VSIZE] = NPROC_NEED_MM,
	[NPROC_F_RSS] = NPROC_NEED_MM,
	[NPROC_F_LOCKED] = NPROC_NEED_MM,
	/* task_statm() gives these four; it is called, not copied. */
	[NPROC_F_SHARED] = NPROC_NEED_MM | NPROC_NEED_STATM,
	[NPROC_F_TEXT] = NPROC_NEED_MM | NPROC_NEED_STATM,
	[NPROC_F_DATA] = NPROC_NEED_MM | NPROC_NEED_STATM,
	[NPROC_F_RESIDENT] = NPROC_NEED_MM | NPROC_NEED_STATM,
	[NPROC_F_MIN_FLT ... NPROC_F_CMAJ_FLT] = NPROC_NEED_STATS,
	[NPROC_F_CUTIME] = NPROC_NEED_STATS,
	[NPROC_F_CSTIME] = NPROC_NEED_STATS,
	[NPROC_F_UTIME] = NPROC_NEED_CPUTIME,
	[NPROC_F_STIME] = NPROC_NEED_CPUTIME,
	[NPROC_F_WCHAN] = NPROC_NEED_WCHAN,
};

/*
 * The /proc/PID file that shows each field, for the LSM check of
 * nproc_task_vis(): the ids are directory names, wchan has its own check
 * (nproc_may_read_wchan()), and the rest is stat's.
 */
static u8 nproc_field_file(unsigned long id)
{
	switch (id) {
	case NPROC_F_TGID:
	case NPROC_F_TID:
	case NPROC_F_WCHAN:
		return 0;
	case NPROC_F_UID ... NPROC_F_FSGID:
		return NPROC_FILE_STATUS;
	case NPROC_F_SHARED:
	case NPROC_F_TEXT:
	case NPROC_F_DATA:
	case NPROC_F_RESIDENT:
		return NPROC_FILE_STATM;
	case NPROC_F_CMDLINE:
		return NPROC_FILE_CMDLINE;
	default:
		return NPROC_FILE_STAT;
	}
}

struct nproc_fields_ctx {
	u32 set;
	u32 index;
};

static struct genl_family nproc_family;

/* fs/proc/array.c task_state_array[], the letters only. */
static const char nproc_state_chars[] = "RSDTtXZPI";

static char nproc_state(struct task_struct *task)
{
	BUILD_BUG_ON(1 + ilog2(TASK_REPORT_MAX) !=
		     ARRAY_SIZE(nproc_state_chars) - 1);
	return nproc_state_chars[task_state_index(task)];
}

/*
 * Values of one task; strings apart. Indexed by field id. Left
 * uninitialized (see nproc_fill_task()): every value of a group that a
 * requested field needs is written, on every path, before it is read.
 */
struct nproc_task_vals {
	u64 v[NPROC_F_MAX + 1];
	char comm[64];
	int comm_len;			/* strlen(comm) */
};

/* do_task_stat()'s and task_statm()'s values of @mm, as they read them. */
static void nproc_mm_values(struct mm_struct *mm, u64 *v)
{
	v[NPROC_F_VSIZE] = task_vsize(mm);
	/* stat's rss: the counters without their per-CPU parts */
	v[NPROC_F_RSS] = get_mm_rss(mm);
	v[NPROC_F_LOCKED] = mm->locked_vm;
}

/* What /proc shows for a task without an mm: a kthread, or one exiting. */
static void nproc_mm_none(u64 *v)
{
	v[NPROC_F_RESIDENT] = 0;
	v[NPROC_F_SHARED] = 0;
	v[NPROC_F_TEXT] = 0;
	v[NPROC_F_DATA] = 0;
	v[NPROC_F_VSIZE] = 0;
	v[NPROC_F_RSS] = 0;
	v[NPROC_F_LOCKED] = 0;
}

/*
 * fs/proc/array.c proc_task_name(m, p, false) into tv->comm (when @need
 * has NPROC_NEED_COMM), and the values of get_task_mm(p) (when it has
 * NPROC_NEED_MM). /proc pins the mm with get_task_mm() and reads it after
 * dropping task_lock(); here a user task's name and stat's mm values are
 * read under one task_lock(), which keeps p->mm alive (exit_mm() and
 * exec_mmap() change it under that lock), so the reference's two atomic
 * operations and mmput() are not needed for them. task_statm()'s sums
 * walk every CPU's counters: as /proc/PID/statm does, they are taken
 * after the lock is dropped, on a reference.
 */
static void nproc_comm_mm(struct task_struct *p, unsigned int need,
			  struct nproc_task_vals *tv)
{
	struct mm_struct *mm, *statm_mm = NULL;
	unsigned long shared, text, data, resident;

	/* get_task_mm() gives a kthread no mm, even one using another's */
	if (p->flags & (PF_WQ_WORKER | PF_KTHREAD)) {
		if (need & NPROC_NEED_MM)
			nproc_mm_none(tv->v);
		if (!(need & NPROC_NEED_COMM))
			return;
		/* proc_task_name()'s order: a worker's name first */
		if (p->flags & PF_WQ_WORKER)
			wq_worker_comm(tv->comm, sizeof(tv->comm), p);
		else
			get_kthread_comm(tv->comm, sizeof(tv->comm), p);
		tv->comm_len = strlen(tv->comm);
		return;
	}
	if (!(need & (NPROC_NEED_COMM | NPROC_NEED_MM)))
		return;

	task_lock(p);
	/* p->comm always fits: the length cannot be -E2BIG */
	if (need & NPROC_NEED_COMM)
		tv->comm_len = strscpy(tv->comm, p->comm, sizeof(tv->comm));
	mm = p->mm;
	if (need & NPROC_NEED_MM) {
		if (mm)
			nproc_mm_values(mm, tv->v);
		else
			nproc_mm_none(tv->v);
		if (mm && (need & NPROC_NEED_STATM)) {
			mmget(mm);
			statm_mm = mm;
		}
	}
	task_unlock(p);

	/* statm's (status VmRSS's) exact sums: one pass per CPU */
	if (statm_mm) {
		task_statm(statm_mm, &shared, &text, &data, &resident);
		mmput(statm_mm);
		tv->v[NPROC_F_RESIDENT] = resident;
		tv->v[NPROC_F_SHARED] = shared;
		tv->v[NPROC_F_TEXT] = text;
		tv->v[NPROC_F_DATA] = data;
	}
}

/*
 * __task_pid_nr_ns() for a caller already inside an RCU read-side
 * section: nproc_task_values() reads all of a task's ids in one, where
 * the helpers /proc calls open one each (five for stat's ids).
 */
static pid_t nproc_pid_nr(struct task_struct *task, enum pid_type type,
			  struct pid_namespace *ns)
{
	struct pid *pid = type == PIDTYPE_PID ?
		rcu_dereference(task->thread_pid) :
		rcu_dereference(task->signal->pids[type]);

	return pid_nr_ns(pid, ns);
}

static bool nproc_wants(const struct nproc_tasks_ctx *ctx, unsigned int id)
{
	return test_bit(id, ctx->fields);
}

/*
 * nla_put() of a 4- or 8-byte value, inlined: a dump puts a dozen or more
 * numbers per task, and nla_put() makes three calls (itself, skb_put(),
 * memcpy()) for each. The same room check, the same bytes (no padding
 * follows a 4- or 8-byte payload).
 */
static __always_inline int nproc_put_fixed(struct sk_buff *skb, u16 id,
					   const void *val, int len)
{
	struct nlattr *nla;

	if (unlikely(skb_tailroom(skb) < nla_total_size(len)))
		return -EMSGSIZE;
	nla = __skb_put(skb, nla_total_size(len));
	nla->nla_type = id;
	nla->nla_len = nla_attr_size(len);
	memcpy(nla_data(nla), val, len);
	return 0;
}

/*
 * A number as nla_put_u32() or nla_put_u64_64bit() puts it; a u64 that
 * must be 8-byte aligned (never with efficient unaligned access) takes
 * the latter and its padding attribute.
 */
static __always_inline int nproc_put_num(struct sk_buff *skb,
					 unsigned int type, u16 id, u64 val)
{
	u32 val32 = val;

	switch (type) {
	case NPROC_TYPE_U32:
	case NPROC_TYPE_S32:
		return nproc_put_fixed(skb, id, &val32, sizeof(val32));
	case NPROC_TYPE_U64:
		if (nla_need_padding_for_64bit(skb))
			return nla_put_u64_64bit(skb, id, val, NPROC_F_UNSPEC);
		return nproc_put_fixed(skb, id, &val, sizeof(val));
	}
	/* nproc_load_table() makes this unreachable. */
	return -EINVAL;
}

/*
 * Whether nproc_put_nums() puts a run of numbers at once: each number is
 * written as its header and eight value bytes, which needs a u64 put
 * without a padding attribute (efficient unaligned access) and a u32's
 * value in the low-addressed half of a u64 (little endian).
 */
#if defined(CONFIG_HAVE_EFFICIENT_UNALIGNED_ACCESS) && defined(__LITTLE_ENDIAN)
#define NPROC_PUT_RUNS	true
#else
#define NPROC_PUT_RUNS	false
#endif

/*
 * Puts the run of numbers that starts at puts->id[@i], values from @v:
 * the same bytes as nproc_put_num() for each. At once where
 * NPROC_PUT_RUNS allows: one room check and one __skb_put() for the run,
 * then a header and eight value bytes per number without a branch (a
 * dump puts a dozen or more numbers per task). A u32's upper four bytes
 * land where the next header goes, or in the room checked past the run,
 * beyond the tail; neither is ever sent as they are.
 */
static __always_inline int nproc_put_nums(struct sk_buff *skb,
					  const struct nproc_puts *puts,
					  unsigned int i, const u64 *v)
{
	unsigned int end = puts->run_end[i];
	u8 *p;
	int err;

	if (!NPROC_PUT_RUNS) {
		for (; i < end; i++) {
			err = nproc_put_num(skb, puts->type[i], puts->id[i],
					    v[puts->id[i]]);
			if (err)
				return err;
		}
		return 0;
	}

	if (unlikely(skb_tailroom(skb) < puts->run_len[i] + sizeof(u32)))
		return -EMSGSIZE;
	p = __skb_put(skb, puts->run_len[i]);
	/* A run has a number: the loop is one straight block per number. */
	do {
		*(struct nlattr *)p = puts->hdr[i];
		put_unaligned(v[puts->id[i]], (u64 *)(p + NLA_HDRLEN));
		p += puts->size[i];
	} while (++i < end);
	return 0;
}

/*
 * Faults and the children's times, as do_task_stat() reads them: the
 * group's under sig->stats_lock (whole), else the thread's own faults.
 */
static void nproc_task_stats(struct task_struct *task, bool whole, u64 *v)
{
	struct signal_struct *sig = task->signal;
	unsigned long cmin_flt, cmaj_flt, min_flt = 0, maj_flt = 0;
	u64 cutime, cstime;

	scoped_seqlock_read(&sig->stats_lock, ss_lock_irqsave) {
		cmin_flt = sig->cmin_flt;
		cmaj_flt = sig->cmaj_flt;
		cutime = sig->cutime;
		cstime = sig->cstime;

		if (whole) {
			struct task_struct *t;

			min_flt = sig->min_flt;
			maj_flt = sig->maj_flt;

			rcu_read_lock();
			__for_each_thread(sig, t) {
				min_flt += t->min_flt;
				maj_flt += t->maj_flt;
			}
			rcu_read_unlock();
		}
	}

	if (!whole) {
		min_flt = task->min_flt;
		maj_flt = task->maj_flt;
	}

	v[NPROC_F_MIN_FLT] = min_flt;
	v[NPROC_F_CMIN_FLT] = cmin_flt;
	v[NPROC_F_MAJ_FLT] = maj_flt;
	v[NPROC_F_CMAJ_FLT] = cmaj_flt;
	v[NPROC_F_CUTIME] = nsec_to_clock_t(cutime);
	v[NPROC_F_CSTIME] = nsec_to_clock_t(cstime);
}

/*
 * The ids of @cred that the request names, mapped into the reader's
 * user namespace as task_state() maps them: ps names one or two of the
 * eight, and each mapping searches the namespace's extents.
 */
static void nproc_cred_ids(const struct nproc_tasks_ctx *ctx,
			   const struct cred *cred, u64 *v)
{
	struct user_namespace *ns = current_user_ns();

	if (nproc_wants(ctx, NPROC_F_UID))
		v[NPROC_F_UID] = from_kuid_munged(ns, cred->uid);
	if (nproc_wants(ctx, NPROC_F_EUID))
		v[NPROC_F_EUID] = from_kuid_munged(ns, cred->euid);
	if (nproc_wants(ctx, NPROC_F_SUID))
		v[NPROC_F_SUID] = from_kuid_munged(ns, cred->suid);
	if (nproc_wants(ctx, NPROC_F_FSUID))
		v[NPROC_F_FSUID] = from_kuid_munged(ns, cred->fsuid);
	if (nproc_wants(ctx, NPROC_F_GID))
		v[NPROC_F_GID] = from_kgid_munged(ns, cred->gid);
	if (nproc_wants(ctx, NPROC_F_EGID))
		v[NPROC_F_EGID] = from_kgid_munged(ns, cred->egid);
	if (nproc_wants(ctx, NPROC_F_SGID))
		v[NPROC_F_SGID] = from_kgid_munged(ns, cred->sgid);
	if (nproc_wants(ctx, NPROC_F_FSGID))
		v[NPROC_F_FSGID] = from_kgid_munged(ns, cred->fsgid);
}

/*
 * Everything but wchan, as fs/proc/array.c do_task_stat() and
 * task_state() compute it; whole as there (the thread group's sums).
 * Only the groups in ctx->need are computed; the others stay as @tv was.
 * exec_update_lock is not needed: /proc/PID/statm and status read the
 * same mm and credentials without it (stat takes it for what it shows
 * only to a tracer: eip, esp, the code and stack bounds).
 */
static void nproc_task_values(const struct nproc_tasks_ctx *ctx,
			      struct task_struct *task, bool whole,
			      struct nproc_task_vals *tv)
{
	struct pid_namespace *ns = ctx->view->ns;
	struct signal_struct *sig = task->signal;
	unsigned int need = ctx->need;
	u64 utime, stime;
	int tty_pgrp = -1, tty_nr = 0, num_threads = 0;
	pid_t ppid = 0, pgid = -1, sid = -1;
	unsigned long rsslim = 0, flags;
	u64 *v = tv->v;

	v[NPROC_F_STATE] = nproc_state(task);
	v[NPROC_F_FLAGS] = task->flags;
	v[NPROC_F_PRIORITY] = (u32)task_prio(task);
	v[NPROC_F_NICE] = (u32)task_nice(task);
	v[NPROC_F_POLICY] = task->policy;
	v[NPROC_F_RT_PRIORITY] = task->rt_priority;
	/* A 64-bit division: only when asked for. */
	if (nproc_wants(ctx, NPROC_F_START_TIME))
		v[NPROC_F_START_TIME] = nsec_to_clock_t(task->start_boottime +
							ctx->view->boottime_off);
	v[NPROC_F_PROCESSOR] = task_cpu(task);
	v[NPROC_F_EXIT_SIGNAL] = (u32)task->exit_signal;

	/* Before the RCU section: a worker's name takes a mutex. */
	nproc_comm_mm(task, need, tv);

	/* The ids and credentials, in one RCU read-side section. */
	rcu_read_lock();
	v[NPROC_F_TGID] = nproc_pid_nr(task, PIDTYPE_TGID, ns);
	v[NPROC_F_TID] = nproc_pid_nr(task, PIDTYPE_PID, ns);

	if (need & NPROC_NEED_CRED)
		nproc_cred_ids(ctx, __task_cred(task), v);

	/* do_task_stat()'s, under sighand's lock as there */
	if ((need & NPROC_NEED_SIGHAND) && lock_task_sighand(task, &flags)) {
		if (sig->tty) {
			struct pid *pgrp = tty_get_pgrp(sig->tty);

			tty_pgrp = pid_nr_ns(pgrp, ns);
			put_pid(pgrp);
			tty_nr = new_encode_dev(tty_devnum(sig->tty));
		}
		num_threads = get_nr_threads(task);
		rsslim = READ_ONCE(sig->rlim[RLIMIT_RSS].rlim_cur);
		sid = nproc_pid_nr(task, PIDTYPE_SID, ns);
		ppid = nproc_pid_nr(rcu_dereference(task->real_parent),
				    PIDTYPE_TGID, ns);
		pgid = nproc_pid_nr(task, PIDTYPE_PGID, ns);
		unlock_task_sighand(task, &flags);
	}
	rcu_read_unlock();

	/* Signed values travel as their 32-bit two's complement. */
	v[NPROC_F_PPID] = (u32)ppid;
	v[NPROC_F_PGID] = (u32)pgid;
	v[NPROC_F_SID] = (u32)sid;
	v[NPROC_F_TTY_NR] = (u32)tty_nr;
	v[NPROC_F_TPGID] = (u32)tty_pgrp;
	v[NPROC_F_NR_THREADS] = num_threads;
	v[NPROC_F_RSSLIM] = rsslim;

	if (need & NPROC_NEED_STATS)
		nproc_task_stats(task, whole, v);

	if (need & NPROC_NEED_CPUTIME) {
		if (whole)
			thread_group_cputime_adjusted(task, &utime, &stime);
		else
			task_cputime_adjusted(task, &utime, &stime);
		v[NPROC_F_UTIME] = nsec_to_clock_t(utime);
		v[NPROC_F_STIME] = nsec_to_clock_t(stime);
	}
}

/*
 * Shrinks the attribute @nla, the last thing in @skb, to @len bytes of
 * payload, padding zeroed.
 */
static void nproc_trim_attr(struct sk_buff *skb, struct nlattr *nla, int len)
{
	nla->nla_len = nla_attr_size(len);
	memset((char *)nla_data(nla) + len, 0, nla_padlen(len));
	skb_trim(skb, (unsigned char *)nla + nla_total_size(len) - skb->data);
}

/*
 * fs/proc/base.c proc_pid_wchan(), for the reader
 * (nproc_may_read_wchan()). Unlike proc_pid_wchan(), the check and
 * get_wchan() run under the task's exec_update_lock, as lock_trace()
 * guards /proc/PID/stack: an exec that changes the task's credentials
 * cannot come between the check and the read. The name is looked up
 * straight into the message, in an attribute of KSYM_NAME_LEN trimmed to
 * it afterwards: a buffer on the stack would be 512 bytes to clear for
 * every task (CONFIG_INIT_STACK_ALL_ZERO) and to copy again. Near the
 * end of a chunk the reservation may not fit where the name would; the
 * task then starts the next chunk, as any task that does not fit.
 */
static noinline_for_stack int
nproc_put_wchan(struct sk_buff *skb, const struct nproc_tasks_ctx *ctx,
		struct task_struct *task)
{
	struct rw_semaphore *lock = &task->signal->exec_update_lock;
	unsigned long wchan = 0;
	struct nlattr *nla;
	int err;

	err = down_read_killable(lock);
	if (err)
		return err;
	if (nproc_may_read_wchan(ctx->view, task))
		wchan = get_wchan(task);
	if (wchan) {
		nla = nla_reserve(skb, NPROC_F_WCHAN, KSYM_NAME_LEN);
		if (!nla) {
			up_read(lock);
			return -EMSGSIZE;
		}
		if (!lookup_symbol_name(wchan, nla_data(nla))) {
			up_read(lock);
			nproc_trim_attr(skb, nla, strlen(nla_data(nla)) + 1);
			return 0;
		}
		nlmsg_trim(skb, nla);
	}
	up_read(lock);
	return nla_put_string(skb, NPROC_F_WCHAN, "0");
}

/*
 * fs/proc/base.c get_task_cmdline() from position 0 for at most
 * NPROC_CMDLINE_MAX bytes, read straight into the attribute, so nothing
 * is allocated. It reads the task's memory and may fault pages in (or
 * wait on a userfaultfd): called with no lock held, as /proc reads it.
 */
static noinline_for_stack int
nproc_put_cmdline(struct sk_buff *skb, struct task_struct *task)
{
	unsigned long arg_start, arg_end, env_start, env_end, len;
	struct mm_struct *mm;
	struct nlattr *nla;
	int got = 0;
	char *buf;
	char c;

	nla = nla_reserve(skb, NPROC_F_CMDLINE, NPROC_CMDLINE_MAX);
	if (!nla)
		return -EMSGSIZE;
	buf = nla_data(nla);

	mm = get_task_mm(task);
	if (!mm)
		goto out;
	/* Check if process spawned far enough to have cmdline. */
	if (!mm->env_end)
		goto out_mm;

	spin_lock(&mm->arg_lock);
	arg_start = mm->arg_start;
	arg_end = mm->arg_end;
	env_start = mm->env_start;
	env_end = mm->env_end;
	spin_unlock(&mm->arg_lock);

	if (arg_start >= arg_end)
		goto out_mm;
	/*
	 * get_mm_cmdline() reads argv's last byte first, then the range it
	 * chose. When argv fits the attribute (almost always) one read of
	 * [arg_start, arg_end[ gives both: a complete read ending in NUL is
	 * exactly what that path sends. Anything else (setproctitle()'s
	 * overflow, a fault) takes get_mm_cmdline()'s own two steps below.
	 */
	if (arg_end - arg_start <= NPROC_CMDLINE_MAX) {
		len = arg_end - arg_start;
		got = access_remote_vm(mm, arg_start, buf, len, FOLL_ANON);
		if (got == len && !buf[len - 1])
			goto out_mm;
		got = 0;
	}
	/* setproctitle() may overflow into the environment, and only there. */
	if (env_start != arg_end || env_end < env_start)
		env_end = arg_end;
	len = min_t(unsigned long, env_end - arg_start, NPROC_CMDLINE_MAX);

	if (access_remote_vm(mm, arg_end - 1, &c, 1, FOLL_ANON) == 1 && c) {
		/* get_mm_proctitle(): one page at most, up to its first NUL. */
		len = min(len, PAGE_SIZE);
		got = access_remote_vm(mm, arg_start, buf, len, FOLL_ANON);
		if (got > 0) {
			int n = strnlen(buf, got);

			got = n < got ? n + 1 : n;
		}
	} else {
		/* Strictly [arg_start, arg_end[ otherwise. */
		len = min(len, arg_end - arg_start);
		got = access_remote_vm(mm, arg_start, buf, len, FOLL_ANON);
	}
	if (got < 0)
		got = 0;
out_mm:
	mmput(mm);
out:
	nproc_trim_attr(skb, nla, got);
	return 0;
}

/*
 * Appends one GET_TASKS message for @task to @skb: -EMSGSIZE when it
 * does not fit (nothing of it is left in @skb), or another error from
 * the wchan lock. Shared by the dump and the in-kernel benchmark.
 */
int nproc_fill_task(struct sk_buff *skb, u32 portid, u32 seq,
		    const struct nproc_tasks_ctx *ctx,
		    const struct nproc_puts *puts, struct task_struct *task)
{
	/*
	 * On the stack: no allocation per task. Not cleared first (with
	 * CONFIG_INIT_STACK_ALL_ZERO it would be, at every task): only the
	 * values of requested fields are put, and nproc_task_values() writes
	 * every value of each group they need.
	 */
	struct nproc_task_vals tv __uninitialized;
	struct nlattr *nest;
	unsigned int i, id;
	void *hdr;
	int err;

	hdr = genlmsg_put(skb, portid, seq, &nproc_family, NLM_F_MULTI,
			  NPROC_CMD_GET_TASKS);
	if (!hdr)
		return -EMSGSIZE;
	err = -EMSGSIZE;
	nest = nla_nest_start(skb, NPROC_A_TASK);
	if (!nest)
		goto out_cancel;

	/* /proc/PID listed, its files unreadable: the name is the tgid. */
	if (ctx->vis == NPROC_VIS_PID) {
		if (nla_put_u32(skb, NPROC_F_TGID,
				task_tgid_nr_ns(task, ctx->view->ns)))
			goto out_cancel;
		goto out_end;
	}

	nproc_task_values(ctx, task, ctx->scope != NPROC_SCOPE_THREADS, &tv);

	/* The strings are comm and wchan (nproc_load_table() checks). */
	for (i = 0; i < puts->n; ) {
		id = puts->id[i];
		if (puts->type[i] != NPROC_TYPE_STRING) {
			err = nproc_put_nums(skb, puts, i, tv.v);
			i = puts->run_end[i];
		} else {
			if (id == NPROC_F_COMM)
				err = nla_put(skb, id, tv.comm_len + 1, tv.comm);
			else
				err = nproc_put_wchan(skb, ctx, task);
			i++;
		}
		if (err)
			goto out_cancel;
	}

	err = -EMSGSIZE;
	if (nproc_wants(ctx, NPROC_F_CMDLINE) && nproc_put_cmdline(skb, task))
		goto out_cancel;

out_end:
	nla_nest_end(skb, nest);
	genlmsg_end(skb, hdr);
	return 0;

out_cancel:
	genlmsg_cancel(skb, hdr);
	return err;
}

/*
 * The task with the lowest pid number >= *nr in ns that is attached to a
 * pid of that type (a thread-group leader for PIDTYPE_TGID, any thread
 * for PIDTYPE_PID), with a reference; *nr is set to its number. As
 * fs/proc/base.c next_tgid(): no lock held between calls, so a fork or
 * exit storm can neither loop nor repeat a task.
 */
static struct task_struct *nproc_next_task(struct pid_namespace *ns, u32 *nr,
					   enum pid_type type)
{
	struct task_struct *task = NULL;
	struct pid *pid;

	rcu_read_lock();
	while ((pid = find_ge_pid(*nr, ns))) {
		*nr = pid_nr_ns(pid, ns);
		task = pid_task(pid, type);
		if (task) {
			get_task_struct(task);
			break;
		}
		(*nr)++;
	}
	rcu_read_unlock();
	return task;
}

static bool nproc_is_child(const struct nproc_tasks_ctx *ctx,
			   struct task_struct *task)
{
	bool child = false;

	rcu_read_lock();
	if (pid_alive(task))
		child = task_ppid_nr_ns(task, ctx->view->ns) == ctx->pid;
	rcu_read_unlock();
	return child;
}

static int nproc_tasks_start(struct netlink_callback *cb)
{
	struct nproc_tasks_ctx *ctx = (struct nproc_tasks_ctx *)cb->ctx;
	const struct genl_info *info = genl_info_dump(cb);
	struct netlink_ext_ack *extack = info->extack;
	struct nlattr **tb = info->attrs;
	u32 words[NPROC_BITMAP_WORDS_MAX] = {};
	struct nproc_view *view;
	u32 scope, pid = 0;
	unsigned int i, id, len;
	int err;

	BUILD_BUG_ON(sizeof(*ctx) > sizeof(cb->ctx));
	BUILD_BUG_ON(BITS_TO_U32(NPROC_F_MAX + 1) > NPROC_BITMAP_WORDS_MAX);

	if (GENL_REQ_ATTR_CHECK(info, NPROC_A_FIELDS))
		return -EINVAL;
	len = nla_len(tb[NPROC_A_FIELDS]);
	if (!len || len % sizeof(u32)) {
		NL_SET_ERR_MSG_ATTR(extack, tb[NPROC_A_FIELDS],
				    "field bitmap is not a whole number of u32 words");
		return -EINVAL;
	}
	nla_memcpy(words, tb[NPROC_A_FIELDS], sizeof(words));
	for (i = 0; i < len / sizeof(u32); i++) {
		u32 w = words[i];

		while (w) {
			id = i * 32 + __ffs(w);
			w &= w - 1;
			if (id && id <= NPROC_F_MAX)
				continue;
			NL_SET_ERR_MSG_ATTR_FMT(extack, tb[NPROC_A_FIELDS],
						"unknown field id %u", id);
			return -EINVAL;
		}
	}

	scope = NPROC_SCOPE_PROCESSES;
	if (tb[NPROC_A_SCOPE])
		scope = nla_get_u32(tb[NPROC_A_SCOPE]);
	if (scope == NPROC_SCOPE_PID || scope == NPROC_SCOPE_CHILDREN) {
		if (GENL_REQ_ATTR_CHECK(info, NPROC_A_PID))
			return -EINVAL;
		pid = nla_get_u32(tb[NPROC_A_PID]);
	} else if (tb[NPROC_A_PID]) {
		NL_SET_ERR_MSG_ATTR(extack, tb[NPROC_A_PID],
				    "a pid needs the pid or children scope");
		return -EINVAL;
	}

	/* In .start, current is the sender and its descriptors are at hand. */
	view = kmalloc(sizeof(*view), GFP_KERNEL);
	if (!view)
		return -ENOMEM;
	err = nproc_view_init(view, tb[NPROC_A_PROCFS_FD],
			      NETLINK_CB(cb->skb).sk, extack);
	if (err) {
		kfree(view);
		return err;
	}
	nproc_ctx_init(ctx, view, words, scope, pid);
	return 0;
}

/*
 * Sets up @ctx for a dump of the @scope (NPROC_SCOPE_*, @pid for the pid
 * and children scopes) with the field ids of @words (bit i of words[i /
 * 32] is id i; already checked), as seen through @view, which the caller
 * owns and releases.
 *
 * The view is kept for the whole dump: the chunks after the first
 * message are built in whoever calls recvmsg() on the socket, and
 * nproc_view_enter() refuses any caller but the one reader, so a
 * descriptor passed on or inherited, or a reader whose credentials
 * changed, gets no more tasks.
 */
void nproc_ctx_init(struct nproc_tasks_ctx *ctx, struct nproc_view *view,
		    const u32 *words, u32 scope, u32 pid)
{
	unsigned long id;

	bitmap_from_arr32(ctx->fields, words, NPROC_F_MAX + 1);
	ctx->need = 0;
	ctx->files = 0;
	for_each_set_bit(id, ctx->fields, NPROC_F_MAX + 1) {
		ctx->need |= nproc_field_need[id];
		ctx->files |= nproc_field_file(id);
	}
	ctx->view = view;
	view->files = ctx->files;
	ctx->scope = scope;
	ctx->pid = pid;
	ctx->next = 1;
	ctx->done = false;
	ctx->vis = NPROC_VIS_ALL;
	ctx->started = false;
}

void nproc_puts_init(const struct nproc_tasks_ctx *ctx,
		     struct nproc_puts *puts)
{
	unsigned int i, end, len = 0, vlen;
	unsigned long id;

	/* In id order; cmdline, the last id, is read apart. */
	BUILD_BUG_ON(NPROC_F_CMDLINE != NPROC_F_MAX);
	puts->n = 0;
	for_each_set_bit(id, ctx->fields, NPROC_F_CMDLINE) {
		puts->id[puts->n] = id;
		puts->type[puts->n] = nproc_task_type[id];
		puts->n++;
	}

	/* The runs, from the end: each number's bytes to the next string. */
	end = puts->n;
	for (i = puts->n; i-- > 0; ) {
		if (puts->type[i] == NPROC_TYPE_STRING) {
			end = i;
			len = 0;
			continue;
		}
		vlen = puts->type[i] == NPROC_TYPE_U64 ? sizeof(u64) :
							  sizeof(u32);
		puts->hdr[i].nla_len = nla_attr_size(vlen);
		puts->hdr[i].nla_type = puts->id[i];
		puts->size[i] = nla_total_size(vlen);
		len += puts->size[i];
		puts->run_end[i] = end;
		puts->run_len[i] = len;
	}
}

static int nproc_tasks_done(struct netlink_callback *cb)
{
	struct nproc_tasks_ctx *ctx = (struct nproc_tasks_ctx *)cb->ctx;

	nproc_view_release(ctx->view);
	kfree(ctx->view);
	return 0;
}

/* The next task of the scope, listed or not. */
static struct task_struct *nproc_scope_next(struct nproc_tasks_ctx *ctx)
{
	struct pid_namespace *ns = ctx->view->ns;
	struct task_struct *task;

	switch (ctx->scope) {
	case NPROC_SCOPE_THREADS:
		return nproc_next_task(ns, &ctx->next, PIDTYPE_PID);
	case NPROC_SCOPE_PID:
		if (ctx->done)
			return NULL;
		rcu_read_lock();
		task = find_task_by_pid_ns(ctx->pid, ns);
		if (task)
			get_task_struct(task);
		rcu_read_unlock();
		return task;
	case NPROC_SCOPE_CHILDREN:
		while ((task = nproc_next_task(ns, &ctx->next, PIDTYPE_TGID))) {
			if (nproc_is_child(ctx, task))
				return task;
			put_task_struct(task);
			ctx->next++;
			/* Every process may be skipped: let others run. */
			cond_resched();
			if (fatal_signal_pending(current))
				return ERR_PTR(-EINTR);
		}
		return NULL;
	default:
		return nproc_next_task(ns, &ctx->next, PIDTYPE_TGID);
	}
}

/*
 * The next task to send, NULL at the end, or an ERR_PTR(); ctx->next is
 * its number and ctx->vis what the reader may see of it. A task the
 * procfs mount hides from the reader is skipped, as proc_pid_readdir()
 * and proc_task_readdir() skip it.
 */
struct task_struct *nproc_tasks_next(struct nproc_tasks_ctx *ctx)
{
	bool thread = ctx->scope == NPROC_SCOPE_THREADS;
	struct task_struct *task;

	while (!IS_ERR_OR_NULL(task = nproc_scope_next(ctx))) {
		ctx->vis = nproc_task_vis(ctx->view, task, thread, ctx->files);
		if (ctx->vis != NPROC_VIS_HIDDEN)
			break;
		put_task_struct(task);
		if (ctx->scope == NPROC_SCOPE_PID)
			return NULL;
		ctx->next++;
		cond_resched();
		if (fatal_signal_pending(current))
			return ERR_PTR(-EINTR);
	}
	return task;
}

static int nproc_tasks_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct nproc_tasks_ctx *ctx = (struct nproc_tasks_ctx *)cb->ctx;
	u32 portid = NETLINK_CB(cb->skb).portid;
	u32 seq = cb->nlh->nlmsg_seq;
	struct task_struct *task;
	struct nproc_puts puts;
	int err;

	/*
	 * The first call runs in the sender's sendmsg(), before any reader
	 * is known: its message carries no task (nproc_access.c, one reader).
	 */
	if (!ctx->started) {
		void *hdr = genlmsg_put(skb, portid, seq, &nproc_family,
					NLM_F_MULTI, NPROC_CMD_GET_TASKS);

		if (!hdr)
			return -EMSGSIZE;
		genlmsg_end(skb, hdr);
		ctx->started = true;
		return skb->len;
	}
	err = nproc_view_enter(ctx->view, cb->extack);
	if (err)
		return err;
	nproc_puts_init(ctx, &puts);
	while (!IS_ERR_OR_NULL(task = nproc_tasks_next(ctx))) {
		err = nproc_fill_task(skb, portid, seq, ctx, &puts, task);
		put_task_struct(task);
		if (err == -EMSGSIZE && skb->len)
			break;		/* the next chunk starts with this task */
		if (err)
			return err;
		if (ctx->scope == NPROC_SCOPE_PID)
			ctx->done = true;
		else
			ctx->next++;
		cond_resched();
	}
	if (IS_ERR(task))
		return PTR_ERR(task);
	if (ctx->scope == NPROC_SCOPE_PID && !ctx->done && !skb->len) {
		NL_SET_ERR_MSG(cb->extack, "no such pid");
		return -ESRCH;
	}
	return skb->len;
}

static int nproc_fields_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct nproc_fields_ctx *ctx = (struct nproc_fields_ctx *)cb->ctx;
	struct nproc_field_desc d;
	struct nlattr *nest;
	void *hdr;

	BUILD_BUG_ON(sizeof(*ctx) > sizeof(cb->ctx));
	if (!ctx->set)
		ctx->set = NPROC_SET_TASK;

	for (;;) {
		if (!nproc_proto_desc(ctx->set, ctx->index, &d)) {
			if (ctx->set == NPROC_SET_GLOBAL)
				break;
			ctx->set = NPROC_SET_GLOBAL;
			ctx->index = 0;
			continue;
		}
		hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid,
				  cb->nlh->nlmsg_seq, &nproc_family,
				  NLM_F_MULTI, NPROC_CMD_GET_FIELDS);
		if (!hdr)
			break;
		nest = nla_nest_start(skb, NPROC_A_FIELD);
		if (!nest ||
		    nla_put_u32(skb, NPROC_FA_ID, d.id) ||
		    nla_put_string(skb, NPROC_FA_NAME, d.name) ||
		    nla_put_u32(skb, NPROC_FA_TYPE, d.type) ||
		    nla_put_u32(skb, NPROC_FA_UNIT, d.unit) ||
		    nla_put_u32(skb, NPROC_FA_FLAGS, d.flags) ||
		    nla_put_u32(skb, NPROC_FA_SET, d.set)) {
			genlmsg_cancel(skb, hdr);
			break;
		}
		nla_nest_end(skb, nest);
		genlmsg_end(skb, hdr);
		ctx->index++;
	}
	return skb->len;
}

static int nproc_global_doit(struct sk_buff *skb, struct genl_info *info)
{
	u64 v[NPROC_G_MAX + 1] = {};
	struct timespec64 ts;
	struct sk_buff *msg;
	struct nlattr *nest;
	struct nproc_view view;
	struct sysinfo si;
	unsigned int id;
	void *hdr;
	int err;

	err = nproc_view_init(&view, info->attrs[NPROC_A_PROCFS_FD],
			      NETLINK_CB(skb).sk, info->extack);
	if (err)
		return err;
	/* subset=pid: the mount has no stat, uptime or meminfo to read. */
	err = view.pidonly ? -ENOENT : 0;
	nproc_view_release(&view);
	if (err) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[NPROC_A_PROCFS_FD],
				    "the procfs mount has subset=pid: no global items");
		return err;
	}

	/* fs/proc/stat.c btime, fs/proc/uptime.c, fs/proc/meminfo.c. */
	getboottime64(&ts);
	timens_sub_boottime(&ts);
	v[NPROC_G_BOOT_TIME] = ts.tv_sec;
	ktime_get_boottime_ts64(&ts);
	timens_add_boottime(&ts);
	v[NPROC_G_UPTIME] = timespec64_to_ns(&ts);
	si_meminfo(&si);
	v[NPROC_G_MEM_TOTAL] = (u64)si.totalram << (PAGE_SHIFT - 10);
	v[NPROC_G_MEM_FREE] = (u64)si.freeram << (PAGE_SHIFT - 10);
	v[NPROC_G_MEM_AVAILABLE] = (u64)si_mem_available() << (PAGE_SHIFT - 10);
	v[NPROC_G_CLK_TCK] = USER_HZ;
	v[NPROC_G_PAGE_SIZE] = PAGE_SIZE;
	v[NPROC_G_NR_CPUS_ONLINE] = num_online_cpus();
	/* kernel/sysctl.c: /proc/sys/kernel/pid_max reads the global. */
	v[NPROC_G_PID_MAX] = READ_ONCE(pid_max);

	msg = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_iput(msg, info);
	if (!hdr)
		goto err;
	nest = nla_nest_start(msg, NPROC_A_GLOBAL);
	if (!nest)
		goto err;
	for (id = 1; id <= NPROC_G_MAX; id++)
		if (nproc_put_num(msg, nproc_global_type[id], id, v[id]))
			goto err;
	nla_nest_end(msg, nest);
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
err:
	nlmsg_free(msg);
	return -EMSGSIZE;
}

/* Commands without attributes reject any (strict validation). */
static const struct nla_policy nproc_none_policy[NPROC_A_MAX + 1];

static const struct netlink_range_validation nproc_pid_range = {
	.min = 1,
	.max = PID_MAX_LIMIT,
};

static const struct nla_policy nproc_tasks_policy[NPROC_A_MAX + 1] = {
	[NPROC_A_FIELDS] = { .type = NLA_BINARY,
			     .len = NPROC_BITMAP_WORDS_MAX * sizeof(u32) },
	[NPROC_A_SCOPE] = NLA_POLICY_RANGE(NLA_U32, NPROC_SCOPE_PROCESSES,
					   NPROC_SCOPE_CHILDREN),
	[NPROC_A_PID] = NLA_POLICY_FULL_RANGE(NLA_U32, &nproc_pid_range),
	[NPROC_A_PROCFS_FD] = { .type = NLA_S32 },
};

static const struct nla_policy nproc_global_policy[NPROC_A_MAX + 1] = {
	[NPROC_A_PROCFS_FD] = { .type = NLA_S32 },
};

static const struct genl_split_ops nproc_ops[] = {
	{
		.cmd = NPROC_CMD_GET_FIELDS,
		.dumpit = nproc_fields_dumpit,
		.policy = nproc_none_policy,
		.maxattr = NPROC_A_MAX,
		.flags = GENL_CMD_CAP_DUMP,
	},
	{
		.cmd = NPROC_CMD_GET_GLOBAL,
		.doit = nproc_global_doit,
		.policy = nproc_global_policy,
		.maxattr = NPROC_A_MAX,
		.flags = GENL_CMD_CAP_DO,
	},
	{
		.cmd = NPROC_CMD_GET_TASKS,
		.start = nproc_tasks_start,
		.dumpit = nproc_tasks_dumpit,
		.done = nproc_tasks_done,
		.policy = nproc_tasks_policy,
		.maxattr = NPROC_A_MAX,
		.flags = GENL_CMD_CAP_DUMP,
	},
};

static struct genl_family nproc_family __ro_after_init = {
	.name = NPROC_FAMILY_NAME,
	.version = NPROC_FAMILY_VERSION,
	.netnsok = true,
	/* Dumps take no genl_mutex: each keeps its own cursor. */
	.parallel_ops = true,
	/* Strict header and attribute validation for every command. */
	.resv_start_op = 0,
	.split_ops = nproc_ops,
	.n_split_ops = ARRAY_SIZE(nproc_ops),
	.module = THIS_MODULE,
};

/*
 * Load the types from the crate's table and check that it and
 * include/uapi/linux/nproc.h describe the same ids: the strings where
 * the C code sends strings, numbers elsewhere, every id present.
 */
static int __init nproc_load_table(u32 set, u8 *types, unsigned int max)
{
	struct nproc_field_desc d;
	unsigned int i;

	for (i = 0; nproc_proto_desc(set, i, &d); i++) {
		bool task = set == NPROC_SET_TASK;
		bool is_str = d.type == NPROC_TYPE_STRING;
		bool want_str = task &&
			(d.id == NPROC_F_COMM || d.id == NPROC_F_WCHAN);
		bool is_bytes = d.type == NPROC_TYPE_BYTES;
		bool want_bytes = task && d.id == NPROC_F_CMDLINE;

		if (d.id != i + 1 || d.id > max || is_str != want_str ||
		    is_bytes != want_bytes ||
		    d.type < NPROC_TYPE_U32 || d.type > NPROC_TYPE_BYTES)
			return -EINVAL;
		types[d.id] = d.type;
	}
	return i == max ? 0 : -EINVAL;
}

static int __init nproc_init(void)
{
	if (WARN(nproc_load_table(NPROC_SET_TASK, nproc_task_type,
				  NPROC_F_MAX) ||
		 nproc_load_table(NPROC_SET_GLOBAL, nproc_global_type,
				  NPROC_G_MAX),
		 "nproc: the field table and <linux/nproc.h> differ\n"))
		return -EINVAL;
	return genl_register_family(&nproc_family);
}
device_initcall(nproc_init);
