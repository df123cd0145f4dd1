//! [`Vector`] for zmm registers (AVX-512F/BW/VL + VAES): 4 blocks a register, and entry points
//! that instantiate the generic kernels at this width.
//!
//! The `vaes512` backend's kernels since session 9 (tested and measured on an Intel AVX-512
//! guest; see [`super`]); the tests in [`super`] run them wherever the CPU has AVX-512.

use core::arch::x86_64::*;

use super::{Vector, by_nr, by_nr_seal, gcm};
use crate::backend::aesni::Keys;
pub(crate) use crate::backend::aesni::cbc_encrypt;

impl Vector for __m512i {
    const BLOCKS: usize = 4;

    #[inline(always)]
    unsafe fn load(p: *const u8) -> Self {
        // SAFETY: the caller passes 64 readable bytes.
        unsafe { _mm512_loadu_si512(p.cast()) }
    }
    #[inline(always)]
    unsafe fn store(p: *mut u8, v: Self) {
        // SAFETY: the caller passes 64 writable bytes.
        unsafe { _mm512_storeu_si512(p.cast(), v) }
    }
    #[inline(always)]
    unsafe fn load_part(p: *const u8, blocks: usize) -> Self {
        debug_assert!((1..4).contains(&blocks));
        // SAFETY: `blocks` blocks are readable at `p`; the masked load reads only those qwords
        // and suppresses faults on the others (AVX-512F).
        unsafe { _mm512_maskz_loadu_epi64(((1u32 << (2 * blocks)) - 1) as __mmask8, p.cast()) }
    }
    #[inline(always)]
    unsafe fn store_part(p: *mut u8, blocks: usize, v: Self) {
        debug_assert!((1..4).contains(&blocks));
        // SAFETY: `blocks` blocks are writable at `p`; the masked store writes only those.
        unsafe { _mm512_mask_storeu_epi64(p.cast(), ((1u32 << (2 * blocks)) - 1) as __mmask8, v) }
    }
    #[inline(always)]
    unsafe fn round_key(k: &[u8; 16]) -> Self {
        // 32 zmm registers hold every round key, the selectors and 8 vectors: a plain broadcast
        // that LLVM may keep in a register.
        // SAFETY: `k` is 16 readable bytes; AVX-512F.
        unsafe { _mm512_broadcast_i32x4(_mm_loadu_si128(k.as_ptr().cast())) }
    }
    #[inline(always)]
    unsafe fn splat(x: __m128i) -> Self {
        // SAFETY: AVX2 (the caller's CPU has it).
        unsafe { _mm512_broadcast_i32x4(x) }
    }
    #[inline(always)]
    unsafe fn splat_qwords(q: &[u64; 2]) -> Self {
        // SAFETY: AVX-512F.
        unsafe { _mm512_broadcast_i32x4(_mm_set_epi64x(q[1] as i64, q[0] as i64)) }
    }
    #[inline(always)]
    unsafe fn zero() -> Self {
        // SAFETY: AVX (the caller's CPU has it).
        unsafe { _mm512_setzero_si512() }
    }
    #[inline(always)]
    unsafe fn xor(a: Self, b: Self) -> Self {
        // SAFETY: AVX2.
        unsafe { _mm512_xor_si512(a, b) }
    }
    #[inline(always)]
    unsafe fn xor_and(a: Self, b: Self, c: Self) -> Self {
        // SAFETY: AVX-512F. One VPTERNLOGQ: A ^ (B & C).
        unsafe { _mm512_ternarylogic_epi64::<0x78>(a, b, c) }
    }
    #[inline(always)]
    unsafe fn xor3(a: Self, b: Self, c: Self) -> Self {
        // SAFETY: AVX-512F. One VPTERNLOGQ: A ^ B ^ C.
        unsafe { _mm512_ternarylogic_epi64::<0x96>(a, b, c) }
    }
    #[inline(always)]
    unsafe fn aesenc(x: Self, k: Self) -> Self {
        // SAFETY: VAES.
        unsafe { _mm512_aesenc_epi128(x, k) }
    }
    #[inline(always)]
    unsafe fn aesenclast(x: Self, k: Self) -> Self {
        // SAFETY: VAES.
        unsafe { _mm512_aesenclast_epi128(x, k) }
    }
    #[inline(always)]
    unsafe fn aesdec(x: Self, k: Self) -> Self {
        // SAFETY: VAES.
        unsafe { _mm512_aesdec_epi128(x, k) }
    }
    #[inline(always)]
    unsafe fn aesdeclast(x: Self, k: Self) -> Self {
        // SAFETY: VAES.
        unsafe { _mm512_aesdeclast_epi128(x, k) }
    }
    #[inline(always)]
    unsafe fn prev_blocks(prev: Self, cur: Self) -> Self {
        // SAFETY: AVX-512F. [prev.3, cur.0, cur.1, cur.2].
        unsafe { _mm512_alignr_epi64::<6>(cur, prev) }
    }
    #[inline(always)]
    unsafe fn ctr_select(r: u64, i: usize, n: u64) -> Self {
        // The batch is always `VECS` registers here: the shift below needs it as a constant.
        const BATCH: u64 = (super::VECS * 4) as u64;
        debug_assert_eq!(n, BATCH);
        // SAFETY: AVX-512F.
        unsafe {
            let r = _mm512_set1_epi64(r as i64);
            let low = ((BATCH - 1) << 56) as i64;
            let low_bits = _mm512_set_epi64(low, 0, low, 0, low, 0, low, 0);
            let k = 4 * i as i64;
            let u = _mm512_add_epi64(
                r,
                _mm512_set_epi64(k + 3, k + 3, k + 2, k + 2, k + 1, k + 1, k, k),
            );
            let m = _mm512_sub_epi64(
                _mm512_setzero_si512(),
                _mm512_srli_epi64::<{ BATCH.trailing_zeros() }>(u),
            );
            _mm512_ternarylogic_epi64::<0xD8>(m, _mm512_slli_epi64::<56>(u), low_bits)
        }
    }
    #[inline(always)]
    unsafe fn clmul<const IMM: i32>(a: Self, b: Self) -> Self {
        // SAFETY: VPCLMULQDQ (the caller's CPU has it).
        unsafe { _mm512_clmulepi64_epi128::<IMM>(a, b) }
    }
    #[inline(always)]
    unsafe fn shuffle_bytes(a: Self, idx: Self) -> Self {
        // SAFETY: AVX-512BW.
        unsafe { _mm512_shuffle_epi8(a, idx) }
    }
    #[inline(always)]
    unsafe fn add32(a: Self, b: Self) -> Self {
        // SAFETY: AVX-512F.
        unsafe { _mm512_add_epi32(a, b) }
    }
    #[inline(always)]
    unsafe fn swap_halves(a: Self) -> Self {
        // SAFETY: AVX-512F.
        unsafe { _mm512_shuffle_epi32::<0x4e>(a) }
    }
    #[inline(always)]
    unsafe fn zext128(x: __m128i) -> Self {
        // SAFETY: AVX-512F.
        unsafe { _mm512_zextsi128_si512(x) }
    }
    #[inline(always)]
    unsafe fn fold128(v: Self) -> __m128i {
        // SAFETY: AVX-512F.
        unsafe {
            let a = _mm512_castsi512_si256(v);
            let b = _mm512_extracti64x4_epi64::<1>(v);
            let y = _mm256_xor_si256(a, b);
            _mm_xor_si128(_mm256_castsi256_si128(y), _mm256_extracti128_si256::<1>(y))
        }
    }
    #[inline(always)]
    unsafe fn load_key(p: *const u8) -> Self {
        // SAFETY: the caller passes 64 readable bytes.
        unsafe { _mm512_loadu_si512(p.cast()) }
    }
}

// Entry points, compiled with the zmm features. SAFETY (all): callers (`Backend::Vaes512` in
// the dispatch, the tests) reach them only after checking AVX-512F/BW/VL, VAES, AVX2, AES-NI
// and SSE4.2 (`Backend::Vaes512.is_available()`).

#[target_feature(enable = "avx512f,avx512bw,avx512vl,vaes,aes,avx2,sse4.2")]
fn ecb_enc<const NR: usize>(k: &Keys, buf: &mut [u8]) {
    // SAFETY: the target features above.
    unsafe { super::ecb_enc::<__m512i, NR, { super::VECS }>(k, buf) }
}
#[target_feature(enable = "avx512f,avx512bw,avx512vl,vaes,aes,avx2,sse4.2")]
fn ecb_dec<const NR: usize>(k: &Keys, buf: &mut [u8]) {
    // SAFETY: the target features above.
    unsafe { super::ecb_dec::<__m512i, NR, { super::VECS }>(k, buf) }
}
#[target_feature(enable = "avx512f,avx512bw,avx512vl,vaes,aes,avx2,sse4.2")]
fn cbc_dec<const NR: usize>(k: &Keys, iv: &mut [u8; 16], buf: &mut [u8]) {
    // SAFETY: the target features above.
    unsafe { super::cbc_dec::<__m512i, NR, { super::VECS }>(k, iv, buf) }
}
#[target_feature(enable = "avx512f,avx512bw,avx512vl,vaes,aes,avx2,sse4.2")]
fn ctr<const NR: usize>(k: &Keys, c: u128, buf: &mut [u8]) {
    // SAFETY: the target features above.
    unsafe { super::ctr::<__m512i, NR>(k, c, buf) }
}

#[target_feature(enable = "avx512f,avx512bw,avx512vl,vaes,aes,avx2,sse4.2")]
fn ctr_b2b<const NR: usize>(k: &Keys, c: u128, src: &[u8], dst: &mut [u8]) {
    debug_assert_eq!(src.len(), dst.len());
    let len = src.len().min(dst.len());
    // SAFETY: the target features above; `src` and `dst` are distinct borrows (disjoint) of at
    // least `len` bytes.
    unsafe { super::ctr_raw::<__m512i, NR>(k, c, src.as_ptr(), dst.as_mut_ptr(), len) }
}

pub(crate) fn encrypt_blocks(k: &Keys, buf: &mut [u8]) {
    // SAFETY: see above.
    unsafe { by_nr!(k.rounds, ecb_enc(k, buf)) }
}
pub(crate) fn decrypt_blocks(k: &Keys, buf: &mut [u8]) {
    // SAFETY: see above.
    unsafe { by_nr!(k.rounds, ecb_dec(k, buf)) }
}
pub(crate) fn cbc_decrypt(k: &Keys, iv: &mut [u8; 16], buf: &mut [u8]) {
    // SAFETY: see above.
    unsafe { by_nr!(k.rounds, cbc_dec(k, iv, buf)) }
}
pub(crate) fn ctr_xor(k: &Keys, c: u128, buf: &mut [u8]) {
    // SAFETY: see above.
    unsafe { by_nr!(k.rounds, ctr(k, c, buf)) }
}
/// `dst = src ^ keystream` (whole blocks, same length), read and written in one pass.
pub(crate) fn ctr_xor_b2b(k: &Keys, c: u128, src: &[u8], dst: &mut [u8]) {
    // SAFETY: see above.
    unsafe { by_nr!(k.rounds, ctr_b2b(k, c, src, dst)) }
}

// GCM entry points (`backend::vclmul_seal_open`). SAFETY (all): callers check
// `Backend::Vaes512.is_available()` and VPCLMULQDQ + PCLMULQDQ first. `SB` is the tuning
// (see [`gcm`], "Width"): Intel's (schoolbook, spread) or AMD's (Karatsuba, ciphertext kept in
// registers), chosen by vendor in [`gcm_seal`] / [`gcm_open`].

#[target_feature(enable = "avx512f,avx512bw,avx512vl,vaes,vpclmulqdq,aes,pclmulqdq,avx2,sse4.2")]
fn gcm_seal_nr<const NR: usize, const SB: bool>(
    k: &Keys,
    h: &gcm::Key,
    ctr: &[u8; 16],
    public: bool,
    acc: &mut u128,
    buf: &mut [u8],
) {
    // SAFETY: the target features above.
    unsafe { gcm::seal::<__m512i, NR, SB, true>(k, h, ctr, public, acc, buf) }
}
/// [`gcm_seal_nr`] with 16-block batches: AMD, messages under [`gcm::WIDE_MIN`] bytes (its own
/// function, so that its stack frame is not added to the 32-block kernel's).
#[target_feature(enable = "avx512f,avx512bw,avx512vl,vaes,vpclmulqdq,aes,pclmulqdq,avx2,sse4.2")]
fn gcm_seal_short_nr<const NR: usize, const SB: bool>(
    k: &Keys,
    h: &gcm::Key,
    ctr: &[u8; 16],
    acc: &mut u128,
    buf: &mut [u8],
) {
    // SAFETY: the target features above.
    unsafe { gcm::seal::<__m512i, NR, SB, false>(k, h, ctr, false, acc, buf) }
}
/// [`gcm_open_nr`] with 16-block batches (as [`gcm_seal_short_nr`]).
#[target_feature(enable = "avx512f,avx512bw,avx512vl,vaes,vpclmulqdq,aes,pclmulqdq,avx2,sse4.2")]
fn gcm_open_short_nr<const NR: usize, const SB: bool>(
    k: &Keys,
    h: &gcm::Key,
    ctr: &[u8; 16],
    public: bool,
    acc: &mut u128,
    buf: &mut [u8],
) {
    // SAFETY: the target features above.
    unsafe { gcm::open::<__m512i, NR, SB, false>(k, h, ctr, public, acc, buf) }
}
#[target_feature(enable = "avx512f,avx512bw,avx512vl,vaes,vpclmulqdq,aes,pclmulqdq,avx2,sse4.2")]
fn gcm_open_nr<const NR: usize, const SB: bool>(
    k: &Keys,
    h: &gcm::Key,
    ctr: &[u8; 16],
    public: bool,
    acc: &mut u128,
    buf: &mut [u8],
) {
    // SAFETY: the target features above.
    unsafe { gcm::open::<__m512i, NR, SB, true>(k, h, ctr, public, acc, buf) }
}
#[cfg(test)]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,vaes,vpclmulqdq,aes,pclmulqdq,avx2,sse4.2")]
fn ghash_inner<const SB: bool>(h: &gcm::Key, acc: &mut u128, data: &[u8]) {
    // SAFETY: the target features above.
    unsafe { gcm::ghash::<__m512i, SB>(h, acc, data) }
}

/// Runs `$f::<NR, $sb>` with `NR` the schedule's round count as a const.
macro_rules! by_nr_tuned {
    ($rounds:expr, $sb:tt, $f:ident ( $($a:expr),* )) => {
        match $rounds {
            10 => $f::<10, $sb>($($a),*),
            12 => $f::<12, $sb>($($a),*),
            _ => $f::<14, $sb>($($a),*),
        }
    };
}

/// [`by_nr_tuned`] with `SB` (Intel's tuning) unless the CPU is AMD's.
macro_rules! by_nr_vendor {
    ($rounds:expr, $f:ident ( $($a:expr),* )) => {
        if crate::cpu::amd_like() {
            by_nr_tuned!($rounds, false, $f($($a),*))
        } else {
            by_nr_tuned!($rounds, true, $f($($a),*))
        }
    };
}

/// Fused CTR32 + GHASH of the ciphertext, whole blocks (see [`gcm`]). `public`: the counter's
/// inc32 word is public (a 12-byte nonce), so Intel's loop may align it with a short head and
/// then build its counters with XORs (`gcm::seal`); false where it may be secret.
///
/// # Safety
/// The CPU must have AVX-512F/BW/VL, VAES, VPCLMULQDQ, PCLMULQDQ, AES-NI and SSE4.2.
pub(crate) unsafe fn gcm_seal(
    k: &Keys,
    h: &gcm::Key,
    ctr: &[u8; 16],
    public: bool,
    acc: &mut u128,
    buf: &mut [u8],
) {
    // SAFETY: the caller checked the features.
    unsafe {
        if crate::cpu::amd_like() && (buf.len() < gcm::WIDE_MIN || !h.wide()) {
            by_nr_tuned!(k.rounds, false, gcm_seal_short_nr(k, h, ctr, acc, buf))
        } else {
            by_nr_vendor!(k.rounds, gcm_seal_nr(k, h, ctr, public, acc, buf))
        }
    }
}
/// GHASH of the ciphertext fused with its CTR32 decryption, whole blocks. `public` as for
/// [`gcm_seal`] (Intel's loop then builds the counters of batches that do not carry out of
/// the last byte with one byte swap).
///
/// # Safety
/// As for [`gcm_seal`].
pub(crate) unsafe fn gcm_open(
    k: &Keys,
    h: &gcm::Key,
    ctr: &[u8; 16],
    public: bool,
    acc: &mut u128,
    buf: &mut [u8],
) {
    // SAFETY: the caller checked the features.
    unsafe {
        if crate::cpu::amd_like() && (buf.len() < gcm::WIDE_MIN || !h.wide()) {
            by_nr_tuned!(
                k.rounds,
                false,
                gcm_open_short_nr(k, h, ctr, public, acc, buf)
            )
        } else {
            by_nr_vendor!(k.rounds, gcm_open_nr(k, h, ctr, public, acc, buf))
        }
    }
}

/// # Safety
/// As [`gcm_b2b`]; `io` is `src`, `dst` and their length, as raw pointers.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,vaes,vpclmulqdq,aes,pclmulqdq,avx2,sse4.2")]
unsafe fn gcm_b2b_nr<const NR: usize, const SEAL: bool, const SB: bool, const W: bool>(
    k: &Keys,
    h: &gcm::Key,
    ctr: &[u8; 16],
    public: bool,
    acc: &mut u128,
    io: (*const u8, *mut u8, usize),
) {
    // SAFETY: the target features above; the caller's `src` and `dst`, disjoint, `io.2`
    // bytes each.
    unsafe {
        if SEAL {
            gcm::seal_io::<__m512i, NR, SB, W>(k, h, ctr, public, acc, io)
        } else {
            gcm::open_io::<__m512i, NR, SB, W>(k, h, ctr, public, acc, io)
        }
    }
}

/// [`gcm_seal`] (`seal`) or [`gcm_open`] from `src` into `dst` (whole blocks, the same
/// length) in one pass, with the tuning of the CPU's vendor (as [`gcm_seal`] picks it).
///
/// # Safety
/// As [`gcm_seal`].
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn gcm_b2b(
    k: &Keys,
    h: &gcm::Key,
    ctr: &[u8; 16],
    public: bool,
    acc: &mut u128,
    src: &[u8],
    dst: &mut [u8],
    seal: bool,
) {
    // SAFETY: the caller checked the features.
    unsafe {
        if crate::cpu::amd_like() {
            gcm_b2b_tuned::<false>(k, h, ctr, public, acc, src, dst, seal)
        } else {
            gcm_b2b_tuned::<true>(k, h, ctr, public, acc, src, dst, seal)
        }
    }
}

/// [`gcm_b2b`] with the tuning chosen by the caller (the tests run both on any AVX-512 CPU).
///
/// # Safety
/// As for [`gcm_seal`].
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn gcm_b2b_tuned<const SB: bool>(
    k: &Keys,
    h: &gcm::Key,
    c: &[u8; 16],
    public: bool,
    a: &mut u128,
    src: &[u8],
    dst: &mut [u8],
    seal: bool,
) {
    debug_assert_eq!(src.len(), dst.len());
    let io = (src.as_ptr(), dst.as_mut_ptr(), src.len().min(dst.len()));
    // SAFETY: the caller checked the features; `src` and `dst` are distinct borrows
    // (disjoint) of `io.2` bytes or more.
    unsafe {
        if SB {
            by_nr_seal!(
                k.rounds,
                seal,
                gcm_b2b_nr::<true, true>(k, h, c, public, a, io)
            )
        } else if io.2 < gcm::WIDE_MIN || !h.wide() {
            by_nr_seal!(
                k.rounds,
                seal,
                gcm_b2b_nr::<false, false>(k, h, c, public, a, io)
            )
        } else {
            by_nr_seal!(
                k.rounds,
                seal,
                gcm_b2b_nr::<false, true>(k, h, c, public, a, io)
            )
        }
    }
}

/// [`gcm_seal`] / [`gcm_open`] with the tuning chosen by the caller, so that the tests run both
/// on any AVX-512 CPU, and GHASH alone (production hashes long AAD with the ymm kernel).
#[cfg(test)]
pub(crate) mod tuned {
    use super::*;

    /// # Safety
    /// As for [`gcm_seal`].
    pub(crate) unsafe fn seal<const SB: bool>(
        k: &Keys,
        h: &gcm::Key,
        c: &[u8; 16],
        public: bool,
        a: &mut u128,
        b: &mut [u8],
    ) {
        // SAFETY: the caller checked the features.
        unsafe {
            if !SB && (b.len() < gcm::WIDE_MIN || !h.wide()) {
                by_nr_tuned!(k.rounds, SB, gcm_seal_short_nr(k, h, c, a, b))
            } else {
                by_nr_tuned!(k.rounds, SB, gcm_seal_nr(k, h, c, public, a, b))
            }
        }
    }
    /// # Safety
    /// As for [`gcm_seal`].
    pub(crate) unsafe fn open<const SB: bool>(
        k: &Keys,
        h: &gcm::Key,
        c: &[u8; 16],
        public: bool,
        a: &mut u128,
        b: &mut [u8],
    ) {
        // SAFETY: the caller checked the features.
        unsafe {
            if !SB && (b.len() < gcm::WIDE_MIN || !h.wide()) {
                by_nr_tuned!(k.rounds, SB, gcm_open_short_nr(k, h, c, public, a, b))
            } else {
                by_nr_tuned!(k.rounds, SB, gcm_open_nr(k, h, c, public, a, b))
            }
        }
    }
    /// GHASH only, whole blocks.
    ///
    /// # Safety
    /// As for [`gcm_seal`].
    pub(crate) unsafe fn ghash<const SB: bool>(h: &gcm::Key, a: &mut u128, d: &[u8]) {
        // SAFETY: the caller checked the features.
        unsafe { ghash_inner::<SB>(h, a, d) }
    }
}
