#!/bin/sh
# parity.sh NPS [PS [NAME COL ARGS...]]: nps on the nproc source (forced: --source nproc, so
# that a missing family fails instead of falling back to /proc) against
# procps ps on a kernel with CONFIG_NPROC, for the option sets listed below. Run it in
# the guest as every user whose view matters (root, then an unprivileged
# uid): wchan and cmdline follow the reader's permissions.
#
# Every case runs ps, nps, ps with the same arguments; a try counts when
# the two ps runs print as many lines (no task came or went in between),
# and the case passes when every line nps printed, its exit status
# included, is byte for byte the same line of one of the two ps runs, or
# has in each field the value of one of them or a number between theirs:
# a task that changed while the three ran (a kworker's current workqueue
# in its name, a %CPU that moves as the task ages) shows its old state,
# its new one, or for a number one in between. Tasks that come and go cost tries; a real difference fails every
# try, and the case fails with the last diff; a case whose ps runs never
# agree on the number of lines fails too. Two lines are dropped
# from every output: the lister's own (its pid and command differ by
# nature) and this script's shell's (it is never idle, so its %CPU moves
# between any two runs).
#
# PARITY_STRICT=1 takes the stricter rule of nproc-bench's parity on a
# settled machine: every line of nps byte for byte the same line of one
# of the two ps runs, no number in between; only a kworker's workqueue
# name (the end of its comm, which wq_worker_comm() changes as it works:
# under TCG several times in the seconds two ps runs take) may differ, and
# a case that passes only so says it.
#
# With NAME COL ARGS after PS, the one case `ps ARGS` (COL its PID column)
# runs instead of the list below.
#
# Output: one "PASS name" or "FAIL name" line per case, a diff for each
# failure, and "parity: N passed, M failed" last; exit status 0 only when
# all passed.
NPS=${1:?usage: parity.sh NPS [PS [NAME COL ARGS...]]}
PS=${2:-/bin/ps}
STRICT=${PARITY_STRICT:-0}
TRIES=${PARITY_TRIES:-30}
unset COLUMNS LIBPROC_HIDE_KERNEL PS_FORMAT PS_PERSONALITY
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT

# run OUT COL PROG ARGS...: PROG's stdout without the lines whose column
# COL is its own pid or this shell's, then its exit status as a last line.
run() {
	out=$1 col=$2
	shift 2
	sh -c 'echo $$ > "$0.pid"; exec "$@"' "$out" "$@" > "$out.raw"
	rc=$?
	awk -v col="$col" -v pid="$(cat "$out.pid")" -v self="$$" \
		'$col != pid && $col != self' "$out.raw" > "$out"
	echo "exit $rc" >> "$out"
}

# same_lines A N B: as many lines in A, N and B, and every line of N the
# same line of A or of B, or else (but with PARITY_STRICT=1) field by
# field: each field of N equals A's or B's, or is a number between them.
# A value that only grows or shrinks (a task's %CPU as it ages, its CPU
# time) can pass through a third value while the three run; where A and B
# agree, N must equal them.
same_lines() {
	awk -v a="$1" -v b="$3" -v strict="$STRICT" '
		function num(s) { return s ~ /^[0-9]+(\.[0-9]+)?$/ }
		function fields_ok(n, x, y,    fn, fx, fy, i, k, lo, hi) {
			k = split(n, fn)
			if (split(x, fx) != k || split(y, fy) != k)
				return 0
			for (i = 1; i <= k; i++) {
				if (fn[i] == fx[i] || fn[i] == fy[i])
					continue
				if (!num(fn[i]) || !num(fx[i]) || !num(fy[i]))
					return 0
				lo = fx[i] + 0; hi = fy[i] + 0
				if (lo > hi) { lo = fy[i] + 0; hi = fx[i] + 0 }
				if (fn[i] + 0 < lo || fn[i] + 0 > hi)
					return 0
			}
			return 1
		}
		FILENAME == a { A[FNR] = $0; na = FNR; next }
		FILENAME == b { B[FNR] = $0; nb = FNR; next }
		{ N[FNR] = $0; nn = FNR }
		END {
			if (na != nn || nb != nn)
				exit 1
			for (i = 1; i <= nn; i++)
				if (N[i] != A[i] && N[i] != B[i] && (strict || !fields_ok(N[i], A[i], B[i])))
					exit 1
		}' "$1" "$3" "$2"
}
# mask_wq FILE: FILE.wq, every kworker's workqueue name replaced by "*".
mask_wq() {
	sed 's/\(kworker\/[^ -]*\)-[^] ]*/\1-*/' "$1" > "$1.wq"
}

pass=0 fail=0
# check NAME COL ARGS...: COL is the PID column of this format.
check() {
	name=$1 col=$2
	shift 2
	i=0 settled=
	while [ "$i" -lt "$TRIES" ]; do
		i=$((i + 1))
		run "$tmp/a" "$col" "$PS" "$@"
		run "$tmp/n" "$col" "$NPS" --source nproc "$@"
		run "$tmp/b" "$col" "$PS" "$@"
		[ "$(wc -l < "$tmp/a")" -eq "$(wc -l < "$tmp/b")" ] || continue
		settled=1
		if same_lines "$tmp/a" "$tmp/n" "$tmp/b"; then
			echo "PASS $name ($(($(wc -l < "$tmp/a") - 1)) lines, try $i)"
			pass=$((pass + 1))
			return
		fi
		if [ "$STRICT" = 1 ]; then
			for f in a n b; do
				mask_wq "$tmp/$f"
			done
			if same_lines "$tmp/a.wq" "$tmp/n.wq" "$tmp/b.wq"; then
				echo "PASS $name ($(($(wc -l < "$tmp/a") - 1)) lines once kworkers' workqueue names are masked, try $i)"
				pass=$((pass + 1))
				return
			fi
		fi
		# A task may have changed twice, or between the nps run and both
		# ps runs around it: keep the difference and try again.
		diff "$tmp/a" "$tmp/n" > "$tmp/diff"
	done
	fail=$((fail + 1))
	if [ -z "$settled" ]; then
		echo "FAIL $name: ps printed a different number of lines in each of $TRIES tries"
		return
	fi
	echo "FAIL $name: nps $* differs from ps in every settled try; the last:"
	head -40 "$tmp/diff"
}

# A case given after PS runs alone.
if [ $# -gt 2 ]; then
	shift 2
	check "$@"
	echo "parity: $pass passed, $fail failed ($(id -un 2>/dev/null || id -u))"
	[ "$fail" -eq 0 ]
	exit
fi

check "ax" 1 ax
check "aux" 2 aux
check "-e" 1 -e
check "-ef" 2 -ef
check "-el" 4 -el
check "-L" 1 -L
check "-eL" 1 -eL
check "-eLf" 2 -eLf
check "-eo list" 1 -eo pid,tid,ppid,uid,stat,vsz,rss,time,nlwp,comm,wchan
check "-eo args,wchan" 1 -eo pid,args,wchan
check "aux ww" 2 auxww
# More forms: BSD and tolerated spellings, formats, forests, threads,
# sorting, selection by list. (-m and m are left out: they print a thread
# line without a pid for this script's shell, whose state is racy.)
check "ax u" 2 ax u
check "aux w" 2 aux w
check "-aux" 2 -aux
check "-ax" 1 -ax
check "-eF" 2 -eF
check "-ely" 3 -ely
check "-ej" 1 -ej
check "axjf" 2 axjf
check "-ejH" 1 -ejH
check "--forest" 1 -e --forest
check "-eT" 1 -eT
check "axH" 1 axH
check "-ec" 1 -ec
check "-e -O rss" 1 -e -O rss
check "--sort=-rss" 1 -eo pid,rss,comm --sort=-rss
check "k -pid" 1 ax k -pid
check "-u root" 1 -u root
check "U root" 1 U root
check "-C sh" 1 -C sh
check "-N -p 1" 1 -N -p 1
check "--ppid 1" 1 --ppid 1
check "--cols 60" 1 -e --cols 60
echo "parity: $pass passed, $fail failed ($(id -un 2>/dev/null || id -u))"
[ "$fail" -eq 0 ]
