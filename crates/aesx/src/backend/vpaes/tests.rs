//! Unit tests for the vector-permute backend against the RustCrypto `aes` crate (block cipher
//! oracle) and `crate::hazmat::portable_expand` (independent key expansion). Every kernel
//! variant this CPU runs (xmm, and ymm where AVX2 is present) is tested directly.

use super::*;
use aes::cipher::{BlockCipherDecrypt, BlockCipherEncrypt, KeyInit};
use std::{format, string::String, vec, vec::Vec};

/// The RustCrypto implementation of the same key, block by block.
enum Oracle {
    A128(aes::Aes128),
    A192(aes::Aes192),
    A256(aes::Aes256),
}

impl Oracle {
    fn new(key: &[u8]) -> Oracle {
        match key.len() {
            16 => Oracle::A128(aes::Aes128::new_from_slice(key).unwrap()),
            24 => Oracle::A192(aes::Aes192::new_from_slice(key).unwrap()),
            _ => Oracle::A256(aes::Aes256::new_from_slice(key).unwrap()),
        }
    }
    fn enc(&self, b: &mut [u8]) {
        let mut x = aes::Block::from(<[u8; 16]>::try_from(&*b).unwrap());
        match self {
            Oracle::A128(c) => c.encrypt_block(&mut x),
            Oracle::A192(c) => c.encrypt_block(&mut x),
            Oracle::A256(c) => c.encrypt_block(&mut x),
        }
        b.copy_from_slice(&x);
    }
    fn dec(&self, b: &mut [u8]) {
        let mut x = aes::Block::from(<[u8; 16]>::try_from(&*b).unwrap());
        match self {
            Oracle::A128(c) => c.decrypt_block(&mut x),
            Oracle::A192(c) => c.decrypt_block(&mut x),
            Oracle::A256(c) => c.decrypt_block(&mut x),
        }
        b.copy_from_slice(&x);
    }
}

/// SplitMix64: deterministic test data without another dependency.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

/// One set of parallel kernels (xmm or ymm).
struct Kernels {
    name: &'static str,
    enc: fn(&Keys, &mut [u8]),
    dec: fn(&Keys, &mut [u8]),
    cbc_dec: fn(&Keys, &mut [u8; 16], &mut [u8]),
    ctr: fn(&Keys, u128, &mut [u8]),
    /// Blocks per main-loop iteration.
    batch: usize,
}

fn kernel_sets() -> Vec<Kernels> {
    assert!(
        crate::cpu::features().ssse3,
        "the vpaes tests need SSSE3 (every x86-64 CPU since 2006 has it)"
    );
    let mut v = vec![
        // The entry points, which pick a width by CPU and buffer length.
        Kernels {
            name: "dispatch",
            enc: encrypt_blocks,
            dec: decrypt_blocks,
            cbc_dec: cbc_decrypt,
            ctr: ctr_xor,
            batch: match width() {
                Width::X1 => x1::BATCH,
                Width::X2 => x2::BATCH,
                Width::X3 => x3::BATCH,
            },
        },
        Kernels {
            name: "xmm",
            enc: x1::encrypt_blocks,
            dec: x1::decrypt_blocks,
            cbc_dec: x1::cbc_decrypt,
            ctr: x1::ctr_xor,
            batch: x1::BATCH,
        },
    ];
    let w = width();
    if w != Width::X1 {
        v.push(Kernels {
            name: "ymm",
            enc: x2::encrypt_blocks,
            dec: x2::decrypt_blocks,
            cbc_dec: x2::cbc_decrypt,
            ctr: x2::ctr_xor,
            batch: x2::BATCH,
        });
    }
    if w == Width::X3 {
        v.push(Kernels {
            name: "zmm",
            enc: x3::encrypt_blocks,
            dec: x3::decrypt_blocks,
            cbc_dec: x3::cbc_decrypt,
            ctr: x3::ctr_xor,
            batch: x3::BATCH,
        });
    }
    v
}

/// Block counts around every batch size and its multiples, +-1.
fn block_counts(batch: usize) -> Vec<usize> {
    let mut v = vec![0, 1, 2, 3];
    for m in [1, 2, 3, 4, 8] {
        let n = m * batch;
        v.extend([n - 1, n, n + 1]);
    }
    v.sort();
    v.dedup();
    v
}

fn keys_for(rng: &mut Rng) -> Vec<Vec<u8>> {
    [16, 24, 32]
        .into_iter()
        .flat_map(|n| [rng.bytes(n), vec![0u8; n], vec![0xffu8; n]])
        .collect()
}

fn hexs(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

#[test]
fn fips197_appendix_c() {
    let key: Vec<u8> = (0u8..32).collect();
    let pt: Vec<u8> = (0u8..16).map(|i| i * 0x11).collect();
    let want = [
        "69c4e0d86a7b0430d8cdb78070b4c55a",
        "dda97ca4864cdfe06eaf70a0ec0d7191",
        "8ea2b7ca516745bfeafc49904b496089",
    ];
    for (kl, want) in [16, 24, 32].into_iter().zip(want) {
        let k = expand(&key[..kl]);
        for ks in kernel_sets() {
            let mut b = pt.clone();
            (ks.enc)(&k, &mut b);
            assert_eq!(hexs(&b), want, "{} AES-{}", ks.name, kl * 8);
            (ks.dec)(&k, &mut b);
            assert_eq!(b, pt, "{} AES-{}", ks.name, kl * 8);
        }
        let mut b = pt.clone();
        encrypt_blocks(&k, &mut b);
        assert_eq!(hexs(&b), want);
    }
}

#[test]
fn from_round_keys_equals_expand() {
    let mut rng = Rng(1);
    for key in keys_for(&mut rng) {
        let rk = crate::hazmat::portable_expand(&key);
        let a = expand(&key);
        let b = from_round_keys(&rk.keys[..=rk.rounds]);
        assert_eq!(a.rounds, rk.rounds);
        assert_eq!(b.rounds, rk.rounds);
        assert!(a.enc == b.enc && a.dec == b.dec, "AES-{}", key.len() * 8);
    }
}

#[test]
fn ecb_matches_oracle() {
    let mut rng = Rng(2);
    for key in keys_for(&mut rng) {
        let o = Oracle::new(&key);
        let k = expand(&key);
        for ks in kernel_sets() {
            for n in block_counts(ks.batch) {
                let pt = rng.bytes(16 * n);
                let mut want = pt.clone();
                want.chunks_exact_mut(16).for_each(|b| o.enc(b));
                let mut got = pt.clone();
                (ks.enc)(&k, &mut got);
                assert!(got == want, "{} enc AES-{} n={n}", ks.name, key.len() * 8);
                (ks.dec)(&k, &mut got);
                assert!(got == pt, "{} dec AES-{} n={n}", ks.name, key.len() * 8);
                // And decryption of random data against the oracle's decryption.
                let mut want = pt.clone();
                want.chunks_exact_mut(16).for_each(|b| o.dec(b));
                let mut got = pt.clone();
                (ks.dec)(&k, &mut got);
                assert!(
                    got == want,
                    "{} dec-only AES-{} n={n}",
                    ks.name,
                    key.len() * 8
                );
            }
        }
    }
}

#[test]
fn cbc_matches_oracle() {
    let mut rng = Rng(3);
    for key in keys_for(&mut rng) {
        let o = Oracle::new(&key);
        let k = expand(&key);
        for ks in kernel_sets() {
            for n in block_counts(ks.batch) {
                let iv0: [u8; 16] = rng.bytes(16).try_into().unwrap();
                let pt = rng.bytes(16 * n);
                let mut want = pt.clone();
                let mut prev = iv0;
                for b in want.chunks_exact_mut(16) {
                    b.iter_mut().zip(prev).for_each(|(x, p)| *x ^= p);
                    o.enc(b);
                    prev.copy_from_slice(b);
                }
                let mut got = pt.clone();
                let mut iv = iv0;
                cbc_encrypt(&k, &mut iv, &mut got);
                assert!(got == want, "cbc enc AES-{} n={n}", key.len() * 8);
                assert_eq!(iv, prev, "cbc enc iv n={n}");
                let mut iv = iv0;
                (ks.cbc_dec)(&k, &mut iv, &mut got);
                assert!(got == pt, "{} cbc dec AES-{} n={n}", ks.name, key.len() * 8);
                assert_eq!(iv, prev, "{} cbc dec iv n={n}", ks.name);
            }
        }
    }
}

#[test]
fn ctr_matches_oracle() {
    let mut rng = Rng(4);
    for key in keys_for(&mut rng) {
        let o = Oracle::new(&key);
        let k = expand(&key);
        for ks in kernel_sets() {
            for n in block_counts(ks.batch) {
                let hi = rng.next() as u128;
                // Starts whose low 64 bits stay below 2^64 for the whole call (the contract).
                let room = u64::MAX - n.max(1) as u64 + 1;
                for lo in [0, u32::MAX as u64, room, rng.next() % room] {
                    let c0 = hi << 64 | lo as u128;
                    let data = rng.bytes(16 * n);
                    let mut want = data.clone();
                    for (i, b) in want.chunks_exact_mut(16).enumerate() {
                        let mut ks = (c0 + i as u128).to_be_bytes();
                        o.enc(&mut ks);
                        b.iter_mut().zip(ks).for_each(|(x, s)| *x ^= s);
                    }
                    let mut got = data.clone();
                    (ks.ctr)(&k, c0, &mut got);
                    assert!(
                        got == want,
                        "{} ctr AES-{} n={n} c={c0:#x}",
                        ks.name,
                        key.len() * 8
                    );
                }
            }
        }
    }
}
