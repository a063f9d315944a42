#!/bin/sh
# mkroot.sh ROOT NPS THR PROCTITLE: a hostfs root for User-Mode Linux in which
# parity.sh compares nps with the host's procps ps. It carries busybox
# (applets by name, never as ps), Debian's dynamically linked /bin/ps with
# its libraries, nps with its libraries, the threaded fixture THR
# (rustc -O nproc/genl/uml/thr.rs), the setproctitle() fixture PROCTITLE
# (gcc -O2 -static proctitle.c), uml-init as /init, parity.sh, and a user
# `u` of uid 1000.
set -eu
USAGE="usage: mkroot.sh ROOT NPS THR PROCTITLE"
ROOT=${1:?$USAGE}
NPS=${2:?$USAGE}
THR=${3:?$USAGE}
PROCTITLE=${4:?$USAGE}
HERE=$(dirname "$0")
mkdir -p "$ROOT/bin" "$ROOT/etc" "$ROOT/proc" "$ROOT/sys" "$ROOT/dev" "$ROOT/tmp"
cp /usr/bin/busybox "$ROOT/bin/busybox"
for a in sh mount sleep cat awk cmp diff head tail wc mktemp rm id echo \
	poweroff setsid su dmesg grep sed seq mkdir ls true env; do
	ln -sf busybox "$ROOT/bin/$a"
done
# ELF files and every library ldd names, at the same paths.
copy_elf() {
	cp "$1" "$2"
	ldd "$1" 2>/dev/null | awk '/=> \// { print $3 } /^\t\/lib/ { print $1 }' |
	while read -r lib; do
		mkdir -p "$ROOT$(dirname "$lib")"
		cp -L "$lib" "$ROOT$lib"
	done
}
copy_elf /bin/ps "$ROOT/bin/ps"
copy_elf "$NPS" "$ROOT/bin/nps"
copy_elf "$THR" "$ROOT/bin/thr"
copy_elf "$PROCTITLE" "$ROOT/bin/proctitle"
cp "$HERE/parity.sh" "$ROOT/parity.sh"
cp "$HERE/uml-init" "$ROOT/init"
chmod +x "$ROOT/parity.sh" "$ROOT/init"
printf 'root:x:0:0:root:/:/bin/sh\nu:x:1000:1000:u:/tmp:/bin/sh\n' > "$ROOT/etc/passwd"
printf 'root:x:0:\nu:x:1000:\n' > "$ROOT/etc/group"
printf 'passwd: files\ngroup: files\n' > "$ROOT/etc/nsswitch.conf"
# libproc2's procps_stat_new() (behind ps' boot time, hence START, STIME
# and LSTART) gives up on UML's /proc/cpuinfo, which has no core
# topology; uml-init binds this one over it. Only ps reads it.
printf 'processor\t: 0\nvendor_id\t: User Mode Linux\nphysical id\t: 0\nsiblings\t: 1\ncore id\t\t: 0\ncpu cores\t: 1\n\n' \
	> "$ROOT/etc/cpuinfo"
