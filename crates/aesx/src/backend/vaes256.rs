//! VAES on ymm registers with AVX2: 2 blocks per instruction, 8 vectors (16 blocks, 256 bytes)
//! in flight per loop iteration, round keys broadcast into registers once, and AVX2 masked
//! loads/stores (VPMASKMOVQ) for tails.
//!
//! On Zen 4 two ymm VAESENC issue per cycle (latency 4), the same 4 block-rounds per cycle as
//! one zmm VAESENC, so this backend matches `vaes512` in throughput on CPUs with VAES but
//! without AVX-512 (Zen 3, Alder Lake). Same techniques as `vaes512`: data XOR folded into the
//! last round, exact 128-bit CTR counters at an AND and an XOR per vector.
//!
//! Constant time: VAES runs in data-independent time; loop bounds and masks depend only on
//! lengths.
#![allow(clippy::needless_range_loop)]

use core::arch::x86_64::*;

use super::aesni::{Keys, load};

const VECS: usize = 8;
const VBYTES: usize = 32;

macro_rules! by_rounds {
    ($rounds:expr, $f:ident ( $($a:expr),* )) => {
        match $rounds {
            10 => $f::<10>($($a),*),
            12 => $f::<12>($($a),*),
            _ => $f::<14>($($a),*),
        }
    };
}

/// Runs `$f::<NR, V>` with the smallest V in {1, 2, 4, 8} vectors that covers `$vecs`.
macro_rules! by_width {
    ($vecs:expr, $f:ident :: <$nr:ident> ( $($a:expr),* )) => {
        match $vecs {
            0 => {}
            1 => $f::<$nr, 1>($($a),*),
            2 => $f::<$nr, 2>($($a),*),
            3 | 4 => $f::<$nr, 4>($($a),*),
            _ => $f::<$nr, 8>($($a),*),
        }
    };
}

#[inline(always)]
fn loady(buf: &[u8], i: usize) -> __m256i {
    let s = &buf[VBYTES * i..VBYTES * i + VBYTES];
    // SAFETY: `s` is 32 readable bytes; the load is unaligned.
    unsafe { _mm256_loadu_si256(s.as_ptr().cast()) }
}

#[inline(always)]
fn storey(buf: &mut [u8], i: usize, v: __m256i) {
    let s = &mut buf[VBYTES * i..VBYTES * i + VBYTES];
    // SAFETY: `s` is 32 writable bytes; the store is unaligned.
    unsafe { _mm256_storeu_si256(s.as_mut_ptr().cast(), v) }
}

/// Qword mask (all-ones lanes selected) for the whole blocks of vector `i` inside `len` bytes.
#[inline]
#[target_feature(enable = "avx2,vaes,aes,sse4.2")]
fn tail_mask(len: usize, i: usize) -> __m256i {
    let blocks = len.saturating_sub(VBYTES * i) / 16;
    let lo = if blocks >= 1 { -1 } else { 0 };
    let hi = if blocks >= 2 { -1 } else { 0 };
    _mm256_set_epi64x(hi, hi, lo, lo)
}

#[inline]
#[target_feature(enable = "avx2,vaes,aes,sse4.2")]
fn load_masked(buf: &[u8], i: usize) -> __m256i {
    let m = tail_mask(buf.len(), i);
    let p = buf.as_ptr().wrapping_add((VBYTES * i).min(buf.len()));
    // SAFETY: only the qwords selected by `m` are read and they lie inside `buf` (whole blocks);
    // VPMASKMOVQ does not fault on unselected elements.
    unsafe { _mm256_maskload_epi64(p.cast(), m) }
}

#[inline]
#[target_feature(enable = "avx2,vaes,aes,sse4.2")]
fn store_masked(buf: &mut [u8], i: usize, v: __m256i) {
    let m = tail_mask(buf.len(), i);
    let p = buf.as_mut_ptr().wrapping_add((VBYTES * i).min(buf.len()));
    // SAFETY: only the qwords selected by `m` are written, and they lie inside `buf`.
    unsafe { _mm256_maskstore_epi64(p.cast(), m, v) }
}

/// The AESDEC schedule, derived and broadcast. IMPLEMENTATION NOTE: an explicit loop, not
/// `array::map`: the generic `map` carries no target features, so the broadcast closure was
/// called out of line once per key (~30 ns per decrypt call).
#[inline]
#[target_feature(enable = "avx2,vaes,aes,sse4.2")]
fn dec_keys<const NR: usize>(rk: &Keys) -> [__m256i; 15] {
    let d = super::aesni::dec_keys::<NR>(&rk.enc);
    let mut k = [_mm256_setzero_si256(); 15];
    for i in 0..=NR {
        k[i] = _mm256_broadcastsi128_si256(d[i]);
    }
    k
}

#[inline]
#[target_feature(enable = "avx2,vaes,aes,sse4.2")]
fn keys<const NR: usize>(rk: &[[u8; 16]; 15]) -> [__m256i; 15] {
    let mut k = [_mm256_setzero_si256(); 15];
    for i in 0..=NR {
        k[i] = _mm256_broadcastsi128_si256(load(&rk[i]));
    }
    k
}

#[inline]
#[target_feature(enable = "avx2,vaes,aes,sse4.2")]
fn enc<const NR: usize, const V: usize>(k: &[__m256i; 15], mut x: [__m256i; V]) -> [__m256i; V] {
    for r in 1..NR {
        x = x.map(|v| _mm256_aesenc_epi128(v, k[r]));
    }
    x
}

#[inline]
#[target_feature(enable = "avx2,vaes,aes,sse4.2")]
fn dec<const NR: usize, const V: usize>(k: &[__m256i; 15], mut x: [__m256i; V]) -> [__m256i; V] {
    for r in 1..NR {
        x = x.map(|v| _mm256_aesdec_epi128(v, k[r]));
    }
    x
}

// ---------------------------------------------------------------------------------------------
// ECB

#[inline]
#[target_feature(enable = "avx2,vaes,aes,sse4.2")]
fn ecb_tail<const NR: usize, const V: usize>(k: &[__m256i; 15], de: bool, buf: &mut [u8]) {
    let x: [__m256i; V] = core::array::from_fn(|i| _mm256_xor_si256(load_masked(buf, i), k[0]));
    if de {
        let x = dec::<NR, V>(k, x);
        for (i, v) in x.into_iter().enumerate() {
            store_masked(buf, i, _mm256_aesdeclast_epi128(v, k[NR]));
        }
    } else {
        let x = enc::<NR, V>(k, x);
        for (i, v) in x.into_iter().enumerate() {
            store_masked(buf, i, _mm256_aesenclast_epi128(v, k[NR]));
        }
    }
}

#[target_feature(enable = "avx2,vaes,aes,sse4.2")]
fn ecb_enc<const NR: usize>(rk: &Keys, buf: &mut [u8]) {
    let k = keys::<NR>(&rk.enc);
    let mut chunks = buf.chunks_exact_mut(VBYTES * VECS);
    for c in &mut chunks {
        let x: [__m256i; VECS] = core::array::from_fn(|i| _mm256_xor_si256(loady(c, i), k[0]));
        let x = enc::<NR, VECS>(&k, x);
        for (i, v) in x.into_iter().enumerate() {
            storey(c, i, _mm256_aesenclast_epi128(v, k[NR]));
        }
    }
    let rest = chunks.into_remainder();
    by_width!(rest.len().div_ceil(VBYTES), ecb_tail::<NR>(&k, false, rest));
}

#[target_feature(enable = "avx2,vaes,aes,sse4.2")]
fn ecb_dec<const NR: usize>(rk: &Keys, buf: &mut [u8]) {
    let k = dec_keys::<NR>(rk);
    let mut chunks = buf.chunks_exact_mut(VBYTES * VECS);
    for c in &mut chunks {
        let x: [__m256i; VECS] = core::array::from_fn(|i| _mm256_xor_si256(loady(c, i), k[0]));
        let x = dec::<NR, VECS>(&k, x);
        for (i, v) in x.into_iter().enumerate() {
            storey(c, i, _mm256_aesdeclast_epi128(v, k[NR]));
        }
    }
    let rest = chunks.into_remainder();
    by_width!(rest.len().div_ceil(VBYTES), ecb_tail::<NR>(&k, true, rest));
}

// ---------------------------------------------------------------------------------------------
// CBC. Encryption is one serial chain: the xmm AES-NI kernel is already at the latency bound.

pub(crate) use super::aesni::cbc_encrypt;

/// CBC decryption; the chaining values come from VPERM2I128 of the current and previous
/// ciphertext vectors, in registers, so in-place operation is safe.
#[inline]
#[target_feature(enable = "avx2,vaes,aes,sse4.2")]
fn cbc_dec_batch<const NR: usize, const V: usize>(
    k: &[__m256i; 15],
    carry: &mut __m256i,
    c: &mut [u8],
    masked: bool,
) {
    let ct: [__m256i; V] = core::array::from_fn(|i| {
        if masked {
            load_masked(c, i)
        } else {
            loady(c, i)
        }
    });
    let x = dec::<NR, V>(k, ct.map(|v| _mm256_xor_si256(v, k[0])));
    let mut prev = *carry;
    for i in 0..V {
        // [prev.hi, ct.lo]
        let chain = _mm256_permute2x128_si256::<0x21>(prev, ct[i]);
        let p = _mm256_aesdeclast_epi128(x[i], _mm256_xor_si256(k[NR], chain));
        if masked {
            store_masked(c, i, p);
        } else {
            storey(c, i, p);
        }
        prev = ct[i];
    }
    *carry = prev;
}

#[inline]
#[target_feature(enable = "avx2,vaes,aes,sse4.2")]
fn cbc_dec_tail<const NR: usize, const V: usize>(
    k: &[__m256i; 15],
    carry: &mut __m256i,
    c: &mut [u8],
) {
    cbc_dec_batch::<NR, V>(k, carry, c, true)
}

#[target_feature(enable = "avx2,vaes,aes,sse4.2")]
fn cbc_dec<const NR: usize>(rk: &Keys, iv: &mut [u8; 16], buf: &mut [u8]) {
    if buf.is_empty() {
        return;
    }
    let k = dec_keys::<NR>(rk);
    let last: [u8; 16] = buf[buf.len() - 16..].try_into().unwrap();
    // The previous ciphertext block lives in the high lane of `carry`.
    let mut carry = _mm256_broadcastsi128_si256(load(iv));
    let mut chunks = buf.chunks_exact_mut(VBYTES * VECS);
    for c in &mut chunks {
        cbc_dec_batch::<NR, VECS>(&k, &mut carry, c, false);
    }
    let rest = chunks.into_remainder();
    by_width!(
        rest.len().div_ceil(VBYTES),
        cbc_dec_tail::<NR>(&k, &mut carry, rest)
    );
    *iv = last;
}

// ---------------------------------------------------------------------------------------------
// CTR

/// Round key `r`, re-read from memory at each use in the CTR loop (see `aesni::round_key`):
/// keeps LLVM from spending registers on all round keys and then serialising the vectors.
#[inline(always)]
fn round_key(k: &[__m256i; 15], r: usize) -> __m256i {
    // SAFETY: `k[r]` is a valid, aligned, initialised vector; volatile only stops LLVM from
    // hoisting the load out of the loop.
    unsafe { core::ptr::read_volatile(&k[r]) }
}

/// Blocks per full batch.
const BATCH: u64 = (VECS * 2) as u64;

/// Per-call selector words `W_k` (see `aesni` "CTR counter blocks"): vector `i` lane `j` is
/// block `k = 2i + j` of a batch, `u = r + k`. Vector arithmetic only: `r` is secret.
#[inline]
#[target_feature(enable = "avx2,vaes,aes,sse4.2")]
fn ctr_select<const V: usize>(r: u64) -> [__m256i; V] {
    let r = _mm256_set1_epi64x(r as i64);
    let low = ((BATCH - 1) << 56) as i64;
    // The low bits of byte 15 live in the high qword of each 128-bit lane.
    let low_bits = _mm256_set_epi64x(low, 0, low, 0);
    core::array::from_fn(|i| {
        let k = 2 * i as i64;
        let u = _mm256_add_epi64(r, _mm256_set_epi64x(k + 1, k + 1, k, k));
        let m = _mm256_sub_epi64(
            _mm256_setzero_si256(),
            _mm256_srli_epi64::<{ BATCH.trailing_zeros() as i32 }>(u),
        );
        // low_bits ? (u << 56) : m
        _mm256_or_si256(
            _mm256_andnot_si256(low_bits, m),
            _mm256_and_si256(low_bits, _mm256_slli_epi64::<56>(u)),
        )
    })
}

#[inline]
#[target_feature(enable = "avx2,vaes,aes,sse4.2")]
fn ctr_batch<const NR: usize, const V: usize, const MASKED: bool>(
    k: &[__m256i; 15],
    w: &[__m256i; VECS],
    a: u128,
    c: &mut [u8],
) {
    let ((lo, hi), (dlo, dhi)) = super::aesni::ctr_batch_words(a, BATCH);
    let av = _mm256_xor_si256(_mm256_broadcastsi128_si256(_mm_set_epi64x(hi, lo)), k[0]);
    let dv = _mm256_broadcastsi128_si256(_mm_set_epi64x(dhi, dlo));
    // A ^ (D' & W_i): an AND and an XOR per vector.
    let x: [__m256i; V] =
        core::array::from_fn(|i| _mm256_xor_si256(av, _mm256_and_si256(dv, w[i])));
    let mut x = x;
    for r in 1..NR {
        let kr = round_key(k, r);
        x = x.map(|v| _mm256_aesenc_epi128(v, kr));
    }
    let kl = round_key(k, NR);
    for (i, v) in x.into_iter().enumerate() {
        let d = if MASKED {
            load_masked(c, i)
        } else {
            loady(c, i)
        };
        let out = _mm256_aesenclast_epi128(v, _mm256_xor_si256(kl, d));
        if MASKED {
            store_masked(c, i, out);
        } else {
            storey(c, i, out);
        }
    }
}

#[inline]
#[target_feature(enable = "avx2,vaes,aes,sse4.2")]
fn ctr_tail<const NR: usize, const V: usize>(
    k: &[__m256i; 15],
    w: &[__m256i; VECS],
    a: u128,
    c: &mut [u8],
) {
    ctr_batch::<NR, V, true>(k, w, a, c)
}

#[target_feature(enable = "avx2,vaes,aes,sse4.2")]
fn ctr<const NR: usize>(rk: &Keys, ctr: u128, buf: &mut [u8]) {
    let k = keys::<NR>(&rk.enc);
    // Batches start at aligned counters `a`; the offset r is the same for all of them.
    let w = ctr_select::<VECS>(ctr as u64 & (BATCH - 1));
    let mut a = ctr & !(BATCH as u128 - 1);
    let mut chunks = buf.chunks_exact_mut(VBYTES * VECS);
    for ch in &mut chunks {
        ctr_batch::<NR, VECS, false>(&k, &w, a, ch);
        a = a.wrapping_add(BATCH as u128);
    }
    let rest = chunks.into_remainder();
    by_width!(rest.len().div_ceil(VBYTES), ctr_tail::<NR>(&k, &w, a, rest));
}

// Safe entry points. One or two blocks (short messages, single-block calls, partial-block
// keystream) go to the xmm kernels: they skip the key broadcasts and masked accesses, and the
// AES latency is the same.
//
// SAFETY (all): `Backend::Vaes256` dispatches here only after
// `Aes::with_backend` checked AVX2, VAES, AES-NI and SSE4.2 (`is_available`).

pub(crate) fn encrypt_blocks(k: &Keys, buf: &mut [u8]) {
    if buf.len() <= 32 {
        return super::aesni::encrypt_blocks(k, buf);
    }
    // SAFETY: see above.
    unsafe { by_rounds!(k.rounds, ecb_enc(k, buf)) }
}

pub(crate) fn decrypt_blocks(k: &Keys, buf: &mut [u8]) {
    if buf.len() <= 32 {
        return super::aesni::decrypt_blocks(k, buf);
    }
    // SAFETY: see above.
    unsafe { by_rounds!(k.rounds, ecb_dec(k, buf)) }
}

pub(crate) fn cbc_decrypt(k: &Keys, iv: &mut [u8; 16], buf: &mut [u8]) {
    if buf.len() <= 32 {
        return super::aesni::cbc_decrypt(k, iv, buf);
    }
    // SAFETY: see above.
    unsafe { by_rounds!(k.rounds, cbc_dec(k, iv, buf)) }
}

pub(crate) fn ctr_xor(k: &Keys, c: u128, buf: &mut [u8]) {
    if buf.len() <= 32 {
        return super::aesni::ctr_xor(k, c, buf);
    }
    // SAFETY: see above.
    unsafe { by_rounds!(k.rounds, ctr(k, c, buf)) }
}
