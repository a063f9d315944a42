// SPDX-License-Identifier: GPL-2.0
/*
 * A benchmark of CONFIG_KALLSYMS_FAST against the stock lookups, in one
 * boot: each case runs the same calls on the same addresses with the
 * switch off (stock), then on (fast), and for the wchan lookup once more
 * with the wchan cache warm. Times come from ktime_get_ns(); nothing here
 * asserts a time. Ratios are printed as integers in hundredths.
 *
 *	echo 100 > /sys/kernel/debug/kallsyms_fast/bench	# rounds
 *	cat /sys/kernel/debug/kallsyms_fast/bench
 *	echo "2000 core-zipf" > /sys/kernel/debug/kallsyms_fast/bench
 *
 * A case name after the rounds runs that case alone, so that a profiler
 * attached to the kernel (perf on the UML process) sees one path only.
 *
 * The cases:
 *  core-uniform  kallsyms_lookup(), 4096 addresses spread over core text
 *  core-zipf     lookup_symbol_name() (the wchan lookup), a wchan-like mix:
 *                4096 draws over 64 core text functions (a wchan is
 *                always a text address), Zipf-distributed; "hit%" is the
 *                share of those draws the warm wchan cache answers
 *  module        kallsyms_lookup(), up to 4096 addresses spread over the
 *                symbols of all loaded modules
 *  module-sorted (printed after the other cases) the module addresses
 *                against the sorted-symtab baseline (a linux-modules patch
 *                of March 2026 sorts a module's symbols at load and
 *                binary-searches them): a copy of each module's symtab
 *                sorted at setup, looked up as kallsyms_lookup() does with
 *                find_kallsyms_symbol() replaced by the binary search
 *                (kernel/module/kallsyms.c). Its "fast" column is that
 *                sorted lookup, its "stock" the module row's (measured
 *                again when it runs alone): compare its "fast" with the
 *                module row's, the per-module index. A line after it gives
 *                the time the sorts took (the patch's cost at module load)
 *                and how many answers differ from stock (0)
 *  sprint-core   sprint_symbol() (%pS) on the core-uniform addresses
 *  sprint-module sprint_symbol() on the module addresses
 *  lookup-name   kallsyms_lookup_name() on the names of the core-uniform
 *                symbols
 */

#define pr_fmt(fmt) "kallsyms_fast: " fmt

#include <linux/debugfs.h>
#include <linux/init.h>
#include <linux/kallsyms.h>
#include <linux/kallsyms_fast.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "../kallsyms_internal.h"
#include "bench.h"

#define BENCH_ADDRS	4096
#define ZIPF_FUNCS	64
#define REPORT_SIZE	2048

enum bench_mode { STOCK, FAST, CACHED, MODES };

struct bench {
	unsigned long core[BENCH_ADDRS];
	unsigned long zipf[BENCH_ADDRS];
	unsigned long module[BENCH_ADDRS];
	unsigned int nr_module;
	/* lookup-name: the names, and pointers to them as "addresses". */
	char names[BENCH_ADDRS][KSYM_NAME_LEN];
	unsigned long name_ptrs[BENCH_ADDRS];
	char namebuf[KSYM_NAME_LEN];
	char symbuf[KSYM_SYMBOL_LEN];
	/* module-sorted: the copy for each module address, and its index. */
	struct kallsyms_fast_sorted *sorted_of[BENCH_ADDRS];
	unsigned long sorted_idx[BENCH_ADDRS];
	struct kallsyms_fast_sorted *sorted[BENCH_ADDRS];
	unsigned int nr_sorted;
	char sortbuf[KSYM_NAME_LEN];
	/* The module row's stock ps per call, for module-sorted; 0: not run. */
	u64 module_stock;
};

static DEFINE_MUTEX(bench_lock);
static char bench_report[REPORT_SIZE];
static size_t bench_report_len;

/* A small deterministic generator: the same draws every run. */
static u32 bench_rand(u32 *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 17;
	*state ^= *state << 5;
	return *state;
}

static void pick_core(struct bench *b)
{
	unsigned int i, t, ntext = 0;
	unsigned int step = max(kallsyms_num_syms / BENCH_ADDRS, 1U);
	u32 seed = 0x9e3779b9, weights[ZIPF_FUNCS], total = 0;
	unsigned long funcs[ZIPF_FUNCS];

	/* Spread over the table; 7 bytes in, so that offsets are not 0. */
	for (i = 0; i < BENCH_ADDRS; i++)
		b->core[i] = kallsyms_sym_address((i * step) %
						  kallsyms_num_syms) + 7;

	/*
	 * Zipf: function r (1-based) drawn with weight 1/r. The functions are
	 * the uniform picks that lie in core text (a wchan always does),
	 * spread evenly over them: with KALLSYMS_ALL the table ends in data
	 * symbols, and on UML it starts with __binary_start, below _stext.
	 */
	for (i = 0; i < BENCH_ADDRS; i++)
		ntext += is_kernel_text(b->core[i]);
	for (i = 0; i < ZIPF_FUNCS; i++) {
		unsigned int want = ntext ? i * ntext / ZIPF_FUNCS : 0;
		unsigned int j = 0;

		funcs[i] = b->core[i * (BENCH_ADDRS / ZIPF_FUNCS)];
		/* The want-th text pick (0-based); none: the slot's own pick. */
		for (t = 0; ntext && j < BENCH_ADDRS; j++) {
			if (!is_kernel_text(b->core[j]))
				continue;
			if (t++ == want) {
				funcs[i] = b->core[j];
				break;
			}
		}
		weights[i] = (1U << 20) / (i + 1);
		total += weights[i];
	}
	for (i = 0; i < BENCH_ADDRS; i++) {
		u32 x = bench_rand(&seed) % total, r = 0;

		while (x >= weights[r]) {
			x -= weights[r];
			r++;
		}
		b->zipf[i] = funcs[r];
	}
}

/* The names of the core-uniform symbols, for lookup-name. */
static void pick_names(struct bench *b)
{
	unsigned int i;

	for (i = 0; i < BENCH_ADDRS; i++) {
		lookup_symbol_name(b->core[i], b->names[i]);
		b->name_ptrs[i] = (unsigned long)b->names[i];
	}
}

struct module_pick {
	unsigned long *addrs;
	unsigned long seen;
};

static int pick_module_symbol(void *data, const char *name,
			      unsigned long addr)
{
	struct module_pick *p = data;

	if (p->seen < BENCH_ADDRS)
		p->addrs[p->seen] = addr + 1;
	p->seen++;
	return 0;
}

/* Every module symbol if there are fewer than BENCH_ADDRS, else a prefix. */
static void pick_modules(struct bench *b)
{
	struct module_pick p = { .addrs = b->module };

	module_kallsyms_on_each_symbol(NULL, pick_module_symbol, &p);
	b->nr_module = min_t(unsigned long, p.seen, BENCH_ADDRS);
}

/*
 * module-sorted: a sorted copy of the symtab of each module the module
 * addresses lie in. Returns 0, or the error of the first module that could
 * not be copied (free_sorted() frees what was built either way).
 */
static int pick_sorted(struct bench *b)
{
	struct kallsyms_fast_sorted *s = NULL;
	unsigned int i, j;

	for (i = 0; i < b->nr_module; i++) {
		unsigned long addr = b->module[i];

		if (s && !within_module(addr, s->mod))
			s = NULL;
		for (j = 0; !s && j < b->nr_sorted; j++)
			if (within_module(addr, b->sorted[j]->mod))
				s = b->sorted[j];
		if (!s) {
			s = kallsyms_fast_sorted_build(addr);
			if (IS_ERR(s))
				return PTR_ERR(s);
			b->sorted[b->nr_sorted++] = s;
		}
		b->sorted_of[i] = s;
		b->sorted_idx[i] = i;
	}
	return 0;
}

static void free_sorted(struct bench *b)
{
	while (b->nr_sorted)
		kallsyms_fast_sorted_free(b->sorted[--b->nr_sorted]);
}

typedef void (*bench_fn)(struct bench *b, unsigned long addr);

static void do_lookup(struct bench *b, unsigned long addr)
{
	unsigned long size, offset;
	char *modname;

	kallsyms_lookup(addr, &size, &offset, &modname, b->namebuf);
}

static void do_wchan(struct bench *b, unsigned long addr)
{
	lookup_symbol_name(addr, b->namebuf);
}

/* A wchan lookup that misses the wchan cache (the invalidation is an add). */
static void do_wchan_miss(struct bench *b, unsigned long addr)
{
	kallsyms_fast_cache_invalidate();
	lookup_symbol_name(addr, b->namebuf);
}

/*
 * idx indexes b->module; its module's sorted copy stands for the module's
 * own sorted symtab (the patch reaches it through mod->kallsyms).
 */
static void do_sorted(struct bench *b, unsigned long idx)
{
	unsigned long size, offset;
	char *modname;

	/* As kallsyms_lookup_buildid() does before module_address_lookup(). */
	b->namebuf[KSYM_NAME_LEN - 1] = 0;
	b->namebuf[0] = 0;
	kallsyms_fast_sorted_lookup(b->sorted_of[idx], b->module[idx], &size,
				    &offset, &modname, b->namebuf);
}

static void do_sprint(struct bench *b, unsigned long addr)
{
	sprint_symbol(b->symbuf, addr);
}

/* name is a pointer to one of b->names. */
static void do_lookup_name(struct bench *b, unsigned long name)
{
	kallsyms_lookup_name((const char *)name);
}

/*
 * Picoseconds per call over rounds passes of addrs: a cache hit takes a
 * few nanoseconds, and whole ones moved its ratio by up to a seventh.
 * Always inlined, and called only from time_case() and time_sorted() with
 * a constant fn, so that the timed loop calls the lookup directly: an
 * indirect call per lookup (and the wrapper's frame) would add the same
 * few nanoseconds to stock and fast and hide part of the ratio of the
 * short paths (a wchan cache hit).
 */
static __always_inline u64 time_calls(struct bench *b, bench_fn fn,
				      const unsigned long *addrs,
				      unsigned int n, unsigned int rounds)
{
	unsigned int r, i;
	u64 start, ns = 0;

	for (r = 0; r < rounds; r++) {
		start = ktime_get_ns();
		for (i = 0; i < n; i++)
			fn(b, addrs[i]);
		ns += ktime_get_ns() - start;
		cond_resched();
	}
	return div64_u64(ns * 1000, max_t(u64, (u64)n * rounds, 1));
}

enum bench_op { OP_LOOKUP, OP_WCHAN, OP_WCHAN_MISS, OP_SPRINT, OP_NAME };

static noinline u64 time_case(struct bench *b, enum bench_op op,
			      const unsigned long *addrs, unsigned int n,
			      unsigned int rounds)
{
	switch (op) {
	case OP_LOOKUP:
		return time_calls(b, do_lookup, addrs, n, rounds);
	case OP_WCHAN:
		return time_calls(b, do_wchan, addrs, n, rounds);
	case OP_WCHAN_MISS:
		return time_calls(b, do_wchan_miss, addrs, n, rounds);
	case OP_SPRINT:
		return time_calls(b, do_sprint, addrs, n, rounds);
	case OP_NAME:
		return time_calls(b, do_lookup_name, addrs, n, rounds);
	}
	return 0;
}

/* module-sorted: idx indexes b->module (see do_sorted()). */
static noinline u64 time_sorted(struct bench *b, const unsigned long *idx,
				unsigned int n, unsigned int rounds)
{
	return time_calls(b, do_sorted, idx, n, rounds);
}

static void set_mode(enum bench_mode mode)
{
	if (mode == STOCK)
		static_branch_disable(&kallsyms_fast_key);
	else
		static_branch_enable(&kallsyms_fast_key);
}

/* How many of addrs the wchan cache answers, in percent. */
static unsigned int cache_hits(struct bench *b, const unsigned long *addrs,
			       unsigned int n)
{
	unsigned int i, hits = 0;

	for (i = 0; i < n; i++)
		hits += kallsyms_fast_cache_get(addrs[i], b->namebuf);
	return n ? hits * 100 / n : 0;
}

/* stock / x in hundredths; 0 when x was not measured. */
static u64 ratio(u64 stock, u64 x)
{
	return x ? div64_u64(stock * 100, x) : 0;
}

/* Picoseconds as nanoseconds with two decimals, right-aligned in 9. */
static size_t put_ns(char *out, size_t len, u64 ps)
{
	u64 cns = div64_u64(ps + 5, 10);

	return scnprintf(out, len, " %6llu.%02llu", div64_u64(cns, 100),
			 cns - div64_u64(cns, 100) * 100);
}

static size_t report_case(char *out, size_t len, const char *name,
			  unsigned int n, const u64 *ps, unsigned int hit)
{
	u64 fast = ratio(ps[STOCK], ps[FAST]);
	u64 cached = ratio(ps[STOCK], ps[CACHED]);
	size_t done = scnprintf(out, len, "%-14s %5u", name, n);
	enum bench_mode m;

	for (m = STOCK; m < MODES; m++)
		done += put_ns(out + done, len - done, ps[m]);
	return done + scnprintf(out + done, len - done,
				" %7llu.%02llu %7llu.%02llu %4u\n",
				fast / 100, fast % 100, cached / 100,
				cached % 100, hit);
}

/* How many module addresses the sorted copies answer unlike stock. */
static unsigned int sorted_mismatches(struct bench *b)
{
	unsigned long size = 0, offset = 0, ssize = 0, soffset = 0;
	char *modname, *smodname;
	unsigned int i, bad = 0;
	const char *name;
	int len;

	set_mode(STOCK);
	for (i = 0; i < b->nr_module; i++) {
		name = kallsyms_lookup(b->module[i], &size, &offset, &modname,
				       b->namebuf);
		/* Like module_address_lookup(): non-zero when a name was found. */
		len = kallsyms_fast_sorted_lookup(b->sorted_of[i], b->module[i],
						  &ssize, &soffset, &smodname,
						  b->sortbuf);
		if (!name != !len ||
		    (name && (strcmp(name, b->sortbuf) || size != ssize ||
			      offset != soffset)))
			bad++;
	}
	return bad;
}

/*
 * The module-sorted row: the sorted lookup in the "fast" column, stock
 * from the module row when it ran (the same addresses), then the setup
 * line. Returns the length written.
 */
static size_t run_sorted(struct bench *b, unsigned int rounds, char *out,
			 size_t size)
{
	u64 ps[MODES] = { 0 }, sort_ns = 0, big_ns = 0;
	unsigned int i, nsyms = 0, big = 0, bad;
	const char *big_name = "";
	size_t len;
	int err;

	if (!b->nr_module)
		return scnprintf(out, size, "%-14s     0 (no module loaded)\n",
				 "module-sorted");
	err = pick_sorted(b);
	if (err) {
		free_sorted(b);
		return scnprintf(out, size,
				 "%-14s     0 (a module's symtab not copied: %d)\n",
				 "module-sorted", err);
	}
	for (i = 0; i < b->nr_sorted; i++) {
		sort_ns += b->sorted[i]->sort_ns;
		nsyms += b->sorted[i]->nr;
		if (b->sorted[i]->nr >= big) {
			big = b->sorted[i]->nr;
			big_ns = b->sorted[i]->sort_ns;
			big_name = b->sorted[i]->name;
		}
	}
	/* Every answer of the copies is compared with stock's first. */
	bad = sorted_mismatches(b);
	ps[STOCK] = b->module_stock;
	if (!ps[STOCK]) {
		set_mode(STOCK);
		time_case(b, OP_LOOKUP, b->module, b->nr_module, 1);
		ps[STOCK] = time_case(b, OP_LOOKUP, b->module, b->nr_module,
				      rounds);
	}
	time_sorted(b, b->sorted_idx, b->nr_module, 1);
	ps[FAST] = time_sorted(b, b->sorted_idx, b->nr_module, rounds);
	len = report_case(out, size, "module-sorted", b->nr_module, ps, 0);
	len += scnprintf(out + len, size - len,
			 "# module-sorted: %u symbols of %u module(s) sorted in %llu ns",
			 nsyms, b->nr_sorted, sort_ns);
	len += scnprintf(out + len, size - len,
			 " (largest %s: %u in %llu ns); %u answer(s) differ from stock\n",
			 big_name, big, big_ns, bad);
	free_sorted(b);
	return len;
}

/* Runs every case, or only the one named only; returns how many ran. */
static unsigned int run_bench(struct bench *b, unsigned int rounds,
			      const char *only)
{
	static const struct {
		const char *name;
		enum bench_op op;
		bool module;
		bool zipf;
		bool cached;
		bool names;
	} cases[] = {
		{ "core-uniform", OP_LOOKUP, false, false, false, false },
		{ "core-zipf", OP_WCHAN, false, true, true, false },
		{ "module", OP_LOOKUP, true, false, false, false },
		{ "sprint-core", OP_SPRINT, false, false, false, false },
		{ "sprint-module", OP_SPRINT, true, false, false, false },
		{ "lookup-name", OP_NAME, false, false, false, true },
	};
	bool was_on = static_key_enabled(&kallsyms_fast_key);
	unsigned int c, ran = 0;
	size_t len;

	pick_core(b);
	pick_names(b);
	pick_modules(b);
	len = scnprintf(bench_report, REPORT_SIZE,
			"# %u rounds; ns per call (hundredths); ratio = stock / fast (hundredths)\n"
			"%-14s %5s %9s %9s %9s %10s %10s %4s\n", rounds, "case",
			"addrs", "stock", "fast", "cached", "fast-x", "cached-x",
			"hit%");
	for (c = 0; c < ARRAY_SIZE(cases); c++) {
		const unsigned long *addrs = b->core;
		unsigned int n = BENCH_ADDRS;
		u64 ps[MODES] = { 0 };
		unsigned int hit = 0;
		enum bench_mode m;

		if (*only && strcmp(only, cases[c].name))
			continue;
		ran++;
		if (cases[c].module) {
			addrs = b->module;
			n = b->nr_module;
		} else if (cases[c].zipf) {
			addrs = b->zipf;
		} else if (cases[c].names) {
			addrs = b->name_ptrs;
		}

		if (!n) {
			len += scnprintf(bench_report + len, REPORT_SIZE - len,
					 "%-14s     0 (no module loaded)\n",
					 cases[c].name);
			continue;
		}
		for (m = STOCK; m < MODES; m++) {
			if (m == CACHED && !cases[c].cached)
				break;
			enum bench_op op = cases[c].op;

			set_mode(m);
			/* FAST: every wchan lookup misses the wchan cache. */
			if (m == FAST && cases[c].cached)
				op = OP_WCHAN_MISS;
			/* One untimed pass warms the caches and the wchan cache. */
			time_case(b, op, addrs, n, 1);
			ps[m] = time_case(b, op, addrs, n, rounds);
			if (m == CACHED)
				hit = cache_hits(b, addrs, n);
		}
		len += report_case(bench_report + len, REPORT_SIZE - len,
				   cases[c].name, n, ps, hit);
		/* module-sorted compares with these, on the same addresses. */
		if (cases[c].module && cases[c].op == OP_LOOKUP)
			b->module_stock = ps[STOCK];
	}
	if (!*only || !strcmp(only, "module-sorted")) {
		ran++;
		len += run_sorted(b, rounds, bench_report + len,
				  REPORT_SIZE - len);
	}
	if (was_on)
		static_branch_enable(&kallsyms_fast_key);
	else
		static_branch_disable(&kallsyms_fast_key);
	bench_report_len = len;
	return ran;
}

static ssize_t bench_write(struct file *file, const char __user *ubuf,
			   size_t count, loff_t *ppos)
{
	char cmd[48], only[16] = "";
	unsigned int rounds;
	struct bench *b;
	ssize_t ret;

	/* "<rounds>" or "<rounds> <case>"; an unknown case is -EINVAL. */
	if (count >= sizeof(cmd))
		return -EINVAL;
	if (copy_from_user(cmd, ubuf, count))
		return -EFAULT;
	cmd[count] = '\0';
	if (sscanf(cmd, "%u %15s", &rounds, only) < 1)
		return -EINVAL;
	/* Stock against fast needs the boot-time build finished. */
	kallsyms_fast_wait_built();
	if (!rounds || rounds > 100000)
		return -EINVAL;
	b = kvzalloc(sizeof(*b), GFP_KERNEL);
	if (!b)
		return -ENOMEM;
	mutex_lock(&bench_lock);
	ret = run_bench(b, rounds, only) ? count : -EINVAL;
	mutex_unlock(&bench_lock);
	kvfree(b);
	return ret;
}

static ssize_t bench_read(struct file *file, char __user *ubuf, size_t count,
			  loff_t *ppos)
{
	ssize_t ret;

	mutex_lock(&bench_lock);
	ret = simple_read_from_buffer(ubuf, count, ppos, bench_report,
				      bench_report_len);
	mutex_unlock(&bench_lock);
	return ret;
}

static const struct file_operations bench_fops = {
	.owner = THIS_MODULE,
	.read = bench_read,
	.write = bench_write,
	.llseek = default_llseek,
};

void kallsyms_fast_bench_debugfs(struct dentry *dir)
{
	debugfs_create_file("bench", 0600, dir, NULL, &bench_fops);
}
