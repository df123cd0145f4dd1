//! The CLI's encrypt/decrypt core (`aesx_cli::crypt::transform`, what `aesx encrypt/decrypt`
//! runs between opening SRC and committing DST) on arbitrary contents and sizes, read in
//! arbitrary pieces, in small chunks (so short inputs cross many chunk boundaries and the
//! held-back PKCS#7 block moves between chunks), single-threaded and through the CTR pipeline.
//! Checked against the library's one-shot calls on `soft`; encryption must decrypt back.
//!
//! Inputs whose first byte ends in binary 111 (one in eight) go to the default path instead,
//! the aesx file format: `aesx_cli::fileformat::read_header` + `decrypt_body` (what
//! `aesx decrypt` runs) on an aesx file that was edited or not (see `aesx_fuzz::file_case`),
//! which must succeed only when intact and release only whole verified chunks; and the
//! plaintext encrypted as `aesx encrypt` does (`aesx_file::encrypt_stream`) must decrypt back
//! through that core. (`file_read` fuzzes the format's readers further.)
#![no_main]

use std::io::Read;

use aesx::{Aes, Backend, Ctr};
use aesx_cli::crypt::{Direction, Failure, Job, Mode, Padding, transform};
use aesx_fuzz::{
    ChoppyReader, FILE_CHUNK_LOG2, FILE_KEY, Result, Unstructured, backends, block, file_case, key,
    pieces, soft,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if data.first().is_some_and(|b| b & 7 == 7) {
        let _ = format(&data[1..]);
    } else {
        let _ = run(data);
    }
});

/// Decrypts `file` through the `aesx decrypt` core: the released bytes, and whether it
/// succeeded.
fn cli_decrypt(
    file: Vec<u8>,
    cuts: Vec<usize>,
    secret: &aesx_file::Secret,
    opts: &aesx_file::Options,
    size: Option<u64>,
) -> (Vec<u8>, bool) {
    let mut out = Vec::new();
    let mut reader: Box<dyn Read + Send> = Box::new(ChoppyReader::new(file, cuts));
    let ok = match aesx_cli::fileformat::read_header(&mut reader, "-") {
        Err(e) => {
            assert!(e.to_string().starts_with("SRC stdin"), "{e}");
            false
        }
        Ok(h) => {
            let r = aesx_cli::fileformat::decrypt_body(
                reader,
                h,
                secret,
                &mut out,
                opts,
                size,
                &|_| {},
            );
            if let Err(e) = &r {
                assert!(!e.to_string().is_empty());
            }
            r.is_ok_and(|n| n as usize == out.len())
        }
    };
    (out, ok)
}

/// The aesx file format through the CLI's core.
fn format(data: &[u8]) -> Result<()> {
    let mut u = Unstructured::new(data);
    let case = file_case(&mut u)?;
    let opts = aesx_file::Options {
        threads: u.int_in_range(1..=3usize)?,
        backend: Some(*u.choose(backends())?),
        chunk_log2: FILE_CHUNK_LOG2,
        ..aesx_file::Options::default()
    };
    let tell_size = !u.ratio(1u8, 8u8)?;
    let cuts = pieces(&mut u, case.edited.len())?;
    let secret = aesx_file::Secret::key(&FILE_KEY);
    let size = tell_size.then_some(case.edited.len() as u64);
    let (out, ok) = cli_decrypt(case.edited.clone(), cuts, &secret, &opts, size);
    case.check_released(&out, "aesx decrypt");
    assert_eq!(ok, case.intact(), "intact {} but ok {ok}", case.intact());
    if ok {
        assert!(out == case.plain);
    }
    // Encrypted as `aesx encrypt` does, on this backend and thread count: decrypts back.
    let mut ct = Vec::new();
    let cuts = pieces(&mut u, case.plain.len())?;
    let input = ChoppyReader::new(case.plain.clone(), cuts);
    let n = aesx_file::encrypt_stream(input, &mut ct, &secret, &opts, None, &|_| {})
        .expect("encrypt_stream into memory");
    assert_eq!(n as usize, case.plain.len());
    let (back, ok) = cli_decrypt(ct, Vec::new(), &secret, &opts, None);
    assert!(ok && back == case.plain, "round trip");
    Ok(())
}

/// What the CLI must produce, from the library on `soft`: `None` = an input error.
fn expected(
    mode: Mode,
    dir: Direction,
    padding: Padding,
    key: &[u8],
    iv: &[u8; 16],
    m: &[u8],
) -> Option<Vec<u8>> {
    let aes = soft(key);
    let aligned = m.len().is_multiple_of(16);
    match (mode, dir, padding) {
        (Mode::Ctr, _, _) => {
            let mut v = m.to_vec();
            Ctr::new(&aes, iv).apply_keystream(&mut v);
            Some(v)
        }
        (Mode::Cbc, Direction::Encrypt, Padding::Pkcs7) => {
            Some(aesx::cbc_encrypt_pkcs7(&aes, iv, m))
        }
        (Mode::Cbc, Direction::Decrypt, Padding::Pkcs7) => {
            aesx::cbc_decrypt_pkcs7(&aes, iv, m).ok()
        }
        (Mode::Ecb, Direction::Encrypt, Padding::Pkcs7) => {
            let whole = m.len() / 16 * 16;
            let mut v = m[..whole].to_vec();
            v.extend_from_slice(&aesx::pkcs7_pad(&m[whole..]).unwrap());
            aes.encrypt_blocks(&mut v);
            Some(v)
        }
        (Mode::Ecb, Direction::Decrypt, Padding::Pkcs7) => {
            if m.is_empty() || !aligned {
                return None;
            }
            let mut v = m.to_vec();
            aes.decrypt_blocks(&mut v);
            let n = aesx::pkcs7_unpad(&v).ok()?;
            v.truncate(n);
            Some(v)
        }
        (_, _, Padding::None) if !aligned => None,
        (Mode::Cbc, Direction::Encrypt, Padding::None) => {
            let mut v = m.to_vec();
            aes.cbc_encrypt(iv, &mut v).unwrap();
            Some(v)
        }
        (Mode::Cbc, Direction::Decrypt, Padding::None) => {
            let mut v = m.to_vec();
            aes.cbc_decrypt(iv, &mut v).unwrap();
            Some(v)
        }
        (Mode::Ecb, Direction::Encrypt, Padding::None) => {
            let mut v = m.to_vec();
            aes.encrypt_blocks(&mut v);
            Some(v)
        }
        (Mode::Ecb, Direction::Decrypt, Padding::None) => {
            let mut v = m.to_vec();
            aes.decrypt_blocks(&mut v);
            Some(v)
        }
    }
}

fn call(
    job: &Job<'_>,
    input: Vec<u8>,
    cuts: Vec<usize>,
    size: Option<u64>,
) -> std::result::Result<Vec<u8>, Failure> {
    let mut out = Vec::new();
    transform(
        job,
        Box::new(ChoppyReader::new(input, cuts)),
        &mut out,
        size,
        &|_| {},
    )?;
    Ok(out)
}

fn run(data: &[u8]) -> Result<()> {
    let mut u = Unstructured::new(data);
    let mode = *u.choose(&[Mode::Ctr, Mode::Cbc, Mode::Ecb])?;
    let dir = *u.choose(&[Direction::Encrypt, Direction::Decrypt])?;
    let padding = match mode {
        Mode::Ctr => Padding::None,
        _ => *u.choose(&[Padding::Pkcs7, Padding::None])?,
    };
    let key = key(&mut u)?;
    let iv = block(&mut u)?;
    let backend = *u.choose(backends())?;
    let threads = u.int_in_range(1..=3usize)?;
    let chunk = 16 * u.int_in_range(1..=8usize)?;
    // The size is told (a regular file) or not (a pipe), as the CLI does.
    let tell_size = u.arbitrary::<bool>()?;
    // Part of what is left is the content, the rest decides how reads are cut.
    let left = u.len();
    let content_len = u.int_in_range(0..=left)?.min(u.len());
    let content = u.bytes(content_len)?.to_vec();
    let cuts = pieces(&mut u, content.len())?;
    let aes = Aes::with_backend(&key, backend).unwrap();
    let job = Job {
        aes: &aes,
        mode,
        dir,
        padding,
        iv: (mode != Mode::Ecb).then_some(iv),
        threads,
        chunk,
    };
    let size = tell_size.then_some(content.len() as u64);
    let got = call(&job, content.clone(), cuts.clone(), size);
    let want = expected(mode, dir, padding, &key, &iv, &content);
    match (&got, &want) {
        (Ok(g), Some(w)) => assert!(
            g == w,
            "{mode:?} {dir:?} {padding:?} {backend} threads {threads} chunk {chunk}"
        ),
        (Err(Failure::Data(_)), None) => {}
        _ => panic!(
            "{mode:?} {dir:?} {padding:?} {backend}: got {:?}, want {}",
            got.as_ref().map(|v| v.len()),
            if want.is_some() {
                "output"
            } else {
                "an input error"
            }
        ),
    }
    // Encryption output decrypts back through the same core (another chunk size).
    if let (Direction::Encrypt, Ok(ct)) = (dir, got) {
        let back = Job {
            dir: Direction::Decrypt,
            chunk: 16 * (chunk / 16 % 5 + 1),
            ..job
        };
        let pt = call(&back, ct, cuts, None);
        assert!(
            pt.is_ok_and(|p| p == content),
            "round trip {mode:?} {padding:?}"
        );
    }
    let _ = Backend::Soft;
    Ok(())
}
