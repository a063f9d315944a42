#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# /job of `cargo xtask nproc-uml-test`: the nproc guest suites on the
# patched User-Mode Linux kernel, run by kernel/guest/uml-init.sh. The
# xtask puts SEED= and FUZZ_COUNT= lines above this script.
# Results, one file per suite under /out (each ends with a PASS, FAIL or
# NOT CHECKED line from nproc-guest):
#   parity-processes, parity-threads           /proc parity as root
#   parity-uid1000, parity-threads-uid1000     the same as uid 1000
#   pidns                                      a reader in a new pid ns
#   badreq                                     the fixed malformed requests
#   storm                                      dumps during a fork storm
#   fuzz                                       random malformed messages
#   dmesg                                      the kernel log at the end
# The exit code is the verdict: every failing suite is printed and counted.
O=/out
rc=0
fail() {
	echo "nproc-uml-job: FAIL: $*"
	rc=1
}
# Runs one suite into $O/$name; its time goes to the console.
suite() {
	name=$1
	shift
	read -r t0 _ < /proc/uptime
	"$@" > "$O/$name" 2>&1 || fail "$name (see out/$name)"
	read -r t1 _ < /proc/uptime
	echo "nproc-uml-job: $name ran from ${t0}s to ${t1}s of uptime"
}

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
suite badreq nproc-guest badreq
suite storm nproc-guest storm --dumps 20 --forkers 2 --sleepers 120
suite fuzz nproc-guest fuzz --count "${FUZZ_COUNT:-100000}" --seed "${SEED:-1}"

kill $s1 $s2 $thr
dmesg > $O/dmesg
exit $rc
