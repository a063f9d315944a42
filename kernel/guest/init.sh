#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# /init of the kallsyms-fast test guest (packed by `cargo xtask guest-test`).
# Console: ttyS0.  Result channel: ttyS1, framed as
#   KFAST-BEGIN capture.tar.gz / base64 lines / KFAST-END capture.tar.gz
#   KFAST-VERDICT <ok | reason>
export PATH=/bin
up() {
	read -r t _ < /proc/uptime
	echo "kfast-init: [$t] $*"
}

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t debugfs debugfs /sys/kernel/debug
up "$(uname -r) up"

R=/dev/ttyS1
stty -F $R raw -echo 2>/dev/null
verdict=ok
# The test modules, then in-tree modules with rich data sections (no
# layout file describes those: their regions are derived on the host).
for m in ksym_truth ksym_many trace-events-sample kobject-example \
	kset-example crc-itu-t crc7 crc8 binfmt_misc; do
	if ! insmod /lib/modules/$m.ko; then
		verdict="insmod $m failed"
		break
	fi
	up "insmod $m done"
done
if [ "$verdict" = ok ]; then
	/bin/kfast-guest /out
	rc=$?
	[ $rc -eq 0 ] || verdict="kfast-guest exited with $rc"
fi
up "sending results ($verdict)"
{
	echo "KFAST-BEGIN capture.tar.gz"
	tar -C /out -cf - . | gzip -c | base64
	echo "KFAST-END capture.tar.gz"
	echo "KFAST-VERDICT $verdict"
} > $R
sync
up "results sent"
# Exit QEMU via isa-debug-exit (status (code << 1) | 1); fall back to sysrq.
code=0
[ "$verdict" = ok ] || code=1
/bin/kfast-guest --exit $code
echo b > /proc/sysrq-trigger
sleep 30
