#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# /init of the User-Mode Linux guest (laid out by `cargo xtask uml-test` in a
# private host directory that UML mounts as its hostfs root).
# Console: the UML process's stdout.  Results: files under /out, which is the
# host directory itself, so nothing is framed or encoded.
#   /etc/kfast-modules  modules to insmod from /lib/modules, one per line
#   /job                the run's commands (sh); its exit code is the verdict
#   /out/verdict        written last: `ok` or the reason for failing
TAG=kfast-init
. /bin/kfast-lib.sh
mount_base
mount -t debugfs debugfs /sys/kernel/debug
mount -t tmpfs tmpfs /tmp
up "$(uname -r) up"

if [ -f /etc/kfast-modules ]; then
	while read -r m; do
		[ -n "$m" ] || continue
		if ! insmod "/lib/modules/$m.ko"; then
			fail "insmod $m failed"
			break
		fi
		up "insmod $m done"
	done < /etc/kfast-modules
fi
if passed; then
	sh /job
	rc=$?
	[ $rc -eq 0 ] || fail "job exited with $rc"
fi
verdict > /out/verdict
sync
up "KFAST-VERDICT $(verdict)"
# reboot(RB_POWER_OFF): the UML process exits with status 0.
poweroff -f
