//! End-to-end tests of the `aesx` binary: round trips, byte compatibility with `openssl enc`,
//! every refused input, signals, bounded memory, `cpu` and `bench` output.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use aesx::Backend;

const KEY128: &str = "000102030405060708090a0b0c0d0e0f";
const KEY192: &str = "000102030405060708090a0b0c0d0e0f1011121314151617";
const KEY256: &str = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";
const IV: &str = "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff";

fn aesx() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_aesx"));
    c.env_remove("AESX_BACKEND");
    c
}

fn run(args: &[&str]) -> Output {
    aesx().args(args).output().expect("run aesx")
}

fn data(n: usize, seed: u8) -> Vec<u8> {
    (0..n)
        .map(|i| {
            (i as u32)
                .wrapping_mul(2_654_435_761)
                .rotate_left(seed as u32 % 31) as u8
                ^ seed
        })
        .collect()
}

fn crypt_args<'a>(mode: &'a str, key: &'a str) -> Vec<&'a str> {
    let mut v = vec!["--mode", mode, "--key-hex", key];
    if mode != "ecb" {
        v.extend(["--iv-hex", IV]);
    }
    v
}

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// Files in `dir` other than the ones named.
fn leftovers(dir: &Path, keep: &[&str]) -> Vec<String> {
    fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !keep.contains(&n.as_str()))
        .collect()
}

fn expected_len(mode: &str, padded: bool, n: usize) -> usize {
    if mode == "ctr" || !padded {
        n
    } else {
        n / 16 * 16 + 16
    }
}

#[test]
fn round_trips_every_mode_key_size_and_backend() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (pp, cc, qq) = (d.join("p"), d.join("c"), d.join("q"));
    for b in Backend::available() {
        // soft is slow: keep its messages short; the fast backends also cross chunk edges.
        let lens: &[usize] = if b == Backend::Soft {
            &[0, 1, 15, 16, 17, 100]
        } else {
            &[
                0,
                1,
                15,
                16,
                17,
                4099,
                (1 << 20) - 1,
                1 << 20,
                (2 << 20) + 33,
            ]
        };
        for mode in ["ctr", "cbc", "ecb"] {
            for key in [KEY128, KEY192, KEY256] {
                for &n in lens {
                    let plain = data(n, n as u8);
                    fs::write(d.join("p"), &plain).unwrap();
                    let _ = fs::remove_file(d.join("c"));
                    let _ = fs::remove_file(d.join("q"));
                    let mut a = vec!["--backend", b.name(), "encrypt"];
                    a.extend(crypt_args(mode, key));
                    a.extend([p(&pp), p(&cc)]);
                    let o = run(&a);
                    assert!(o.status.success(), "{b} {mode} {n}: {:?}", o);
                    let c = fs::read(d.join("c")).unwrap();
                    assert_eq!(c.len(), expected_len(mode, true, n), "{b} {mode} {n}");
                    if n >= 16 {
                        assert_ne!(&c[..16], &plain[..16], "{b} {mode} {n} not encrypted");
                    }
                    let mut a = vec!["--backend", b.name(), "decrypt"];
                    a.extend(crypt_args(mode, key));
                    a.extend([p(&cc), p(&qq)]);
                    let o = run(&a);
                    assert!(o.status.success(), "{b} {mode} {n}: {:?}", o);
                    assert!(fs::read(d.join("q")).unwrap() == plain, "{b} {mode} {n}");
                }
            }
        }
    }
    assert!(leftovers(d, &["p", "c", "q"]).is_empty());
}

#[test]
fn stdin_stdout_and_key_file_forms_agree() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (pp, cc) = (d.join("p"), d.join("c"));
    let plain = data(50_000, 3);
    fs::write(d.join("p"), &plain).unwrap();
    let mut a = vec!["encrypt"];
    a.extend(crypt_args("cbc", KEY256));
    a.extend([p(&pp), p(&cc)]);
    assert!(run(&a).status.success());
    let want = fs::read(d.join("c")).unwrap();

    // Raw key bytes and hex text (with a newline) in a key file.
    fs::write(d.join("k.bin"), hex::decode(KEY256).unwrap()).unwrap();
    fs::write(d.join("k.hex"), format!("{KEY256}\n")).unwrap();
    for kf in ["k.bin", "k.hex"] {
        let mut child = aesx()
            .args(["encrypt", "--mode", "cbc", "--key-file"])
            .arg(d.join(kf))
            .args(["--iv-hex", IV, "-", "-"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let feed = plain.clone();
        let t = std::thread::spawn(move || stdin.write_all(&feed).unwrap());
        let o = child.wait_with_output().unwrap();
        t.join().unwrap();
        assert!(o.status.success(), "{kf}: {o:?}");
        assert!(o.stdout == want, "{kf}");
    }
}

fn have_openssl() -> bool {
    Command::new("openssl")
        .arg("version")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

#[test]
fn byte_compatible_with_openssl_enc() {
    if !have_openssl() {
        println!(
            "NOTE: `openssl` binary not installed; skipping the openssl enc compatibility test"
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (pp, cc) = (d.join("p"), d.join("c"));
    for (key, bits) in [(KEY128, 128), (KEY192, 192), (KEY256, 256)] {
        for mode in ["ctr", "cbc", "ecb"] {
            for padded in [true, false] {
                if mode == "ctr" && !padded {
                    continue;
                }
                for n in [0usize, 1, 16, 33, 4096, (1 << 20) + 3] {
                    if !padded && n % 16 != 0 {
                        continue;
                    }
                    let plain = data(n, 9);
                    fs::write(d.join("p"), &plain).unwrap();
                    for f in ["c", "o", "q"] {
                        let _ = fs::remove_file(d.join(f));
                    }
                    let mut a = vec!["encrypt"];
                    a.extend(crypt_args(mode, key));
                    if !padded {
                        a.extend(["--padding", "none"]);
                    }
                    a.extend([p(&pp), p(&cc)]);
                    let o = run(&a);
                    assert!(o.status.success(), "{o:?}");

                    let mut ossl = Command::new("openssl");
                    ossl.args(["enc", &format!("-aes-{bits}-{mode}"), "-K", key]);
                    if mode != "ecb" {
                        ossl.args(["-iv", IV]);
                    }
                    if !padded {
                        ossl.arg("-nopad");
                    }
                    let mut dec = Command::new("openssl");
                    dec.args(ossl.get_args().collect::<Vec<_>>()).arg("-d");
                    let o = ossl
                        .arg("-in")
                        .arg(d.join("p"))
                        .arg("-out")
                        .arg(d.join("o"))
                        .output()
                        .unwrap();
                    assert!(o.status.success(), "openssl enc failed: {o:?}");
                    let ours = fs::read(d.join("c")).unwrap();
                    let theirs = fs::read(d.join("o")).unwrap();
                    assert!(ours == theirs, "aes-{bits}-{mode} pad={padded} n={n}");

                    // And openssl decrypts ours.
                    let o = dec
                        .arg("-in")
                        .arg(d.join("c"))
                        .arg("-out")
                        .arg(d.join("q"))
                        .output()
                        .unwrap();
                    assert!(o.status.success(), "openssl -d failed: {o:?}");
                    assert!(fs::read(d.join("q")).unwrap() == plain);
                }
            }
        }
    }
}

/// Runs a failing command and checks: non-zero exit, one line on stderr containing `needle`,
/// no key material in it, DST in its original state, no temporary files left.
fn expect_failure(
    args: &[&str],
    dir: &Path,
    dst: &Path,
    dst_before: Option<&[u8]>,
    keep: &[&str],
    needle: &str,
) {
    let o = run(args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{args:?} succeeded");
    assert_eq!(
        err.trim_end().lines().count(),
        1,
        "{args:?}: not one line: {err}"
    );
    assert!(
        err.to_lowercase().contains(&needle.to_lowercase()),
        "{args:?}: {err:?} lacks {needle:?}"
    );
    for k in [KEY128, KEY192, KEY256] {
        assert!(!err.contains(k), "{args:?}: key printed");
    }
    match dst_before {
        Some(b) => assert!(fs::read(dst).unwrap() == b, "{args:?}: DST clobbered"),
        None => assert!(!dst.exists(), "{args:?}: partial DST left"),
    }
    assert!(
        leftovers(dir, keep).is_empty(),
        "{args:?}: left {:?}",
        leftovers(dir, keep)
    );
}

#[test]
fn bad_inputs_fail_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let src = d.join("src");
    let dst = d.join("dst");
    fs::write(&src, data(1000, 1)).unwrap();
    fs::write(d.join("aligned"), data(64, 2)).unwrap();
    fs::write(d.join("odd"), data(17, 2)).unwrap();
    fs::write(d.join("key.short"), [7u8; 20]).unwrap();
    let keep = ["src", "aligned", "odd", "key.short", "ct", "old"];
    let (s, t) = (p(&src), p(&dst));
    let fail = |args: &[&str], needle: &str| expect_failure(args, d, &dst, None, &keep, needle);

    fail(
        &["encrypt", "--key-hex", "0011", "--iv-hex", IV, s, t],
        "16, 24 or 32 bytes",
    );
    fail(
        &[
            "encrypt",
            "--key-hex",
            &KEY128.replace('0', "g"),
            "--iv-hex",
            IV,
            s,
            t,
        ],
        "not hex",
    );
    fail(
        &["encrypt", "--key-hex", &KEY128[1..], "--iv-hex", IV, s, t],
        "odd number",
    );
    fail(
        &[
            "encrypt",
            "--key-file",
            p(&d.join("key.short")),
            "--iv-hex",
            IV,
            s,
            t,
        ],
        "20 bytes",
    );
    fail(
        &[
            "encrypt",
            "--key-file",
            p(&d.join("nokey")),
            "--iv-hex",
            IV,
            s,
            t,
        ],
        "cannot read --key-file",
    );
    fail(
        &["encrypt", "--key-hex", KEY128, "--iv-hex", &IV[..30], s, t],
        "32 hex digits",
    );
    fail(
        &[
            "encrypt",
            "--key-hex",
            KEY128,
            "--iv-hex",
            &IV.replace('f', "x"),
            s,
            t,
        ],
        "not hex",
    );
    // Without --mode/--iv-hex it is the aesx format, which takes no --key-hex.
    fail(
        &["encrypt", "--key-hex", KEY128, s, t],
        "--key-hex is only for",
    );
    fail(
        &["encrypt", "--mode", "cbc", "--key-hex", KEY128, s, t],
        "needs an IV",
    );
    fail(
        &[
            "encrypt",
            "--mode",
            "ecb",
            "--key-hex",
            KEY128,
            "--iv-hex",
            IV,
            s,
            t,
        ],
        "ecb uses no IV",
    );
    fail(
        &[
            "encrypt",
            "--mode",
            "ctr",
            "--padding",
            "pkcs7",
            "--key-hex",
            KEY128,
            "--iv-hex",
            IV,
            s,
            t,
        ],
        "never padded",
    );
    fail(
        &[
            "encrypt",
            "--mode",
            "cbc",
            "--padding",
            "none",
            "--key-hex",
            KEY128,
            "--iv-hex",
            IV,
            p(&d.join("odd")),
            t,
        ],
        "not a multiple of 16",
    );
    fail(
        &[
            "decrypt",
            "--mode",
            "cbc",
            "--key-hex",
            KEY128,
            "--iv-hex",
            IV,
            p(&d.join("odd")),
            t,
        ],
        "not a multiple of 16",
    );
    fail(
        &[
            "decrypt",
            "--mode",
            "ecb",
            "--padding",
            "none",
            "--key-hex",
            KEY128,
            p(&d.join("odd")),
            t,
        ],
        "not a multiple of 16",
    );
    fail(
        &[
            "encrypt",
            "--key-hex",
            KEY128,
            "--iv-hex",
            IV,
            p(&d.join("missing")),
            t,
        ],
        "cannot read SRC",
    );
    fail(
        &["encrypt", "--key-hex", KEY128, "--iv-hex", IV, p(d), t],
        "directory",
    );
    fail(
        &[
            "--backend",
            "nope",
            "encrypt",
            "--key-hex",
            KEY128,
            "--iv-hex",
            IV,
            s,
            t,
        ],
        "unknown backend",
    );
    fail(
        &[
            "encrypt",
            "--threads",
            "0",
            "--key-hex",
            KEY128,
            "--iv-hex",
            IV,
            s,
            t,
        ],
        "--threads",
    );

    // Bad padding: a ciphertext decrypted with the wrong key (the partial DST must go).
    let ct = d.join("ct");
    let o = run(&[
        "encrypt",
        "--mode",
        "cbc",
        "--key-hex",
        KEY128,
        "--iv-hex",
        IV,
        s,
        p(&ct),
    ]);
    assert!(o.status.success());
    let wrong = KEY128.replace("0f", "ff");
    fail(
        &[
            "decrypt",
            "--mode",
            "cbc",
            "--key-hex",
            &wrong,
            "--iv-hex",
            IV,
            p(&ct),
            t,
        ],
        "bad decrypt",
    );
    // Bad padding in a multi-chunk ciphertext, detected only at the very end.
    let big = d.join("aligned");
    fs::write(&big, data((3 << 20) + 32, 5)).unwrap();
    fail(
        &["decrypt", "--mode", "ecb", "--key-hex", KEY128, p(&big), t],
        "bad decrypt",
    );

    // DST = SRC, directly and through a hard link; DST exists without --force.
    let before = fs::read(&src).unwrap();
    expect_failure(
        &["encrypt", "--key-hex", KEY128, "--iv-hex", IV, s, s],
        d,
        &src,
        Some(&before),
        &keep,
        "same file",
    );
    fs::hard_link(&src, d.join("old")).unwrap();
    expect_failure(
        &[
            "encrypt",
            "--key-hex",
            KEY128,
            "--iv-hex",
            IV,
            s,
            p(&d.join("old")),
        ],
        d,
        &src,
        Some(&before),
        &keep,
        "same file",
    );
    fs::remove_file(d.join("old")).unwrap();
    fs::write(d.join("old"), b"precious").unwrap();
    expect_failure(
        &[
            "encrypt",
            "--key-hex",
            KEY128,
            "--iv-hex",
            IV,
            s,
            p(&d.join("old")),
        ],
        d,
        &d.join("old"),
        Some(b"precious"),
        &keep,
        "--force",
    );
    // An existing DST survives a failing run even with --force.
    expect_failure(
        &[
            "decrypt",
            "--force",
            "--mode",
            "cbc",
            "--key-hex",
            &wrong,
            "--iv-hex",
            IV,
            p(&ct),
            p(&d.join("old")),
        ],
        d,
        &d.join("old"),
        Some(b"precious"),
        &keep,
        "bad decrypt",
    );
    // ... and is replaced when the run succeeds with --force.
    let o = run(&[
        "decrypt",
        "--force",
        "--mode",
        "cbc",
        "--key-hex",
        KEY128,
        "--iv-hex",
        IV,
        p(&ct),
        p(&d.join("old")),
    ]);
    assert!(o.status.success(), "{o:?}");
    assert!(fs::read(d.join("old")).unwrap() == before);
}

#[test]
fn unavailable_backend_from_env_is_an_error() {
    let missing = Backend::ALL.into_iter().find(|b| !b.is_available());
    let o = aesx()
        .env("AESX_BACKEND", "bogus")
        .args(["cpu"])
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("AESX_BACKEND"));
    if let Some(b) = missing {
        let o = aesx()
            .env("AESX_BACKEND", b.name())
            .args(["cpu"])
            .output()
            .unwrap();
        assert!(!o.status.success());
        assert!(String::from_utf8_lossy(&o.stderr).contains("not available"));
    }
}

#[test]
fn write_failures_leave_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::write(d.join("src"), data(300_000, 4)).unwrap();
    // A full device: ENOSPC.
    if Path::new("/dev/full").exists() {
        let o = run(&[
            "encrypt",
            "--key-hex",
            KEY128,
            "--iv-hex",
            IV,
            "--force",
            p(&d.join("src")),
            "/dev/full",
        ]);
        assert!(!o.status.success());
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("No space left") && err.contains("free some space"),
            "{err}"
        );
    }
    // A file-size limit hit half way (EFBIG on a regular file): no DST, no temporary file.
    let cmd = format!(
        "ulimit -f 100 && exec '{}' encrypt --key-hex {KEY128} --iv-hex {IV} src dst",
        env!("CARGO_BIN_EXE_aesx")
    );
    let o = Command::new("sh")
        .arg("-c")
        .arg(cmd)
        .current_dir(d)
        .output()
        .unwrap();
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("cannot write"), "{err}");
    assert!(!d.join("dst").exists());
    assert_eq!(leftovers(d, &["src"]), Vec::<String>::new());
}

fn wait_for_temp(dir: &Path) -> bool {
    let t = Instant::now();
    while t.elapsed() < Duration::from_secs(20) {
        if leftovers(dir, &[]).iter().any(|n| n.ends_with(".aesx-tmp")) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

#[test]
fn signals_remove_the_temporary_file() {
    for sig in ["INT", "TERM"] {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let dst: PathBuf = d.join("dst");
        let mut child = aesx()
            .args(["encrypt", "--key-hex", KEY128, "--iv-hex", IV, "-"])
            .arg(&dst)
            .stdin(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Some input, then the stream stays open so aesx is mid-run.
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(&data(3 << 20, 1)).unwrap();
        assert!(wait_for_temp(d), "no temporary file appeared");
        let k = Command::new("sh")
            .arg("-c")
            .arg(format!("kill -s {sig} {}", child.id()))
            .status()
            .unwrap();
        assert!(k.success());
        let o = child.wait_with_output().unwrap();
        drop(stdin);
        assert!(!o.status.success(), "SIG{sig}: exit status {:?}", o.status);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("interrupted"), "SIG{sig}: {err}");
        assert!(!dst.exists(), "SIG{sig}: DST written");
        assert!(
            leftovers(d, &[]).is_empty(),
            "SIG{sig}: {:?}",
            leftovers(d, &[])
        );
    }
}

#[test]
fn memory_stays_bounded_for_large_streams() {
    // 600 MiB through a pipe under a 150 MiB address-space limit.
    let cmd = format!(
        "ulimit -v 153600 && head -c 629145600 /dev/zero | '{}' encrypt --mode cbc --key-hex {KEY256} --iv-hex {IV} - - | wc -c",
        env!("CARGO_BIN_EXE_aesx")
    );
    let o = Command::new("sh").arg("-c").arg(cmd).output().unwrap();
    assert!(o.status.success(), "{o:?}");
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), "629145616");
}

#[test]
fn cpu_reports_features_and_backends() {
    let o = run(&["cpu", "--json"]);
    assert!(o.status.success());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let f = aesx::cpu::features();
    assert_eq!(v["features"]["aes"], serde_json::json!(f.aes));
    assert_eq!(v["features"]["vaes"], serde_json::json!(f.vaes));
    let avail: Vec<String> = Backend::available()
        .iter()
        .map(|b| b.name().to_string())
        .collect();
    assert_eq!(v["available"], serde_json::json!(avail));
    assert_eq!(v["selected"], serde_json::json!(Backend::detect().name()));
    // The Fugue backends `aesx hash --backend` takes (its help points here).
    use aesx::hash::fugue::FugueBackend;
    let fugue: Vec<&str> = FugueBackend::available().iter().map(|b| b.name()).collect();
    assert_eq!(v["fugue_available"], serde_json::json!(fugue));
    assert_eq!(v["fugue_selected"], FugueBackend::detect().name());

    let o = run(&["--backend", "soft", "cpu", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["selected"], "soft");

    let o = run(&["cpu"]);
    let text = String::from_utf8_lossy(&o.stdout);
    let first = text.lines().next().unwrap();
    let want = if f.aes { "found" } else { "not found" };
    assert_eq!(first, format!("Checking for AES-NI support... {want}"));
    assert!(
        text.contains(&format!(
            "Fugue backends available: {} (`aesx hash` uses {})",
            fugue.join(", "),
            FugueBackend::detect().name()
        )),
        "{text}"
    );
}

#[test]
fn bench_trials_option() {
    let o = run(&["bench", "--ops", "keysetup", "--trials", "0"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr_of(&o).contains("--trials"), "{}", stderr_of(&o));
    let o = run(&[
        "bench",
        "--json",
        "--ops",
        "keysetup",
        "--keys",
        "128",
        "--backends",
        "soft",
        "--trials",
        "3",
    ]);
    assert!(o.status.success(), "{o:?}");
    assert_eq!(String::from_utf8_lossy(&o.stdout).lines().count(), 3);
}

#[test]
fn bench_json_lines_and_out_dir() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = run(&[
        "bench",
        "--json",
        "--sizes",
        "16,16K",
        "--ops",
        "ctr,keysetup",
        "--keys",
        "128",
        "--out",
        p(&out),
    ]);
    assert!(o.status.success(), "{o:?}");
    let text = String::from_utf8(o.stdout).unwrap();
    let mut impls = std::collections::BTreeSet::new();
    let mut n = 0;
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let m = v.as_object().unwrap();
        let mut keys: Vec<&str> = m.keys().map(|k| k.as_str()).collect();
        keys.sort_unstable();
        if v["op"] == "keysetup" {
            assert_eq!(keys, ["backend", "impl", "key_bits", "ns", "op", "size"]);
            assert_eq!(v["size"], 0);
            assert!(v["ns"].as_f64().unwrap() > 0.0);
        } else {
            assert_eq!(keys, ["backend", "gbps", "impl", "key_bits", "op", "size"]);
            assert!(v["size"] == 16 || v["size"] == 16384);
            assert!(v["gbps"].as_f64().unwrap() > 0.0);
        }
        assert_eq!(v["key_bits"], 128);
        impls.insert(v["impl"].as_str().unwrap().to_string());
        n += 1;
    }
    let backends = Backend::available().len();
    assert_eq!(n, (backends + 2) * 3, "{text}");
    assert_eq!(
        impls.into_iter().collect::<Vec<_>>(),
        ["aesx", "openssl", "rustcrypto"]
    );
    let png = fs::read(out.join("throughput.png")).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    let results: serde_json::Value =
        serde_json::from_slice(&fs::read(out.join("results.json")).unwrap()).unwrap();
    assert_eq!(results["results"].as_array().unwrap().len(), n);
    let perf = fs::read_to_string(out.join("perf-openssl-default.txt")).unwrap();
    let lines: Vec<Vec<&str>> = perf.lines().map(|l| l.split(' ').collect()).collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0][..3], ["2", "128", "16"]);
    assert!(lines[1][3].parse::<f64>().unwrap() > 0.0);
}

#[test]
fn bench_rejects_bad_lists() {
    for (args, needle) in [
        (vec!["bench", "--sizes", "12x"], "not a size"),
        (vec!["bench", "--ops", "gcm"], "unknown op"),
        (vec!["bench", "--keys", "512"], "not an AES key size"),
        (
            vec!["bench", "--sizes", "24", "--ops", "ecb-enc"],
            "multiple of 16",
        ),
        (vec!["bench", "--backends", "nope"], "unknown backend"),
    ] {
        let o = run(&args);
        assert!(!o.status.success());
        assert!(
            String::from_utf8_lossy(&o.stderr).contains(needle),
            "{args:?}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// `aesx hash`

const FUGUE_ALGS: [&str; 4] = ["fugue224", "fugue256", "fugue384", "fugue512"];

/// The MD of the ShortMsg KAT record with `Len = bits` for `alg`, lower-case hex, read from
/// testdata/fugue.
fn fugue_kat(alg: &str, bits: u32) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/fugue")
        .join(format!("sphlib_nist_ShortMsg_{alg}.txt"));
    let text = fs::read_to_string(&path).unwrap();
    let want = format!("Len = {bits}");
    let mut lines = text.lines().map(str::trim);
    while let Some(l) = lines.next() {
        if l == want {
            let msg = lines.next().unwrap();
            assert!(msg.starts_with("Msg = "), "{path:?}: {msg}");
            if bits == 8 {
                assert_eq!(msg, "Msg = CC", "{path:?}");
            }
            let md = lines.next().unwrap();
            return md.strip_prefix("MD = ").unwrap().to_ascii_lowercase();
        }
    }
    panic!("{path:?}: no record {want}");
}

fn stdout_of(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn stderr_of(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn fugue_backends() -> Vec<&'static str> {
    aesx::hash::fugue::FugueBackend::available()
        .iter()
        .map(|b| b.name())
        .collect()
}

#[test]
fn hash_matches_the_short_msg_kats_on_every_backend() {
    let dir = tempfile::tempdir().unwrap();
    let (empty, cc) = (dir.path().join("empty"), dir.path().join("cc"));
    fs::write(&empty, b"").unwrap();
    fs::write(&cc, b"\xcc").unwrap();
    for alg in FUGUE_ALGS {
        let want = format!(
            "{}  {}\n{}  {}\n",
            fugue_kat(alg, 0),
            p(&empty),
            fugue_kat(alg, 8),
            p(&cc)
        );
        // Default backend, then each available one by name; all must agree with the KATs.
        let mut runs = vec![vec!["hash", "--alg", alg, p(&empty), p(&cc)]];
        for b in fugue_backends() {
            runs.push(vec![
                "hash",
                "--alg",
                alg,
                "--backend",
                b,
                p(&empty),
                p(&cc),
            ]);
        }
        for a in runs {
            let o = run(&a);
            assert!(o.status.success(), "{a:?}: {o:?}");
            assert_eq!(stdout_of(&o), want, "{a:?}");
        }
    }
    // The default is fugue256, and `--backend` before the subcommand works too.
    let o = run(&["--backend", "soft", "hash", p(&cc)]);
    assert_eq!(
        stdout_of(&o),
        format!("{}  {}\n", fugue_kat("fugue256", 8), p(&cc))
    );
}

#[test]
fn hash_backends_agree_on_longer_inputs_and_stdin() {
    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for n in [1usize, 3, 4, 5, 63, 64, 65, 1000, 70_001] {
        let f = dir.path().join(format!("f{n}"));
        fs::write(&f, data(n, n as u8)).unwrap();
        files.push(f);
    }
    let big = data(200_003, 9);
    for alg in FUGUE_ALGS {
        let mut want: Option<String> = None;
        let mut want_stdin: Option<String> = None;
        for b in fugue_backends() {
            let mut a = vec!["hash", "--alg", alg, "--backend", b];
            a.extend(files.iter().map(|f| p(f)));
            let o = run(&a);
            assert!(o.status.success(), "{o:?}");
            let text = stdout_of(&o);
            assert_eq!(text.lines().count(), files.len());
            for (line, f) in text.lines().zip(&files) {
                let (hex, name) = line.split_once("  ").unwrap();
                assert_eq!(name, p(f));
                assert_eq!(hex.len(), alg[5..].parse::<usize>().unwrap() / 4);
            }
            match &want {
                None => want = Some(text),
                Some(w) => assert_eq!(&text, w, "{alg} {b}"),
            }
            // stdin, both implicit and as `-`.
            for args in [
                vec!["hash", "--alg", alg, "--backend", b],
                vec!["hash", "--alg", alg, "--backend", b, "-"],
            ] {
                let mut c = aesx()
                    .args(&args)
                    .stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .spawn()
                    .unwrap();
                c.stdin.take().unwrap().write_all(&big).unwrap();
                let o = c.wait_with_output().unwrap();
                assert!(o.status.success(), "{o:?}");
                let text = stdout_of(&o);
                assert!(text.ends_with("  -\n"), "{text}");
                match &want_stdin {
                    None => want_stdin = Some(text),
                    Some(w) => assert_eq!(&text, w, "{alg} {b} stdin"),
                }
            }
        }
        // The stdin digest equals that of the same bytes in a file.
        let f = dir.path().join("big");
        fs::write(&f, &big).unwrap();
        let o = run(&["hash", "--alg", alg, p(&f)]);
        let file_hex = stdout_of(&o).split_once("  ").unwrap().0.to_string();
        let stdin_hex = want_stdin.unwrap().split_once("  ").unwrap().0.to_string();
        assert_eq!(file_hex, stdin_hex, "{alg}");
    }
}

#[test]
fn hash_check_reports_ok_failed_malformed_and_missing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (a, b) = (d.join("a"), d.join("b c"));
    fs::write(&a, b"").unwrap();
    fs::write(&b, b"\xcc").unwrap();
    let k0 = fugue_kat("fugue256", 0);
    let k8 = fugue_kat("fugue256", 8);

    // All good (both separators, upper-case hex, a blank line).
    let sums = d.join("good.sum");
    fs::write(
        &sums,
        format!("{k0}  {}\n\n{} *{}\n", p(&a), k8.to_uppercase(), p(&b)),
    )
    .unwrap();
    let o = run(&["hash", "--check", p(&sums)]);
    assert!(o.status.success(), "{o:?}");
    assert_eq!(stdout_of(&o), format!("{}: OK\n{}: OK\n", p(&a), p(&b)));

    // A printed list checks back OK, for another alg too.
    let o = run(&["hash", "--alg", "fugue384", p(&a), p(&b)]);
    let list = d.join("384.sum");
    fs::write(&list, &o.stdout).unwrap();
    let o = run(&["hash", "--alg", "fugue384", "-c", p(&list)]);
    assert!(o.status.success(), "{o:?}");
    // ... but not with the wrong --alg: the digest length does not fit.
    let o = run(&["hash", "-c", p(&list)]);
    assert!(!o.status.success());
    assert!(stderr_of(&o).contains("malformed"), "{o:?}");

    // A wrong digest: FAILED, non-zero exit, the good line still OK.
    let bad = d.join("bad.sum");
    fs::write(&bad, format!("{k0}  {}\n{k0}  {}\n", p(&a), p(&b))).unwrap();
    let o = run(&["hash", "--check", p(&bad)]);
    assert!(!o.status.success());
    assert_eq!(stdout_of(&o), format!("{}: OK\n{}: FAILED\n", p(&a), p(&b)));
    assert!(stderr_of(&o).contains("1 digest did NOT match"), "{o:?}");

    // Malformed lines are reported with their line number; the rest is still checked.
    let mal = d.join("mal.sum");
    fs::write(
        &mal,
        format!(
            "{k0}  {}\nnot a checksum line\n{}  x\n{k0} {}\n{k0}  \n",
            p(&a),
            &k0[..60],
            p(&a)
        ),
    )
    .unwrap();
    let o = run(&["hash", "--check", p(&mal)]);
    assert!(!o.status.success());
    assert_eq!(stdout_of(&o), format!("{}: OK\n", p(&a)));
    let err = stderr_of(&o);
    for n in 2..=5 {
        assert!(
            err.contains(&format!("mal.sum:{n}: malformed")),
            "{n}: {err}"
        );
    }
    assert!(err.contains("4 lines were malformed"), "{err}");

    // A listed file that is missing: FAILED open or read, a clear message, non-zero exit.
    let miss = d.join("miss.sum");
    let gone = d.join("gone");
    fs::write(&miss, format!("{k0}  {}\n{k8}  {}\n", p(&gone), p(&b))).unwrap();
    let o = run(&["hash", "--check", p(&miss)]);
    assert!(!o.status.success());
    assert_eq!(
        stdout_of(&o),
        format!("{}: FAILED open or read\n{}: OK\n", p(&gone), p(&b))
    );
    let err = stderr_of(&o);
    assert!(
        err.contains(&format!("{}: No such file", p(&gone))),
        "{err}"
    );
    assert!(err.contains("1 file could not be read"), "{err}");

    // The sum file itself missing, and sums read from stdin.
    let o = run(&["hash", "--check", p(&d.join("nope.sum"))]);
    assert!(!o.status.success());
    assert!(stderr_of(&o).contains("cannot open"), "{o:?}");
    let mut c = aesx()
        .args(["hash", "--check", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    c.stdin
        .take()
        .unwrap()
        .write_all(format!("{k8}  {}\n", p(&b)).as_bytes())
        .unwrap();
    let o = c.wait_with_output().unwrap();
    assert!(o.status.success(), "{o:?}");
    assert_eq!(stdout_of(&o), format!("{}: OK\n", p(&b)));
}

#[test]
fn hash_refuses_bad_arguments_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing");
    let f = dir.path().join("f");
    fs::write(&f, b"x").unwrap();
    for (args, needle) in [
        (vec!["hash", "--alg", "sha256"], "unknown digest"),
        (
            vec!["hash", "--backend", "vaes512"],
            "unknown Fugue backend",
        ),
        (vec!["hash", "--backend", "nope"], "unknown Fugue backend"),
        (
            vec!["hash", "--check", p(&f), p(&f)],
            "do not also give FILE",
        ),
        (vec!["hash", p(&missing)], "No such file"),
    ] {
        let o = run(&args);
        assert!(!o.status.success(), "{args:?}");
        assert!(stderr_of(&o).contains(needle), "{args:?}: {o:?}");
    }
    for b in aesx::hash::fugue::FugueBackend::ALL {
        if !b.is_available() {
            let o = run(&["hash", "--backend", b.name(), p(&f)]);
            assert!(!o.status.success());
            assert!(stderr_of(&o).contains("not available"), "{o:?}");
        }
    }
    // A missing file among good ones: the good ones are still printed, exit non-zero.
    let o = run(&["hash", p(&f), p(&missing), p(&f)]);
    assert!(!o.status.success());
    assert_eq!(stdout_of(&o).lines().count(), 2);
    assert!(stderr_of(&o).contains("1 of 3 files could not be read"));
    // AESX_BACKEND names AES backends and is not read by `hash`.
    let o = aesx()
        .env("AESX_BACKEND", "vaes512")
        .args(["hash", p(&f)])
        .output()
        .unwrap();
    assert!(o.status.success(), "{o:?}");
}

#[test]
fn hash_memory_stays_bounded_for_large_streams() {
    // 300 MiB through a pipe under a 150 MiB address-space limit.
    let cmd = format!(
        "ulimit -v 153600 && head -c 314572800 /dev/zero | '{}' hash",
        env!("CARGO_BIN_EXE_aesx")
    );
    let o = Command::new("sh").arg("-c").arg(cmd).output().unwrap();
    assert!(o.status.success(), "{o:?}");
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(text.len(), 64 + 4, "{text}");
    assert!(text.ends_with("  -\n"));
}

#[test]
fn bench_fugue_json_lines() {
    let o = run(&["bench", "--ops", "fugue256", "--sizes", "1K", "--json"]);
    assert!(o.status.success(), "{o:?}");
    let text = stdout_of(&o);
    let mut backends = Vec::new();
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(v["impl"], "aesx");
        assert_eq!(v["op"], "fugue256");
        assert_eq!(v["key_bits"], 0);
        assert_eq!(v["size"], 1024);
        assert!(v["gbps"].as_f64().unwrap() > 0.0);
        backends.push(v["backend"].as_str().unwrap().to_string());
    }
    assert_eq!(backends, fugue_backends());
}

/// `--backends` picks the Fugue backends of the Fugue ops (`gfni` is one) and the AES backends
/// of the AES ops from one list; a list with no AES backend for an AES op is refused.
#[test]
fn bench_backends_filter_fugue_and_aes_ops() {
    let o = run(&[
        "bench",
        "--ops",
        "fugue256,ctr",
        "--sizes",
        "1K",
        "--keys",
        "128",
        "--backends",
        "soft",
        "--json",
    ]);
    assert!(o.status.success(), "{o:?}");
    let mut seen = Vec::new();
    for line in stdout_of(&o).lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        if v["impl"] == "aesx" {
            seen.push(format!(
                "{}/{}",
                v["op"].as_str().unwrap(),
                v["backend"].as_str().unwrap()
            ));
        }
    }
    assert_eq!(seen, ["fugue256/soft", "ctr/soft"]);
    let o = run(&["bench", "--ops", "ctr", "--backends", "gfni"]);
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("no AES backend"),
        "{o:?}"
    );
}

/// The pipeline's chunk size (crates/aesx-cli/src/pipeline.rs) and the library's threshold
/// for splitting a buffer across threads (aesx::parallel::PAR_THRESHOLD).
const MT_CHUNK: usize = 4 << 20;
const PAR_THRESHOLD: usize = 1 << 20;

/// Encrypts (or decrypts) `src` into `dst` with ctr and the given thread count and IV.
fn ctr_file(dir_: &str, iv: &str, threads: usize, src: &Path, dst: &Path) {
    let _ = fs::remove_file(dst);
    let t = threads.to_string();
    let o = run(&[
        dir_,
        "--mode",
        "ctr",
        "--key-hex",
        KEY128,
        "--iv-hex",
        iv,
        "--threads",
        &t,
        p(src),
        p(dst),
    ]);
    assert!(o.status.success(), "{dir_} --threads {t}: {o:?}");
}

/// `openssl enc -aes-128-ctr` of `src`, when the binary is installed (an independent oracle).
fn openssl_ctr(iv: &str, src: &Path, dst: &Path) -> Option<Vec<u8>> {
    if !have_openssl() {
        return None;
    }
    let o = Command::new("openssl")
        .args(["enc", "-aes-128-ctr", "-K", KEY128, "-iv", iv, "-in"])
        .arg(src)
        .arg("-out")
        .arg(dst)
        .output()
        .unwrap();
    assert!(o.status.success(), "openssl enc failed: {o:?}");
    Some(fs::read(dst).unwrap())
}

#[test]
fn ctr_threads_identical_output_and_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (src, one, many, back, ossl) = (
        d.join("src"),
        d.join("one"),
        d.join("many"),
        d.join("back"),
        d.join("ossl"),
    );
    // Sizes at and around the pipeline chunk and the library's split threshold, plus a few
    // drawn from a fixed-seed generator between them.
    let mut sizes = vec![
        0usize,
        1,
        15,
        17,
        PAR_THRESHOLD - 1,
        PAR_THRESHOLD + 17,
        MT_CHUNK - 1,
        MT_CHUNK,
        MT_CHUNK + 1,
        2 * MT_CHUNK + 5,
    ];
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    for _ in 0..3 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        sizes.push(PAR_THRESHOLD + (x % (2 * MT_CHUNK as u64)) as usize);
    }
    for (k, &n) in sizes.iter().enumerate() {
        let plain = data(n, k as u8 + 3);
        fs::write(&src, &plain).unwrap();
        ctr_file("encrypt", IV, 1, &src, &one);
        let want = fs::read(&one).unwrap();
        assert_eq!(want.len(), n);
        if let Some(o) = openssl_ctr(IV, &src, &ossl) {
            assert!(o == want, "--threads 1 differs from openssl at n={n}");
        }
        for threads in 2..=8 {
            ctr_file("encrypt", IV, threads, &src, &many);
            assert!(
                fs::read(&many).unwrap() == want,
                "--threads {threads} n={n}"
            );
            ctr_file("decrypt", IV, threads, &many, &back);
            assert!(
                fs::read(&back).unwrap() == plain,
                "round trip --threads {threads} n={n}"
            );
        }
    }
    // Unknown size (stdin, so full-size chunks) to stdout.
    let n = 2 * MT_CHUNK + 33;
    let plain = data(n, 77);
    fs::write(&src, &plain).unwrap();
    ctr_file("encrypt", IV, 1, &src, &one);
    let want = fs::read(&one).unwrap();
    for threads in ["2", "5"] {
        let mut c = aesx()
            .args([
                "encrypt",
                "--key-hex",
                KEY128,
                "--iv-hex",
                IV,
                "--threads",
                threads,
                "-",
                "-",
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = c.stdin.take().unwrap();
        let feed = plain.clone();
        let h = std::thread::spawn(move || stdin.write_all(&feed).unwrap());
        let o = c.wait_with_output().unwrap();
        h.join().unwrap();
        assert!(o.status.success(), "{o:?}");
        assert!(o.stdout == want, "stdin/stdout --threads {threads}");
    }
}

#[test]
fn ctr_threads_counter_carry_across_chunk_boundary() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (src, one, many, ossl) = (d.join("src"), d.join("one"), d.join("many"), d.join("ossl"));
    let blocks = (MT_CHUNK / 16) as u128;
    // The whole 128-bit counter wraps one block before the first chunk boundary; the low 64
    // bits carry into the high half one block after it.
    let ivs = [
        format!("{:032x}", u128::MAX - blocks + 2),
        format!("{:032x}", (5u128 << 64) + (u64::MAX as u128) - blocks),
    ];
    let n = 2 * MT_CHUNK + 100;
    let plain = data(n, 41);
    fs::write(&src, &plain).unwrap();
    for iv in &ivs {
        ctr_file("encrypt", iv, 1, &src, &one);
        let want = fs::read(&one).unwrap();
        if let Some(o) = openssl_ctr(iv, &src, &ossl) {
            assert!(o == want, "--threads 1 differs from openssl, iv {iv}");
        }
        // The ciphertext must not repeat the keystream of the first chunk after the wrap.
        assert!(want[MT_CHUNK..MT_CHUNK + 64] != plain[MT_CHUNK..MT_CHUNK + 64]);
        for threads in [2, 3, 8] {
            ctr_file("encrypt", iv, threads, &src, &many);
            assert!(
                fs::read(&many).unwrap() == want,
                "iv {iv} --threads {threads}"
            );
        }
    }
}

#[test]
fn ctr_threads_errors_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let src = d.join("src");
    let dst = d.join("dst");
    let big = d.join("big");
    fs::write(&src, data(1000, 1)).unwrap();
    fs::write(&big, data(3 * MT_CHUNK + 7, 2)).unwrap();
    fs::write(d.join("old"), b"old contents").unwrap();
    let keep = ["src", "big", "old"];
    let (s, t, b) = (p(&src), p(&dst), p(&big));
    let old = d.join("old");
    let missing = d.join("missing");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec![p(&missing), t], "cannot read SRC"),
        (vec![b, p(&old)], "already exists"),
        (vec![s, s], "same file"),
        (vec![p(d), t], "is a directory"),
    ];
    for (files, needle) in &cases {
        let mut stderr = Vec::new();
        for threads in ["1", "4"] {
            let mut a = vec!["encrypt", "--threads", threads];
            a.extend(crypt_args("ctr", KEY128));
            a.extend(files.iter().copied());
            let before = fs::read(&old).unwrap();
            expect_failure(&a, d, &dst, None, &keep, needle);
            assert_eq!(fs::read(&old).unwrap(), before);
            stderr.push(run(&a).stderr);
        }
        assert_eq!(
            stderr[0], stderr[1],
            "{files:?}: message differs with --threads"
        );
    }
    let mut a = vec!["encrypt", "--threads", "0"];
    a.extend(crypt_args("ctr", KEY128));
    a.extend([b, t]);
    expect_failure(&a, d, &dst, None, &keep, "--threads must be at least 1");

    // Write failures in the middle of a multi-chunk run: same message, nothing left behind.
    if Path::new("/dev/full").exists() {
        let mut msgs = Vec::new();
        for threads in ["1", "3"] {
            let mut a = vec!["encrypt", "--force", "--threads", threads];
            a.extend(crypt_args("ctr", KEY128));
            a.extend([b, "/dev/full"]);
            let o = run(&a);
            assert!(!o.status.success());
            let err = String::from_utf8_lossy(&o.stderr).into_owned();
            assert!(
                err.contains("No space left") && err.contains("free some space"),
                "{err}"
            );
            msgs.push(err);
        }
        assert_eq!(msgs[0], msgs[1]);
    }
    for threads in ["1", "3"] {
        // 100 blocks of 512 bytes: the limit is hit inside the first 4 MiB chunk.
        let cmd = format!(
            "ulimit -f 100 && exec '{}' encrypt --threads {threads} --key-hex {KEY128} --iv-hex {IV} big dst",
            env!("CARGO_BIN_EXE_aesx")
        );
        let o = Command::new("sh")
            .arg("-c")
            .arg(cmd)
            .current_dir(d)
            .output()
            .unwrap();
        assert!(!o.status.success());
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("cannot write") && err.contains("DST untouched"),
            "{err}"
        );
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(!dst.exists());
        assert_eq!(leftovers(d, &keep), Vec::<String>::new());
    }
}

#[test]
fn ctr_threads_memory_stays_bounded() {
    // 600 MiB through the pipeline under a 150 MiB address-space limit.
    let cmd = format!(
        "ulimit -v 153600 && head -c 629145600 /dev/zero | '{}' encrypt --threads 4 --key-hex {KEY256} --iv-hex {IV} - - | wc -c",
        env!("CARGO_BIN_EXE_aesx")
    );
    let o = Command::new("sh").arg("-c").arg(cmd).output().unwrap();
    assert!(o.status.success(), "{o:?}");
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), "629145600");
}

/// Builds the OpenSSL provider module for the profile this test runs in; returns its path.
fn provider_module() -> PathBuf {
    let dir = Path::new(env!("CARGO_BIN_EXE_aesx"))
        .parent()
        .unwrap()
        .to_path_buf();
    let profile = dir.file_name().unwrap().to_str().unwrap().to_owned();
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.args([
        "build",
        "-q",
        "-p",
        "aesx-provider",
        "--lib",
        "--target-dir",
    ])
    .arg(dir.parent().unwrap());
    match profile.as_str() {
        "debug" => {}
        "release" => {
            cmd.arg("--release");
        }
        p => {
            cmd.args(["--profile", p]);
        }
    }
    let o = cmd.output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    dir.join("libaesx_provider.so")
}

#[test]
fn provider_reports_whether_openssl_sends_aes_to_aesx() {
    if !have_openssl() {
        eprintln!("skipping: no openssl");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let base = format!(
        "openssl_conf = openssl_init\n[openssl_init]\nproviders = provider_sect\n{{ALG}}\
         [provider_sect]\ndefault = default_sect\naesx = aesx_sect\n[default_sect]\nactivate = 1\n\
         [aesx_sect]\nactivate = 1\nmodule = {}\n",
        provider_module().display()
    );
    let prefer = d.path().join("prefer.cnf");
    fs::write(
        &prefer,
        base.replace(
            "{ALG}",
            "alg_section = algorithm_sect\n[algorithm_sect]\ndefault_properties = ?provider=aesx\n",
        ),
    )
    .unwrap();
    let loaded_only = d.path().join("loaded.cnf");
    fs::write(&loaded_only, base.replace("{ALG}", "")).unwrap();
    let empty = d.path().join("empty.cnf");
    fs::write(&empty, "").unwrap();

    // `aesx provider` under one configuration (and `AESX_BACKEND`, if given), found by its path.
    let provider = |conf: &Path, backend: Option<&str>| {
        let mut c = aesx();
        c.arg("provider")
            .env("OPENSSL_CONF", conf)
            .env_remove("OPENSSL_MODULES");
        if let Some(b) = backend {
            c.env("AESX_BACKEND", b);
        }
        c.output().unwrap()
    };

    let o = provider(&prefer, None);
    let out = stdout_of(&o);
    assert!(o.status.success(), "{out}{}", stderr_of(&o));
    assert!(out.contains("loaded and active"), "{out}");
    assert!(
        out.lines()
            .any(|l| l.trim().starts_with("AES-128-CTR") && l.trim().ends_with("aesx")),
        "{out}"
    );
    assert!(
        out.lines()
            .any(|l| l.trim().starts_with("AES-256-CBC") && l.trim().ends_with("aesx")),
        "{out}"
    );

    // A backend the module refuses: said as such, not as a missing module.
    let o = provider(&prefer, Some("bogus"));
    assert!(!o.status.success());
    assert!(
        stdout_of(&o).contains("AESX_BACKEND=bogus is not a backend; this CPU runs soft"),
        "{}",
        stdout_of(&o)
    );

    let o = provider(&loaded_only, None);
    assert!(!o.status.success());
    assert!(
        stdout_of(&o).contains("default_properties"),
        "{}",
        stdout_of(&o)
    );

    let o = provider(&empty, None);
    assert!(!o.status.success());
    assert!(
        stdout_of(&o).contains("not loaded") && stderr_of(&o).contains("not served by aesx"),
        "{}",
        stdout_of(&o)
    );

    // --stats: a file in the provider's layout, and a file that is not one.
    let mut f = vec![0u8; 64 * 16];
    f[..20].copy_from_slice(b"aesx-provider-stats\n");
    f[48..56].copy_from_slice(&1u64.to_le_bytes());
    f[56..64].copy_from_slice(&15u64.to_le_bytes());
    f[7 * 64..7 * 64 + 11].copy_from_slice(b"AES-128-CTR");
    for (k, v) in [3u64, 1, 40, 123_456_789].iter().enumerate() {
        f[7 * 64 + 32 + 8 * k..7 * 64 + 40 + 8 * k].copy_from_slice(&v.to_le_bytes());
    }
    let sf = d.path().join("stats");
    fs::write(&sf, &f).unwrap();
    let o = aesx()
        .args(["provider", "--stats", p(&sf)])
        .output()
        .unwrap();
    assert!(o.status.success());
    let out = stdout_of(&o);
    let line = out
        .lines()
        .find(|l| l.starts_with("AES-128-CTR"))
        .unwrap_or_else(|| panic!("{out}"));
    assert_eq!(
        line.split_whitespace().collect::<Vec<_>>(),
        ["AES-128-CTR", "3", "1", "40", "123456789"]
    );
    fs::write(&sf, b"not a stats file").unwrap();
    let o = aesx()
        .args(["provider", "--stats", p(&sf)])
        .output()
        .unwrap();
    assert!(!o.status.success() && stderr_of(&o).contains("not an aesx provider stats file"));
}

// ---------------------------------------------------------------------------------------------
// Hardening (issue 14, finding 6): key copies, --key-file -, --threads cap, special and
// dangling-symlink DSTs.

/// A key that appears nowhere else, so finding it in memory means a copy of it.
const SECRET_HEX: &str = "7f3e1b9d5c2a4860f1e3d5c7b9a08264";

/// The kernel's copy of the command line in process `pid`: [arg_start, arg_end) from
/// /proc/PID/stat (fields 48 and 49).
fn argv_area(pid: u32) -> (u64, u64) {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // `rest` starts at field 3.
    (f[48 - 3].parse().unwrap(), f[49 - 3].parse().unwrap())
}

/// Counts `needle` in every readable and writable mapping of process `pid` (heap, stacks,
/// anonymous memory, data), outside the kernel's command-line area. `None` if the memory of
/// another process cannot be read here.
fn count_in_memory(pid: u32, needle: &[u8]) -> Option<usize> {
    use std::io::{Read, Seek, SeekFrom};
    let maps = fs::read_to_string(format!("/proc/{pid}/maps")).ok()?;
    let mut mem = fs::File::open(format!("/proc/{pid}/mem")).ok()?;
    let (arg_start, arg_end) = argv_area(pid);
    let mut found = 0;
    let mut readable = 0;
    for line in maps.lines() {
        let mut it = line.split_whitespace();
        let range = it.next()?;
        let perms = it.next()?;
        if !perms.starts_with("rw") || line.ends_with("[vvar]") || line.ends_with("[vsyscall]") {
            continue;
        }
        let (a, b) = range.split_once('-')?;
        let (a, b) = (
            u64::from_str_radix(a, 16).ok()?,
            u64::from_str_radix(b, 16).ok()?,
        );
        let mut buf = vec![0u8; (b - a) as usize];
        if mem.seek(SeekFrom::Start(a)).is_err() || mem.read_exact(&mut buf).is_err() {
            continue;
        }
        readable += 1;
        for (i, w) in buf.windows(needle.len()).enumerate() {
            let at = a + i as u64;
            if w == needle && !(arg_start..arg_end).contains(&at) {
                found += 1;
            }
        }
    }
    (readable > 0).then_some(found)
}

/// Runs `aesx encrypt ARGS - DST` with a stdin that stays open, waits until the run is under
/// way (the temporary file exists: the key is loaded and the output prepared), then counts
/// copies of the key's hex text in the process's memory. The second half of the text is
/// counted too: an allocator may have overwritten the first 16 bytes of a freed copy.
fn key_copies(args: &[&str]) -> Option<(usize, usize)> {
    let dir = tempfile::tempdir().unwrap();
    let mut child = aesx()
        .arg("encrypt")
        .args(args)
        .args(["--iv-hex", IV, "-"])
        .arg(dir.path().join("out"))
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(&data(100, 1)).unwrap();
    assert!(wait_for_temp(dir.path()), "aesx did not start its run");
    std::thread::sleep(Duration::from_millis(100));
    let pid = child.id();
    let full = count_in_memory(pid, SECRET_HEX.as_bytes());
    let half = count_in_memory(pid, &SECRET_HEX.as_bytes()[16..]);
    drop(stdin);
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{o:?}");
    Some((full?, half?))
}

#[test]
fn key_hex_copies_are_wiped() {
    let key_file_dir = tempfile::tempdir().unwrap();
    let kf = key_file_dir.path().join("k.hex");
    fs::write(&kf, format!("{SECRET_HEX}\n")).unwrap();
    let eq = format!("--key-hex={SECRET_HEX}");
    let cases: [&[&str]; 3] = [&["--key-hex", SECRET_HEX], &[&eq], &["--key-file", p(&kf)]];
    for args in cases {
        let Some((full, half)) = key_copies(args) else {
            eprintln!("NOTE: cannot read another process's memory here; skipping");
            return;
        };
        assert_eq!(
            (full, half),
            (0, 0),
            "{args:?}: copies of the key's hex text remain in aesx's memory"
        );
    }
}

#[test]
fn key_file_from_stdin() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (src, want, got) = (d.join("src"), d.join("want"), d.join("got"));
    fs::write(&src, data(5000, 9)).unwrap();
    let mut a = vec!["encrypt"];
    a.extend(crypt_args("cbc", KEY256));
    a.extend([p(&src), p(&want)]);
    assert!(run(&a).status.success());
    // Hex with a newline, and raw bytes, on stdin.
    for (i, key) in [
        format!("{KEY256}\n").into_bytes(),
        hex::decode(KEY256).unwrap(),
    ]
    .into_iter()
    .enumerate()
    {
        let _ = fs::remove_file(&got);
        let mut c = aesx()
            .args([
                "encrypt",
                "--mode",
                "cbc",
                "--key-file",
                "-",
                "--iv-hex",
                IV,
            ])
            .args([p(&src), p(&got)])
            .stdin(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        c.stdin.take().unwrap().write_all(&key).unwrap();
        let o = c.wait_with_output().unwrap();
        assert!(o.status.success(), "form {i}: {o:?}");
        assert!(
            fs::read(&got).unwrap() == fs::read(&want).unwrap(),
            "form {i}"
        );
    }
    // SRC cannot be stdin as well.
    let o = run(&[
        "encrypt",
        "--key-file",
        "-",
        "--iv-hex",
        IV,
        "-",
        p(&d.join("x")),
    ]);
    assert!(!o.status.success());
    let err = stderr_of(&o);
    assert!(err.contains("SRC cannot be stdin too"), "{err}");
    assert!(!d.join("x").exists());
}

#[test]
fn threads_are_capped_at_the_cores() {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let mut child = aesx()
        .args([
            "encrypt",
            "--threads",
            "1000",
            "--key-hex",
            KEY128,
            "--iv-hex",
            IV,
            "-",
        ])
        .arg(&out)
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Two full 4 MiB chunks go through the pipeline (each split across the threads); the
    // stream stays open, so aesx waits for more with every thread it made still alive.
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(&data(9 << 20, 3)).unwrap();
    let task = format!("/proc/{}/task", child.id());
    let mut most = 0;
    let t = Instant::now();
    while t.elapsed() < Duration::from_secs(3) {
        if let Ok(d) = fs::read_dir(&task) {
            most = most.max(d.count());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(stdin);
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{o:?}");
    // main, reader, writer, signal handler, and one worker per core.
    assert!(
        most <= cores + 4,
        "--threads 1000 on {cores} cores ran {most} threads"
    );
    let err = stderr_of(&o);
    assert!(
        err.contains(&format!("--threads 1000 is more than the {cores} core"))
            && err.contains(&format!("using {cores}")),
        "{err}"
    );
    assert_eq!(fs::metadata(&out).unwrap().len(), 9 << 20);
    // -q: no note.
    let o = run(&[
        "encrypt",
        "-q",
        "--threads",
        "1000",
        "--key-hex",
        KEY128,
        "--iv-hex",
        IV,
        p(&out),
        p(&dir.path().join("out2")),
    ]);
    assert!(o.status.success() && o.stderr.is_empty(), "{o:?}");
    // The help says so.
    let help = stdout_of(&run(&["encrypt", "--help"]));
    assert!(help.contains("at most the number of cores"), "{help}");
}

/// Runs aesx with a deadline: a DST that is a FIFO blocks an `open` for writing forever.
fn run_with_deadline(args: &[&str], secs: u64) -> Option<Output> {
    let mut c = aesx()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t = Instant::now();
    while t.elapsed() < Duration::from_secs(secs) {
        if c.try_wait().unwrap().is_some() {
            return Some(c.wait_with_output().unwrap());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = c.kill();
    let _ = c.wait();
    None
}

#[test]
fn device_or_fifo_dst_needs_force() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let src = d.join("src");
    fs::write(&src, data(1000, 5)).unwrap();
    let fifo = d.join("fifo");
    let made = Command::new("mkfifo").arg(&fifo).status();
    let mut dsts = vec![("/dev/null".to_string(), "character device")];
    if made.is_ok_and(|s| s.success()) {
        dsts.push((p(&fifo).to_string(), "FIFO"));
    } else {
        eprintln!("NOTE: mkfifo unavailable; testing /dev/null only");
    }
    for (dst, kind) in &dsts {
        let mut a = vec!["encrypt"];
        a.extend(crypt_args("ctr", KEY128));
        a.extend([p(&src), dst.as_str()]);
        let o = run_with_deadline(&a, 20).unwrap_or_else(|| {
            panic!("{dst}: aesx opened the {kind} for writing without --force (and blocked)")
        });
        assert!(!o.status.success(), "{dst}: written without --force");
        let err = stderr_of(&o);
        assert!(
            err.contains(kind) && err.contains("--force") && err.trim_end().lines().count() == 1,
            "{err}"
        );
    }
    // With --force a device is written directly.
    let mut a = vec!["encrypt", "--force"];
    a.extend(crypt_args("ctr", KEY128));
    a.extend([p(&src), "/dev/null"]);
    assert!(run(&a).status.success());
    assert_eq!(leftovers(d, &["src", "fifo"]), Vec::<String>::new());
}

#[test]
fn dangling_symlink_dst_is_explained() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let src = d.join("src");
    let plain = data(3000, 6);
    fs::write(&src, &plain).unwrap();
    let link = d.join("link");
    std::os::unix::fs::symlink("missing/target", &link).unwrap();
    let mut a = vec!["encrypt"];
    a.extend(crypt_args("ctr", KEY128));
    a.extend([p(&src), p(&link)]);
    let o = run(&a);
    assert!(!o.status.success());
    let err = stderr_of(&o);
    assert!(
        err.contains("symbolic link to missing/target, which does not exist")
            && err.contains("--force")
            && !err.contains("appeared"),
        "{err}"
    );
    assert_eq!(fs::read_link(&link).unwrap(), Path::new("missing/target"));
    assert_eq!(leftovers(d, &["src", "link"]), Vec::<String>::new());
    // --force replaces the link itself.
    let mut a = vec!["encrypt", "--force"];
    a.extend(crypt_args("ctr", KEY128));
    a.extend([p(&src), p(&link)]);
    assert!(run(&a).status.success());
    assert!(fs::symlink_metadata(&link).unwrap().file_type().is_file());
    assert_eq!(fs::metadata(&link).unwrap().len(), plain.len() as u64);
}

#[test]
fn a_failed_write_to_stdout_is_an_error_not_a_panic() {
    // /dev/full refuses every write (ENOSPC), as a closed pipe or a full disk would.
    let Ok(full) = fs::OpenOptions::new().write(true).open("/dev/full") else {
        eprintln!("skipping: no /dev/full");
        return;
    };
    for args in [
        &["cpu"][..],
        &["cpu", "--json"],
        &[
            "bench",
            "--ops",
            "keysetup",
            "--keys",
            "128",
            "--backends",
            "soft",
        ],
    ] {
        let o = aesx()
            .args(args)
            .stdout(full.try_clone().unwrap())
            .output()
            .unwrap();
        let err = stderr_of(&o);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.starts_with("aesx: No space left on device") && !err.contains("panicked"),
            "{args:?}: {err}"
        );
    }
}
