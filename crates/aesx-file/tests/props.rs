//! Round trips over random sizes, chunk sizes, write/read piece sizes and thread counts: the
//! Write adapter and the pipelined stream write the same bytes (same salts), whatever the
//! thread count, and both readers give the plaintext back.

use std::io::{Read, Write};

use aesx_file::{BATCH_BYTES, Decryptor, Options, Secret, testing};
use proptest::prelude::*;

const FILE_SALT: [u8; 32] = [0x11; 32];
const ARGON2_SALT: [u8; 16] = [0; 16];

fn plain(n: usize, seed: u8) -> Vec<u8> {
    (0..n)
        .map(|i| (i as u8).wrapping_mul(seed | 1) ^ seed)
        .collect()
}

fn via_adapter(pt: &[u8], s: &Secret, o: &Options, piece: usize) -> Vec<u8> {
    let mut e = testing::encryptor_with_salts(Vec::new(), s, o, FILE_SALT, ARGON2_SALT).unwrap();
    for p in pt.chunks(piece.max(1)) {
        e.write_all(p).unwrap();
    }
    e.finish().unwrap()
}

fn via_stream(pt: &[u8], s: &Secret, o: &Options) -> Vec<u8> {
    let mut out = Vec::new();
    testing::encrypt_stream_with_salts(pt, &mut out, s, o, FILE_SALT, ARGON2_SALT).unwrap();
    out
}

/// Reads with reads of `piece` bytes.
fn read_adapter(f: &[u8], s: &Secret, o: &Options, piece: usize) -> Vec<u8> {
    let mut d = Decryptor::new(f, s, o).unwrap();
    let mut out = Vec::new();
    let mut buf = vec![0u8; piece.max(1)];
    loop {
        let n = d.read(&mut buf).unwrap();
        if n == 0 {
            return out;
        }
        out.extend_from_slice(&buf[..n]);
    }
}

fn read_stream(f: &[u8], s: &Secret, o: &Options, hint: Option<u64>) -> Vec<u8> {
    let mut out = Vec::new();
    aesx_file::decrypt_stream(f, &mut out, s, o, hint, &|_| {}).unwrap();
    out
}

fn check(n: usize, chunk_log2: u8, threads: usize, wpiece: usize, rpiece: usize, seed: u8) {
    let s = Secret::key(&[seed; 32]);
    let pt = plain(n, seed);
    let one = Options {
        chunk_log2,
        threads: 1,
        ..Options::default()
    };
    let o = Options {
        threads,
        ..one.clone()
    };
    let reference = via_stream(&pt, &s, &one);
    assert_eq!(
        via_stream(&pt, &s, &o),
        reference,
        "stream, {threads} threads"
    );
    assert_eq!(via_adapter(&pt, &s, &o, wpiece), reference, "adapter");
    assert_eq!(read_adapter(&reference, &s, &o, rpiece), pt);
    assert_eq!(read_stream(&reference, &s, &o, None), pt);
    assert_eq!(
        read_stream(&reference, &s, &o, Some(reference.len() as u64)),
        pt
    );
    // A wrong size hint only changes buffer sizes.
    assert_eq!(read_stream(&reference, &s, &o, Some(3)), pt);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn round_trips(
        n in 0usize..40_000,
        chunk_log2 in 10u8..=13,
        threads in 1usize..=4,
        wpiece in 1usize..5000,
        rpiece in 1usize..5000,
        seed: u8,
    ) {
        check(n, chunk_log2, threads, wpiece, rpiece, seed);
    }
}

#[test]
fn across_batch_boundaries() {
    // Batches hold BATCH_BYTES of plaintext: the look-ahead byte and the final flag must
    // work when the input ends exactly at, just before and just after a batch.
    for n in [
        BATCH_BYTES - 1,
        BATCH_BYTES,
        BATCH_BYTES + 1,
        2 * BATCH_BYTES + 1024 + 1,
    ] {
        for threads in [1, 3] {
            check(n, 10, threads, 100_000, 70_000, 7);
        }
    }
    check(3 * BATCH_BYTES, 20, 2, 1 << 20, 1 << 19, 9);
}
