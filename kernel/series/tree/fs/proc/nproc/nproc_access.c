// SPDX-License-Identifier: GPL-2.0
/*
 * nproc's access model: a request sees exactly what an open /proc shows
 * the same reader, and never more.
 *
 *  - A request names a procfs mount: NPROC_A_PROCFS_FD is a descriptor,
 *    in the sender, of that mount's root directory, opened for reading.
 *    fget() refuses O_PATH descriptors, so a process that may not open
 *    /proc (no mount in its chroot, a Landlock ruleset denying the
 *    directory) gets nothing. The mount's pid namespace numbers the
 *    pids; its hidepid= and gid= decide, as has_pid_permissions() and
 *    proc_pid_permission() in fs/proc/base.c decide, which tasks are
 *    listed (invisible and ptraceable hide them) and which are listed
 *    with their files unreadable (noaccess: the pid alone is sent);
 *    subset=pid refuses GET_GLOBAL, whose files that mount does not have.
 *  - Credentials: every check is made with each distinct credential of
 *    the request's sender, the opener of the netlink socket (as
 *    __netlink_ns_capable() requires both), and the task that calls
 *    recvmsg() for a chunk of the dump. A socket passed to a more
 *    privileged program, which then writes a request or reads the dump,
 *    gives no more than its opener could read from /proc.
 *  - kernel.nproc_restrict: 0, /proc's rules; 1, and only the tasks each
 *    credential may ptrace (PTRACE_MODE_READ_FSCREDS) are listed, as with
 *    hidepid=ptraceable whatever the mount says; 2, and each credential
 *    needs CAP_SYS_ADMIN in the procfs mount's user namespace.
 *
 * The checks are the ones /proc runs: ptrace_may_access(), with its LSM
 * hook security_ptrace_access_check(), and in_group_p(). /proc's inode
 * permission and d_revalidate hooks (security_inode_permission(), LSMs
 * that label /proc/PID inodes) have no counterpart: there is no inode.
 */

#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <linux/net.h>
#include <linux/pid_namespace.h>
#include <linux/proc_fs.h>
#include <linux/ptrace.h>
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

/* CAP_SYS_ADMIN in @ns for @cred, as file_ns_capable() asks it. */
static bool nproc_cred_admin(const struct cred *cred, struct user_namespace *ns)
{
	return !security_capable(cred, ns, CAP_SYS_ADMIN, CAP_OPT_NONE);
}

static int nproc_add_cred(struct nproc_view *v, const struct cred *cred)
{
	unsigned int i;

	for (i = 0; i < v->ncred; i++)
		if (v->cred[i] == cred)
			return 0;
	if (v->restrict_level >= 2 && v->procfs &&
	    !nproc_cred_admin(cred, file_inode(v->procfs)->i_sb->s_user_ns))
		return -EPERM;
	v->cred[v->ncred++] = cred;
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
	struct proc_fs_info *fs_info;
	struct super_block *sb;
	struct socket *sock;
	int err;

	memset(v, 0, sizeof(*v));
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
		err = -EINVAL;
		goto out_put;
	}
	fs_info = proc_sb_info(sb);
	v->ns = fs_info->pid_ns;
	v->pid_gid = fs_info->pid_gid;
	v->hide_pid = fs_info->hide_pid;
	v->pidonly = fs_info->pidonly == PROC_PIDONLY_ON;
	v->restrict_level = READ_ONCE(nproc_restrict);
	if (v->restrict_level >= 1)
		v->hide_pid = HIDEPID_NOT_PTRACEABLE;
	v->boottime_off = timens_add_boottime_ns(0);

	err = nproc_add_cred(v, current_cred());
	if (err)
		goto out_restrict;
	get_cred(v->cred[0]);
	v->nheld = 1;
	sock = sk->sk_socket;
	/* A kernel socket has no file: its sender is its opener. */
	if (sock && sock->file) {
		err = nproc_add_cred(v, sock->file->f_cred);
		if (err)
			goto out_restrict;
		if (v->ncred > v->nheld)
			get_cred(v->cred[v->nheld++]);
	}
	return 0;

out_restrict:
	NL_SET_ERR_MSG(extack,
		       "kernel.nproc_restrict=2: CAP_SYS_ADMIN in the procfs mount's user namespace is required");
	nproc_view_release(v);
	return err;
out_put:
	fput(v->procfs);
	v->procfs = NULL;
	return err;
}

/*
 * The in-kernel benchmark's view: current's pid namespace and
 * credentials, no mount (hidepid=off).
 */
void nproc_view_init_bench(struct nproc_view *v)
{
	memset(v, 0, sizeof(*v));
	v->ns = get_pid_ns(task_active_pid_ns(current));
	v->cred[0] = get_current_cred();
	v->nheld = 1;
	v->ncred = 1;
	v->hide_pid = HIDEPID_OFF;
	v->boottime_off = timens_add_boottime_ns(0);
}

/*
 * Before a chunk is filled: adds the credentials of current, which
 * receives the chunk, until nproc_view_enter() is called again.
 */
int nproc_view_enter(struct nproc_view *v)
{
	v->ncred = v->nheld;
	return nproc_add_cred(v, current_cred());
}

void nproc_view_release(struct nproc_view *v)
{
	unsigned int i;

	for (i = 0; i < v->nheld; i++)
		put_cred(v->cred[i]);
	v->nheld = 0;
	v->ncred = 0;
	if (v->procfs)
		fput(v->procfs);
	else if (v->ns)
		put_pid_ns(v->ns);
	v->procfs = NULL;
	v->ns = NULL;
}

/*
 * fs/proc/base.c has_pid_permissions() for current's credentials, with
 * the mount options @v took; @hide_min 0 asks for the ptrace check alone.
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
 * nproc_pid_perms() for every credential of @v, each installed in turn:
 * ptrace_may_access() and in_group_p() read current_cred(). Installing
 * the credentials current already has changes nothing but costs two
 * atomic operations; that is skipped.
 */
static bool nproc_check(const struct nproc_view *v, struct task_struct *task,
			int hide_min)
{
	const struct cred *old;
	unsigned int i;
	bool ok = true;

	for (i = 0; ok && i < v->ncred; i++) {
		if (v->cred[i] == current_cred()) {
			ok = nproc_pid_perms(v, task, hide_min);
			continue;
		}
		old = override_creds(v->cred[i]);
		ok = nproc_pid_perms(v, task, hide_min);
		revert_creds(old);
	}
	return ok;
}

/*
 * What /proc on the view's mount shows of @task to every credential:
 * proc_pid_readdir() lists it unless has_pid_permissions(INVISIBLE)
 * fails; proc_pid_permission() lets its files be read unless
 * has_pid_permissions(NO_ACCESS) fails. /proc/PID/task/TID lies under
 * /proc/PID, so a thread (@thread) is judged by its group leader and is
 * hidden whenever the leader's directory is unreadable.
 */
enum nproc_vis nproc_task_vis(const struct nproc_view *v,
			      struct task_struct *task, bool thread)
{
	struct task_struct *leader = task;
	enum nproc_vis vis = NPROC_VIS_ALL;

	/* hidepid=off (the default): listed and readable, no check at all */
	if (v->hide_pid == HIDEPID_OFF)
		return NPROC_VIS_ALL;
	if (thread) {
		rcu_read_lock();
		leader = get_task_struct(READ_ONCE(task->group_leader));
		rcu_read_unlock();
	}
	if (!nproc_check(v, leader, HIDEPID_INVISIBLE))
		vis = NPROC_VIS_HIDDEN;
	/* For invisible and ptraceable the two checks are the same one. */
	else if (v->hide_pid == HIDEPID_NO_ACCESS &&
		 !nproc_check(v, leader, HIDEPID_NO_ACCESS))
		vis = thread ? NPROC_VIS_HIDDEN : NPROC_VIS_PID;
	if (thread)
		put_task_struct(leader);
	return vis;
}

/* fs/proc/base.c proc_pid_wchan()'s check, for every credential. */
bool nproc_may_read_wchan(const struct nproc_view *v, struct task_struct *task)
{
	return nproc_check(v, task, 0);
}
