/* SPDX-License-Identifier: GPL-2.0 */
/* The interface between shim_glue.c and shim_main.rs. */
#ifndef KFS_SHIM_GLUE_H
#define KFS_SHIM_GLUE_H

#include <linux/types.h>

struct module;

/* __module_address(): its address is verified at load, then called. */
typedef struct module *(*kfs_module_address_t)(unsigned long addr);

/*
 * What a module lookup reads of one module, copied under
 * preempt_disable() (see kfs_module_view()). The pointers stay valid until
 * the caller enables preemption again. Mirrored by ModView in mod_index.rs:
 * eight 8-byte fields, then mem; both sides assert that layout at build
 * time.
 */
struct kfs_mod_view {
	const void *mod;		/* identity of the module */
	const void *kallsyms;		/* &mod->core_kallsyms */
	const void *symtab;		/* its Elf64_Sym[num_symtab] */
	const char *strtab;
	const char *name;		/* mod->name */
	u64 num_symtab;
	u64 live;			/* state == MODULE_STATE_LIVE */
	u64 serving;			/* mod->kallsyms == kallsyms */
	u64 mem[7][2];			/* mod->mem[type]: base, size */
};

/* Implemented in shim_main.rs. */
int kfs_lookup_symbol_name(unsigned long addr, char *symname);
int kfs_rust_load(const char *text, size_t len);
bool kfs_rust_ready(void);
int kfs_rust_bench(unsigned int rounds, bool patched);
int kfs_rust_check(const char *text, size_t len);
int kfs_rust_sprint(char *buffer, size_t len, unsigned long address,
		    long symbol_offset, bool add_offset);
size_t kfs_rust_status(char *buf, size_t len);
void kfs_rust_modules_changed(unsigned long event, const void *mod);
void kfs_rust_index_live_modules(void);

/* Implemented in shim_glue.c, called from shim_main.rs. */
int kfs_glue_init(void);
void kfs_glue_exit(void);
bool kfs_indirect_call_ok(unsigned long addr);
int kfs_sprint_symbol(char *buf, unsigned long addr);
void kfs_cond_resched(void);
u64 kfs_ktime_ns(void);
u64 kfs_cycles(void);
size_t kfs_collect_stack_addrs(unsigned long *out, size_t max);
void kfs_preempt_disable(void);
void kfs_preempt_enable(void);
void kfs_synchronize_rcu(void);
bool kfs_module_view(kfs_module_address_t find, unsigned long addr,
		     struct kfs_mod_view *v);
size_t kfs_live_modules(kfs_module_address_t find, unsigned long *out,
			size_t max);
void kfs_index_live_modules(void);

#endif /* KFS_SHIM_GLUE_H */
