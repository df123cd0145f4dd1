#!/bin/sh
# Builds libaesx in release and the C benchmark against libaesx.a, then runs it.
# Usage: crates/aesx-capi/bench/run.sh [BACKEND] [TRIALS]   (BACKEND: auto, soft, aesni, ...)
set -eu
root=$(cd "$(dirname "$0")/../../.." && pwd)
cd "$root"
cargo build --release -q -p aesx-capi
target=${CARGO_TARGET_DIR:-$root/target}/release
cc -std=c11 -O2 -Wall -Wextra -I crates/aesx-capi/include crates/aesx-capi/bench/bench.c \
    "$target/libaesx.a" -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc -o "$target/aesx-capi-bench"
exec "$target/aesx-capi-bench" "$@"
