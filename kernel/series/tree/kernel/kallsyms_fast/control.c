// SPDX-License-Identifier: GPL-2.0
/*
 * CONFIG_KALLSYMS_FAST: the switch between the stock kallsyms lookups and
 * the indexes, and the boot-time build of the core index, in a kthread
 * beside the rest of the boot (on one CPU, part of it).
 *
 * The switch is a static key, on after boot unless the kernel is booted
 * with "kallsyms_fast=off". Root flips it at run time through
 * /sys/kernel/debug/kallsyms_fast/enabled, so that stock and fast lookups
 * can be compared in one boot. A lookup that the indexes cannot answer
 * (an index not built yet, or not at all) takes the stock path whatever
 * the switch says.
 */

#define pr_fmt(fmt) "kallsyms_fast: " fmt

#include <linux/debugfs.h>
#include <linux/completion.h>
#include <linux/init.h>
#include <linux/kallsyms.h>
#include <linux/kthread.h>
#include <linux/kallsyms_fast.h>
#include <linux/kstrtox.h>
#include <linux/ktime.h>
#include <linux/printk.h>

#include "../kallsyms_internal.h"
#include "bench.h"

DEFINE_STATIC_KEY_FALSE(kallsyms_fast_key);

/* Read by the build kthread, which may outlive the init sections. */
static bool kallsyms_fast_boot_on = true;
static DECLARE_COMPLETION(kallsyms_fast_built);

static int __init kallsyms_fast_setup(char *str)
{
	return kstrtobool(str, &kallsyms_fast_boot_on) == 0;
}

__setup("kallsyms_fast=", kallsyms_fast_setup);

static int kallsyms_fast_build(void)
{
	u64 start = ktime_get_ns();
	size_t bytes = 0;
	u64 ns;
	int ret;

	ret = kallsyms_fast_build_core(&bytes);
	ns = ktime_get_ns() - start;
	if (ret) {
		pr_warn("core index not built (%d): stock lookups only\n", ret);
		return 0;
	}
	pr_info("core index: %u symbols, %zu bytes (%zu.%02zu per symbol), built in %llu us\n",
		kallsyms_num_syms, bytes, bytes / kallsyms_num_syms,
		bytes % kallsyms_num_syms * 100 / kallsyms_num_syms,
		div_u64(ns, NSEC_PER_USEC));

	start = ktime_get_ns();
	ret = kallsyms_fast_build_names(&bytes);
	ns = ktime_get_ns() - start;
	if (ret)
		pr_warn("name index not built (%d): stock name lookups\n", ret);
	else
		pr_info("name index: %zu bytes (%zu.%02zu per symbol), built in %llu us\n",
			bytes, bytes / kallsyms_num_syms,
			bytes % kallsyms_num_syms * 100 / kallsyms_num_syms,
			div_u64(ns, NSEC_PER_USEC));
	if (kallsyms_fast_boot_on)
		static_branch_enable(&kallsyms_fast_key);
	else
		pr_info("off (kallsyms_fast=off): stock lookups until enabled\n");
	return 0;
}

static int kallsyms_fast_build_thread(void *unused)
{
	kallsyms_fast_build();
	complete_all(&kallsyms_fast_built);
	return 0;
}

/*
 * Wait until the boot-time build has finished (whether or not it built
 * an index): for the KUnit suite and the benchmark, which need the
 * indexes published. Sleeps.
 */
void kallsyms_fast_wait_built(void)
{
	wait_for_completion(&kallsyms_fast_built);
}

/*
 * Started after the switch to the real clocksource (an fs_initcall), so
 * that the build time reported is measured, not jiffies. The build runs
 * in a kthread, beside the rest of the boot: lookups are stock until the
 * index is published and the key enabled, as they are whenever no index
 * is built. Without a kthread, build in place.
 */
static int __init kallsyms_fast_init(void)
{
	struct task_struct *t;

	t = kthread_run(kallsyms_fast_build_thread, NULL, "kallsyms_fast");
	if (IS_ERR(t))
		kallsyms_fast_build_thread(NULL);
	return 0;
}
fs_initcall_sync(kallsyms_fast_init);

static int kallsyms_fast_enabled_get(void *data, u64 *val)
{
	*val = static_key_enabled(&kallsyms_fast_key);
	return 0;
}

static int kallsyms_fast_enabled_set(void *data, u64 val)
{
	if (val > 1)
		return -EINVAL;
	if (val)
		static_branch_enable(&kallsyms_fast_key);
	else
		static_branch_disable(&kallsyms_fast_key);
	return 0;
}

DEFINE_DEBUGFS_ATTRIBUTE(kallsyms_fast_enabled_fops, kallsyms_fast_enabled_get,
			 kallsyms_fast_enabled_set, "%llu\n");

/*
 * The wchan cache's generation, which the module loader bumps whenever a
 * module's symbols change: test suites read it around module unload and
 * load to see that the cache cannot answer for a module that is gone.
 */
static int kallsyms_fast_generation_get(void *data, u64 *val)
{
	*val = kallsyms_fast_cache_generation();
	return 0;
}

DEFINE_DEBUGFS_ATTRIBUTE(kallsyms_fast_generation_fops,
			 kallsyms_fast_generation_get, NULL, "%llu\n");

static int __init kallsyms_fast_debugfs_init(void)
{
	struct dentry *dir = debugfs_create_dir("kallsyms_fast", NULL);

	debugfs_create_file_unsafe("enabled", 0600, dir, NULL,
				   &kallsyms_fast_enabled_fops);
	debugfs_create_file_unsafe("cache_generation", 0400, dir, NULL,
				   &kallsyms_fast_generation_fops);
	kallsyms_fast_bench_debugfs(dir);
	return 0;
}
late_initcall(kallsyms_fast_debugfs_init);
