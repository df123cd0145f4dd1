//! Differential tests: every available backend against `soft` and against an independent
//! implementation (RustCrypto `aes` 0.9 + `cbc` 0.2 + `ctr` 0.10 `Ctr128BE`), for ECB, CBC and
//! CTR, all key sizes, on lengths around every batch size a kernel might use and with CTR
//! counters placed so the carry out of the low 32, 64 and 96 bits and the 2^128 wrap fall at
//! every position inside a batch.

mod common;

use aesx::{Aes, Backend, Ctr};
use common::{Rng, assert_bytes_eq, backends};

const KEY_LENS: [usize; 3] = [16, 24, 32];

/// 16 x {1, 4, 8, 16, 32, 64} +- 1 block, the 12-block xmm batch (12, 24) +- 1, plus 0 and
/// wider unrolls (128, 256) +- 1, plus a few large buffers (the largest is just over 64 KiB).
const BLOCK_COUNTS: &[usize] = &[
    0, 1, 2, 3, 4, 5, 7, 8, 9, 11, 12, 13, 15, 16, 17, 23, 24, 25, 31, 32, 33, 63, 64, 65, 96, 127,
    128, 129, 255, 256, 257, 1000, 1027, 4097,
];

fn block_lens() -> Vec<usize> {
    BLOCK_COUNTS.iter().map(|n| 16 * n).collect()
}

/// Whole-block lengths and one byte either side of each (CTR takes any length).
fn byte_lens() -> Vec<usize> {
    let mut v: Vec<usize> = BLOCK_COUNTS
        .iter()
        .flat_map(|n| [(16 * n).saturating_sub(1), 16 * n, 16 * n + 1])
        .collect();
    v.dedup();
    v
}

/// Runs `aesx_op` on every backend and `oracle` once, on random input of each length with a
/// random key (each size) and IV, and compares: every backend with the oracle and with `soft`.
fn differential(
    op: &str,
    lens: &[usize],
    aesx_op: impl Fn(&Aes, &[u8; 16], &mut [u8]),
    oracle: impl Fn(&[u8], &[u8; 16], &mut [u8]),
) {
    let list = backends();
    let mut rng = Rng::new(0x5eed ^ op.len() as u64);
    for kl in KEY_LENS {
        let key = rng.bytes(kl);
        let iv = rng.block();
        let keyed: Vec<Aes> = list
            .iter()
            .map(|&b| Aes::with_backend(&key, b).unwrap())
            .collect();
        for &len in lens {
            let input = rng.bytes(len);
            let mut want = input.clone();
            oracle(&key, &iv, &mut want);
            let mut soft_out: Option<Vec<u8>> = None;
            for aes in &keyed {
                let b = aes.backend();
                let mut got = input.clone();
                aesx_op(aes, &iv, &mut got);
                let what = format!("{b}: {op} AES-{} on {len} bytes", kl * 8);
                if let Some(s) = &soft_out {
                    assert_bytes_eq(&got, s, format_args!("{what}: differs from soft"));
                }
                assert_bytes_eq(&got, &want, format_args!("{what}: differs from RustCrypto"));
                if b == Backend::Soft {
                    soft_out = Some(got);
                }
            }
        }
    }
}

#[test]
fn ecb_encrypt_matches() {
    differential(
        "ECB encrypt_blocks",
        &block_lens(),
        |a, _, buf| a.encrypt_blocks(buf),
        |k, _, buf| common::rc_ecb_encrypt(k, buf),
    );
}

#[test]
fn ecb_decrypt_matches() {
    differential(
        "ECB decrypt_blocks",
        &block_lens(),
        |a, _, buf| a.decrypt_blocks(buf),
        |k, _, buf| common::rc_ecb_decrypt(k, buf),
    );
}

#[test]
fn ecb_b2b_matches() {
    differential(
        "ECB encrypt_blocks_b2b",
        &block_lens(),
        |a, _, buf| {
            let mut out = vec![0u8; buf.len()];
            a.encrypt_blocks_b2b(buf, &mut out).unwrap();
            buf.copy_from_slice(&out);
        },
        |k, _, buf| common::rc_ecb_encrypt(k, buf),
    );
    differential(
        "ECB decrypt_blocks_b2b",
        &block_lens(),
        |a, _, buf| {
            let mut out = vec![0u8; buf.len()];
            a.decrypt_blocks_b2b(buf, &mut out).unwrap();
            buf.copy_from_slice(&out);
        },
        |k, _, buf| common::rc_ecb_decrypt(k, buf),
    );
}

#[test]
fn cbc_encrypt_matches() {
    differential(
        "CBC encrypt",
        &block_lens(),
        |a, iv, buf| a.cbc_encrypt(iv, buf).unwrap(),
        common::rc_cbc_encrypt,
    );
}

#[test]
fn cbc_decrypt_matches() {
    differential(
        "CBC decrypt",
        &block_lens(),
        |a, iv, buf| a.cbc_decrypt(iv, buf).unwrap(),
        common::rc_cbc_decrypt,
    );
}

#[test]
fn ctr_matches() {
    differential(
        "CTR apply_keystream",
        &byte_lens(),
        |a, iv, buf| Ctr::new(a, iv).apply_keystream(buf),
        |k, iv, buf| common::rc_ctr(k, iv, 0, buf),
    );
    differential(
        "CTR ctr_xor_at(pos 5)",
        &byte_lens(),
        |a, iv, buf| a.ctr_xor_at(iv, 5, buf),
        |k, iv, buf| common::rc_ctr(k, iv, 5, buf),
    );
}

/// Counter blocks at and just below a carry boundary: `B - d` for boundaries B at 2^32, 2^64,
/// 2^96 and 2^128 (= 0, the wrap), some with non-trivial high words, and d blocks to go so the
/// carry falls at every position inside a batch of up to 64 blocks (d = 0 starts exactly on
/// the boundary, e.g. at counter 0). Lengths end just before,
/// at and after the carry, and well past it; starts are block-aligned and mid-block.
#[test]
fn ctr_counter_carry_matches() {
    const BOUNDARIES: [u128; 7] = [
        0, // 2^128 wraps to 0: start at 2^128 - d
        1 << 32,
        1 << 64,
        1 << 96,
        0xdead_beef_0123_4567_0000_0000_0000_0000, // 2^64 carry into a busy high half
        0xa5a5_a5a5_a5a5_a5a5_a5a5_a5a6_0000_0000, // 2^32 carry with every word in use
        0xffff_ffff_ffff_ffff_0000_0000_0000_0000, // high half all ones: next wrap is 2^128
    ];
    const DISTANCES: [u128; 18] = [
        0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65,
    ];
    let list = backends();
    let mut rng = Rng::new(0xca77);
    for kl in KEY_LENS {
        let key = rng.bytes(kl);
        let keyed: Vec<Aes> = list
            .iter()
            .map(|&b| Aes::with_backend(&key, b).unwrap())
            .collect();
        for base in BOUNDARIES {
            for d in DISTANCES {
                let iv = base.wrapping_sub(d).to_be_bytes();
                let d = d as usize;
                for len in [16 * d, 16 * d + 1, 16 * (d + 1), 16 * 65 - 1, 16 * 130 + 7] {
                    for start in [0u64, 7] {
                        let input = rng.bytes(len);
                        let mut want = input.clone();
                        common::rc_ctr(&key, &iv, start, &mut want);
                        let mut soft_out: Option<Vec<u8>> = None;
                        for aes in &keyed {
                            let b = aes.backend();
                            let what = format!(
                                "{b}: CTR AES-{} iv {} start byte {start}, {len} bytes",
                                kl * 8,
                                hex::encode(iv)
                            );
                            let mut got = input.clone();
                            if start == 0 {
                                Ctr::new(aes, &iv).apply_keystream(&mut got);
                            } else {
                                aes.ctr_xor_at(&iv, start, &mut got);
                            }
                            if let Some(s) = &soft_out {
                                assert_bytes_eq(&got, s, format_args!("{what}: differs from soft"));
                            }
                            assert_bytes_eq(
                                &got,
                                &want,
                                format_args!("{what}: differs from RustCrypto"),
                            );
                            if b == Backend::Soft {
                                soft_out = Some(got);
                            }
                        }
                    }
                }
            }
        }
    }
}

/// A `Ctr` that streams across the 2^64 and 2^128 boundaries in uneven pieces reports the
/// counter block and position it should.
#[test]
fn ctr_counter_and_position_across_carry() {
    for b in backends() {
        let aes = Aes::with_backend(&[0x11; 32], b).unwrap();
        for base in [0u128, 1 << 64] {
            let iv = base.wrapping_sub(3).to_be_bytes();
            let mut c = Ctr::new(&aes, &iv);
            let mut pos = 0u64;
            for piece in [5usize, 11, 16, 1, 31, 17, 64] {
                let mut buf = vec![0u8; piece];
                c.apply_keystream(&mut buf);
                pos += piece as u64;
                assert_eq!(c.position(), pos, "{b}: position");
                let want_ctr = base.wrapping_sub(3).wrapping_add((pos / 16) as u128);
                assert_eq!(
                    c.counter(),
                    want_ctr.to_be_bytes(),
                    "{b}: counter at byte {pos}"
                );
            }
        }
    }
}

/// One quarter-megabyte buffer per mode (AES-128 and AES-256), in case a backend switches to a
/// different loop for long inputs.
#[test]
fn large_buffers_match() {
    let len = (1 << 18) + 16 * 3;
    let mut rng = Rng::new(0x1a46e);
    for kl in [16, 32] {
        let key = rng.bytes(kl);
        let iv = rng.block();
        let input = rng.bytes(len + 5);
        let mut ecb = input[..len].to_vec();
        common::rc_ecb_encrypt(&key, &mut ecb);
        let mut cbc = input[..len].to_vec();
        common::rc_cbc_decrypt(&key, &iv, &mut cbc);
        let mut ctr = input.clone();
        common::rc_ctr(&key, &iv, 0, &mut ctr);
        for b in backends() {
            let aes = Aes::with_backend(&key, b).unwrap();
            let what = format!("{b}: AES-{} {len}-byte buffer", kl * 8);
            let mut buf = input[..len].to_vec();
            aes.encrypt_blocks(&mut buf);
            assert_bytes_eq(
                &buf,
                &ecb,
                format_args!("{what}: ECB encrypt vs RustCrypto"),
            );
            let mut buf = input[..len].to_vec();
            aes.cbc_decrypt(&iv, &mut buf).unwrap();
            assert_bytes_eq(
                &buf,
                &cbc,
                format_args!("{what}: CBC decrypt vs RustCrypto"),
            );
            let mut buf = input.clone();
            Ctr::new(&aes, &iv).apply_keystream(&mut buf);
            assert_bytes_eq(&buf, &ctr, format_args!("{what} + 5: CTR vs RustCrypto"));
        }
    }
}

/// A quarter-megabyte CTR call whose counter carries into the high half (2^64) or wraps
/// (2^128) far inside it, several thousand blocks in: the long-call loops (which differ by CPU
/// and length: the selector loop on Intel and Zen 3, the scalar-counter loop on Zen 4's
/// `aesni` / `vaes256`, the zmm loops) must carry exactly there, not only near a call's start.
#[test]
fn large_ctr_call_across_carry() {
    let len = (1 << 18) + 16 * 3 + 5;
    let mut rng = Rng::new(0xc0ffee);
    for kl in [16, 32] {
        let key = rng.bytes(kl);
        let keyed: Vec<Aes> = backends()
            .iter()
            .map(|&b| Aes::with_backend(&key, b).unwrap())
            .collect();
        for base in [1u128 << 64, 0] {
            for d in [3001u128, 8190] {
                let iv = base.wrapping_sub(d).to_be_bytes();
                let input = rng.bytes(len);
                let mut want = input.clone();
                common::rc_ctr(&key, &iv, 0, &mut want);
                for aes in &keyed {
                    let what = format!(
                        "{}: CTR AES-{} iv {}, {len} bytes",
                        aes.backend(),
                        kl * 8,
                        hex::encode(iv)
                    );
                    let mut got = input.clone();
                    aes.ctr_xor_at(&iv, 0, &mut got);
                    assert_bytes_eq(&got, &want, format_args!("{what}: differs from RustCrypto"));
                    let mut out = vec![0u8; len];
                    Ctr::new(aes, &iv)
                        .apply_keystream_b2b(&input, &mut out)
                        .unwrap();
                    assert_bytes_eq(&out, &want, format_args!("{what}: buffer to buffer"));
                }
            }
        }
    }
}
