//! Portable constant-time AES (PLACEHOLDER, to be replaced by the bitsliced backend).
//!
//! The S-box is computed as the GF(2^8) inverse x^254 followed by the affine map, with
//! branch-free multiplications, so no table is indexed by secret data. Slow but simple.
#![forbid(unsafe_code)]

use zeroize::Zeroize;

pub(crate) struct Keys {
    rk: [[u8; 16]; 15],
    rounds: usize,
}

impl Drop for Keys {
    fn drop(&mut self) {
        self.rk.zeroize();
    }
}

fn gmul(mut a: u8, mut b: u8) -> u8 {
    let mut p = 0u8;
    for _ in 0..8 {
        p ^= a & 0u8.wrapping_sub(b & 1);
        let hi = 0u8.wrapping_sub(a >> 7);
        a = (a << 1) ^ (hi & 0x1b);
        b >>= 1;
    }
    p
}

fn sbox(x: u8) -> u8 {
    // x^254 = x^-1 (0 -> 0)
    let x2 = gmul(x, x);
    let x3 = gmul(x2, x);
    let x6 = gmul(x3, x3);
    let x12 = gmul(x6, x6);
    let x15 = gmul(x12, x3);
    let x30 = gmul(x15, x15);
    let x60 = gmul(x30, x30);
    let x120 = gmul(x60, x60);
    let x126 = gmul(x120, x6);
    let x252 = gmul(x126, x126);
    let inv = gmul(x252, x2);
    inv ^ inv.rotate_left(1) ^ inv.rotate_left(2) ^ inv.rotate_left(3) ^ inv.rotate_left(4) ^ 0x63
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
    let nk = key.len() / 4;
    let rounds = nk + 6;
    let mut w = [[0u8; 4]; 60];
    for i in 0..nk {
        w[i].copy_from_slice(&key[4 * i..4 * i + 4]);
    }
    let mut rcon = 1u8;
    for i in nk..4 * (rounds + 1) {
        let mut t = w[i - 1];
        if i % nk == 0 {
            t = [sbox(t[1]) ^ rcon, sbox(t[2]), sbox(t[3]), sbox(t[0])];
            rcon = gmul(rcon, 2);
        } else if nk > 6 && i % nk == 4 {
            t = t.map(sbox);
        }
        for j in 0..4 {
            w[i][j] = w[i - nk][j] ^ t[j];
        }
    }
    let mut rk = [[0u8; 16]; 15];
    for (r, k) in rk.iter_mut().enumerate().take(rounds + 1) {
        for c in 0..4 {
            k[4 * c..4 * c + 4].copy_from_slice(&w[4 * r + c]);
        }
    }
    w.zeroize();
    Keys { rk, rounds }
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
            s[4 * c + r] = gmul(a[r], 2) ^ gmul(a[(r + 1) % 4], 3) ^ a[(r + 2) % 4] ^ a[(r + 3) % 4];
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
