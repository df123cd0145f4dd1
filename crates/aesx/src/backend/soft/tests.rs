//! Unit tests for the bitsliced backend against independent oracles: the RustCrypto `aes`
//! crate (block cipher) and `crate::hazmat`'s arithmetic S-box and key expansion.

use super::*;
use aes::cipher::{BlockCipherDecrypt, BlockCipherEncrypt, KeyInit};
use std::{vec, vec::Vec};

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
    fn fill(&mut self, buf: &mut [u8]) {
        for b in buf.iter_mut() {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            *b = (z ^ (z >> 31)) as u8;
        }
    }
    fn bytes(&mut self, n: usize) -> Vec<u8> {
        let mut v = vec![0; n];
        self.fill(&mut v);
        v
    }
}

/// Block counts around every batch size (1, 8, 16) and multiples of them.
fn block_counts() -> Vec<usize> {
    let mut v = vec![0, 3, 4, 5, 12];
    for n in [1usize, 8, 16, 24, 32, 48, 64] {
        v.extend([n.saturating_sub(1), n, n + 1]);
    }
    v.sort();
    v.dedup();
    v
}

#[test]
fn soft_sbox_matches_arithmetic() {
    for x in 0..=255u8 {
        let w = u32::from_le_bytes([x, x ^ 0x5a, x.wrapping_add(77), !x]);
        let want: Vec<u8> = w.to_le_bytes().map(crate::hazmat::sbox).to_vec();
        assert_eq!(sub_word(w).to_le_bytes().to_vec(), want, "x = {x:#04x}");
    }
}

#[test]
fn soft_inverse_sbox_inverts() {
    // inv_sbox_core expects x ^ 0x63 and returns S^-1(x); check S^-1(S(y)) = y for all y.
    for y in 0..=255u8 {
        let x = crate::hazmat::sbox(y) ^ 0x63;
        let mut p: [u32; 8] = core::array::from_fn(|i| u32::from((x >> i) & 1));
        inv_sbox_core(&mut p);
        let got = p
            .iter()
            .enumerate()
            .fold(0u8, |a, (i, b)| a | ((*b as u8) << i));
        assert_eq!(got, y, "y = {y:#04x}");
    }
}

#[test]
fn soft_expand_matches_round_keys() {
    let mut rng = Rng(1);
    for kl in [16, 24, 32] {
        for _ in 0..20 {
            let key = rng.bytes(kl);
            let rk = crate::hazmat::portable_expand(&key);
            let a = expand(&key);
            let b = from_round_keys(rk.as_slice());
            assert_eq!(a.rounds, rk.rounds);
            assert_eq!(b.rounds, rk.rounds);
            for i in 0..=a.rounds {
                for p in 0..8 {
                    assert_eq!(a.rk[i][p], b.rk[i][p], "key {kl} round {i} plane {p}");
                }
            }
        }
    }
}

#[test]
fn soft_ecb_matches_oracle() {
    let mut rng = Rng(2);
    for kl in [16, 24, 32] {
        for n in block_counts() {
            let key = rng.bytes(kl);
            let o = Oracle::new(&key);
            let k = if n % 2 == 0 {
                expand(&key)
            } else {
                from_round_keys(crate::hazmat::portable_expand(&key).as_slice())
            };
            let pt = rng.bytes(16 * n);
            let mut want = pt.clone();
            want.chunks_exact_mut(16).for_each(|b| o.enc(b));
            let mut got = pt.clone();
            encrypt_blocks(&k, &mut got);
            assert_eq!(got, want, "encrypt key {kl} blocks {n}");
            let ct = rng.bytes(16 * n);
            let mut want = ct.clone();
            want.chunks_exact_mut(16).for_each(|b| o.dec(b));
            let mut got = ct.clone();
            decrypt_blocks(&k, &mut got);
            assert_eq!(got, want, "decrypt key {kl} blocks {n}");
        }
    }
}

#[test]
fn soft_cbc_matches_oracle() {
    let mut rng = Rng(3);
    for kl in [16, 24, 32] {
        for n in block_counts() {
            let key = rng.bytes(kl);
            let o = Oracle::new(&key);
            let k = expand(&key);
            let iv0: [u8; 16] = rng.bytes(16).try_into().unwrap();
            let pt = rng.bytes(16 * n);

            let mut want = pt.clone();
            let mut prev = iv0;
            for b in want.chunks_exact_mut(16) {
                b.iter_mut().zip(&prev).for_each(|(x, y)| *x ^= y);
                o.enc(b);
                prev.copy_from_slice(b);
            }
            let mut got = pt.clone();
            let mut iv = iv0;
            cbc_encrypt(&k, &mut iv, &mut got);
            assert_eq!(got, want, "cbc encrypt key {kl} blocks {n}");
            assert_eq!(iv, prev);

            let ct = want;
            let mut iv = iv0;
            let mut got = ct.clone();
            cbc_decrypt(&k, &mut iv, &mut got);
            assert_eq!(got, pt, "cbc decrypt key {kl} blocks {n}");
            assert_eq!(iv, prev);
        }
    }
}

#[test]
fn soft_ctr_matches_oracle() {
    let mut rng = Rng(4);
    let starts = [
        0u128,
        (1 << 32) - 1,
        (1 << 64) - 70,
        u128::MAX - 69,
        0x0123_4567_89ab_cdef,
    ];
    for kl in [16, 24, 32] {
        for n in block_counts() {
            for &ctr in &starts {
                let key = rng.bytes(kl);
                let o = Oracle::new(&key);
                let k = expand(&key);
                let data = rng.bytes(16 * n);
                let mut want = data.clone();
                for (i, b) in want.chunks_exact_mut(16).enumerate() {
                    let mut ks = ctr.wrapping_add(i as u128).to_be_bytes();
                    o.enc(&mut ks);
                    b.iter_mut().zip(&ks).for_each(|(x, y)| *x ^= y);
                }
                let mut got = data.clone();
                ctr_xor(&k, ctr, &mut got);
                assert_eq!(got, want, "ctr key {kl} blocks {n} ctr {ctr:#x}");
            }
        }
    }
}
