#!/usr/bin/env bash
# OpenSSH on aesx, end to end, on 127.0.0.1 only: a private `sshd -D` (own host key, config,
# authorized key, pid file and log, all in a temporary directory; nothing of the system's sshd
# configuration is read or changed) and `scp` of a random file with each cipher, both ends
# loading the aesx provider through OPENSSL_CONF. Checks: the copy is identical, and each
# side's AESX_PROVIDER_STATS file shows aesx encrypting and decrypting at least the file's
# size with that cipher's AES (sshd's counts include its sandboxed pre-auth child and the
# session child; OpenSSL's DRBG, on aesx AES-256-CTR, shows up too). sshd is stopped on exit,
# whatever happens.
#
# usage: ssh-scp.sh [-s MiB] [-c "cipher ..."] [-m path/to/libaesx_provider.so] [-k]
#   -s  file size in MiB (default 256)
#   -c  ciphers (default: aes128-ctr aes256-ctr aes128-gcm@openssh.com
#       aes256-gcm@openssh.com)
#   -m  the provider module (default: target/release/libaesx_provider.so, built if missing)
#   -k  keep the temporary directory (printed) for inspection
# Needs root (sshd), openssh-server and openssh-client (installed with apt-get when missing).
set -euo pipefail

size=256
ciphers=""
module=""
keep=0
while getopts "s:c:m:k" o; do
  case "$o" in
    s) size="$OPTARG" ;;
    c) ciphers="$OPTARG" ;;
    m) module="$OPTARG" ;;
    k) keep=1 ;;
    *) sed -n '2,16p' "$0"; exit 2 ;;
  esac
done

# shellcheck source=sshd-lib.sh
. "$(dirname "$0")/sshd-lib.sh"
sshd_lib_init
[ -n "$ciphers" ] || ciphers="$(aesx_ciphers)"
sshd_start main aesx
port=$sshd_port
sstats="$tmp/server-main.stats"
head -c "$((size * 1024 * 1024))" /dev/urandom > "$tmp/src"

status=0
for c in $ciphers; do
  alg="$(cipher_alg "$c")"
  rm -f "$tmp/client.stats" "$tmp/dst"
  before="$(stat_value "$sstats" "$alg" 3)"
  t0=$(date +%s.%N)
  scp_to "$port" "$c" "$tmp/src" "$tmp/dst" aesx "$tmp/client.stats"
  t1=$(date +%s.%N)
  cmp "$tmp/src" "$tmp/dst"
  cb="$(stat_value "$tmp/client.stats" "$alg" 3)"
  sb="$(( $(stat_value "$sstats" "$alg" 3) - before ))"
  ci="$(( $(stat_value "$tmp/client.stats" "$alg" 0) + $(stat_value "$tmp/client.stats" "$alg" 1) ))"
  drbg="$(stat_value "$sstats" AES-256-CTR 2)"
  need=$((size * 1024 * 1024))
  printf '%-24s %d MiB identical in %s s; aesx %s bytes: client %s, server %s; client inits %s; sshd AES-256-CTR calls %s\n' \
    "$c" "$size" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')" "$alg" "$cb" "$sb" "$ci" "$drbg"
  if [ "$cb" -lt "$need" ] || [ "$sb" -lt "$need" ] || [ "$ci" -lt 2 ]; then
    echo "FAIL: aesx did not serve $c at both ends"
    status=1
  fi
done
exit $status
