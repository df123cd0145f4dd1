//! Part 1: secret taint under valgrind memcheck (the "ctgrind" technique).
//!
//! Every case's secret input (key, IV, plaintext or ciphertext) is marked undefined with a
//! memcheck client request. Memcheck then reports every conditional branch ("Conditional jump
//! or move depends on uninitialised value(s)") and every memory address ("Use of uninitialised
//! value of size N") computed from it: exactly the two things a constant-time implementation
//! must never do with a secret. Outputs are declassified before they are compared.
//!
//! The driver ([`drive`], run natively) starts one valgrind process per target
//! ([`child`], which refuses to run outside valgrind, so the check cannot pass by not looking)
//! and holds each result against what the target expects: real backends must be silent, the
//! planted table AES must be flagged, with secret-dependent addresses among the reports.

use std::io::Write;
use std::process::{Command, Stdio};

use crate::rng::Rng;
use crate::targets::{Expect, Part, targets};
use crate::vg;

/// Suppressions handed to valgrind: none today (the file holds only comments). Everything
/// public by design is declassified by a client request at the point it becomes public (the
/// PKCS#7 validity: `targets::unpad`), never by a suppression that could hide a leak.
pub const SUPPRESSIONS: &str = include_str!("../ct.supp");

/// Exit status of a child whose target cannot run under valgrind (e.g. VAES: valgrind hides it).
const EXIT_UNAVAILABLE: i32 = 3;
/// Exit status of a child started outside valgrind.
const EXIT_NOT_VALGRIND: i32 = 2;

/// Runs inside valgrind: every case of one target, printing one line per case and a verdict.
pub fn child(name: &str) -> i32 {
    if !vg::running_on_valgrind() {
        eprintln!("taint-child must run under valgrind (use `aesx-ct taint`)");
        return EXIT_NOT_VALGRIND;
    }
    let all = targets();
    let Some(t) = all.iter().find(|t| t.name == name) else {
        eprintln!("unknown target {name}");
        return 2;
    };
    let avail: Vec<&str> = aesx::Backend::available()
        .iter()
        .map(|b| b.name())
        .collect();
    println!("  backends valgrind's CPU offers: {}", avail.join(", "));
    if !t.available {
        return EXIT_UNAVAILABLE;
    }
    let mut ok = true;
    let mut in_cases = 0;
    let start = vg::count_errors();
    for (i, case) in (t.cases)(Part::Taint).iter().enumerate() {
        let mut rng = Rng::new(0x5eed_0000 + i as u64);
        let mut secret = vec![0u8; case.secret_len];
        rng.fill(&mut secret);
        let mut want = vec![0u8; case.out_len];
        let mut got = vec![0u8; case.out_len];
        // Reference run with nothing tainted, then the same input tainted.
        let r0 = (case.run)(&secret, &mut want);
        vg::taint(&secret);
        let before = vg::count_errors();
        let r1 = (case.run)(&secret, &mut got);
        let errors = vg::count_errors() - before;
        in_cases += errors;
        let untainted = vg::untainted_bytes(&got).unwrap_or(usize::MAX);
        vg::declassify(&got);
        vg::declassify(&secret);
        let mut problems = Vec::new();
        if let Err(e) = r0.and(r1) {
            problems.push(format!("error: {e}"));
        }
        if got != want {
            problems.push("result differs from the untainted run".into());
        }
        if untainted != 0 {
            // The taint did not reach every output byte: the marking is not working, so a
            // silent memcheck would prove nothing.
            problems.push(format!("{untainted} output bytes carry no taint"));
        }
        let flagged = errors > 0;
        let verdict = match (case.taint_expect.unwrap_or(t.taint), flagged) {
            (Expect::Clean, true) => "FAIL (secret-dependent branch or address)",
            (Expect::Leak, false) => "FAIL (planted leak not seen)",
            (Expect::Clean, false) => "ok (no report)",
            (Expect::Leak, true) => "ok (planted leak flagged)",
            (Expect::Info, _) => "info",
        };
        if verdict.starts_with("FAIL") || !problems.is_empty() {
            ok = false;
        }
        println!(
            "  {:<28} memcheck errors {:>6}  {}{}",
            case.name,
            errors,
            verdict,
            problems
                .iter()
                .map(|p| format!("; {p}"))
                .collect::<String>()
        );
        let _ = std::io::stdout().flush();
    }
    let stray = vg::count_errors() - start - in_cases;
    if stray != 0 && t.taint != Expect::Leak {
        println!("  {stray} memcheck reports outside the secret-handling calls");
        ok = false;
    }
    println!("verdict: {}", if ok { "PASS" } else { "FAIL" });
    0
}

fn valgrind_version() -> Option<String> {
    let o = Command::new("valgrind").arg("--version").output().ok()?;
    o.status
        .success()
        .then(|| String::from_utf8_lossy(&o.stdout).trim().to_string())
}

/// Runs natively: one valgrind child per target; returns the process exit status.
pub fn drive(only: Option<&str>, verbose: bool) -> i32 {
    let Some(version) = valgrind_version() else {
        eprintln!("valgrind not found: install it (Debian/Ubuntu: apt-get install valgrind)");
        return 2;
    };
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => {
            eprintln!("cannot find this executable: {e}");
            return 2;
        }
    };
    let supp = std::env::temp_dir().join(format!("aesx-ct-{}.supp", std::process::id()));
    if let Err(e) = std::fs::write(&supp, SUPPRESSIONS) {
        eprintln!("cannot write {}: {e}", supp.display());
        return 2;
    }
    println!("== taint ({version}, memcheck --track-origins=yes)");
    let mut failures = Vec::new();
    let mut ran = Vec::new();
    let mut skipped = Vec::new();
    for t in targets()
        .iter()
        .filter(|t| only.is_none_or(|o| o == t.name))
    {
        println!("-- {} (expect {})", t.name, expect_word(t.taint));
        let out = Command::new("valgrind")
            .args([
                "--tool=memcheck",
                "--error-exitcode=1",
                "--track-origins=yes",
                "--error-limit=no",
                "--read-inline-info=yes",
            ])
            .arg(format!("--suppressions={}", supp.display()))
            .arg(&exe)
            .args(["taint-child", t.name.as_str()])
            .stdin(Stdio::null())
            .output();
        let out = match out {
            Ok(o) => o,
            Err(e) => {
                failures.push(format!("{}: cannot start valgrind: {e}", t.name));
                continue;
            }
        };
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        print!("{stdout}");
        let code = out.status.code().unwrap_or(-1);
        if code == EXIT_UNAVAILABLE {
            if t.available {
                println!(
                    "  not run: valgrind hides this backend's instructions (see the timing part)"
                );
                skipped.push(t.name.clone());
            } else {
                println!("  not run: not available on this CPU or in this build");
            }
            continue;
        }
        ran.push(t.name.clone());
        let cond = stderr
            .matches("Conditional jump or move depends on uninitialised")
            .count();
        let addr = stderr.matches("Use of uninitialised value of size").count();
        println!(
            "  reports: {cond} secret-dependent branches, {addr} secret-dependent addresses (exit {code})"
        );
        let verdict_ok = stdout.lines().any(|l| l == "verdict: PASS");
        // 0 = no report, 1 = reports (--error-exitcode); anything else is a crash, e.g.
        // SIGILL on an instruction valgrind cannot execute. Per-case expectations are checked
        // by the child; here the planted table AES must also be caught on its table lookups.
        // The planted table AES must be caught on its table lookups (addresses); other
        // planted leaks (the early-exit unpad) on their branches.
        let table = t.name == "planted-table" || t.name == "planted-branch";
        let consistent = match t.taint {
            Expect::Clean | Expect::Info => code == 0 || code == 1,
            Expect::Leak => code == 1 && if table { addr > 0 } else { cond > 0 },
        };
        if !(verdict_ok && consistent) {
            failures.push(format!(
                "{}: exit {code}, {cond} branch and {addr} address reports",
                t.name
            ));
        }
        let show = if t.taint == Expect::Clean && code != 0 || verbose {
            usize::MAX
        } else if t.taint == Expect::Leak {
            12 // the first report, as evidence of what a flag looks like
        } else {
            0
        };
        for l in stderr.lines().filter(|l| l.starts_with("==")).take(show) {
            println!("  | {l}");
        }
    }
    let _ = std::fs::remove_file(&supp);
    println!("taint: ran under valgrind: {}", ran.join(", "));
    if !skipped.is_empty() {
        println!(
            "taint: available here but hidden by valgrind (timing part only): {}",
            skipped.join(", ")
        );
    }
    if failures.is_empty() {
        println!("taint: PASS");
        0
    } else {
        for f in &failures {
            println!("taint: FAIL {f}");
        }
        1
    }
}

pub(crate) fn expect_word(e: Expect) -> &'static str {
    match e {
        Expect::Clean => "clean",
        Expect::Leak => "flagged",
        Expect::Info => "either",
    }
}
