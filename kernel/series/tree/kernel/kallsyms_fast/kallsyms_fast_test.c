// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for CONFIG_KALLSYMS_FAST: every answer equals the stock one.
 *
 * For every core symbol and every symbol of every loaded module (beyond
 * MODULE_SAMPLE module symbols in all, that many evenly spread), at its
 * first byte, the byte after it and its last byte, the test compares what
 * %pS (sprint_symbol()), %ps (sprint_symbol_no_offset()), the wchan lookup
 * (lookup_symbol_name(), through the wchan cache) and
 * kallsyms_lookup_size_offset() give with the switch off and on, and what
 * kallsyms_lookup_name() and module_kallsyms_lookup_name() give for every
 * core name and the names of loaded modules (sampled likewise). The
 * switch is flipped once per chunk of addresses: the stock answers for a
 * chunk are kept, then compared with the fast ones.
 *
 * The wchan memo (get_wchan() of a blocked task, remembered until it runs
 * again) is checked on a kthread moved from one wait to another, and on
 * every task of the system: stock and memo answers agree for every task
 * that did not run in between.
 *
 * Built in, the suite runs at boot, before any module is loaded (the
 * module case then has nothing to compare and says so); run it again
 * after loading modules with
 *	echo > /sys/kernel/debug/kunit/kallsyms_fast/run
 */

#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/kallsyms.h>
#include <linux/kallsyms_fast.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/sched/signal.h>
#include <linux/sched/stat.h>
#include <linux/sched/task.h>
#include <linux/slab.h>

#include "../kallsyms_internal.h"

#define CHUNK 128
/*
 * The stock module lookup scans the module's whole symtab, so checking
 * every symbol of a 60,000-symbol module costs minutes (more than
 * KUnit's 300-second case timeout under emulation); larger sets
 * are sampled evenly to this many symbols.
 */
#define MODULE_SAMPLE 1024

struct answer {
	char with_offset[KSYM_SYMBOL_LEN];	/* %pS */
	char no_offset[KSYM_SYMBOL_LEN];	/* %ps */
	char wchan[KSYM_NAME_LEN];
	int wchan_ret;
	int found;
	unsigned long size;
	unsigned long offset;
};

struct chunk {
	unsigned long addr[CHUNK];
	unsigned int n;
	struct answer stock[CHUNK];
	struct answer fast;
	unsigned long checked;
	unsigned long indexed;
	/* Addresses in a module region the lookup searches; index answers. */
	unsigned long module_checked;
	unsigned long module_indexed;
	unsigned long mismatches;
};

static void answer(unsigned long addr, struct answer *a)
{
	memset(a, 0, sizeof(*a));
	sprint_symbol(a->with_offset, addr);
	sprint_symbol_no_offset(a->no_offset, addr);
	a->wchan_ret = lookup_symbol_name(addr, a->wchan);
	a->found = kallsyms_lookup_size_offset(addr, &a->size, &a->offset);
}

static void check_chunk(struct kunit *test, struct chunk *c)
{
	unsigned int i;

	static_branch_disable(&kallsyms_fast_key);
	for (i = 0; i < c->n; i++)
		answer(c->addr[i], &c->stock[i]);
	static_branch_enable(&kallsyms_fast_key);
	for (i = 0; i < c->n; i++) {
		struct answer *s = &c->stock[i], *f = &c->fast;
		unsigned long a = c->addr[i];
		int module;

		answer(a, f);
		c->checked++;
		/* Not a test of stock against stock: the index answered. */
		if (is_ksym_addr(a) &&
		    kallsyms_fast_core_lookup(a, NULL, NULL, NULL))
			c->indexed++;
		module = kallsyms_fast_module_answers(a);
		if (module >= 0) {
			c->module_checked++;
			c->module_indexed += module;
		}
		if (!strcmp(s->with_offset, f->with_offset) &&
		    !strcmp(s->no_offset, f->no_offset) &&
		    s->wchan_ret == f->wchan_ret &&
		    !strcmp(s->wchan, f->wchan) && s->found == f->found &&
		    (!s->found || (s->size == f->size &&
				   s->offset == f->offset)))
			continue;
		if (c->mismatches++ < 10)
			KUNIT_FAIL(test,
				   "%#lx: stock \"%s\" \"%s\" %d:\"%s\" %d %#lx+%#lx, fast \"%s\" \"%s\" %d:\"%s\" %d %#lx+%#lx",
				   a, s->with_offset, s->no_offset, s->wchan_ret, s->wchan,
				   s->found, s->offset, s->size, f->with_offset, f->no_offset,
				   f->wchan_ret, f->wchan, f->found, f->offset,
				   f->size);
	}
	c->n = 0;
}

static void add_addr(struct kunit *test, struct chunk *c, unsigned long addr)
{
	c->addr[c->n++] = addr;
	if (c->n == CHUNK)
		check_chunk(test, c);
}

/* The first byte, the one after it, and the last byte of addr's symbol. */
static void add_symbol(struct kunit *test, struct chunk *c, unsigned long addr)
{
	unsigned long size = 0, offset = 0;

	add_addr(test, c, addr);
	add_addr(test, c, addr + 1);
	if (kallsyms_lookup_size_offset(addr, &size, &offset) && size > 1 &&
	    !offset)
		add_addr(test, c, addr + size - 1);
}

static struct chunk *new_chunk(struct kunit *test)
{
	struct chunk *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, c);
	return c;
}

/* Compare what is left; leave the switch as the case found it. */
static void finish(struct kunit *test, struct chunk *c, const char *what,
		   bool was_on)
{
	check_chunk(test, c);
	if (!was_on)
		static_branch_disable(&kallsyms_fast_key);
	kunit_info(test, "%s: %lu addresses (%lu answered by the core index, %lu of %lu module addresses by a module index), %lu mismatches\n",
		   what, c->checked, c->indexed, c->module_indexed,
		   c->module_checked, c->mismatches);
	KUNIT_EXPECT_EQ(test, c->mismatches, 0);
	/* Every live module has an index, and it answers every address. */
	KUNIT_EXPECT_EQ(test, c->module_indexed, c->module_checked);
}

static void kallsyms_fast_test_core(struct kunit *test)
{
	bool was_on = static_key_enabled(&kallsyms_fast_key);
	struct chunk *c = new_chunk(test);
	unsigned int i;

	for (i = 0; i < kallsyms_num_syms; i++) {
		add_symbol(test, c, kallsyms_sym_address(i));
		if (!(i % 1024))
			cond_resched();
	}
	finish(test, c, "core symbols", was_on);
	KUNIT_EXPECT_GE(test, c->checked, 2UL * kallsyms_num_syms);
	/* Only absolute per-CPU symbols lie outside the indexed sections. */
	KUNIT_EXPECT_GE(test, c->indexed, c->checked / 2);
}

struct module_walk {
	struct kunit *test;
	unsigned long *addrs;
	unsigned int n, max;
};

static int collect_module_symbol(void *data, const char *name,
				 unsigned long addr)
{
	struct module_walk *w = data;

	if (w->n < w->max)
		w->addrs[w->n++] = addr;
	return 0;
}

static void kallsyms_fast_test_modules(struct kunit *test)
{
	bool was_on = static_key_enabled(&kallsyms_fast_key);
	struct module_walk w = { .test = test, .max = 1 << 20 };
	struct chunk *c = new_chunk(test);
	unsigned int i, step;

	w.addrs = kvmalloc_array(w.max, sizeof(*w.addrs), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, w.addrs);
	module_kallsyms_on_each_symbol(NULL, collect_module_symbol, &w);
	/*
	 * Not kunit_skip(): a case skipped at boot stays skipped when the
	 * suite is run again through debugfs, after modules are loaded. With
	 * no module the case checks nothing, and its counts say so.
	 */
	if (!w.n)
		kunit_info(test, "no module loaded: run again after loading one\n");
	step = max(w.n / MODULE_SAMPLE, 1U);
	for (i = 0; i < w.n; i += step) {
		add_symbol(test, c, w.addrs[i]);
		cond_resched();
	}
	kvfree(w.addrs);
	finish(test, c, "module symbols", was_on);
	KUNIT_EXPECT_GE(test, c->checked, 2UL * (w.n / step));
	if (w.n)
		KUNIT_EXPECT_GT(test, c->module_checked, 0UL);
}

/*
 * Name -> address: kallsyms_lookup_name() (core, then modules) and
 * module_kallsyms_lookup_name() on a name, on "module:name", and on the
 * name with a byte appended (mostly absent), stock against fast, NAME_CHUNK
 * names per flip of the switch.
 */
#define NAME_CHUNK 32

struct name_answer {
	unsigned long lookup;		/* kallsyms_lookup_name(name) */
	unsigned long module;		/* module_kallsyms_lookup_name(name) */
	unsigned long qualified;	/* ... ("module:name"), modules only */
	unsigned long absent;		/* kallsyms_lookup_name(name ".") */
};

struct name_chunk {
	struct kunit *test;
	char name[NAME_CHUNK][KSYM_NAME_LEN];
	char qualified[NAME_CHUNK][MODULE_NAME_LEN + KSYM_NAME_LEN];
	char modname[NAME_CHUNK][MODULE_NAME_LEN];	/* "": a core name */
	char absent[NAME_CHUNK][KSYM_NAME_LEN + 1];
	/* Whether the module side of this name is compared too. */
	bool module_side[NAME_CHUNK];
	struct name_answer stock[NAME_CHUNK];
	unsigned int n;
	unsigned long checked;
	unsigned long module_checked;
	unsigned long indexed;
	/* Names of a module, and how many its name index answered. */
	unsigned long module_named;
	unsigned long module_indexed;
	unsigned long mismatches;
};

static void name_answer(struct name_chunk *c, unsigned int i,
			struct name_answer *a)
{
	a->lookup = kallsyms_lookup_name(c->name[i]);
	if (!c->module_side[i]) {
		a->module = 0;
		a->qualified = 0;
		a->absent = 0;
		return;
	}
	a->module = module_kallsyms_lookup_name(c->name[i]);
	a->qualified = c->qualified[i][0] ?
		module_kallsyms_lookup_name(c->qualified[i]) : 0;
	a->absent = kallsyms_lookup_name(c->absent[i]);
}

static void check_names(struct name_chunk *c)
{
	unsigned int i;

	static_branch_disable(&kallsyms_fast_key);
	for (i = 0; i < c->n; i++)
		name_answer(c, i, &c->stock[i]);
	static_branch_enable(&kallsyms_fast_key);
	for (i = 0; i < c->n; i++) {
		struct name_answer f, *s = &c->stock[i];
		unsigned long addr;

		name_answer(c, i, &f);
		c->checked++;
		c->module_checked += c->module_side[i];
		/* Not a test of stock against stock: the indexes answered. */
		if (kallsyms_fast_lookup_name(c->name[i], &addr) >= 0)
			c->indexed++;
		if (c->modname[i][0]) {
			c->module_named++;
			c->module_indexed +=
				kallsyms_fast_module_name_answers(c->modname[i],
								  c->name[i]) == 1;
		}
		if (!memcmp(s, &f, sizeof(f)))
			continue;
		if (c->mismatches++ < 10)
			KUNIT_FAIL(c->test,
				   "\"%s\": stock %#lx %#lx %#lx %#lx, fast %#lx %#lx %#lx %#lx",
				   c->name[i], s->lookup, s->module, s->qualified,
				   s->absent, f.lookup, f.module, f.qualified,
				   f.absent);
	}
	c->n = 0;
}

static void add_name(struct name_chunk *c, const char *name,
		     const char *modname, bool module_side)
{
	unsigned int i = c->n++;

	c->module_side[i] = module_side;
	strscpy(c->name[i], name, KSYM_NAME_LEN);
	c->qualified[i][0] = '\0';
	c->modname[i][0] = '\0';
	if (modname) {
		snprintf(c->qualified[i], sizeof(c->qualified[i]), "%s:%s",
			 modname, name);
		strscpy(c->modname[i], modname, MODULE_NAME_LEN);
	}
	snprintf(c->absent[i], sizeof(c->absent[i]), "%s.", name);
	if (c->n == NAME_CHUNK)
		check_names(c);
}

static struct name_chunk *new_name_chunk(struct kunit *test)
{
	struct name_chunk *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, c);
	c->test = test;
	return c;
}

static void finish_names(struct name_chunk *c, bool was_on, const char *what)
{
	check_names(c);
	if (!was_on)
		static_branch_disable(&kallsyms_fast_key);
	kunit_info(c->test, "%s: %lu names (%lu answered by the name index, %lu with the module side, %lu of %lu module names by a module name index), %lu mismatches\n",
		   what, c->checked, c->indexed, c->module_checked,
		   c->module_indexed, c->module_named, c->mismatches);
	KUNIT_EXPECT_EQ(c->test, c->mismatches, 0);
	KUNIT_EXPECT_EQ(c->test, c->indexed, c->checked);
	KUNIT_EXPECT_EQ(c->test, c->module_indexed, c->module_named);
}

static int count_module_name(void *data, const char *name, unsigned long addr)
{
	(*(unsigned long *)data)++;
	return 0;
}

/* Core names: every one, and the module side of every step-th. */
struct core_names {
	struct name_chunk *c;
	unsigned long seen, step;
};

static int add_core_name(void *data, const char *name, unsigned long addr)
{
	struct core_names *w = data;

	add_name(w->c, name, NULL, w->seen++ % w->step == 0);
	return 0;
}

/*
 * The module side of a core name (module_kallsyms_lookup_name() of it, and
 * kallsyms_lookup_name() of the absent variant, which goes on to the
 * modules) scans every module symbol on the stock path: with the
 * 60,000-symbol test module loaded, two such scans for each of ~44,000
 * core names take minutes under emulation. The core side is compared for
 * every name; the module side for every name when no module is loaded
 * (the run at boot) and for names evenly spread, about MODULE_SAMPLE
 * module symbols' worth, when modules are.
 */
static void kallsyms_fast_test_core_names(struct kunit *test)
{
	bool was_on = static_key_enabled(&kallsyms_fast_key);
	struct core_names w = { .c = new_name_chunk(test) };
	unsigned long module_syms = 0;

	module_kallsyms_on_each_symbol(NULL, count_module_name, &module_syms);
	w.step = max(module_syms / MODULE_SAMPLE, 1UL);
	/* Every core name, duplicates included, in address order. */
	kallsyms_on_each_symbol(add_core_name, &w);
	finish_names(w.c, was_on, "core names");
	KUNIT_EXPECT_EQ(test, w.c->checked, (unsigned long)kallsyms_num_syms);
	KUNIT_EXPECT_EQ(test, w.c->module_checked,
			DIV_ROUND_UP((unsigned long)kallsyms_num_syms, w.step));
}

struct module_name {
	char name[KSYM_NAME_LEN];
	char modname[MODULE_NAME_LEN];
};

struct module_names {
	struct module_name *names;
	unsigned int n, max;
	unsigned long seen, step;
};

/* Under module_mutex: copy the sampled names, check them later. */
static int collect_module_name(void *data, const char *name,
			       unsigned long addr)
{
	struct module_names *w = data;
	struct module *mod;

	if (w->seen++ % w->step || w->n >= w->max)
		return 0;
	strscpy(w->names[w->n].name, name, KSYM_NAME_LEN);
	preempt_disable();
	mod = __module_address(addr);
	strscpy(w->names[w->n].modname, mod ? mod->name : "",
		MODULE_NAME_LEN);
	preempt_enable();
	w->n++;
	return 0;
}

static void kallsyms_fast_test_module_names(struct kunit *test)
{
	bool was_on = static_key_enabled(&kallsyms_fast_key);
	struct name_chunk *c = new_name_chunk(test);
	struct module_names w = { .max = MODULE_SAMPLE };
	unsigned long total = 0;
	unsigned int i;

	module_kallsyms_on_each_symbol(NULL, count_module_name, &total);
	if (!total) {
		kunit_info(test, "no module loaded: run again after loading one\n");
		return;
	}
	w.step = max(total / MODULE_SAMPLE, 1UL);
	w.names = kvcalloc(w.max, sizeof(*w.names), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, w.names);
	module_kallsyms_on_each_symbol(NULL, collect_module_name, &w);
	for (i = 0; i < w.n; i++) {
		add_name(c, w.names[i].name,
			 w.names[i].modname[0] ? w.names[i].modname : NULL,
			 true);
		cond_resched();
	}
	kvfree(w.names);
	finish_names(c, was_on, "module names");
	KUNIT_EXPECT_EQ(test, c->checked, (unsigned long)w.n);
	KUNIT_EXPECT_GT(test, c->module_named, 0UL);
}

struct memo_waiter {
	struct completion first;
	struct completion second;
	int stage;
};

/*
 * Where the memo test's kthread sleeps: wchan is the return address in
 * each (wait_for_completion() is a scheduler function). The store after
 * the wait keeps the call from becoming a tail call.
 */
static noinline void kallsyms_fast_memo_first(struct memo_waiter *w)
{
	wait_for_completion(&w->first);
	WRITE_ONCE(w->stage, 1);
}

static noinline void kallsyms_fast_memo_second(struct memo_waiter *w)
{
	wait_for_completion(&w->second);
	WRITE_ONCE(w->stage, 2);
}

static int memo_thread(void *data)
{
	struct memo_waiter *w = data;

	kallsyms_fast_memo_first(w);
	kallsyms_fast_memo_second(w);
	while (!kthread_should_stop())
		schedule_timeout_interruptible(HZ);
	return 0;
}

/* Waits (up to 10 s) until @t sleeps uninterruptibly and is off its CPU. */
static bool wait_blocked(struct task_struct *t)
{
	int i;

	for (i = 0; i < 5000; i++) {
		if (wait_task_inactive(t, TASK_UNINTERRUPTIBLE))
			return true;
		usleep_range(1000, 2000);
	}
	return false;
}

/* A task's context switch count, as the memo records it (less one). */
static unsigned long switches(struct task_struct *t)
{
	return READ_ONCE(t->nvcsw) + READ_ONCE(t->nivcsw);
}

static void expect_wchan(struct kunit *test, struct task_struct *t,
			 const char *want)
{
	char name[KSYM_NAME_LEN];
	unsigned long stock, memo, again;

	static_branch_disable(&kallsyms_fast_key);
	stock = get_wchan(t);
	static_branch_enable(&kallsyms_fast_key);
	memo = get_wchan(t);
	KUNIT_EXPECT_EQ(test, READ_ONCE(t->wchan_memo_switches),
			1 + switches(t));
	again = get_wchan(t);
	KUNIT_EXPECT_EQ(test, memo, stock);
	KUNIT_EXPECT_EQ(test, again, stock);
	/*
	 * UML's __get_wchan() takes the first text address above a
	 * scheduler frame found by scanning the stack, stale words included:
	 * there the name need not be the waiting function's.
	 */
	if (IS_ENABLED(CONFIG_UML))
		return;
	KUNIT_ASSERT_EQ(test, lookup_symbol_name(again, name), 0);
	KUNIT_EXPECT_STREQ(test, name, want);
}

static void kallsyms_fast_test_wchan_memo(struct kunit *test)
{
	bool was_on = static_key_enabled(&kallsyms_fast_key);
	struct memo_waiter *w = kunit_kzalloc(test, sizeof(*w), GFP_KERNEL);
	struct task_struct *t;
	unsigned long first;

	KUNIT_ASSERT_NOT_NULL(test, w);
	init_completion(&w->first);
	init_completion(&w->second);
	t = kthread_run(memo_thread, w, "kfast_memo");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	get_task_struct(t);

	KUNIT_EXPECT_TRUE(test, wait_blocked(t));
	expect_wchan(test, t, "kallsyms_fast_memo_first");
	first = READ_ONCE(t->wchan_memo_switches);
	complete(&w->first);
	/* It ran: the memo of its first wait must not answer. */
	KUNIT_EXPECT_TRUE(test, wait_blocked(t));
	KUNIT_EXPECT_EQ(test, READ_ONCE(w->stage), 1);
	expect_wchan(test, t, "kallsyms_fast_memo_second");
	KUNIT_EXPECT_GT(test, READ_ONCE(t->wchan_memo_switches), first);

	complete(&w->second);
	kthread_stop(t);
	put_task_struct(t);
	if (!was_on)
		static_branch_disable(&kallsyms_fast_key);
}

struct memo_probe {
	struct task_struct *task;
	unsigned long switches;
	unsigned long stock;
	unsigned long first;
	unsigned long again;
};

/*
 * Every task: the stock answer with the switch off, the memo's twice (found,
 * then remembered) with it on, then the stock answer and the switch count
 * again with it off. A task with the same nonzero stock answer and the same
 * count at both ends stayed in one sleep throughout (waking it makes the
 * stock answer 0 until it switches out, which bumps the count), so the memo
 * must have given that answer both times. Any other task woke during the
 * reads and is only counted.
 */
static void kallsyms_fast_test_wchan_memo_all(struct kunit *test)
{
	bool was_on = static_key_enabled(&kallsyms_fast_key);
	unsigned int i, n = 0, max = 2 * nr_threads + 64;
	unsigned long compared = 0, ran = 0;
	struct task_struct *g, *t;
	struct memo_probe *p;

	p = kvcalloc(max, sizeof(*p), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, p);
	rcu_read_lock();
	for_each_process_thread(g, t) {
		if (n == max)
			break;
		get_task_struct(t);
		p[n++].task = t;
	}
	rcu_read_unlock();

	static_branch_disable(&kallsyms_fast_key);
	for (i = 0; i < n; i++) {
		p[i].switches = switches(p[i].task);
		p[i].stock = get_wchan(p[i].task);
	}
	static_branch_enable(&kallsyms_fast_key);
	for (i = 0; i < n; i++) {
		p[i].first = get_wchan(p[i].task);
		p[i].again = get_wchan(p[i].task);
	}
	static_branch_disable(&kallsyms_fast_key);
	for (i = 0; i < n; i++) {
		unsigned long stock = get_wchan(p[i].task);

		if (!stock || stock != p[i].stock ||
		    switches(p[i].task) != p[i].switches) {
			ran++;
		} else {
			compared++;
			KUNIT_EXPECT_EQ(test, p[i].first, stock);
			KUNIT_EXPECT_EQ(test, p[i].again, stock);
		}
		put_task_struct(p[i].task);
	}
	kvfree(p);
	if (was_on)
		static_branch_enable(&kallsyms_fast_key);
	kunit_info(test, "wchan memo: %lu tasks compared, %lu ran or had none\n",
		   compared, ran);
	KUNIT_EXPECT_GT(test, compared, 0UL);
}

static struct kunit_case kallsyms_fast_test_cases[] = {
	KUNIT_CASE_SLOW(kallsyms_fast_test_core),
	KUNIT_CASE_SLOW(kallsyms_fast_test_modules),
	KUNIT_CASE_SLOW(kallsyms_fast_test_core_names),
	KUNIT_CASE_SLOW(kallsyms_fast_test_module_names),
	KUNIT_CASE(kallsyms_fast_test_wchan_memo),
	KUNIT_CASE(kallsyms_fast_test_wchan_memo_all),
	{}
};

/* The indexes are built in a kthread at boot: compare once they are. */
static int kallsyms_fast_test_suite_init(struct kunit_suite *suite)
{
	kallsyms_fast_wait_built();
	return 0;
}

static struct kunit_suite kallsyms_fast_test_suite = {
	.name = "kallsyms_fast",
	.suite_init = kallsyms_fast_test_suite_init,
	.test_cases = kallsyms_fast_test_cases,
};

kunit_test_suite(kallsyms_fast_test_suite);

MODULE_DESCRIPTION("KUnit tests for CONFIG_KALLSYMS_FAST");
MODULE_LICENSE("GPL");
