//! AES-NI backend: S(x) by AESENCLAST with an all-zero round key (its ShiftRows is folded
//! into the SuperMix shuffle tables), 4·S and 7·S by two 16-entry nibble tables each (PSHUFB),
//! then exchanged in dword 2 so that SuperMix takes 10 shuffles (`simd::PLAN10_SR`; IMPLEMENTATION
//! NOTE, issue 15, session 23: Intel family 6 model 167, `aesx bench --ops
//! fugue256,fugue384,fugue512 --sizes 64K --backends aesni`, six alternated runs, 1.055-1.063x;
//! `llvm-mca -mcpu=znver3` models the turn loops 10-13% shorter). Constant-time: AESENCLAST,
//! shuffles, blends and XORs run in data-independent time.

use core::arch::x86_64::*;

use super::simd::{MixPlan, PLAN10_SR, SHIFT_ROWS, gmul};

const SRC: [u8; 16] = SHIFT_ROWS;
const TERNLOG: bool = false;
const TWO_CHAINS: bool = false;
const MEM_GROUPS: bool = true;
const ADD_K: bool = false;
const PLAN: MixPlan = PLAN10_SR;

/// `c · n` for the low nibble `n`, and `c · (n << 4)` for the high nibble.
const fn nibble_tables(c: u8) -> [[u8; 16]; 2] {
    let mut t = [[0u8; 16]; 2];
    let mut n = 0;
    while n < 16 {
        t[0][n] = gmul(c, n as u8);
        t[1][n] = gmul(c, (n as u8) << 4);
        n += 1;
    }
    t
}
const T4: [[u8; 16]; 2] = nibble_tables(4);
const T7: [[u8; 16]; 2] = nibble_tables(7);

#[inline]
#[target_feature(enable = "aes,ssse3,sse4.1")]
fn copies(x: __m128i) -> [__m128i; 3] {
    let u = _mm_aesenclast_si128(x, _mm_setzero_si128());
    let m = _mm_set1_epi8(0x0f);
    let lo = _mm_and_si128(u, m);
    let hi = _mm_and_si128(_mm_srli_epi16::<4>(u), m);
    let u4 = _mm_xor_si128(
        _mm_shuffle_epi8(load(&T4[0]), lo),
        _mm_shuffle_epi8(load(&T4[1]), hi),
    );
    let u7 = _mm_xor_si128(
        _mm_shuffle_epi8(load(&T7[0]), lo),
        _mm_shuffle_epi8(load(&T7[1]), hi),
    );
    // `PLAN10_SR`: S, then 4S and 7S with their dwords 2 swapped.
    [
        u,
        _mm_blend_epi16::<0b0011_0000>(u4, u7),
        _mm_blend_epi16::<0b0011_0000>(u7, u4),
    ]
}

#[inline]
#[target_feature(enable = "aes,ssse3,sse4.1")]
fn xor3(a: __m128i, b: __m128i, c: __m128i) -> __m128i {
    _mm_xor_si128(_mm_xor_si128(a, b), c)
}

/// `(a & m) ^ c` (the TIX round's SMIX input).
#[inline]
#[target_feature(enable = "aes,ssse3,sse4.1")]
fn and_xor(a: __m128i, m: __m128i, c: __m128i) -> __m128i {
    _mm_xor_si128(_mm_and_si128(a, m), c)
}

#[inline]
#[target_feature(enable = "aes,ssse3,sse4.1")]
fn to_basis(v: __m128i) -> __m128i {
    v
}

#[inline]
#[target_feature(enable = "aes,ssse3,sse4.1")]
fn from_basis(v: __m128i) -> __m128i {
    v
}

const fn basis_k(t: super::simd::MixTables) -> super::simd::MixTables {
    t
}

#[inline(always)]
fn word_to_basis(w: i32) -> i32 {
    w
}

super::simd::fugue_rounds!("aes,ssse3,sse4.1", Aesni);
