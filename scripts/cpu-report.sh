#!/usr/bin/env bash
# Where aesx stands against its per-CPU performance targets on THIS machine, in one run: the
# measurements the open performance issues ask for on every CPU class (Zen 3, Zen 4, Emerald
# Rapids, ...), each with its target, as one Markdown report for the README and the closing
# note. Every number comes from a command that is also run on its own elsewhere (README,
# "Performance"); this script runs them in a fixed order and evaluates the targets:
#
#   limit     ../shared/tools/aes-limit (the AES and CLMUL ceilings per register width), when
#             that file is beside the repository (or AES_LIMIT_C names it; the percentages of
#             the other sections need it, and it runs for them whether or not this one is
#             asked for)
#   bulk      `aesx bench` CTR, ECB-enc/dec, CBC-dec at 16 KiB, AES-128/192/256, on every
#             hardware backend: % of the ceiling of the unit it uses (issue 13: >= 92% on
#             vaes256/vaes512; issue 19: >= 92% on aesni)
#   aesni     scripts/bench-aesni-peers.sh: `aesni` against OpenSSL and RustCrypto's AES-NI
#             code (issue 19: >= 1.0x the faster peer)
#   small     aesx-bench keysetup and small (issue 13: `Aes::new` + drop >= 1.5x RustCrypto;
#             16- and 64-byte CTR messages >= 1.0x)
#   gcm       `aesx bench` GCM seal/open and CTR on the selected backend with OpenSSL,
#             RustCrypto and ring (issue 11: 16 KiB seal >= 1.2x the best peer and >= 85% of
#             the lower of aesx's CTR and the GHASH ceiling; 1 and 8 KiB ahead of every peer;
#             16 B no slower than the best peer; open within 5% of seal)
#   fugue     scripts/fugue-peers.sh and scripts/fugue-spread.sh (issue 15: >= 1.5x the
#             fastest published code at 64 KiB; Fugue-512 spread over 20 processes <= 2%), when
#             ../shared/peers/fugue is there
#   provider  crates/aesx-provider/bench/run.sh speed (issue 16: >= 2x the default provider
#             at 16 KiB, >= 0.9x at 16 B; needs root and OpenSSL 3)
#
#   scripts/cpu-report.sh [SECTION...] > report.md      (default: every section)
#
# Environment: ROUNDS (alternated `aesx bench` runs per section, best per cell; default 5),
# AESX (an aesx binary; default: build target/release/aesx). Every section took about 6
# minutes on the 2-vCPU Zen 4 guest of session 18 (more where the peers and the scratch
# build of `bench-aesni-peers.sh` are not built yet); do not run anything else meanwhile (the numbers are best-of
# alternated runs, and other load still moves them). Raw outputs are kept in $OUT (default
# target/cpu-report).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
sections="${*:-limit bulk aesni small gcm fugue provider}"
for s in $sections; do
  case " limit bulk aesni small gcm fugue provider " in
    *" $s "*) ;;
    *) echo "cpu-report: unknown section '$s' (sections: limit bulk aesni small gcm fugue provider)" >&2; exit 2 ;;
  esac
done
rounds="${ROUNDS:-5}"
out="${OUT:-$root/target/cpu-report}"
mkdir -p "$out"
has() { [[ " $sections " == *" $1 "* ]]; }

if [ -z "${AESX:-}" ]; then
  cargo build --release -q -p aesx-cli >&2
  AESX="$root/target/release/aesx"
fi

dirty=$(git diff --quiet HEAD -- crates || echo ", with local changes to crates/")
echo "# aesx on this CPU: $(date -u +%Y-%m-%d), at $(git rev-parse --short HEAD)$dirty"
echo
echo "- CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')," \
  "family $(grep -m1 'cpu family' /proc/cpuinfo | cut -d: -f2 | tr -d ' ')" \
  "model $(grep -m1 '^model' /proc/cpuinfo | cut -d: -f2 | tr -d ' '), $(nproc) vCPUs"
echo "- $("$AESX" cpu | grep -E '^Backend selected' | cut -d'(' -f1)"
echo "- $("$AESX" cpu | grep -E '^Features')"
echo "- load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
# The core clock now and at the end (`scripts/clock.c`): a host that steps the vCPU's
# frequency moves every absolute number; ratios within one run are what the targets use.
clockbin="$out/clock"
ghz() { [ -x "$clockbin" ] && "$clockbin" | sed 's/$/ GHz/' || echo "not read (no C compiler)"; }
cc -O2 -o "$clockbin" "$root/scripts/clock.c" 2>/dev/null || rm -f "$clockbin"
echo "- core clock at start: $(ghz) (scripts/clock.c)"
echo

# The ceilings, as `aes-limit` prints them, into $out/limit.txt (empty without the tool);
# measured for every section that needs them, printed by `limit`.
: > "$out/limit.txt"
src="${AES_LIMIT_C:-$root/../shared/tools/aes-limit.c}"
if [ -f "$src" ]; then
  cc -O2 -o "$out/aes-limit" "$src"
  "$out/aes-limit" > "$out/limit.txt"
fi
if has limit; then
  if [ -s "$out/limit.txt" ]; then
    echo "## Ceilings (\`cc -O2 -o aes-limit ../shared/tools/aes-limit.c && ./aes-limit\`)"
    echo
    echo '```'
    cat "$out/limit.txt"
    echo '```'
    echo
  else
    echo "(no aes-limit: $src is missing, so no percentages of the ceiling below)"
    echo
  fi
fi

# Alternated `aesx bench --json` runs: ROUNDS rounds of the given arguments, all JSON lines
# appended to FILE.
bench_rounds() {
  local file=$1
  shift
  : > "$file"
  for _ in $(seq "$rounds"); do
    "$AESX" bench --json "$@" >> "$file" 2>/dev/null
  done
}

# Tables from the JSON lines and the ceilings (Python, standard library only).
report() {
  python3 - "$@" <<'PY'
import json, sys, collections
kind, data, limit = sys.argv[1], sys.argv[2], sys.argv[3]
best = collections.defaultdict(float)
for line in open(data):
    try:
        r = json.loads(line)
    except ValueError:
        continue
    k = (r["op"], r.get("key_bits"), r["size"], r["impl"], r.get("backend", "-"))
    best[k] = max(best[k], r["gbps"])
ceil = {}
for line in open(limit):
    f = line.split()
    if "not on this CPU" in line:  # e.g. "zmm   not on this CPU" on AVX2-only parts (Zen 3)
        continue
    if len(f) == 5 and f[0] in ("xmm", "ymm", "zmm"):
        ceil[f[0]] = {128: float(f[2]), 192: float(f[3]), 256: float(f[4])}
    if len(f) == 3 and f[0] in ("xmm", "ymm", "zmm") and "ghash" not in ceil.get(f[0], {}):
        ceil.setdefault(f[0], {})["ghash"] = float(f[2])
unit = {"aesni": "xmm", "vaes256": "ymm", "vaes512": "zmm"}

def peers(op, kb, size):
    return {i: v for (o, k, s, i, b), v in best.items()
            if (o, k, s) == (op, kb, size) and i != "aesx"}

def mark(ok):
    return "met" if ok else "**not met**"

if kind == "bulk":
    print("| op | key | backend | GB/s | % of ceiling | target 92% |")
    print("|---|---|---|---:|---:|---|")
    for (op, kb, size, impl, b), v in sorted(best.items()):
        if impl != "aesx" or b not in unit:
            continue
        c = ceil.get(unit[b], {}).get(kb)
        pct = f"{100 * v / c:.0f}%" if c else "-"
        ok = mark(v >= 0.92 * c) if c else "-"
        print(f"| {op} | {kb} | {b} | {v:.2f} | {pct} | {ok} |")
elif kind == "gcm":
    sel = sys.argv[4]
    print("| key | size | seal | open | open/seal | best peer seal | seal/peer | target |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    for kb in (128, 256):
        for size in sorted({k[2] for k in best if k[0] == "gcm-enc"}):
            s = best.get(("gcm-enc", kb, size, "aesx", sel), 0)
            o = best.get(("gcm-dec", kb, size, "aesx", sel), 0)
            p = peers("gcm-enc", kb, size)
            if not s or not p:
                continue
            pn, pv = max(p.items(), key=lambda kv: kv[1])
            # 16 KiB: 1.2x the best peer; 1 and 8 KiB ahead of every peer; 16 B no slower.
            need = 1.2 if size == 16384 else 1.0
            t = f"seal >= {need}x peer: {mark(s >= need * pv)}; open >= 0.95 seal: {mark(o >= 0.95 * s)}"
            print(f"| {kb} | {size} | {s:.3f} | {o:.3f} | {o / s:.2f} | {pv:.3f} ({pn}) | {s / pv:.2f}x | {t} |")
    print()
    for kb in (128, 256):
        s = best.get(("gcm-enc", kb, 16384, "aesx", sel), 0)
        c = best.get(("ctr", kb, 16384, "aesx", sel), 0)
        g = ceil.get(unit.get(sel, "-"), {}).get("ghash")
        if s and c:
            low = min(c, g) if g else c
            print(f"- AES-{kb}-GCM seal 16 KiB {s:.2f} GB/s = {100 * s / low:.0f}% of "
                  f"min(CTR {c:.2f}, GHASH ceiling {g if g else '-'}): target 85%, {mark(s >= 0.85 * low)}")
PY
}

backends=$("$AESX" cpu | sed -n 's/^Backends available: //p' | sed 's/ *(.*)//' | tr -d ' ')  # drop "(not here: ...)"
hw=$(echo "$backends" | tr ',' '\n' | grep -E '^(aesni|vaes256|vaes512)$' | paste -sd, -)
selected=$("$AESX" cpu | sed -n 's/^Backend selected: \([a-z0-9]*\).*/\1/p')

if has bulk; then
  echo "## Bulk at 16 KiB (issues 13 and 19)"
  echo
  echo "\`aesx bench --json --sizes 16K --ops ctr,ecb-enc,ecb-dec,cbc-dec --keys 128,192,256" \
    "--backends $hw\`, $rounds runs, best per cell:"
  echo
  bench_rounds "$out/bulk.json" --sizes 16K --ops ctr,ecb-enc,ecb-dec,cbc-dec \
    --keys 128,192,256 --backends "$hw"
  report bulk "$out/bulk.json" "$out/limit.txt"
  echo
fi

if has aesni; then
  echo "## \`aesni\` against OpenSSL and RustCrypto's AES-NI code (issue 19)"
  echo
  echo "\`scripts/bench-aesni-peers.sh\` (one run; its own tables and speedups; the RustCrypto" \
    "column is its AES-NI code, forced):"
  echo
  echo '```'
  bash scripts/bench-aesni-peers.sh > "$out/aesni-peers.txt" 2>&1
  # The tables, from the first one on (not the scratch build's output).
  sed -n '/^[a-z-]* AES-[0-9]*, GB\/s/,$p' "$out/aesni-peers.txt"
  echo '```'
  echo
fi

if has small; then
  echo "## Key setup and small messages from a user crate (issue 13)"
  echo
  cargo build --profile xbench -q -p aesx-bench >&2
  echo "\`target/xbench/aesx-bench keysetup --trials 25 --calls 50000\`, then \`small\`:"
  echo
  echo '```'
  target/xbench/aesx-bench keysetup --trials 25 --calls 50000 2>&1 | tee "$out/keysetup.txt"
  target/xbench/aesx-bench small 2>&1 | tee "$out/small.txt"
  echo '```'
  echo
fi

if has gcm; then
  echo "## AES-GCM on \`$selected\` against OpenSSL, RustCrypto and ring (issue 11)"
  echo
  echo "\`aesx bench --json --ops gcm-enc,gcm-dec,ctr --sizes 16,1K,8K,16K --keys 128,256" \
    "--backends $selected\`, $rounds runs, best per cell (16 B with 13 bytes of AAD):"
  echo
  bench_rounds "$out/gcm.json" --ops gcm-enc,gcm-dec,ctr --sizes 16,1K,8K,16K \
    --keys 128,256 --backends "$selected"
  report gcm "$out/gcm.json" "$out/limit.txt" "$selected"
  echo
fi

if has fugue; then
  if [ -d "$root/../shared/peers/fugue" ] || [ -n "${FUGUE_PEERS:-}" ]; then
    echo "## Fugue against the published implementations (issue 15)"
    echo
    echo "\`scripts/fugue-peers.sh $rounds\`, then \`scripts/fugue-spread.sh 20\`:"
    echo
    echo '```'
    AESX="$AESX" bash scripts/fugue-peers.sh "$rounds" > "$out/fugue-peers.txt" 2>&1
    cat "$out/fugue-peers.txt"
    AESX="$AESX" bash scripts/fugue-spread.sh 20 > "$out/fugue-spread.txt" 2>&1
    head -n 12 "$out/fugue-spread.txt"
    echo '```'
    echo
  else
    echo "(no ../shared/peers/fugue: Fugue section skipped)"
    echo
  fi
fi

if has provider; then
  echo "## OpenSSL provider (issue 16)"
  echo
  if [ "$(id -u)" = 0 ] && command -v openssl >/dev/null; then
    cargo build --release -q -p aesx-provider >&2
    echo "\`crates/aesx-provider/bench/run.sh -r $rounds speed\`:"
    echo
    bash crates/aesx-provider/bench/run.sh -r "$rounds" speed 2>&1 |
      sed -n '/^| algorithm/,/^$/p' | tee "$out/provider.txt"
    echo
    echo "Targets: >= 2x at 16 KiB, >= 0.9x at 16 B. The scp targets:" \
      "\`crates/aesx-provider/bench/run.sh scp perf\` (long, noisy; README)."
  else
    echo "(needs root and openssl: skipped)"
  fi
  echo
fi

echo "load at end: $(cut -d' ' -f1-3 /proc/loadavg); core clock at end: $(ghz); raw outputs in $out"
