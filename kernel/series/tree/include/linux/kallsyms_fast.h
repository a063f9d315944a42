/* SPDX-License-Identifier: GPL-2.0 */
/*
 * CONFIG_KALLSYMS_FAST: kallsyms lookups from indexes built by the
 * kallsyms-fast crate (kernel/kallsyms_fast/). Every function answers
 * exactly as the stock code would, or returns false and leaves the answer
 * to the stock code.
 */
#ifndef _LINUX_KALLSYMS_FAST_H
#define _LINUX_KALLSYMS_FAST_H

#include <linux/err.h>
#include <linux/jump_label.h>
#include <linux/types.h>

#ifdef CONFIG_KALLSYMS_FAST

DECLARE_STATIC_KEY_FALSE(kallsyms_fast_key);

/* Whether lookups go through the indexes (boot parameter, debugfs). */
static inline bool kallsyms_fast_enabled(void)
{
	return static_branch_likely(&kallsyms_fast_key);
}

/* Returns once the boot-time build of the indexes has finished. */
void kallsyms_fast_wait_built(void);

/* Implemented in kernel/kallsyms_fast/kallsyms_fast_glue.rs. */
int kallsyms_fast_build_core(size_t *bytes);
int kallsyms_fast_core_symbol(unsigned long addr, unsigned long *symbolsize,
			      unsigned long *offset, char *namebuf);
/* Implemented in kernel/kallsyms_fast/names.rs. */
int kallsyms_fast_build_names(size_t *bytes);
int kallsyms_fast_lookup_name(const char *name, unsigned long *addr);

struct kallsyms_fast_module;
struct mod_kallsyms;
struct kallsyms_fast_module *
kallsyms_fast_module_build(const struct mod_kallsyms *kallsyms);
void kallsyms_fast_module_free(struct kallsyms_fast_module *ix);
long kallsyms_fast_module_find(const struct kallsyms_fast_module *ix,
			       const struct mod_kallsyms *kallsyms,
			       unsigned long addr, unsigned long base,
			       unsigned long size, unsigned long *symbolsize,
			       unsigned long *offset);
bool kallsyms_fast_module_find_name(const struct kallsyms_fast_module *ix,
				    const struct mod_kallsyms *kallsyms,
				    const char *name, unsigned long *value);

bool kallsyms_fast_cache_get(unsigned long addr, char *symname);
u64 kallsyms_fast_cache_generation(void);
void kallsyms_fast_cache_put(unsigned long addr, u64 generation,
			     const char *symname);
void kallsyms_fast_cache_invalidate(void);

/*
 * For the KUnit suite (kernel/module/kallsyms.c): 1 when a module index
 * answered for addr, 0 when it could not, -1 when addr is not in a module
 * region the lookup searches.
 */
int kallsyms_fast_module_answers(unsigned long addr);
/* Likewise for modname's name index and name (-1: no such module). */
int kallsyms_fast_module_name_answers(const char *modname, const char *name);

#else /* !CONFIG_KALLSYMS_FAST */

static inline bool kallsyms_fast_enabled(void)
{
	return false;
}

static inline bool kallsyms_fast_cache_get(unsigned long addr, char *symname)
{
	return false;
}

static inline u64 kallsyms_fast_cache_generation(void)
{
	return 0;
}

static inline void kallsyms_fast_cache_put(unsigned long addr, u64 generation,
					   const char *symname)
{
}

static inline int kallsyms_fast_lookup_name(const char *name,
					    unsigned long *addr)
{
	return -1;
}

static inline int kallsyms_fast_core_symbol(unsigned long addr,
					    unsigned long *symbolsize,
					    unsigned long *offset,
					    char *namebuf)
{
	return -1;
}

#endif /* CONFIG_KALLSYMS_FAST */

/*
 * Whether the core index answers for addr (is_ksym_addr() is true): size
 * and offset through the pointers that are not NULL, the name into
 * namebuf when it is not NULL (kallsyms_fast_core_symbol() also returns
 * its length, or -1 when the index does not answer).
 */
static inline bool kallsyms_fast_core_lookup(unsigned long addr,
					     unsigned long *symbolsize,
					     unsigned long *offset,
					     char *namebuf)
{
	return kallsyms_fast_core_symbol(addr, symbolsize, offset, namebuf) >= 0;
}

#ifdef CONFIG_KALLSYMS_FAST_BENCH
/*
 * For the benchmark's module-sorted case (kernel/kallsyms_fast/bench.c): a
 * copy of a module's symtab sorted as a sorted-symtab patch sorts the
 * symtab itself (kernel/module/kallsyms.c says how).
 */
struct module;
struct kallsyms_fast_sorted {
	struct module *mod;	/* pinned: a reference is held until freed */
	const char *name;	/* mod->name */
	void *symtab;		/* the copy, Elf_Sym[]: sorted from entry 1 */
	unsigned int nr;	/* symbols in the sorted prefix */
	u64 sort_ns;		/* the partition and sort() of the copy */
};

#ifdef CONFIG_MODULES
struct kallsyms_fast_sorted *kallsyms_fast_sorted_build(unsigned long addr);
void kallsyms_fast_sorted_free(struct kallsyms_fast_sorted *s);
int kallsyms_fast_sorted_lookup(const struct kallsyms_fast_sorted *s,
				unsigned long addr, unsigned long *size,
				unsigned long *offset, char **modname,
				char *namebuf);
#else /* !CONFIG_MODULES */
static inline struct kallsyms_fast_sorted *
kallsyms_fast_sorted_build(unsigned long addr)
{
	return ERR_PTR(-ENOENT);
}

static inline void kallsyms_fast_sorted_free(struct kallsyms_fast_sorted *s)
{
}

static inline int kallsyms_fast_sorted_lookup(const struct kallsyms_fast_sorted *s,
					      unsigned long addr,
					      unsigned long *size,
					      unsigned long *offset,
					      char **modname, char *namebuf)
{
	return 0;
}
#endif /* CONFIG_MODULES */
#endif /* CONFIG_KALLSYMS_FAST_BENCH */

#endif /* _LINUX_KALLSYMS_FAST_H */
