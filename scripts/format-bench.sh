#!/usr/bin/env bash
# The aesx file format on a 1 GiB file in tmpfs (issue 18's targets, issue 13's whole-file
# target): `cp`, `aesx encrypt`/`decrypt` with a key file, `age` encrypt/decrypt (X25519
# identity, Debian's package, installed when missing), `openssl enc -aes-256-ctr` (no
# integrity: the unauthenticated baseline) and the openssl-enc-compatible
# `aesx encrypt --iv-hex` (AES-256-CTR), in alternated trials; prints best and median wall
# time per command, the ratios to cp and to age from the same run, the best CPU time (user +
# system, all threads: less sensitive than wall time to other jobs on the machine), peak RSS
# and the load average.
#
#   scripts/format-bench.sh [TRIALS=7] [SIZE_MIB=1024]
#
# Needs /usr/bin/time (GNU time, Debian package `time`) for peak RSS. Uses /dev/shm.
set -euo pipefail
cd "$(dirname "$0")/.."
trials=${1:-7}
mib=${2:-1024}

command -v age >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq age; }
[ -x /usr/bin/time ] || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq time; }
cargo build --release -q -p aesx-cli
aesx=$PWD/target/release/aesx

w=$(mktemp -d /dev/shm/aesx-format-bench.XXXXXX)
trap 'rm -rf "$w"' EXIT
cd "$w"
head -c $((mib << 20)) /dev/urandom > src
"$aesx" keygen key
age-keygen -o age.key 2>/dev/null
recipient=$(age-keygen -y age.key)
"$aesx" encrypt -q --key-file key src src.aesx
age -r "$recipient" -o src.age src
iv=000102030405060708090a0b0c0d0e0f
hexkey=$(od -An -tx1 -v key | tr -d ' \n')

declare -A cmds=(
  [cp]="cp src out"
  [aesx-enc]="$aesx encrypt -q --key-file key src out"
  [aesx-dec]="$aesx decrypt -q --key-file key src.aesx out"
  [age-enc]="age -r $recipient -o out src"
  [age-dec]="age -d -i age.key -o out src.age"
  [aesx-ctr]="$aesx encrypt -q --key-hex $hexkey --iv-hex $iv src out"
  [ossl-ctr]="openssl enc -aes-256-ctr -K $hexkey -iv $iv -in src -out out"
)
order=(cp aesx-enc age-enc aesx-dec age-dec aesx-ctr ossl-ctr)
declare -A times rss cpu
echo "load before: $(cat /proc/loadavg)"
openssl version
for ((i = 0; i < trials; i++)); do
  for name in "${order[@]}"; do
    rm -f out
    sync
    /usr/bin/time -f "%e %M %U %S" -o t.out ${cmds[$name]}
    read -r secs kib us ss < t.out
    times[$name]+="$secs "
    cpu[$name]+="$(awk -v u="$us" -v s="$ss" 'BEGIN {printf "%.2f", u + s}') "
    [ "${rss[$name]:-0}" -ge "$kib" ] || rss[$name]=$kib
  done
done
cmp <("$aesx" decrypt -q --key-file key src.aesx -) src
echo "load after: $(cat /proc/loadavg)"
grep -m1 'model name' /proc/cpuinfo
best() { tr ' ' '\n' <<<"$1" | grep . | sort -n | head -1; }
median() { tr ' ' '\n' <<<"$1" | grep . | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
cpb=$(best "${times[cp]}")
printf '%-9s %8s %8s %8s %15s %10s %12s\n' command best_s median_s vs_cp faster_than best_cpu_s peak_rss_MiB
for name in "${order[@]}"; do
  b=$(best "${times[$name]}")
  m=$(median "${times[$name]}")
  # The aesx format against age; aesx's CTR against openssl enc's.
  case $name in
    aesx-enc) peer=age; age=$(best "${times[age-enc]}") ;;
    aesx-dec) peer=age; age=$(best "${times[age-dec]}") ;;
    aesx-ctr) peer=openssl; age=$(best "${times[ossl-ctr]}") ;;
    *) age= ;;
  esac
  vsage=${age:+$(awk -v a="$age" -v b="$b" -v p="$peer" 'BEGIN {printf "%.2fx %s", a / b, p}')}
  printf '%-9s %8s %8s %8s %15s %10s %12s\n' "$name" "$b" "$m" \
    "$(awk -v a="$b" -v c="$cpb" 'BEGIN {printf "%.2f", a / c}')" "${vsage:--}" \
    "$(best "${cpu[$name]}")" \
    "$(awk -v k="${rss[$name]}" 'BEGIN {printf "%.1f", k / 1024}')"
done
