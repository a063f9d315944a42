# SPDX-License-Identifier: GPL-2.0
# The shell library every guest /init and UML job sources: packed as
# /bin/kfast-lib.sh into every initramfs (xtask/src/initramfs.rs) and
# every UML root (xtask/src/uml.rs). Logging, failures and the verdict,
# the base mounts, waiting, the kernel log's reports and the framed
# result channel; then the helpers the kmod-shim guests share.
#
# A script sets TAG (the prefix of its console lines) before sourcing it.
# `fail` records a failure and goes on, so that one run reports them all;
# `verdict` is "ok" or every failure, `passed` tests for none.
export PATH=/bin
: "${TAG:=kfast}"
failures=""

log() { echo "$TAG: $*"; }
fail() {
	log "FAIL: $*"
	failures="${failures:+$failures; }$*"
}
verdict() { echo "${failures:-ok}"; }
passed() { [ -z "$failures" ]; }

# Seconds since boot; `up MSG` logs MSG with them.
uptime_s() {
	read -r t _ < /proc/uptime
	echo "$t"
}
up() { log "[$(uptime_s)] $*"; }

# /proc, /sys and /dev (unless the kernel mounted devtmpfs there itself,
# as UML's does on its hostfs root).
mount_base() {
	mount -t proc proc /proc
	mount -t sysfs sysfs /sys
	[ -e /dev/null ] || mount -t devtmpfs devtmpfs /dev
}

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

# The kernel log to $1; a failure if it holds an oops, a warning, a call
# trace or a lockdep report (the markers of xtask/src/console.rs, which
# reads the console the same way).
check_kernel_log() {
	dmesg > "$1"
	if grep -qE "Oops|WARNING:|BUG:|INFO:|Kernel panic|Call Trace|general protection|possible (recursive|circular) locking|inconsistent lock state" "$1"; then
		fail "kernel log has an oops/warning/lockdep report"
	fi
}

# Directory $1 as a gzipped tar, then the verdict, framed on channel $2:
#   KFAST-BEGIN capture.tar.gz / base64 lines / KFAST-END capture.tar.gz
#   KFAST-VERDICT <ok | failures>
send_framed() {
	{
		echo "KFAST-BEGIN capture.tar.gz"
		tar -C "$1" -cf - . | gzip -c | base64
		echo "KFAST-END capture.tar.gz"
		echo "KFAST-VERDICT $(verdict)"
	} > "$2"
	sync
}

# Leave QEMU through isa-debug-exit with the verdict as the status
# (kfast-guest --exit), else reboot by sysrq.
exit_qemu() {
	code=0
	passed || code=1
	/bin/kfast-guest --exit $code
	echo b > /proc/sysrq-trigger
	sleep 30
}

# --- nproc's access suites (fast-init.sh, nproc-uml-job.sh).

# A procfs with hidepid=$1 at /tmp/proc-$1; sets `mode` to nproc-guest's
# name for that value (--hidepid).
mount_hidepid() {
	case $1 in
	0) mode=off ;; 1) mode=noaccess ;; 2) mode=invisible ;; 4) mode=ptraceable ;;
	esac
	mkdir -p /tmp/proc-$1
	mount -t proc -o hidepid=$1 proc /tmp/proc-$1 || fail "mount hidepid=$1"
}

# --- kmod-shim guests (shim-init.sh, shim-compare-init.sh).

# Mounts, the result channel R (ttyS1, raw), the shim's debugfs D and
# livepatch LP directories, the capture directory O.
shim_guest_setup() {
	mount_base
	mount -t debugfs debugfs /sys/kernel/debug
	R=/dev/ttyS1
	stty -F $R raw -echo 2>/dev/null
	D=/sys/kernel/debug/kallsyms_fast
	LP=/sys/kernel/livepatch/kallsyms_fast_shim
	O=/out
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

enabled() { [ -d "$LP" ] && [ "$(cat "$LP/transition")" = 0 ]; }

# The kernel log checked into $O, $O and the verdict on the result
# channel $R, power off.
send_results() {
	check_kernel_log "$O/dmesg.txt"
	log "sending results ($(verdict))"
	send_framed "$O" "$R"
	echo o > /proc/sysrq-trigger
	sleep 30
}
