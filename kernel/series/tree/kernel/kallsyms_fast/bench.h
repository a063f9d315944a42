/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _KALLSYMS_FAST_BENCH_H
#define _KALLSYMS_FAST_BENCH_H

struct dentry;

#ifdef CONFIG_KALLSYMS_FAST_BENCH
/* Creates dir/bench: see kernel/kallsyms_fast/bench.c. */
void kallsyms_fast_bench_debugfs(struct dentry *dir);
#else
static inline void kallsyms_fast_bench_debugfs(struct dentry *dir) { }
#endif

#endif /* _KALLSYMS_FAST_BENCH_H */
