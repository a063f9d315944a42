#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# /init of the kallsyms-fast test guest (packed by `cargo xtask guest-test`).
# Console: ttyS0.  Result channel: ttyS1, framed as
#   KFAST-BEGIN capture.tar.gz / base64 lines / KFAST-END capture.tar.gz
#   KFAST-VERDICT <ok | reason>
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t debugfs debugfs /sys/kernel/debug
echo "kfast-init: $(uname -r) up"

R=/dev/ttyS1
stty -F $R raw -echo 2>/dev/null
verdict=ok
for m in ksym_truth ksym_many; do
	if ! insmod /lib/modules/$m.ko; then
		verdict="insmod $m failed"
		break
	fi
done
if [ "$verdict" = ok ]; then
	/bin/kfast-guest /out
	rc=$?
	[ $rc -eq 0 ] || verdict="kfast-guest exited with $rc"
fi
echo "kfast-init: sending results ($verdict)"
{
	echo "KFAST-BEGIN capture.tar.gz"
	tar -C /out -cf - . | gzip -c | base64
	echo "KFAST-END capture.tar.gz"
	echo "KFAST-VERDICT $verdict"
} > $R
sync
echo "kfast-init: done"
echo o > /proc/sysrq-trigger
sleep 30
