#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# /job of the patched User-Mode Linux guest (`cargo xtask fast-uml-test`),
# run by guest/uml-init.sh. UML runs kernel code natively, so the
# benchmark numbers here are the project's in-kernel speed figures.
# Results go to files under /out (the host directory itself):
#   kunit-boot, kunit-module, kunit-after   KUnit results (KTAP)
#   bench                  the in-kernel benchmark table
#   scale-stock1, scale-fast1, scale-stock2, scale-fast2
#                          whole /proc/PID/wchan reads (wchan-scale)
#   unpriv-stock1, unpriv-fast1, unpriv-fast2, unpriv-stock2
#                          every thread's wchan read by uid 1000
#   generation             the wchan cache generation around rmmod, a failed
#                          insmod and insmod
# The exit code is the verdict: every failure is printed (guest/lib.sh).
D=/sys/kernel/debug/kallsyms_fast
K=/sys/kernel/debug/kunit/kallsyms_fast
O=/out
KTHREADS=1000
SLEEPERS=4000

TAG=fast-uml-job
. /bin/kfast-lib.sh

kunit() {
	echo > $K/run || fail "cannot run the KUnit suite ($1)"
	cat $K/results > "$O/kunit-$1"
}

switch() {
	echo "$1" > $D/enabled || fail "cannot set enabled=$1"
}

# 1. The suite ran at boot, before any module was loaded.
cat $K/results > $O/kunit-boot || fail "no KUnit results from boot"

# 2. A 60,800-function module: the suite again, with module symbols.
insmod /lib/modules/ksym_many.ko nr_threads=$KTHREADS || fail "insmod ksym_many"
kunit module

# 3. The benchmark: every case stock, fast and (wchan) cached, one boot.
echo "${KFAST_BENCH_ROUNDS:-50}" > $D/bench || fail "bench"
cat $D/bench > $O/bench

# 4. Whole /proc/PID/wchan reads: $SLEEPERS threads sleeping in core code
#    and the $KTHREADS ksym_many kthreads, stock and fast alternately.
kfast-shim-guest sleepers $SLEEPERS &
sleepers=$!
# Thread creation is slow on UML: wait (at most 120 s) until all sleep.
waited=0
while [ "$(ls /proc/$sleepers/task 2>/dev/null | wc -l)" -le $SLEEPERS ] &&
	[ $waited -lt 120 ]; do
	sleep 1
	waited=$((waited + 1))
done
[ $waited -lt 120 ] || fail "only $(ls /proc/$sleepers/task | wc -l) sleepers after 120 s"
sleep 1
for round in 1 2; do
	for mode in stock fast; do
		[ $mode = stock ] && switch 0 || switch 1
		kfast-shim-guest wchan-scale --core-pid $sleepers \
			--module-comm ksym_many --seconds 2 > "$O/scale-$mode$round" ||
			fail "wchan-scale ($mode$round)"
	done
done

# 5. Permission parity: uid 1000 reads every thread's wchan, stock, fast,
#    fast, stock (kthreads and other users' tasks must read 0 both ways).
switch 0
kfast-shim-guest wchan-unpriv --uid 1000 > $O/unpriv-stock1 || fail "unpriv stock1"
switch 1
kfast-shim-guest wchan-unpriv --uid 1000 > $O/unpriv-fast1 || fail "unpriv fast1"
kfast-shim-guest wchan-unpriv --uid 1000 > $O/unpriv-fast2 || fail "unpriv fast2"
switch 0
kfast-shim-guest wchan-unpriv --uid 1000 > $O/unpriv-stock2 || fail "unpriv stock2"
switch 1
kill $sleepers

# 6. The wchan cache across unload, a load that fails after the module
#    was formed (fail_load=1 refuses it from parse_args()) and a load: the
#    loader must bump the generation each time, and the suite (which also
#    reads the module's kthreads' names through the cache) must still find
#    fast == stock.
{
	echo "before $(cat $D/cache_generation)"
	rmmod ksym_many || fail "rmmod ksym_many"
	echo "unloaded $(cat $D/cache_generation)"
	insmod /lib/modules/ksym_many.ko fail_load=1 2>/dev/null &&
		fail "insmod ksym_many fail_load=1 succeeded"
	echo "failed-load $(cat $D/cache_generation)"
	insmod /lib/modules/ksym_many.ko nr_threads=16 || fail "insmod ksym_many again"
	echo "reloaded $(cat $D/cache_generation)"
} > $O/generation
kunit after
passed
