#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# /init of the kmod-shim test guest (packed by `cargo xtask shim-test`);
# the console and result channel are guest/lib.sh's.
TAG=kfs-shim
. /bin/kfast-lib.sh
shim_guest_setup

KO=/lib/modules/kallsyms_fast_shim.ko
CYCLES=$(cmdline_num cycles 20)
SCALE=$(cmdline_num scale 2500)
# `shim check` and `shim truth` on every Nth address (1: around every symbol).
EVERY=$(cmdline_num every 1)

# Every thread's wchan as uid 1000, which also owns a sleeping child, to $1.
unpriv() {
	kfast-shim-guest wchan-unpriv --uid 1000 > "$O/$1" ||
		fail "wchan-unpriv ($1)"
}

# "<count> <wchan>" for the wchans of more than 100 threads.
histogram() {
	kallsyms-bench shim wchan |
		awk '{ c[$2]++ } END { for (w in c) if (c[w] > 100) printf "%d %s, ", c[w], w }'
}

# Disable the patch, wait until it is gone, unload the module.
unload() {
	if [ -d $LP ]; then
		echo 0 > $LP/enabled
		wait_for "[ ! -d $LP ]" 600 || { fail "patch not freed"; return 1; }
	fi
	wait_for "rmmod kallsyms_fast_shim 2>/dev/null" 100 ||
		{ fail "rmmod failed"; return 1; }
}

# Expect a write of file $1 to $D/load to be refused, with nothing changed.
refused() {
	if cat "$1" > $D/load 2>/dev/null; then
		fail "$2 accepted"
	elif ! grep -q "state: no tables" $D/status; then
		fail "$2 refused but state changed"
	elif [ -d $LP ]; then
		fail "$2 refused but a patch exists"
	else
		log "refused as expected: $2: $(grep 'last refusal' $D/status)"
	fi
}

log "$(uname -r) up, $CYCLES load/unload cycles"
# Modules loaded before anything else, one name a line, dependencies
# first: debian-shim-test's (Debian's own, with big symbol tables), whose
# tasks and addresses every comparison below then covers.
if [ -e /lib/modules/preload ]; then
	for m in $(cat /lib/modules/preload); do
		insmod /lib/modules/$m.ko || fail "insmod $m"
	done
	log "preloaded $(wc -l < /lib/modules/preload) modules: $(tr '\n' ' ' < /lib/modules/preload)"
fi
mkdir -p $O /tmp/fifo
# The mirror's capture (debian-shim-test's kfs.mirror=1), before the shim
# ever loads: kfast-guest copies /proc/kallsyms, /proc/modules and the
# modules' sysfs sections with the preloaded modules live, and asks
# ksym_truth what sprint_symbol() and %ps print for addresses around
# every symbol; the host resolves the same addresses with the mirror.
if [ "$(cmdline_num mirror 0)" = 1 ]; then
	if insmod /lib/modules/ksym_truth.ko; then
		kfast-guest $O/mirror || fail "kfast-guest (the mirror's capture)"
		rmmod ksym_truth || fail "rmmod ksym_truth (the mirror's capture)"
	else
		fail "insmod ksym_truth (the mirror's capture)"
	fi
	log "mirror capture: $(tr '\n' ' ' < $O/mirror/kallsyms-fast/guest-summary.txt)"
fi
# A few user tasks with distinct wait channels.
sleep 100000 &
mkfifo /tmp/fifo/p
cat /tmp/fifo/p > /dev/null &
sh -c 'while :; do sleep 1; done' &
sleep 1

kallsyms-bench shim wchan > $O/stock1
kallsyms-bench shim wchan > $O/stock2
log "stock: $(wc -l < $O/stock1) threads"

# 1. Bad input is refused, nothing changes.
insmod $KO || fail "insmod"
echo enable > $D/ctl 2>/dev/null && fail "enable without tables accepted"
kallsyms-bench shim load --print > /tmp/good || fail "loader --print"
head -c 300 /tmp/good > /tmp/trunc
refused /tmp/trunc "truncated input"
sed '/^kallsyms_names /{s/0$/8/;t;s/.$/0/}' /tmp/good > /tmp/forged
refused /tmp/forged "kallsyms_names address moved"
awk 'NR == FNR { a[$1] = $2; next }
	$1 == "kallsyms_names" { $2 = a["kallsyms_markers"] } { print }' \
	/tmp/good /tmp/good > /tmp/swapped
refused /tmp/swapped "kallsyms_names given kallsyms_markers' address"
sed '/^_end /{s/0$/8/;t;s/.$/0/}' /tmp/good > /tmp/badend
refused /tmp/badend "_end moved"
sed '/^lookup_module_symbol_name /{s/1$/5/;t;s/.$/1/}' /tmp/good > /tmp/badfn
refused /tmp/badfn "lookup_module_symbol_name moved"
sed '/^__module_address /{s/1$/5/;t;s/.$/1/}' /tmp/good > /tmp/badfn2
refused /tmp/badfn2 "__module_address moved"
sed '/^kallsyms_lookup /{s/1$/5/;t;s/.$/1/}' /tmp/good > /tmp/badfn3
refused /tmp/badfn3 "kallsyms_lookup moved"
printf 'kallsyms_num_syms zz\n' > /tmp/garbage
refused /tmp/garbage "garbage"
kallsyms-bench shim wchan > $O/stock3

# 2. Verified load, stock bench, enable, shim bench, compare.
if kallsyms-bench shim load --no-enable; then
	log "$(grep verified: $D/status)"
	echo "bench 1000" > $D/ctl || fail "bench (stock)"
	log "before enable: $(grep bench: $D/status)"
	log "stock $(kallsyms-bench shim wchan-bench --seconds 8)"
	kallsyms-bench shim wchan > $O/stock4
	unpriv unpriv-stock1
	echo enable > $D/ctl || fail "enable"
	wait_for enabled 600 || fail "transition did not finish"
	log "enabled: $(cat /sys/kernel/livepatch/kallsyms_fast_shim/enabled)"
	kallsyms-bench shim wchan > $O/shim1
	kallsyms-bench shim wchan > $O/shim2
	kallsyms-bench shim wchan > $O/shim3
	unpriv unpriv-shim1
	unpriv unpriv-shim2
	log "shim $(kallsyms-bench shim wchan-bench --seconds 8)"
	log "$(grep generation $D/status)"
	unload
	log "stock again $(kallsyms-bench shim wchan-bench --seconds 8)"
	kallsyms-bench shim wchan > $O/stock5
	unpriv unpriv-stock2
else
	fail "valid load refused: $(grep 'last refusal' $D/status)"
	unload
fi

# 3. %pS of module addresses from contexts where the lookup must not lock,
# allocate or queue work (lockdep is on): under the current task's
# pi_lock with irqs off, in a hard-irq hrtimer callback, inside a work item
# and in an NMI handler (ksym_ctx's "run"). First stock, then under the
# shim, whose first lookups of ksym_ctx happen in those contexts; ksym_ctx
# was live before the load, so the loader indexed it.
CTX=/sys/module/ksym_ctx/parameters
# The four "ksym_ctx: <context>: <text>" lines of one run, to $O/ctx-$1.
ctx_run() {
	echo 1 > $CTX/run || fail "ksym_ctx run ($1)"
	dmesg | sed -n -E 's/.*ksym_ctx: (pi_lock|hrtimer|work|nmi): /\1 /p' |
		tail -4 > "$O/ctx-$1"
	[ "$(grep -c '\[ksym_ctx\]' "$O/ctx-$1")" -eq 4 ] ||
		fail "ksym_ctx ($1): not every context printed module symbols: $(tr '\n' ' ' < "$O/ctx-$1")"
	grep -q "^nmi (not in_nmi())" "$O/ctx-$1" && fail "ksym_ctx ($1): handler not in NMI"
}
# x86 reports an NMI handler slower than nmi_longest_ns (1 ms) with an
# "INFO:" line, which the console check fails on. Under QEMU TCG the stock
# %pS of a module address (a symtab scan) in the handler takes ~2 ms: a
# speed note about emulation, not a fault. Allow 100 ms for this test.
echo 100000000 > /sys/kernel/debug/x86/nmi_longest_ns ||
	fail "cannot raise x86/nmi_longest_ns"
if insmod /lib/modules/ksym_ctx.ko; then
	ctx_run stock
	insmod $KO || fail "contexts: insmod"
	kallsyms-bench shim load || fail "contexts: load"
	wait_for enabled 600 || fail "contexts: transition"
	idx=$(grep 'module indexes' $D/status)
	log "contexts: $idx"
	case "$idx" in *" 0 modules"*) fail "contexts: ksym_ctx not indexed" ;; esac
	ctx_run shim
	unload
	rmmod ksym_ctx || fail "rmmod ksym_ctx"
	if cmp -s $O/ctx-stock $O/ctx-shim; then
		log "contexts: pi_lock, hrtimer, work, nmi: %pS identical to stock: $(tr '\n' ' ' < $O/ctx-shim)"
	else
		fail "contexts: %pS differs: stock $(tr '\n' ' ' < $O/ctx-stock), shim $(tr '\n' ' ' < $O/ctx-shim)"
	fi
else
	fail "insmod ksym_ctx"
fi

# 4. Load/unload cycles while every wchan is read in a loop. In each, the
# 60k-symbol ksym_many (4 kthreads sleeping in it) is loaded and unloaded
# under the shim: its wchans must be stock's (module index built, used,
# dropped on unload), and ksym_truth comes and goes too.
MANY=/lib/modules/ksym_many.ko
# One process reads them all: a `cat` per process costs seconds a pass
# under emulation, and each cycle makes a dozen passes.
many_wchans() { kfast-shim-guest comm-files ksym_many/ wchan; }
# /proc/PID/stack (%pB: sprint_backtrace()) of the ksym_many threads.
many_stacks() { kfast-shim-guest comm-files ksym_many/ stack; }
# Whether the ksym_many threads' wchans and stacks are the stock ones.
many_same() {
	many_wchans > /tmp/many-shim
	many_stacks > /tmp/stacks-shim
	cmp -s /tmp/many-stock /tmp/many-shim && cmp -s /tmp/stacks-stock /tmp/stacks-shim
}
many_asleep() { many_wchans | awk '$2 != "" && $2 != "0"' | wc -l; }
many_up() {
	insmod $MANY nr_threads=4 || return 1
	wait_for '[ $(many_asleep) -eq 4 ]' 100 && return 0
	rmmod ksym_many
	return 1
}
if many_up; then
	# The reference: two stock captures that agree (not one caught while
	# a thread was waking up).
	n=0
	while [ $n -lt 10 ]; do
		n=$((n + 1))
		many_wchans > /tmp/many-stock
		many_stacks > /tmp/stacks-stock
		sleep 0.3
		many_same && break
	done
	log "ksym_many stock wchans: $(tr '\n' ' ' < /tmp/many-stock)"
	log "ksym_many stock stacks: $(head -1 /tmp/stacks-stock)"
	rmmod ksym_many || fail "rmmod ksym_many (stock)"
else
	fail "ksym_many threads did not start"
fi
sh -c 'while :; do cat /proc/*/task/*/wchan /proc/*/task/*/stack > /dev/null 2>&1; done' &
reader=$!
ok=0
c=0
while [ $c -lt "$CYCLES" ]; do
	c=$((c + 1))
	insmod $KO || { fail "cycle $c: insmod"; break; }
	kallsyms-bench shim load 2>/dev/null || { fail "cycle $c: load"; break; }
	wait_for enabled 600 || { fail "cycle $c: transition"; break; }
	if many_up; then
		# The index was built when ksym_many went live and serves once
		# its symtab switched to core_kallsyms; a read before that is
		# stock's.
		for i in 1 2 3; do
			# A thread caught waking up (every 10 s) shows something
			# else for a moment: look again before calling it wrong.
			many_same || { sleep 0.5; many_same; } ||
				fail "cycle $c: ksym_many wchans/stacks: $(tr '\n' ' ' < /tmp/many-shim) $(head -1 /tmp/stacks-shim)"
			sleep 0.2
		done
		rmmod ksym_many || fail "cycle $c: rmmod ksym_many"
	else
		fail "cycle $c: ksym_many did not come up"
	fi
	insmod /lib/modules/ksym_truth.ko && rmmod ksym_truth
	[ $c -eq 1 ] && log "cycle 1: $(grep 'module indexes' $D/status)"
	unload || break
	ok=$c
done
kill $reader
log "cycles: $ok of $CYCLES completed"

# 5. Scale: $SCALE user threads sleeping in core code, $SCALE ksym_many
# kthreads sleeping in the module; passes over all of them, stock and shim.
if [ "$SCALE" -gt 0 ] && [ -e /lib/modules/ksym_many.ko ]; then
	start_sleepers "$SCALE"
	log "scale: $(ls -d /proc/[0-9]*/task/* | wc -l) threads"
	# The threads the scale dumps compare: the sleepers and ksym_many's
	# kthreads, which stay put (the rest is compared in step 2, against
	# five stock dumps that filter out tasks that move).
	{
		ls /proc/$sleepers/task
		kfast-shim-guest comm-pids ksym_many/
	} > /tmp/scale-tids
	scale_dump() {
		kallsyms-bench shim wchan |
			awk 'NR == FNR { t[$1]; next } $1 in t' /tmp/scale-tids - > "$O/$1"
	}
	insmod $KO || fail "scale: insmod"
	kallsyms-bench shim load --no-enable || fail "scale: load"
	insmod /lib/modules/ksym_truth.ko || fail "scale: insmod ksym_truth"
	# %pS identity around every symbol, core and modules (the loader
	# indexed both modules: they were live before it ran).
	if out=$(kallsyms-bench shim check --every "$EVERY" 2>&1); then
		log "$out"
	else
		fail "$out"
	fi
	# %pS/%ps as ksym_truth prints them, stock (the shim is not enabled).
	kallsyms-bench shim truth --every "$EVERY" > $O/truth-stock ||
		fail "truth (stock)"
	echo "bench 200" > $D/ctl || fail "scale: bench"
	log "scale $(grep bench: $D/status)"
	log "$(grep 'module indexes' $D/status)"
	scale_dump scale-stock1
	log "scale stock wchans: $(histogram)"
	kfast-shim-guest wchan-scale --core-pid $sleepers --seconds 5 \
		> $O/scale-stock || fail "scale: stock bench"
	sed 's/^/stock /' $O/scale-stock | while read -r l; do log "scale $l"; done
	echo enable > $D/ctl || fail "scale: enable"
	wait_for enabled 1200 || fail "scale: transition did not finish"
	log "scale shim wchans: $(histogram)"
	kallsyms-bench shim truth --same-as $O/truth-stock > $O/truth-shim ||
		fail "truth (shim)"
	if cmp -s $O/truth-stock $O/truth-shim; then
		log "truth: $(wc -l < $O/truth-shim) addresses, %pS and %ps identical with and without the shim"
	else
		fail "truth: %pS/%ps differ under the shim: $(diff $O/truth-stock $O/truth-shim | head -3 | tr '\n' ' ')"
	fi
	scale_dump scale-shim1
	kfast-shim-guest wchan-scale --core-pid $sleepers --seconds 5 \
		> $O/scale-shim || fail "scale: shim bench"
	sed 's/^/shim /' $O/scale-shim | while read -r l; do log "scale $l"; done
	scale_dump scale-shim2
	echo "bench 200" > $D/ctl || fail "scale: bench (patched)"
	log "scale $(grep bench $D/status)"
	log "$(grep 'module indexes' $D/status)"
	unload
	kfast-shim-guest wchan-scale --core-pid $sleepers --seconds 5 \
		> $O/scale-stock-again || fail "scale: stock bench again"
	sed 's/^/stock again /' $O/scale-stock-again | while read -r l; do log "scale $l"; done
	scale_dump scale-stock2
	kill $sleepers
	rmmod ksym_many || fail "rmmod ksym_many"
	rmmod ksym_truth || fail "rmmod ksym_truth"
fi

send_results
