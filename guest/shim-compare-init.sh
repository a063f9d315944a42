#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# /init of `cargo xtask shim-compare`: two builds of the shim, timed in ONE
# boot (whole-read times under TCG drift between boots, so before/after
# numbers only compare inside one). For each of kallsyms_fast_shim_old.ko
# and kallsyms_fast_shim.ko in turn (the old first unless kfs.first=new):
# insmod, load (verification), `bench 200` unpatched, enable, wchan-scale,
# `bench 200` patched, disable, rmmod.
# Stock wchan-scale runs before the first and after each. Progress and
# numbers: "kfs-shim:" lines on ttyS0; the result channel carries dmesg
# and the verdict (guest/lib.sh).
TAG=kfs-shim
. /bin/kfast-lib.sh
shim_guest_setup

SCALE=$(cmdline_num scale 1000)
# Which build goes first: host load drifts within a boot, so a second boot
# in the other order shows how much of a difference is drift.
FIRST=$(cmdline_num first old)

# Whole passes over the sleepers' and ksym_many's wchans, logged as "$1 ...".
scale() {
	kfast-shim-guest wchan-scale --core-pid $sleepers --seconds 5 > /tmp/scale ||
		fail "$1: wchan-scale"
	while read -r l; do log "$1 $l"; done < /tmp/scale
}

# One build of the shim: $1 is its label, $2 its .ko.
measure() {
	insmod "$2" || { fail "$1: insmod"; return; }
	if ! kallsyms-bench shim load --no-enable; then
		fail "$1: load refused: $(grep 'last refusal' $D/status)"
		rmmod kallsyms_fast_shim
		return
	fi
	log "$1 $(grep '^verified' $D/status)"
	echo "bench 200" > $D/ctl || fail "$1: bench"
	log "$1 $(grep 'bench' $D/status)"
	echo enable > $D/ctl || fail "$1: enable"
	wait_for enabled 1200 || fail "$1: transition did not finish"
	scale "$1 shim"
	echo "bench 200" > $D/ctl || fail "$1: bench (patched)"
	log "$1 $(grep 'bench' $D/status)"
	echo 0 > $LP/enabled
	wait_for "[ ! -d $LP ]" 600 || fail "$1: patch not freed"
	wait_for "rmmod kallsyms_fast_shim 2>/dev/null" 100 || fail "$1: rmmod failed"
	scale "stock after $1"
}

start_sleepers "$SCALE"
log "$(ls -d /proc/[0-9]*/task/* | wc -l) threads"
scale "stock before"
if [ "$FIRST" = new ]; then
	measure new /lib/modules/kallsyms_fast_shim.ko
	measure old /lib/modules/kallsyms_fast_shim_old.ko
else
	measure old /lib/modules/kallsyms_fast_shim_old.ko
	measure new /lib/modules/kallsyms_fast_shim.ko
fi

send_results
