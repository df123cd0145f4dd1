//! Real, unmodified programs with the provider loaded through OPENSSL_CONF (loopback only):
//! `openssl enc` output byte-identical with and without aesx for every mode, key size,
//! padding setting and odd file sizes; `openssl list` showing the algorithms with the default
//! provider's parameter tables; a bad backend refused; TLS 1.3 AES-GCM suites, TLS 1.2 GCM and
//! CBC suites (encrypt-then-MAC and MAC-then-encrypt, SHA-1/SHA-256/SHA-384 MACs) and TLS 1.0
//! between `openssl s_server` and `s_client`, both on aesx, data both ways, with each side's
//! stats file proving it.
#![allow(clippy::undocumented_unsafe_blocks)]

mod common;
use common::*;

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn openssl() -> Command {
    let mut c = Command::new("openssl");
    c.env_remove("AESX_BACKEND").env_remove("OPENSSL_MODULES");
    c
}

/// A configuration with only the default provider (the "without aesx" side).
fn default_only_conf() -> PathBuf {
    let p = scratch("conf").join("default-only.cnf");
    write_atomic(
        &p,
        "openssl_conf = openssl_init\n[openssl_init]\nproviders = provider_sect\n\
         [provider_sect]\ndefault = default_sect\n[default_sect]\nactivate = 1\n"
            .as_bytes(),
    );
    p
}

/// Sums (inits, calls, bytes) over all algorithms whose name starts with `prefix`.
fn stats_sum(path: &Path, prefix: &str) -> (u64, u64, u64) {
    let Ok(b) = std::fs::read(path) else {
        return (0, 0, 0);
    };
    if b.len() != 1024 {
        return (0, 0, 0);
    }
    let u = |o: usize| u64::from_le_bytes(b[o..o + 8].try_into().unwrap());
    let mut s = (0, 0, 0);
    for rec in 1..16 {
        let o = rec * 64;
        let name = String::from_utf8_lossy(&b[o..o + 32])
            .trim_end_matches('\0')
            .to_string();
        if name.starts_with(prefix) {
            s.0 += u(o + 32) + u(o + 40);
            s.1 += u(o + 48);
            s.2 += u(o + 56);
        }
    }
    s
}

#[test]
fn openssl_enc_is_byte_identical_with_and_without_aesx() {
    let conf = config_file(None, true);
    let plain_conf = default_only_conf();
    let dir = scratch("enc");
    let stats = dir.join("stats");
    let _ = std::fs::remove_file(&stats);
    let mut rng = Rng(99);
    let mut checked = 0;
    for size in [0usize, 1, 15, 16, 17, 31, 4095, 65_536, 1_000_003] {
        let input = dir.join(format!("in-{size}"));
        std::fs::write(&input, rng.bytes(size)).unwrap();
        for mode in ["ecb", "cbc", "ctr"] {
            for bits in [128, 192, 256] {
                for pad in [true, false] {
                    if !pad && (mode == "ctr" || size % 16 != 0) {
                        continue;
                    }
                    let alg = format!("-aes-{bits}-{mode}");
                    let key = hex::encode(rng.bytes(bits / 8));
                    let iv = hex::encode(rng.bytes(16));
                    let run = |cnf: &Path, dec: bool, src: &Path, dst: &Path| {
                        let mut c = openssl();
                        c.env("OPENSSL_CONF", cnf)
                            .env("AESX_PROVIDER_STATS", &stats);
                        c.args(["enc", &alg, "-K", &key]);
                        if mode != "ecb" {
                            c.args(["-iv", &iv]);
                        }
                        if !pad {
                            c.arg("-nopad");
                        }
                        if dec {
                            c.arg("-d");
                        }
                        c.arg("-in").arg(src).arg("-out").arg(dst);
                        let o = c.output().unwrap();
                        assert!(
                            o.status.success(),
                            "{alg} {size}: {}",
                            String::from_utf8_lossy(&o.stderr)
                        );
                    };
                    let (a, b, back) = (dir.join("a"), dir.join("b"), dir.join("back"));
                    let before = stats_sum(&stats, "AES-");
                    run(&conf, false, &input, &a);
                    let mid = stats_sum(&stats, "AES-");
                    run(&plain_conf, false, &input, &b);
                    assert_eq!(
                        stats_sum(&stats, "AES-"),
                        mid,
                        "without aesx nothing is counted"
                    );
                    assert!(mid.0 > before.0 && mid.1 > before.1, "aesx served {alg}");
                    let (ea, eb) = (std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
                    assert!(ea == eb, "{alg} pad={pad} size={size}: outputs differ");
                    run(&conf, true, &a, &back);
                    assert!(
                        std::fs::read(&back).unwrap() == std::fs::read(&input).unwrap(),
                        "{alg} {size} round trip"
                    );
                    checked += 1;
                }
            }
        }
    }
    assert_eq!(checked, 9 * 9 + 6 * 3); // every size x mode x key, plus -nopad on 3 block-aligned sizes
    let total = stats_sum(&stats, "AES-");
    assert!(total.2 > 2 * 9 * 1_000_003, "bytes counted: {total:?}");
}

/// The `openssl list -verbose` block of one algorithm from one provider, without its
/// description line.
fn list_block(text: &str, alg_line_contains: &str, provider: &str) -> Vec<String> {
    let mut lines = text.lines().peekable();
    while let Some(l) = lines.next() {
        if l.starts_with("  ")
            && !l.starts_with("   ")
            && l.contains(alg_line_contains)
            && l.ends_with(&format!("@ {provider}"))
        {
            let mut block = vec![l.replace(&format!("@ {provider}"), "@ X")];
            while let Some(n) = lines.peek() {
                if !n.starts_with("    ") {
                    break;
                }
                let n = lines.next().unwrap();
                if !n.trim_start().starts_with("description:") {
                    block.push(n.to_string());
                }
            }
            return block;
        }
    }
    panic!("{alg_line_contains} @ {provider} not listed");
}

#[test]
fn openssl_list_shows_aesx_algorithms_like_the_default_ones() {
    let conf = config_file(None, true);
    let out = openssl()
        .env("OPENSSL_CONF", &conf)
        .args(["list", "-cipher-algorithms", "-verbose"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for (name, shown) in [
        ("AES-128-ECB", "AES-128-ECB }"),
        ("AES-192-CBC", "AES-192-CBC, AES192 }"),
        ("AES-256-CTR", "AES-256-CTR @"),
        ("AES-128-GCM", "id-aes128-GCM }"),
        ("AES-256-GCM", "id-aes256-GCM }"),
    ] {
        let a = list_block(&text, shown, "aesx");
        let d = list_block(&text, shown, "default");
        assert!(a.len() > 20, "{name}: {a:?}");
        assert_eq!(
            a, d,
            "{name}: aesx lists the same parameters as the default provider"
        );
    }
    let out = openssl()
        .env("OPENSSL_CONF", &conf)
        .args(["list", "-cipher-algorithms", "-provider", "aesx"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text.matches("@ aesx").count(), 12, "{text}");
    let out = openssl()
        .env("OPENSSL_CONF", &conf)
        .args(["list", "-providers", "-verbose"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("aesx") && text.contains("status: active") && text.contains("backend"),
        "{text}"
    );
}

#[test]
fn an_unknown_backend_fails_activation() {
    let conf = config_file(Some("no-such-backend"), true);
    let out = openssl()
        .env("OPENSSL_CONF", &conf)
        .args(["list", "-providers"])
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // OpenSSL drops a provider whose activation fails (its config loading does not stop the
    // program): aesx is absent, AES stays on the default provider.
    assert!(
        text.contains("  default\n") && !text.contains("  aesx\n"),
        "{text}"
    );
    let good = config_file(Some(&backends()[0]), true);
    let out = openssl()
        .env("OPENSSL_CONF", &good)
        .args(["list", "-providers"])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("  aesx\n"),
        "the control loads"
    );
}

struct Server(Child);
impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn cert(dir: &Path) -> (PathBuf, PathBuf) {
    static ONCE: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _g = ONCE.lock().unwrap();
    let (k, c) = (dir.join("key.pem"), dir.join("cert.pem"));
    if !c.exists() {
        let o = openssl()
            .env("OPENSSL_CONF", default_only_conf())
            .args([
                "req",
                "-x509",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-days",
                "2",
                "-subj",
                "/CN=localhost",
                "-keyout",
            ])
            .arg(&k)
            .arg("-out")
            .arg(&c)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    (k, c)
}

/// One TLS connection: s_server -rev on aesx, s_client on aesx; the client sends lines and
/// reads them back reversed. Returns each side's (inits, calls, bytes) for `alg`.
fn tls_exchange(
    name: &str,
    server_args: &[&str],
    client_args: &[&str],
    alg: &str,
) -> ((u64, u64, u64), (u64, u64, u64)) {
    let dir = scratch(&format!("tls-{name}"));
    let (key, crt) = cert(&scratch("tls"));
    let conf = config_file(None, true);
    let (ss, cs) = (dir.join("server.stats"), dir.join("client.stats"));
    let _ = std::fs::remove_file(&ss);
    let _ = std::fs::remove_file(&cs);
    let port = free_port().to_string();
    let mut server = Server(
        openssl()
            .env("OPENSSL_CONF", &conf)
            .env("AESX_PROVIDER_STATS", &ss)
            .args([
                "s_server",
                "-accept",
                &format!("127.0.0.1:{port}"),
                "-naccept",
                "1",
                "-rev",
                "-key",
            ])
            .arg(&key)
            .arg("-cert")
            .arg(&crt)
            .args(server_args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    // Wait for "ACCEPT".
    let mut sout = BufReader::new(server.0.stdout.take().unwrap());
    let mut line = String::new();
    let t0 = Instant::now();
    while !line.contains("ACCEPT") {
        line.clear();
        if sout.read_line(&mut line).unwrap() == 0 || t0.elapsed() > Duration::from_secs(20) {
            let mut e = String::new();
            let _ = server.0.stderr.take().unwrap().read_to_string(&mut e);
            panic!("s_server did not start: {e}");
        }
    }
    let mut client = openssl()
        .env("OPENSSL_CONF", &conf)
        .env("AESX_PROVIDER_STATS", &cs)
        .args([
            "s_client",
            "-connect",
            &format!("127.0.0.1:{port}"),
            "-quiet",
            "-no_ign_eof",
        ])
        .args(client_args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut cin = client.stdin.take().unwrap();
    let mut cout = BufReader::new(client.stdout.take().unwrap());
    let mut rng = Rng(5);
    for i in 0..20 {
        // Lines of growing length (up to ~12 KB) so records of many sizes and paddings pass.
        // (s_client treats a line starting with Q, R, K or k as a command: start with a digit.)
        let msg: String = std::iter::once('7')
            .chain((0..i * 600).map(|_| (b'a' + rng.below(26) as u8) as char))
            .collect();
        writeln!(cin, "{msg}").unwrap();
        cin.flush().unwrap();
        let mut back = String::new();
        cout.read_line(&mut back).unwrap();
        let want: String = msg.chars().rev().collect();
        if back.trim_end() != want {
            let mut e = String::new();
            let _ = client.stderr.take().unwrap().read_to_string(&mut e);
            panic!(
                "{name}: line {i} not echoed reversed (got {} bytes): {e}",
                back.len()
            );
        }
    }
    drop(cin);
    let st = client.wait().unwrap();
    let _ = st;
    let _ = server.0.wait();
    (stats_sum(&ss, alg), stats_sum(&cs, alg))
}

#[test]
fn tls_cbc_suites_run_on_aesx_at_both_ends() {
    for (name, sargs, cargs, alg) in [
        (
            "tls12-etm-sha256",
            &["-tls1_2"][..],
            &["-tls1_2", "-cipher", "ECDHE-RSA-AES128-SHA256"][..],
            "AES-128-CBC",
        ),
        (
            "tls12-etm-sha1",
            &["-tls1_2"][..],
            &["-tls1_2", "-cipher", "ECDHE-RSA-AES256-SHA"][..],
            "AES-256-CBC",
        ),
        // MAC-then-encrypt: the constant-time padding check and MAC extraction run in aesx.
        (
            "tls12-mte-sha384",
            &["-tls1_2", "-no_etm"][..],
            &["-tls1_2", "-no_etm", "-cipher", "ECDHE-RSA-AES256-SHA384"][..],
            "AES-256-CBC",
        ),
        // TLS 1.0: implicit IV, chained from record to record.
        (
            "tls10-etm-sha1",
            &["-tls1", "-cipher", "ALL:@SECLEVEL=0"][..],
            &["-tls1", "-cipher", "ECDHE-RSA-AES128-SHA:@SECLEVEL=0"][..],
            "AES-128-CBC",
        ),
    ] {
        let (s, c) = tls_exchange(name, sargs, cargs, alg);
        // Each side: two contexts (read, write) initialised, records both ways, > 120 KB.
        for (side, st) in [("server", s), ("client", c)] {
            assert!(
                st.0 >= 2 && st.1 >= 40 && st.2 > 120_000,
                "{name} {side}: {alg} counts {st:?}"
            );
        }
    }
}

#[test]
fn tls_gcm_suites_run_on_aesx_at_both_ends() {
    for (name, sargs, cargs, alg) in [
        (
            "tls13-aes128gcm",
            &["-tls1_3"][..],
            &["-tls1_3", "-ciphersuites", "TLS_AES_128_GCM_SHA256"][..],
            "AES-128-GCM",
        ),
        (
            "tls13-aes256gcm",
            &["-tls1_3"][..],
            &["-tls1_3", "-ciphersuites", "TLS_AES_256_GCM_SHA384"][..],
            "AES-256-GCM",
        ),
        (
            "tls12-aes128gcm",
            &["-tls1_2"][..],
            &["-tls1_2", "-cipher", "ECDHE-RSA-AES128-GCM-SHA256"][..],
            "AES-128-GCM",
        ),
        (
            "tls12-aes256gcm",
            &["-tls1_2"][..],
            &["-tls1_2", "-cipher", "ECDHE-RSA-AES256-GCM-SHA384"][..],
            "AES-256-GCM",
        ),
    ] {
        let (s, c) = tls_exchange(name, sargs, cargs, alg);
        for (side, st) in [("server", s), ("client", c)] {
            assert!(
                st.0 >= 2 && st.1 >= 40 && st.2 > 120_000,
                "{name} {side}: {alg} counts {st:?}"
            );
        }
    }
}

/// MAC-then-encrypt with SHA-1/SHA-256 MACs: libssl prefers OpenSSL's stitched
/// AES-CBC-HMAC-SHA cipher (default provider; aesx has no stitched cipher), so those records
/// stay on the default provider. The connection works; aesx sees only the setup.
#[test]
fn tls_mte_sha1_uses_the_stitched_default_cipher() {
    let (s, c) = tls_exchange(
        "tls12-mte-sha1",
        &["-tls1_2", "-no_etm"],
        &["-tls1_2", "-no_etm", "-cipher", "ECDHE-RSA-AES256-SHA"],
        "AES-256-CBC",
    );
    assert!(s.2 < 10_000 && c.2 < 10_000, "{s:?} {c:?}");
}

/// Two live processes sharing one stats file: the second must not wait for the first (a
/// mapping keeps the file's lock alive unless the provider unlocks it explicitly).
#[test]
fn processes_share_a_stats_file_without_blocking() {
    let dir = scratch("shared-stats");
    let stats = dir.join("stats");
    let _ = std::fs::remove_file(&stats);
    let conf = config_file(None, true);
    let enc = |c: &mut Command| {
        c.env("OPENSSL_CONF", &conf)
            .env("AESX_PROVIDER_STATS", &stats)
            .args([
                "enc",
                "-aes-256-ctr",
                "-K",
                &"11".repeat(32),
                "-iv",
                &"22".repeat(16),
            ]);
    };
    // The first stays alive (its stdin stays open) after loading the provider.
    let mut first = openssl();
    enc(&mut first);
    let mut first = Server(
        first
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let t0 = Instant::now();
    while !stats.exists() || std::fs::metadata(&stats).unwrap().len() != 1024 {
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "first process never mapped the file"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut second = openssl();
    enc(&mut second);
    let mut second = second
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    second
        .stdin
        .take()
        .unwrap()
        .write_all(&[0u8; 1000])
        .unwrap();
    let t0 = Instant::now();
    loop {
        if let Some(st) = second.try_wait().unwrap() {
            assert!(st.success());
            break;
        }
        if t0.elapsed() > Duration::from_secs(15) {
            let _ = second.kill();
            panic!("the second process blocked on the shared stats file");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(first.0.stdin.take());
    let _ = first.0.wait();
    assert!(stats_sum(&stats, "AES-256-CTR").2 >= 1000);
}
