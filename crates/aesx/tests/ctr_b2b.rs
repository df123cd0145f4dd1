//! Buffer-to-buffer CTR (`Aes::try_ctr_xor_at_b2b`, `Ctr::apply_keystream_b2b`) on every
//! backend against in-place CTR on `soft`: every byte length up to three iterations of the
//! widest one-pass loop (24 blocks = 384 bytes) plus 17 blocks, at byte positions that start
//! inside a block, with counters whose low 8, 32, 64 and 128 bits carry inside the message;
//! calls of 1-32 KiB with input and output at every alignment a vector loop's loads and
//! stores care about; streaming in uneven chunks equals one call; unequal lengths are
//! rejected without writing.

mod common;

use aesx::{Aes, Backend, Ctr, ErrorKind};

fn data(n: usize, seed: u8) -> Vec<u8> {
    (0..n)
        .map(|i| (i as u8).wrapping_mul(131).wrapping_add(seed) ^ (i >> 8) as u8)
        .collect()
}

/// Counters whose low 8, 32, 64 and 128 bits carry `d` blocks into the message, for each `d`.
fn counters(ds: &[u128]) -> Vec<[u8; 16]> {
    let pattern = 0x0123_4567_89ab_cdef_fedc_ba98_7654_3210_u128;
    let mut v = Vec::new();
    for bits in [8u32, 32, 64, 128] {
        let low = if bits == 128 {
            u128::MAX
        } else {
            (1u128 << bits) - 1
        };
        for &d in ds {
            v.push(((pattern & !low) | (0u128.wrapping_sub(d) & low)).to_be_bytes());
        }
    }
    v
}

/// For each key size (key `data(kl, key_seed)`) and each IV: the key, the IV and `src` under
/// `soft`'s keystream from that IV, the reference the long-call tests hold every backend to.
fn soft_references(
    src: &[u8],
    key_seed: u8,
    ivs: &[[u8; 16]],
) -> Vec<(Vec<u8>, [u8; 16], Vec<u8>)> {
    let mut v = Vec::new();
    for kl in [16usize, 24, 32] {
        let key = data(kl, key_seed);
        let soft = Aes::with_backend(&key, Backend::Soft).unwrap();
        for iv in ivs {
            let mut want = src.to_vec();
            soft.ctr_xor_at(iv, 0, &mut want);
            v.push((key.clone(), *iv, want));
        }
    }
    v
}

#[test]
fn b2b_matches_in_place_on_every_backend() {
    let max = 3 * 384 + 17 * 16;
    let src = data(max, 7);
    for kl in [16usize, 24, 32] {
        let key = data(kl, 3);
        let soft = Aes::with_backend(&key, Backend::Soft).unwrap();
        for iv in counters(&[5, 30]) {
            for pos in [0u64, 5] {
                let mut want = src.clone();
                soft.ctr_xor_at(&iv, pos, &mut want);
                for b in common::backends() {
                    let aes = Aes::with_backend(&key, b).unwrap();
                    for len in 0..=max {
                        let mut out = vec![0xa5u8; len];
                        aes.try_ctr_xor_at_b2b(&iv, pos, &src[..len], &mut out)
                            .unwrap();
                        assert_eq!(
                            out,
                            want[..len],
                            "{b}: key={kl} iv={iv:02x?} pos={pos} len={len}"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn streamed_b2b_equals_one_shot() {
    let src = data(3 * 384 + 17 * 16 + 9, 11);
    let chunks = [
        0usize, 1, 2, 5, 15, 16, 17, 31, 32, 33, 63, 64, 65, 383, 384, 385, 512,
    ];
    for b in common::backends() {
        for kl in [16usize, 32] {
            let aes = Aes::with_backend(&data(kl, 1), b).unwrap();
            for iv in counters(&[5, 30]) {
                let mut one = src.clone();
                aes.ctr_xor_at(&iv, 0, &mut one);
                for start in 0..chunks.len() {
                    let mut out = vec![0u8; src.len()];
                    let mut c = Ctr::new(&aes, &iv);
                    let (mut at, mut i) = (0, start);
                    while at < src.len() {
                        let n = chunks[i % chunks.len()].min(src.len() - at);
                        c.apply_keystream_b2b(&src[at..at + n], &mut out[at..at + n])
                            .unwrap();
                        at += n;
                        i += 1;
                        assert_eq!(c.position(), at as u64);
                    }
                    assert_eq!(out, one, "{b}: key={kl} iv={iv:02x?} chunks from {start}");
                }
            }
        }
    }
}

#[test]
fn b2b_rejects_unequal_lengths_without_writing() {
    for b in common::backends() {
        let aes = Aes::with_backend(&[9u8; 16], b).unwrap();
        let iv = [1u8; 16];
        for (n, m, kind) in [
            (100usize, 99usize, ErrorKind::OutputTooSmall),
            (100, 101, ErrorKind::InvalidLength),
            (0, 1, ErrorKind::InvalidLength),
            (1000, 0, ErrorKind::OutputTooSmall),
        ] {
            let src = data(n, 2);
            let mut out = vec![0x5au8; m];
            let e = aes.try_ctr_xor_at_b2b(&iv, 0, &src, &mut out).unwrap_err();
            assert_eq!(e.kind(), kind, "{b}: {n} -> {m}");
            assert!(
                out.iter().all(|&x| x == 0x5a),
                "{b}: output written on error"
            );
            let mut c = Ctr::new(&aes, &iv);
            let e = c.apply_keystream_b2b(&src, &mut out).unwrap_err();
            assert_eq!(e.kind(), kind, "{b}: Ctr {n} -> {m}");
            assert!(
                out.iter().all(|&x| x == 0x5a),
                "{b}: output written on error"
            );
            assert_eq!(c.position(), 0);
        }
    }
}

/// Calls long enough for the first-round-table loop of `vaes512` on AMD (from 6 KiB, 32-block
/// batches) with every short tail after the batches (0 to 5 blocks, which that backend hands
/// to its xmm code up to 4) and longer ones, in place and buffer to buffer, against `soft`,
/// with counters whose low 8, 32, 64 and 128 bits carry in the last batch, at the tail's first
/// block and inside the tail.
#[test]
fn long_calls_with_short_tails() {
    let batches = 12 * 32;
    let tails = [0usize, 1, 2, 3, 4, 5, 8, 31];
    let max = 16 * (batches + 31);
    let src = data(max, 21);
    let b = batches as u128;
    let ivs = counters(&[b - 1, b, b + 2, b + 3]);
    for (key, iv, want) in soft_references(&src, 9, &ivs) {
        let kl = key.len();
        for b in common::backends() {
            let aes = Aes::with_backend(&key, b).unwrap();
            for t in tails {
                let len = 16 * (batches + t);
                let mut x = src[..len].to_vec();
                aes.try_ctr_xor_at(&iv, 0, &mut x).unwrap();
                assert_eq!(x, want[..len], "{b}: key={kl} iv={iv:02x?} tail={t}");
                let mut y = vec![0xa5u8; len];
                aes.try_ctr_xor_at_b2b(&iv, 0, &src[..len], &mut y).unwrap();
                assert_eq!(y, want[..len], "{b} b2b: key={kl} iv={iv:02x?} tail={t}");
            }
        }
    }
}

/// Inputs and outputs at the offsets that matter to a vector loop's loads and stores (0, 4,
/// 16, 32 and 48 bytes past a 64-byte boundary), in place and buffer to buffer, for calls that
/// reach each loop (1 KiB: the 8-register selector loops; 16 KiB and up: also `vaes256`'s
/// 12-register loop for AES-192/256 on Zen 3 and `vaes512`'s first-round-table loop on AMD;
/// lengths with short tails), against `soft`, with counters whose low 8, 32, 64 and 128 bits
/// carry at the second or third block; nothing is written outside the output.
#[test]
fn every_output_alignment() {
    let lens = [1024usize, 1040, 16384, 16400, 32784];
    let offsets = [0usize, 4, 16, 32, 48];
    let max = *lens.iter().max().unwrap();
    let src = data(max, 33);
    let ivs = counters(&[1, 2]);
    // Two 64-byte-aligned areas, far enough apart not to overlap at any offset.
    let area = (max + 128).next_multiple_of(64);
    let mut store = vec![0u8; 2 * area + 64];
    let base = store.as_ptr().align_offset(64);
    for (key, iv, want) in soft_references(&src, 17, &ivs) {
        let kl = key.len();
        for b in common::backends().into_iter().skip(1) {
            let aes = Aes::with_backend(&key, b).unwrap();
            for &len in &lens {
                for &so in &offsets {
                    // In place at `so`.
                    let at = base + so;
                    store[at..at + len].copy_from_slice(&src[..len]);
                    aes.ctr_xor_at(&iv, 0, &mut store[at..at + len]);
                    assert!(
                        store[at..at + len] == want[..len],
                        "{b}: key={kl} iv={iv:02x?} len={len} in place at +{so}"
                    );
                    // Buffer to buffer, input at `so`, output at `o` in the second area.
                    for &o in &offsets {
                        let (first, second) = store.split_at_mut(base + area);
                        let input = &mut first[base + so..base + so + len];
                        input.copy_from_slice(&src[..len]);
                        second[..64 + len + 16].fill(0xa5);
                        let output = &mut second[o..o + len];
                        aes.try_ctr_xor_at_b2b(&iv, 0, input, output).unwrap();
                        assert!(
                            second[o..o + len] == want[..len],
                            "{b}: key={kl} iv={iv:02x?} len={len} +{so} -> +{o}"
                        );
                        assert!(
                            second[..o]
                                .iter()
                                .chain(&second[o + len..o + len + 16])
                                .all(|&x| x == 0xa5),
                            "{b}: key={kl} len={len} +{so} -> +{o}: wrote outside the output"
                        );
                    }
                }
            }
        }
    }
}
