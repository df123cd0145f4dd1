//! `aesx encrypt` / `aesx decrypt` in the aesx file format (docs/format.md), and
//! `aesx keygen`: a thin front end over the `aesx-file` crate. This module turns arguments
//! into a [`Secret`] and [`Options`], files into streams, and the crate's errors into one
//! line; the format itself lives in the crate.

use std::fs::{File, OpenOptions};
use std::io::{self, IsTerminal, Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use aesx::Backend;
use aesx_file::{Aead, Argon2Params, ErrorKind, Header, KeySource, Options, Secret, StreamError};
use anyhow::{Result, anyhow, bail};
use clap::{Args, ValueEnum};
use zeroize::Zeroizing;

use crate::output::Output;

/// Inputs at least this large get a progress bar (when stderr is a terminal).
const PROGRESS_MIN: u64 = 64 << 20;

/// How the format's key is given: the options shared by `encrypt` and `decrypt`.
#[derive(Args, Debug, Default)]
pub struct FormatArgs {
    /// Prompt for a passphrase on the terminal (no echo; asked twice when encrypting).
    /// Decrypting a passphrase file with no key option prompts too.
    #[arg(long, conflicts_with_all = ["passphrase_file", "key_hex"])]
    pub passphrase: bool,
    /// Read the passphrase from a file (its contents less one trailing newline; `-` = stdin).
    #[arg(long, value_name = "PATH", conflicts_with = "key_hex")]
    pub passphrase_file: Option<PathBuf>,
    /// AEAD for new files: aes-256-gcm (default) or aes-128-gcm.
    #[arg(long, value_enum, value_name = "NAME")]
    pub aead: Option<AeadArg>,
    /// Argon2id memory in MiB for a new passphrase file [default: 64; at most 1024].
    #[arg(long, value_name = "MIB")]
    pub kdf_memory: Option<u32>,
    /// Argon2id passes for a new passphrase file [default: 3; at most 10].
    #[arg(long, value_name = "N")]
    pub kdf_passes: Option<u32>,
    /// Argon2id lanes for a new passphrase file [default: 4; at most 16].
    #[arg(long, value_name = "N")]
    pub kdf_lanes: Option<u32>,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum AeadArg {
    /// AES-256-GCM (the default).
    #[value(name = "aes-256-gcm")]
    Aes256Gcm,
    /// AES-128-GCM.
    #[value(name = "aes-128-gcm")]
    Aes128Gcm,
}

/// What the `aesx encrypt/decrypt` arguments give the format path.
pub struct Job<'a> {
    pub format: &'a FormatArgs,
    pub key_file: Option<&'a Path>,
    pub threads: usize,
    pub quiet: bool,
    pub force: bool,
    pub src: &'a str,
    pub dst: &'a str,
    pub backend: Backend,
}

pub const HELP: &str = "\
Default format (no --mode, no --iv-hex): the aesx file format, authenticated (docs/format.md).
Each file gets a random 32-byte salt, so its key and nonces are its own: no IV to choose, and
the same file encrypted twice gives unrelated outputs. The data is cut into 64 KiB chunks,
each sealed with AES-256-GCM (--aead aes-128-gcm for AES-128) and bound to its position and
to the end of the file. Decryption refuses a modified, reordered, truncated or extended file
and says which (wrong key or passphrase; chunk N corrupted; file truncated; data after the
end; not an aesx file; hostile parameters). Chunks are sealed and opened on --threads
threads with a fixed amount in flight (16 MiB, up to 32 MiB with more than two threads);
the output is the same for every count.

Keys for the aesx format: --key-file with 32 random bytes (make one with `aesx keygen FILE`;
64 hex digits also work), or a passphrase: --passphrase prompts on the terminal,
--passphrase-file reads one (less a trailing newline). A passphrase goes through Argon2id
(64 MiB, 3 passes, 4 lanes unless --kdf-memory/--kdf-passes/--kdf-lanes say otherwise; its
parameters are stored in the header). Decryption refuses headers asking more than 1 GiB or 10
passes before running Argon2id. `aesx decrypt` recognises the format by its magic bytes.

Decryption releases nothing unauthenticated: to a file, the result is renamed into place only
after the last chunk has verified (on failure there is no DST). To stdout (DST = -), the
plaintext of each chunk is written as soon as that chunk has verified; if a later chunk fails,
what was written is authentic but incomplete, and aesx exits non-zero: check the exit status.

With --mode or --iv-hex: the openssl-enc-compatible modes below, byte for byte as before.
They have no integrity (a modified file decrypts without an error) and an IV must never be
used twice with one key; a one-line note on stderr says so (not with --quiet).";

/// `aesx keygen FILE`: 32 random bytes, a new file with mode 0600, never overwriting.
pub fn keygen(path: &Path) -> Result<()> {
    let shown = path.display();
    let key = aesx_file::keygen().map_err(|e| anyhow!("{e}"))?;
    let mut f = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| {
            if e.kind() == io::ErrorKind::AlreadyExists {
                anyhow!("{shown} already exists; aesx keygen never overwrites a key (remove it first, or choose another name)")
            } else {
                anyhow!("cannot create {shown}: {e}; check the directory")
            }
        })?;
    let written = f.write_all(&key[..]).and_then(|()| f.sync_all());
    if let Err(e) = written {
        drop(f);
        let _ = std::fs::remove_file(path);
        bail!("cannot write {shown}: {e} (nothing left behind)");
    }
    Ok(())
}

/// Reads a small secret file (`-` = stdin) into wiped memory, at most `limit` bytes.
fn read_secret_file(path: &Path, what: &str, limit: u64) -> Result<Zeroizing<Vec<u8>>> {
    let shown = if path.as_os_str() == "-" {
        "- (stdin)".to_string()
    } else {
        path.display().to_string()
    };
    let mut raw = Zeroizing::new(Vec::with_capacity(limit as usize + 1));
    let r = if path.as_os_str() == "-" {
        // A duplicate of fd 0, read without std's stdin buffer (which is never wiped).
        use std::os::fd::AsFd;
        io::stdin()
            .as_fd()
            .try_clone_to_owned()
            .map(File::from)
            .and_then(|f| f.take(limit + 1).read_to_end(&mut raw))
    } else {
        File::open(path).and_then(|f| f.take(limit + 1).read_to_end(&mut raw))
    };
    r.map_err(|e| anyhow!("cannot read {what} {shown}: {e}; check the path"))?;
    if raw.len() as u64 > limit {
        bail!("{what} {shown} is longer than {limit} bytes; is it the right file?");
    }
    Ok(raw)
}

/// A passphrase file's contents less one trailing LF or CR LF.
fn passphrase_from_file(path: &Path) -> Result<Secret> {
    let mut raw = read_secret_file(path, "--passphrase-file", 64 * 1024)?;
    if raw.ends_with(b"\n") {
        raw.pop();
        if raw.ends_with(b"\r") {
            raw.pop();
        }
    }
    Secret::passphrase(raw.as_slice()).map_err(|_| {
        anyhow!(
            "--passphrase-file {} holds an empty passphrase",
            path.display()
        )
    })
}

/// Prompts on the terminal without echo; twice when `confirm`.
fn prompt_passphrase(confirm: bool) -> Result<Secret> {
    let first = Zeroizing::new(
        rpassword::prompt_password("aesx: passphrase: ").map_err(|e| {
            anyhow!("cannot prompt for a passphrase ({e}): no terminal? use --passphrase-file")
        })?,
    );
    if first.is_empty() {
        bail!("the passphrase is empty; nothing was done");
    }
    if confirm {
        let again = Zeroizing::new(
            rpassword::prompt_password("aesx: passphrase (again): ")
                .map_err(|e| anyhow!("cannot prompt for a passphrase: {e}"))?,
        );
        if *again != *first {
            bail!("the two passphrases differ; nothing was done");
        }
    }
    Secret::passphrase(first.as_bytes()).map_err(|e| anyhow!("{e}"))
}

/// The secret the options name (`None`: no key option given).
fn secret_from_args(job: &Job<'_>, confirm: bool) -> Result<Option<Secret>> {
    if let Some(k) = job.key_file {
        let raw = read_secret_file(k, "--key-file", 200)?;
        return Secret::from_key_file(&raw)
            .map(Some)
            .map_err(|e| anyhow!("--key-file {}: {e}", k.display()));
    }
    if let Some(f) = &job.format.passphrase_file {
        return passphrase_from_file(f).map(Some);
    }
    if job.format.passphrase {
        return prompt_passphrase(confirm).map(Some);
    }
    Ok(None)
}

fn options(job: &Job<'_>) -> Result<Options> {
    let f = job.format;
    let d = Argon2Params::default();
    let m_mib = f.kdf_memory.unwrap_or(d.m_kib / 1024);
    if m_mib > aesx_file::MAX_ARGON2_M_KIB / 1024 {
        bail!("--kdf-memory {m_mib} MiB: at most 1024 (readers refuse more)");
    }
    let argon2 = Argon2Params {
        m_kib: m_mib * 1024,
        t: f.kdf_passes.unwrap_or(d.t),
        p: f.kdf_lanes.unwrap_or(d.p),
    };
    if job.key_file.is_none() {
        argon2.check().map_err(|e| {
            anyhow!(
                "{}: choose --kdf-passes 1..10, --kdf-lanes 1..16, --kdf-memory up to 1024 MiB",
                match e.kind() {
                    ErrorKind::HostileParameters(s) => s.clone(),
                    _ => e.to_string(),
                }
            )
        })?;
    }
    Ok(Options {
        aead: match f.aead {
            Some(AeadArg::Aes128Gcm) => Aead::Aes128Gcm,
            _ => Aead::Aes256Gcm,
        },
        argon2,
        threads: job.threads,
        backend: Some(job.backend),
        ..Options::default()
    })
}

/// An opened SRC: the reader, its size when it is a regular file, its path (not for stdin).
type Src<'a> = (Box<dyn Read + Send>, Option<u64>, Option<&'a Path>);

/// Opens SRC (`-` = stdin).
fn open_src(src: &str) -> Result<Src<'_>> {
    if src == "-" {
        return Ok((Box::new(io::stdin()), None, None));
    }
    let p = Path::new(src);
    let meta = std::fs::metadata(p)
        .map_err(|e| anyhow!("cannot read SRC {src}: {e}; check the path and permissions"))?;
    if meta.is_dir() {
        bail!("SRC {src} is a directory; give a file");
    }
    let f = File::open(p)
        .map_err(|e| anyhow!("cannot read SRC {src}: {e}; check the path and permissions"))?;
    Ok((Box::new(f), meta.is_file().then_some(meta.len()), Some(p)))
}

fn progress_bar(size: Option<u64>, quiet: bool) -> Option<indicatif::ProgressBar> {
    match size {
        Some(n) if n >= PROGRESS_MIN && !quiet && io::stderr().is_terminal() => {
            let style = indicatif::ProgressStyle::with_template(
                "{spinner} [{bar:40}] {binary_bytes}/{binary_total_bytes} {binary_bytes_per_sec} eta {eta}",
            )
            .expect("valid template")
            .progress_chars("=> ");
            Some(indicatif::ProgressBar::new(n).with_style(style))
        }
        _ => None,
    }
}

/// Reads and checks the header of the aesx file `reader` gives (SRC, `-` = stdin), with
/// one line for each way it can be wrong. What `aesx decrypt` runs first; public for the fuzz
/// targets.
pub fn read_header(mut reader: &mut dyn Read, src: &str) -> Result<Header> {
    let shown_src = if src == "-" { "stdin" } else { src };
    aesx_file::read_header(&mut reader).map_err(|e| {
        match aesx_file::format_error(&e).map(|f| f.kind()) {
            Some(ErrorKind::NotAesx) => anyhow!(
                "SRC {shown_src} is not an aesx file (no aesx header); if it came from openssl enc or `aesx encrypt --mode/--iv-hex`, decrypt it with the same --mode and --iv-hex"
            ),
            Some(_) => anyhow!("SRC {shown_src}: {e}"),
            None => anyhow!("cannot read SRC {shown_src}: {e}; check the input"),
        }
    })
}

/// Refuses a secret of the other kind than the header names (a key for a passphrase file, or
/// a passphrase for a key-file file).
pub fn check_secret(header: &Header, secret: &Secret) -> Result<(), aesx_file::Error> {
    if secret.kind() != header.key_source().kind() {
        return Err(ErrorKind::WrongKeySource {
            file: header.key_source().kind(),
        }
        .into());
    }
    Ok(())
}

/// The body of `aesx decrypt` once the header is read: checks the secret's kind, then
/// opens every chunk (on `opts.threads` threads) into `out`, which gets only plaintext of
/// chunks that verified. `progress` gets the bytes written. Public for the fuzz targets,
/// which run it on hostile input.
pub fn decrypt_body(
    reader: Box<dyn Read + Send>,
    header: Header,
    secret: &Secret,
    out: &mut (dyn Write + Send),
    opts: &Options,
    size: Option<u64>,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<u64, StreamError> {
    check_secret(&header, secret)?;
    aesx_file::decrypt_stream_with_header(reader, header, out, secret, opts, size, progress)
}

/// The one-line message for a failed stream; `released` = plaintext bytes already written.
fn stream_error(e: StreamError, src: &str, output: &Output, released: u64) -> anyhow::Error {
    let note = output.untouched_note();
    match e {
        StreamError::Read(e) => {
            let src = if src == "-" { "stdin" } else { src };
            anyhow!("cannot read SRC {src}: {e}; check the input{note}")
        }
        StreamError::Write(e) => {
            let hint = if e.raw_os_error() == Some(28) {
                "free some space and retry"
            } else {
                "check the destination and retry"
            };
            anyhow!("cannot write to {}: {e}; {hint}{note}", output.describe())
        }
        StreamError::Format(e) => {
            let what = match output {
                Output::Temp { .. } => " (no output written; DST untouched)".to_string(),
                _ if released > 0 => format!(
                    " (the {released} bytes written before it are authentic but incomplete)"
                ),
                _ => String::new(),
            };
            anyhow!("{e}{what}")
        }
    }
}

/// Refuses a secret and SRC both on stdin.
fn check_stdin_once(job: &Job<'_>) -> Result<()> {
    let dash = |p: Option<&Path>| p.is_some_and(|p| p.as_os_str() == "-");
    if job.src == "-" && (dash(job.key_file) || dash(job.format.passphrase_file.as_deref())) {
        bail!(
            "the key or passphrase is read from stdin (-), so SRC cannot be stdin too; give SRC as a file"
        );
    }
    Ok(())
}

/// `aesx encrypt` without --mode/--iv-hex.
pub fn encrypt(job: &Job<'_>) -> Result<()> {
    check_stdin_once(job)?;
    let opts = options(job)?;
    let secret = secret_from_args(job, true)?.ok_or_else(|| {
        anyhow!("give a key: --key-file FILE (make one with `aesx keygen FILE`), --passphrase or --passphrase-file FILE")
    })?;
    let (reader, size, src_path) = open_src(job.src)?;
    let mut output = Output::create(job.dst, src_path, job.force)?;
    let bar = progress_bar(size, job.quiet);
    let result = aesx_file::encrypt_stream(reader, output.writer(), &secret, &opts, size, &|n| {
        if let Some(b) = &bar {
            b.inc(n)
        }
    });
    drop(secret);
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    // On error, `output` is dropped here: the temporary file goes, DST stays as it was.
    // (Encryption releases no plaintext, so there is no count to report.)
    result.map_err(|e| stream_error(e, job.src, &output, 0))?;
    output.commit()
}

/// `aesx decrypt` without --mode/--iv-hex.
pub fn decrypt(job: &Job<'_>) -> Result<()> {
    check_stdin_once(job)?;
    let f = job.format;
    if f.aead.is_some() || f.kdf_memory.is_some() || f.kdf_passes.is_some() || f.kdf_lanes.is_some()
    {
        bail!(
            "--aead and --kdf-* choose how a new file is made; decrypt reads them from the file's header: drop them"
        );
    }
    let opts = options(job)?;
    let (mut reader, size, src_path) = open_src(job.src)?;
    let header = read_header(&mut reader, job.src)?;
    let secret = match (secret_from_args(job, false)?, header.key_source()) {
        (Some(s), _) => s,
        (None, KeySource::Passphrase { .. }) => prompt_passphrase(false)?,
        (None, KeySource::KeyFile) => {
            bail!("this file was encrypted with a key file: give --key-file FILE")
        }
    };
    // Before DST is touched: a key for a passphrase file (or the reverse) is refused here.
    check_secret(&header, &secret).map_err(|e| anyhow!("{e}"))?;
    let mut output = Output::create(job.dst, src_path, job.force)?;
    let bar = progress_bar(size, job.quiet);
    let released = AtomicU64::new(0);
    let result = decrypt_body(
        reader,
        header,
        &secret,
        output.writer(),
        &opts,
        size,
        &|n| {
            released.fetch_add(n, Ordering::Relaxed);
            if let Some(b) = &bar {
                b.inc(n)
            }
        },
    );
    let released = released.into_inner();
    drop(secret);
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    result.map_err(|e| stream_error(e, job.src, &output, released))?;
    output.commit()
}
