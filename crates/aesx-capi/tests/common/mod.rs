//! Shared by the integration tests: builds libaesx for the profile under test and finds it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// target/<profile>: the test binary is target/<profile>/deps/c_api-HASH, and cargo puts the
/// library's `cdylib`/`staticlib` outputs in target/<profile>.
///
/// `cargo test` does not build a `cdylib`/`staticlib`-only library for integration tests, so
/// the first call runs `cargo build -p aesx-capi` for the same profile and target directory
/// (cargo has released its build lock by the time tests run).
pub fn lib_dir() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let exe = std::env::current_exe().expect("test binary path");
            let dir = exe
                .parent()
                .and_then(Path::parent)
                .expect("target/<profile> above deps/")
                .to_path_buf();
            let profile = dir.file_name().unwrap().to_str().unwrap().to_owned();
            let target_dir = dir.parent().expect("target dir");
            let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
            let mut cmd = Command::new(cargo);
            cmd.args(["build", "-p", "aesx-capi", "--lib", "--target-dir"])
                .arg(target_dir)
                .current_dir(crate_dir());
            match profile.as_str() {
                "debug" => {}
                "release" => {
                    cmd.arg("--release");
                }
                p => {
                    cmd.args(["--profile", p]);
                }
            }
            let (ok, text) = run(&mut cmd);
            assert!(ok, "building libaesx failed:\n{text}");
            for f in ["libaesx.so", "libaesx.a"] {
                assert!(dir.join(f).exists(), "{} not built", dir.join(f).display());
            }
            dir
        })
        .clone()
}

pub fn crate_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

pub fn run(cmd: &mut Command) -> (bool, String) {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}
