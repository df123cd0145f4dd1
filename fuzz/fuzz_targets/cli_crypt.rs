//! The CLI's encrypt/decrypt core (`aesx_cli::crypt::transform`, what `aesx encrypt/decrypt`
//! runs between opening SRC and committing DST) on arbitrary contents and sizes, read in
//! arbitrary pieces, in small chunks (so short inputs cross many chunk boundaries and the
//! held-back PKCS#7 block moves between chunks), single-threaded and through the CTR pipeline.
//! Checked against the library's one-shot calls on `soft`; encryption must decrypt back.
#![no_main]

use aesx::{Aes, Backend, Ctr};
use aesx_cli::crypt::{Direction, Failure, Job, Mode, Padding, transform};
use aesx_fuzz::{ChoppyReader, Result, Unstructured, backends, block, key, pieces, soft};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = run(data);
});

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
