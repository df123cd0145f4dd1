#!/usr/bin/env bash
# In-process A/B between two versions of the `aesx` crate: the crate at a git revision
# (A, default HEAD) and the working tree's (B), linked side by side into one benchmark binary
# that alternates them trial by trial (A then B, then B then A, ...). On a VM whose speed
# moves for seconds at a time, two builds timed in separate processes see different moments;
# here every pair of trials sees the same one, and the report gives each side's best, median
# and mean and the median of the per-pair ratios B / A.
# Where each copy lands in the binary can matter at small sizes: the same code in both slots
# read B / A = 0.87-1.21 at 16 and 64 bytes (session 31, Zen 3; the stack wipe's loop, since
# aligned, was the cause: 0.97-1.03 after). So the script builds the binary twice, A in the
# first slot then B in it, runs both, and also prints the geometric mean of the two
# layouts' ratios, which cancels the slot's own effect.
#
# usage: scripts/ab.sh [-o ctr|seal|open|gcm] [-r REV] [-b BACKEND] [-t PAIRS] [-k "128 256"]
#                      [-s "65536 1048576"]
# Each trial runs about 1 MiB in place in calls of the given size: `ctr` (default)
# `Aes::ctr_xor_at`; `seal` `AesGcm::seal_in_place_detached` (12-byte nonce, 13 bytes of AAD);
# `open` `open_in_place_detached` (tag checked) of a sealed message copied into the buffer
# before each call; `gcm` a seal and the open of its result per call.
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
    *) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 2 ;;
  esac
done

case "$op" in
  ctr | seal | open | gcm) ;;
  *) echo "ab.sh: unknown op '$op' (ctr, seal, open or gcm)" >&2; exit 2 ;;
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
    // 1: slot a holds B (the working tree) and slot b holds A: the results are swapped back
    // before printing, so that every row reads A = the revision, B = the working tree.
    let swapped = a[5] == "1";
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
    // `open`: one sealed message (the same bytes from both sides), copied in before each call.
    let mut sealed = buf.to_vec();
    let sealed_tag = ga.seal_in_place_detached(&nonce, &aad, &mut sealed).unwrap();
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
                            "open" => {
                                buf.copy_from_slice(&sealed);
                                $g.open_in_place_detached(&nonce, &aad, black_box(&mut *buf), sealed_tag.as_ref()).unwrap();
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
    if swapped {
        std::mem::swap(&mut ta, &mut tb);
    }
    let mut r: Vec<f64> = ta.iter().zip(&tb).map(|(x, y)| x / y).collect();
    r.sort_by(|x, y| x.total_cmp(y));
    let (ab, am, an) = stats(&mut ta, size);
    let (bb, bm, bn) = stats(&mut tb, size);
    println!(
        "| {op} | {} | {bits} | {size} | {} | {ab:.2} / {am:.2} / {an:.2} | {bb:.2} / {bm:.2} / {bn:.2} | {:.3} | {:.3} |",
        ka.backend().name(),
        if swapped { "B in slot a" } else { "A in slot a" },
        bn / an,
        r[r.len() / 2]
    );
}
EOF
# Two builds: A in the first slot (layout 0), then B in it (layout 1).
build_layout() { # build_layout LAYOUT SLOT_A_SRC SLOT_B_SRC
  rm -rf "$work/aesx_a" "$work/aesx_b"
  copy_crate "$2" "$work/aesx_a" aesx_a
  copy_crate "$3" "$work/aesx_b" aesx_b
  (cd "$work" && cargo build --release -q)
  cp "$work/target/release/ab" "$work/ab-$1"
}
build_layout 0 "$work/a/crates/aesx" "$root/crates/aesx"
build_layout 1 "$root/crates/aesx" "$work/a/crates/aesx"
echo "# $op A/B in one process: A = aesx at $rev, B = the working tree"
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); $(nproc) vCPUs; load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| op | backend | key | bytes a call | layout | A best / median / mean GB/s | B best / median / mean GB/s | B / A, means | B / A, median of pair ratios |"
echo "|---|---|---:|---:|---|---|---|---:|---:|"
run() { # run SIZE KEY LAYOUT
  if [ -n "$backend" ]; then
    AESX_BACKEND="$backend" "$work/ab-$3" "$1" "$2" "$pairs" "$op" "$3"
  else
    "$work/ab-$3" "$1" "$2" "$pairs" "$op" "$3"
  fi
}
for k in $keys; do
  for s in $sizes; do
    r0="$(run "$s" "$k" 0)"
    r1="$(run "$s" "$k" 1)"
    printf '%s\n%s\n' "$r0" "$r1"
    # The geometric mean of the two layouts' ratios (means, then medians of pair ratios).
    printf '%s\n%s\n' "$r0" "$r1" | awk -F'|' '
      { m[NR] = $9 + 0; p[NR] = $10 + 0; op = $2; be = $3; key = $4; sz = $5 }
      END { printf "|%s|%s|%s|%s| both | | | **%.3f** | **%.3f** |\n", op, be, key, sz,
            sqrt(m[1] * m[2]), sqrt(p[1] * p[2]) }'
  done
done
