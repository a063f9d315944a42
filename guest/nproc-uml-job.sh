#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# /job of `cargo xtask nproc-uml-test`: the nproc guest suites on the
# patched User-Mode Linux kernel, run by guest/uml-init.sh. The
# xtask puts SEED= and FUZZ_COUNT= lines above this script.
# Results, one file per suite under /out (each ends with a PASS, FAIL or
# NOT CHECKED line from nproc-guest):
#   parity-processes, parity-threads           /proc parity as root
#   parity-uid1000, parity-threads-uid1000     the same as uid 1000
#   parity-uid1000-hidepid{0,1,2,4},           uid 1000 against a procfs
#   parity-threads-uid1000-hidepid{0,1,2,4},   mounted with that hidepid=
#   parity-uid1000-subset                      (and subset=pid): the dump
#                                              lists what the mount lists
#   parity-uid1000-private                     a private hidepid=invisible
#                                              /proc (systemd ProtectProc=)
#   access                                     no/foreign procfs fds,
#                                              Landlock, subset=pid's
#                                              GET_GLOBAL, mixed credentials
#   reader                                     one reader (inherited,
#                                              SCM_RIGHTS, setuid, Landlock),
#                                              LSM check per task, remount
#                                              and sysctl mid-dump,
#                                              nproc_restrict 0/1/2, gid=
#   smack                                      a Smack label's tasks: nproc
#                                              gives values exactly where
#                                              /proc opens (its own boot,
#                                              ONLY=smack, 6.12 kernel)
#   parity-uid1000-yama{1,2,3}                 uid 1000 under each Yama
#                                              ptrace_scope (3 is for good:
#                                              run last but the bench)
#   pidns                                      a reader in a new pid ns
#   badreq                                     the fixed malformed requests
#   storm                                      dumps during a fork storm
#   fuzz                                       random malformed messages
#   bench                                      the in-kernel benchmark
#                                              (CONFIG_NPROC_BENCH)
#   dmesg                                      the kernel log at the end
# The exit code is the verdict: every failing suite is printed (guest/lib.sh).
O=/out
TAG=nproc-uml-job
. /bin/kfast-lib.sh
# Runs one suite into $O/$name; its time goes to the console.
suite() {
	name=$1
	shift
	read -r t0 _ < /proc/uptime
	"$@" > "$O/$name" 2>&1 || fail "$name (see out/$name)"
	read -r t1 _ < /proc/uptime
	echo "nproc-uml-job: $name ran from ${t0}s to ${t1}s of uptime"
}

# The Smack boot (lsm=...,smack, the 6.12 kernel's nproc-lsm.config) runs
# the Smack suite alone: every other suite, and the benchmark, run in a
# boot without it, so that its hooks do not weigh on the numbers.
if [ "${ONLY:-}" = smack ]; then
	mkdir -p /sys/kernel/security /sys/fs/smackfs
	mount -t securityfs securityfs /sys/kernel/security 2>/dev/null
	mount -t smackfs smackfs /sys/fs/smackfs 2>/dev/null
	suite smack nproc-guest smack --uid 1000
	dmesg > $O/dmesg
	passed
	exit
fi

# Tasks to compare besides the kernel threads and this shell: sleepers in
# nanosleep and wait, and a process of four threads whose faults and CPU
# times differ (the processes scope sums them, the threads scope does not).
sleep 1000 &
s1=$!
sh -c 'sleep 1000 & wait' &
s2=$!
nproc-guest threads 3 &
thr=$!
# Let the threads fault in and burn, then sleep.
sleep 2

suite parity-processes nproc-guest parity
suite parity-threads nproc-guest parity --threads
suite parity-uid1000 nproc-guest parity --uid 1000
suite parity-threads-uid1000 nproc-guest parity --threads --uid 1000
suite pidns nproc-guest pidns

# The access model (fs/proc/nproc/nproc_access.c): one procfs per
# hidepid= value, compared as uid 1000; its own processes are there to
# be seen.
for h in 0 1 2 4; do
	mount_hidepid $h
	suite parity-uid1000-hidepid$h nproc-guest parity --uid 1000 \
		--proc /tmp/proc-$h --hidepid $mode --label hidepid$h
	suite parity-threads-uid1000-hidepid$h nproc-guest parity --threads \
		--uid 1000 --proc /tmp/proc-$h --hidepid $mode --label hidepid$h
done
mkdir -p /tmp/proc-subset
mount -t proc -o subset=pid proc /tmp/proc-subset || fail "mount subset=pid"
suite parity-uid1000-subset nproc-guest parity --uid 1000 \
	--proc /tmp/proc-subset --label subset
suite parity-uid1000-private nproc-guest parity --uid 1000 \
	--private-mount hidepid=invisible --hidepid invisible --label private
suite access nproc-guest access --subset-pid /tmp/proc-subset \
	--invisible /tmp/proc-2 --uid 1000
# One reader, the LSM check per task, the rules read at every chunk,
# kernel.nproc_restrict and gid=: against a real setuid-root program.
cp "$(command -v nproc-guest)" /tmp/nproc-guest-suid &&
	chown 0:0 /tmp/nproc-guest-suid && chmod 4755 /tmp/nproc-guest-suid ||
	fail "a setuid copy of nproc-guest"
suite reader nproc-guest reader --uid 1000 --suid /tmp/nproc-guest-suid \
	--scratch /tmp/reader
suite badreq nproc-guest badreq
suite storm nproc-guest storm --dumps 20 --forkers 2 --sleepers 120
suite fuzz nproc-guest fuzz --count "${FUZZ_COUNT:-100000}" --seed "${SEED:-1}"

# The in-kernel benchmark: the dump's kernel time per task, natively
# (UML runs kernel code on the host CPU; its system calls are slow, so
# the syscall-free loop is what tells the per-task cost). More tasks
# first, so that the pass is not a few dozen kernel threads: 1,000
# sleeping processes. Field sets: "base" (all but the expensive wchan
# and cmdline), what `nps ax` and `nps -eo ...,wchan` ask
# for, and everything.
# bench LABEL SCOPE FIELDS: one line "LABEL: <the kernel's report>".
bench() {
	label=$1
	shift
	if echo "$*" > /sys/kernel/debug/nproc/bench; then
		echo "$label: $(cat /sys/kernel/debug/nproc/bench)" >> $O/bench
	else
		echo "bench: FAIL: '$*' refused" >> $O/bench
	fi
}
if [ -e /sys/kernel/debug/nproc/bench ]; then
	sleepers=""
	i=0
	while [ $i -lt 1000 ]; do
		sleep 1000 &
		sleepers="$sleepers $!"
		i=$((i + 1))
	done
	AX=tgid,sid,tty_nr,tid,state,nice,locked,pgid,tpgid,nr_threads,utime,stime,comm,cmdline
	EO=tgid,ppid,sid,tid,uid,state,nice,locked,pgid,tpgid,nr_threads,vsize,resident,utime,stime,comm,wchan
	bench "base fields" processes base
	bench "base fields, threads" threads base
	bench "nps ax fields" processes "$AX"
	bench "nps -eo fields" processes "$EO"
	bench "all fields" processes all
	# Every group computed, cmdline not read: what the fill computed for
	# any request before it learnt to skip what was not asked for.
	bench "every field but cmdline" processes base,wchan
	# wchan alone, then the same with the kallsyms-fast switch off: the
	# stock lookup and a stack walk on every read, without the wchan
	# cache or the memo of a blocked task's wchan (patch 8).
	bench "wchan" processes tgid,wchan
	if echo 0 > /sys/kernel/debug/kallsyms_fast/enabled; then
		bench "wchan, kallsyms_fast off" processes tgid,wchan
		bench "nps -eo fields, kallsyms_fast off" processes "$EO"
		echo 1 > /sys/kernel/debug/kallsyms_fast/enabled
	fi
	kill $sleepers
	echo "bench: PASS (numbers above, never compared)" >> $O/bench
else
	echo "bench: NOT CHECKED without /sys/kernel/debug/nproc/bench (CONFIG_NPROC_BENCH)" > $O/bench
fi

# Yama: ptrace_scope changes wchan exactly as it changes /proc/PID/wchan
# (PTRACE_MODE_READ is not an attach: not at all). 3 cannot be undone,
# so this comes last.
for y in 1 2 3; do
	if echo $y > /proc/sys/kernel/yama/ptrace_scope; then
		suite parity-uid1000-yama$y nproc-guest parity --uid 1000 \
			--label yama$y
	else
		fail "yama ptrace_scope=$y (CONFIG_SECURITY_YAMA)"
	fi
done

kill $s1 $s2 $thr
dmesg > $O/dmesg
passed
