/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The nproc field table, served by nproc_table.rs from the nproc-proto
 * crate.
 */
#ifndef _FS_PROC_NPROC_H
#define _FS_PROC_NPROC_H

#include <linux/bits.h>
#include <linux/types.h>
#include <linux/netlink.h>
#include <linux/nproc.h>
#include <linux/uidgid.h>

struct sk_buff;
struct task_struct;
struct cred;
struct pid_namespace;
struct nlattr;
struct sock;
struct netlink_ext_ack;

/* One entry of the table; the layout of NprocFieldDesc in nproc_table.rs. */
struct nproc_field_desc {
	u16 id;
	u16 set;
	u32 type;
	u32 unit;
	u32 flags;
	char name[NPROC_NAME_MAX + 1];
};

/*
 * Copies entry @index of table @set (NPROC_SET_*) into @out; false past
 * the end of the table or for an unknown set. Never sleeps.
 */
bool nproc_proto_desc(u32 set, u32 index, struct nproc_field_desc *out);

/*
 * Who a request answers, and what it may see (nproc_access.c): what an
 * open /proc shows the one reader, current. The procfs mount whose root
 * directory the request passed (NPROC_A_PROCFS_FD) gives the pid
 * namespace; hidepid=, gid=, subset=pid and the sysctl are read again
 * for each chunk (nproc_view_enter()).
 *
 * Invariants: @opener (the socket file's credentials, which the sender
 * had) and @reader (the sender's thread group) hold a reference each,
 * both NULL in the in-kernel benchmark; @procfs (NULL in the benchmark)
 * is pinned until nproc_view_release(), which keeps its superblock,
 * hence @ns, alive.
 */
struct nproc_view {
	struct file *procfs;
	struct pid_namespace *ns;	/* the mount's pid namespace */
	const struct cred *opener;
	struct pid *reader;
	s64 boottime_off;		/* the sender's time namespace offset */
	kgid_t pid_gid;			/* the mount's gid= */
	u8 hide_pid;			/* hidepid=, or stricter (nproc_restrict) */
	u8 restrict_level;		/* kernel.nproc_restrict, this chunk */
	bool pidonly;			/* subset=pid */
	u8 files;			/* NPROC_FILE_* the request reads */
	bool self_unreadable;		/* the reader's own files refused */
};

/* The /proc/PID files a request's fields come from (nproc_task_vis()). */
#define NPROC_FILE_STAT		BIT(0)
#define NPROC_FILE_STATUS	BIT(1)
#define NPROC_FILE_STATM	BIT(2)
#define NPROC_FILE_CMDLINE	BIT(3)
#define NPROC_FILES		4

/* What a reader may see of a task (nproc_task_vis()). */
enum nproc_vis {
	NPROC_VIS_HIDDEN,	/* not listed (hidepid=invisible, ptraceable) */
	NPROC_VIS_PID,		/* listed, files unreadable (hidepid=noaccess) */
	NPROC_VIS_ALL,
};

int nproc_view_init(struct nproc_view *v, const struct nlattr *fd_attr,
		    struct sock *sk, struct netlink_ext_ack *extack);
void nproc_view_init_bench(struct nproc_view *v);
int nproc_view_enter(struct nproc_view *v, struct netlink_ext_ack *extack);
void nproc_view_release(struct nproc_view *v);
enum nproc_vis nproc_task_vis(const struct nproc_view *v,
			      struct task_struct *task, bool thread, u8 files);
bool nproc_may_read_wchan(const struct nproc_view *v,
			  struct task_struct *task);

/*
 * The GET_TASKS cursor, in cb->ctx (48 bytes): also the in-kernel
 * benchmark's (nproc_bench.c), which runs the same fill over every task.
 */
struct nproc_tasks_ctx {
	struct nproc_view *view;
	DECLARE_BITMAP(fields, NPROC_F_MAX + 1);	/* requested ids */
	u32 scope;
	u32 pid;			/* NPROC_A_PID, or 0 */
	u32 next;			/* next tgid (tid in the threads scope) */
	bool done;			/* the pid scope sent its task */
	u8 need;			/* NPROC_NEED_*, from fields */
	u8 files;			/* NPROC_FILE_*, from fields */
	u8 vis;				/* enum nproc_vis of the task being sent */
	bool started;			/* the first message is sent */
};

/*
 * The fields a request puts for each task, in id order, with their
 * NPROC_TYPE_* (cmdline, read apart, is not among them): worked out from
 * the field bitmap by nproc_puts_init() once per dump chunk, so that the
 * fill neither searches the bitmap nor looks a type up for every value.
 * The numbers between two strings form a run, put with one room check
 * where the architecture allows (nproc_put_nums()): for each number, its
 * attribute header and size are worked out here too, and run_end and
 * run_len give the end and the bytes of the run from it to the next
 * string.
 */
struct nproc_puts {
	unsigned int n;
	u8 id[NPROC_F_MAX];
	u8 type[NPROC_F_MAX];
	u8 size[NPROC_F_MAX];
	u8 run_end[NPROC_F_MAX];
	u16 run_len[NPROC_F_MAX];
	struct nlattr hdr[NPROC_F_MAX];
};

void nproc_ctx_init(struct nproc_tasks_ctx *ctx, struct nproc_view *view,
		    const u32 *words, u32 scope, u32 pid);
void nproc_puts_init(const struct nproc_tasks_ctx *ctx,
		     struct nproc_puts *puts);
struct task_struct *nproc_tasks_next(struct nproc_tasks_ctx *ctx);
int nproc_fill_task(struct sk_buff *skb, u32 portid, u32 seq,
		    const struct nproc_tasks_ctx *ctx,
		    const struct nproc_puts *puts, struct task_struct *task);

#endif /* _FS_PROC_NPROC_H */
