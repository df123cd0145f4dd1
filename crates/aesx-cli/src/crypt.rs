//! `aesx encrypt` / `aesx decrypt`: the command. Without --mode/--iv-hex it hands over to
//! [`crate::fileformat`] (the authenticated aesx format); with them, this module does
//! streaming, `openssl enc`-compatible file encryption.
//!
//! The input is read in fixed chunks (a multiple of 16 bytes, so only the final chunk can hold
//! a partial block); each chunk is transformed in place by an `Engine` and written out.
//! Memory stays at about two chunks whatever the file size. CTR with `--threads` above 1 goes
//! through [`crate::pipeline`] instead (CTR is seekable, so every chunk is processed at its own
//! byte offset on N threads while the next one is read and the previous one written).

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, IsTerminal, Read, Write};
use std::os::fd::AsFd;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::Path;

use aesx::{Aes, Backend, CbcDecryptor, CbcEncryptor, Ctr};
use anyhow::{Result, anyhow, bail};
use clap::{Args, ValueEnum};
use zeroize::Zeroizing;

use crate::output::Output;
use crate::pipeline::fill;

/// Bytes per chunk; a multiple of 16.
const CHUNK: usize = 1 << 20;
/// Inputs at least this large get a progress bar (when stderr is a terminal).
const PROGRESS_MIN: u64 = 64 << 20;

/// The long help of `encrypt` and `decrypt`: the aesx format first, then the compatible modes.
pub fn after_help() -> String {
    format!("{}\n\n{AFTER_HELP}", crate::fileformat::HELP)
}

const AFTER_HELP: &str = "\
Compatibility (--mode/--iv-hex): the output is byte-identical to
  openssl enc -aes-<bits>-<mode> [-d] -K <key hex> -iv <iv hex> [-nopad]
(the AES size follows from the key length), so files move between the two tools.

Keys: --key-file holds either the raw 16/24/32 key bytes or 32/48/64 hex digits (surrounding
whitespace ignored); `--key-file -` reads them from stdin (then SRC must be a file). Prefer it
to --key-hex: the kernel keeps a running process's command line, so other users can see
--key-hex in the process list (ps, /proc/PID/cmdline) while aesx runs, and aesx cannot wipe
that copy. Every copy aesx makes is wiped: the --key-hex value is taken out of the argument
list before it is parsed, key files and stdin are read without a buffer of their own, and the
decoded key and the key schedule are zeroized when done. Keys are never printed.

Threads: --threads is capped at the cores available to aesx (more threads than cores only
cost memory and switching); a larger value is lowered, and a successful run ends with a note
on stderr saying so (unless -q).

Padding: cbc and ecb use PKCS#7 by default, like openssl enc; with --padding none the input
must be a whole number of 16-byte blocks. ctr is a stream mode and is never padded.

Safety: the output is written to a hidden temporary file beside DST (.DST.XXXXXX.aesx-tmp),
synced, and renamed to DST only when everything succeeded. On any error or on
SIGINT/SIGTERM/SIGHUP, aesx exits non-zero with one line saying what went wrong, removes the
temporary file and leaves DST as it was. An existing DST is never replaced unless --force is
given (then it is replaced atomically, keeping its permissions); new files are created with
mode 0600. DST = `-` streams to stdout: there, output already written cannot be taken back, so
check the exit status. An existing device, FIFO or socket as DST (e.g. /dev/null, a disk) is
written directly, with no temporary file and no undo, and only with --force. A DST that is a
symbolic link to a missing file is refused (--force replaces the link itself).";

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum Mode {
    /// Counter mode, 128-bit big-endian counter starting at the IV (openssl -aes-*-ctr).
    Ctr,
    /// Cipher block chaining (openssl -aes-*-cbc).
    Cbc,
    /// Electronic codebook: each block on its own (openssl -aes-*-ecb). Leaks repeated blocks.
    Ecb,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum Padding {
    /// No padding: input must be whole 16-byte blocks (openssl -nopad).
    None,
    /// PKCS#7 (openssl's default for cbc and ecb).
    Pkcs7,
}

#[derive(Args, Debug)]
#[command(group(clap::ArgGroup::new("key").multiple(false).args(["key_hex", "key_file", "passphrase", "passphrase_file"])))]
pub struct CryptArgs {
    #[command(flatten)]
    format: crate::fileformat::FormatArgs,
    /// openssl-enc-compatible block cipher mode (no integrity) instead of the aesx format
    /// [default with --iv-hex: ctr].
    #[arg(long, value_enum)]
    mode: Option<Mode>,
    /// The key as 32, 48 or 64 hex digits (AES-128/192/256); --mode/--iv-hex only.
    #[arg(long, value_name = "HEX")]
    key_hex: Option<String>,
    /// A file holding the key (`-` = stdin): for the aesx format 32 raw bytes (`aesx keygen`)
    /// or 64 hex digits; for --mode/--iv-hex raw 16/24/32 bytes or 32/48/64 hex digits.
    #[arg(long, value_name = "PATH")]
    key_file: Option<std::path::PathBuf>,
    /// The real `--key-hex` value, taken out of the argument list before clap saw it
    /// ([`take_key_hex`]); `key_hex` then holds a placeholder.
    #[arg(skip)]
    key_hex_secret: Option<Zeroizing<String>>,
    /// The IV (cbc) or initial counter block (ctr) as 32 hex digits, for the
    /// openssl-enc-compatible modes (implies --mode ctr); not used by ecb.
    #[arg(long, value_name = "HEX")]
    iv_hex: Option<String>,
    /// Padding for cbc/ecb [default: pkcs7].
    #[arg(long, value_enum)]
    padding: Option<Padding>,
    /// Threads for ctr, at most the number of cores; cbc and ecb use one [default: the number
    /// of cores].
    ///
    /// With N > 1, ctr reads, encrypts (on N threads) and writes in a pipeline, in 4 MiB chunks
    /// with at most 16 MiB in flight; the output is the same for every N. 1 = one thread, no
    /// pipeline. N above the cores available to aesx is lowered to that (a note on stderr
    /// says so after a successful run, unless -q). cbc and ecb always run on one thread: cbc encryption is serial by
    /// nature (each block needs the previous ciphertext block).
    #[arg(long, value_name = "N")]
    threads: Option<usize>,
    /// No progress bar and no notes.
    #[arg(long, short)]
    quiet: bool,
    /// Replace an existing DST (atomically, only after the whole run succeeded).
    #[arg(long, short)]
    force: bool,
    /// Input file, or `-` for stdin.
    #[arg(value_name = "SRC")]
    src: String,
    /// Output file, or `-` for stdout.
    #[arg(value_name = "DST")]
    dst: String,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Direction {
    Encrypt,
    Decrypt,
}

/// Decodes hex into zeroized bytes without ever echoing the input.
fn decode_hex(what: &str, text: &str, expect: &str) -> Result<Zeroizing<Vec<u8>>> {
    let text = text.trim();
    if !text.len().is_multiple_of(2) {
        bail!(
            "{what} has an odd number of hex digits ({}); give {expect}",
            text.len()
        );
    }
    let mut out = Zeroizing::new(vec![0u8; text.len() / 2]);
    hex::decode_to_slice(text, &mut out).map_err(|e| match e {
        hex::FromHexError::InvalidHexCharacter { index, .. } => anyhow!(
            "{what} is not hex (bad character at position {}); give {expect}",
            index + 1
        ),
        _ => anyhow!("{what} is not valid hex; give {expect}"),
    })?;
    Ok(out)
}

const KEY_EXPECT: &str = "32, 48 or 64 hex digits";

fn check_key_len(what: &str, key: &[u8]) -> Result<()> {
    if !matches!(key.len(), 16 | 24 | 32) {
        bail!(
            "{what} gives a {}-byte key; AES needs 16, 24 or 32 bytes ({KEY_EXPECT})",
            key.len()
        );
    }
    Ok(())
}

/// What `--key-hex` holds in the argument list clap parses: the real value never gets there.
const KEY_HEX_PLACEHOLDER: &str = "(taken)";

/// Takes the `--key-hex` value out of `args` (the whole command line, before parsing) and
/// leaves a placeholder in its place, so the argument parser never holds a copy of the key
/// (its copies are freed without being wiped). Handles `--key-hex VALUE` and
/// `--key-hex=VALUE`, up to a `--` that ends the options; a value that starts with `-` is left
/// alone (the parser then reports the missing value, as before). Returns the last value found
/// (the parser rejects a repeated `--key-hex` anyway). The token that held the value is
/// wiped.
pub fn take_key_hex(args: &mut [OsString]) -> Option<Zeroizing<String>> {
    let mut found = None;
    let mut i = 1;
    while i < args.len() {
        let tok = args[i].as_bytes();
        if tok == b"--" {
            break;
        }
        if tok == b"--key-hex" {
            if let Some(v) = args.get(i + 1)
                && !v.as_bytes().starts_with(b"-")
            {
                let v = std::mem::replace(&mut args[i + 1], KEY_HEX_PLACEHOLDER.into());
                found = Some(into_secret(v));
                i += 1;
            }
        } else if let Some(v) = tok.strip_prefix(b"--key-hex=") {
            let secret = Zeroizing::new(String::from_utf8_lossy(v).into_owned());
            let old = std::mem::replace(
                &mut args[i],
                format!("--key-hex={KEY_HEX_PLACEHOLDER}").into(),
            );
            wipe_os(old);
            found = Some(secret);
        }
        i += 1;
    }
    found
}

/// Moves an argument into a wiped-on-drop string without copying it (a non-UTF-8 value is
/// not hex anyway; it becomes a lossy copy and the original is wiped).
fn into_secret(v: OsString) -> Zeroizing<String> {
    match v.into_string() {
        Ok(s) => Zeroizing::new(s),
        Err(v) => {
            let s = Zeroizing::new(v.to_string_lossy().into_owned());
            wipe_os(v);
            s
        }
    }
}

/// Overwrites an argument's bytes before freeing them.
pub fn wipe_os(v: OsString) {
    use zeroize::Zeroize;
    v.into_vec().zeroize();
}

impl CryptArgs {
    /// Hands back the `--key-hex` value [`take_key_hex`] took out of the command line.
    pub fn restore_key_hex(&mut self, secret: Option<Zeroizing<String>>) {
        if self.key_hex.is_some() {
            self.key_hex_secret = secret;
        }
    }
}

/// Reads a key file (at most a little more than the largest valid form) without a buffer of
/// our own that would outlive the call: straight into a wiped-on-drop vector.
fn read_key_source(r: &mut dyn Read) -> io::Result<Zeroizing<Vec<u8>>> {
    let mut raw = Zeroizing::new(Vec::with_capacity(200));
    r.take(200).read_to_end(&mut raw)?;
    Ok(raw)
}

/// Reads the key from `--key-hex` or `--key-file` (`-` = stdin).
fn load_key(args: &mut CryptArgs) -> Result<Zeroizing<Vec<u8>>> {
    if let Some(h) = args.key_hex.take() {
        // The real value, if main took it out of the command line; else (a caller that did
        // not) the parsed one.
        let h = args
            .key_hex_secret
            .take()
            .unwrap_or_else(|| Zeroizing::new(h));
        let key = decode_hex("--key-hex", &h, KEY_EXPECT)?;
        check_key_len("--key-hex", &key)?;
        return Ok(key);
    }
    let path = args
        .key_file
        .as_ref()
        .ok_or_else(|| anyhow!("give a key with --key-hex or --key-file"))?;
    let stdin = path.as_os_str() == "-";
    let shown = if stdin {
        "- (stdin)".to_string()
    } else {
        path.display().to_string()
    };
    let raw = if stdin {
        // std's stdin has an 8 KiB buffer we could not wipe: read a duplicate of fd 0 instead.
        let fd = io::stdin()
            .as_fd()
            .try_clone_to_owned()
            .map_err(|e| anyhow!("cannot read --key-file -: {e}"))?;
        read_key_source(&mut File::from(fd))
    } else {
        let mut f = File::open(path)
            .map_err(|e| anyhow!("cannot read --key-file {shown}: {e}; check the path"))?;
        read_key_source(&mut f)
    }
    .map_err(|e| anyhow!("cannot read --key-file {shown}: {e}"))?;
    let trimmed = raw.trim_ascii();
    if matches!(trimmed.len(), 32 | 48 | 64) && trimmed.iter().all(u8::is_ascii_hexdigit) {
        let mut key = Zeroizing::new(vec![0u8; trimmed.len() / 2]);
        hex::decode_to_slice(trimmed, &mut key)
            .map_err(|_| anyhow!("--key-file {shown} is not valid hex"))?;
        return Ok(key);
    }
    if matches!(raw.len(), 16 | 24 | 32) {
        return Ok(Zeroizing::new(raw.to_vec()));
    }
    bail!(
        "--key-file {shown} holds {} bytes; it must hold exactly 16, 24 or 32 raw key bytes, or {KEY_EXPECT}",
        raw.len()
    )
}

fn load_iv(mode: Mode, iv_hex: Option<&str>) -> Result<Option<[u8; 16]>> {
    match (mode, iv_hex) {
        (Mode::Ecb, Some(_)) => bail!("ecb uses no IV; drop --iv-hex (or use --mode cbc or ctr)"),
        (Mode::Ecb, None) => Ok(None),
        (m, None) => bail!(
            "--mode {} needs an IV: add --iv-hex with 32 hex digits",
            mode_name(m)
        ),
        (_, Some(h)) => {
            let v = decode_hex("--iv-hex", h, "32 hex digits (16 bytes)")?;
            let iv: [u8; 16] = v.as_slice().try_into().map_err(|_| {
                anyhow!(
                    "--iv-hex must be 32 hex digits (16 bytes), not {}",
                    h.trim().len()
                )
            })?;
            Ok(Some(iv))
        }
    }
}

fn mode_name(m: Mode) -> &'static str {
    match m {
        Mode::Ctr => "ctr",
        Mode::Cbc => "cbc",
        Mode::Ecb => "ecb",
    }
}

/// One direction of one mode over a stream of chunks.
///
/// Contract: every chunk but the last has a length that is a multiple of 16; `process`
/// transforms `buf` in place (it may append one padding block or drop the padding, so `buf`
/// has 16 bytes of spare capacity) and returns the bytes to write.
enum Engine<'a> {
    Ctr(Ctr<'a>),
    EcbEnc(&'a Aes, Padding),
    CbcEnc(CbcEncryptor<'a>, Padding),
    /// Block decryption; with PKCS#7 the last 16 decrypted bytes are held back until the end.
    Dec {
        kind: DecKind<'a>,
        padding: Padding,
        held: Option<Zeroizing<[u8; 16]>>,
    },
}

enum DecKind<'a> {
    Ecb(&'a Aes),
    Cbc(CbcDecryptor<'a>),
}

impl DecKind<'_> {
    fn decrypt(&mut self, buf: &mut [u8]) {
        match self {
            DecKind::Ecb(aes) => aes.decrypt_blocks(buf),
            DecKind::Cbc(d) => d
                .decrypt_blocks(buf)
                .expect("the stream loop passes whole blocks"),
        }
    }
}

fn unaligned(total: u64, dir: Direction) -> anyhow::Error {
    match dir {
        Direction::Encrypt => anyhow!(
            "input is {total} bytes, not a multiple of 16; use --padding pkcs7 (the default) or pad the input"
        ),
        Direction::Decrypt => anyhow!(
            "ciphertext is {total} bytes, not a multiple of 16: it is truncated or not cbc/ecb output; check the file and --mode"
        ),
    }
}

const BAD_PAD: &str = "bad decrypt: the PKCS#7 padding is wrong, so the key, IV or mode is wrong or the data is corrupted (use --padding none for unpadded data)";

impl Engine<'_> {
    /// Processes one chunk. `total` is the input length so far, including this chunk.
    fn process(
        &mut self,
        buf: &mut Vec<u8>,
        last: bool,
        total: u64,
        dir: Direction,
        out: &mut dyn Write,
    ) -> Result<()> {
        match self {
            Engine::Ctr(c) => {
                c.apply_keystream(buf);
                write_all(out, buf)
            }
            Engine::EcbEnc(..) | Engine::CbcEnc(..) => {
                let padding = match self {
                    Engine::EcbEnc(_, p) | Engine::CbcEnc(_, p) => *p,
                    _ => unreachable!(),
                };
                if last {
                    let whole = buf.len() / 16 * 16;
                    match padding {
                        Padding::Pkcs7 => {
                            let pad = aesx::pkcs7_pad(&buf[whole..]).expect("tail < 16 bytes");
                            buf.truncate(whole);
                            buf.extend_from_slice(&pad);
                        }
                        Padding::None if whole != buf.len() => return Err(unaligned(total, dir)),
                        Padding::None => {}
                    }
                }
                match self {
                    Engine::EcbEnc(aes, _) => aes.encrypt_blocks(buf),
                    Engine::CbcEnc(e, _) => e.encrypt_blocks(buf).expect("whole blocks"),
                    _ => unreachable!(),
                }
                write_all(out, buf)
            }
            Engine::Dec {
                kind,
                padding,
                held,
            } => {
                if !buf.len().is_multiple_of(16) {
                    return Err(unaligned(total, dir));
                }
                kind.decrypt(buf);
                if *padding == Padding::None {
                    return write_all(out, buf);
                }
                // PKCS#7: the last block is held back until we know it is the last.
                if last && buf.is_empty() {
                    // The block held from the previous chunk is the final one.
                    let Some(h) = held.take() else {
                        bail!(
                            "ciphertext is empty; a PKCS#7-padded ciphertext is at least one 16-byte block"
                        );
                    };
                    let n = aesx::pkcs7_unpad(&h[..]).map_err(|_| anyhow!(BAD_PAD))?;
                    return write_all(out, &h[..n]);
                }
                if let Some(h) = held.take() {
                    write_all(out, &h[..])?;
                }
                if last {
                    let n = aesx::pkcs7_unpad(buf).map_err(|_| anyhow!(BAD_PAD))?;
                    return write_all(out, &buf[..n]);
                }
                let keep = buf.len() - 16;
                let mut h = Zeroizing::new([0u8; 16]);
                h.copy_from_slice(&buf[keep..]);
                *held = Some(h);
                write_all(out, &buf[..keep])
            }
        }
    }
}

fn write_all(out: &mut dyn Write, data: &[u8]) -> Result<()> {
    out.write_all(data).map_err(WriteFailed)?;
    Ok(())
}

/// A write error, told apart from other failures so the message can name the output.
#[derive(Debug)]
struct WriteFailed(io::Error);

impl std::fmt::Display for WriteFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}
impl std::error::Error for WriteFailed {}

/// The note that --mode/--iv-hex output has no integrity (stderr, after success, unless -q).
const LEGACY_NOTE: &str = "aesx: note: --mode/--iv-hex use the openssl-enc-compatible format: no integrity (changes go undetected) and an IV must never be reused with a key; without them aesx writes its authenticated format";

/// `--threads`: at least 1, at most the cores available to this process. Returns the count
/// to use and, when the request was lowered, a note saying so.
pub fn clamp_threads(requested: Option<usize>, cores: usize) -> Result<(usize, Option<String>)> {
    let cores = cores.max(1);
    match requested {
        None => Ok((cores, None)),
        Some(0) => bail!("--threads must be at least 1"),
        Some(n) if n > cores => Ok((
            cores,
            Some(format!(
                "note: --threads {n} is more than the {cores} core{} available; using {cores}",
                if cores == 1 { "" } else { "s" }
            )),
        )),
        Some(n) => Ok((n, None)),
    }
}

/// Everything `aesx encrypt/decrypt` decides before it touches a file: what to do to a
/// stream of bytes. [`transform`] does it; the CLI wraps files around it, and the fuzz
/// targets call it on in-memory data.
pub struct Job<'a> {
    pub aes: &'a Aes,
    pub mode: Mode,
    pub dir: Direction,
    /// `Padding::None` for ctr.
    pub padding: Padding,
    /// Required for ctr and cbc; `None` for ecb.
    pub iv: Option<[u8; 16]>,
    /// 1 = one thread; more = the ctr pipeline (cbc and ecb always use one).
    pub threads: usize,
    /// Bytes per read, a multiple of 16: `CHUNK` (1 MiB) single-threaded and
    /// [`crate::pipeline::CHUNK`] (4 MiB) in the pipeline; small in the fuzz targets, so that
    /// short inputs cross many chunk boundaries.
    pub chunk: usize,
}

impl Job<'_> {
    /// The chunk sizes the CLI uses.
    pub fn default_chunk(threads: usize) -> usize {
        if threads > 1 {
            crate::pipeline::CHUNK
        } else {
            CHUNK
        }
    }
}

/// Why [`transform`] stopped.
#[derive(Debug)]
pub enum Failure {
    /// Reading the input failed.
    Read(io::Error),
    /// Writing the output failed.
    Write(io::Error),
    /// The data is wrong: unaligned for the mode, bad padding, empty padded ciphertext. The
    /// message says what and how to fix it (never any key or data bytes).
    Data(anyhow::Error),
}

/// Encrypts or decrypts everything `reader` yields into `out`, in chunks of `job.chunk`
/// bytes. `size`, when known, only sizes the buffers of small inputs; `progress` gets the
/// byte count of each chunk when done. On failure part of the output may have been written:
/// the CLI writes to a temporary file it then drops.
pub fn transform(
    job: &Job<'_>,
    mut reader: Box<dyn Read + Send>,
    out: &mut (dyn Write + Send),
    size: Option<u64>,
    progress: &dyn Fn(u64),
) -> std::result::Result<(), Failure> {
    if let (Mode::Ctr, Some(iv)) = (job.mode, job.iv)
        && job.threads > 1
    {
        return crate::pipeline::ctr(
            reader,
            out,
            job.aes,
            &iv,
            job.threads,
            size,
            job.chunk,
            progress,
        )
        .map_err(|e| match e {
            crate::pipeline::Failure::Read(e) => Failure::Read(e),
            crate::pipeline::Failure::Write(e) => Failure::Write(e),
        });
    }
    let aes = job.aes;
    let need_iv = || Failure::Data(anyhow!("--mode {} needs an IV", mode_name(job.mode)));
    let mut engine = match (job.mode, job.dir) {
        (Mode::Ctr, _) => Engine::Ctr(Ctr::new(aes, job.iv.as_ref().ok_or_else(need_iv)?)),
        (Mode::Ecb, Direction::Encrypt) => Engine::EcbEnc(aes, job.padding),
        (Mode::Cbc, Direction::Encrypt) => Engine::CbcEnc(
            CbcEncryptor::new(aes, job.iv.as_ref().ok_or_else(need_iv)?),
            job.padding,
        ),
        (Mode::Ecb, Direction::Decrypt) => Engine::Dec {
            kind: DecKind::Ecb(aes),
            padding: job.padding,
            held: None,
        },
        (Mode::Cbc, Direction::Decrypt) => Engine::Dec {
            kind: DecKind::Cbc(CbcDecryptor::new(aes, job.iv.as_ref().ok_or_else(need_iv)?)),
            padding: job.padding,
            held: None,
        },
    };
    stream(&mut *reader, out, &mut engine, job.dir, job.chunk, progress)
}

pub fn run(args: CryptArgs, dir: Direction, backend: Backend) -> Result<()> {
    let (threads, note) = clamp_threads(args.threads, aesx::parallel::default_threads())?;
    let quiet = args.quiet;
    let Some(mode) = args.mode.or(args.iv_hex.as_ref().map(|_| Mode::Ctr)) else {
        // Neither --mode nor --iv-hex: the authenticated aesx format.
        if args.key_hex.is_some() {
            bail!(
                "--key-hex is only for the openssl-compatible modes (--mode/--iv-hex); the aesx format takes --key-file (see `aesx keygen`), --passphrase or --passphrase-file"
            );
        }
        if args.padding.is_some() {
            bail!("--padding is only for --mode cbc/ecb; the aesx format needs none");
        }
        let job = crate::fileformat::Job {
            format: &args.format,
            key_file: args.key_file.as_deref(),
            threads,
            quiet,
            force: args.force,
            src: &args.src,
            dst: &args.dst,
            backend,
        };
        match dir {
            Direction::Encrypt => crate::fileformat::encrypt(&job)?,
            Direction::Decrypt => crate::fileformat::decrypt(&job)?,
        }
        // After success only, so that an error stays one line.
        if let Some(note) = note
            && !quiet
        {
            eprintln!("aesx: {note}");
        }
        return Ok(());
    };
    let f = &args.format;
    if f.passphrase || f.passphrase_file.is_some() {
        bail!(
            "passphrases are for the aesx format; drop --mode/--iv-hex (the openssl-compatible modes take --key-hex or --key-file)"
        );
    }
    if f.aead.is_some() || f.kdf_memory.is_some() || f.kdf_passes.is_some() || f.kdf_lanes.is_some()
    {
        bail!("--aead and --kdf-* are for the aesx format; drop --mode/--iv-hex to use it");
    }
    legacy(args, mode, dir, backend, threads)?;
    if !quiet {
        if let Some(note) = note {
            eprintln!("aesx: {note}");
        }
        eprintln!("{LEGACY_NOTE}");
    }
    Ok(())
}

/// The openssl-enc-compatible modes (--mode/--iv-hex), byte for byte as before the aesx
/// format.
fn legacy(
    mut args: CryptArgs,
    mode: Mode,
    dir: Direction,
    backend: Backend,
    threads: usize,
) -> Result<()> {
    let padding = match (mode, args.padding) {
        (Mode::Ctr, Some(Padding::Pkcs7)) => {
            bail!("ctr is a stream mode and is never padded; drop --padding pkcs7")
        }
        (Mode::Ctr, _) => Padding::None,
        (_, Some(p)) => p,
        (_, None) => Padding::Pkcs7,
    };
    let iv = load_iv(mode, args.iv_hex.as_deref())?;
    if args.src == "-" && args.key_file.as_ref().is_some_and(|k| k.as_os_str() == "-") {
        bail!(
            "--key-file - reads the key from stdin, so SRC cannot be stdin too; give SRC as a file"
        );
    }
    let aes = {
        let key = load_key(&mut args)?;
        Aes::with_backend(&key, backend).map_err(|e| anyhow!("{e}"))?
        // `key` is zeroized here.
    };

    // Input.
    let (reader, size, src_path): (Box<dyn Read + Send>, Option<u64>, Option<&Path>) =
        if args.src == "-" {
            (Box::new(io::stdin()), None, None)
        } else {
            let p = Path::new(&args.src);
            let meta = std::fs::metadata(p).map_err(|e| {
                anyhow!(
                    "cannot read SRC {}: {e}; check the path and permissions",
                    args.src
                )
            })?;
            if meta.is_dir() {
                bail!("SRC {} is a directory; give a file", args.src);
            }
            let f = File::open(p).map_err(|e| {
                anyhow!(
                    "cannot read SRC {}: {e}; check the path and permissions",
                    args.src
                )
            })?;
            (Box::new(f), meta.is_file().then_some(meta.len()), Some(p))
        };

    let mut output = Output::create(&args.dst, src_path, args.force)?;

    let bar = match size {
        Some(n) if n >= PROGRESS_MIN && !args.quiet && io::stderr().is_terminal() => {
            let style = indicatif::ProgressStyle::with_template(
                "{spinner} [{bar:40}] {binary_bytes}/{binary_total_bytes} {binary_bytes_per_sec} eta {eta}",
            )
            .expect("valid template")
            .progress_chars("=> ");
            Some(indicatif::ProgressBar::new(n).with_style(style))
        }
        _ => None,
    };

    let job = Job {
        aes: &aes,
        mode,
        dir,
        padding,
        iv,
        threads,
        chunk: Job::default_chunk(threads),
    };
    let what = output.describe();
    let untouched = output.untouched_note();
    let result = transform(&job, reader, output.writer(), size, &|n| {
        if let Some(b) = &bar {
            b.inc(n)
        }
    })
    .map_err(|e| match e {
        Failure::Read(e) => read_error(&args.src, &e, untouched),
        Failure::Write(e) => write_error(&what, &e, untouched),
        Failure::Data(e) => e,
    });
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    // On error, `output` is dropped here: the temporary file goes, DST stays as it was.
    result?;
    output.commit()
}

/// The message for a failed read of SRC.
fn read_error(src: &str, e: &io::Error, note: &str) -> anyhow::Error {
    let src = if src == "-" { "stdin" } else { src };
    anyhow!("cannot read SRC {src}: {e}; check the input{note}")
}

/// The message for a failed write of the output (`what` names it).
fn write_error(what: &str, e: &io::Error, note: &str) -> anyhow::Error {
    let hint = if e.raw_os_error() == Some(28) {
        "free some space and retry"
    } else {
        "check the destination and retry"
    };
    anyhow!("cannot write to {what}: {e}; {hint}{note}")
}

/// The read-transform-write loop (one thread).
fn stream(
    reader: &mut dyn Read,
    out: &mut dyn Write,
    engine: &mut Engine<'_>,
    dir: Direction,
    chunk: usize,
    progress: &dyn Fn(u64),
) -> std::result::Result<(), Failure> {
    let chunk = chunk.max(16) / 16 * 16;
    // 16 spare bytes for a padding block; zeroized on drop (it holds plaintext).
    let mut buf = Zeroizing::new(Vec::with_capacity(chunk + 16));
    let mut total: u64 = 0;
    loop {
        buf.resize(chunk, 0);
        let n = fill(reader, &mut buf[..chunk]).map_err(Failure::Read)?;
        buf.truncate(n);
        total += n as u64;
        let last = n < chunk;
        engine
            .process(&mut buf, last, total, dir, out)
            .map_err(|e| match e.downcast::<WriteFailed>() {
                Ok(w) => Failure::Write(w.0),
                Err(e) => Failure::Data(e),
            })?;
        progress(n as u64);
        if last {
            return Ok(());
        }
    }
}
