//! `aesx provider`: would OpenSSL on this machine, with this environment, load the aesx
//! provider module and send AES to it? And `--stats FILE`: the counters a provider wrote to
//! an `AESX_PROVIDER_STATS` file (layout in crates/aesx-provider/src/stats.rs).
//!
//! Uses only the `openssl` crate's safe API: OpenSSL reads its configuration (OPENSSL_CONF,
//! else OPENSSLDIR/openssl.cnf) when the crate initialises it, exactly as any other program
//! linked to libcrypto would; then a fetch restricted to `provider=aesx` tells whether aesx is
//! loaded, and a fetch with the default properties returns the very same method object when
//! aesx is the one OpenSSL picks.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::Args;
use openssl::cipher::Cipher;
use openssl::provider::Provider;

#[derive(Args, Debug)]
pub struct ProviderArgs {
    /// Print the counters in an AESX_PROVIDER_STATS file instead.
    #[arg(long, value_name = "FILE")]
    stats: Option<PathBuf>,
}

pub const AFTER_HELP: &str = "\
Checks this machine's OpenSSL as any program linked to libcrypto sees it: with the current
OPENSSL_CONF (else OpenSSL's own openssl.cnf) and OPENSSL_MODULES. Exit status 0 when AES is
served by aesx, 1 otherwise. Setup: README.md, section \"OpenSSL provider\"; in short

  cargo build --release -p aesx-provider
  mkdir -p ~/.local/lib/ossl-modules
  ln -sf \"$PWD/target/release/libaesx_provider.so\" ~/.local/lib/ossl-modules/aesx.so
  export OPENSSL_MODULES=~/.local/lib/ossl-modules
  export OPENSSL_CONF=\"$PWD/crates/aesx-provider/aesx-openssl.cnf\"";

const ALGS: [&str; 4] = ["AES-128-CTR", "AES-256-CTR", "AES-256-CBC", "AES-128-GCM"];

pub fn run(a: ProviderArgs) -> Result<()> {
    if let Some(f) = a.stats {
        return print_stats(&f);
    }
    let conf = std::env::var("OPENSSL_CONF").unwrap_or_else(|_| {
        format!(
            "{}/openssl.cnf (OPENSSL_CONF is not set)",
            openssl::version::dir()
                .trim_start_matches("OPENSSLDIR: ")
                .trim_matches('"')
        )
    });
    outln!("OpenSSL:            {}", openssl::version::version())?;
    outln!("configuration:      {conf}")?;
    if let Ok(m) = std::env::var("OPENSSL_MODULES") {
        outln!("OPENSSL_MODULES:    {m}")?;
    }
    openssl::init();
    let loaded = Cipher::fetch(None, "AES-128-CTR", Some("provider=aesx")).is_ok();
    let mut served = 0;
    if loaded {
        outln!("aesx provider:      loaded and active")?;
        for alg in ALGS {
            let aesx = Cipher::fetch(None, alg, Some("provider=aesx"));
            let default = Cipher::fetch(None, alg, None);
            let who = match (aesx, default) {
                // `CipherRef`s are the EVP_CIPHER pointers themselves: same address, same method.
                (Ok(x), Ok(d)) if std::ptr::eq(&*x, &*d) => {
                    served += 1;
                    "aesx"
                }
                (Ok(_), Ok(_)) => "another provider (no `default_properties = ?provider=aesx`?)",
                (Err(_), Ok(_)) => "another provider (aesx does not implement it)",
                (_, Err(_)) => "nobody (not available)",
            };
            outln!("  {alg:<16} {who}")?;
        }
    } else {
        // Not loaded by the configuration: would the module at least be found?
        match Provider::try_load(None, "aesx", true) {
            Ok(_) => outln!(
                "aesx provider:      the module is found, but this configuration does not load \
                 it; export OPENSSL_CONF=/path/to/aesx/crates/aesx-provider/aesx-openssl.cnf"
            )?,
            Err(e) => {
                let first = e
                    .errors()
                    .first()
                    .map(|e| e.to_string())
                    .unwrap_or_default();
                if let Some(why) = bad_backend_env() {
                    // The module refuses to start on a backend it cannot run; OpenSSL only
                    // says "invalid config data", which reads like a missing module.
                    outln!("aesx provider:      not loaded: {why} ({first})")?;
                } else {
                    outln!(
                        "aesx provider:      not loaded, and OpenSSL cannot find or load aesx.so \
                         (looked in OPENSSL_MODULES, else OpenSSL's MODULESDIR, `openssl \
                         version -m`), or the module refused to start (a `backend` in the \
                         configuration that this CPU cannot run): {first}"
                    )?;
                }
            }
        }
    }
    if served == 0 {
        bail!("AES is not served by aesx here (see `aesx provider --help`)");
    }
    Ok(())
}

/// Why the module would refuse to start because of `AESX_BACKEND` (which it reads, and which
/// wins over the configuration's `backend`), if it would.
fn bad_backend_env() -> Option<String> {
    let v = std::env::var("AESX_BACKEND").ok()?;
    let runs = format!("this CPU runs {}", crate::available_names().join(", "));
    match v.parse::<aesx::Backend>() {
        Ok(b) if b.is_available() => None,
        Ok(_) => Some(format!(
            "AESX_BACKEND={v} names a backend this CPU lacks; {runs}"
        )),
        Err(_) => Some(format!("AESX_BACKEND={v} is not a backend; {runs}")),
    }
}

/// Counters by algorithm: encrypt inits, decrypt inits, data calls, bytes.
pub fn read_stats(path: &Path) -> Result<Vec<(String, [u64; 4])>> {
    let b = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    if b.len() < 64 || !b.starts_with(b"aesx-provider-stats\n") {
        bail!("{} is not an aesx provider stats file", path.display());
    }
    let u = |o: usize| u64::from_le_bytes(b[o..o + 8].try_into().unwrap());
    let records = u(56) as usize;
    if b.len() != 64 * (records + 1) {
        bail!(
            "{} has the wrong size for {records} records",
            path.display()
        );
    }
    Ok((1..=records)
        .map(|r| {
            let o = 64 * r;
            let name = String::from_utf8_lossy(&b[o..o + 32])
                .trim_end_matches('\0')
                .to_string();
            (name, [u(o + 32), u(o + 40), u(o + 48), u(o + 56)])
        })
        .collect())
}

fn print_stats(path: &Path) -> Result<()> {
    outln!(
        "{:<14} {:>10} {:>10} {:>12} {:>16}",
        "algorithm",
        "enc inits",
        "dec inits",
        "calls",
        "bytes"
    )?;
    for (name, c) in read_stats(path)? {
        if c.iter().any(|&x| x != 0) {
            outln!(
                "{name:<14} {:>10} {:>10} {:>12} {:>16}",
                c[0],
                c[1],
                c[2],
                c[3]
            )?;
        }
    }
    Ok(())
}
