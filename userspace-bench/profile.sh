#!/usr/bin/env bash
# Load-independent per-lookup counts of the benchmark's lookups, under
# callgrind: instructions (Ir), data reads (Dr), D1 read misses and
# last-level read misses per lookup, counted inside profile_loop only.
# The simulated hierarchy is a fixed core (32 KiB L1d, 1 MiB L2), with
# the L2 as the last level, so that counts compare across hosts (the
# development machine is a VM on an Intel Xeon with 48 KiB L1d and
# 2 MiB L2): a "LL miss" is a line that comes from the shared L3 or DRAM,
# what a cold lookup waits for. Valgrind does not simulate prefetches: a prefetched line is
# counted as a miss of the load that uses it, so the counts say how many
# lines a lookup needs from beyond the L2, not how many it waits for in
# a row (docs/architecture.md, "Performance notes", has that analysis).
# Hardware counters would be better; this machine (a VM) has none
# (`perf stat -e instructions true` says <not supported>).
#
#   userspace-bench/profile.sh [OUT_DIR] [OPS]      # default /tmp/kfast-profile, 20000
#
# STREAMS and ALGOS (space-separated) narrow the runs; each takes a
# minute or two on an idle machine, most of it valgrind re-encoding the
# table at start-up. RECORD=1 also writes the table as
# bench/results/<date>-callgrind.json (kind "callgrind").
#
# Needs valgrind and a release build (cargo build --release -p userspace-bench).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-/tmp/kfast-profile}
ops=${2:-20000}
mkdir -p "$out"
bin=target/release/kallsyms-bench
rows="$out/rows.tsv"
: > "$rows"
printf '%-12s %-9s %10s %8s %8s %8s\n' stream algo Ir/op Dr/op D1mr/op LLdmr/op
for stream in ${STREAMS:-uniform kernel-core wchan kernel-zipf names}; do
    algos="mainline fast current tree buckets"
    case $stream in
        wchan|kernel-zipf) algos="mainline fast cached current tree buckets" ;;
        names) algos="mainline fast" ;;
    esac
    algos=${ALGOS:-$algos}
    for algo in $algos; do
        f="$out/callgrind.$stream.$algo"
        valgrind --tool=callgrind --callgrind-out-file="$f" \
            --toggle-collect='*profile_loop*' --cache-sim=yes \
            --I1=32768,8,64 --D1=32768,8,64 --LL=1048576,16,64 \
            "$bin" profile --stream "$stream" --algo "$algo" --ops "$ops" 2>/dev/null
        # The totals line: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw.
        awk -v s="$stream" -v a="$algo" -v n="$ops" '/^summary:/ {
            printf "%s\t%s\t%.1f\t%.1f\t%.2f\t%.2f\n", s, a, $2/n, $3/n, $6/n, $9/n }' "$f" |
            tee -a "$rows" |
            awk -F'\t' '{ printf "%-12s %-9s %10s %8s %8s %8s\n", $1, $2, $3, $4, $5, $6 }'
    done
done
if [ "${RECORD:-0}" = 1 ]; then
    python3 - "$rows" "$ops" <<'PY'
import datetime, json, os, subprocess, sys
rows_path, ops = sys.argv[1], int(sys.argv[2])
now = datetime.datetime.now(datetime.timezone.utc)
commit = subprocess.run(["git", "rev-parse", "--short=7", "HEAD"], capture_output=True, text=True).stdout.strip()
if subprocess.run(["git", "diff", "--quiet", "HEAD"]).returncode:
    commit += "-dirty"
rows = []
for line in open(rows_path):
    s, a, ir, dr, d1, ll = line.rstrip("\n").split("\t")
    rows.append({"stream": s, "algo": a, "ir_per_op": float(ir), "dr_per_op": float(dr),
                 "d1_read_misses_per_op": float(d1), "l2_read_misses_per_op": float(ll)})
doc = {
    "kind": "callgrind",
    "date": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
    "command": "RECORD=1 userspace-bench/profile.sh",
    "source": "userspace-bench/profile.sh: callgrind, --toggle-collect='*profile_loop*', "
              "D1 32 KiB 8-way, LL = the 1 MiB L2, 16-way; counts do not depend on the host's load",
    "commit": commit or None,
    "host": {"cpus": os.cpu_count(), "loadavg": open("/proc/loadavg").read().split()[:3]},
    "ops": ops,
    "rows": rows,
}
path = os.path.join("bench/results", now.strftime("%Y-%m-%dT%H%M%SZ") + "-callgrind.json")
with open(path, "w") as f:
    json.dump(doc, f, indent=2)
    f.write("\n")
print("recorded in", path, file=sys.stderr)
PY
fi
