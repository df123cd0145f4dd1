#!/usr/bin/env bash
# Times variants of the xmm CBC-decryption loop (see gen.py), interleaved, best of 600 x 20
# calls over 16 KiB (in place, in L1). Needs AES-NI.
#
#   scripts/cbc-xmm-lab/run.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
variants=(
  "fold128 n=12" "after128 n=12 mode=after" "fold128_8 n=8" "after128_8 n=8 mode=after"
  "fold128_mem n=12 key=mem"
  "fold192 n=12 nr=12" "after192 n=12 nr=12 mode=after"
  "fold256 n=12 nr=14" "after256 n=12 nr=14 mode=after"
)
V=""
S=""
for v in "${variants[@]}"; do
  set -- $v
  nm=$1
  n=$(echo "$*" | sed -n 's/.* n=\([0-9]*\).*/\1/p')
  (cd "$T" && python3 "$OLDPWD/gen.py" "$@")
  V="$V X($nm,${n:-12})"
  S="$S $T/k_$nm.S"
done
cc -O2 -DVARIANTS="$V" -o "$T/drv" drv.c $S
"$T/drv"
