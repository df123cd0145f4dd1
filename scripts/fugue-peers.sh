#!/usr/bin/env bash
# Same-run comparison of aesx's Fugue against the published implementations.
#
#   scripts/fugue-peers.sh [ROUNDS]          (default 5 rounds)
#
# Builds the benchmark-only peers from ../shared/peers/fugue (Calik AES-NI and vperm, IBM/Jutla
# SSE4.1 and SSSE3, cpuminer-opt AES-NI, sphlib; see that folder's SOURCE.md) with its build.sh,
# checks every peer's digest against `aesx hash` on every Fugue backend of this CPU, then times
# aesx (`aesx bench --ops fugueN --sizes 64K`, all backends) and each peer (`PEER bench N 65536`)
# on a 64 KiB message, alternating implementations round after round and keeping each one's best
# round. Prints a table of GB/s (10^9 bytes/s) with the CPU, the load average and the ratios
# aesx/best peer. The peers are measured, never vendored: nothing here is part of aesx.
#
# Environment: FUGUE_PEERS (peer folder, default ../shared/peers/fugue beside the repository),
# AESX (an aesx binary; default: build target/release/aesx), PEER_BIN (where to build the peers,
# default target/fugue-peers), SIZE (message bytes, default 65536), ALGS (default
# "224 256 384 512").
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ROUNDS=${1:-5}
PEERS=${FUGUE_PEERS:-$ROOT/../shared/peers/fugue}
SIZE=${SIZE:-65536}
ALGS=${ALGS:-224 256 384 512}
OUT=${PEER_BIN:-$ROOT/target/fugue-peers}

if [ ! -x "$PEERS/build.sh" ]; then
  echo "fugue-peers: no peer sources at $PEERS (expected build.sh there)." >&2
  echo "The peers live in the team's shared folder (../shared/peers/fugue beside the repository);" >&2
  echo "set FUGUE_PEERS=/path/to/peers/fugue if it is elsewhere. Nothing was measured." >&2
  exit 1
fi

if [ -z "${AESX:-}" ]; then
  echo "building aesx (cargo build --release -p aesx-cli)..." >&2
  (cd "$ROOT" && cargo build --release -q -p aesx-cli)
  AESX=$ROOT/target/release/aesx
fi

echo "building peers into $OUT..." >&2
"$PEERS/build.sh" "$OUT" >&2
PEER_LIST=(calik-aesni calik-vperm jutla-sse41 jutla-ssse3 cpuminer-aesni sphlib)

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# --- digests ------------------------------------------------------------------------------------
# Inputs: empty, "abc", SIZE random bytes, and 1000003 random bytes (the last word is partial).
: >"$TMP/empty"
printf abc >"$TMP/abc"
head -c "$SIZE" /dev/urandom >"$TMP/msg"
head -c 1000003 /dev/urandom >"$TMP/odd"
BACKENDS=""  # the Fugue backends this CPU runs (`aesx hash --backend` refuses the others)
for b in soft vpaes aesni gfni; do
  "$AESX" hash --alg fugue256 --backend "$b" "$TMP/abc" >/dev/null 2>&1 && BACKENDS="$BACKENDS $b"
done
declare -A HAS  # HAS[peer:bits]=1 when the peer implements that size
bad=0
for bits in $ALGS; do
  for f in empty abc msg odd; do
    want=""
    for b in $BACKENDS; do
      d=$("$AESX" hash --alg "fugue$bits" --backend "$b" "$TMP/$f" | cut -d' ' -f1)
      if [ -z "$want" ]; then
        want=$d
      elif [ "$d" != "$want" ]; then
        echo "DIGEST MISMATCH: aesx $b fugue$bits $f: $d != $want" >&2
        bad=1
      fi
    done
    for p in "${PEER_LIST[@]}"; do
      set +e
      d=$("$OUT/$p" digest "$bits" "$TMP/$f" 2>/dev/null)
      rc=$?
      set -e
      if [ $rc -eq 2 ]; then continue; fi
      HAS[$p:$bits]=1
      if [ $rc -ne 0 ] || [ "$d" != "$want" ]; then
        echo "DIGEST MISMATCH: $p fugue$bits $f: '$d' != aesx '$want'" >&2
        bad=1
      fi
    done
  done
done
if [ $bad -ne 0 ]; then
  echo "fugue-peers: digests differ; timings would compare different functions. Stopping." >&2
  exit 1
fi
echo "digests: every peer equals aesx (backends:$BACKENDS) on empty, abc, $SIZE and 1000003 random bytes" >&2

# --- timing -------------------------------------------------------------------------------------
declare -A BEST  # BEST[impl:bits] = best GB/s over the rounds
best() { # key value
  local k=$1 v=$2
  if [ -z "${BEST[$k]:-}" ] || awk "BEGIN{exit !($v > ${BEST[$k]})}"; then BEST[$k]=$v; fi
}
load0=$(cut -d' ' -f1-3 /proc/loadavg)
for r in $(seq 1 "$ROUNDS"); do
  for bits in $ALGS; do
    # aesx: every Fugue backend of this CPU (soft is too slow to matter and is left out below).
    while read -r line; do
      b=$(echo "$line" | sed -n 's/.*"backend":"\([a-z0-9]*\)".*/\1/p')
      g=$(echo "$line" | sed -n 's/.*"gbps":\([0-9.]*\).*/\1/p')
      [ -n "$b" ] && [ -n "$g" ] && best "aesx-$b:$bits" "$g"
    done < <("$AESX" bench --ops "fugue$bits" --sizes "$SIZE" --json 2>/dev/null)
    for p in "${PEER_LIST[@]}"; do
      [ -n "${HAS[$p:$bits]:-}" ] || continue
      g=$("$OUT/$p" bench "$bits" "$SIZE" 15 3 | sed -n 's/^gbps=\([0-9.]*\).*/\1/p')
      best "$p:$bits" "$g"
    done
  done
  echo "round $r/$ROUNDS done" >&2
done
load1=$(cut -d' ' -f1-3 /proc/loadavg)

# --- table --------------------------------------------------------------------------------------
cpu=$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')
fam=$(grep -m1 'cpu family' /proc/cpuinfo | sed 's/.*: //')
model=$(grep -m1 '^model[[:space:]]*:' /proc/cpuinfo | sed 's/.*: //')
echo "CPU: $cpu (family $fam, model $model); load average before: $load0, after: $load1"
echo "Fugue at $SIZE B per call, GB/s (10^9 B/s), best of $ROUNDS alternated rounds"
echo "command: scripts/fugue-peers.sh $ROUNDS"
AESX_COLS=()
for b in vpaes aesni gfni; do
  for bits in $ALGS; do
    if [ -n "${BEST[aesx-$b:$bits]:-}" ]; then AESX_COLS+=("aesx-$b"); break; fi
  done
done
COLS=("${AESX_COLS[@]}" "${PEER_LIST[@]}")
printf '| %-9s |' "GB/s"
for c in "${COLS[@]}"; do printf ' %s |' "$c"; done
printf ' best aesx / best peer | aesx-vpaes / best non-AES-NI peer |\n'
printf '|---|'
for _ in "${COLS[@]}"; do printf -- '---:|'; done
printf -- '---:|---:|\n'
for bits in $ALGS; do
  printf '| Fugue-%s |' "$bits"
  for c in "${COLS[@]}"; do printf ' %s |' "${BEST[$c:$bits]:--}"; done
  ba=0; bp=0; bn=0
  for c in "${AESX_COLS[@]}"; do
    v=${BEST[$c:$bits]:-0}; awk "BEGIN{exit !($v > $ba)}" && ba=$v
  done
  for p in "${PEER_LIST[@]}"; do
    v=${BEST[$p:$bits]:-0}; awk "BEGIN{exit !($v > $bp)}" && bp=$v
    case $p in *aesni) ;; *) awk "BEGIN{exit !($v > $bn)}" && bn=$v ;; esac
  done
  vp=${BEST[aesx-vpaes:$bits]:-0}
  awk -v a="$ba" -v p="$bp" -v v="$vp" -v n="$bn" \
    'BEGIN{printf " %s |", (p>0? sprintf("%.2fx", a/p) : "-"); printf " %s |\n", (n>0 && v>0? sprintf("%.2fx", v/n) : "-")}'
done
