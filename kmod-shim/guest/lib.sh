# SPDX-License-Identifier: GPL-2.0
# Sourced by the kmod-shim guests' /init (init.sh for `cargo xtask
# shim-test`, compare.sh for `cargo xtask shim-compare`; packed as
# /bin/kfs-guest-lib.sh): mounts, names, logging and the result channel.
# Console: ttyS0 (progress lines start with "kfs-shim:"). Result channel:
# ttyS1, framed as in the harness: KFAST-BEGIN capture.tar.gz / base64 /
# KFAST-END capture.tar.gz / KFAST-VERDICT <ok | reasons>.
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t debugfs debugfs /sys/kernel/debug
R=/dev/ttyS1
stty -F $R raw -echo 2>/dev/null

D=/sys/kernel/debug/kallsyms_fast
LP=/sys/kernel/livepatch/kallsyms_fast_shim
O=/out
failures=""

log() { echo "kfs-shim: $*"; }
fail() { log "FAIL: $*"; failures="$failures; $*"; }

# The value after "kfs.$1=" on the kernel command line, or $2.
cmdline_num() {
	v=$(sed -n "s/.*kfs\.$1=\([0-9a-z]*\).*/\1/p" /proc/cmdline)
	echo "${v:-$2}"
}

# Wait (up to $2 tenths of a second) for the shell condition $1.
wait_for() {
	i=0
	while ! eval "$1"; do
		i=$((i + 1))
		[ $i -gt "$2" ] && return 1
		sleep 0.1
	done
	return 0
}

# $1 user threads sleeping in core code (their process: $sleepers) and
# $1 ksym_many kthreads sleeping in the module.
start_sleepers() {
	kfast-shim-guest sleepers "$1" &
	sleepers=$!
	insmod /lib/modules/ksym_many.ko nr_threads="$1" ||
		fail "insmod ksym_many nr_threads=$1"
	wait_for '[ $(ls /proc/$sleepers/task | wc -l) -gt '"$1"' ]' 600 ||
		fail "sleepers did not start"
}

enabled() { [ -d $LP ] && [ "$(cat $LP/transition)" = 0 ]; }

# Fails on oopses, warnings, call traces and lockdep reports in the kernel
# log, sends $O and the verdict on the result channel, powers off.
send_results() {
	dmesg > $O/dmesg.txt
	if grep -qE "Oops|WARNING:|BUG:|INFO:|Call Trace|general protection|possible (recursive|circular) locking|inconsistent lock state" $O/dmesg.txt; then
		fail "kernel log has an oops/warning/lockdep report"
	fi
	[ -n "$failures" ] && verdict="${failures#; }" || verdict=ok
	log "sending results ($verdict)"
	{
		echo "KFAST-BEGIN capture.tar.gz"
		tar -C $O -cf - . | gzip -c | base64
		echo "KFAST-END capture.tar.gz"
		echo "KFAST-VERDICT $verdict"
	} > $R
	sync
	echo o > /proc/sysrq-trigger
	sleep 30
}
