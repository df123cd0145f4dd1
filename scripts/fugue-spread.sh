#!/usr/bin/env bash
# Run-to-run steadiness of aesx's Fugue: N fresh processes of
#   aesx bench --ops OP --sizes SIZE --json
# (each process gets its own stack/heap placement from ASLR), then per backend the best, the
# median and the worst GB/s and the spread (worst to best, relative to the best), and every
# process's numbers with the steal time around it: a slowdown shared by every backend of one
# process is the machine, a backend alone slow in some processes is placement. When a C
# compiler is present, the core clock is also read just before and after each process
# (`scripts/clock.c`): the host may step the vCPU's frequency (seen on Intel: 3.99, 4.09 and
# 4.19 GHz), which moves every backend of a process together. The probe runs between the
# processes, not during them, so it shows that the clock moves, not which processes it slowed.
#
#   scripts/fugue-spread.sh [N] [OP] [SIZE]      (defaults: 20 fugue512 64K)
#
# Environment: AESX (an aesx binary; default: build target/release/aesx).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
N=${1:-20}
OP=${2:-fugue512}
SIZE=${3:-64K}
if [ -z "${AESX:-}" ]; then
  (cd "$ROOT" && cargo build --release -q -p aesx-cli)
  AESX=$ROOT/target/release/aesx
fi
TMP=$(mktemp)
load0=$(cut -d' ' -f1-3 /proc/loadavg)
# Steal time (the hypervisor running something else on this vCPU, /proc/stat field 9, in
# clock ticks) is read around each process: a process whose worst numbers come with steal was
# slowed by the VM, not by where its memory landed.
steal() { awk '/^cpu /{print $9}' /proc/stat; }
PROCS=$(mktemp)
CLOCK=$(mktemp)
trap 'rm -f "$TMP" "$PROCS" "$CLOCK"' EXIT
if ! cc -O2 -o "$CLOCK" "$ROOT/scripts/clock.c" 2>/dev/null; then
  : >"$CLOCK"
fi
ghz() { if [ -s "$CLOCK" ]; then "$CLOCK"; fi; }
for i in $(seq 1 "$N"); do
  s0=$(steal)
  c0=$(ghz)
  out=$("$AESX" bench --ops "$OP" --sizes "$SIZE" --json 2>/dev/null |
    sed -n 's/.*"backend":"\([a-z0-9]*\)".*"gbps":\([0-9.]*\).*/\1 \2/p')
  c1=$(ghz)
  echo "$out" >>"$TMP"
  line=$(echo "$out" | grep -v '^soft ' | tr '\n' ' ')
  clk=""
  if [ -n "$c0" ]; then
    clk="clock $c0 / $c1 GHz; "
  fi
  echo "process $i: steal $(($(steal) - s0)) ticks; ${clk}$line" >>"$PROCS"
done
load1=$(cut -d' ' -f1-3 /proc/loadavg)
echo "$N fresh processes of: aesx bench --ops $OP --sizes $SIZE  (load average before: $load0, after: $load1)"
echo "backend   best    median  worst   spread (1 - worst/best)"
for b in $(cut -d' ' -f1 "$TMP" | sort -u); do
  [ "$b" = soft ] && continue
  grep "^$b " "$TMP" | cut -d' ' -f2 | sort -g | awk -v b="$b" '
    { v[NR] = $1 }
    END { med = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
          printf "%-8s  %.4f  %.4f  %.4f  %.1f%%   (all, worst first:", b, v[NR], med, v[1], 100 * (1 - v[1] / v[NR])
          for (i = 1; i <= NR; i++) printf " %.4f", v[i]
          printf ")\n" }'
done
echo "per process (GB/s per backend, the steal time the VM took, the core clock before / after):"
cat "$PROCS"
