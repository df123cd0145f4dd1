#!/usr/bin/env bash
# The `aesni` backend against its peers as they run on a CPU without VAES, on any CPU.
#
#   scripts/bench-aesni-peers.sh [aesx bench options]
#   (default: --sizes 16K --ops ctr,ecb-enc,ecb-dec,cbc-dec --keys 128,192,256)
#
# RustCrypto `aes` 0.9 detects VAES at run time and then runs its VAES backend, so on a
# VAES machine (Zen 3 and later, Ice Lake and later) `aesx bench --backends aesni` compares
# aesx's xmm kernels with RustCrypto's ymm/zmm ones. On the CPUs `aesni` is for (Haswell to
# Cascade Lake, Zen 1/2) RustCrypto runs its AES-NI backend. This script builds `aesx bench`
# in a scratch copy of the workspace against a copy of the same `aes` release whose two
# run-time VAES checks are replaced by `false` (the AES-NI backend then runs, as on a CPU
# without VAES), and runs the benchmark with `--backends aesni`. OpenSSL 3 uses AES-NI on xmm
# on every x86-64 and is unchanged. Nothing in the repository is modified.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=${AESX_SCRATCH:-$(mktemp -d /tmp/aesx-aesni-peers.XXXXXX)}
echo "scratch: $work"
mkdir -p "$work/ws"
git -C "$root" archive HEAD | tar -x -C "$work/ws"
cd "$work/ws"
aes_dir=$(cargo metadata --locked --format-version 1 |
  python3 -c 'import json,sys; m=json.load(sys.stdin); print(next(p["manifest_path"] for p in m["packages"] if p["name"]=="aes" and p["version"].startswith("0.9")))')
aes_dir=$(dirname "$aes_dir")
rm -rf "$work/aes" && cp -r "$aes_dir" "$work/aes"
n=$(grep -c 'self.token.vaes\(256\|512\).get()' "$work/aes/src/lib.rs" || true)
if [ "$n" -ne 4 ]; then
  echo "expected 4 VAES checks in $aes_dir/src/lib.rs, found $n: this aes release is laid out differently" >&2
  exit 1
fi
sed -i 's/self\.token\.vaes\(256\|512\)\.get()/false/' "$work/aes/src/lib.rs"
patch=(--config "patch.crates-io.aes.path=\"$work/aes\"")
cargo build --release -p aesx-cli "${patch[@]}"
used=$(cargo metadata --format-version 1 "${patch[@]}" |
  python3 -c 'import json,sys; m=json.load(sys.stdin); print(next(p["manifest_path"] for p in m["packages"] if p["name"]=="aes" and p["version"].startswith("0.9")))')
case "$used" in
  "$work/aes/"*) echo "RustCrypto aes: $used (VAES checks off)" ;;
  *) echo "the patch was not applied ($used)" >&2; exit 1 ;;
esac
if [ $# -eq 0 ]; then
  set -- --sizes 16K --ops ctr,ecb-enc,ecb-dec,cbc-dec --keys 128,192,256
fi
./target/release/aesx bench --backends aesni "$@"
