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
#   -c  ciphers (default: aes128-ctr aes256-ctr)
#   -m  the provider module (default: target/release/libaesx_provider.so, built if missing)
#   -k  keep the temporary directory (printed) for inspection
# Needs root (sshd), openssh-server and openssh-client (installed with apt-get when missing).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
size=256
ciphers="aes128-ctr aes256-ctr"
module=""
keep=0
while getopts "s:c:m:k" o; do
  case "$o" in
    s) size="$OPTARG" ;;
    c) ciphers="$OPTARG" ;;
    m) module="$OPTARG" ;;
    k) keep=1 ;;
    *) sed -n '2,20p' "$0"; exit 2 ;;
  esac
done

if ! command -v ssh >/dev/null || [ ! -x /usr/sbin/sshd ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "installing openssh-server openssh-client"
    (apt-get install -y -qq openssh-server openssh-client >/dev/null 2>&1) ||
      (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openssh-server openssh-client >/dev/null)
  else
    echo "ssh-scp.sh: needs /usr/sbin/sshd and ssh (apt-get install openssh-server)" >&2
    exit 1
  fi
fi

if [ -z "$module" ]; then
  module="$root/target/release/libaesx_provider.so"
  [ -f "$module" ] || (cd "$root" && cargo build --release -p aesx-provider --lib -q)
fi
module="$(cd "$(dirname "$module")" && pwd)/$(basename "$module")"
[ -f "$module" ] || { echo "no module at $module" >&2; exit 1; }

tmp="$(mktemp -d "${TMPDIR:-/tmp}/aesx-ssh.XXXXXX")"
chmod 755 "$tmp"
sshd_pid=""
made_privsep_dir=0
cleanup() {
  local rc=$?
  if [ -n "$sshd_pid" ]; then
    kill "$sshd_pid" 2>/dev/null || true
    wait "$sshd_pid" 2>/dev/null || true
  fi
  if [ $made_privsep_dir = 1 ]; then rmdir /run/sshd 2>/dev/null || true; fi
  if [ $rc != 0 ] && [ -f "$tmp/sshd.log" ]; then
    echo "--- sshd log (last 30 lines)"; tail -30 "$tmp/sshd.log"
  fi
  if [ $keep = 1 ]; then echo "kept $tmp"; else rm -rf "$tmp"; fi
  exit $rc
}
trap cleanup EXIT INT TERM

# sshd's compiled-in privilege separation directory (normally made by the package's tmpfiles
# rule at boot); made here only if missing, and removed again.
if [ ! -d /run/sshd ]; then mkdir -m 0755 /run/sshd; made_privsep_dir=1; fi

mkdir "$tmp/modules"
ln -s "$module" "$tmp/modules/aesx.so"
sed 's/^# backend = .*//' "$root/crates/aesx-provider/aesx-openssl.cnf" > "$tmp/openssl.cnf"

ssh-keygen -q -t ed25519 -N '' -f "$tmp/host_ed25519"
ssh-keygen -q -t ed25519 -N '' -f "$tmp/id"
cp "$tmp/id.pub" "$tmp/authorized_keys"
user="$(id -un)"
port="$(( 20000 + RANDOM % 20000 ))"

cat > "$tmp/sshd_config" <<EOF
Port $port
ListenAddress 127.0.0.1
HostKey $tmp/host_ed25519
PidFile $tmp/sshd.pid
AuthorizedKeysFile $tmp/authorized_keys
StrictModes no
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
PermitRootLogin prohibit-password
AllowUsers $user
Ciphers aes128-ctr,aes192-ctr,aes256-ctr,aes128-gcm@openssh.com,aes256-gcm@openssh.com
Subsystem sftp internal-sftp
LogLevel VERBOSE
EOF

env OPENSSL_CONF="$tmp/openssl.cnf" OPENSSL_MODULES="$tmp/modules" \
    AESX_PROVIDER_STATS="$tmp/server.stats" \
    /usr/sbin/sshd -D -f "$tmp/sshd_config" -E "$tmp/sshd.log" &
sshd_pid=$!

for _ in $(seq 100); do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then break; fi
  kill -0 "$sshd_pid" 2>/dev/null || { echo "sshd exited"; cat "$tmp/sshd.log"; exit 1; }
  sleep 0.1
done

head -c "$((size * 1024 * 1024))" /dev/urandom > "$tmp/src"

# value FILE ALG FIELD: FIELD 0 enc inits, 1 dec inits, 2 calls, 3 bytes (see src/stats.rs).
value() {
  local f="$1" alg="$2" field="$3" rec name
  for rec in $(seq 1 15); do
    name="$(dd if="$f" bs=1 skip=$((rec * 64)) count=32 2>/dev/null | tr -d '\0')"
    if [ "$name" = "$alg" ]; then
      od -A n -t u8 -j $((rec * 64 + 32 + field * 8)) -N 8 "$f" | tr -d ' '
      return
    fi
  done
  echo 0
}

status=0
for c in $ciphers; do
  case "$c" in
    aes128-ctr) alg=AES-128-CTR ;; aes192-ctr) alg=AES-192-CTR ;; aes256-ctr) alg=AES-256-CTR ;;
    aes128-gcm@openssh.com) alg=AES-128-GCM ;; aes256-gcm@openssh.com) alg=AES-256-GCM ;;
    *) echo "unknown cipher $c"; exit 2 ;;
  esac
  rm -f "$tmp/client.stats" "$tmp/dst"
  sb="$(value "$tmp/server.stats" "$alg" 3 2>/dev/null || echo 0)"
  t0=$(date +%s.%N)
  env OPENSSL_CONF="$tmp/openssl.cnf" OPENSSL_MODULES="$tmp/modules" \
      AESX_PROVIDER_STATS="$tmp/client.stats" \
      scp -q -F /dev/null -P "$port" -c "$c" -i "$tmp/id" \
        -o IdentitiesOnly=yes -o BatchMode=yes -o StrictHostKeyChecking=no \
        -o UserKnownHostsFile="$tmp/known_hosts" \
        "$tmp/src" "$user@127.0.0.1:$tmp/dst"
  t1=$(date +%s.%N)
  cmp "$tmp/src" "$tmp/dst"
  cb="$(value "$tmp/client.stats" "$alg" 3)"
  sa="$(value "$tmp/server.stats" "$alg" 3)"
  ci="$(( $(value "$tmp/client.stats" "$alg" 0) + $(value "$tmp/client.stats" "$alg" 1) ))"
  drbg="$(value "$tmp/server.stats" AES-256-CTR 2)"
  need=$((size * 1024 * 1024))
  printf '%-24s %d MiB identical in %.2f s; aesx %s bytes: client %s, server %s (+%s); client inits %s; sshd AES-256-CTR calls %s\n' \
    "$c" "$size" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" "$alg" "$cb" "$sa" "$((sa - sb))" "$ci" "$drbg"
  if [ "$cb" -lt "$need" ] || [ "$((sa - sb))" -lt "$need" ] || [ "$ci" -lt 2 ]; then
    echo "FAIL: aesx did not serve $c at both ends"
    status=1
  fi
done
exit $status
