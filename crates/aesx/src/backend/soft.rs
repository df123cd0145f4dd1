//! Portable constant-time AES (PLACEHOLDER, to be replaced by the bitsliced backend).
//!
//! The S-box is computed as the GF(2^8) inverse x^254 followed by the affine map, with
//! branch-free multiplications, so no table is indexed by secret data. Slow but simple.
#![forbid(unsafe_code)]

use zeroize::Zeroize;

use crate::hazmat::{gmul, sbox};

pub(crate) struct Keys {
    rk: [[u8; 16]; 15],
    rounds: usize,
}

impl Drop for Keys {
    fn drop(&mut self) {
        self.rk.zeroize();
    }
}

fn inv_sbox(y: u8) -> u8 {
    let b = y.rotate_left(1) ^ y.rotate_left(3) ^ y.rotate_left(6) ^ 0x05;
    let x2 = gmul(b, b);
    let x3 = gmul(x2, b);
    let x6 = gmul(x3, x3);
    let x12 = gmul(x6, x6);
    let x15 = gmul(x12, x3);
    let x30 = gmul(x15, x15);
    let x60 = gmul(x30, x30);
    let x120 = gmul(x60, x60);
    let x126 = gmul(x120, x6);
    let x252 = gmul(x126, x126);
    gmul(x252, x2)
}

pub(crate) fn expand(key: &[u8]) -> Keys {
    let rk = crate::hazmat::portable_expand(key);
    from_round_keys(rk.as_slice())
}

pub(crate) fn from_round_keys(enc: &[[u8; 16]]) -> Keys {
    let mut rk = [[0u8; 16]; 15];
    rk[..enc.len()].copy_from_slice(enc);
    Keys {
        rk,
        rounds: enc.len() - 1,
    }
}

fn add(s: &mut [u8; 16], k: &[u8; 16]) {
    for i in 0..16 {
        s[i] ^= k[i];
    }
}

fn sub_shift(s: &mut [u8; 16]) {
    let t = *s;
    for c in 0..4 {
        for r in 0..4 {
            s[4 * c + r] = sbox(t[4 * ((c + r) % 4) + r]);
        }
    }
}

fn inv_sub_shift(s: &mut [u8; 16]) {
    let t = *s;
    for c in 0..4 {
        for r in 0..4 {
            s[4 * ((c + r) % 4) + r] = inv_sbox(t[4 * c + r]);
        }
    }
}

fn mix(s: &mut [u8; 16]) {
    for c in 0..4 {
        let a = [s[4 * c], s[4 * c + 1], s[4 * c + 2], s[4 * c + 3]];
        for r in 0..4 {
            s[4 * c + r] =
                gmul(a[r], 2) ^ gmul(a[(r + 1) % 4], 3) ^ a[(r + 2) % 4] ^ a[(r + 3) % 4];
        }
    }
}

fn inv_mix(s: &mut [u8; 16]) {
    for c in 0..4 {
        let a = [s[4 * c], s[4 * c + 1], s[4 * c + 2], s[4 * c + 3]];
        for r in 0..4 {
            s[4 * c + r] = gmul(a[r], 14)
                ^ gmul(a[(r + 1) % 4], 11)
                ^ gmul(a[(r + 2) % 4], 13)
                ^ gmul(a[(r + 3) % 4], 9);
        }
    }
}

fn enc1(k: &Keys, b: &mut [u8; 16]) {
    add(b, &k.rk[0]);
    for r in 1..k.rounds {
        sub_shift(b);
        mix(b);
        add(b, &k.rk[r]);
    }
    sub_shift(b);
    add(b, &k.rk[k.rounds]);
}

fn dec1(k: &Keys, b: &mut [u8; 16]) {
    add(b, &k.rk[k.rounds]);
    for r in (1..k.rounds).rev() {
        inv_sub_shift(b);
        add(b, &k.rk[r]);
        inv_mix(b);
    }
    inv_sub_shift(b);
    add(b, &k.rk[0]);
}

fn blocks(buf: &mut [u8]) -> impl Iterator<Item = &mut [u8; 16]> {
    buf.chunks_exact_mut(16).map(|c| c.try_into().unwrap())
}

pub(crate) fn encrypt_blocks(k: &Keys, buf: &mut [u8]) {
    blocks(buf).for_each(|b| enc1(k, b));
}

pub(crate) fn decrypt_blocks(k: &Keys, buf: &mut [u8]) {
    blocks(buf).for_each(|b| dec1(k, b));
}

pub(crate) fn cbc_encrypt(k: &Keys, iv: &mut [u8; 16], buf: &mut [u8]) {
    for b in blocks(buf) {
        add(b, iv);
        enc1(k, b);
        *iv = *b;
    }
}

pub(crate) fn cbc_decrypt(k: &Keys, iv: &mut [u8; 16], buf: &mut [u8]) {
    for b in blocks(buf) {
        let c = *b;
        dec1(k, b);
        add(b, iv);
        *iv = c;
    }
}

pub(crate) fn ctr_xor(k: &Keys, ctr: u128, buf: &mut [u8]) {
    for (i, b) in blocks(buf).enumerate() {
        let mut ks = ctr.wrapping_add(i as u128).to_be_bytes();
        enc1(k, &mut ks);
        add(b, &ks);
    }
}
