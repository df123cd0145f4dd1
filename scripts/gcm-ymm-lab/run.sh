#!/usr/bin/env bash
# Times variants of the vaes256 GCM loop (see gen.py), interleaved, best of 400 x 20 calls of
# 16 KiB (64 iterations). Needs AVX2 + VAES + VPCLMULQDQ.
#
#   scripts/gcm-ymm-lab/run.sh [ROUNDS]      (10, 12 or 14; default 10)
#
# Prints ns per 16 KiB, GB/s and cycles per iteration at the clock that makes aes_pure's
# 8 x ROUNDS VAESENC ymm take 4 x ROUNDS cycles (2 a cycle), measured in the same run.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
R=${1:-10}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
variants=(
  "vec ctr=vec"
  "slots ctr=slots"
  "whitened ctr=whitened"
  "no_ctrshuf ctr=vec drop=ctrshuf"
  "no_datashuf drop=datashuf"
  "no_kshuf drop=kshuf"
  "no_xor drop=xor"
  "no_reduce drop=reduce"
  "no_store drop=store"
  "aes_clmul drop=clmulonly"
  "aes_only drop=aesonly,store,reduce"
  "aes_pure drop=pure"
)
V=""
S=""
for v in "${variants[@]}"; do
  set -- $v
  (cd "$T" && python3 "$OLDPWD/gen.py" "$@")
  V="$V X($1)"
  S="$S $T/k_$1.S"
done
cc -O2 -DVARIANTS="$V" -o "$T/drv" drv.c $S
"$T/drv" "$R"
