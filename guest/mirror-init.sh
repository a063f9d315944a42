#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# /init of the kallsyms-fast test guest (packed by `cargo xtask guest-test`).
# Console: ttyS0.  Result channel: ttyS1, framed as
#   KFAST-BEGIN capture.tar.gz / base64 lines / KFAST-END capture.tar.gz
#   KFAST-VERDICT <ok | reason>
TAG=kfast-init
. /bin/kfast-lib.sh
mount_base
mount -t debugfs debugfs /sys/kernel/debug
up "$(uname -r) up"

R=/dev/ttyS1
stty -F $R raw -echo 2>/dev/null
# The test modules, then in-tree modules with rich data sections (no
# layout file describes those: their regions are derived on the host).
for m in ksym_truth ksym_many trace-events-sample kobject-example \
	kset-example crc-itu-t crc7 crc8 binfmt_misc; do
	if ! insmod /lib/modules/$m.ko; then
		fail "insmod $m failed"
		break
	fi
	up "insmod $m done"
done
if passed; then
	/bin/kfast-guest /out
	rc=$?
	[ $rc -eq 0 ] || fail "kfast-guest exited with $rc"
fi
up "sending results ($(verdict))"
send_framed /out $R
up "results sent"
exit_qemu
