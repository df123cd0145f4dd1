//! SSSE3 vector-permute backend: the AES S-box without AES-NI and without data-indexed memory
//! access, by the technique of M. Hamburg, "Accelerating AES with Vector Permute
//! Instructions" (CHES 2009): work in a tower representation GF((2^4)^2) where inversion
//! needs only 16-entry tables of one nibble (PSHUFB) and XORs.
//!
//! IMPLEMENTATION NOTE (our derivation). Write GF(2^8) = GF(16)[Y]/(Y² + Y + ν) and
//! z = a·Y + b·Ȳ (Ȳ = Y + 1, the conjugate root). Then z⁻¹ = (b·Y + a·Ȳ) / N with the norm
//! N = ν(a + b)² + ab. With i = a, j = b, k = a + b and ν' = 1/ν:
//!   1/(1/i + ν'/k) + j = N / (νk + i) =: 1/P,   1/(1/j + ν'/k) + i = N / (νk + j) =: 1/Q,
//! and a/N = (1 + ν)P + νQ, b/N = νP + (1 + ν)Q. So the inverse costs four rounds of
//! "table lookup, XOR"; zero inputs are handled by storing 0x80 for 1/0 (PSHUFB returns 0 for
//! an index with bit 7 set, i.e. 1/∞ = 0). The output tables fold in 1/x, the linear maps
//! above, the change back to the AES basis, the AES affine matrix and the factor 1, 4 or 7;
//! the affine constant 0x63 is added after the SuperMix (`ADD_K`). The whole state is kept in
//! the tower representation while in registers (see `to_t`), so no input transform sits on
//! the dependency chain. The tower constants are
//! found at compile time by search (`TOWER`), so no magic numbers are copied.

use core::arch::x86_64::*;

use super::simd::{IDENT, MixPlan, PLAN13, affine_lin, gmul};

const SRC: [u8; 16] = IDENT;
const TERNLOG: bool = false;
const TWO_CHAINS: bool = false;
const MEM_GROUPS: bool = false;
const ADD_K: bool = true;
const PLAN: MixPlan = PLAN13;

/// GF(16) = GF(2)[t]/(t⁴ + t + 1).
const fn g16(mut a: u8, mut b: u8) -> u8 {
    let mut p = 0u8;
    while b != 0 {
        if b & 1 != 0 {
            p ^= a;
        }
        a <<= 1;
        if a & 0x10 != 0 {
            a ^= 0x13;
        }
        b >>= 1;
    }
    p
}

const fn inv16(a: u8) -> u8 {
    let mut b = 1;
    while b < 16 {
        if g16(a, b) == 1 {
            return b;
        }
        b += 1;
    }
    0
}

struct Tower {
    /// A root of t⁴ + t + 1 in the AES field: the image of t.
    g: u8,
    /// Y, a root of Y² + Y + ν outside GF(16).
    y: u8,
    nu: u8,
}

const fn phi(t: &Tower, a: u8) -> u8 {
    let mut z = 0u8;
    let mut pw = 1u8;
    let mut e = 0;
    while e < 4 {
        if a >> e & 1 != 0 {
            z ^= pw;
        }
        pw = gmul(pw, t.g);
        e += 1;
    }
    z
}

const fn find_tower() -> Tower {
    let mut g = 2u8;
    loop {
        let g2 = gmul(g, g);
        if gmul(g2, g2) ^ g ^ 1 == 0 {
            break;
        }
        g += 1;
    }
    let mut t = Tower { g, y: 0, nu: 0 };
    let mut y = 2u16;
    while y < 256 {
        let w = gmul(y as u8, y as u8) ^ y as u8;
        let mut c = 0u8;
        let mut in_sub = false;
        let mut nu = 0xffu8;
        while c < 16 {
            if phi(&t, c) == y as u8 {
                in_sub = true;
            }
            if phi(&t, c) == w {
                nu = c;
            }
            c += 1;
        }
        if !in_sub && nu != 0xff {
            t.y = y as u8;
            t.nu = nu;
            return t;
        }
        y += 1;
    }
    panic!("no tower found")
}

const TOWER: Tower = find_tower();

/// `a·Y + b·Ȳ` in the AES basis.
const fn from_tower(a: u8, b: u8) -> u8 {
    let t = &TOWER;
    gmul(phi(t, a), t.y) ^ gmul(phi(t, b), t.y ^ 1)
}

/// The byte representation of the state while in registers: `(i << 4) | k` with i = a and
/// k = a ^ b for z = a·Y + b·Ȳ. Every Fugue operation outside the S-box is a XOR or a byte
/// move, which commute with any bytewise linear map, so the state stays in this basis and
/// the S-box needs no input transform (it is applied to message words instead, off the
/// dependency chain).
const fn to_t(x: u8) -> u8 {
    let mut a = 0;
    while a < 16 {
        let mut b = 0;
        while b < 16 {
            if from_tower(a, b) == x {
                return (a << 4) | (a ^ b);
            }
            b += 1;
        }
        a += 1;
    }
    panic!("not a basis")
}

const fn from_t(y: u8) -> u8 {
    let (i, k) = (y >> 4, y & 15);
    from_tower(i, i ^ k)
}

/// Nibble tables of a bytewise linear map: `[low nibble, high nibble]`.
const fn nibble_tables(f: u8) -> [[u8; 16]; 2] {
    let mut t = [[0u8; 16]; 2];
    let mut n = 0;
    while n < 16 {
        let (lo, hi) = (n as u8, (n as u8) << 4);
        t[0][n] = if f == 0 { to_t(lo) } else { from_t(lo) };
        t[1][n] = if f == 0 { to_t(hi) } else { from_t(hi) };
        n += 1;
    }
    t
}
const TO_T: [[u8; 16]; 2] = nibble_tables(0);
const FROM_T: [[u8; 16]; 2] = nibble_tables(1);

const fn inv_table(mul: u8) -> [u8; 16] {
    let mut t = [0x80u8; 16];
    let mut n = 1;
    while n < 16 {
        t[n] = g16(mul, inv16(n as u8));
        n += 1;
    }
    t
}
const INV: [u8; 16] = inv_table(1);
const AK: [u8; 16] = inv_table(inv16(TOWER.nu));

/// Output tables for factor `c`: `[P-table, Q-table]`, x -> c·A(contribution of 1/x).
const fn output_tables(c: u8) -> [[u8; 16]; 2] {
    let nu = TOWER.nu;
    let mut t = [[0u8; 16]; 2];
    let mut x = 1;
    while x < 16 {
        let v = inv16(x as u8);
        let zp = from_tower(g16(nu, v), g16(1 ^ nu, v));
        let zq = from_tower(g16(1 ^ nu, v), g16(nu, v));
        t[0][x] = to_t(gmul(c, affine_lin(zp)));
        t[1][x] = to_t(gmul(c, affine_lin(zq)));
        x += 1;
    }
    t
}
const OUT1: [[u8; 16]; 2] = output_tables(1);
const OUT4: [[u8; 16]; 2] = output_tables(4);
const OUT7: [[u8; 16]; 2] = output_tables(7);

#[inline]
#[target_feature(enable = "ssse3")]
fn lookup2(t: &[[u8; 16]; 2], lo: __m128i, hi: __m128i) -> __m128i {
    _mm_xor_si128(
        _mm_shuffle_epi8(load(&t[0]), lo),
        _mm_shuffle_epi8(load(&t[1]), hi),
    )
}

/// The bytewise map into (`to_basis`) and out of (`from_basis`) the register representation.
#[inline]
#[target_feature(enable = "ssse3")]
fn map(t: &[[u8; 16]; 2], v: __m128i) -> __m128i {
    let m = _mm_set1_epi8(0x0f);
    let lo = _mm_and_si128(v, m);
    let hi = _mm_and_si128(_mm_srli_epi16::<4>(v), m);
    lookup2(t, lo, hi)
}

#[inline]
#[target_feature(enable = "ssse3")]
fn to_basis(v: __m128i) -> __m128i {
    map(&TO_T, v)
}

#[inline]
#[target_feature(enable = "ssse3")]
fn from_basis(v: __m128i) -> __m128i {
    map(&FROM_T, v)
}

/// `to_t(1 << j)` for each input bit `j`.
const T_COLS: [u32; 8] = {
    let mut c = [0u32; 8];
    let mut j = 0;
    while j < 8 {
        c[j] = to_t(1 << j) as u32;
        j += 1;
    }
    c
};

/// `to_t` on the four bytes of a message word with scalar shifts, masks and multiplications
/// (each byte of `(w >> j) & 0x01010101` is 0 or 1, so the product spreads `T_COLS[j]` into
/// exactly the bytes whose bit `j` is set): constant-time, and off the shuffle ports, which the
/// rounds keep busy.
#[inline(always)]
fn word_to_basis(w: i32) -> i32 {
    let w = w as u32;
    let mut acc = 0u32;
    for (j, &c) in T_COLS.iter().enumerate() {
        acc ^= ((w >> j) & 0x0101_0101).wrapping_mul(c);
    }
    acc as i32
}

/// The S-box constant's contribution, in the register representation.
const fn basis_k(mut t: super::simd::MixTables) -> super::simd::MixTables {
    let mut n = 0;
    while n < 16 {
        t.k[n] = to_t(t.k[n]);
        n += 1;
    }
    t
}

/// S(x) ^ 0x63, 4·(S(x) ^ 0x63), 7·(S(x) ^ 0x63) bytewise, input and output in the register
/// representation.
#[inline]
#[target_feature(enable = "ssse3")]
fn copies(x: __m128i) -> [__m128i; 3] {
    let m = _mm_set1_epi8(0x0f);
    let k = _mm_and_si128(x, m);
    let i = _mm_and_si128(_mm_srli_epi16::<4>(x), m);
    let j = _mm_xor_si128(i, k);
    let inv = load(&INV);
    let ak = _mm_shuffle_epi8(load(&AK), k);
    let iak = _mm_xor_si128(_mm_shuffle_epi8(inv, i), ak);
    let jak = _mm_xor_si128(_mm_shuffle_epi8(inv, j), ak);
    let p = _mm_xor_si128(_mm_shuffle_epi8(inv, iak), j);
    let q = _mm_xor_si128(_mm_shuffle_epi8(inv, jak), i);
    [
        lookup2(&OUT1, p, q),
        lookup2(&OUT4, p, q),
        lookup2(&OUT7, p, q),
    ]
}

#[inline]
#[target_feature(enable = "ssse3")]
fn xor3(a: __m128i, b: __m128i, c: __m128i) -> __m128i {
    _mm_xor_si128(_mm_xor_si128(a, b), c)
}

/// `(a & m) ^ c` (the TIX round's SMIX input).
#[inline]
#[target_feature(enable = "ssse3")]
fn and_xor(a: __m128i, m: __m128i, c: __m128i) -> __m128i {
    _mm_xor_si128(_mm_and_si128(a, m), c)
}

super::simd::fugue_rounds!("ssse3", Vpaes);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn word_basis_matches_the_byte_map() {
        for w in [0u32, 1, 0x8040_2010, 0xdead_beef, 0xffff_ffff, 0x0123_4567] {
            let got = (word_to_basis(w as i32) as u32).to_ne_bytes();
            let want = w.to_ne_bytes().map(to_t);
            assert_eq!(got, want, "{w:#x}");
        }
    }

    #[test]
    fn sbox_multiples_match_the_aes_sbox() {
        if !std::is_x86_feature_detected!("ssse3") {
            return;
        }
        for base in (0..256).step_by(16) {
            let mut b = [0u8; 16];
            for (n, v) in b.iter_mut().enumerate() {
                *v = (base + n) as u8;
            }
            // SAFETY: SSSE3 was detected above.
            let c = unsafe { copies(to_basis(load(&b))) };
            for (f, v) in [1u8, 4, 7].into_iter().zip(c) {
                let mut out = [0u8; 16];
                // SAFETY: as above.
                super::super::simd::store(&mut out, unsafe { from_basis(v) });
                for n in 0..16 {
                    let want = gmul(f, crate::hazmat::sbox(b[n]) ^ 0x63);
                    assert_eq!(out[n], want, "x={:#x} factor {f}", b[n]);
                }
            }
        }
    }
}
