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
# The host can also slow throughput-bound code for seconds without steal time or a clock change
# (perhaps other work on this vCPU's sibling hyperthread; seen on Zen 3: every backend 20-30%
# slower in runs of consecutive processes, while the clock probe, a latency-bound chain, read
# the usual rate). So
# a control runs right after each aesx process when the published peers have been built
# (`scripts/fugue-peers.sh`): the fastest AES-NI peer's own benchmark of the same hash and size,
# reported beside aesx with its own spread. Processes where the control also dips were slowed
# by the machine; aesx slow with the control at its best is placement.
#
# Each process measures every Fugue backend but `soft` with `--trials 400` (about half a
# second each): `aesx bench`'s default 40 trials (about 50 ms) often fall wholly inside a slow
# spell of this kind, and the spread then shows the machine, not aesx (seen on Zen 3: 20-30%
# with 40 trials, while an in-process loop of the same hash kept 0.172 GB/s at every input
# offset within a page).
#
#   scripts/fugue-spread.sh [N] [OP] [SIZE]      (defaults: 20 fugue512 64K)
#
# Environment: AESX (an aesx binary; default: build target/release/aesx); TRIALS (default 400).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
N=${1:-20}
OP=${2:-fugue512}
SIZE=${3:-64K}
if [ -z "${AESX:-}" ]; then
  (cd "$ROOT" && cargo build --release -q -p aesx-cli)
  AESX=$ROOT/target/release/aesx
fi
TRIALS=${TRIALS:-400}
# The Fugue backends this CPU runs, but `soft` (a reference, not a contender).
fugue=$("$AESX" cpu | sed -n 's/^Fugue backends available: \([^(]*\).*/\1/p' | tr -d ' ' |
  tr ',' '\n' | grep -v '^soft$' | paste -sd, -)
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
# The control: cpuminer-opt's AES-NI Fugue (else Calik's), `bench BITS BYTES TRIALS TRIAL_MS`.
bits=${OP#fugue}
bytes=$(numfmt --from=iec "$SIZE" 2>/dev/null || echo "")
control=""
for p in cpuminer-aesni calik-aesni; do
  if [[ "$bits" =~ ^(224|256|384|512)$ && -n "$bytes" && -x "$ROOT/target/fugue-peers/$p" ]] &&
    "$ROOT/target/fugue-peers/$p" bench "$bits" "$bytes" 1 1 >/dev/null 2>&1; then
    control=$p
    break
  fi
done
for i in $(seq 1 "$N"); do
  s0=$(steal)
  c0=$(ghz)
  out=$("$AESX" bench --ops "$OP" --sizes "$SIZE" --backends "$fugue" --trials "$TRIALS" --json 2>/dev/null |
    sed -n 's/.*"backend":"\([a-z0-9]*\)".*"gbps":\([0-9.]*\).*/\1 \2/p')
  c1=$(ghz)
  if [ -n "$control" ]; then
    g=$("$ROOT/target/fugue-peers/$control" bench "$bits" "$bytes" 25 8 | sed -n 's/^gbps=\([0-9.]*\).*/\1/p')
    out=$(printf '%s\ncontrol:%s %s' "$out" "$control" "$g")
  fi
  echo "$out" >>"$TMP"
  line=$(echo "$out" | grep -v '^soft ' | tr '\n' ' ')
  clk=""
  if [ -n "$c0" ]; then
    clk="clock $c0 / $c1 GHz; "
  fi
  echo "process $i: steal $(($(steal) - s0)) ticks; ${clk}$line" >>"$PROCS"
done
load1=$(cut -d' ' -f1-3 /proc/loadavg)
echo "$N fresh processes of: aesx bench --ops $OP --sizes $SIZE --backends $fugue --trials $TRIALS  (load average before: $load0, after: $load1)"
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
if [ -z "$control" ]; then
  echo "(no control: build the peers with scripts/fugue-peers.sh to time one after each process)"
fi
echo "per process (GB/s per backend, the steal time the VM took, the core clock before / after):"
cat "$PROCS"
