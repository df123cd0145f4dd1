//! The provider inside a sandbox like sshd's pre-authentication child: OpenSSL and the module
//! are loaded first (as sshd does before it forks and sandboxes), then `RLIMIT_FSIZE` 0 and a
//! seccomp filter that kills the process on clone/clone3/fork/vfork/execve and on every
//! system call not on a short allow list (sshd's, roughly), and refuses open/stat with EACCES.
//! Inside: fetches, key setup, updates of many sizes, EVP_Cipher, and OpenSSL's DRBG (which
//! `?provider=aesx` puts on aesx AES-256-CTR), with `AESX_PROVIDER_STATS` counting into the
//! shared file. The child must exit 0, its results must match the default provider's computed
//! before the sandbox, and the stats file must show the sandboxed calls.
//!
//! Two controls prove the sandbox bites (else the test could not fail): a thread start inside
//! it dies of SIGSYS, a write that grows a file dies of SIGXFSZ.
//!
//! Runs as a re-execution of this test binary (`AESX_SANDBOX_ROLE` selects the child's role),
//! so the child is a fresh single-threaded process, not a fork of the test harness.
#![cfg(all(target_os = "linux", target_arch = "x86_64"))]
#![allow(clippy::undocumented_unsafe_blocks)]

mod common;
use common::*;

use std::os::unix::process::ExitStatusExt;
use std::process::Command;

#[repr(C)]
struct SockFilter {
    code: u16,
    jt: u8,
    jf: u8,
    k: u32,
}
#[repr(C)]
struct SockFprog {
    len: u16,
    filter: *const SockFilter,
}

const BPF_LD_W_ABS: u16 = 0x20; // BPF_LD | BPF_W | BPF_ABS
const BPF_JMP_JEQ_K: u16 = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
const BPF_RET_K: u16 = 0x06;
const AUDIT_ARCH_X86_64: u32 = 0xC000_003E;
const RET_ALLOW: u32 = 0x7fff_0000;
const RET_KILL_PROCESS: u32 = 0x8000_0000;
const RET_ERRNO: u32 = 0x0005_0000;

fn stmt(code: u16, k: u32) -> SockFilter {
    SockFilter {
        code,
        jt: 0,
        jf: 0,
        k,
    }
}

/// sshd-like: allow a short list, EACCES for open/stat, kill for everything else.
fn install_sandbox() {
    let allow: &[i64] = &[
        libc::SYS_read,
        libc::SYS_write,
        libc::SYS_writev,
        libc::SYS_close,
        libc::SYS_brk,
        libc::SYS_mmap,
        libc::SYS_munmap,
        libc::SYS_mremap,
        libc::SYS_mprotect,
        libc::SYS_madvise,
        libc::SYS_futex,
        libc::SYS_getpid,
        libc::SYS_gettid,
        libc::SYS_getrandom,
        libc::SYS_clock_gettime,
        libc::SYS_gettimeofday,
        libc::SYS_exit,
        libc::SYS_exit_group,
        libc::SYS_rt_sigprocmask,
        libc::SYS_nanosleep,
        libc::SYS_clock_nanosleep,
        libc::SYS_sched_yield,
        libc::SYS_rt_sigreturn,
    ];
    let deny: &[i64] = &[
        libc::SYS_open,
        libc::SYS_openat,
        libc::SYS_stat,
        libc::SYS_fstat,
        libc::SYS_lstat,
        libc::SYS_newfstatat,
        libc::SYS_statx,
    ];
    let mut f = vec![
        stmt(BPF_LD_W_ABS, 4), // arch
        SockFilter {
            code: BPF_JMP_JEQ_K,
            jt: 1,
            jf: 0,
            k: AUDIT_ARCH_X86_64,
        },
        stmt(BPF_RET_K, RET_KILL_PROCESS),
        stmt(BPF_LD_W_ABS, 0), // nr
    ];
    for &nr in allow {
        f.push(SockFilter {
            code: BPF_JMP_JEQ_K,
            jt: 0,
            jf: 1,
            k: nr as u32,
        });
        f.push(stmt(BPF_RET_K, RET_ALLOW));
    }
    for &nr in deny {
        f.push(SockFilter {
            code: BPF_JMP_JEQ_K,
            jt: 0,
            jf: 1,
            k: nr as u32,
        });
        f.push(stmt(BPF_RET_K, RET_ERRNO | libc::EACCES as u32));
    }
    f.push(stmt(BPF_RET_K, RET_KILL_PROCESS));
    let prog = SockFprog {
        len: f.len() as u16,
        filter: f.as_ptr(),
    };
    unsafe {
        let lim = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        assert_eq!(libc::setrlimit(libc::RLIMIT_FSIZE, &lim), 0);
        assert_eq!(libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), 0);
        assert_eq!(
            libc::prctl(
                libc::PR_SET_SECCOMP,
                libc::SECCOMP_MODE_FILTER as libc::c_ulong,
                &prog as *const SockFprog
            ),
            0
        );
    }
}

fn say(s: &str) {
    unsafe { libc::write(1, s.as_ptr().cast(), s.len()) };
}

/// The child's work. Never returns: reports through stdout and the exit status.
fn child(role: &str) -> ! {
    let lib = Lib::new(None);
    // Expected results from the default provider, computed before the sandbox.
    let key = [0x5au8; 32];
    let iv = [0xa5u8; 16];
    let data: Vec<u8> = (0..100_000u32).map(|i| (i * 7) as u8).collect();
    let want_ctr = oneshot(
        &lib.fetch("AES-256-CTR", "default"),
        &key,
        Some(&iv),
        true,
        false,
        &data,
    )
    .unwrap();
    let want_cbc = oneshot(
        &lib.fetch("AES-128-CBC", "default"),
        &key[..16],
        Some(&iv),
        true,
        true,
        &data,
    )
    .unwrap();
    let gcm = |p: &str| {
        oneshot(
            &lib.fetch("AES-256-GCM", p),
            &key,
            Some(&iv[..12]),
            true,
            false,
            &data,
        )
        .unwrap()
    };
    let want_gcm = gcm("default");
    // Warm the default-properties path (as sshd's daemon does before forking).
    let mut r = [0u8; 32];
    assert_eq!(unsafe { RAND_bytes_ex(lib.ctx, r.as_mut_ptr(), 32, 0) }, 1);
    let file =
        std::fs::File::create(scratch("sandbox").join(format!("grow-{}", std::process::id())))
            .unwrap();
    install_sandbox();
    match role {
        "clone-control" => {
            let _ = std::thread::spawn(|| ());
            say("thread started\n");
            unsafe { libc::_exit(3) }
        }
        "write-control" => {
            use std::io::Write;
            let _ = (&file).write_all(b"x");
            say("file grew\n");
            unsafe { libc::_exit(3) }
        }
        _ => {}
    }
    // Inside the sandbox: fetch, key, stream in uneven pieces, EVP_Cipher, DRBG.
    let ctr = lib.fetch("AES-256-CTR", "aesx");
    let ctx = Ctx::new();
    assert!(ctx.init(Some(&ctr), Some(&key), Some(&iv), 1));
    let mut got = Vec::new();
    let mut off = 0;
    let mut step = 1;
    while off < data.len() {
        let n = step.min(data.len() - off);
        got.extend(ctx.update(&data[off..off + n]).unwrap());
        off += n;
        step = step * 3 % 32_785 + 1;
    }
    let cbc = lib.fetch("AES-128-CBC", "aesx");
    let got_cbc = oneshot(&cbc, &key[..16], Some(&iv), true, true, &data).unwrap();
    let c2 = Ctx::new();
    assert!(c2.init(Some(&ctr), Some(&key), Some(&iv), 1));
    let (rc, raw) = c2.cipher(&data[..32_784]);
    let mut drbg = vec![0u8; 4096];
    for n in [1usize, 32, 48, 4096] {
        assert_eq!(
            unsafe { RAND_bytes_ex(lib.ctx, drbg.as_mut_ptr(), n, 0) },
            1
        );
    }
    let got_gcm = gcm("aesx");
    // Free the contexts, as programs do (a context hands its last counts over when freed).
    drop((ctx, c2));
    let ok = got == want_ctr
        && got_cbc == want_cbc
        && got_gcm == want_gcm
        && rc == 32_784
        && raw == want_ctr[..32_784];
    say(if ok {
        "sandboxed results match\n"
    } else {
        "MISMATCH\n"
    });
    unsafe { libc::_exit(if ok { 0 } else { 1 }) }
}

#[test]
fn sandbox_child_entry() {
    // Only does something when re-executed by the tests below.
    if let Ok(role) = std::env::var("AESX_SANDBOX_ROLE") {
        child(&role);
    }
}

fn run_child(role: &str, stats: &std::path::Path) -> (std::process::ExitStatus, String) {
    let _ = common::target_profile_dir(); // build the module first
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "sandbox_child_entry",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("AESX_SANDBOX_ROLE", role)
        .env("AESX_PROVIDER_STATS", stats)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status, text)
}

/// (enc_inits, calls, bytes) of one algorithm in a stats file.
fn file_counts(path: &std::path::Path, alg: &str) -> (u64, u64, u64) {
    let b = std::fs::read(path).unwrap();
    assert_eq!(b.len(), 1024);
    assert!(b.starts_with(b"aesx-provider-stats\n"));
    let u = |o: usize| u64::from_le_bytes(b[o..o + 8].try_into().unwrap());
    for rec in 1..16 {
        let o = rec * 64;
        let name = String::from_utf8_lossy(&b[o..o + 32])
            .trim_end_matches('\0')
            .to_string();
        if name == alg {
            return (u(o + 32), u(o + 48), u(o + 56));
        }
    }
    panic!("{alg} not in stats file");
}

#[test]
fn provider_works_under_seccomp_and_rlimit_fsize_zero() {
    let stats = scratch("sandbox").join("stats-ok");
    let _ = std::fs::remove_file(&stats);
    let (st, text) = run_child("work", &stats);
    assert!(st.success(), "sandboxed child failed ({st:?}):\n{text}");
    assert!(text.contains("sandboxed results match"), "{text}");
    let (inits, calls, bytes) = file_counts(&stats, "AES-256-CTR");
    // The streaming context, the EVP_Cipher context and the DRBG all ran inside the sandbox.
    assert!(
        inits >= 2 && calls > 15 && bytes >= 132_784,
        "{inits} {calls} {bytes}"
    );
    let (_, cbc_calls, _) = file_counts(&stats, "AES-128-CBC");
    assert!(cbc_calls >= 2);
    let (_, gcm_calls, gcm_bytes) = file_counts(&stats, "AES-256-GCM");
    assert!(
        gcm_calls >= 2 && gcm_bytes >= 100_000,
        "{gcm_calls} {gcm_bytes}"
    );
}

#[test]
fn sandbox_controls_kill_thread_starts_and_file_growth() {
    let stats = scratch("sandbox").join("stats-control");
    let (st, text) = run_child("clone-control", &stats);
    assert_eq!(
        st.signal(),
        Some(libc::SIGSYS),
        "a thread start must be fatal here: {st:?}\n{text}"
    );
    let (st, text) = run_child("write-control", &stats);
    assert_eq!(
        st.signal(),
        Some(libc::SIGXFSZ),
        "growing a file must be fatal here: {st:?}\n{text}"
    );
}

#[test]
fn stats_file_is_not_created_when_rlimit_fsize_forbids_it() {
    let _ = common::target_profile_dir();
    let stats = scratch("sandbox").join("stats-never");
    let _ = std::fs::remove_file(&stats);
    // A shell with RLIMIT_FSIZE 0 runs `openssl enc` with the provider and the stats variable.
    let conf = config_file(None, true);
    let out = Command::new("sh")
        .arg("-c")
        .arg("ulimit -f 0 && echo hello | openssl enc -aes-128-ctr -K 000102030405060708090a0b0c0d0e0f -iv 000102030405060708090a0b0c0d0e0f | od -c | head -1")
        .env("OPENSSL_CONF", &conf)
        .env("AESX_PROVIDER_STATS", &stats)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!out.stdout.is_empty());
    assert!(
        !stats.exists() || std::fs::metadata(&stats).unwrap().len() == 0,
        "no file grown under RLIMIT_FSIZE 0"
    );
}
