//! Portable constant-time AES: fixsliced and bitsliced, 4 blocks per `u64` word, up to 16
//! blocks per batch.
//!
//! Sources (facts and techniques; the code is written from scratch):
//! - Encryption S-box: the 113-gate circuit of J. Boyar, P. Matthews and R. Peralta, "Logic
//!   minimization techniques with applications to cryptology", J. Cryptology 26(2), 2013
//!   (circuit listings on Peralta's "Circuit Minimization Team" pages).
//! - Decryption S-box: the inverse circuit accompanying J. Boyar and R. Peralta, "A depth-16
//!   circuit for the AES S-box", IFIP SEC 2012 (IACR ePrint 2011/332).
//! - Fixslicing: A. Adomnicai and T. Peyrin, "Fixslicing AES-like Ciphers: New bitsliced AES
//!   speed records on ARM-Cortex M and RISC-V", IACR TCHES 2021(1). ShiftRows is never
//!   computed on the data; each round's MixColumns is conjugated by the ShiftRows power the
//!   state has reached, and the round keys are stored pre-shifted to match.
//! - Bitsliced MixColumns as `t = a ^ rot(a)`, `MC(a) = 2t ^ rot(a) ^ rot2(t)`, and
//!   InvMixColumns as MixColumns after `a ^ 4(a ^ rot2(a))` (the factorisation
//!   `{0e,0b,0d,09} = {02,03,01,01} x {05,00,04,00}`; see e.g. Käsper and Schwabe, "Faster and
//!   Timing-Attack Resistant AES-GCM", CHES 2009).
//!
//! ## Representation
//!
//! A batch is 8 bit planes; plane `p` holds bit `p` of every byte of every block. One `u64`
//! word of a plane covers 4 blocks ("a lane"): bit `16 r + 4 c + b` is row `r`, column `c`,
//! block `b`. "The byte k rows down" is then a rotation of the word by 16k, and "the byte m
//! columns right" a rotation by 4m inside each 16-bit row.
//!
//! IMPLEMENTATION NOTE (vectorisation): every operation is the same on every lane, and each
//! round is written as a loop over the lanes of a batch (`for i in 0..N`) whose body is
//! scalar `u64` code. LLVM's loop vectoriser turns that loop into SSE2 (or NEON, AVX2...)
//! code with 2+ lanes per register; no `core::arch` is needed and the code stays portable
//! (on a target without SIMD it runs as plain 64-bit bitslicing). Measured alternatives
//! (CTR-128, 16 KiB, this Zen 4 VM, baseline x86-64): 8-block `[u32; 4]` lanes left to the
//! SLP vectoriser came out scalar with heavy spilling, about 100 MB/s; this layout with
//! 16-block batches gives about 440 MB/s; 32-block batches measured the same.
//!
//! Speed on the Zen 4 VM, 16 KiB buffers, best of 500 interleaved trials, built with
//! `RUSTFLAGS='--cfg aes_backend="soft"'` so that the RustCrypto peer (`aes` 0.9 + `ctr` 0.10)
//! also runs its software (fixslice64) backend: CTR-128 440 MB/s (RustCrypto 215 MB/s),
//! CTR-256 345 MB/s, ECB-128 encrypt 470 MB/s, decrypt 420 MB/s, CBC-128 encrypt 72 MB/s
//! (serial, see [`cbc_encrypt`]); AES-128 key setup 365 ns (RustCrypto soft 397 ns).
//!
//! Constant time: bitwise logic, fixed shifts and rotations only; loop bounds and branches
//! depend only on lengths and the round count; no memory index depends on key or data.
#![forbid(unsafe_code)]
// Index loops over planes and lanes are the point here: they are what the vectoriser sees.
#![allow(clippy::needless_range_loop)]

use core::ops::{BitAnd, BitXor};

use zeroize::Zeroize;

#[cfg(test)]
mod tests;

/// Lanes (u64 words, 4 blocks each) in the widest batch.
const MAX_LANES: usize = 4;

/// A batch of `4 N` blocks: `s[p][i]` is plane `p` of lane `i` (blocks `4i..4i+4`).
type Planes<const N: usize> = [[u64; N]; 8];

/// One round key, bitsliced and broadcast to the 4 blocks of a lane (the vectorised loops
/// broadcast it across lanes).
type KeyPlanes = [u64; 8];

// ---------------------------------------------------------------------------------------------
// Bitslicing one lane: 4 blocks (64 bytes) <-> 8 plane words.

/// Moves the 4 bytes of `w` to the even bytes of a u64.
#[inline(always)]
fn spread(w: u32) -> u64 {
    let t = w as u64;
    let t = (t | (t << 16)) & 0x0000_ffff_0000_ffff;
    (t | (t << 8)) & 0x00ff_00ff_00ff_00ff
}

/// Inverse of `spread` (odd bytes ignored).
#[inline(always)]
fn compact(t: u64) -> u32 {
    let t = t & 0x00ff_00ff_00ff_00ff;
    let t = (t | (t >> 8)) & 0x0000_ffff_0000_ffff;
    (t | (t >> 16)) as u32
}

#[inline(always)]
fn swapmove(x: &mut [u64; 8], i: usize, j: usize, m: u64, sh: u32) {
    let t = ((x[i] >> sh) ^ x[j]) & m;
    x[j] ^= t;
    x[i] ^= t << sh;
}

/// 8x8 bit transpose at each byte position across the 8 words (an involution): afterwards
/// bit `j` of byte `k` of word `p` is what bit `p` of byte `k` of word `j` was.
#[inline(always)]
fn transpose(x: &mut [u64; 8]) {
    for i in [0, 2, 4, 6] {
        swapmove(x, i, i + 1, 0x5555_5555_5555_5555, 1);
    }
    for i in [0, 1, 4, 5] {
        swapmove(x, i, i + 2, 0x3333_3333_3333_3333, 2);
    }
    for i in [0, 1, 2, 3] {
        swapmove(x, i, i + 4, 0x0f0f_0f0f_0f0f_0f0f, 4);
    }
}

#[inline(always)]
fn col(data: &[u8], b: usize, c: usize) -> u32 {
    u32::from_le_bytes(data[16 * b + 4 * c..16 * b + 4 * c + 4].try_into().unwrap())
}

/// Column `c` of the big-endian counter block `ctr` as a little-endian word.
#[inline(always)]
fn ctr_col(ctr: u128, c: usize) -> u32 {
    ((ctr >> (96 - 32 * c)) as u32).swap_bytes()
}

/// 4 blocks to plane words, for the blocks whose column words are `col(block, column)`.
#[inline(always)]
fn pack_cols(col: impl Fn(usize, usize) -> u32) -> [u64; 8] {
    let mut x = interleave_cols(col);
    transpose(&mut x);
    x
}

/// The words `pack_cols` transposes: word `4q + b` holds block `b`'s bytes (r, q) and
/// (r, q + 2) at byte positions 2r and 2r + 1, so that after the transpose plane bit
/// `8 (2r + c/2) + 4 (c%2) + b`, which is `16 r + 4 c + b`, is byte (r, c) of block b.
#[inline(always)]
fn interleave_cols(col: impl Fn(usize, usize) -> u32) -> [u64; 8] {
    let mut x = [0u64; 8];
    for b in 0..4 {
        x[b] = spread(col(b, 0)) | (spread(col(b, 2)) << 8);
        x[4 + b] = spread(col(b, 1)) | (spread(col(b, 3)) << 8);
    }
    x
}

/// Transposes every lane of a batch: a separate loop over the lanes, so that it vectorises
/// like the rounds (the byte shuffling around it does not).
#[inline(always)]
fn transpose_all<const N: usize>(s: &mut Planes<N>) {
    for i in 0..N {
        let mut x = load(s, i);
        transpose(&mut x);
        for p in 0..8 {
            s[p][i] = x[p];
        }
    }
}

/// Transposed plane words (see `transpose_all`) to 4 blocks, stored into `data`, or XORed
/// into it if `XOR`.
#[inline(always)]
fn unpack_lane<const XOR: bool>(x: [u64; 8], data: &mut [u8]) {
    for b in 0..4 {
        let w = [
            compact(x[b]),
            compact(x[4 + b]),
            compact(x[b] >> 8),
            compact(x[4 + b] >> 8),
        ];
        for (c, w) in w.iter().enumerate() {
            let d = &mut data[16 * b + 4 * c..16 * b + 4 * c + 4];
            let v = if XOR {
                w ^ u32::from_le_bytes(d.try_into().unwrap())
            } else {
                *w
            };
            d.copy_from_slice(&v.to_le_bytes());
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Round functions on one lane; `x[p]` is plane p (p = 0 the least significant bit).

/// G(x) = L * x^254, i.e. the S-box without its constant 0x63: the 113-gate circuit of Boyar,
/// Matthews and Peralta ("Logic minimization techniques with applications to cryptology",
/// J. Cryptology 2013; 32 AND, 81 XOR) with its four XNORs turned into XORs.
///
/// IMPLEMENTATION NOTE: the dropped constant 0x63 is XORed into round keys 1..=rounds
/// instead. MixColumns (and its conjugates) maps a state whose bytes are all 0x63 to itself
/// (2 ^ 3 ^ 1 ^ 1 = 1), so adding it after MixColumns is the same as adding it before.
#[inline(always)]
fn sbox_core<T: Copy + BitXor<Output = T> + BitAnd<Output = T>>(s: &mut [T; 8]) {
    // Circuit inputs U0..U7 are bits 7..0; outputs S0..S7 are bits 7..0.
    let (u0, u1, u2, u3, u4, u5, u6, u7) = (s[7], s[6], s[5], s[4], s[3], s[2], s[1], s[0]);
    // Top linear layer.
    let y14 = u3 ^ u5;
    let y13 = u0 ^ u6;
    let y9 = u0 ^ u3;
    let y8 = u0 ^ u5;
    let t0 = u1 ^ u2;
    let y1 = t0 ^ u7;
    let y4 = y1 ^ u3;
    let y12 = y13 ^ y14;
    let y2 = y1 ^ u0;
    let y5 = y1 ^ u6;
    let y3 = y5 ^ y8;
    let t1 = u4 ^ y12;
    let y15 = t1 ^ u5;
    let y20 = t1 ^ u1;
    let y6 = y15 ^ u7;
    let y10 = y15 ^ t0;
    let y11 = y20 ^ y9;
    let y7 = u7 ^ y11;
    let y17 = y10 ^ y11;
    let y19 = y10 ^ y8;
    let y16 = t0 ^ y11;
    let y21 = y13 ^ y16;
    let y18 = u0 ^ y16;
    // Non-linear middle: inversion through the tower field GF(((2^2)^2)^2).
    let t2 = y12 & y15;
    let t3 = y3 & y6;
    let t4 = t3 ^ t2;
    let t5 = y4 & u7;
    let t6 = t5 ^ t2;
    let t7 = y13 & y16;
    let t8 = y5 & y1;
    let t9 = t8 ^ t7;
    let t10 = y2 & y7;
    let t11 = t10 ^ t7;
    let t12 = y9 & y11;
    let t13 = y14 & y17;
    let t14 = t13 ^ t12;
    let t15 = y8 & y10;
    let t16 = t15 ^ t12;
    let t17 = t4 ^ y20;
    let t18 = t6 ^ t16;
    let t19 = t9 ^ t14;
    let t20 = t11 ^ t16;
    let t21 = t17 ^ t14;
    let t22 = t18 ^ y19;
    let t23 = t19 ^ y21;
    let t24 = t20 ^ y18;
    let t25 = t21 ^ t22;
    let t26 = t21 & t23;
    let t27 = t24 ^ t26;
    let t28 = t25 & t27;
    let t29 = t28 ^ t22;
    let t30 = t23 ^ t24;
    let t31 = t22 ^ t26;
    let t32 = t31 & t30;
    let t33 = t32 ^ t24;
    let t34 = t23 ^ t33;
    let t35 = t27 ^ t33;
    let t36 = t24 & t35;
    let t37 = t36 ^ t34;
    let t38 = t27 ^ t36;
    let t39 = t29 & t38;
    let t40 = t25 ^ t39;
    let t41 = t40 ^ t37;
    let t42 = t29 ^ t33;
    let t43 = t29 ^ t40;
    let t44 = t33 ^ t37;
    let t45 = t42 ^ t41;
    // Output multiplications.
    let z0 = t44 & y15;
    let z1 = t37 & y6;
    let z2 = t33 & u7;
    let z3 = t43 & y16;
    let z4 = t40 & y1;
    let z5 = t29 & y7;
    let z6 = t42 & y11;
    let z7 = t45 & y17;
    let z8 = t41 & y10;
    let z9 = t44 & y12;
    let z10 = t37 & y3;
    let z11 = t33 & y4;
    let z12 = t43 & y13;
    let z13 = t40 & y5;
    let z14 = t29 & y2;
    let z15 = t42 & y9;
    let z16 = t45 & y14;
    let z17 = t41 & y8;
    // Bottom linear layer (includes the affine matrix).
    let tc1 = z15 ^ z16;
    let tc2 = z10 ^ tc1;
    let tc3 = z9 ^ tc2;
    let tc4 = z0 ^ z2;
    let tc5 = z1 ^ z0;
    let tc6 = z3 ^ z4;
    let tc7 = z12 ^ tc4;
    let tc8 = z7 ^ tc6;
    let tc9 = z8 ^ tc7;
    let tc10 = tc8 ^ tc9;
    let tc11 = tc6 ^ tc5;
    let tc12 = z3 ^ z5;
    let tc13 = z13 ^ tc1;
    let tc14 = tc4 ^ tc12;
    let s3 = tc3 ^ tc11;
    let tc16 = z6 ^ tc8;
    let tc17 = z14 ^ tc10;
    let tc18 = tc13 ^ tc14;
    let s7 = z12 ^ tc18;
    let tc20 = z15 ^ tc16;
    let tc21 = tc2 ^ z11;
    let s0 = tc3 ^ tc16;
    let s6 = tc10 ^ tc18;
    let s4 = tc14 ^ s3;
    let s1 = s3 ^ tc16;
    let tc26 = tc17 ^ tc20;
    let s2 = tc26 ^ z17;
    let s5 = tc21 ^ tc17;
    s[7] = s0;
    s[6] = s1;
    s[5] = s2;
    s[4] = s3;
    s[3] = s4;
    s[2] = s5;
    s[1] = s6;
    s[0] = s7;
}

/// S^-1(x) given `x ^ 0x63` (which is what the state holds: the constant comes from the round
/// keys, as in `sbox_core`): the inverse circuit published with the depth-16 S-box of Boyar
/// and Peralta ("A depth-16 circuit for the AES S-box", IFIP SEC 2012, ePrint 2011/332;
/// 32 AND, 95 XOR).
///
/// IMPLEMENTATION NOTE: as published, that circuit takes x and has ten NOT gates in its top
/// layer; fed with x ^ 0x63 instead, it needs none (checked exhaustively by the unit tests).
#[inline(always)]
fn inv_sbox_core<T: Copy + BitXor<Output = T> + BitAnd<Output = T>>(s: &mut [T; 8]) {
    // Circuit inputs U0..U7 and outputs W0..W7 are bits 0..7.
    let (u0, u1, u2, u3, u4, u5, u6, u7) = (s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]);
    // Top linear layer (includes the inverse affine matrix).
    let t23 = u7 ^ u4;
    let t22 = u6 ^ u4;
    let t2 = u7 ^ u6;
    let t1 = u4 ^ u3;
    let t24 = u3 ^ u0;
    let r5 = u1 ^ u0;
    let t8 = u6 ^ t23;
    let t19 = t22 ^ r5;
    let t9 = u0 ^ t1;
    let t10 = t2 ^ t24;
    let t13 = t2 ^ r5;
    let t3 = t1 ^ r5;
    let t25 = u5 ^ t1;
    let r13 = u6 ^ u1;
    let t17 = u5 ^ t19;
    let t20 = t24 ^ r13;
    let t4 = u3 ^ t8;
    let r17 = u5 ^ u2;
    let r18 = u2 ^ u1;
    let r19 = u5 ^ u3;
    let y5 = u7 ^ r17;
    let t6 = t22 ^ r17;
    let t16 = r13 ^ r19;
    let t27 = t1 ^ r18;
    let t15 = t10 ^ t27;
    let t14 = t10 ^ r18;
    let t26 = t3 ^ t16;
    // Non-linear middle (shared with the depth-16 forward circuit).
    let m1 = t13 & t6;
    let m2 = t23 & t8;
    let m3 = t14 ^ m1;
    let m4 = t19 & y5;
    let m5 = m4 ^ m1;
    let m6 = t3 & t16;
    let m7 = t22 & t9;
    let m8 = t26 ^ m6;
    let m9 = t20 & t17;
    let m10 = m9 ^ m6;
    let m11 = t1 & t15;
    let m12 = t4 & t27;
    let m13 = m12 ^ m11;
    let m14 = t2 & t10;
    let m15 = m14 ^ m11;
    let m16 = m3 ^ m2;
    let m17 = m5 ^ t24;
    let m18 = m8 ^ m7;
    let m19 = m10 ^ m15;
    let m20 = m16 ^ m13;
    let m21 = m17 ^ m15;
    let m22 = m18 ^ m13;
    let m23 = m19 ^ t25;
    let m24 = m22 ^ m23;
    let m25 = m22 & m20;
    let m26 = m21 ^ m25;
    let m27 = m20 ^ m21;
    let m28 = m23 ^ m25;
    let m29 = m28 & m27;
    let m30 = m26 & m24;
    let m31 = m20 & m23;
    let m32 = m27 & m31;
    let m33 = m27 ^ m25;
    let m34 = m21 & m22;
    let m35 = m24 & m34;
    let m36 = m24 ^ m25;
    let m37 = m21 ^ m29;
    let m38 = m32 ^ m33;
    let m39 = m23 ^ m30;
    let m40 = m35 ^ m36;
    let m41 = m38 ^ m40;
    let m42 = m37 ^ m39;
    let m43 = m37 ^ m38;
    let m44 = m39 ^ m40;
    let m45 = m42 ^ m41;
    let m46 = m44 & t6;
    let m47 = m40 & t8;
    let m48 = m39 & y5;
    let m49 = m43 & t16;
    let m50 = m38 & t9;
    let m51 = m37 & t17;
    let m52 = m42 & t15;
    let m53 = m45 & t27;
    let m54 = m41 & t10;
    let m55 = m44 & t13;
    let m56 = m40 & t23;
    let m57 = m39 & t19;
    let m58 = m43 & t3;
    let m59 = m38 & t22;
    let m60 = m37 & t20;
    let m61 = m42 & t1;
    let m62 = m45 & t4;
    let m63 = m41 & t2;
    // Bottom linear layer.
    let p0 = m52 ^ m61;
    let p1 = m58 ^ m59;
    let p2 = m54 ^ m62;
    let p3 = m47 ^ m50;
    let p4 = m48 ^ m56;
    let p5 = m46 ^ m51;
    let p6 = m49 ^ m60;
    let p7 = p0 ^ p1;
    let p8 = m50 ^ m53;
    let p9 = m55 ^ m63;
    let p10 = m57 ^ p4;
    let p11 = p0 ^ p3;
    let p12 = m46 ^ m48;
    let p13 = m49 ^ m51;
    let p14 = m49 ^ m62;
    let p15 = m54 ^ m59;
    let p16 = m57 ^ m61;
    let p17 = m58 ^ p2;
    let p18 = m63 ^ p5;
    let p19 = p2 ^ p3;
    let p20 = p4 ^ p6;
    let p22 = p2 ^ p7;
    let p23 = p7 ^ p8;
    let p24 = p5 ^ p7;
    let p25 = p6 ^ p10;
    let p26 = p9 ^ p11;
    let p27 = p10 ^ p18;
    let p28 = p11 ^ p25;
    let p29 = p15 ^ p20;
    let w7 = p13 ^ p22;
    let w6 = p26 ^ p29;
    let w5 = p17 ^ p28;
    let w4 = p12 ^ p22;
    let w3 = p23 ^ p27;
    let w2 = p19 ^ p24;
    let w1 = p14 ^ p23;
    let w0 = p9 ^ p16;
    s[0] = w0;
    s[1] = w1;
    s[2] = w2;
    s[3] = w3;
    s[4] = w4;
    s[5] = w5;
    s[6] = w6;
    s[7] = w7;
}

/// `sigma(k, m)`: the byte at (row r, column c) becomes the byte that was at (r + k, c + m).
#[inline(always)]
fn sigma(x: u64, k: u32, m: u32) -> u64 {
    let x = if m == 0 {
        x
    } else {
        // Rotate each 16-bit row right by 4m bits.
        let lo = 0x0001_0001_0001_0001u64 * ((1u64 << (16 - 4 * m)) - 1);
        ((x >> (4 * m)) & lo) | ((x << (16 - 4 * m)) & !lo)
    };
    x.rotate_right(16 * k)
}

/// ShiftRows squared: rows 1 and 3 move by two columns (an involution).
#[inline(always)]
fn shift_rows2(x: u64) -> u64 {
    const ROWS13: u64 = 0xffff_0000_ffff_0000;
    let swapped = ((x >> 8) & 0x00ff_00ff_00ff_00ff) | ((x << 8) & 0xff00_ff00_ff00_ff00);
    (x & !ROWS13) | (swapped & ROWS13)
}

/// Multiplication by x (0x02) in GF(2^8), on bit planes.
#[inline(always)]
fn xtime(t: &[u64; 8]) -> [u64; 8] {
    [
        t[7],
        t[0] ^ t[7],
        t[1],
        t[2] ^ t[7],
        t[3] ^ t[7],
        t[4],
        t[5],
        t[6],
    ]
}

/// MixColumns conjugated by ShiftRows^j: `MC_j = SR^-j . MC . SR^j`.
///
/// MixColumns mixes each byte with the bytes 1, 2 and 3 rows below it; conjugated, the byte
/// k rows below also sits k*j columns to the right.
#[inline(always)]
fn mix_columns<const J: u32>(a: &mut [u64; 8]) {
    let r1: [u64; 8] = core::array::from_fn(|p| sigma(a[p], 1, J));
    let t: [u64; 8] = core::array::from_fn(|p| a[p] ^ r1[p]);
    let x = xtime(&t);
    for p in 0..8 {
        a[p] = x[p] ^ r1[p] ^ sigma(t[p], 2, (2 * J) % 4);
    }
}

/// InvMixColumns conjugated by ShiftRows^j: MC_j(a ^ 4 (a ^ rot2(a))).
#[inline(always)]
fn inv_mix_columns<const J: u32>(a: &mut [u64; 8]) {
    let u: [u64; 8] = core::array::from_fn(|p| a[p] ^ sigma(a[p], 2, (2 * J) % 4));
    // 4u = xtime(xtime(u)).
    let w = [
        u[6],
        u[6] ^ u[7],
        u[0] ^ u[7],
        u[1] ^ u[6],
        u[2] ^ u[6] ^ u[7],
        u[3] ^ u[7],
        u[4],
        u[5],
    ];
    for p in 0..8 {
        a[p] ^= w[p];
    }
    mix_columns::<J>(a);
}

// ---------------------------------------------------------------------------------------------
// Rounds on a batch: one loop over the lanes each (see the vectorisation note above).

#[inline(always)]
fn load<const N: usize>(s: &Planes<N>, i: usize) -> [u64; 8] {
    core::array::from_fn(|p| s[p][i])
}

#[inline(always)]
fn add_key<const N: usize>(s: &mut Planes<N>, k: &KeyPlanes) {
    for i in 0..N {
        for p in 0..8 {
            s[p][i] ^= k[p];
        }
    }
}

#[inline(always)]
fn enc_round<const N: usize, const J: u32>(s: &mut Planes<N>, k: &KeyPlanes) {
    for i in 0..N {
        let mut x = load(s, i);
        sbox_core(&mut x);
        mix_columns::<J>(&mut x);
        for p in 0..8 {
            s[p][i] = x[p] ^ k[p];
        }
    }
}

#[inline(always)]
fn enc_last<const N: usize>(s: &mut Planes<N>, k: &KeyPlanes, shift2: bool) {
    for i in 0..N {
        let mut x = load(s, i);
        sbox_core(&mut x);
        for p in 0..8 {
            let y = x[p] ^ k[p];
            s[p][i] = if shift2 { shift_rows2(y) } else { y };
        }
    }
}

#[inline(always)]
fn dec_round<const N: usize, const J: u32>(s: &mut Planes<N>, k: &KeyPlanes) {
    for i in 0..N {
        let mut x = load(s, i);
        inv_sbox_core(&mut x);
        for p in 0..8 {
            x[p] ^= k[p];
        }
        inv_mix_columns::<J>(&mut x);
        for p in 0..8 {
            s[p][i] = x[p];
        }
    }
}

#[inline(always)]
fn dec_first<const N: usize>(s: &mut Planes<N>, k: &KeyPlanes, shift2: bool) {
    for i in 0..N {
        for p in 0..8 {
            let y = if shift2 {
                shift_rows2(s[p][i])
            } else {
                s[p][i]
            };
            s[p][i] = y ^ k[p];
        }
    }
}

#[inline(always)]
fn dec_last<const N: usize>(s: &mut Planes<N>, k: &KeyPlanes) {
    for i in 0..N {
        let mut x = load(s, i);
        inv_sbox_core(&mut x);
        for p in 0..8 {
            s[p][i] = x[p] ^ k[p];
        }
    }
}

/// Encryption, fixsliced: after round i the true state is SR^i(s), so round i uses MC_(i mod 4)
/// and `rk[i]` = SR^-i(K_i). The output is SR^rounds(s); SR^4 is the identity, so that is
/// nothing for AES-192 and SR^2 for AES-128/256 (folded into the last round).
#[inline(always)]
fn encrypt_core<const N: usize>(k: &Keys, s: &mut Planes<N>) {
    add_key(s, &k.rk[0]);
    for i in 1..k.rounds {
        let rk = &k.rk[i];
        match i % 4 {
            0 => enc_round::<N, 0>(s, rk),
            1 => enc_round::<N, 1>(s, rk),
            2 => enc_round::<N, 2>(s, rk),
            _ => enc_round::<N, 3>(s, rk),
        }
    }
    enc_last(s, &k.rk[k.rounds], !k.rounds.is_multiple_of(4));
}

/// Decryption (FIPS-197 InvCipher order), fixsliced: the input is first put in the
/// SR^-rounds representation, so after the round that adds K_i the true state is SR^i(s). It
/// uses the same pre-shifted `rk[i]` as encryption and InvMC conjugated by SR^i, and the
/// output needs no fix-up.
#[inline(always)]
fn decrypt_core<const N: usize>(k: &Keys, s: &mut Planes<N>) {
    let n = k.rounds;
    dec_first(s, &k.rk[n], !n.is_multiple_of(4));
    for i in (1..n).rev() {
        let rk = &k.rk[i];
        match i % 4 {
            0 => dec_round::<N, 0>(s, rk),
            1 => dec_round::<N, 1>(s, rk),
            2 => dec_round::<N, 2>(s, rk),
            _ => dec_round::<N, 3>(s, rk),
        }
    }
    dec_last(s, &k.rk[0]);
}

#[inline(always)]
fn pack<const N: usize>(data: &[u8]) -> Planes<N> {
    let mut s = [[0u64; N]; 8];
    for i in 0..N {
        let lane = &data[64 * i..64 * i + 64];
        let x = interleave_cols(|b, c| col(lane, b, c));
        for p in 0..8 {
            s[p][i] = x[p];
        }
    }
    transpose_all(&mut s);
    s
}

#[inline(always)]
fn unpack<const N: usize, const XOR: bool>(s: &mut Planes<N>, data: &mut [u8]) {
    transpose_all(s);
    for i in 0..N {
        unpack_lane::<XOR>(load(s, i), &mut data[64 * i..64 * i + 64]);
    }
}

/// Encrypts the `4 N` blocks in `data` (exactly `64 N` bytes) in place.
#[inline(never)]
fn encrypt_batch<const N: usize>(k: &Keys, data: &mut [u8]) {
    let mut s = pack::<N>(data);
    encrypt_core(k, &mut s);
    unpack::<N, false>(&mut s, data);
    s.zeroize();
}

/// XORs E(ctr), E(ctr + 1), ..., E(ctr + 4N - 1) into `data` (exactly `64 N` bytes).
#[inline(never)]
fn ctr_batch<const N: usize>(k: &Keys, ctr: u128, data: &mut [u8]) {
    let mut s = [[0u64; N]; 8];
    for i in 0..N {
        let x = interleave_cols(|b, c| ctr_col(ctr.wrapping_add((4 * i + b) as u128), c));
        for p in 0..8 {
            s[p][i] = x[p];
        }
    }
    transpose_all(&mut s);
    encrypt_core(k, &mut s);
    unpack::<N, true>(&mut s, data);
    s.zeroize();
}

#[inline(never)]
fn decrypt_batch<const N: usize>(k: &Keys, data: &mut [u8]) {
    let mut s = pack::<N>(data);
    decrypt_core(k, &mut s);
    unpack::<N, false>(&mut s, data);
    s.zeroize();
}

// ---------------------------------------------------------------------------------------------
// Key schedule.

/// Round keys: `rk[i]` = SR^-i(K_i ^ c_i), bitsliced and broadcast to all blocks and lanes,
/// with c_0 = 0 and c_i = 0x63 in every byte for i >= 1 (see `sbox_core`). Encryption and
/// decryption use the same `rk[i]` (see [`decrypt_core`]).
pub(crate) struct Keys {
    rk: [KeyPlanes; 15],
    rounds: usize,
}

impl Keys {
    /// 10, 12 or 14 (0 for a placeholder).
    pub(crate) fn rounds(&self) -> usize {
        self.rounds
    }

    /// An all-zero schedule: a cheap placeholder to [`expand_into`].
    pub(crate) const ZERO: Keys = Keys {
        rk: [[0; 8]; 15],
        rounds: 10,
    };
}

impl Drop for Keys {
    fn drop(&mut self) {
        self.rk.zeroize();
    }
}

/// Fills `k.rk` from FIPS-197 round keys given as little-endian column words `w[4i + c]`.
///
/// IMPLEMENTATION NOTE: four round keys at a time go through the data bitslicing (`pack_cols`)
/// as the four blocks of one lane; each key's bit is then broadcast to its lane's 4 block bits.
fn slice_keys(w: &[u32], k: &mut Keys) {
    for g in (0..=k.rounds).step_by(4) {
        slice_group(w, k, g);
    }
}

/// `slice_keys` for round keys `g..g + 4` (those that exist); `g` is a multiple of 4.
#[inline(always)]
fn slice_group(w: &[u32], k: &mut Keys, g: usize) {
    debug_assert!(g.is_multiple_of(4));
    let count = (k.rounds + 1 - g).min(4);
    let mut x = pack_cols(|b, col| {
        let i = g + b;
        if b >= count {
            return 0;
        }
        let c = if i == 0 { 0 } else { 0x6363_6363 };
        let kw = &w[4 * i..4 * i + 4];
        // SR^-i: the byte at (r, col) comes from (r, col - i r); row r is byte r of a word.
        // `g` is a multiple of 4, so i = b (mod 4): a constant once the loop over b unrolls.
        let sh = b;
        let mut v = 0u32;
        for r in 0..4 {
            v |= kw[(col + 4 * 4 - sh * r) % 4] & (0xff << (8 * r));
        }
        v ^ c
    });
    for b in 0..count {
        for p in 0..8 {
            let bits = (x[p] >> b) & 0x1111_1111_1111_1111;
            k.rk[g + b][p] = bits.wrapping_mul(0xf); // no debug overflow check: a branch on key bits
        }
    }
    x.zeroize();
}

#[cfg(test)]
pub(crate) fn from_round_keys(enc: &[[u8; 16]]) -> Keys {
    let mut k = Keys::ZERO;
    from_round_keys_into(enc, &mut k);
    k
}

/// The schedule from standard (FIPS-197) round keys, written into `k` where it lives.
pub(crate) fn from_round_keys_into(enc: &[[u8; 16]], k: &mut Keys) {
    k.rounds = enc.len() - 1;
    let mut w = [0u32; 60];
    for (i, key) in enc.iter().enumerate() {
        for c in 0..4 {
            w[4 * i + c] = u32::from_le_bytes(key[4 * c..4 * c + 4].try_into().unwrap());
        }
    }
    slice_keys(&w, k);
    w.zeroize();
}

/// SubWord on a little-endian word: the S-box circuit on 4 bytes at once, each plane holding
/// one bit per byte (in bit 0 of each byte).
fn sub_word(w: u32) -> u32 {
    let mut p: [u32; 8] = core::array::from_fn(|i| (w >> i) & 0x0101_0101);
    sbox_core(&mut p);
    let mut out = 0x6363_6363;
    for (i, x) in p.iter().enumerate() {
        out ^= x << i;
    }
    out
}

/// FIPS-197 key expansion with a bitsliced (constant-time) SubWord.
#[cfg(test)]
pub(crate) fn expand(key: &[u8]) -> Keys {
    let mut k = Keys::ZERO;
    expand_into(key, &mut k);
    k
}

/// [`expand`] writing into an existing schedule (no move of the 968-byte result).
pub(crate) fn expand_into(key: &[u8], k: &mut Keys) {
    let nk = key.len() / 4;
    let rounds = nk + 6;
    let mut w = [0u32; 60];
    for (i, c) in key.chunks_exact(4).enumerate() {
        w[i] = u32::from_le_bytes(c.try_into().unwrap());
    }
    k.rounds = rounds;
    // IMPLEMENTATION NOTE: each group of four round keys is bitsliced as soon as its words
    // exist, so out-of-order execution overlaps that work with the serial SubWord chain.
    let mut next = 0;
    let mut rcon = 1u32;
    for i in nk..4 * (rounds + 1) {
        let mut t = w[i - 1];
        if i % nk == 0 {
            t = sub_word(t.rotate_right(8)) ^ rcon;
            rcon = (rcon << 1) ^ (rcon >> 7).wrapping_mul(0x11b);
        } else if nk > 6 && i % nk == 4 {
            t = sub_word(t);
        }
        w[i] = w[i - nk] ^ t;
        if i + 1 == 4 * (next + 4) {
            slice_group(&w, k, next);
            next += 4;
        }
    }
    while next <= rounds {
        slice_group(&w, k, next);
        next += 4;
    }
    w.zeroize();
}

// ---------------------------------------------------------------------------------------------
// Kernels.

/// A whole-batch operation, run by [`drive`] on batches of 16, 8 or 4 blocks.
trait BatchOp {
    /// `data` is exactly `64 N` bytes; only the first `blocks` blocks are real (the rest is
    /// zero padding when the caller's buffer ran out).
    fn run<const N: usize>(&mut self, data: &mut [u8], blocks: usize);
}

/// Splits `buf` (whole blocks) into 16-block batches, then 8-block batches, then one
/// zero-padded batch of 8 or 4 for the rest.
fn drive<O: BatchOp>(op: &mut O, buf: &mut [u8]) {
    let mut chunks = buf.chunks_exact_mut(64 * MAX_LANES);
    for c in &mut chunks {
        op.run::<MAX_LANES>(c, 4 * MAX_LANES);
    }
    let rest = chunks.into_remainder();
    let blocks = rest.len() / 16;
    match blocks {
        0 => return,
        8 => return op.run::<2>(rest, 8),
        4 => return op.run::<1>(rest, 4),
        _ => {}
    }
    // IMPLEMENTATION NOTE: LLVM fully unrolls the two-lane loops, and so leaves them scalar,
    // while the four-lane loops are vectorised: a padded 16-block batch is cheaper than two
    // 8-block ones, and an 8-block batch about as cheap as two 4-block ones. (Making the lane
    // count a run-time value to avoid the unrolling lost the vectorisation everywhere:
    // 280 MB/s CTR at 16 KiB instead of 440.)
    let mut tmp = [0u8; 64 * MAX_LANES];
    tmp[..rest.len()].copy_from_slice(rest);
    if blocks > 8 {
        op.run::<MAX_LANES>(&mut tmp, blocks);
    } else if blocks > 4 {
        op.run::<2>(&mut tmp[..128], blocks);
    } else {
        op.run::<1>(&mut tmp[..64], blocks);
    }
    rest.copy_from_slice(&tmp[..rest.len()]);
    tmp.zeroize();
}

struct Ecb<'a> {
    k: &'a Keys,
    decrypt: bool,
}

impl BatchOp for Ecb<'_> {
    fn run<const N: usize>(&mut self, data: &mut [u8], _: usize) {
        if self.decrypt {
            decrypt_batch::<N>(self.k, data)
        } else {
            encrypt_batch::<N>(self.k, data)
        }
    }
}

pub(crate) fn encrypt_blocks(k: &Keys, buf: &mut [u8]) {
    drive(&mut Ecb { k, decrypt: false }, buf);
}

pub(crate) fn decrypt_blocks(k: &Keys, buf: &mut [u8]) {
    drive(&mut Ecb { k, decrypt: true }, buf);
}

fn xor_into(dst: &mut [u8], src: &[u8]) {
    dst.iter_mut().zip(src).for_each(|(d, s)| *d ^= s);
}

/// IMPLEMENTATION NOTE: CBC encryption is serial, so every block costs a one-lane (4-block)
/// batch in scalar code, about 4x the per-block cost of the parallel modes; there is no
/// cheaper constant-time single-block AES without table lookups or hardware support.
pub(crate) fn cbc_encrypt(k: &Keys, iv: &mut [u8; 16], buf: &mut [u8]) {
    let mut tmp = [0u8; 64];
    for b in buf.chunks_exact_mut(16) {
        tmp[..16].copy_from_slice(iv);
        xor_into(&mut tmp[..16], b);
        encrypt_batch::<1>(k, &mut tmp);
        b.copy_from_slice(&tmp[..16]);
        iv.copy_from_slice(&tmp[..16]);
    }
    tmp.zeroize();
}

struct CbcDec<'a> {
    k: &'a Keys,
    iv: &'a mut [u8; 16],
}

impl BatchOp for CbcDec<'_> {
    fn run<const N: usize>(&mut self, data: &mut [u8], blocks: usize) {
        let mut ct = [0u8; 64 * MAX_LANES];
        let ct = &mut ct[..16 * blocks];
        ct.copy_from_slice(&data[..16 * blocks]);
        decrypt_batch::<N>(self.k, data);
        xor_into(&mut data[..16], self.iv);
        xor_into(&mut data[16..16 * blocks], &ct[..16 * (blocks - 1)]);
        self.iv.copy_from_slice(&ct[16 * (blocks - 1)..]);
    }
}

pub(crate) fn cbc_decrypt(k: &Keys, iv: &mut [u8; 16], buf: &mut [u8]) {
    drive(&mut CbcDec { k, iv }, buf);
}

struct CtrOp<'a> {
    k: &'a Keys,
    ctr: u128,
}

impl BatchOp for CtrOp<'_> {
    fn run<const N: usize>(&mut self, data: &mut [u8], blocks: usize) {
        // Padding blocks (past `blocks`) get keystream too; `drive` discards them.
        ctr_batch::<N>(self.k, self.ctr, data);
        self.ctr = self.ctr.wrapping_add(blocks as u128);
    }
}

pub(crate) fn ctr_xor(k: &Keys, ctr: u128, buf: &mut [u8]) {
    drive(&mut CtrOp { k, ctr }, buf);
}
