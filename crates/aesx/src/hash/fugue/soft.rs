//! Portable constant-time Fugue SMIX (no `unsafe`, no table indexed by data).
//!
//! The AES S-box is computed for 8 bytes at once in a `u64` (SWAR): the inverse as x^254 by
//! an addition chain of branch-free GF(2^8) multiplications, then the affine map. Slow, but
//! every operation is a fixed sequence of shifts, masks and XORs. The SuperMix is computed
//! from its definition with multiplications by the public constants 4 and 7.
#![forbid(unsafe_code)]

const LO: u64 = 0x0101_0101_0101_0101;
const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;

/// Multiplies each byte by x (mod the AES polynomial).
#[inline(always)]
fn xtime(x: u64) -> u64 {
    ((x & LOW7) << 1) ^ ((x >> 7) & LO).wrapping_mul(0x1b)
}

/// Bytewise GF(2^8) product of two SWAR words, branch-free.
#[inline(always)]
fn gmul(mut a: u64, b: u64) -> u64 {
    let mut p = 0;
    for i in 0..8 {
        p ^= a & ((b >> i) & LO).wrapping_mul(0xff);
        a = xtime(a);
    }
    p
}

#[inline(always)]
fn rotl(x: u64, k: u32) -> u64 {
    let hi = (0xffu64 << k) & 0xff;
    ((x << k) & (hi * LO)) | ((x >> (8 - k)) & ((!hi & 0xff) * LO))
}

/// The AES S-box on 8 bytes packed in a `u64`.
fn sbox8(x: u64) -> u64 {
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
    inv ^ rotl(inv, 1) ^ rotl(inv, 2) ^ rotl(inv, 3) ^ rotl(inv, 4) ^ (0x63 * LO)
}

#[inline(always)]
fn xt(b: u8) -> u8 {
    (b << 1) ^ (0x1b & 0u8.wrapping_sub(b >> 7))
}

/// Multiplies by one of the SuperMix coefficients 1, 4, 7 (public), branch-free in `b`.
#[inline(always)]
fn mulc(c: u8, b: u8) -> u8 {
    let b2 = xt(b);
    let b4 = xt(b2);
    match c {
        1 => b,
        4 => b4,
        _ => b4 ^ b2 ^ b,
    }
}

/// SMIX on columns `c[0..4]` (row 0 = most significant byte), in place.
pub(crate) fn smix(c: &mut [u32; 4]) {
    let mut bytes = [0u8; 16];
    for j in 0..4 {
        bytes[4 * j..4 * j + 4].copy_from_slice(&c[j].to_be_bytes());
    }
    let lo = sbox8(u64::from_le_bytes(bytes[..8].try_into().unwrap()));
    let hi = sbox8(u64::from_le_bytes(bytes[8..].try_into().unwrap()));
    bytes[..8].copy_from_slice(&lo.to_le_bytes());
    bytes[8..].copy_from_slice(&hi.to_le_bytes());
    // u[i][j]: row i of column j.
    let u = |i: usize, j: usize| bytes[4 * j + i];
    let mut out = [0u32; 4];
    for i in 0..4 {
        // d_i: the row sum without the diagonal element.
        let d = (0..4).filter(|&j| j != i).fold(0u8, |a, j| a ^ u(i, j));
        for (jo, col) in out.iter_mut().enumerate() {
            let m = (i + jo) % 4;
            let mut v = mulc(super::N[m][i], d);
            for k in 0..4 {
                v ^= mulc(super::N[i][k], u(k, m));
            }
            *col |= (v as u32) << (24 - 8 * i);
        }
    }
    *c = out;
}
