# Shared by tests/ssh-scp.sh and bench/run.sh (source it): private sshd instances on
# 127.0.0.1 with their own host key, config, authorized key, pid file and log in one temporary
# directory. Nothing of the system's sshd configuration is read or changed; /run/sshd (sshd's
# compiled-in privilege separation directory) is made only if missing, and removed again.
#
#   sshd_lib_init                     temp dir ($tmp), keys, the OpenSSL config, cleanup trap
#   sshd_start NAME PROVIDER [WRAP..] start sshd NAME (PROVIDER: aesx | default); its port is
#                                     left in $sshd_port (not printed: call it directly, not in
#                                     $(...), so the pid is recorded for the cleanup). WRAP (e.g.
#                                     `perf record -o f --`) runs in front of sshd
#   client_env PROVIDER [STATS]       env assignments for ssh/scp with or without the provider
#   scp_to PORT CIPHER SRC DST PROVIDER [STATS] [WRAP..]
#   stat_value FILE ALG FIELD         a counter of a stats file (0 enc inits, 1 dec inits,
#                                     2 calls, 3 bytes; layout in src/stats.rs)
# Globals the caller may set first: module (the provider .so), keep (1: keep $tmp).

: "${keep:=0}"
sshd_pids=()
made_privsep_dir=0

sshd_lib_cleanup() {
  local rc=$? p
  for p in "${sshd_pids[@]}"; do
    kill "$p" 2>/dev/null || true
    wait "$p" 2>/dev/null || true
  done
  if [ $made_privsep_dir = 1 ]; then rmdir /run/sshd 2>/dev/null || true; fi
  if [ $rc != 0 ]; then
    for p in "$tmp"/sshd-*.log; do
      [ -f "$p" ] && { echo "--- $p (last 20 lines)"; tail -20 "$p"; }
    done
  fi
  if [ "$keep" = 1 ]; then echo "kept $tmp"; else rm -rf "$tmp"; fi
  exit $rc
}

sshd_lib_init() {
  local root
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
  if ! command -v ssh >/dev/null || [ ! -x /usr/sbin/sshd ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
      echo "installing openssh-server openssh-client"
      (apt-get install -y -qq openssh-server openssh-client >/dev/null 2>&1) ||
        (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openssh-server openssh-client >/dev/null)
    else
      echo "needs /usr/sbin/sshd and ssh (apt-get install openssh-server), and root" >&2
      exit 1
    fi
  fi
  if [ -z "${module:-}" ]; then
    module="$root/target/release/libaesx_provider.so"
    [ -f "$module" ] || (cd "$root" && cargo build --release -p aesx-provider --lib -q)
  fi
  module="$(cd "$(dirname "$module")" && pwd)/$(basename "$module")"
  [ -f "$module" ] || { echo "no module at $module" >&2; exit 1; }

  tmp="$(mktemp -d "${TMPDIR:-/tmp}/aesx-ssh.XXXXXX")"
  chmod 755 "$tmp"
  trap sshd_lib_cleanup EXIT INT TERM
  if [ ! -d /run/sshd ]; then mkdir -m 0755 /run/sshd; made_privsep_dir=1; fi

  mkdir "$tmp/modules"
  ln -s "$module" "$tmp/modules/aesx.so"
  cp "$root/crates/aesx-provider/aesx-openssl.cnf" "$tmp/aesx.cnf"
  # "Without the provider": only OpenSSL's default provider.
  printf 'openssl_conf = openssl_init\n[openssl_init]\nproviders = p\n[p]\ndefault = d\n[d]\nactivate = 1\n' \
    > "$tmp/default.cnf"
  ssh-keygen -q -t ed25519 -N '' -f "$tmp/host_ed25519"
  ssh-keygen -q -t ed25519 -N '' -f "$tmp/id"
  cp "$tmp/id.pub" "$tmp/authorized_keys"
}

# The ssh ciphers the tests and benchmarks run: the AES ones OpenSSH offers (CTR and GCM).
aesx_ciphers() {
  echo "aes128-ctr aes256-ctr aes128-gcm@openssh.com aes256-gcm@openssh.com"
}

provider_env() { # PROVIDER [STATS]
  if [ "$1" = aesx ]; then
    echo "OPENSSL_CONF=$tmp/aesx.cnf OPENSSL_MODULES=$tmp/modules AESX_PROVIDER_STATS=${2:-}"
  else
    echo "OPENSSL_CONF=$tmp/default.cnf"
  fi
}

sshd_start() { # NAME PROVIDER [WRAP...]
  local name="$1" prov="$2" port i
  shift 2
  port="$(( 20000 + RANDOM % 20000 ))"
  cat > "$tmp/sshd-$name.conf" <<EOF
Port $port
ListenAddress 127.0.0.1
HostKey $tmp/host_ed25519
PidFile $tmp/sshd-$name.pid
AuthorizedKeysFile $tmp/authorized_keys
StrictModes no
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
PermitRootLogin prohibit-password
AllowUsers $(id -un)
Ciphers aes128-ctr,aes192-ctr,aes256-ctr,aes128-gcm@openssh.com,aes256-gcm@openssh.com
Subsystem sftp internal-sftp
LogLevel VERBOSE
EOF
  # shellcheck disable=SC2046
  env $(provider_env "$prov" "$tmp/server-$name.stats") \
    "$@" /usr/sbin/sshd -D -f "$tmp/sshd-$name.conf" -E "$tmp/sshd-$name.log" \
    </dev/null >>"$tmp/sshd-$name.out" 2>&1 &
  sshd_pids+=($!)
  for i in $(seq 100); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then sshd_port=$port; return; fi
    kill -0 "$!" 2>/dev/null || { echo "sshd $name exited" >&2; cat "$tmp/sshd-$name.log" >&2; exit 1; }
    sleep 0.1
  done
  echo "sshd $name did not listen" >&2
  exit 1
}

scp_to() { # PORT CIPHER SRC DST PROVIDER [STATS] [WRAP...]
  local port="$1" c="$2" src="$3" dst="$4" prov="$5" stats="${6:-}"
  shift 6 2>/dev/null || shift $#
  # shellcheck disable=SC2046
  env $(provider_env "$prov" "$stats") "$@" \
    scp -q -F /dev/null -P "$port" -c "$c" -i "$tmp/id" \
      -o IdentitiesOnly=yes -o BatchMode=yes -o StrictHostKeyChecking=no \
      -o UserKnownHostsFile="$tmp/known_hosts" \
      "$src" "$(id -un)@127.0.0.1:$dst"
}

stat_value() { # FILE ALG FIELD
  local f="$1" alg="$2" field="$3" rec name
  [ -f "$f" ] || { echo 0; return; }
  for rec in $(seq 1 15); do
    name="$(dd if="$f" bs=1 skip=$((rec * 64)) count=32 2>/dev/null | tr -d '\0')"
    if [ "$name" = "$alg" ]; then
      od -A n -t u8 -j $((rec * 64 + 32 + field * 8)) -N 8 "$f" | tr -d ' '
      return
    fi
  done
  echo 0
}

cipher_alg() { # ssh cipher name -> OpenSSL algorithm name
  case "$1" in
    aes128-ctr) echo AES-128-CTR ;; aes192-ctr) echo AES-192-CTR ;; aes256-ctr) echo AES-256-CTR ;;
    aes128-gcm@openssh.com) echo AES-128-GCM ;; aes256-gcm@openssh.com) echo AES-256-GCM ;;
    *) echo "unknown cipher $1" >&2; exit 2 ;;
  esac
}
