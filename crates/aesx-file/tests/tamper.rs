//! Every modification of a file is refused, with the right diagnosis, by both readers (the
//! Read adapter and the pipelined stream), and nothing unauthenticated is released: the
//! stream writes only whole chunks that precede the bad one.

use std::io::{Read, Write};

use aesx_file::{
    Argon2Params, Decryptor, Encryptor, ErrorKind, HEADER_LEN, Options, Secret, StreamError,
    TAG_LEN, format_error,
};

const LOG2: u8 = 10;
const C: usize = 1 << LOG2;
const R: usize = C + TAG_LEN;

fn key() -> Secret {
    Secret::key(&[0x5a; 32])
}

fn opts(threads: usize) -> Options {
    Options {
        chunk_log2: LOG2,
        threads,
        ..Options::default()
    }
}

fn plain(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 31 + 7) as u8).collect()
}

fn encrypt(p: &[u8], secret: &Secret, o: &Options) -> Vec<u8> {
    let mut e = Encryptor::new(Vec::new(), secret, o).unwrap();
    e.write_all(p).unwrap();
    e.finish().unwrap()
}

/// Decrypts with both readers; they must agree. Returns the plaintext or the error kind.
fn decrypt_both(file: &[u8], secret: &Secret, pt: &[u8]) -> Result<Vec<u8>, ErrorKind> {
    let mut results = Vec::new();
    for threads in [1, 2] {
        // Read adapter.
        let o = opts(threads);
        let mut out = Vec::new();
        let r = Decryptor::new(file, secret, &o).and_then(|mut d| d.read_to_end(&mut out));
        let a = match r {
            Ok(_) => Ok(out.clone()),
            Err(e) => Err(format_error(&e)
                .unwrap_or_else(|| panic!("not a format error: {e}"))
                .kind()
                .clone()),
        };
        // Whatever was read before the error is a whole-chunk prefix of the plaintext.
        assert_prefix(&out, pt);
        // Stream.
        let mut out = Vec::new();
        let b = match aesx_file::decrypt_stream(file, &mut out, secret, &o, None, &|_| {}) {
            Ok(n) => {
                assert_eq!(n as usize, out.len());
                Ok(out.clone())
            }
            Err(StreamError::Format(e)) => Err(e.kind().clone()),
            Err(e) => panic!("unexpected {e}"),
        };
        assert_prefix(&out, pt);
        assert_eq!(a, b, "adapter and stream disagree ({threads} threads)");
        results.push(a);
    }
    assert_eq!(results[0], results[1], "thread counts disagree");
    results.pop().unwrap()
}

/// `got` is made of whole chunks of `pt` (or is all of it).
fn assert_prefix(got: &[u8], pt: &[u8]) {
    assert!(
        got.len() <= pt.len() && got == &pt[..got.len()],
        "released bytes that are not plaintext"
    );
    assert!(
        got.len() == pt.len() || got.len().is_multiple_of(C),
        "released part of a chunk"
    );
}

fn records(file: &[u8]) -> Vec<&[u8]> {
    file[HEADER_LEN..].chunks(R).collect()
}

fn join(header: &[u8], recs: &[&[u8]]) -> Vec<u8> {
    let mut v = header.to_vec();
    for r in recs {
        v.extend_from_slice(r);
    }
    v
}

#[test]
fn sizes_round_trip_and_layout() {
    let s = key();
    for n in [0, 1, C - 1, C, C + 1, 2 * C, 5 * C + 17, 300 * C + 3] {
        let pt = plain(n);
        let f = encrypt(&pt, &s, &opts(2));
        let chunks = n.div_ceil(C).max(1);
        assert_eq!(f.len(), HEADER_LEN + n + TAG_LEN * chunks, "size {n}");
        assert_eq!(decrypt_both(&f, &s, &pt).unwrap(), pt, "size {n}");
    }
}

#[test]
fn same_plaintext_twice_gives_unrelated_files() {
    let s = key();
    let pt = plain(3 * C);
    let a = encrypt(&pt, &s, &opts(1));
    let b = encrypt(&pt, &s, &opts(1));
    assert_ne!(a[40..72], b[40..72], "file salts repeat");
    // No chunk ciphertext in common (a repeated key/nonce pair would give equal bytes).
    for (x, y) in records(&a).iter().zip(records(&b)) {
        assert_ne!(x[..64], y[..64]);
    }
    let mut x = a.clone();
    for (i, b) in x.iter_mut().zip(&b) {
        *i ^= b;
    }
    let zeros = x[HEADER_LEN..].iter().filter(|&&v| v == 0).count();
    assert!(
        zeros < x.len() / 64,
        "the XOR of the two files is not random-looking"
    );
}

#[test]
fn header_bit_flips() {
    let s = key();
    let pt = plain(3 * C + 5);
    let f = encrypt(&pt, &s, &opts(1));
    for byte in 0..HEADER_LEN {
        for bit in 0..8 {
            let mut t = f.clone();
            t[byte] ^= 1 << bit;
            let e = decrypt_both(&t, &s, &pt).unwrap_err();
            let ok = match byte {
                0..8 => e == ErrorKind::NotAesx,
                8 => matches!(e, ErrorKind::UnsupportedVersion(_)),
                9 => matches!(e, ErrorKind::UnsupportedAead(_)),
                // 10 ^ 1 = 11 and 10 ^ 4 = 14 are valid sizes: then the tag catches it.
                10 => matches!(
                    e,
                    ErrorKind::UnsupportedChunkSize(_) | ErrorKind::HeaderCorrupted
                ),
                11 => matches!(e, ErrorKind::UnsupportedKeySource(_)),
                12..40 => matches!(e, ErrorKind::MalformedHeader(_)),
                40..88 => e == ErrorKind::WrongKey,
                _ => e == ErrorKind::HeaderCorrupted,
            };
            assert!(ok, "byte {byte} bit {bit}: {e:?}");
        }
    }
    // The valid chunk sizes, specifically: the tag.
    for v in [11u8, 14] {
        let mut t = f.clone();
        t[10] = v;
        assert_eq!(
            decrypt_both(&t, &s, &pt).unwrap_err(),
            ErrorKind::HeaderCorrupted
        );
    }
}

#[test]
fn chunk_and_tag_bit_flips() {
    let s = key();
    // 4 full chunks and a short final one.
    let pt = plain(4 * C + 100);
    let f = encrypt(&pt, &s, &opts(2));
    let n = records(&f).len();
    assert_eq!(n, 5);
    for i in 0..n {
        let start = HEADER_LEN + i * R;
        let len = records(&f)[i].len();
        // First, middle and last byte of the ciphertext, and every byte of the tag.
        let mut offsets = vec![0, (len - TAG_LEN) / 2, len - TAG_LEN - 1];
        offsets.extend(len - TAG_LEN..len);
        for off in offsets {
            let mut t = f.clone();
            t[start + off] ^= 0x80;
            let e = decrypt_both(&t, &s, &pt).unwrap_err();
            let want = if i + 1 < n {
                ErrorKind::ChunkCorrupted(i as u64)
            } else {
                ErrorKind::LastChunkCorrupted(i as u64)
            };
            assert_eq!(e, want, "chunk {i} offset {off}");
        }
    }
    // A full final chunk that is corrupted: not "truncated".
    let pt2 = plain(3 * C);
    let f2 = encrypt(&pt2, &s, &opts(1));
    let mut t = f2.clone();
    t[HEADER_LEN + 2 * R + 5] ^= 1;
    assert_eq!(
        decrypt_both(&t, &s, &pt2).unwrap_err(),
        ErrorKind::ChunkCorrupted(2)
    );
}

#[test]
fn reorder_drop_duplicate() {
    let s = key();
    let pt = plain(4 * C + 100);
    let f = encrypt(&pt, &s, &opts(1));
    let h = &f[..HEADER_LEN];
    let r = records(&f);
    // Swapped.
    let t = join(h, &[r[1], r[0], r[2], r[3], r[4]]);
    assert_eq!(
        decrypt_both(&t, &s, &pt).unwrap_err(),
        ErrorKind::ChunkCorrupted(0)
    );
    let t = join(h, &[r[0], r[1], r[3], r[2], r[4]]);
    assert_eq!(
        decrypt_both(&t, &s, &pt).unwrap_err(),
        ErrorKind::ChunkCorrupted(2)
    );
    // Dropped (a middle one; the final one).
    let t = join(h, &[r[0], r[2], r[3], r[4]]);
    assert_eq!(
        decrypt_both(&t, &s, &pt).unwrap_err(),
        ErrorKind::ChunkCorrupted(1)
    );
    let t = join(h, &[r[0], r[1], r[2], r[3]]);
    assert_eq!(
        decrypt_both(&t, &s, &pt).unwrap_err(),
        ErrorKind::Truncated(3)
    );
    // Duplicated.
    let t = join(h, &[r[0], r[1], r[1], r[2], r[3], r[4]]);
    assert_eq!(
        decrypt_both(&t, &s, &pt).unwrap_err(),
        ErrorKind::ChunkCorrupted(2)
    );
    let t = join(h, &[r[0], r[0], r[1], r[2], r[3], r[4]]);
    assert_eq!(
        decrypt_both(&t, &s, &pt).unwrap_err(),
        ErrorKind::ChunkCorrupted(1)
    );
    // The final chunk moved to the middle: it opens there only as final.
    let t = join(h, &[r[0], r[4], r[1]]);
    let e = decrypt_both(&t, &s, &pt).unwrap_err();
    assert_eq!(e, ErrorKind::ChunkCorrupted(1));
    // A header from another file with the same key: its salt gives other keys.
    let other = encrypt(&pt, &s, &opts(1));
    let t = join(&other[..HEADER_LEN], &r);
    assert_eq!(
        decrypt_both(&t, &s, &pt).unwrap_err(),
        ErrorKind::ChunkCorrupted(0)
    );
}

#[test]
fn truncation_everywhere() {
    let s = key();
    for pt in [plain(3 * C + 100), plain(3 * C)] {
        let f = encrypt(&pt, &s, &opts(2));
        let n = records(&f).len();
        // Every chunk boundary, and offsets inside every record: in and just past the tag
        // of a short record, the middle, the last byte.
        let mut cuts = vec![];
        for k in 0..n {
            let at = HEADER_LEN + k * R;
            for off in [0, 1, 15, 16, 17, R / 2, R - 1] {
                if at + off < f.len() {
                    cuts.push(at + off);
                }
            }
        }
        for cut in cuts {
            let t = &f[..cut];
            let e = decrypt_both(t, &s, &pt).unwrap_err();
            let body = cut - HEADER_LEN;
            let (full, rest) = (body / R, body % R);
            let want = if body == 0 {
                ErrorKind::TruncatedRecord(0)
            } else if rest == 0 {
                // At a chunk boundary: the last record present is a middle chunk.
                ErrorKind::Truncated(full as u64 - 1)
            } else if rest < TAG_LEN {
                ErrorKind::TruncatedRecord(full as u64)
            } else {
                ErrorKind::LastChunkCorrupted(full as u64)
            };
            assert_eq!(e, want, "cut at {cut} of {} ({n} records)", f.len());
        }
        // Inside the header.
        for cut in 1..HEADER_LEN {
            assert_eq!(
                decrypt_both(&f[..cut], &s, &pt).unwrap_err(),
                ErrorKind::HeaderTruncated
            );
        }
        assert_eq!(
            decrypt_both(&[], &s, &pt).unwrap_err(),
            ErrorKind::EmptyInput
        );
    }
}

#[test]
fn appended_bytes() {
    let s = key();
    // Final chunk full: anything appended makes it a middle chunk that opens only as final.
    let pt = plain(3 * C);
    let f = encrypt(&pt, &s, &opts(1));
    for extra in [1usize, 15, 16, 100, R, 3 * R + 7] {
        let mut t = f.clone();
        t.extend(std::iter::repeat_n(0xaa, extra));
        assert_eq!(
            decrypt_both(&t, &s, &pt).unwrap_err(),
            ErrorKind::TrailingData(2),
            "+{extra}"
        );
    }
    // A whole copy of the final record appended.
    let mut t = f.clone();
    t.extend_from_slice(records(&f)[2]);
    assert_eq!(
        decrypt_both(&t, &s, &pt).unwrap_err(),
        ErrorKind::TrailingData(2)
    );
    // Final chunk short: the appended bytes join its record, which no longer opens.
    let pt = plain(3 * C + 100);
    let f = encrypt(&pt, &s, &opts(1));
    for extra in [1usize, 15, 16, 100] {
        let mut t = f.clone();
        t.extend(std::iter::repeat_n(0x55, extra));
        assert_eq!(
            decrypt_both(&t, &s, &pt).unwrap_err(),
            ErrorKind::LastChunkCorrupted(3),
            "+{extra}"
        );
    }
    // Empty plaintext: the single empty final chunk followed by anything.
    let f = encrypt(&[], &s, &opts(1));
    let mut t = f.clone();
    t.push(0);
    assert_eq!(
        decrypt_both(&t, &s, &[]).unwrap_err(),
        ErrorKind::LastChunkCorrupted(0)
    );
}

#[test]
fn wrong_secrets() {
    let s = key();
    let pt = plain(C + 1);
    let f = encrypt(&pt, &s, &opts(1));
    assert_eq!(
        decrypt_both(&f, &Secret::key(&[0x5b; 32]), &pt).unwrap_err(),
        ErrorKind::WrongKey
    );
    assert!(matches!(
        decrypt_both(&f, &Secret::passphrase("x").unwrap(), &pt).unwrap_err(),
        ErrorKind::WrongKeySource { .. }
    ));
    let cheap = Options {
        argon2: Argon2Params {
            m_kib: 64,
            t: 1,
            p: 1,
        },
        ..opts(1)
    };
    let p = Secret::passphrase("correct horse").unwrap();
    let f = encrypt(&pt, &p, &cheap);
    assert_eq!(decrypt_both(&f, &p, &pt).unwrap(), pt);
    assert_eq!(
        decrypt_both(&f, &Secret::passphrase("correct horsf").unwrap(), &pt).unwrap_err(),
        ErrorKind::WrongKey
    );
    assert!(matches!(
        decrypt_both(&f, &s, &pt).unwrap_err(),
        ErrorKind::WrongKeySource { .. }
    ));
    // Argon2 parameters changed within the limits: another master key, so "wrong key".
    let mut t = f.clone();
    t[19] ^= 1; // t = 1 -> 0? no: t is bytes 16..20, big-endian: 1 ^ 1 = 0 -> hostile
    assert!(matches!(
        decrypt_both(&t, &p, &pt).unwrap_err(),
        ErrorKind::HostileParameters(_)
    ));
    let mut t = f.clone();
    t[19] ^= 2; // t = 3
    assert_eq!(decrypt_both(&t, &p, &pt).unwrap_err(), ErrorKind::WrongKey);
}

#[test]
fn hostile_kdf_parameters_refused_before_argon2() {
    let p = Secret::passphrase("pw").unwrap();
    let cheap = Options {
        argon2: Argon2Params {
            m_kib: 64,
            t: 1,
            p: 1,
        },
        ..opts(1)
    };
    let f = encrypt(b"data", &p, &cheap);
    let set = |m: u32, t: u32, l: u32| {
        let mut v = f.clone();
        v[12..16].copy_from_slice(&m.to_be_bytes());
        v[16..20].copy_from_slice(&t.to_be_bytes());
        v[20..24].copy_from_slice(&l.to_be_bytes());
        v
    };
    for (m, t, l) in [
        (u32::MAX, 1, 1),      // 4 TiB
        ((1 << 20) + 1, 1, 1), // just over 1 GiB
        (64, 11, 1),           // one pass too many
        (64, u32::MAX, 1),     // "hours"
        (1024, 1, 17),         // too many lanes
        (64, 1, 0),
        (64, 0, 1),
        (7, 1, 1), // below 8 KiB per lane
    ] {
        let started = std::time::Instant::now();
        let e = decrypt_both(&set(m, t, l), &p, b"data").unwrap_err();
        assert!(
            matches!(e, ErrorKind::HostileParameters(_)),
            "{m} {t} {l}: {e:?}"
        );
        // Refused without running the KDF (a loose bound: 1 GiB of Argon2 takes seconds).
        assert!(started.elapsed().as_secs() < 5);
    }
}

#[test]
fn writer_refuses_bad_options() {
    let p = Secret::passphrase("pw").unwrap();
    for (chunk_log2, argon2) in [
        (9, Argon2Params::default()),
        (21, Argon2Params::default()),
        (
            16,
            Argon2Params {
                m_kib: (1 << 20) + 1,
                t: 1,
                p: 1,
            },
        ),
        (
            16,
            Argon2Params {
                m_kib: 64,
                t: 11,
                p: 1,
            },
        ),
    ] {
        let o = Options {
            chunk_log2,
            argon2,
            ..Options::default()
        };
        let e = Encryptor::new(Vec::new(), &p, &o).err().expect("refused");
        assert!(matches!(
            format_error(&e).unwrap().kind(),
            ErrorKind::BadOptions(_)
        ));
    }
    assert!(Secret::passphrase("").is_err());
}

#[test]
fn unfinished_writer_reads_as_truncated() {
    let s = key();
    let pt = plain(BATCH + C);
    let mut e = Encryptor::new(Vec::new(), &s, &opts(1)).unwrap();
    e.write_all(&pt).unwrap();
    // Dropped without finish: the first batch was written (as middle chunks), nothing else.
    let f = e.get_ref().clone();
    drop(e);
    let err = decrypt_both(&f, &s, &pt).unwrap_err();
    assert_eq!(err, ErrorKind::Truncated((BATCH / C) as u64 - 1));
}

const BATCH: usize = aesx_file::BATCH_BYTES;
