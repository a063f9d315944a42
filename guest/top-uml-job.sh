#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# /job of `cargo xtask top-uml-bench` (xtask/src/top_uml.rs), run by
# guest/uml-init.sh; the xtask puts WAITERS=, KTHREADS=, ROUNDS= and
# REFRESHES= lines above this script. Results under /out:
#   top-sample   the first refresh of the first top run (WCHAN shown)
#   runs         per run: "run PROGRAM MODE ROUND", then the shell's
#                `times` before and after it (the children's CPU is the
#                second line of each)
# The exit code is the verdict (guest/lib.sh).
D=/sys/kernel/debug/kallsyms_fast
O=/out
TAG=top-uml-job
. /bin/kfast-lib.sh
export HOME=/root TERM=dumb

insmod /lib/modules/ksym_many.ko nr_threads=$KTHREADS || fail "insmod ksym_many"
kfast-shim-guest waiters $WAITERS &
waiters=$!
# Thread creation is slow on UML: wait (at most 300 s) until all wait.
waited=0
while [ "$(ls /proc/$waiters/task 2>/dev/null | wc -l)" -le $WAITERS ] &&
	[ $waited -lt 300 ]; do
	sleep 1
	waited=$((waited + 1))
done
[ $waited -lt 300 ] || fail "only $(ls /proc/$waiters/task | wc -l) waiters after 300 s"
sleep 2
echo "tasks: $(ls /proc | grep -c '^[0-9]') processes, $(cat /proc/loadavg)"

/usr/bin/top -b -H -n 1 -w 512 2> $O/top-stderr | head -40 > $O/top-sample

# One run of PROGRAM in MODE for ROUND, timed by the shell's `times`.
measure() {
	program=$1 mode=$2 round=$3
	[ $mode = stock ] && v=0 || v=1
	echo $v > $D/enabled || fail "cannot set enabled=$v"
	echo "run $program $mode $round" >> $O/runs
	times >> $O/runs
	if [ $program = top ]; then
		/usr/bin/top -b -H -n $REFRESHES -d 0.1 -w 512 > /dev/null || fail "top ($mode $round)"
	else
		/usr/bin/ps -eLo pid,wchan > /dev/null || fail "ps ($mode $round)"
	fi
	times >> $O/runs
}

round=1
while [ $round -le $ROUNDS ]; do
	# Odd rounds stock first, even rounds fast first.
	if [ $((round % 2)) -eq 1 ]; then order="stock fast"; else order="fast stock"; fi
	for mode in $order; do
		measure top $mode $round
		measure ps $mode $round
	done
	round=$((round + 1))
done
echo 1 > $D/enabled
kill $waiters
passed
