#!/usr/bin/env bash
# Benchmarks of the aesx OpenSSL provider against OpenSSL's default provider, on this machine,
# interleaved (aesx, default, aesx, default, ...) and best of several rounds:
#
#   speed  `openssl speed -evp ALG -bytes N` for AES-128/256-CTR and -GCM at 16 B and 16 KiB,
#          with the shipped aesx configuration and with a default-only configuration;
#   scp    scp of a file from /dev/shm to /dev/shm through a private sshd on 127.0.0.1, both
#          ends with aesx, then both ends without, per cipher; wall time;
#   packets OpenSSH's per-packet cipher calls (ssh-packets.c: 32 KiB packets, GCM with its
#          IV_GEN / tag / AAD / final calls, CTR with its first-block decrypt) on both
#          providers in one process, hot caches: the floor of the `perf` ratio below; and
#          the calls OpenSSL's CTR-DRBG makes (drbg-calls.c: key, IV, 48-byte update); and
#          single 32 KiB CTR calls after a sleep or after other data evicted the caches, as
#          inside a transfer (cold-calls.c);
#   perf   the same transfer once per cipher and provider under `perf record -e cpu-clock`
#          (a software clock: this VM has no cycle counters) for ssh and for sshd (following
#          its re-executed and forked children): CPU ms in total and in AES, attributed by
#          shared object (OpenSSL's own AES/GHASH assembly has no symbols in Debian's
#          libcrypto, so "AES" = samples in libcrypto.so.3 for the default provider, and in the
#          aesx module (whatever its file is called) + libcrypto.so.3 for aesx; during a bulk
#          transfer libcrypto does
#          nothing else on these ciphers: the MAC of -ctr is OpenSSH's own umac). A second
#          ratio counts the cipher's implementation only: the aesx module against the default
#          run's libcrypto less the aesx run's libcrypto (what libcrypto does for both
#          providers alike: the EVP calls, the block-size queries, umac's `AES_encrypt`).
#
# usage: run.sh [-r rounds] [-s MiB] [-t seconds] [-c "ciphers"] [-a "speed algs"] [-m MODULE]
#               [-k] [speed] [scp] [packets] [perf]
#   (default: all four, 5 speed rounds of 1 s, 3 scp rounds of 1024 MiB; -a the `openssl
#   speed` algorithms, default aes-128-ctr aes-256-ctr aes-128-gcm aes-256-gcm; -m a provider
#   module to measure instead of this tree's release build; -k keep the temporary directory,
#   with the perf profiles)
# Needs root, openssh-server, perf (apt-get install linux-perf) for `perf`.
set -euo pipefail

rounds=3
srounds=5
size=1024
secs=1
ciphers=""
speed_algs="aes-128-ctr aes-256-ctr aes-128-gcm aes-256-gcm"
module=""
keep=0
while getopts "r:s:t:c:a:m:k" o; do
  case "$o" in
    r) rounds="$OPTARG"; srounds="$OPTARG" ;;
    s) size="$OPTARG" ;;
    t) secs="$OPTARG" ;;
    c) ciphers="$OPTARG" ;;
    a) speed_algs="$OPTARG" ;;
    m) module="$OPTARG" ;;
    k) keep=1 ;;
    *) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
parts="${*:-speed scp packets perf}"

here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=../tests/sshd-lib.sh
. "$here/../tests/sshd-lib.sh"
sshd_lib_init
[ -n "$ciphers" ] || ciphers="$(aesx_ciphers)"

echo "# aesx provider benchmark"
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); $(nproc) vCPUs"
echo "OpenSSL: $(openssl version); $(ssh -V 2>&1)"
echo "aesx backend: $(OPENSSL_CONF=$tmp/aesx.cnf OPENSSL_MODULES=$tmp/modules openssl list -providers -verbose 2>/dev/null | grep -o 'backend [a-z0-9]*' | head -1)"
echo "load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo

best() { sort -g | head -1; }
bestmax() { sort -g | tail -1; }

if [[ " $parts " == *" speed "* ]]; then
  echo "## openssl speed -evp (MB/s, best of $srounds interleaved ${secs}-s runs)"
  echo
  echo "| algorithm | bytes | default | aesx | aesx / default |"
  echo "|---|---:|---:|---:|---:|"
  for alg in $speed_algs; do
    for bytes in 16 16384; do
      : > "$tmp/sp-aesx"; : > "$tmp/sp-default"
      for _ in $(seq "$srounds"); do
        for prov in aesx default; do
          # shellcheck disable=SC2046
          env $(provider_env "$prov") openssl speed -seconds "$secs" -bytes "$bytes" -evp "$alg" 2>/dev/null \
            | awk -v a="$(echo "$alg" | tr a-z A-Z)" 'toupper($1) == a { sub(/k$/, "", $2); print $2 / 1000 }' \
            >> "$tmp/sp-$prov"
        done
      done
      a="$(bestmax < "$tmp/sp-aesx")"; d="$(bestmax < "$tmp/sp-default")"
      printf '| %s | %s | %.0f | %.0f | %.2fx |\n' "$alg" "$bytes" "$d" "$a" "$(awk -v a="$a" -v d="$d" 'BEGIN { print a / d }')"
    done
  done
  echo
  echo "load after speed: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo
fi

if [[ " $parts " == *" packets "* ]]; then
  command -v cc >/dev/null || { echo "packets needs a C compiler (apt-get install gcc)"; exit 1; }
  cc -O2 -o "$tmp/ssh-packets" "$here/ssh-packets.c" -lcrypto
  echo "## OpenSSH's per-packet calls, ns per packet (best of 300 alternated trials; ssh-packets.c)"
  echo
  for alg in AES-128-CTR AES-256-CTR AES-128-GCM AES-256-GCM; do
    OPENSSL_MODULES=$tmp/modules "$tmp/ssh-packets" "$alg" | sed 's/^/    /'
  done
  cc -O2 -o "$tmp/drbg-calls" "$here/drbg-calls.c" -lcrypto
  OPENSSL_MODULES=$tmp/modules "$tmp/drbg-calls" 48 | sed 's/^/    /'
  echo
  echo "## One CTR call at a time after a sleep or an eviction (cold-calls.c)"
  echo
  cc -O2 -o "$tmp/cold-calls" "$here/cold-calls.c" -lcrypto
  for alg in AES-128-CTR AES-256-CTR; do
    OPENSSL_MODULES=$tmp/modules "$tmp/cold-calls" "$alg" | sed 's/^/    /'
  done
  echo
fi

src=/dev/shm/aesx-bench-src
dst=/dev/shm/aesx-bench-dst
if [[ " $parts " == *" scp "* || " $parts " == *" perf "* ]]; then
  head -c "$((size * 1024 * 1024))" /dev/urandom > "$src"
fi
trap 'rm -f "$src" "$dst"; sshd_lib_cleanup' EXIT INT TERM

if [[ " $parts " == *" scp "* ]]; then
  sshd_start aesx aesx; pa=$sshd_port
  sshd_start default default; pd=$sshd_port
  echo "## scp of $size MiB, /dev/shm to /dev/shm over 127.0.0.1 (seconds, best of $rounds alternated runs)"
  echo
  echo "| cipher | default | aesx | default / aesx |"
  echo "|---|---:|---:|---:|"
  for c in $ciphers; do
    alg="$(cipher_alg "$c")"
    : > "$tmp/t-aesx"; : > "$tmp/t-default"
    for _ in $(seq "$rounds"); do
      for prov in aesx default; do
        port=$pa; [ $prov = default ] && port=$pd
        rm -f "$dst" "$tmp/client.stats"
        t0=$(date +%s.%N)
        scp_to "$port" "$c" "$src" "$dst" "$prov" "$tmp/client.stats"
        t1=$(date +%s.%N)
        cmp -s "$src" "$dst" || { echo "copy differs ($c, $prov)"; exit 1; }
        served="$(stat_value "$tmp/client.stats" "$alg" 3)"
        if [ $prov = aesx ] && [ "$served" -lt $((size * 1024 * 1024)) ]; then
          echo "aesx did not serve the aesx run ($c)"; exit 1
        fi
        awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }' >> "$tmp/t-$prov"
      done
    done
    a="$(best < "$tmp/t-aesx")"; d="$(best < "$tmp/t-default")"
    printf '| %s | %.2f | %.2f | %.2fx |\n' "$c" "$d" "$a" "$(awk -v a="$a" -v d="$d" 'BEGIN { print d / a }')"
  done
  echo
  echo "load after scp: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo
fi

# samples DATA: "total aes module" sample counts by shared object (aes: libcrypto and the
# aesx module; module: the aesx module alone).
samples() {
  perf report -i "$1" --stdio --sort dso --show-nr-samples 2>/dev/null | awk '
    /^#/ || NF < 3 { next }
    { n = $2; dso = $3; total += n
      if (dso == "libcrypto.so.3" || dso ~ /aesx/) aes += n
      if (dso ~ /aesx/) module += n }
    END { printf "%d %d %d\n", total, aes, module }'
}

if [[ " $parts " == *" perf "* ]]; then
  command -v perf >/dev/null || { echo "perf not installed (apt-get install linux-perf)"; exit 1; }
  freq=4000
  echo "## CPU time of one $size MiB scp under perf record -e cpu-clock -F $freq (ms; AES by shared object)"
  echo
  echo "| cipher | provider | ssh total | ssh AES | sshd total | sshd AES | AES both ends | AES aesx / default | cipher only: aesx module / (default - aesx libcrypto) |"
  echo "|---|---|---:|---:|---:|---:|---:|---:|---:|"
  for c in $ciphers; do
    declare -A aes_ms=() lib_ms=()
    for prov in default aesx; do
      name="perf-$prov"
      sshd_start "$name" "$prov" perf record -q -e cpu-clock -F $freq -o "$tmp/$name-$c.server" --
      rm -f "$dst"
      scp_to "$sshd_port" "$c" "$src" "$dst" "$prov" "" perf record -q -e cpu-clock -F $freq -o "$tmp/$name-$c.client" --
      cmp -s "$src" "$dst" || { echo "copy differs"; exit 1; }
      # Stop this sshd (perf writes its file when sshd exits).
      kill "$(cat "$tmp/sshd-$name.pid")" 2>/dev/null || true
      last=$(( ${#sshd_pids[@]} - 1 )); wait "${sshd_pids[$last]}" 2>/dev/null || true
      unset "sshd_pids[$last]"; sshd_pids=("${sshd_pids[@]}")
      read -r ct ca cm < <(samples "$tmp/$name-$c.client")
      read -r st sa sm < <(samples "$tmp/$name-$c.server")
      ms() { awk -v n="$1" -v f=$freq 'BEGIN { printf "%.0f", n * 1000 / f }'; }
      aes_ms[$prov]=$(( ca + sa ))
      lib_ms[$prov]=$(( ca + sa - cm - sm ))
      ratio="" cipher=""
      if [ $prov = aesx ]; then
        ratio="$(awk -v a="${aes_ms[aesx]}" -v d="${aes_ms[default]}" 'BEGIN { printf "%.2f", a / d }')"
        cipher="$(awk -v m=$((cm + sm)) -v d="${lib_ms[default]}" -v l="${lib_ms[aesx]}" \
          'BEGIN { printf "%.2f (%.0f / %.0f ms)", m / (d - l), m * 1000 / '$freq', (d - l) * 1000 / '$freq' }')"
      fi
      echo "| $c | $prov | $(ms "$ct") | $(ms "$ca") | $(ms "$st") | $(ms "$sa") | $(ms $((ca + sa))) | $ratio | $cipher |"
    done
  done
  echo
  echo "load at end: $(cut -d' ' -f1-3 /proc/loadavg)"
fi
