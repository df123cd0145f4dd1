//! Builds tests/c/capi_test.c with the system C compiler against the libaesx that cargo just
//! built for this test run, and runs it on the NIST vectors in testdata/aes:
//! once linked to libaesx.so, once to libaesx.a with AddressSanitizer (+UBSan on the C side)
//! when this machine can build and run ASan programs.

use std::path::{Path, PathBuf};
use std::process::Command;

mod common;
use common::{crate_dir, lib_dir, run};

fn testdata() -> PathBuf {
    crate_dir().join("../../testdata/aes")
}

fn out_dir() -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("aesx-capi-ctest");
    std::fs::create_dir_all(&d).expect("create tmp dir");
    d
}

fn cc() -> Command {
    Command::new(std::env::var_os("CC").unwrap_or_else(|| "cc".into()))
}

/// What a static Rust library needs from the system (`--print native-static-libs`).
const NATIVE_LIBS: [&str; 7] = [
    "-lgcc_s",
    "-lutil",
    "-lrt",
    "-lpthread",
    "-lm",
    "-ldl",
    "-lc",
];

fn compile(args: &[&str], extra: &[&str], exe: &Path, lib: &[&str]) -> (bool, String) {
    let mut c = cc();
    c.args(["-std=c11", "-Wall", "-Wextra", "-Werror"])
        .args(args)
        .arg("-I")
        .arg(crate_dir().join("include"))
        .arg(crate_dir().join("tests/c/capi_test.c"))
        .args(extra)
        .arg("-o")
        .arg(exe)
        .args(lib);
    run(&mut c)
}

/// Extra arguments: in an optimised build every backend runs the Monte Carlo test (under a
/// second); a debug build runs it on the fastest backend and aesni (or, `quick`, the fastest).
fn mode_args(quick: bool) -> &'static [&'static str] {
    if !cfg!(debug_assertions) {
        &["--mct-all-backends"]
    } else if quick {
        &["--quick"]
    } else {
        &[]
    }
}

fn check_run(exe: &Path, extra: &[&str]) {
    let (ok, text) = run(Command::new(exe).arg(testdata()).args(extra));
    println!("{text}");
    assert!(ok, "{} failed:\n{text}", exe.display());
    assert!(text.contains("ALL OK"), "no ALL OK line:\n{text}");
    assert!(
        text.contains("ECB KAT vectors 2078"),
        "KAT files not read:\n{text}"
    );
}

#[test]
fn c_program_against_shared_library() {
    let lib = lib_dir();
    let exe = out_dir().join("capi_test");
    let rpath = format!("-Wl,-rpath,{}", lib.display());
    let ldir = format!("-L{}", lib.display());
    let (ok, text) = compile(&["-O2"], &[], &exe, &[&ldir, "-laesx", &rpath]);
    assert!(ok, "cc failed:\n{text}");
    check_run(&exe, mode_args(false));
}

#[test]
fn c_program_with_address_sanitizer_against_static_library() {
    let lib = lib_dir();
    let dir = out_dir();
    // First: can this machine build and run an ASan program at all?
    let probe_c = dir.join("asan_probe.c");
    std::fs::write(&probe_c, "int main(void) { return 0; }\n").unwrap();
    let probe = dir.join("asan_probe");
    let (ok, text) = run(cc()
        .arg("-fsanitize=address")
        .arg(&probe_c)
        .arg("-o")
        .arg(&probe));
    if !ok {
        eprintln!(
            "NOTE: skipping the ASan run: the C compiler cannot build with -fsanitize=address:\n{text}"
        );
        return;
    }
    let (ok, text) = run(&mut Command::new(&probe));
    if !ok {
        eprintln!("NOTE: skipping the ASan run: ASan programs do not run here:\n{text}");
        return;
    }
    let exe = dir.join("capi_test_asan");
    let libaesx = lib.join("libaesx.a");
    let mut libs = vec![libaesx.to_str().unwrap()];
    libs.extend(NATIVE_LIBS);
    let flags = [
        "-O1",
        "-g",
        "-fno-omit-frame-pointer",
        "-fsanitize=address,undefined",
        "-fno-sanitize-recover=all",
    ];
    let (ok, text) = compile(&flags, &[], &exe, &libs);
    assert!(ok, "cc -fsanitize=address failed:\n{text}");
    check_run(&exe, mode_args(true));
}
