//! `aesx`: encrypt and decrypt files in the authenticated aesx format (AES-GCM, `aesx-file`)
//! or with AES-CTR/CBC/ECB byte-compatibly with `openssl enc`,
//! report what the CPU offers, and benchmark every backend against OpenSSL and RustCrypto.
#![forbid(unsafe_code)]

/// `println!` that hands back the write error (a closed pipe, a full disk) for `?` instead of
/// panicking, so `aesx cpu | head -1` ends with a one-line error, like every other failure.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stdout(), $($arg)*)
    }};
}

mod bench;
mod cpuinfo;
#[cfg(feature = "provider-check")]
mod provider;

use std::ffi::OsString;
use std::process::ExitCode;

use aesx_cli::{crypt, fileformat, hash};

use aesx::Backend;
use anyhow::{Result, anyhow};
use clap::{Parser, Subcommand};

/// Constant-time AES (128/192/256) with run-time backend dispatch.
#[derive(Parser, Debug)]
#[command(name = "aesx", version, about, long_about = None)]
struct Cli {
    /// Use this backend instead of the fastest one: soft, vpaes, aesni, vaes256 or vaes512.
    /// Also read from the AESX_BACKEND environment variable (the flag wins). `bench` uses it to
    /// pick the aesx backend to measure unless --backends is given. For `hash` it names the
    /// Fugue backend instead (soft, vpaes, aesni or gfni) and AESX_BACKEND is not read.
    #[arg(long, global = true, value_name = "NAME")]
    backend: Option<String>,

    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Encrypt SRC into DST (`-` = stdin/stdout): the authenticated aesx format, or with
    /// --mode/--iv-hex the openssl-enc-compatible modes.
    #[command(after_long_help = crypt::after_help())]
    Encrypt(crypt::CryptArgs),
    /// Decrypt SRC into DST (`-` = stdin/stdout); an aesx file is recognised by its magic.
    #[command(after_long_help = crypt::after_help())]
    Decrypt(crypt::CryptArgs),
    /// Write a new random 32-byte key to FILE (mode 0600; never overwrites) for --key-file.
    Keygen {
        /// The key file to create.
        #[arg(value_name = "FILE")]
        file: std::path::PathBuf,
    },
    /// Show the CPU model, the features that matter for AES, and the backends.
    Cpu {
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Measure aesx (every backend), OpenSSL and RustCrypto in the same run.
    #[command(after_long_help = bench::AFTER_HELP)]
    Bench(bench::BenchArgs),
    /// Print or check Fugue digests of files, like sha256sum (`-` = stdin).
    #[command(after_long_help = hash::AFTER_HELP)]
    Hash(hash::HashArgs),
    /// Tell whether OpenSSL here loads the aesx provider and sends AES to it.
    #[cfg(feature = "provider-check")]
    #[command(after_long_help = provider::AFTER_HELP)]
    Provider(provider::ProviderArgs),
}

/// Where the backend choice came from, for error messages.
pub struct BackendChoice {
    /// `None`: nothing forced, use the fastest.
    pub forced: Option<Backend>,
}

impl BackendChoice {
    /// The backend to run with.
    pub fn get(&self) -> Backend {
        self.forced.unwrap_or_else(Backend::detect)
    }
}

/// Resolves `--backend` / `AESX_BACKEND` into a backend this CPU can run, or a clear error.
fn choose_backend(flag: Option<&str>) -> Result<BackendChoice> {
    let env = std::env::var("AESX_BACKEND")
        .ok()
        .filter(|s| !s.trim().is_empty());
    let (name, source) = match (flag, env.as_deref()) {
        (Some(f), _) => (f.to_string(), "--backend"),
        (None, Some(e)) => (e.to_string(), "AESX_BACKEND"),
        (None, None) => return Ok(BackendChoice { forced: None }),
    };
    Ok(BackendChoice {
        forced: Some(parse_backend(&name, source)?),
    })
}

/// Parses one backend name and checks that this CPU runs it.
pub fn parse_backend(name: &str, source: &str) -> Result<Backend> {
    let b: Backend = name.parse().map_err(|_| {
        anyhow!(
            "{source}: unknown backend '{}'; use one of {}",
            name.trim(),
            all_names()
        )
    })?;
    if !b.is_available() {
        return Err(anyhow!(
            "{source}: backend '{b}' is not available on this CPU; available here: {} (see `aesx cpu`)",
            available_names().join(", ")
        ));
    }
    Ok(b)
}

/// Names of every AES backend, comma-separated.
pub fn all_names() -> String {
    Backend::ALL
        .iter()
        .map(|b| b.name())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Names of the backends this CPU runs, slowest first.
pub fn available_names() -> Vec<&'static str> {
    Backend::available().iter().map(|b| b.name()).collect()
}

fn run(cli: Cli, key_hex: Option<zeroize::Zeroizing<String>>) -> Result<()> {
    // `hash` has its own backends (Fugue), so it does not go through the AES choice.
    let command = match cli.command {
        Command::Hash(a) => return hash::run(a, cli.backend.as_deref()),
        Command::Keygen { file } => return fileformat::keygen(&file),
        #[cfg(feature = "provider-check")]
        Command::Provider(a) => return provider::run(a),
        c => c,
    };
    let choice = choose_backend(cli.backend.as_deref())?;
    match command {
        Command::Encrypt(mut a) => {
            a.restore_key_hex(key_hex);
            crypt::run(a, crypt::Direction::Encrypt, choice.get())
        }
        Command::Decrypt(mut a) => {
            a.restore_key_hex(key_hex);
            crypt::run(a, crypt::Direction::Decrypt, choice.get())
        }
        Command::Cpu { json } => cpuinfo::run(json, &choice),
        Command::Bench(a) => bench::run(a, &choice),
        Command::Hash(a) => hash::run(a, cli.backend.as_deref()),
        Command::Keygen { file } => fileformat::keygen(&file),
        #[cfg(feature = "provider-check")]
        Command::Provider(a) => provider::run(a),
    }
}

fn main() -> ExitCode {
    // The --key-hex value is taken out before clap sees the arguments (clap's copies are freed
    // unwiped); our copy of every argument is wiped once parsed. The kernel's copy of the
    // command line (ps, /proc/PID/cmdline) is out of reach: the help says so.
    let mut args: Vec<OsString> = std::env::args_os().collect();
    let key_hex = crypt::take_key_hex(&mut args);
    let parsed = Cli::try_parse_from(&args);
    args.into_iter().for_each(crypt::wipe_os);
    let cli = match parsed {
        Ok(c) => c,
        Err(e) => {
            drop(key_hex);
            e.exit()
        }
    };
    match run(cli, key_hex) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // One line: the context chain joined with ": ".
            eprintln!("aesx: {e:#}");
            ExitCode::FAILURE
        }
    }
}
