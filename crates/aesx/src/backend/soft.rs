//! Portable constant-time AES: fixsliced, bitsliced over 8 (or 16) blocks at a time.
//!
//! Sources (facts and techniques; the code is written from scratch):
//! - S-box: the depth-16 circuit of J. Boyar and R. Peralta, "A depth-16 circuit for the AES
//!   S-box", IFIP SEC 2012 (IACR ePrint 2011/332): 32 AND and 96 XOR/XNOR gates.
//! - Fixslicing: A. Adomnicai and T. Peyrin, "Fixslicing AES-like Ciphers: New bitsliced AES
//!   speed records on ARM-Cortex M and RISC-V", IACR TCHES 2021(1). ShiftRows is never
//!   computed on the data; instead each round's MixColumns is conjugated by the ShiftRows power
//!   the state has reached, and the round keys are stored pre-shifted to match.
//! - Bitsliced MixColumns via `t = a ^ rot(a)`, `MC(a) = 2t ^ rot(a) ^ rot2(t)`, and
//!   InvMixColumns as MixColumns after `a ^ 4(a ^ rot2(a))` (the factorisation
//!   `{0e,0b,0d,09} = {02,03,01,01} x {05,00,04,00}`, used e.g. by Käsper and Schwabe,
//!   "Faster and Timing-Attack Resistant AES-GCM", CHES 2009).
//!
//! ## Representation
//!
//! A batch of blocks is held as 8 bit planes; plane `p` holds bit `p` of every byte of every
//! block. With the 128-bit lane [`V128`] (8 blocks), a plane is four `u32` words: word `c` is
//! state column `c`, byte `r` of that word is row `r`, and bit `b` of that byte is block `b`.
//! So "take the byte one row down" is a byte rotation inside each word, and "take the byte one
//! column right" is a word permutation. [`V256`] holds two such halves (16 blocks).
//!
//! Constant time: all operations are bitwise logic, fixed shifts and fixed permutations on
//! whole planes; loop bounds and branches depend only on lengths and the round count; no
//! memory index depends on key or data.
#![forbid(unsafe_code)]

use core::ops::{BitAnd, BitXor};

use zeroize::Zeroize;

#[cfg(test)]
mod tests;

// ---------------------------------------------------------------------------------------------
// Lanes.

/// Eight blocks: each bit plane is 4 x u32 (one word per state column).
///
/// IMPLEMENTATION NOTE: a plain `[u32; 4]` with element-wise loops in `#[inline(always)]`
/// functions; LLVM's SLP vectoriser turns each operation into one SSE2 instruction on x86-64
/// (and NEON on AArch64), the word permutations into PSHUFD and the byte rotations into
/// shift/shift/or. No `core::arch`, so this builds for every target.
#[derive(Clone, Copy, Default)]
#[repr(C, align(16))]
pub(crate) struct V128([u32; 4]);

/// Sixteen blocks as two independent `V128` halves (blocks 0-7 and 8-15).
#[derive(Clone, Copy, Default)]
#[repr(C, align(32))]
pub(crate) struct V256([u32; 8]);

macro_rules! lane_ops {
    ($t:ident, $n:expr) => {
        impl BitXor for $t {
            type Output = $t;
            #[inline(always)]
            fn bitxor(self, o: $t) -> $t {
                let mut r = [0u32; $n];
                for i in 0..$n {
                    r[i] = self.0[i] ^ o.0[i];
                }
                $t(r)
            }
        }
        impl BitAnd for $t {
            type Output = $t;
            #[inline(always)]
            fn bitand(self, o: $t) -> $t {
                let mut r = [0u32; $n];
                for i in 0..$n {
                    r[i] = self.0[i] & o.0[i];
                }
                $t(r)
            }
        }
        impl $t {
            #[inline(always)]
            fn shr(self, s: u32) -> $t {
                $t(self.0.map(|x| x >> s))
            }
            #[inline(always)]
            fn shl(self, s: u32) -> $t {
                $t(self.0.map(|x| x << s))
            }
            #[inline(always)]
            fn mask(m: u32) -> $t {
                $t([m; $n])
            }
        }
    };
}
lane_ops!(V128, 4);
lane_ops!(V256, 8);

/// A vector of bit-plane words holding `BLOCKS` blocks per plane.
trait Lane: Copy + BitXor<Output = Self> + BitAnd<Output = Self> {
    const BLOCKS: usize;
    /// A round-key plane, the same for every block.
    fn splat(k: V128) -> Self;
    /// `sigma(k, m)`: the byte at (row r, column c) becomes the byte at (r + k, c + m).
    fn sigma(self, k: u32, m: usize) -> Self;
    /// ShiftRows squared (rows 1 and 3 move by two columns; an involution).
    fn shift_rows2(self) -> Self;
    fn shr(self, s: u32) -> Self;
    fn shl(self, s: u32) -> Self;
    fn mask(m: u32) -> Self;
    /// Register `b` of the input transpose: block `b` (and `b + 8` for the upper half).
    fn gather(data: &[u8], b: usize) -> Self;
    fn scatter(self, data: &mut [u8], b: usize);
}

#[inline(always)]
fn sigma4(a: &[u32], k: u32, m: usize) -> [u32; 4] {
    let sh = 8 * k;
    [
        a[m % 4].rotate_right(sh),
        a[(m + 1) % 4].rotate_right(sh),
        a[(m + 2) % 4].rotate_right(sh),
        a[(m + 3) % 4].rotate_right(sh),
    ]
}

#[inline(always)]
fn shift_rows2_4(a: &[u32]) -> [u32; 4] {
    const KEEP: u32 = 0x00ff_00ff; // rows 0 and 2
    [
        (a[0] & KEEP) | (a[2] & !KEEP),
        (a[1] & KEEP) | (a[3] & !KEEP),
        (a[2] & KEEP) | (a[0] & !KEEP),
        (a[3] & KEEP) | (a[1] & !KEEP),
    ]
}

#[inline(always)]
fn load4(block: &[u8]) -> [u32; 4] {
    core::array::from_fn(|c| u32::from_le_bytes(block[4 * c..4 * c + 4].try_into().unwrap()))
}

#[inline(always)]
fn store4(w: &[u32], block: &mut [u8]) {
    for c in 0..4 {
        block[4 * c..4 * c + 4].copy_from_slice(&w[c].to_le_bytes());
    }
}

impl Lane for V128 {
    const BLOCKS: usize = 8;
    #[inline(always)]
    fn splat(k: V128) -> Self {
        k
    }
    #[inline(always)]
    fn sigma(self, k: u32, m: usize) -> Self {
        V128(sigma4(&self.0, k, m))
    }
    #[inline(always)]
    fn shift_rows2(self) -> Self {
        V128(shift_rows2_4(&self.0))
    }
    #[inline(always)]
    fn shr(self, s: u32) -> Self {
        V128::shr(self, s)
    }
    #[inline(always)]
    fn shl(self, s: u32) -> Self {
        V128::shl(self, s)
    }
    #[inline(always)]
    fn mask(m: u32) -> Self {
        V128::mask(m)
    }
    #[inline(always)]
    fn gather(data: &[u8], b: usize) -> Self {
        V128(load4(&data[16 * b..16 * b + 16]))
    }
    #[inline(always)]
    fn scatter(self, data: &mut [u8], b: usize) {
        store4(&self.0, &mut data[16 * b..16 * b + 16]);
    }
}

impl Lane for V256 {
    const BLOCKS: usize = 16;
    #[inline(always)]
    fn splat(k: V128) -> Self {
        let k = k.0;
        V256([k[0], k[1], k[2], k[3], k[0], k[1], k[2], k[3]])
    }
    #[inline(always)]
    fn sigma(self, k: u32, m: usize) -> Self {
        let lo = sigma4(&self.0[..4], k, m);
        let hi = sigma4(&self.0[4..], k, m);
        V256([lo[0], lo[1], lo[2], lo[3], hi[0], hi[1], hi[2], hi[3]])
    }
    #[inline(always)]
    fn shift_rows2(self) -> Self {
        let lo = shift_rows2_4(&self.0[..4]);
        let hi = shift_rows2_4(&self.0[4..]);
        V256([lo[0], lo[1], lo[2], lo[3], hi[0], hi[1], hi[2], hi[3]])
    }
    #[inline(always)]
    fn shr(self, s: u32) -> Self {
        V256::shr(self, s)
    }
    #[inline(always)]
    fn shl(self, s: u32) -> Self {
        V256::shl(self, s)
    }
    #[inline(always)]
    fn mask(m: u32) -> Self {
        V256::mask(m)
    }
    #[inline(always)]
    fn gather(data: &[u8], b: usize) -> Self {
        let lo = load4(&data[16 * b..16 * b + 16]);
        let hi = load4(&data[16 * (b + 8)..16 * (b + 8) + 16]);
        V256([lo[0], lo[1], lo[2], lo[3], hi[0], hi[1], hi[2], hi[3]])
    }
    #[inline(always)]
    fn scatter(self, data: &mut [u8], b: usize) {
        store4(&self.0[..4], &mut data[16 * b..16 * b + 16]);
        store4(&self.0[4..], &mut data[16 * (b + 8)..16 * (b + 8) + 16]);
    }
}

type State<L> = [L; 8];

// ---------------------------------------------------------------------------------------------
// Bitslicing: an 8x8 bit transpose at every byte position across the 8 registers.

#[inline(always)]
fn swapmove<L: Lane>(s: &mut State<L>, i: usize, j: usize, m: u32, sh: u32) {
    let t = (s[i].shr(sh) ^ s[j]) & L::mask(m);
    s[j] = s[j] ^ t;
    s[i] = s[i] ^ t.shl(sh);
}

/// The transpose is an involution: after it, register `p` bit `b` of each byte is what
/// register `b` bit `p` was.
#[inline(always)]
fn transpose<L: Lane>(s: &mut State<L>) {
    for i in [0, 2, 4, 6] {
        swapmove(s, i, i + 1, 0x5555_5555, 1);
    }
    for i in [0, 1, 4, 5] {
        swapmove(s, i, i + 2, 0x3333_3333, 2);
    }
    for i in [0, 1, 2, 3] {
        swapmove(s, i, i + 4, 0x0f0f_0f0f, 4);
    }
}

#[inline(always)]
fn pack<L: Lane>(data: &[u8]) -> State<L> {
    let mut s: State<L> = core::array::from_fn(|b| L::gather(data, b));
    transpose(&mut s);
    s
}

#[inline(always)]
fn unpack<L: Lane>(mut s: State<L>, data: &mut [u8]) {
    transpose(&mut s);
    for (b, x) in s.iter().enumerate() {
        x.scatter(data, b);
    }
}

// ---------------------------------------------------------------------------------------------
// Round functions on bitsliced state. `s[p]` is bit plane p (p = 0 is the least significant).

/// G(x) = L * x^254, i.e. the S-box without its constant 0x63, as the Boyar–Peralta depth-16
/// circuit with its four XNORs turned into XORs.
///
/// IMPLEMENTATION NOTE: the dropped constant 0x63 is XORed into round keys 1..=rounds
/// instead. MixColumns (and its conjugates) maps a state whose bytes are all 0x63 to itself
/// (2 ^ 3 ^ 1 ^ 1 = 1), so adding it after MixColumns is the same as adding it before.
#[inline(always)]
fn sbox_core<T: Copy + BitXor<Output = T> + BitAnd<Output = T>>(s: &mut [T; 8]) {
    // Circuit inputs U0..U7 are bits 7..0; outputs S0..S7 are bits 7..0.
    let (u0, u1, u2, u3, u4, u5, u6, u7) = (s[7], s[6], s[5], s[4], s[3], s[2], s[1], s[0]);
    // Top linear layer.
    let t1 = u0 ^ u3;
    let t2 = u0 ^ u5;
    let t3 = u0 ^ u6;
    let t4 = u3 ^ u5;
    let t5 = u4 ^ u6;
    let t6 = t1 ^ t5;
    let t7 = u1 ^ u2;
    let t8 = u7 ^ t6;
    let t9 = u7 ^ t7;
    let t10 = t6 ^ t7;
    let t11 = u1 ^ u5;
    let t12 = u2 ^ u5;
    let t13 = t3 ^ t4;
    let t14 = t6 ^ t11;
    let t15 = t5 ^ t11;
    let t16 = t5 ^ t12;
    let t17 = t9 ^ t16;
    let t18 = u3 ^ u7;
    let t19 = t7 ^ t18;
    let t20 = t1 ^ t19;
    let t21 = u6 ^ u7;
    let t22 = t7 ^ t21;
    let t23 = t2 ^ t22;
    let t24 = t2 ^ t10;
    let t25 = t20 ^ t17;
    let t26 = t3 ^ t16;
    let t27 = t1 ^ t12;
    // Shared non-linear middle (inversion in the tower field).
    let m1 = t13 & t6;
    let m2 = t23 & t8;
    let m3 = t14 ^ m1;
    let m4 = t19 & u7;
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
    let m48 = m39 & u7;
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
    // Bottom linear layer (includes the affine map's matrix).
    let l0 = m61 ^ m62;
    let l1 = m50 ^ m56;
    let l2 = m46 ^ m48;
    let l3 = m47 ^ m55;
    let l4 = m54 ^ m58;
    let l5 = m49 ^ m61;
    let l6 = m62 ^ l5;
    let l7 = m46 ^ l3;
    let l8 = m51 ^ m59;
    let l9 = m52 ^ m53;
    let l10 = m53 ^ l4;
    let l11 = m60 ^ l2;
    let l12 = m48 ^ m51;
    let l13 = m50 ^ l0;
    let l14 = m52 ^ m61;
    let l15 = m55 ^ l1;
    let l16 = m56 ^ l0;
    let l17 = m57 ^ l1;
    let l18 = m58 ^ l8;
    let l19 = m63 ^ l4;
    let l20 = l0 ^ l1;
    let l21 = l1 ^ l7;
    let l22 = l3 ^ l12;
    let l23 = l18 ^ l2;
    let l24 = l15 ^ l9;
    let l25 = l6 ^ l10;
    let l26 = l7 ^ l9;
    let l27 = l8 ^ l10;
    let l28 = l11 ^ l14;
    let l29 = l11 ^ l17;
    s[7] = l6 ^ l24;
    s[6] = l16 ^ l26;
    s[5] = l19 ^ l28;
    s[4] = l6 ^ l21;
    s[3] = l20 ^ l22;
    s[2] = l25 ^ l29;
    s[1] = l13 ^ l27;
    s[0] = l6 ^ l23;
}

/// The inverse of the affine map's matrix: out_i = y_(i-1) ^ y_(i-3) ^ y_(i-6).
#[inline(always)]
fn inv_affine_matrix<T: Copy + BitXor<Output = T>>(y: &mut [T; 8]) {
    let x = *y;
    for i in 0..8 {
        y[i] = x[(i + 7) % 8] ^ x[(i + 5) % 8] ^ x[(i + 2) % 8];
    }
}

/// Inverse S-box of `x ^ 0x63` (the constant comes from the round keys, as in `sbox_core`).
///
/// IMPLEMENTATION NOTE: S^-1(x) = inv(Linv(x ^ 0x63)) and inv(w) = Linv(G(w)), so the forward
/// circuit serves decryption too, wrapped in two cheap linear layers (2 x 24 XORs). A dedicated
/// inverse circuit would save those; decryption is the less common direction for CTR users.
#[inline(always)]
fn inv_sbox_core<T: Copy + BitXor<Output = T> + BitAnd<Output = T>>(s: &mut [T; 8]) {
    inv_affine_matrix(s);
    sbox_core(s);
    inv_affine_matrix(s);
}

/// Multiplication by x (0x02) in GF(2^8), on bit planes.
#[inline(always)]
fn xtime<L: Lane>(t: &State<L>) -> State<L> {
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
/// In the un-shifted picture MixColumns mixes each byte with the bytes 1, 2 and 3 rows below
/// it; after conjugation the byte k rows below sits k*j columns to the right as well.
#[inline(always)]
fn mix_columns<L: Lane, const J: usize>(a: &mut State<L>) {
    let mut r1 = [a[0]; 8];
    let mut t = [a[0]; 8];
    for p in 0..8 {
        r1[p] = a[p].sigma(1, J);
        t[p] = a[p] ^ r1[p];
    }
    let x = xtime(&t);
    for p in 0..8 {
        a[p] = x[p] ^ r1[p] ^ t[p].sigma(2, (2 * J) % 4);
    }
}

/// InvMixColumns conjugated by ShiftRows^j: MC_j(a ^ 4 (a ^ rot2(a))).
#[inline(always)]
fn inv_mix_columns<L: Lane, const J: usize>(a: &mut State<L>) {
    let mut u = [a[0]; 8];
    for p in 0..8 {
        u[p] = a[p] ^ a[p].sigma(2, (2 * J) % 4);
    }
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
        a[p] = a[p] ^ w[p];
    }
    mix_columns::<L, J>(a);
}

#[inline(always)]
fn add_key<L: Lane>(s: &mut State<L>, k: &[V128; 8]) {
    for p in 0..8 {
        s[p] = s[p] ^ L::splat(k[p]);
    }
}

// ---------------------------------------------------------------------------------------------
// Key schedule.

/// Round keys, bitsliced and broadcast to all 8 blocks of a [`V128`].
///
/// `rk[i]` = SR^-i(K_i ^ c_i) with c_0 = 0 and c_i = 0x63.. for i >= 1 (see `sbox_core`).
/// Encryption round i and decryption both use the same `rk[i]` (see [`decrypt_core`]).
pub(crate) struct Keys {
    rk: [[V128; 8]; 15],
    rounds: usize,
}

impl Drop for Keys {
    fn drop(&mut self) {
        for k in self.rk.iter_mut().flatten() {
            k.0.zeroize();
        }
    }
}

/// One round key to the `rk[i]` form.
fn slice_key(k: &[u8; 16], i: usize) -> [V128; 8] {
    let c = if i == 0 { 0 } else { 0x63 };
    // Column words of SR^-i(k): the byte at (r, c) comes from (r, c - i*r).
    let mut w = [0u32; 4];
    for (col, word) in w.iter_mut().enumerate() {
        let mut b = [0u8; 4];
        for (r, byte) in b.iter_mut().enumerate() {
            let src = (col + 4 * 4 - (i * r) % 4) % 4;
            *byte = k[4 * src + r] ^ c;
        }
        *word = u32::from_le_bytes(b);
    }
    let planes = core::array::from_fn(|p| {
        V128(w.map(|x| {
            let bits = (x >> p) & 0x0101_0101;
            (bits << 8).wrapping_sub(bits)
        }))
    });
    w.zeroize();
    planes
}

pub(crate) fn from_round_keys(enc: &[[u8; 16]]) -> Keys {
    let mut k = Keys {
        rk: [[V128::default(); 8]; 15],
        rounds: enc.len() - 1,
    };
    for (i, key) in enc.iter().enumerate() {
        k.rk[i] = slice_key(key, i);
    }
    k
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
pub(crate) fn expand(key: &[u8]) -> Keys {
    let nk = key.len() / 4;
    let rounds = nk + 6;
    let mut w = [0u32; 60];
    for (i, c) in key.chunks_exact(4).enumerate() {
        w[i] = u32::from_le_bytes(c.try_into().unwrap());
    }
    let mut rcon = 1u32;
    for i in nk..4 * (rounds + 1) {
        let mut t = w[i - 1];
        if i % nk == 0 {
            t = sub_word(t.rotate_right(8)) ^ rcon;
            rcon = (rcon << 1) ^ ((rcon >> 7) * 0x11b);
        } else if nk > 6 && i % nk == 4 {
            t = sub_word(t);
        }
        w[i] = w[i - nk] ^ t;
    }
    let mut k = Keys {
        rk: [[V128::default(); 8]; 15],
        rounds,
    };
    let mut blk = [0u8; 16];
    for i in 0..=rounds {
        for c in 0..4 {
            blk[4 * c..4 * c + 4].copy_from_slice(&w[4 * i + c].to_le_bytes());
        }
        k.rk[i] = slice_key(&blk, i);
    }
    blk.zeroize();
    w.zeroize();
    k
}

// ---------------------------------------------------------------------------------------------
// The cipher on one bitsliced batch.

#[inline(always)]
fn mix_columns_j<L: Lane>(s: &mut State<L>, i: usize) {
    match i % 4 {
        0 => mix_columns::<L, 0>(s),
        1 => mix_columns::<L, 1>(s),
        2 => mix_columns::<L, 2>(s),
        _ => mix_columns::<L, 3>(s),
    }
}

#[inline(always)]
fn inv_mix_columns_j<L: Lane>(s: &mut State<L>, i: usize) {
    match i % 4 {
        0 => inv_mix_columns::<L, 0>(s),
        1 => inv_mix_columns::<L, 1>(s),
        2 => inv_mix_columns::<L, 2>(s),
        _ => inv_mix_columns::<L, 3>(s),
    }
}

/// Encryption, fixsliced: after round i the true state is SR^i(s), so round i uses MC_(i mod 4)
/// and `rk[i]` = SR^-i(K_i). The output is SR^rounds(s); SR^4 is the identity, so that is
/// nothing for AES-192 and SR^2 for AES-128/256.
#[inline(always)]
fn encrypt_core<L: Lane>(k: &Keys, s: &mut State<L>) {
    add_key(s, &k.rk[0]);
    for i in 1..k.rounds {
        sbox_core(s);
        mix_columns_j(s, i);
        add_key(s, &k.rk[i]);
    }
    sbox_core(s);
    add_key(s, &k.rk[k.rounds]);
    if k.rounds % 4 != 0 {
        for x in s.iter_mut() {
            *x = x.shift_rows2();
        }
    }
}

/// Decryption (FIPS-197 InvCipher order), fixsliced: the input is first put in the
/// SR^-rounds representation, so after the round that adds K_i the true state is SR^i(s): it
/// uses the same pre-shifted `rk[i]` as encryption, InvMC conjugated by SR^i, and the output
/// needs no fix-up.
#[inline(always)]
fn decrypt_core<L: Lane>(k: &Keys, s: &mut State<L>) {
    let n = k.rounds;
    if n % 4 != 0 {
        for x in s.iter_mut() {
            *x = x.shift_rows2();
        }
    }
    add_key(s, &k.rk[n]);
    for i in (1..n).rev() {
        inv_sbox_core(s);
        add_key(s, &k.rk[i]);
        inv_mix_columns_j(s, i);
    }
    inv_sbox_core(s);
    add_key(s, &k.rk[0]);
}

// ---------------------------------------------------------------------------------------------
// Kernels.

/// Blocks per wide batch.
const WIDE: usize = V256::BLOCKS;

#[inline(never)]
fn encrypt_batch<L: Lane>(k: &Keys, data: &mut [u8]) {
    let mut s = pack::<L>(data);
    encrypt_core(k, &mut s);
    unpack(s, data);
}

#[inline(never)]
fn decrypt_batch<L: Lane>(k: &Keys, data: &mut [u8]) {
    let mut s = pack::<L>(data);
    decrypt_core(k, &mut s);
    unpack(s, data);
}

/// Runs `f` on a partial batch (fewer than a full 8 blocks) through a zero-padded copy.
fn with_padded(data: &mut [u8], f: impl FnOnce(&mut [u8])) {
    let mut tmp = [0u8; 16 * 8];
    tmp[..data.len()].copy_from_slice(data);
    f(&mut tmp);
    data.copy_from_slice(&tmp[..data.len()]);
    tmp.zeroize();
}

/// ECB over `buf` with 16-block batches, then 8-block batches, then a padded 8-block batch.
fn ecb(buf: &mut [u8], wide: impl Fn(&mut [u8]), narrow: impl Fn(&mut [u8])) {
    let mut chunks = buf.chunks_exact_mut(16 * WIDE);
    for c in &mut chunks {
        wide(c);
    }
    let mut rest = chunks.into_remainder().chunks_exact_mut(16 * 8);
    for c in &mut rest {
        narrow(c);
    }
    let tail = rest.into_remainder();
    if !tail.is_empty() {
        with_padded(tail, &narrow);
    }
}

pub(crate) fn encrypt_blocks(k: &Keys, buf: &mut [u8]) {
    ecb(
        buf,
        |c| encrypt_batch::<V256>(k, c),
        |c| encrypt_batch::<V128>(k, c),
    );
}

pub(crate) fn decrypt_blocks(k: &Keys, buf: &mut [u8]) {
    ecb(
        buf,
        |c| decrypt_batch::<V256>(k, c),
        |c| decrypt_batch::<V128>(k, c),
    );
}

fn xor16(dst: &mut [u8], src: &[u8]) {
    dst.iter_mut().zip(src).for_each(|(d, s)| *d ^= s);
}

/// IMPLEMENTATION NOTE: CBC encryption is serial, so each block costs a whole 8-block batch;
/// there is no cheaper constant-time single-block AES without table lookups or hardware.
pub(crate) fn cbc_encrypt(k: &Keys, iv: &mut [u8; 16], buf: &mut [u8]) {
    let mut tmp = [0u8; 16 * 8];
    for b in buf.chunks_exact_mut(16) {
        xor16(&mut tmp[..16], b);
        xor16(&mut tmp[..16], iv);
        encrypt_batch::<V128>(k, &mut tmp);
        b.copy_from_slice(&tmp[..16]);
        iv.copy_from_slice(&tmp[..16]);
        tmp[..16].fill(0);
    }
    tmp.zeroize();
}

fn cbc_decrypt_batch<L: Lane>(k: &Keys, iv: &mut [u8; 16], data: &mut [u8], n: usize) {
    // `data` holds L::BLOCKS blocks; the first `n` are real.
    let mut ct = [0u8; 16 * WIDE];
    let ct = &mut ct[..16 * n];
    ct.copy_from_slice(&data[..16 * n]);
    decrypt_batch::<L>(k, data);
    xor16(&mut data[..16], iv);
    xor16(&mut data[16..16 * n], &ct[..16 * (n - 1)]);
    iv.copy_from_slice(&ct[16 * (n - 1)..]);
}

pub(crate) fn cbc_decrypt(k: &Keys, iv: &mut [u8; 16], buf: &mut [u8]) {
    let mut chunks = buf.chunks_exact_mut(16 * WIDE);
    for c in &mut chunks {
        cbc_decrypt_batch::<V256>(k, iv, c, WIDE);
    }
    let mut rest = chunks.into_remainder().chunks_exact_mut(16 * 8);
    for c in &mut rest {
        cbc_decrypt_batch::<V128>(k, iv, c, 8);
    }
    let tail = rest.into_remainder();
    if !tail.is_empty() {
        let n = tail.len() / 16;
        with_padded(tail, |c| cbc_decrypt_batch::<V128>(k, iv, c, n));
    }
}

/// Encrypts the counter blocks ctr, ctr+1, ... into `ks` (L::BLOCKS blocks) and XORs the first
/// `data.len()` bytes into `data`.
#[inline(always)]
fn ctr_batch<L: Lane>(k: &Keys, ctr: u128, data: &mut [u8]) {
    let mut ks = [0u8; 16 * WIDE];
    let ks = &mut ks[..16 * L::BLOCKS];
    for (i, b) in ks.chunks_exact_mut(16).enumerate() {
        b.copy_from_slice(&ctr.wrapping_add(i as u128).to_be_bytes());
    }
    encrypt_batch::<L>(k, ks);
    xor16(data, ks);
    ks.zeroize();
}

pub(crate) fn ctr_xor(k: &Keys, mut ctr: u128, buf: &mut [u8]) {
    let mut chunks = buf.chunks_exact_mut(16 * WIDE);
    for c in &mut chunks {
        ctr_batch::<V256>(k, ctr, c);
        ctr = ctr.wrapping_add(WIDE as u128);
    }
    for c in chunks.into_remainder().chunks_mut(16 * 8) {
        ctr_batch::<V128>(k, ctr, c);
        ctr = ctr.wrapping_add(8);
    }
}
