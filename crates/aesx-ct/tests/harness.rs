//! Tests of the checker itself (natively, without valgrind): the harness must not be able to
//! pass by not looking, and the cases must compute what they claim to.

use std::process::Command;

use aesx_ct::targets::{Part, targets};
use aesx_ct::vg;

#[test]
fn client_requests_are_inert_natively() {
    assert!(!vg::running_on_valgrind());
    assert_eq!(vg::count_errors(), 0);
    let buf = [0x5au8; 32];
    vg::taint(&buf);
    vg::declassify(&buf);
    assert_eq!(buf, [0x5au8; 32]);
    // Natively there are no V bits to read: the child treats that as "cannot check".
    assert_eq!(vg::untainted_bytes(&buf), None);
    let mut r: Result<usize, ()> = Ok(7);
    vg::declassify_val(&mut r);
    assert_eq!(r, Ok(7));
}

#[test]
fn taint_child_refuses_to_run_outside_valgrind() {
    let out = Command::new(env!("CARGO_BIN_EXE_aesx-ct"))
        .args(["taint-child", "soft"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "a taint run without valgrind must not pass"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("must run under valgrind"));
}

#[test]
fn unknown_target_is_a_usage_error() {
    let out = Command::new(env!("CARGO_BIN_EXE_aesx-ct"))
        .args(["timing", "--target", "nope"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn every_target_lists_real_backends_and_both_planted_leaks() {
    let t = targets();
    let names: Vec<&str> = t.iter().map(|t| t.name.as_str()).collect();
    for b in aesx::Backend::ALL {
        assert!(names.contains(&b.name()), "{b} missing");
    }
    assert!(names.contains(&"planted-table") && names.contains(&"planted-branch"));
    assert!(
        t.iter()
            .filter(|t| t.name.starts_with("planted"))
            .all(|t| t.available)
    );
}

/// Runs a case natively on a deterministic input.
fn run(cases: &[aesx_ct::targets::Case], name: &str, secret: &[u8]) -> Vec<u8> {
    let c = cases.iter().find(|c| c.name == name).unwrap();
    assert_eq!(c.secret_len, secret.len(), "{name}");
    let mut out = vec![0u8; c.out_len];
    (c.run)(secret, &mut out).unwrap_or_else(|e| panic!("{name}: {e}"));
    out
}

#[test]
fn every_case_runs_and_ecb_agrees_between_the_planted_aes_and_every_backend() {
    // The planted table AES and aesx compute the same ECB: if they did not, a "flag" on the
    // planted target could come from a different computation rather than from the leak.
    let all = targets();
    let planted = (all
        .iter()
        .find(|t| t.name == "planted-branch")
        .unwrap()
        .cases)(Part::Taint);
    let mut rng = aesx_ct::rng::Rng::new(99);
    for t in all.iter().filter(|t| t.available) {
        for part in [Part::Taint, Part::Timing] {
            for c in (t.cases)(part) {
                let mut s = vec![0u8; c.secret_len];
                rng.fill(&mut s);
                let mut out = vec![0u8; c.out_len];
                (c.run)(&s, &mut out).unwrap_or_else(|e| panic!("{} {}: {e}", t.name, c.name));
            }
        }
        // The ECB comparison applies to the AES backends (not the planted AES, not other
        // primitives such as Fugue).
        if !aesx::Backend::ALL.iter().any(|b| b.name() == t.name) {
            continue;
        }
        let cases = (t.cases)(Part::Taint);
        for bits in [128, 256] {
            for op in ["ecb-encrypt", "ecb-decrypt"] {
                let name = format!("{op}-{bits}");
                let kl = bits / 8;
                // The planted cases use 3 blocks, the backends more (37 or 69): compare on the
                // first 3.
                let len = cases.iter().find(|c| c.name == name).unwrap().secret_len;
                let mut s = vec![0u8; len];
                rng.fill(&mut s);
                let ours = run(&cases, &name, &s);
                let theirs = run(&planted, &name, &s[..kl + 48]);
                assert_eq!(ours[..48], theirs[..], "{} {name}", t.name);
            }
        }
    }
}

#[test]
fn pkcs7_case_rejects_nothing_it_built_itself() {
    // The PKCS#7 round trip checks the unpadded length; a run on any input must succeed.
    let all = targets();
    let soft = (all.iter().find(|t| t.name == "soft").unwrap().cases)(Part::Taint);
    let c = soft.iter().find(|c| c.name == "cbc-pkcs7-128").unwrap();
    let s: Vec<u8> = (0..c.secret_len as u32).map(|i| (i * 7) as u8).collect();
    let mut out = vec![0u8; c.out_len];
    (c.run)(&s, &mut out).unwrap();
    assert_eq!(
        out[..],
        s[32..],
        "the recovered message is the secret message"
    );
}

/// Runs `aesx-ct taint --target NAME` (valgrind); `None` when valgrind is not installed.
fn taint_run(target: &str) -> Option<(i32, String)> {
    let have = Command::new("valgrind").arg("--version").output();
    if !have.is_ok_and(|o| o.status.success()) {
        eprintln!("NOTE: valgrind not installed; skipping the taint run of {target}");
        return None;
    }
    let out = Command::new(env!("CARGO_BIN_EXE_aesx-ct"))
        .args(["taint", "--target", target])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    Some((out.status.code().unwrap_or(-1), text))
}

/// The planted early-exit unpadding must be reported (every case that has secret padding
/// bytes), with no suppression to hide it; the real `pkcs7_unpad`, through the same cases,
/// must be silent. With the old function-wide `fun:*pkcs7_unpad*` suppression the planted one
/// (whose name matches) passed unseen.
#[test]
fn taint_flags_a_planted_branch_in_unpad_and_passes_the_real_one() {
    let Some((code, text)) = taint_run("planted-unpad") else {
        return;
    };
    println!("{text}");
    assert_eq!(code, 0, "planted-unpad run failed:\n{text}");
    let flagged = text
        .lines()
        .filter(|l| l.contains("unpad-") && l.contains("ok (planted leak flagged)"))
        .count();
    assert!(
        flagged >= 5,
        "expected every unpad case flagged, got {flagged}:\n{text}"
    );
    assert!(text.contains("secret-dependent branches") && text.contains("taint: PASS"));

    let Some((code, text)) = taint_run("pkcs7") else {
        return;
    };
    println!("{text}");
    assert_eq!(code, 0, "the real pkcs7_unpad was flagged:\n{text}");
    let clean = text
        .lines()
        .filter(|l| l.contains("unpad-") && l.contains("ok (no report)"))
        .count();
    assert!(clean >= 5, "expected every unpad case clean:\n{text}");
    assert!(text.contains("reports: 0 secret-dependent branches, 0 secret-dependent addresses"));
}

/// The suppression file hands valgrind nothing: no report can be hidden by it.
#[test]
fn no_valgrind_suppressions() {
    let active: Vec<&str> = aesx_ct::taint::SUPPRESSIONS
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    assert!(active.is_empty(), "ct.supp suppresses: {active:?}");
}
