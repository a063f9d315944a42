// SPDX-License-Identifier: GPL-2.0
/*
 * C glue of kallsyms_fast_shim: the parts Rust-for-Linux 6.12 has no
 * abstraction for. The logic (parsing, verification, indexes, the lookup
 * itself) is in shim_main.rs; this file only holds
 *  - the livepatch structures replacing lookup_symbol_name() and the
 *    sprint_symbol() family (%pS, %ps, %pB),
 *  - the debugfs files (kallsyms_fast/{load,ctl,check,status}),
 *  - the module notifier, which builds and drops module indexes, and the
 *    walk over the modules already live when the tables are loaded,
 *  - kfs_module_view(): the fields of struct module a lookup reads,
 *  - one-line wrappers of kernel helpers the Rust side calls.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/kallsyms.h>
#include <linux/ktime.h>
#include <linux/livepatch.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/preempt.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/stddef.h>
#include <linux/string.h>
#include <linux/stacktrace.h>
#include <linux/timex.h>
#include <linux/uaccess.h>
#include <linux/workqueue.h>
#include <asm/cpufeature.h>
#include <asm/ibt.h>

#include "shim_glue.h"

/* struct kfs_mod_view has the layout ModView (mod_index.rs) asserts. */
static_assert(sizeof(struct kfs_mod_view) == 8 * 8 + 16 * MOD_MEM_NUM_TYPES);
static_assert(offsetof(struct kfs_mod_view, mod) == 0);
static_assert(offsetof(struct kfs_mod_view, kallsyms) == 8);
static_assert(offsetof(struct kfs_mod_view, symtab) == 16);
static_assert(offsetof(struct kfs_mod_view, strtab) == 24);
static_assert(offsetof(struct kfs_mod_view, name) == 32);
static_assert(offsetof(struct kfs_mod_view, num_symtab) == 40);
static_assert(offsetof(struct kfs_mod_view, live) == 48);
static_assert(offsetof(struct kfs_mod_view, serving) == 56);
static_assert(offsetof(struct kfs_mod_view, mem) == 64);
static_assert(ARRAY_SIZE(((struct kfs_mod_view *)0)->mem) == MOD_MEM_NUM_TYPES);
/* The symtab entries ModView reads as bindings::elf64_sym. */
static_assert(__same_type(((struct mod_kallsyms *)0)->symtab,
			  struct elf64_sym *));
/* mod_index.rs reads mod->name with this bound. */
static_assert(MODULE_NAME_LEN == 56);

#define KFS_SYMBOL_BUF	1024
#define KFS_IN_MAX	8192
#define KFS_STATUS_MAX	4096
/* Frames per task the bench takes: enough for 10000 tasks in 64K slots. */
#define KFS_STACK_FRAMES	6
/* Bound on the module list walk (a list can change while it is walked). */
#define KFS_WALK_MAX	65536

static DEFINE_MUTEX(kfs_lock);
/* Serialises module index builds and drops (notifier and loader). */
static DEFINE_MUTEX(kfs_mod_lock);
static struct dentry *kfs_dir;
static bool kfs_patch_used;

static int kfs_new_sprint_symbol(char *buffer, unsigned long address)
{
	return kfs_rust_sprint(buffer, KSYM_SYMBOL_LEN, address, 0, true);
}

static int kfs_new_sprint_symbol_no_offset(char *buffer, unsigned long address)
{
	return kfs_rust_sprint(buffer, KSYM_SYMBOL_LEN, address, 0, false);
}

static int kfs_new_sprint_backtrace(char *buffer, unsigned long address)
{
	return kfs_rust_sprint(buffer, KSYM_SYMBOL_LEN, address, -1, true);
}

/* The replacements have the prototypes of what they replace. */
static_assert(__same_type(&kfs_new_sprint_symbol, &sprint_symbol));
static_assert(__same_type(&kfs_new_sprint_symbol_no_offset,
			  &sprint_symbol_no_offset));
static_assert(__same_type(&kfs_new_sprint_backtrace, &sprint_backtrace));
static_assert(__same_type(&kfs_lookup_symbol_name, &lookup_symbol_name));
/* shim_main.rs calls kallsyms_lookup() through a pointer of this type. */
static_assert(__same_type(&kallsyms_lookup,
			  const char *(*)(unsigned long, unsigned long *,
					  unsigned long *, char **, char *)));

static struct klp_func kfs_funcs[] = {
	{
		.old_name = "lookup_symbol_name",
		.new_func = kfs_lookup_symbol_name,
	},
	{
		.old_name = "sprint_symbol",
		.new_func = kfs_new_sprint_symbol,
	},
	{
		.old_name = "sprint_symbol_no_offset",
		.new_func = kfs_new_sprint_symbol_no_offset,
	},
	{
		.old_name = "sprint_backtrace",
		.new_func = kfs_new_sprint_backtrace,
	},
#if !IS_ENABLED(CONFIG_STACKTRACE_BUILD_ID)
	/* Without build IDs these print what the two above print. */
	{
		.old_name = "sprint_symbol_build_id",
		.new_func = kfs_new_sprint_symbol,
	},
	{
		.old_name = "sprint_backtrace_build_id",
		.new_func = kfs_new_sprint_backtrace,
	},
#endif
	{ }
};

static struct klp_object kfs_objs[] = {
	{
		/* name == NULL: vmlinux */
		.funcs = kfs_funcs,
	},
	{ }
};

static struct klp_patch kfs_patch = {
	.mod = THIS_MODULE,
	.objs = kfs_objs,
};

/*
 * Whether an indirect call to @addr (a verified function symbol) is safe:
 * with IBT enforced, objtool seals functions whose address is never taken
 * (their ENDBR is poisoned at boot) and an indirect call to them faults.
 * Without IBT in the CPU (or the kernel) nothing checks the target.
 */
bool kfs_indirect_call_ok(unsigned long addr)
{
#ifdef CONFIG_X86_KERNEL_IBT
	u32 insn;

	if (!cpu_feature_enabled(X86_FEATURE_IBT))
		return true;
	if (copy_from_kernel_nofault(&insn, (void *)addr, sizeof(insn)))
		return false;
	return insn == gen_endbr();
#else
	return true;
#endif
}

int kfs_sprint_symbol(char *buf, unsigned long addr)
{
	BUILD_BUG_ON(KSYM_SYMBOL_LEN > KFS_SYMBOL_BUF);
	return sprint_symbol(buf, addr);
}

void kfs_cond_resched(void)
{
	cond_resched();
}

u64 kfs_ktime_ns(void)
{
	return ktime_get_ns();
}

/*
 * The bench counts TSC cycles: under QEMU TCG the clocksource is jiffies
 * (the TSC cannot be calibrated), far too coarse for one lookup. The bench
 * converts cycles to ns with the ratio over its whole run.
 */
u64 kfs_cycles(void)
{
	return get_cycles();
}

/* Return addresses of every task's kernel stack: the bench's workload. */
size_t kfs_collect_stack_addrs(unsigned long *out, size_t max)
{
	struct task_struct *g, *t;
	size_t n = 0;

	rcu_read_lock();
	for_each_process_thread(g, t) {
		if (max - n < KFS_STACK_FRAMES)
			break;
		n += stack_trace_save_tsk(t, out + n, KFS_STACK_FRAMES, 0);
	}
	rcu_read_unlock();
	return n;
}

void kfs_preempt_disable(void)
{
	preempt_disable();
}

void kfs_preempt_enable(void)
{
	preempt_enable();
}

void kfs_synchronize_rcu(void)
{
	synchronize_rcu();
}

/*
 * The module containing @addr, as lookup_module_symbol_name() would find
 * it, read into @v: its core_kallsyms (what an index is built from and
 * keyed by) and whether mod->kallsyms points there yet (do_init_module()
 * switches it after the LIVE notification). Call with preemption disabled
 * (what __module_address() asserts); everything @v points to stays valid
 * until preemption is enabled again, because free_module() waits for an
 * RCU grace period.
 */
bool kfs_module_view(kfs_module_address_t find, unsigned long addr,
		     struct kfs_mod_view *v)
{
	struct module *mod = find(addr);
	struct mod_kallsyms *core;

	if (!mod)
		return false;
	core = &mod->core_kallsyms;
	v->mod = mod;
	v->kallsyms = core;
	v->symtab = core->symtab;
	v->strtab = core->strtab;
	v->name = mod->name;
	v->num_symtab = core->num_symtab;
	v->live = READ_ONCE(mod->state) == MODULE_STATE_LIVE;
	v->serving = rcu_dereference_sched(mod->kallsyms) == core;
	for_each_mod_mem_type(type) {
		v->mem[type][0] = (unsigned long)mod->mem[type].base;
		v->mem[type][1] = mod->mem[type].size;
	}
	return true;
}

/*
 * Up to @max live modules, this one first, as addresses inside each (its
 * struct module). The module list is not exported, but this module is on
 * it: walk it from THIS_MODULE under RCU (preemption disabled, as kallsyms
 * walks it). The list head is the only node that is no module's list
 * entry, which @find (__module_address) tells apart. This module went live
 * before its notifier could index anything, so it is listed too.
 */
size_t kfs_live_modules(kfs_module_address_t find, unsigned long *out,
			size_t max)
{
	struct list_head *pos;
	struct module *mod;
	size_t n = 0, steps = 0;

	preempt_disable();
	if (max && READ_ONCE(THIS_MODULE->state) == MODULE_STATE_LIVE)
		out[n++] = (unsigned long)THIS_MODULE;
	for (pos = rcu_dereference_sched(list_next_rcu(&THIS_MODULE->list));
	     pos != &THIS_MODULE->list && n < max && steps < KFS_WALK_MAX;
	     pos = rcu_dereference_sched(list_next_rcu(pos)), steps++) {
		mod = find((unsigned long)pos);
		if (!mod || &mod->list != pos)
			continue;	/* the list head */
		if (READ_ONCE(mod->state) == MODULE_STATE_LIVE)
			out[n++] = (unsigned long)mod;
	}
	preempt_enable();
	return n;
}

/* The tables were just published: index the modules already live. */
void kfs_index_live_modules(void)
{
	mutex_lock(&kfs_mod_lock);
	kfs_rust_index_live_modules();
	mutex_unlock(&kfs_mod_lock);
}

static char *kfs_copy_in(const char __user *ubuf, size_t count)
{
	if (!capable(CAP_SYS_ADMIN))
		return ERR_PTR(-EPERM);
	if (count == 0 || count >= KFS_IN_MAX)
		return ERR_PTR(-EINVAL);
	return memdup_user_nul(ubuf, count);
}

/* Copy a debugfs write in, hand it to @handle under kfs_lock. */
static ssize_t kfs_write_with(const char __user *ubuf, size_t count,
			      int (*handle)(const char *text, size_t len))
{
	char *buf = kfs_copy_in(ubuf, count);
	int ret;

	if (IS_ERR(buf))
		return PTR_ERR(buf);
	mutex_lock(&kfs_lock);
	ret = handle(buf, count);
	mutex_unlock(&kfs_lock);
	kfree(buf);
	return ret ? ret : count;
}

static ssize_t kfs_load_write(struct file *file, const char __user *ubuf,
			      size_t count, loff_t *ppos)
{
	return kfs_write_with(ubuf, count, kfs_rust_load);
}

static int kfs_check(const char *text, size_t len)
{
	/* Once patched, sprint_symbol() is ours: no stock text to compare. */
	return kfs_patch_used ? -EBUSY : kfs_rust_check(text, len);
}

static ssize_t kfs_check_write(struct file *file, const char __user *ubuf,
			       size_t count, loff_t *ppos)
{
	return kfs_write_with(ubuf, count, kfs_check);
}

static int kfs_enable(void)
{
	int ret;

	if (kfs_patch_used) {
		pr_err("the patch can be enabled once per load; reload the module\n");
		return -EBUSY;
	}
	if (!kfs_rust_ready()) {
		pr_err("no verified tables; write kallsyms_fast/load first\n");
		return -ENODATA;
	}
	ret = klp_enable_patch(&kfs_patch);
	if (ret)
		return ret;
	kfs_patch_used = true;
	pr_info("lookup_symbol_name() now served by the fast index\n");
	return 0;
}

static ssize_t kfs_ctl_write(struct file *file, const char __user *ubuf,
			     size_t count, loff_t *ppos)
{
	char *buf = kfs_copy_in(ubuf, count);
	unsigned int rounds;
	int ret;

	if (IS_ERR(buf))
		return PTR_ERR(buf);
	mutex_lock(&kfs_lock);
	if (sysfs_streq(buf, "enable"))
		ret = kfs_enable();
	else if (sscanf(buf, "bench %u", &rounds) == 1)
		ret = kfs_rust_bench(rounds,
				     kfs_patch_used && kfs_patch.enabled);
	else
		ret = -EINVAL;
	mutex_unlock(&kfs_lock);
	kfree(buf);
	return ret ? ret : count;
}

static ssize_t kfs_status_read(struct file *file, char __user *ubuf,
			       size_t count, loff_t *ppos)
{
	char *buf = kzalloc(KFS_STATUS_MAX, GFP_KERNEL);
	ssize_t ret;
	size_t len;

	if (!buf)
		return -ENOMEM;
	mutex_lock(&kfs_lock);
	len = kfs_rust_status(buf, KFS_STATUS_MAX);
	len += scnprintf(buf + len, KFS_STATUS_MAX - len, "patch: %s\n",
			 kfs_patch_used ? "enabled once" : "not enabled");
	mutex_unlock(&kfs_lock);
	ret = simple_read_from_buffer(ubuf, count, ppos, buf, len);
	kfree(buf);
	return ret;
}

static const struct file_operations kfs_load_fops = {
	.owner = THIS_MODULE,
	.write = kfs_load_write,
	.llseek = noop_llseek,
};

static const struct file_operations kfs_ctl_fops = {
	.owner = THIS_MODULE,
	.write = kfs_ctl_write,
	.llseek = noop_llseek,
};

static const struct file_operations kfs_check_fops = {
	.owner = THIS_MODULE,
	.write = kfs_check_write,
	.llseek = noop_llseek,
};

static const struct file_operations kfs_status_fops = {
	.owner = THIS_MODULE,
	.read = kfs_status_read,
	.llseek = default_llseek,
};

static int kfs_module_notify(struct notifier_block *nb, unsigned long event,
			     void *data)
{
	mutex_lock(&kfs_mod_lock);
	kfs_rust_modules_changed(event, data);
	mutex_unlock(&kfs_mod_lock);
	return NOTIFY_DONE;
}

static struct notifier_block kfs_module_nb = {
	.notifier_call = kfs_module_notify,
};

int kfs_glue_init(void)
{
	int ret;

	kfs_dir = debugfs_create_dir("kallsyms_fast", NULL);
	if (IS_ERR(kfs_dir))
		return PTR_ERR(kfs_dir);
	debugfs_create_file("load", 0200, kfs_dir, NULL, &kfs_load_fops);
	debugfs_create_file("ctl", 0200, kfs_dir, NULL, &kfs_ctl_fops);
	debugfs_create_file("check", 0200, kfs_dir, NULL, &kfs_check_fops);
	debugfs_create_file("status", 0400, kfs_dir, NULL, &kfs_status_fops);
	ret = register_module_notifier(&kfs_module_nb);
	if (ret)
		debugfs_remove_recursive(kfs_dir);
	return ret;
}

void kfs_glue_exit(void)
{
	/*
	 * The patch holds a reference on this module while it exists, so it
	 * is disabled and freed by the time we get here.
	 */
	debugfs_remove_recursive(kfs_dir);
	unregister_module_notifier(&kfs_module_nb);
}

MODULE_INFO(livepatch, "Y");
/* Here, not in module!, whose key is `author` in 6.12, `authors` in 7.x. */
MODULE_AUTHOR("kallsyms-fast developers");
