//! VAES on zmm registers with AVX-512F/BW/VL: 4 blocks per instruction, 8 vectors (32 blocks,
//! 512 bytes) in flight per loop iteration, all round keys broadcast into registers once, and
//! masked loads/stores for tails so no scalar clean-up loop is needed.
//!
//! Zen 4 issues one zmm VAESENC per cycle (4 block-rounds/cycle, the same as two ymm ones), with
//! latency 4: 8 independent vectors hide the latency with room to spare. Techniques as in the
//! Linux kernel's aes-ctr-avx-x86_64.S (2025): 8 vectors per iteration and the data XOR folded
//! into the last round (`vaesenclast(x, k_last ^ data)`). CTR counters cost one VPTERNLOGQ
//! per vector and stay exact mod 2^128 without branches (see `aesni`, "CTR counter blocks").
//!
//! Constant time: VAES runs in data-independent time; loop bounds and masks depend only on
//! lengths.

#![allow(clippy::needless_range_loop)]

use core::arch::x86_64::*;

use super::aesni::{Keys, load};

const VECS: usize = 8;
const VBYTES: usize = 64;

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
fn loadz(buf: &[u8], i: usize) -> __m512i {
    let s = &buf[VBYTES * i..VBYTES * i + VBYTES];
    // SAFETY: `s` is 64 readable bytes; the load is unaligned.
    unsafe { _mm512_loadu_si512(s.as_ptr().cast()) }
}

#[inline(always)]
fn storez(buf: &mut [u8], i: usize, v: __m512i) {
    let s = &mut buf[VBYTES * i..VBYTES * i + VBYTES];
    // SAFETY: `s` is 64 writable bytes; the store is unaligned.
    unsafe { _mm512_storeu_si512(s.as_mut_ptr().cast(), v) }
}

/// Byte mask covering the part of vector `i` that lies inside `len` bytes.
#[inline(always)]
fn tail_mask(len: usize, i: usize) -> __mmask64 {
    let have = len.saturating_sub(VBYTES * i);
    if have >= VBYTES {
        !0
    } else {
        (1u64 << have) - 1
    }
}

#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,vaes,aes,avx2,sse4.2")]
fn load_masked(buf: &[u8], i: usize) -> __m512i {
    let m = tail_mask(buf.len(), i);
    let p = buf.as_ptr().wrapping_add((VBYTES * i).min(buf.len()));
    // SAFETY: only the bytes selected by `m` are read, and they lie inside `buf`; AVX-512 masked
    // loads suppress faults on the unselected bytes (AVX512BW is enabled for this fn).
    unsafe { _mm512_maskz_loadu_epi8(m, p.cast()) }
}

#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,vaes,aes,avx2,sse4.2")]
fn store_masked(buf: &mut [u8], i: usize, v: __m512i) {
    let m = tail_mask(buf.len(), i);
    let p = buf.as_mut_ptr().wrapping_add((VBYTES * i).min(buf.len()));
    // SAFETY: only the bytes selected by `m` are written, and they lie inside `buf`.
    unsafe { _mm512_mask_storeu_epi8(p.cast(), m, v) }
}

/// The AESDEC schedule, derived and broadcast. IMPLEMENTATION NOTE: an explicit loop, not
/// `array::map`: the generic `map` carries no target features, so the broadcast closure was
/// called out of line once per key (~30 ns per decrypt call).
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,vaes,aes,avx2,sse4.2")]
fn dec_keys<const NR: usize>(rk: &Keys) -> [__m512i; 15] {
    let d = super::aesni::dec_keys::<NR>(&rk.enc);
    let mut k = [_mm512_setzero_si512(); 15];
    for i in 0..=NR {
        k[i] = _mm512_broadcast_i32x4(d[i]);
    }
    k
}

#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,vaes,aes,avx2,sse4.2")]
fn keys<const NR: usize>(rk: &[[u8; 16]; 15]) -> [__m512i; 15] {
    let mut k = [_mm512_setzero_si512(); 15];
    for i in 0..=NR {
        k[i] = _mm512_broadcast_i32x4(load(&rk[i]));
    }
    k
}

#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,vaes,aes,avx2,sse4.2")]
fn enc<const NR: usize, const V: usize>(k: &[__m512i; 15], mut x: [__m512i; V]) -> [__m512i; V] {
    for r in 1..NR {
        x = x.map(|v| _mm512_aesenc_epi128(v, k[r]));
    }
    x
}

#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,vaes,aes,avx2,sse4.2")]
fn dec<const NR: usize, const V: usize>(k: &[__m512i; 15], mut x: [__m512i; V]) -> [__m512i; V] {
    for r in 1..NR {
        x = x.map(|v| _mm512_aesdec_epi128(v, k[r]));
    }
    x
}

// ---------------------------------------------------------------------------------------------
// ECB

#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,vaes,aes,avx2,sse4.2")]
fn ecb_tail<const NR: usize, const V: usize>(k: &[__m512i; 15], de: bool, buf: &mut [u8]) {
    let x: [__m512i; V] = core::array::from_fn(|i| _mm512_xor_si512(load_masked(buf, i), k[0]));
    if de {
        let x = dec::<NR, V>(k, x);
        for (i, v) in x.into_iter().enumerate() {
            store_masked(buf, i, _mm512_aesdeclast_epi128(v, k[NR]));
        }
    } else {
        let x = enc::<NR, V>(k, x);
        for (i, v) in x.into_iter().enumerate() {
            store_masked(buf, i, _mm512_aesenclast_epi128(v, k[NR]));
        }
    }
}

#[target_feature(enable = "avx512f,avx512bw,avx512vl,vaes,aes,avx2,sse4.2")]
fn ecb_enc<const NR: usize>(rk: &Keys, buf: &mut [u8]) {
    let k = keys::<NR>(&rk.enc);
    let mut chunks = buf.chunks_exact_mut(VBYTES * VECS);
    for c in &mut chunks {
        let x: [__m512i; VECS] = core::array::from_fn(|i| _mm512_xor_si512(loadz(c, i), k[0]));
        let x = enc::<NR, VECS>(&k, x);
        for (i, v) in x.into_iter().enumerate() {
            storez(c, i, _mm512_aesenclast_epi128(v, k[NR]));
        }
    }
    let rest = chunks.into_remainder();
    by_width!(rest.len().div_ceil(VBYTES), ecb_tail::<NR>(&k, false, rest));
}

#[target_feature(enable = "avx512f,avx512bw,avx512vl,vaes,aes,avx2,sse4.2")]
fn ecb_dec<const NR: usize>(rk: &Keys, buf: &mut [u8]) {
    let k = dec_keys::<NR>(rk);
    let mut chunks = buf.chunks_exact_mut(VBYTES * VECS);
    for c in &mut chunks {
        let x: [__m512i; VECS] = core::array::from_fn(|i| _mm512_xor_si512(loadz(c, i), k[0]));
        let x = dec::<NR, VECS>(&k, x);
        for (i, v) in x.into_iter().enumerate() {
            storez(c, i, _mm512_aesdeclast_epi128(v, k[NR]));
        }
    }
    let rest = chunks.into_remainder();
    by_width!(rest.len().div_ceil(VBYTES), ecb_tail::<NR>(&k, true, rest));
}

// ---------------------------------------------------------------------------------------------
// CBC. Encryption is one serial chain: the xmm AES-NI kernel is already at the latency bound.

pub(crate) use super::aesni::cbc_encrypt;

/// CBC decryption: the chaining value of each block is the previous ciphertext block, built
/// in registers with VALIGNQ from the current and previous ciphertext vectors (no reloads, so
/// in-place operation is safe).
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,vaes,aes,avx2,sse4.2")]
fn cbc_dec_batch<const NR: usize, const V: usize>(
    k: &[__m512i; 15],
    carry: &mut __m512i,
    c: &mut [u8],
    masked: bool,
) {
    let ct: [__m512i; V] = core::array::from_fn(|i| {
        if masked {
            load_masked(c, i)
        } else {
            loadz(c, i)
        }
    });
    let x = dec::<NR, V>(k, ct.map(|v| _mm512_xor_si512(v, k[0])));
    let mut prev = *carry;
    for i in 0..V {
        let chain = _mm512_alignr_epi64::<6>(ct[i], prev);
        let p = _mm512_aesdeclast_epi128(x[i], _mm512_xor_si512(k[NR], chain));
        if masked {
            store_masked(c, i, p);
        } else {
            storez(c, i, p);
        }
        prev = ct[i];
    }
    *carry = prev;
}

#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,vaes,aes,avx2,sse4.2")]
fn cbc_dec_tail<const NR: usize, const V: usize>(
    k: &[__m512i; 15],
    carry: &mut __m512i,
    c: &mut [u8],
) {
    cbc_dec_batch::<NR, V>(k, carry, c, true)
}

#[target_feature(enable = "avx512f,avx512bw,avx512vl,vaes,aes,avx2,sse4.2")]
fn cbc_dec<const NR: usize>(rk: &Keys, iv: &mut [u8; 16], buf: &mut [u8]) {
    if buf.is_empty() {
        return;
    }
    let k = dec_keys::<NR>(rk);
    let last: [u8; 16] = buf[buf.len() - 16..].try_into().unwrap();
    // The previous ciphertext block lives in lane 3 of `carry`.
    let mut carry = _mm512_broadcast_i32x4(load(iv));
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

/// Blocks per full batch.
const BATCH: u64 = (VECS * 4) as u64;

/// Per-call selector words `W_k` (see `aesni` "CTR counter blocks"): vector `i` lane `j` is
/// block `k = 4i + j` of a batch, `u = r + k`. Vector arithmetic only: `r` is secret.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,vaes,aes,avx2,sse4.2")]
fn ctr_select<const V: usize>(r: u64) -> [__m512i; V] {
    let r = _mm512_set1_epi64(r as i64);
    let low = ((BATCH - 1) << 56) as i64;
    // The low bits of byte 15 live in the high qword of each 128-bit lane.
    let low_bits = _mm512_set_epi64(low, 0, low, 0, low, 0, low, 0);
    core::array::from_fn(|i| {
        let k = 4 * i as i64;
        let u = _mm512_add_epi64(
            r,
            _mm512_set_epi64(k + 3, k + 3, k + 2, k + 2, k + 1, k + 1, k, k),
        );
        let m = _mm512_sub_epi64(
            _mm512_setzero_si512(),
            _mm512_srli_epi64::<{ BATCH.trailing_zeros() }>(u),
        );
        // low_bits ? (u << 56) : m
        _mm512_ternarylogic_epi64::<0xD8>(m, _mm512_slli_epi64::<56>(u), low_bits)
    })
}

#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,vaes,aes,avx2,sse4.2")]
fn ctr_batch<const NR: usize, const V: usize, const MASKED: bool>(
    k: &[__m512i; 15],
    w: &[__m512i; VECS],
    a: u128,
    c: &mut [u8],
) {
    let ((lo, hi), (dlo, dhi)) = super::aesni::ctr_batch_words(a, BATCH);
    let av = _mm512_xor_si512(_mm512_broadcast_i32x4(_mm_set_epi64x(hi, lo)), k[0]);
    let dv = _mm512_broadcast_i32x4(_mm_set_epi64x(dhi, dlo));
    // One VPTERNLOGQ per vector: A ^ (D' & W_i).
    let x: [__m512i; V] = core::array::from_fn(|i| _mm512_ternarylogic_epi64::<0x78>(av, dv, w[i]));
    // 32 zmm registers hold all round keys, the selectors and 8 vectors: no need for the
    // per-round key loads of the ymm/xmm kernels.
    let x = enc::<NR, V>(k, x);
    for (i, v) in x.into_iter().enumerate() {
        let d = if MASKED {
            load_masked(c, i)
        } else {
            loadz(c, i)
        };
        let out = _mm512_aesenclast_epi128(v, _mm512_xor_si512(k[NR], d));
        if MASKED {
            store_masked(c, i, out);
        } else {
            storez(c, i, out);
        }
    }
}

#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,vaes,aes,avx2,sse4.2")]
fn ctr_tail<const NR: usize, const V: usize>(
    k: &[__m512i; 15],
    w: &[__m512i; VECS],
    a: u128,
    c: &mut [u8],
) {
    ctr_batch::<NR, V, true>(k, w, a, c)
}

#[target_feature(enable = "avx512f,avx512bw,avx512vl,vaes,aes,avx2,sse4.2")]
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
// SAFETY (all): `Backend::Vaes512` dispatches here only after
// `Aes::with_backend` checked AVX-512F/BW/VL, VAES, AVX2, AES-NI and SSE4.2 (`is_available`).

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
