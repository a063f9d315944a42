// SPDX-License-Identifier: GPL-2.0
/*
 * ksym_truth - ground truth for the kallsyms-fast userspace mirror.
 *
 * debugfs files (under /sys/kernel/debug/ksym_truth/):
 *
 * resolve (rw): write hex addresses (optional 0x prefix) separated by
 *   whitespace; read back one line per address:
 *     "<addr>" " " "<sprint_symbol()>" "\t" "<%ps>" "\n"
 *   where <addr> is lowercase hex without 0x.  Output is buffered per open
 *   file (1 MiB); when the buffer is full, write() returns a short count (or
 *   -ENOSPC) and the caller must read before writing the rest.
 *
 * module_layout (r): one line per loaded module and memory type:
 *     "<modname> <type 0..6> <base hex> <size hex>"
 *   (hex lowercase without 0x; type is enum mod_mem_type).
 *
 * stacks (r): one line per task: "<tid> <addr> <addr> ..." with the
 *   addresses stack_trace_save_tsk() returns (hex without 0x), innermost
 *   first; real return addresses for the test address list.
 */

#include <linux/ctype.h>
#include <linux/debugfs.h>
#include <linux/kallsyms.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/rculist.h>
#include <linux/sched/signal.h>
#include <linux/seq_file.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/stacktrace.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#define KT_OUT_SIZE	SZ_1M
#define KT_LINE_MAX	(2 * KSYM_SYMBOL_LEN + 32)
#define KT_IN_CHUNK	4096
#define KT_TOKEN_MAX	24

struct kt_state {
	struct mutex lock;	/* serialises users of one open file */
	char *out;
	size_t len;
	size_t pos;
	char token[KT_TOKEN_MAX];
	size_t tlen;
	bool pending;	/* token complete, waiting for output room */
	char sym[KSYM_SYMBOL_LEN];
	char in[KT_IN_CHUNK];
};

static struct dentry *kt_dir;

static int kt_open(struct inode *inode, struct file *file)
{
	struct kt_state *st = kzalloc(sizeof(*st), GFP_KERNEL);

	if (!st)
		return -ENOMEM;
	st->out = vmalloc(KT_OUT_SIZE);
	if (!st->out) {
		kfree(st);
		return -ENOMEM;
	}
	mutex_init(&st->lock);
	file->private_data = st;
	return 0;
}

static int kt_release(struct inode *inode, struct file *file)
{
	struct kt_state *st = file->private_data;

	vfree(st->out);
	kfree(st);
	return 0;
}

static int kt_emit(struct kt_state *st)
{
	unsigned long addr;
	const char *tok = st->token;
	int ret;

	st->token[st->tlen] = '\0';
	if (tok[0] == '0' && (tok[1] == 'x' || tok[1] == 'X'))
		tok += 2;
	ret = kstrtoul(tok, 16, &addr);
	if (ret)
		return ret;
	sprint_symbol(st->sym, addr);
	st->len += scnprintf(st->out + st->len, KT_OUT_SIZE - st->len,
			     "%lx %s\t%ps\n", addr, st->sym, (void *)addr);
	st->tlen = 0;
	return 0;
}

static bool kt_room(const struct kt_state *st)
{
	return KT_OUT_SIZE - st->len >= KT_LINE_MAX;
}

static ssize_t kt_write(struct file *file, const char __user *ubuf,
			size_t count, loff_t *ppos)
{
	struct kt_state *st = file->private_data;
	size_t done = 0;
	ssize_t ret = 0;

	mutex_lock(&st->lock);
	if (st->pending) {
		if (!kt_room(st)) {
			ret = -ENOSPC;
			goto out;
		}
		st->pending = false;
		ret = kt_emit(st);
		if (ret)
			goto out;
	}
	while (done < count) {
		size_t n = min_t(size_t, count - done, KT_IN_CHUNK);
		size_t i;

		if (copy_from_user(st->in, ubuf + done, n)) {
			ret = -EFAULT;
			goto out;
		}
		for (i = 0; i < n; i++) {
			char c = st->in[i];

			if (!isspace(c)) {
				if (st->tlen >= KT_TOKEN_MAX - 1) {
					ret = -EINVAL;
					goto out;
				}
				st->token[st->tlen++] = c;
				continue;
			}
			if (!st->tlen)
				continue;
			if (!kt_room(st)) {
				/* Keep the address; the caller must read first. */
				st->pending = true;
				done += i + 1;
				goto out;
			}
			ret = kt_emit(st);
			if (ret)
				goto out;
		}
		done += n;
	}
out:
	mutex_unlock(&st->lock);
	if (ret && !done)
		return ret;
	return done;
}

static ssize_t kt_read(struct file *file, char __user *ubuf, size_t count,
		       loff_t *ppos)
{
	struct kt_state *st = file->private_data;
	size_t n;

	mutex_lock(&st->lock);
	n = min(count, st->len - st->pos);
	if (n && copy_to_user(ubuf, st->out + st->pos, n)) {
		mutex_unlock(&st->lock);
		return -EFAULT;
	}
	st->pos += n;
	if (st->pos == st->len) {
		st->pos = 0;
		st->len = 0;
	}
	mutex_unlock(&st->lock);
	return n;
}

static const struct file_operations kt_resolve_fops = {
	.owner = THIS_MODULE,
	.open = kt_open,
	.release = kt_release,
	.read = kt_read,
	.write = kt_write,
};

static bool kt_is_module_node(const struct list_head *node)
{
	unsigned long a = (unsigned long)node;

	/* The list head `modules` lives in the kernel image, not here. */
	return a >= MODULES_VADDR && a < MODULES_END;
}

static void kt_show_module(struct seq_file *m, const struct module *mod)
{
	int type;

	if (mod->state == MODULE_STATE_UNFORMED)
		return;
	for (type = 0; type < MOD_MEM_NUM_TYPES; type++)
		seq_printf(m, "%s %d %lx %x\n", mod->name, type,
			   (unsigned long)mod->mem[type].base,
			   mod->mem[type].size);
}

static int kt_layout_show(struct seq_file *m, void *v)
{
	struct list_head *pos;

	rcu_read_lock();
	kt_show_module(m, THIS_MODULE);
	list_for_each_rcu(pos, &THIS_MODULE->list) {
		if (kt_is_module_node(pos))
			kt_show_module(m, list_entry(pos, struct module, list));
	}
	rcu_read_unlock();
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(kt_layout);

#define KT_STACK_DEPTH	32

static int kt_stacks_show(struct seq_file *m, void *v)
{
	unsigned long *entries;
	struct task_struct *g, *t;
	unsigned int n, i;

	entries = kmalloc_array(KT_STACK_DEPTH, sizeof(*entries), GFP_KERNEL);
	if (!entries)
		return -ENOMEM;
	rcu_read_lock();
	for_each_process_thread(g, t) {
		n = stack_trace_save_tsk(t, entries, KT_STACK_DEPTH, 0);
		seq_printf(m, "%d", task_pid_nr(t));
		for (i = 0; i < n; i++)
			seq_printf(m, " %lx", entries[i]);
		seq_putc(m, '\n');
	}
	rcu_read_unlock();
	kfree(entries);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(kt_stacks);

static int __init ksym_truth_init(void)
{
	kt_dir = debugfs_create_dir("ksym_truth", NULL);
	debugfs_create_file("resolve", 0600, kt_dir, NULL, &kt_resolve_fops);
	debugfs_create_file("module_layout", 0400, kt_dir, NULL,
			    &kt_layout_fops);
	debugfs_create_file("stacks", 0400, kt_dir, NULL, &kt_stacks_fops);
	return 0;
}

static void __exit ksym_truth_exit(void)
{
	debugfs_remove(kt_dir);
}

module_init(ksym_truth_init);
module_exit(ksym_truth_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("sprint_symbol() ground truth for kallsyms-fast tests");
