#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# /init of the nproc benchmark guest (packed by `cargo xtask nproc-bench`):
# the patched x86_64 kernel (CONFIG_NPROC=y, no lock debugging) under QEMU
# TCG, 2 CPUs.
# Console: ttyS0 (the host fails the run on any splat there). Result
# channel: ttyS1, plain lines, the last one "KFAST-VERDICT <ok | reason>".
#
# Parameters (kernel command line): nprocbench.dumps= full dumps per
# command; nprocbench.procs=, .threaded=, .threads= (kfast-nproc-guest
# tasks); nprocbench.kthreads= (ksym_many's sleepers in the module);
# nprocbench.clock=icount when QEMU runs with -icount shift=0 (the
# instruction clock, xtask/src/nproc_bench.rs Clock): then step 3 times
# the default layout only, and steps 2 and 4, done in the boot on the
# host's clock, are left out.
#
# 0. nps against /bin/ps, every form of guest/nps/parity.sh, on
#    the nproc source (host clock only).
# 1. The population: ksym_many's kthreads sleeping in the module, then
#    processes and threads sleeping in core code.
# 2. Parity: `nps ax` (and the -eo columns) equal line by line to a
#    `/bin/ps ax` run just before or after it (guest/nps/parity.sh with
#    PARITY_STRICT=1; the readers' own lines are left out).
# 3. Timing: N rounds, each one dump of every command in turn, to
#    /dev/null (`kfast-nproc-guest time`: wall, and user + sys from
#    wait4's rusage).
# 4. Counting, one more run each: syscalls (function tracer on
#    x64_sys_call, the one entry of every x86_64 syscall) and slab
#    allocations (kmem:kmalloc + kmem:kmem_cache_alloc events), both
#    filtered to the reader's pid from before its exec to its exit.
TAG=nproc-bench
. /bin/kfast-lib.sh
R=/dev/ttyS1
T=/sys/kernel/tracing
EO=pid,tid,ppid,uid,stat,vsz,rss,time,nlwp,comm,wchan
# The fields of /proc/PID/stat that nproc serves, and wchan: what
# `kfast-nproc-guest procread` reads from /proc.
RAW=tgid,ppid,pgid,sid,tty_nr,tpgid,state,flags,comm,priority,nice,policy,rt_priority,nr_threads,vsize,rss,rsslim,min_flt,cmin_flt,maj_flt,cmaj_flt,utime,stime,cutime,cstime,start_time,processor,exit_signal,wchan

mount_base
mount -t tracefs tracefs $T
stty -F $R raw -echo 2>/dev/null

DUMPS=3 PROCS=3400 THREADED=20 THREADS=50 KTHREADS=500 CLOCK=host
for w in $(cat /proc/cmdline); do
	case $w in
	nprocbench.dumps=*) DUMPS=${w#*=} ;;
	nprocbench.procs=*) PROCS=${w#*=} ;;
	nprocbench.threaded=*) THREADED=${w#*=} ;;
	nprocbench.threads=*) THREADS=${w#*=} ;;
	nprocbench.kthreads=*) KTHREADS=${w#*=} ;;
	nprocbench.clock=*) CLOCK=${w#*=} ;;
	esac
done


# parity NAME ARGS...: nps ARGS against /bin/ps ARGS on the loaded
# machine, by guest/nps/parity.sh's strict rule (PARITY_STRICT=1: every
# line of nps byte for byte the same line of one of two ps runs around
# it, only kworkers' workqueue names masked), up to 5 tries; the PID is
# the first column of both forms run here.
parity() {
	name=$1
	shift
	if PARITY_STRICT=1 PARITY_TRIES=5 sh /bin/nps-parity.sh /bin/nps /bin/ps \
		"$name" 1 "$@" > /tmp/parity 2>&1; then
		echo "parity $name identical ($(grep "^PASS" /tmp/parity))"
	else
		sed 's/^/# /' /tmp/parity
		fail "nps $* differs from /bin/ps $* in 5 tries"
	fi
}

# count WHAT LABEL CMD ARGS...: one run of CMD, its syscalls (WHAT=sys) or
# slab allocations (WHAT=alloc) counted by the tracer, filtered to its pid.
count() {
	what=$1 label=$2
	shift 2
	echo 0 > $T/tracing_on
	echo nop > $T/current_tracer
	echo > $T/set_event
	: > $T/set_event_pid
	: > $T/set_ftrace_pid
	if [ $what = sys ]; then
		echo x64_sys_call > $T/set_ftrace_filter || { fail "x64_sys_call is not traceable"; return; }
		echo 1 > $T/options/function-fork
		echo function > $T/current_tracer
		pidfile=$T/set_ftrace_pid
	else
		echo kmem:kmalloc kmem:kmem_cache_alloc > $T/set_event || { fail "no kmem events"; return; }
		echo 1 > $T/options/event-fork
		pidfile=$T/set_event_pid
	fi
	: > $T/trace
	echo 1 > $T/tracing_on
	sh -c 'echo $$ > '$pidfile'; exec "$@"' sh "$@" > /dev/null || fail "$label: exit $?"
	echo 0 > $T/tracing_on
	n=0
	for s in $T/per_cpu/cpu*/stats; do
		for v in $(sed -n 's/^\(entries\|overrun\|dropped events\): //p' $s); do
			n=$((n + v))
		done
	done
	echo "count $what $label $n"
	echo nop > $T/current_tracer
	echo > $T/set_event
	: > $T/set_ftrace_pid
	: > $T/set_event_pid
}

# each F ARGS...: F ARGS... LABEL CMD CMD-ARGS... for every benchmarked
# command, in the host's table order (xtask/src/nproc_bench.rs COMMANDS).
each() {
	f=$1
	shift
	$f "$@" ps-ax /bin/ps ax
	$f "$@" nps-ax /bin/nps ax
	$f "$@" ps-aux /bin/ps aux
	$f "$@" nps-aux /bin/nps aux
	$f "$@" ps-ef /bin/ps -ef
	$f "$@" nps-ef /bin/nps -ef
	$f "$@" ps-eLf /bin/ps -eLf
	$f "$@" nps-eLf /bin/nps -eLf
	$f "$@" ps-eo /bin/ps -eo $EO
	$f "$@" nps-eo /bin/nps -eo $EO
	$f "$@" proc-raw /bin/kfast-nproc-guest procread
	$f "$@" nproc-raw /bin/kfast-nproc-guest nprocread $RAW
	$f "$@" nps-start /bin/nps --version
}

# time_once LABEL CMD ARGS...: one timed dump of CMD.
time_once() {
	label=$1
	shift
	kfast-nproc-guest time $label 1 "$@" || fail "time $label"
}

# fixed CMD ARGS...: CMD with address space layout randomization off
# (xtask/src/nproc_bench.rs FIXED says why), then the setting restored;
# CMD's exit status.
fixed() {
	echo 0 > /proc/sys/kernel/randomize_va_space
	"$@"
	rc=$?
	echo $ASLR > /proc/sys/kernel/randomize_va_space
	return $rc
}

# time_fixed LABEL CMD ARGS...: time_once with randomization off,
# labelled LABEL@fixed.
time_fixed() {
	label=$1
	shift
	fixed kfast-nproc-guest time $label@fixed 1 "$@" || fail "time $label@fixed"
}

# warm_fixed LABEL CMD ARGS...: one untimed dump of CMD with randomization
# off, so that the first timed round finds its code translated as every
# later round does.
warm_fixed() {
	shift
	fixed "$@" > /dev/null 2>&1
}

# on_instructions: step 3 on the instruction clock. A translation costs
# no guest time there, so the layout does not matter: the default one
# only, and no warm-up.
on_instructions() {
	echo "# timing on the instruction clock: $DUMPS rounds of one dump per command (uptime $(uptime_s))"
	round=0
	while [ $round -lt $DUMPS ]; do
		each time_once
		round=$((round + 1))
	done
}

# on_host_clock: steps 2 to 4 on the host's clock.
on_host_clock() {
	parity ax ax
	parity eo -eo $EO

	# nproc-uml-test's field parity, here too: this x86_64 kernel puts
	# each run of numbers at once (nproc_put_nums()), where UML puts them
	# one value at a time. Every field of every task against /proc.
	for scope in processes threads; do
		flag=
		[ $scope = threads ] && flag=--threads
		nproc-guest parity $flag > /tmp/fp 2>&1
		rc=$?
		echo "field-parity $scope rc $rc: $(grep -v ': DIFF ' /tmp/fp | tail -1)"
		[ $rc = 0 ] || grep ': DIFF ' /tmp/fp | head -20 | sed 's/^/# /'
	done

	# Rounds, not runs: each round times every command once, in turn, so
	# that the host's load drifting during a long run (TCG shares the
	# host's cores) weighs on both sides alike. The host adds the rounds.
	echo "# timing: $DUMPS rounds of one dump per command, stdout to /dev/null (uptime $(uptime_s))"
	ASLR=$(cat /proc/sys/kernel/randomize_va_space)
	echo "# randomize_va_space $ASLR; 0 for the @fixed rows"
	each warm_fixed
	round=0
	while [ $round -lt $DUMPS ]; do
		each time_once
		each time_fixed
		round=$((round + 1))
	done
	echo "raw-counts proc $(kfast-nproc-guest procread) nproc $(kfast-nproc-guest nprocread $RAW 2>&1)"

	echo "# counts: one run each (uptime $(uptime_s))"
	for what in sys alloc; do
		each count $what
	done
}

{
	echo "# nproc-bench: QEMU TCG (emulated; not a hardware ratio); no lock debugging"
	echo "# params dumps=$DUMPS procs=$PROCS threaded=$THREADED threads=$THREADS kthreads=$KTHREADS clock=$CLOCK"
	# jiffies (10 ms steps) unless xtask/src/guest_clock.rs could give the TSC's rate
	echo "# clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
	# ps and nps name users through NSS (glibc's files backend): without
	# these, -u root and U root would compare two refusals, and the timed
	# aux, -ef and -eLf would print uids on one clock and names on the
	# other.
	mkdir -p /etc
	echo 'root:x:0:0:root:/:/bin/sh' > /etc/passwd
	echo 'root:x:0:' > /etc/group
	printf 'passwd: files\ngroup: files\n' > /etc/nsswitch.conf
	# nps against /bin/ps on the nproc source, every form parity.sh knows
	# (guest/nps/parity.sh), before the population: a few dozen
	# tasks keep each ps run short under TCG.
	if [ "$CLOCK" != icount ]; then
		PARITY_TRIES=10 sh /bin/nps-parity.sh /bin/nps /bin/ps > /tmp/nps-parity 2>&1 ||
			fail "nps parity (nps-parity lines)"
		sed 's/^/nps-parity: /' /tmp/nps-parity
	fi
	insmod /lib/modules/ksym_many.ko nr_threads=$KTHREADS || fail "insmod ksym_many"
	kfast-nproc-guest tasks $PROCS $THREADED $THREADS /tmp/ready &
	i=0
	while [ ! -e /tmp/ready ] && [ $i -lt 600 ]; do
		sleep 1
		i=$((i + 1))
	done
	[ -e /tmp/ready ] || fail "the tasks did not start in 600 s"
	echo "# population ready after ${i} s (uptime $(uptime_s))"
	sleep 5
	set -- /proc/[0-9]*/task/[0-9]*
	tasks=$#
	set -- /proc/[0-9]*
	echo "population $tasks tasks $# processes"
	echo "slab-before $(sed -n 's/^Slab: *//p' /proc/meminfo)"
	# Plain `nps` reads the nproc family when the kernel has it (else
	# /proc): say so only if that source answers here.
	if out=$(nps --source nproc -p 1 2>&1); then
		echo "nps-source nproc (the default)"
	else
		echo "nps-source none: $(echo "$out" | head -1)"
	fi

	if [ "$CLOCK" = icount ]; then
		on_instructions
	else
		on_host_clock
	fi
	echo "slab-after $(sed -n 's/^Slab: *//p' /proc/meminfo)"
	echo "# done (uptime $(uptime_s))"
	echo "KFAST-VERDICT $(verdict)"
} > $R 2>&1
sync
exit_qemu
