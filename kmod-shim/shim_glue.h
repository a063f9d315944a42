/* SPDX-License-Identifier: GPL-2.0 */
/* The interface between shim_glue.c and shim_main.rs. */
#ifndef KFS_SHIM_GLUE_H
#define KFS_SHIM_GLUE_H

#include <linux/types.h>

/* Implemented in shim_main.rs. */
int kfs_lookup_symbol_name(unsigned long addr, char *symname);
int kfs_rust_load(const char *text, size_t len);
bool kfs_rust_ready(void);
int kfs_rust_bench(unsigned int rounds);
size_t kfs_rust_status(char *buf, size_t len);
void kfs_rust_modules_changed(unsigned long event);

/* Implemented in shim_glue.c, called from shim_main.rs. */
int kfs_glue_init(void);
void kfs_glue_exit(void);
int kfs_sprint_symbol(char *buf, unsigned long addr);
void *kfs_kvzalloc(size_t size);
void kfs_kvfree(void *p);
void kfs_cond_resched(void);
u64 kfs_ktime_ns(void);
u64 kfs_cycles(void);
size_t kfs_collect_stack_addrs(unsigned long *out, size_t max);

#endif /* KFS_SHIM_GLUE_H */
