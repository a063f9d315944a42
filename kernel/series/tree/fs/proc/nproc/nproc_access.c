// SPDX-License-Identifier: GPL-2.0
/*
 * nproc's access model: a request answers one reader, and that reader
 * sees no more than an open /proc shows it.
 *
 *  - One reader. The socket's opener (its file's f_cred) is the only
 *    credential a request is answered for: the sender's current_cred()
 *    must be that very cred, and every chunk of a dump is built only in
 *    a recvmsg() of the sender's thread group still running with it.
 *    Any other sender or reader is refused (-EPERM), whatever its
 *    credentials: a setuid program, a process that changed its ids or
 *    entered a Landlock domain since it opened the socket, a child that
 *    inherited it, a process it was passed to. Nothing is emulated with
 *    another task's credentials, so every check below reads current,
 *    as /proc's do. The message built in the sender's sendmsg() carries
 *    no task: the queue holds at most the one chunk built in the
 *    reader's last recvmsg(), which goes with the descriptor if the
 *    reader then hands it on or changes its credentials, as bytes
 *    already read would.
 *  - A request names a procfs mount: NPROC_A_PROCFS_FD is a descriptor,
 *    in the sender, of that mount's root directory, opened for reading
 *    (fget() refuses O_PATH). The mount's pid namespace numbers the
 *    pids; its hidepid= and gid= decide, as has_pid_permissions() and
 *    proc_pid_permission() in fs/proc/base.c decide, which tasks are
 *    listed (invisible and ptraceable hide them) and which are listed
 *    with their files unreadable (noaccess: the pid alone is sent);
 *    subset=pid refuses GET_GLOBAL, whose files that mount does not have.
 *  - Rules read at every chunk: the mount's options and
 *    kernel.nproc_restrict are read again when each chunk is built, so a
 *    remount or a sysctl change binds a running dump from its next
 *    chunk, as /proc reads its options at every getdents().
 *  - An LSM check per task, at every hidepid=: a task whose values are
 *    sent must pass ptrace_may_access(PTRACE_MODE_READ_FSCREDS), whose
 *    hook security_ptrace_access_check() is the one SELinux and Smack
 *    answer with the same rule as for reading the task's /proc files,
 *    and which Landlock refuses for a task outside the reader's domain.
 *    Where it fails (another user's task; the reader's own thread group,
 *    which ptrace exempts, always takes this path), and for every task
 *    when the reader cannot open its own files of the request under the
 *    mount (checked for each chunk), /proc itself is asked: each file
 *    that carries a requested field (stat, status, statm, cmdline) is
 *    opened under the request's mount, as the reader, with
 *    file_open_root(), so that every inode and open hook runs as for
 *    openat(procfd, "PID/stat"). A refusal sends the task as its pid
 *    alone, as hidepid=noaccess does: /proc lists the pid and refuses
 *    its files. Where ptrace_may_access() passes and the reader's own
 *    files open, a path-based rule that refuses another task's file
 *    alone (an AppArmor or TOMOYO profile naming pids, a Landlock rule
 *    on one /proc/PID directory) is not consulted.
 *  - kernel.nproc_restrict: 0, /proc's rules; 1, and only the tasks the
 *    reader may ptrace (PTRACE_MODE_READ_FSCREDS) are listed, as with
 *    hidepid=ptraceable whatever the mount says; 2, and the reader needs
 *    CAP_SYS_ADMIN in the procfs mount's user namespace.
 */

#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <linux/net.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/proc_fs.h>
#include <linux/ptrace.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/security.h>
#include <linux/sysctl.h>
#include <linux/time_namespace.h>
#include <net/netlink.h>
#include <net/sock.h>

#include "nproc.h"

static int nproc_restrict;

static struct ctl_table nproc_sysctls[] = {
	{
		.procname	= "nproc_restrict",
		.data		= &nproc_restrict,
		.maxlen		= sizeof(int),
		.mode		= 0644,
		.proc_handler	= proc_dointvec_minmax,
		.extra1		= SYSCTL_ZERO,
		.extra2		= SYSCTL_TWO,
	},
};

static int __init nproc_access_init(void)
{
	register_sysctl_init("kernel", nproc_sysctls);
	return 0;
}
fs_initcall(nproc_access_init);

/* CAP_SYS_ADMIN in @ns for current, as file_ns_capable() asks it. */
static bool nproc_admin(struct user_namespace *ns)
{
	return !security_capable(current_cred(), ns, CAP_SYS_ADMIN,
				 CAP_OPT_NONE);
}

/* The /proc/PID files of NPROC_FILE_* bits, in bit order. */
static const char *const nproc_file_names[] = {
	"stat", "status", "statm", "cmdline",
};

/*
 * Whether current can open each file of @files (NPROC_FILE_*) of the
 * task whose pid in the view's mount is @nr, under that mount: /proc's
 * own permission and open hooks decide.
 */
static bool nproc_open_files(const struct nproc_view *v, pid_t nr, u8 files)
{
	char name[32];
	struct file *f;
	unsigned int i;

	BUILD_BUG_ON(ARRAY_SIZE(nproc_file_names) != NPROC_FILES);
	for (i = 0; i < NPROC_FILES; i++) {
		if (!(files & BIT(i)))
			continue;
		snprintf(name, sizeof(name), "%d/%s", nr, nproc_file_names[i]);
		f = file_open_root(&v->procfs->f_path, name,
				   O_RDONLY | O_NOFOLLOW, 0);
		if (IS_ERR(f))
			return false;
		fput(f);
	}
	return true;
}

/*
 * Reads the mount's options and kernel.nproc_restrict into @v, for
 * current: at the request and again before each chunk.
 */
static int nproc_view_rules(struct nproc_view *v,
			    struct netlink_ext_ack *extack)
{
	const struct proc_fs_info *fs_info;
	struct super_block *sb;

	if (!v->procfs)
		return 0;	/* the in-kernel benchmark: hidepid=off */
	sb = file_inode(v->procfs)->i_sb;
	fs_info = proc_sb_info(sb);
	v->pid_gid = READ_ONCE(fs_info->pid_gid);
	v->hide_pid = READ_ONCE(fs_info->hide_pid);
	v->pidonly = READ_ONCE(fs_info->pidonly) == PROC_PIDONLY_ON;
	v->restrict_level = READ_ONCE(nproc_restrict);
	if (v->restrict_level >= 1)
		v->hide_pid = HIDEPID_NOT_PTRACEABLE;
	if (v->restrict_level >= 2 && !nproc_admin(sb->s_user_ns)) {
		NL_SET_ERR_MSG(extack,
			       "kernel.nproc_restrict=2: CAP_SYS_ADMIN in the procfs mount's user namespace is required");
		return -EPERM;
	}
	/*
	 * A reader that may not open its own files of the request under this
	 * mount (a Landlock domain or a profile restricting /proc, or a reader
	 * outside the mount's pid namespace) has every task asked of /proc.
	 */
	if (v->files) {
		pid_t self = task_tgid_nr_ns(current, v->ns);

		v->self_unreadable = !self ||
				     !nproc_open_files(v, self, v->files);
	}
	return 0;
}

/*
 * Sets up @v for a request from current on the socket @sk, naming the
 * procfs of @fd_attr (NULL when absent); nproc_view_release() drops what
 * it holds. An error leaves nothing held and says why in @extack.
 */
int nproc_view_init(struct nproc_view *v, const struct nlattr *fd_attr,
		    struct sock *sk, struct netlink_ext_ack *extack)
{
	const struct cred *opener = current_cred();
	struct socket *sock = sk->sk_socket;
	struct super_block *sb;
	int err;

	memset(v, 0, sizeof(*v));
	/* A kernel socket has no file: its sender is its opener. */
	if (sock && sock->file)
		opener = sock->file->f_cred;
	if (opener != current_cred()) {
		NL_SET_ERR_MSG(extack,
			       "the sender is not the socket's opener: nproc answers only the credentials that opened the socket");
		return -EPERM;
	}
	if (!fd_attr) {
		NL_SET_ERR_MSG(extack,
			       "a procfs_fd is required: nproc shows what an open /proc shows");
		NL_SET_ERR_ATTR_MISS(extack, NULL, NPROC_A_PROCFS_FD);
		return -EINVAL;
	}
	/* fget() gives no O_PATH file: reading the directory is the proof. */
	v->procfs = fget(nla_get_s32(fd_attr));
	if (!v->procfs) {
		NL_SET_ERR_MSG_ATTR(extack, fd_attr,
				    "procfs_fd is not a descriptor open for reading");
		return -EBADF;
	}
	sb = file_inode(v->procfs)->i_sb;
	if (sb->s_magic != PROC_SUPER_MAGIC ||
	    v->procfs->f_path.dentry != sb->s_root) {
		NL_SET_ERR_MSG_ATTR(extack, fd_attr,
				    "procfs_fd is not the root directory of a procfs mount");
		fput(v->procfs);
		v->procfs = NULL;
		return -EINVAL;
	}
	v->ns = proc_sb_info(sb)->pid_ns;
	v->boottime_off = timens_add_boottime_ns(0);
	v->opener = get_cred(opener);
	v->reader = get_pid(task_tgid(current));
	err = nproc_view_rules(v, extack);
	if (err)
		nproc_view_release(v);
	return err;
}

/*
 * The in-kernel benchmark's view: current's pid namespace and
 * credentials, no mount (hidepid=off), no reader to check.
 */
void nproc_view_init_bench(struct nproc_view *v)
{
	memset(v, 0, sizeof(*v));
	v->ns = get_pid_ns(task_active_pid_ns(current));
	v->hide_pid = HIDEPID_OFF;
	v->boottime_off = timens_add_boottime_ns(0);
}

/*
 * Before a chunk is built: current must be the one reader (the sender's
 * thread group, with the opener's credentials), and the rules are read
 * again.
 */
int nproc_view_enter(struct nproc_view *v, struct netlink_ext_ack *extack)
{
	if (v->opener && (current_cred() != v->opener ||
			  task_tgid(current) != v->reader)) {
		NL_SET_ERR_MSG(extack,
			       "the reader is not the sender with the socket opener's credentials: nproc answers one reader");
		return -EPERM;
	}
	return nproc_view_rules(v, extack);
}

void nproc_view_release(struct nproc_view *v)
{
	put_cred(v->opener);
	put_pid(v->reader);
	v->opener = NULL;
	v->reader = NULL;
	if (v->procfs)
		fput(v->procfs);
	else if (v->ns)
		put_pid_ns(v->ns);
	v->procfs = NULL;
	v->ns = NULL;
}

/*
 * fs/proc/base.c has_pid_permissions() for current, with the mount
 * options @v read; @hide_min 0 asks for the ptrace check alone.
 */
static bool nproc_pid_perms(const struct nproc_view *v,
			    struct task_struct *task, int hide_min)
{
	if (hide_min && v->hide_pid != HIDEPID_NOT_PTRACEABLE) {
		if (v->hide_pid < hide_min)
			return true;
		if (in_group_p(v->pid_gid))
			return true;
	}
	return ptrace_may_access(task, PTRACE_MODE_READ_FSCREDS);
}

/*
 * Whether current may read each file of @files (NPROC_FILE_*) of @task,
 * whose pid in the mount is @nr: ptrace_may_access() (and its LSM hook),
 * unless the reader may not even open its own files there; else the
 * files themselves, opened under the mount.
 */
static bool nproc_files_readable(const struct nproc_view *v,
				 struct task_struct *task, pid_t nr, u8 files)
{
	if (!v->self_unreadable && !same_thread_group(task, current) &&
	    ptrace_may_access(task, PTRACE_MODE_READ_FSCREDS |
				    PTRACE_MODE_NOAUDIT))
		return true;
	return v->procfs && nproc_open_files(v, nr, files);
}

/*
 * What /proc on the view's mount shows of @task to current, for the
 * files @files (NPROC_FILE_*) of the requested fields: proc_pid_readdir()
 * lists it unless has_pid_permissions(INVISIBLE) fails; proc_pid_permission()
 * lets its files be read unless has_pid_permissions(NO_ACCESS) fails, and
 * the LSM check of nproc_files_readable() must pass. /proc/PID/task/TID
 * lies under /proc/PID, so a thread (@thread) is judged by its group
 * leader and is hidden whenever the leader's files are unreadable.
 */
enum nproc_vis nproc_task_vis(const struct nproc_view *v,
			      struct task_struct *task, bool thread, u8 files)
{
	struct task_struct *leader = task;
	enum nproc_vis vis = NPROC_VIS_ALL;
	pid_t nr;

	if (thread) {
		rcu_read_lock();
		leader = get_task_struct(READ_ONCE(task->group_leader));
		rcu_read_unlock();
	}
	if (v->hide_pid != HIDEPID_OFF &&
	    !nproc_pid_perms(v, leader, HIDEPID_INVISIBLE))
		vis = NPROC_VIS_HIDDEN;
	/* For invisible and ptraceable the two checks are the same one. */
	else if (v->hide_pid == HIDEPID_NO_ACCESS &&
		 !nproc_pid_perms(v, leader, HIDEPID_NO_ACCESS))
		vis = NPROC_VIS_PID;
	else if (files) {
		nr = task_tgid_nr_ns(leader, v->ns);
		if (!nr || !nproc_files_readable(v, leader, nr, files))
			vis = NPROC_VIS_PID;
	}
	if (thread && vis == NPROC_VIS_PID)
		vis = NPROC_VIS_HIDDEN;
	if (thread)
		put_task_struct(leader);
	return vis;
}

/* fs/proc/base.c proc_pid_wchan()'s check, for current. */
bool nproc_may_read_wchan(const struct nproc_view *v, struct task_struct *task)
{
	return nproc_pid_perms(v, task, 0);
}
