#!/usr/bin/env bash
# Runs one fuzz target (or `all`) for a number of seconds with cargo-fuzz on stable Rust:
#
#   fuzz/run.sh TARGET SECONDS [libFuzzer options...]     e.g. fuzz/run.sh capi 600
#   fuzz/run.sh all 60                                    every target, 60 s each (CI)
#   fuzz/run.sh list                                      the targets
#
# Builds with `--sanitizer none` (AddressSanitizer needs nightly Rust; the targets check
# results against models and references, and Rust's own bounds checks plus debug assertions
# and overflow checks stay on). New inputs go to fuzz/target/corpus/TARGET (kept between
# runs, not committed); the committed seeds in fuzz/corpus/TARGET are read too. A crash,
# mismatch (a failed assertion) or hang (-timeout, 10 s) stops the run with a non-zero exit
# and leaves the input in fuzz/artifacts/TARGET/; replay it with
# `cargo fuzz run -s none TARGET fuzz/artifacts/TARGET/crash-...`.
# Prints the number of executions of each target at the end.
set -euo pipefail
cd "$(dirname "$0")"
TARGETS="capi cli_crypt cli_hash file_read pkcs7 modes gcm provider"

if [ "${1:-}" = list ]; then
  echo "$TARGETS"
  exit 0
fi
if [ $# -lt 2 ]; then
  echo "usage: fuzz/run.sh TARGET|all SECONDS [libFuzzer options]; targets: $TARGETS" >&2
  exit 2
fi
target=$1
secs=$2
shift 2

if ! cargo fuzz --version >/dev/null 2>&1; then
  t=$SECONDS
  echo "fuzz: installing cargo-fuzz (cargo install --locked cargo-fuzz@0.13.2)"
  cargo install --locked cargo-fuzz@0.13.2
  echo "fuzz: installed cargo-fuzz in $((SECONDS - t)) s"
fi

t=$SECONDS
cargo fuzz build -s none
echo "fuzz: built all targets in $((SECONDS - t)) s"

run_one() {
  local name=$1 log
  shift
  mkdir -p "target/corpus/$name" "corpus/$name"
  log=$(mktemp)
  echo "== fuzz: $name for $secs s"
  local rc=0
  cargo fuzz run -s none "$name" "target/corpus/$name" "corpus/$name" -- \
    -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=4096 \
    -print_final_stats=1 "$@" >"$log" 2>&1 || rc=$?
  grep -E '(DONE|stat::number_of_executed_units|stat::peak_rss_mb|ERROR|SUMMARY|panicked|Test unit written|slowest unit)' "$log" | grep -v '^ *[0-9]*: ' || true
  if [ $rc -ne 0 ]; then
    tail -40 "$log"
    echo "fuzz: $name FAILED (exit $rc); the input is in fuzz/artifacts/$name/"
  fi
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  echo "fuzz: $name ${execs:-?} executions in $secs s, exit $rc"
  summary+=("$name ${execs:-?} $rc")
  rm -f "$log"
  return $rc
}

summary=()
status=0
if [ "$target" = all ]; then
  for n in $TARGETS; do
    case " ${FUZZ_SKIP:-} " in *" $n "*) echo "== fuzz: $n skipped (FUZZ_SKIP)"; continue ;; esac
    run_one "$n" "$@" || status=1
  done
else
  run_one "$target" "$@" || status=1
fi
echo "== fuzz summary (target executions exit):"
printf '  %s\n' "${summary[@]}"
exit $status
