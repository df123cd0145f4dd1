//! `aesx hash`: Fugue digests of files in the `sha256sum` format, and `--check` of such lists.
//!
//! Files are streamed through a fixed buffer, so memory stays bounded whatever their size.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Write};

use aesx::hash::fugue::{Fugue, FugueAlg, FugueBackend};
use anyhow::{Result, anyhow, bail};
use clap::Args;

/// Bytes read per `read` call.
const BUF: usize = 1 << 16;

pub const AFTER_HELP: &str = "\
Output: one line `<hex digest>  <name>` per FILE, the format of sha256sum (`-` = stdin, which is
also read when no FILE is given). A name holding a newline or a backslash is written escaped
(\\n, \\\\) with a backslash before the digest, as sha256sum does.

Backends: for `hash`, --backend picks the Fugue implementation: soft, vpaes, aesni or gfni
(default: the fastest this CPU runs; see `aesx cpu`). These are not the AES backends of the
other commands, and the AESX_BACKEND environment variable is not read here. All backends give
the same digests.

--check SUMFILE (`-` = stdin) reads lines `<hex digest>  <name>` (or `<hex> *<name>`), hashes
each named file with --alg and prints `<name>: OK` or `<name>: FAILED`. Blank lines are skipped.
Malformed lines (wrong digest length for --alg, no name) are reported with their line number.
Exits non-zero if any digest did not match, any file could not be read, or any line was
malformed; a summary goes to stderr.";

#[derive(Args, Debug)]
pub struct HashArgs {
    /// Digest: fugue224, fugue256, fugue384 or fugue512.
    #[arg(long, value_name = "ALG", default_value = "fugue256")]
    alg: String,
    /// Verify the digests listed in SUMFILE instead of printing new ones.
    #[arg(short = 'c', long, value_name = "SUMFILE")]
    check: Option<OsString>,
    /// Files to hash (`-` = stdin) [default: stdin].
    #[arg(value_name = "FILE")]
    files: Vec<OsString>,
}

/// Parses `--alg`.
fn parse_alg(s: &str) -> Result<FugueAlg> {
    s.parse().map_err(|_| {
        let all: Vec<&str> = FugueAlg::ALL.iter().map(|a| a.name()).collect();
        anyhow!(
            "--alg: unknown digest '{}'; use one of {}",
            s.trim(),
            all.join(", ")
        )
    })
}

/// Resolves the `--backend` of `hash` into a Fugue backend this CPU runs.
pub fn parse_fugue_backend(flag: Option<&str>) -> Result<FugueBackend> {
    let Some(name) = flag else {
        return Ok(FugueBackend::detect());
    };
    let b: FugueBackend = name.parse().map_err(|_| {
        anyhow!(
            "--backend: unknown Fugue backend '{}'; use one of {} (for `hash`, --backend picks the Fugue implementation)",
            name.trim(),
            fugue_names(&FugueBackend::ALL)
        )
    })?;
    fugue_available(b, "--backend")
}

/// `b`, or an error naming `source` (the flag) when this CPU does not run it.
pub fn fugue_available(b: FugueBackend, source: &str) -> Result<FugueBackend> {
    if !b.is_available() {
        bail!(
            "{source}: Fugue backend '{b}' is not available on this CPU; available here: {}",
            fugue_names(&FugueBackend::available())
        );
    }
    Ok(b)
}

/// Fugue backend names, comma-separated.
pub fn fugue_names(v: &[FugueBackend]) -> String {
    v.iter().map(|b| b.name()).collect::<Vec<_>>().join(", ")
}

fn is_stdin(name: &OsStr) -> bool {
    name == "-"
}

/// Hashes everything `r` yields.
pub fn hash_reader(alg: FugueAlg, backend: FugueBackend, r: &mut dyn Read) -> io::Result<Vec<u8>> {
    let mut h = Fugue::with_backend(alg, backend)
        .map_err(|e| io::Error::other(format!("backend {backend}: {e}")))?;
    let mut buf = vec![0u8; BUF];
    loop {
        match r.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => h.update(&buf[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
    Ok(h.finalize())
}

/// Hashes the file `name` (`-` = stdin).
fn hash_file(alg: FugueAlg, backend: FugueBackend, name: &OsStr) -> io::Result<Vec<u8>> {
    if is_stdin(name) {
        hash_reader(alg, backend, &mut io::stdin().lock())
    } else {
        hash_reader(alg, backend, &mut File::open(name)?)
    }
}

/// The raw bytes of a file name (lossless on Unix).
fn name_bytes(name: &OsStr) -> Vec<u8> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        name.as_bytes().to_vec()
    }
    #[cfg(not(unix))]
    {
        name.to_string_lossy().into_owned().into_bytes()
    }
}

fn name_from_bytes(b: &[u8]) -> OsString {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        OsStr::from_bytes(b).to_os_string()
    }
    #[cfg(not(unix))]
    {
        OsString::from(String::from_utf8_lossy(b).into_owned())
    }
}

/// A name for messages on stderr.
fn shown(name: &OsStr) -> String {
    name.to_string_lossy().into_owned()
}

/// The I/O error text without Rust's " (os error N)" suffix.
fn io_text(e: &io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// `name` escaped like sha256sum (`\\` and `\n`), and whether anything needed escaping.
fn escape(name: &[u8]) -> (Vec<u8>, bool) {
    let mut out = Vec::with_capacity(name.len());
    let mut any = false;
    for &c in name {
        match c {
            b'\\' => {
                out.extend_from_slice(b"\\\\");
                any = true;
            }
            b'\n' => {
                out.extend_from_slice(b"\\n");
                any = true;
            }
            b'\r' => {
                out.extend_from_slice(b"\\r");
                any = true;
            }
            _ => out.push(c),
        }
    }
    (out, any)
}

/// Undoes [`escape`]; `None` for an invalid escape.
fn unescape(s: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(s.len());
    let mut it = s.iter();
    while let Some(&c) = it.next() {
        if c == b'\\' {
            match it.next()? {
                b'\\' => out.push(b'\\'),
                b'n' => out.push(b'\n'),
                b'r' => out.push(b'\r'),
                _ => return None,
            }
        } else {
            out.push(c);
        }
    }
    Some(out)
}

/// One checksum line: `<hex>  <name>` or `<hex> *<name>`, optionally led by `\` (escaped name).
fn parse_line(line: &[u8], digest_len: usize) -> Option<(Vec<u8>, Vec<u8>)> {
    let (escaped, line) = match line.strip_prefix(b"\\") {
        Some(rest) => (true, rest),
        None => (false, line),
    };
    let hex_len = digest_len * 2;
    if line.len() < hex_len + 3 {
        return None;
    }
    let (hex_part, rest) = line.split_at(hex_len);
    let digest = hex::decode(hex_part).ok()?;
    let name = match rest {
        [b' ', b' ' | b'*', name @ ..] => name,
        _ => return None,
    };
    if name.is_empty() {
        return None;
    }
    let name = if escaped {
        unescape(name)?
    } else {
        name.to_vec()
    };
    Some((digest, name))
}

pub fn run(args: HashArgs, backend_flag: Option<&str>) -> Result<()> {
    let alg = parse_alg(&args.alg)?;
    let backend = parse_fugue_backend(backend_flag)?;
    match &args.check {
        Some(sumfile) => {
            if !args.files.is_empty() {
                bail!("--check reads the names from SUMFILE; do not also give FILE arguments");
            }
            check(alg, backend, sumfile)
        }
        None => print_sums(alg, backend, &args.files),
    }
}

fn print_sums(alg: FugueAlg, backend: FugueBackend, files: &[OsString]) -> Result<()> {
    let stdin = [OsString::from("-")];
    let files = if files.is_empty() { &stdin[..] } else { files };
    let stdout = io::stdout();
    let mut failed = 0usize;
    for name in files {
        match hash_file(alg, backend, name) {
            Ok(d) => {
                let (esc, any) = escape(&name_bytes(name));
                let mut line = Vec::with_capacity(esc.len() + 2 * d.len() + 4);
                if any {
                    line.push(b'\\');
                }
                line.extend_from_slice(hex::encode(&d).as_bytes());
                line.extend_from_slice(b"  ");
                line.extend_from_slice(&esc);
                line.push(b'\n');
                let mut o = stdout.lock();
                o.write_all(&line)
                    .and_then(|()| o.flush())
                    .map_err(|e| anyhow!("cannot write to stdout: {}", io_text(&e)))?;
            }
            Err(e) => {
                eprintln!("aesx: {}: {}", shown(name), io_text(&e));
                failed += 1;
            }
        }
    }
    if failed > 0 {
        bail!(
            "{failed} of {} file{} could not be read",
            files.len(),
            if files.len() == 1 { "" } else { "s" }
        );
    }
    Ok(())
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn check(alg: FugueAlg, backend: FugueBackend, sumfile: &OsStr) -> Result<()> {
    let reader: Box<dyn BufRead> = if is_stdin(sumfile) {
        Box::new(BufReader::new(io::stdin()))
    } else {
        let f = File::open(sumfile)
            .map_err(|e| anyhow!("cannot open {}: {}", shown(sumfile), io_text(&e)))?;
        Box::new(BufReader::new(f))
    };
    let mut open = |name: &OsStr| hash_file(alg, backend, name);
    let mut stdout = io::stdout();
    let mut stderr = io::stderr();
    check_lines(alg, sumfile, reader, &mut open, &mut stdout, &mut stderr)
}

/// The body of `aesx hash --check`: reads checksum lines from `reader` (named `sumfile` in
/// messages), gets each named file's digest from `digest` (the CLI hashes the file; the fuzz
/// target looks it up in memory), writes `<name>: OK|FAILED` lines to `out` and problems to
/// `err`, and fails with the summary if anything did not match, could not be read or was
/// malformed.
pub fn check_lines(
    alg: FugueAlg,
    sumfile: &OsStr,
    reader: Box<dyn BufRead + '_>,
    digest: &mut dyn FnMut(&OsStr) -> io::Result<Vec<u8>>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<()> {
    let (mut ok, mut bad, mut unreadable, mut malformed) = (0usize, 0usize, 0usize, 0usize);
    for (i, line) in reader.split(b'\n').enumerate() {
        let line = line.map_err(|e| anyhow!("cannot read {}: {}", shown(sumfile), io_text(&e)))?;
        let line = line.strip_suffix(b"\r").unwrap_or(&line);
        if line.iter().all(|c| c.is_ascii_whitespace()) {
            continue;
        }
        let Some((want, name)) = parse_line(line, alg.output_len()) else {
            let _ = writeln!(
                err,
                "aesx: {}:{}: malformed line; expected `<{} hex digits>  <name>` for {}",
                shown(sumfile),
                i + 1,
                alg.output_len() * 2,
                alg.name()
            );
            malformed += 1;
            continue;
        };
        let os_name = name_from_bytes(&name);
        let verdict: &[u8] = match digest(&os_name) {
            Ok(got) if got == want => {
                ok += 1;
                b": OK\n"
            }
            Ok(_) => {
                bad += 1;
                b": FAILED\n"
            }
            Err(e) => {
                let _ = writeln!(err, "aesx: {}: {}", shown(&os_name), io_text(&e));
                unreadable += 1;
                b": FAILED open or read\n"
            }
        };
        out.write_all(&name)
            .and_then(|()| out.write_all(verdict))
            .and_then(|()| out.flush())
            .map_err(|e| anyhow!("cannot write to stdout: {}", io_text(&e)))?;
    }
    let mut problems = Vec::new();
    if bad > 0 {
        problems.push(format!(
            "{} did NOT match",
            plural(bad, "digest", "digests")
        ));
    }
    if unreadable > 0 {
        problems.push(format!(
            "{} could not be read",
            plural(unreadable, "file", "files")
        ));
    }
    if malformed > 0 {
        problems.push(format!(
            "{} malformed",
            plural(malformed, "line was", "lines were")
        ));
    }
    if ok + bad + unreadable == 0 && malformed == 0 {
        problems.push("no checksum lines found".to_string());
    }
    if !problems.is_empty() {
        bail!(
            "check of {} failed: {} ({ok} OK)",
            shown(sumfile),
            problems.join(", ")
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_round_trips_and_parse_line_accepts_both_forms() {
        let name = b"a\\b\nc";
        let (e, any) = escape(name);
        assert!(any);
        assert_eq!(e, b"a\\\\b\\nc");
        assert_eq!(unescape(&e).unwrap(), name);
        let hex = "00".repeat(32);
        let (d, n) = parse_line(format!("{hex}  x y").as_bytes(), 32).unwrap();
        assert_eq!((d, n), (vec![0u8; 32], b"x y".to_vec()));
        let (_, n) = parse_line(format!("{hex} *bin").as_bytes(), 32).unwrap();
        assert_eq!(n, b"bin");
        let (_, n) = parse_line(format!("\\{hex}  a\\nb").as_bytes(), 32).unwrap();
        assert_eq!(n, b"a\nb");
        assert!(parse_line(format!("{hex}  ").as_bytes(), 32).is_none());
        assert!(parse_line(format!("{hex} x").as_bytes(), 32).is_none());
        assert!(parse_line(format!("{hex}0  x").as_bytes(), 32).is_none());
        assert!(parse_line(format!("{}  x", "zz".repeat(32)).as_bytes(), 32).is_none());
    }
}
