#!/usr/bin/env bash
# In-process A/B between two versions of the `aesx` crate: the crate at a git revision
# (A, default HEAD) and the working tree's (B), linked side by side into one benchmark binary
# that alternates them trial by trial (A then B, then B then A, ...). On a VM whose speed
# moves for seconds at a time, two builds timed in separate processes see different moments;
# here every pair of trials sees the same one, and the report gives each side's best, median
# and mean and the median of the per-pair ratios B / A.
#
# usage: scripts/ab.sh [-o ctr|seal|gcm] [-r REV] [-b BACKEND] [-t PAIRS] [-k "128 256"]
#                      [-s "65536 1048576"]
# Each trial runs about 1 MiB in place in calls of the given size: `ctr` (default)
# `Aes::ctr_xor_at`; `seal` `AesGcm::seal_in_place_detached` (12-byte nonce, 13 bytes of AAD);
# `gcm` a seal and the open of its result (`open_in_place_detached`, tag checked) per call.
set -euo pipefail

rev=HEAD
op=ctr
backend=""
pairs=150
keys="128 256"
sizes="16384 65536 1048576"
while getopts "o:r:b:t:k:s:" o; do
  case "$o" in
    o) op="$OPTARG" ;;
    r) rev="$OPTARG" ;;
    b) backend="$OPTARG" ;;
    t) pairs="$OPTARG" ;;
    k) keys="$OPTARG" ;;
    s) sizes="$OPTARG" ;;
    *) sed -n '2,13p' "$0"; exit 2 ;;
  esac
done

case "$op" in
  ctr | seal | gcm) ;;
  *) echo "ab.sh: unknown op '$op' (ctr, seal or gcm)" >&2; exit 2 ;;
esac

root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/aesx-ab.XXXXXX")"
trap 'rm -rf "$work"' EXIT

# A copy of the library crate under another package name, without its dev-dependencies,
# tests or examples; its `workspace = true` entries resolve in the temporary workspace below,
# which carries the project's own `[workspace.*]` tables.
copy_crate() { # copy_crate SRC_DIR DEST_DIR PACKAGE_NAME
  mkdir -p "$2"
  cp -r "$1/src" "$2/"
  sed -n '1,/^\[dev-dependencies\]/p' "$1/Cargo.toml" | sed '$d' \
    | sed "s/^name = \"aesx\"/name = \"$3\"/" > "$2/Cargo.toml"
}

mkdir -p "$work/a"
git -C "$root" archive "$rev" crates/aesx | tar -x -C "$work/a"
copy_crate "$work/a/crates/aesx" "$work/aesx_a" aesx_a
copy_crate "$root/crates/aesx" "$work/aesx_b" aesx_b

mkdir -p "$work/ab/src"
{
  printf '[workspace]\nresolver = "3"\nmembers = ["ab", "aesx_a", "aesx_b"]\n\n'
  sed -n '/^\[workspace\.package\]/,/^\[profile/p' "$root/Cargo.toml" | sed '$d'
  printf '[profile.release]\ncodegen-units = 4\n'
} > "$work/Cargo.toml"
cat > "$work/ab/Cargo.toml" <<'EOF'
[package]
name = "ab"
version = "0.1.0"
edition = "2024"

[dependencies]
aesx_a = { path = "../aesx_a" }
aesx_b = { path = "../aesx_b" }
EOF
cat > "$work/ab/src/main.rs" <<'EOF'
use std::hint::black_box;
use std::time::Instant;

fn stats(v: &mut [f64], size: usize) -> (f64, f64, f64) {
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    v.sort_by(|x, y| x.total_cmp(y));
    let gb = |ns: f64| size as f64 / ns;
    (gb(v[0]), gb(v[v.len() / 2]), gb(mean))
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let (size, bits, pairs): (usize, usize, usize) =
        (a[1].parse().unwrap(), a[2].parse().unwrap(), a[3].parse().unwrap());
    let op = a[4].as_str();
    let key = vec![7u8; bits / 8];
    let backend = std::env::var("AESX_BACKEND").ok();
    let (ga, gb) = match &backend {
        Some(n) => (
            aesx_a::AesGcm::with_backend(&key, n.parse().unwrap()).unwrap(),
            aesx_b::AesGcm::with_backend(&key, n.parse().unwrap()).unwrap(),
        ),
        None => (aesx_a::AesGcm::new(&key).unwrap(), aesx_b::AesGcm::new(&key).unwrap()),
    };
    let (nonce, aad) = ([9u8; 12], [3u8; 13]);
    let (ka, kb) = match &backend {
        Some(n) => (
            aesx_a::Aes::with_backend(&key, n.parse().unwrap()).unwrap(),
            aesx_b::Aes::with_backend(&key, n.parse().unwrap()).unwrap(),
        ),
        None => (aesx_a::Aes::new(&key).unwrap(), aesx_b::Aes::new(&key).unwrap()),
    };
    let iv = [0u8; 16];
    let mut storage = vec![0u8; size + 128];
    let start = storage.as_ptr().align_offset(64);
    let buf = &mut storage[start..start + size];
    let calls = (1usize << 20) / size + 1;
    let (mut ta, mut tb) = (Vec::new(), Vec::new());
    for i in 0..pairs {
        for j in 0..2 {
            let t = Instant::now();
            // The two sides are the same code over different crates: a macro, not a closure,
            // so that each is inlined as a user's crate would get it.
            macro_rules! run {
                ($k:expr, $g:expr, $v:expr) => {{
                    for _ in 0..calls {
                        match op {
                            "ctr" => $k.ctr_xor_at(black_box(&iv), 0, black_box(&mut *buf)),
                            "seal" => {
                                black_box($g.seal_in_place_detached(&nonce, &aad, black_box(&mut *buf)).unwrap());
                            }
                            "gcm" => {
                                let tag = $g.seal_in_place_detached(&nonce, &aad, black_box(&mut *buf)).unwrap();
                                $g.open_in_place_detached(&nonce, &aad, black_box(&mut *buf), tag.as_ref()).unwrap();
                            }
                            _ => unreachable!("op checked by the script"),
                        }
                    }
                    $v.push(t.elapsed().as_nanos() as f64 / calls as f64);
                }};
            }
            if (i + j) % 2 == 0 {
                run!(ka, ga, ta);
            } else {
                run!(kb, gb, tb);
            }
        }
    }
    let mut r: Vec<f64> = ta.iter().zip(&tb).map(|(x, y)| x / y).collect();
    r.sort_by(|x, y| x.total_cmp(y));
    let (ab, am, an) = stats(&mut ta, size);
    let (bb, bm, bn) = stats(&mut tb, size);
    println!(
        "| {op} | {} | {bits} | {size} | {ab:.2} / {am:.2} / {an:.2} | {bb:.2} / {bm:.2} / {bn:.2} | {:.3} | {:.3} |",
        ka.backend().name(),
        bn / an,
        r[r.len() / 2]
    );
}
EOF
(cd "$work" && cargo build --release -q)
echo "# $op A/B in one process: A = aesx at $rev, B = the working tree"
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); $(nproc) vCPUs; load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| op | backend | key | bytes a call | A best / median / mean GB/s | B best / median / mean GB/s | B / A, means | B / A, median of pair ratios |"
echo "|---|---|---:|---:|---|---|---:|---:|"
for k in $keys; do
  for s in $sizes; do
    if [ -n "$backend" ]; then
      AESX_BACKEND="$backend" "$work/target/release/ab" "$s" "$k" "$pairs" "$op"
    else
      "$work/target/release/ab" "$s" "$k" "$pairs" "$op"
    fi
  done
done
