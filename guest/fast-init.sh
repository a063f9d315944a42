#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# /init of the patched-kernel guest (packed by `cargo xtask fast-test`).
# Console: ttyS0 (the host fails the run on any splat there). Result
# channel: ttyS1, plain lines, the last one "KFAST-VERDICT <ok | reason>".
#
# 1. The KUnit suite ran at boot (core symbols); its output is copied.
# 2. ksym_many (60,800 functions) is loaded; the suite runs again, now
#    comparing module symbols too.
# 3. The in-kernel benchmark runs (QEMU TCG: the ratios are TCG's).
# 4. 20 cycles of unload + load of ksym_many while both CPUs read every
#    task's wchan and stack (%pB) in a loop; then the suite runs a third
#    time, which also checks the wchan cache after the reloads.
# 5. nproc's access model (guest/nproc-uml-job.sh runs the same
#    and more on UML), here with lockdep: uid 1000 against a procfs per
#    hidepid= and a private one, the refusals, Landlock, mixed
#    credentials, the reader suite (one reader, a setuid helper, the LSM
#    check per task, rules per chunk); Yama's ptrace_scope last (3
#    cannot be undone).
TAG=fast-init
. /bin/kfast-lib.sh
D=/sys/kernel/debug/kallsyms_fast
K=/sys/kernel/debug/kunit/kallsyms_fast
R=/dev/ttyS1

mount_base
mount -t debugfs debugfs /sys/kernel/debug
mount -t tmpfs tmpfs /tmp
stty -F $R raw -echo 2>/dev/null

kunit() {
	echo > $K/run || fail "cannot run the KUnit suite"
	cat $K/results
}

{
	echo "# boot"
	dmesg | sed -n 's/^\[[ 0-9.]*\] //p' | grep -E 'kallsyms_fast|^ *(ok|not ok) '
	insmod /lib/modules/ksym_many.ko nr_threads=16 || fail "insmod ksym_many"
	echo "# ksym_many loaded"
	kunit

	echo "# bench (QEMU TCG; the clock here is jiffies: 10 ms resolution)"
	echo 3 > $D/bench || fail "bench"
	cat $D/bench

	kfast-shim-guest sleepers 64 &
	sleepers=$!
	(while true; do cat /proc/[0-9]*/wchan > /dev/null 2>&1; done) &
	load1=$!
	(while true; do cat /proc/[0-9]*/stack > /dev/null 2>&1; done) &
	load2=$!
	n=0
	for i in $(seq 20); do
		rmmod ksym_many || { fail "rmmod ksym_many (cycle $i)"; break; }
		insmod /lib/modules/ksym_many.ko nr_threads=16 ||
			{ fail "insmod ksym_many (cycle $i)"; break; }
		n=$i
	done
	echo "cycles: $n of 20"
	kill $load1 $load2 $sleepers
	echo "# after the cycles"
	kunit

	echo "# nproc access"
	for h in 0 1 2 4; do
		mount_hidepid $h
		nproc-guest parity --uid 1000 --rounds 3 --proc /tmp/proc-$h \
			--hidepid $mode --label hidepid$h || fail "nproc hidepid=$h"
	done
	mkdir -p /tmp/proc-subset
	mount -t proc -o subset=pid proc /tmp/proc-subset || fail "mount subset=pid"
	nproc-guest parity --uid 1000 --rounds 3 --private-mount hidepid=invisible \
		--hidepid invisible --label private || fail "nproc private /proc"
	nproc-guest access --subset-pid /tmp/proc-subset \
		--invisible /tmp/proc-2 --uid 1000 || fail "nproc access"
	# One reader, the LSM check per task, rules per chunk (reader.rs).
	cp "$(command -v nproc-guest)" /tmp/nproc-guest-suid &&
		chown 0:0 /tmp/nproc-guest-suid &&
		chmod 4755 /tmp/nproc-guest-suid || fail "a setuid nproc-guest"
	nproc-guest reader --uid 1000 --suid /tmp/nproc-guest-suid \
		--scratch /tmp/reader || fail "nproc reader"
	for y in 1 2 3; do
		echo $y > /proc/sys/kernel/yama/ptrace_scope || fail "yama $y"
		nproc-guest parity --uid 1000 --rounds 3 --label yama$y ||
			fail "nproc yama $y"
	done
	echo "KFAST-VERDICT $(verdict)"
} > $R 2>&1
sync
exit_qemu
