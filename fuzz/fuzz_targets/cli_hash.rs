//! The CLI's hasher on arbitrary contents and sizes: `aesx_cli::hash::hash_reader` (what
//! `aesx hash FILE` runs on each file) read in arbitrary pieces, on the fastest Fugue backend
//! (every backend for inputs up to 64 bytes), against the library's one-shot; and `aesx hash --check` (`check_lines`) on
//! arbitrary SUMFILE contents, with the named files looked up in memory.
#![no_main]

use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;

use aesx::hash::fugue::{Fugue, FugueAlg, FugueBackend};
use aesx_cli::hash::{check_lines, hash_reader};
use aesx_fuzz::{ChoppyReader, Result, Unstructured, pieces};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = run(data);
});

/// The one-shot digest on the fastest backend (the library's own streaming, not the CLI's
/// read loop).
fn digest(alg: FugueAlg, data: &[u8]) -> Vec<u8> {
    let mut h = Fugue::with_backend(alg, FugueBackend::detect()).unwrap();
    h.update(data);
    h.finalize()
}

fn run(data: &[u8]) -> Result<()> {
    let mut u = Unstructured::new(data);
    let alg = *u.choose(&FugueAlg::ALL)?;
    let what = u.int_in_range(0..=1u8)?;
    if what == 0 {
        let n = u.int_in_range(0..=u.len())?;
        let content = u.bytes(n)?.to_vec();
        let cuts = pieces(&mut u, content.len())?;
        let want = digest(alg, &content);
        // The CLI's read loop on the fastest backend for any size; on every backend (soft
        // takes ~1000 cycles a byte) for inputs up to 64 bytes.
        let all = FugueBackend::available();
        let backends = if content.len() <= 64 {
            &all[..]
        } else {
            &all[all.len() - 1..]
        };
        for &b in backends {
            let mut r = ChoppyReader::new(content.clone(), cuts.clone());
            let got = hash_reader(alg, b, &mut r).unwrap();
            assert_eq!(got, want, "{alg:?} {b} len {}", content.len());
        }
        return Ok(());
    }
    // --check: two files exist ("a" and "b c"), everything else is unreadable.
    let files: HashMap<OsString, Vec<u8>> = [
        (OsString::from("a"), b"abc".to_vec()),
        (OsString::from("b c"), Vec::new()),
    ]
    .into_iter()
    .collect();
    // Their digests, computed once per algorithm (a Fugue finalisation costs microseconds and
    // a SUMFILE can name them hundreds of times).
    static KNOWN: std::sync::OnceLock<HashMap<(usize, OsString), Vec<u8>>> =
        std::sync::OnceLock::new();
    let known = KNOWN.get_or_init(|| {
        let mut m = HashMap::new();
        for (i, a) in FugueAlg::ALL.iter().enumerate() {
            for (name, c) in &files {
                m.insert((i, name.clone()), digest(*a, c));
            }
        }
        m
    });
    let ai = FugueAlg::ALL.iter().position(|a| *a == alg).unwrap();
    let mut sums = Vec::new();
    // Mix valid lines (right or wrong digests, both separators, escaped names) with raw bytes.
    // At most 32 lines: a few malformed or repeated lines exercise the parser as well as many.
    for _ in 0..32 {
        if u.is_empty() {
            break;
        }
        match u.int_in_range(0..=3u8)? {
            0 | 1 => {
                let name = *u.choose(&["a", "b c", "missing", "a\\nb"])?;
                let right = u.arbitrary::<bool>()?;
                let d = match known.get(&(ai, OsString::from(name))) {
                    Some(d) if right => d.clone(),
                    _ => vec![0x5a; alg.output_len()],
                };
                let escaped = name.contains('\\');
                if escaped {
                    sums.push(b'\\');
                }
                sums.extend_from_slice(hex(&d).as_bytes());
                sums.extend_from_slice(if u.arbitrary()? { b"  " } else { b" *" });
                sums.extend_from_slice(name.as_bytes());
                sums.push(b'\n');
            }
            _ => {
                let n = u.int_in_range(0..=40usize)?;
                sums.extend_from_slice(u.bytes(n.min(u.len()))?);
            }
        }
    }
    let mut seen = Vec::new();
    let mut lookup = |name: &OsStr| {
        seen.push(name.as_bytes().to_vec());
        known
            .get(&(ai, name.to_os_string()))
            .cloned()
            .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::NotFound))
    };
    let mut out = Vec::new();
    let mut err = Vec::new();
    let r = check_lines(
        alg,
        OsStr::new("SUMS"),
        Box::new(&sums[..]),
        &mut lookup,
        &mut out,
        &mut err,
    );
    // One verdict line per name looked up; success only if every one was OK and no line was
    // malformed (nothing written to err).
    let verdicts = out.split(|&c| c == b'\n').filter(|l| !l.is_empty()).count();
    assert!(
        verdicts >= seen.len(),
        "{verdicts} verdicts for {} names",
        seen.len()
    );
    if r.is_ok() {
        assert!(err.is_empty());
        assert!(!seen.is_empty());
        let failed = out.windows(8).any(|w| w == b": FAILED");
        assert!(!failed, "check passed with a FAILED line");
    }
    Ok(())
}

fn hex(d: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    d.iter()
        .flat_map(|b| {
            [
                DIGITS[(b >> 4) as usize] as char,
                DIGITS[(b & 15) as usize] as char,
            ]
        })
        .collect()
}
