//! [`Vector`] for ymm registers (AVX2 + VAES): 2 blocks a register, and the `vaes256` entry
//! points that instantiate the generic kernels at this width.

use core::arch::asm;
use core::arch::x86_64::*;

use super::{Vector, by_nr, by_nr_seal, gcm};
use crate::backend::aesni::Keys;

impl Vector for __m256i {
    const BLOCKS: usize = 2;

    #[inline(always)]
    unsafe fn load(p: *const u8) -> Self {
        // SAFETY: the caller passes 32 readable bytes.
        unsafe { _mm256_loadu_si256(p.cast()) }
    }
    #[inline(always)]
    unsafe fn store(p: *mut u8, v: Self) {
        // SAFETY: the caller passes 32 writable bytes.
        unsafe { _mm256_storeu_si256(p.cast(), v) }
    }
    #[inline(always)]
    unsafe fn load_part(p: *const u8, blocks: usize) -> Self {
        debug_assert_eq!(blocks, 1);
        // SAFETY: one block (16 bytes) is readable at `p`.
        unsafe { _mm256_zextsi128_si256(_mm_loadu_si128(p.cast())) }
    }
    #[inline(always)]
    unsafe fn store_part(p: *mut u8, blocks: usize, v: Self) {
        debug_assert_eq!(blocks, 1);
        // SAFETY: one block (16 bytes) is writable at `p`.
        unsafe { _mm_storeu_si128(p.cast(), _mm256_castsi256_si128(v)) }
    }
    #[inline(always)]
    unsafe fn round_key(k: &[u8; 16]) -> Self {
        // SAFETY: forwarded (AVX2).
        unsafe { broadcast_load(k) }
    }
    #[inline(always)]
    unsafe fn splat(x: __m128i) -> Self {
        // SAFETY: AVX2 (the caller's CPU has it).
        unsafe { _mm256_broadcastsi128_si256(x) }
    }
    #[inline(always)]
    unsafe fn splat_qwords(q: &[u64; 2]) -> Self {
        // SAFETY: forwarded (AVX2).
        unsafe { _mm256_blend_epi32::<0b1100_1100>(qword_load(&q[0]), qword_load(&q[1])) }
    }
    #[inline(always)]
    unsafe fn zero() -> Self {
        // SAFETY: AVX (the caller's CPU has it).
        unsafe { _mm256_setzero_si256() }
    }
    #[inline(always)]
    unsafe fn xor(a: Self, b: Self) -> Self {
        // SAFETY: AVX2.
        unsafe { _mm256_xor_si256(a, b) }
    }
    #[inline(always)]
    unsafe fn xor_and(a: Self, b: Self, c: Self) -> Self {
        // SAFETY: AVX2.
        unsafe { _mm256_xor_si256(a, _mm256_and_si256(b, c)) }
    }
    #[inline(always)]
    unsafe fn aesenc(x: Self, k: Self) -> Self {
        // SAFETY: VAES.
        unsafe { _mm256_aesenc_epi128(x, k) }
    }
    #[inline(always)]
    unsafe fn aesenclast(x: Self, k: Self) -> Self {
        // SAFETY: VAES.
        unsafe { _mm256_aesenclast_epi128(x, k) }
    }
    #[inline(always)]
    unsafe fn aesdec(x: Self, k: Self) -> Self {
        // SAFETY: VAES.
        unsafe { _mm256_aesdec_epi128(x, k) }
    }
    #[inline(always)]
    unsafe fn aesdeclast(x: Self, k: Self) -> Self {
        // SAFETY: VAES.
        unsafe { _mm256_aesdeclast_epi128(x, k) }
    }
    #[inline(always)]
    unsafe fn prev_blocks(prev: Self, cur: Self) -> Self {
        // SAFETY: AVX2. [prev.hi, cur.lo].
        unsafe { _mm256_permute2x128_si256::<0x21>(prev, cur) }
    }
    #[inline(always)]
    unsafe fn ctr_select(r: u64, i: usize, n: u64) -> Self {
        // The batch is always `VECS` registers here: the shift below needs it as a constant.
        const BATCH: u64 = (super::VECS * 2) as u64;
        debug_assert_eq!(n, BATCH);
        // SAFETY: AVX2.
        unsafe {
            let r = _mm256_set1_epi64x(r as i64);
            let low = ((BATCH - 1) << 56) as i64;
            // The low bits of byte 15 live in the high qword of each 128-bit lane.
            let low_bits = _mm256_set_epi64x(low, 0, low, 0);
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
        }
    }
    #[inline(always)]
    unsafe fn clmul<const IMM: i32>(a: Self, b: Self) -> Self {
        // SAFETY: VPCLMULQDQ (the caller's CPU has it).
        unsafe { _mm256_clmulepi64_epi128::<IMM>(a, b) }
    }
    #[inline(always)]
    unsafe fn shuffle_bytes(a: Self, idx: Self) -> Self {
        // SAFETY: AVX2.
        unsafe { _mm256_shuffle_epi8(a, idx) }
    }
    #[inline(always)]
    unsafe fn add32(a: Self, b: Self) -> Self {
        // SAFETY: AVX2.
        unsafe { _mm256_add_epi32(a, b) }
    }
    #[inline(always)]
    unsafe fn swap_halves(a: Self) -> Self {
        // SAFETY: AVX2.
        unsafe { _mm256_shuffle_epi32::<0x4e>(a) }
    }
    #[inline(always)]
    unsafe fn zext128(x: __m128i) -> Self {
        // SAFETY: AVX.
        unsafe { _mm256_zextsi128_si256(x) }
    }
    #[inline(always)]
    unsafe fn fold128(v: Self) -> __m128i {
        // SAFETY: AVX2.
        unsafe { _mm_xor_si128(_mm256_castsi256_si128(v), _mm256_extracti128_si256::<1>(v)) }
    }
    #[inline(always)]
    unsafe fn load_key(p: *const u8) -> Self {
        // SAFETY: forwarded (32 readable bytes, AVX2).
        unsafe { key_load(p) }
    }
}

/// VBROADCASTI128 from memory, as inline assembly so that LLVM keeps the load where it is
/// written (see [`Vector::round_key`]). `readonly` without `pure`: not hoisted, not merged.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn broadcast_load(k: &[u8; 16]) -> __m256i {
    let v: __m256i;
    // SAFETY: `k` is 16 readable bytes and VBROADCASTI128 reads exactly those; AVX2 is enabled.
    unsafe {
        asm!(
            "vbroadcasti128 {v}, xmmword ptr [{p}]",
            v = out(ymm_reg) v,
            p = in(reg) k.as_ptr(),
            options(nostack, preserves_flags, readonly),
        )
    };
    v
}

/// VMOVDQU of 32 bytes of key material, kept in place like [`broadcast_load`].
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn key_load(p: *const u8) -> __m256i {
    let v: __m256i;
    // SAFETY: the caller passes 32 readable bytes; AVX is enabled.
    unsafe {
        asm!(
            "vmovdqu {v}, ymmword ptr [{p}]",
            v = out(ymm_reg) v,
            p = in(reg) p,
            options(nostack, preserves_flags, readonly),
        )
    };
    v
}

/// VPBROADCASTQ from memory (a load, no shuffle), kept in place like [`broadcast_load`].
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn qword_load(q: &u64) -> __m256i {
    let v: __m256i;
    // SAFETY: `q` is 8 readable bytes and VPBROADCASTQ reads exactly those; AVX2 is enabled.
    unsafe {
        asm!(
            "vpbroadcastq {v}, qword ptr [{p}]",
            v = out(ymm_reg) v,
            p = in(reg) q as *const u64,
            options(nostack, preserves_flags, readonly),
        )
    };
    v
}

// Entry points, compiled with the ymm features. SAFETY (all): `Backend::Vaes256` (`vaes256.rs`)
// dispatches here only after `Aes::with_backend` checked AVX2, VAES, AES-NI and SSE4.2 (`is_available`).

#[target_feature(enable = "avx2,vaes,aes,sse4.2")]
fn ecb_enc<const NR: usize>(k: &Keys, buf: &mut [u8]) {
    // SAFETY: the target features above.
    unsafe { super::ecb_enc::<__m256i, NR, { super::XMM_VECS }>(k, buf) }
}
#[target_feature(enable = "avx2,vaes,aes,sse4.2")]
fn ecb_dec<const NR: usize>(k: &Keys, buf: &mut [u8]) {
    // SAFETY: the target features above.
    unsafe { super::ecb_dec::<__m256i, NR, { super::XMM_VECS }>(k, buf) }
}
#[target_feature(enable = "avx2,vaes,aes,sse4.2")]
fn cbc_dec<const NR: usize>(k: &Keys, iv: &mut [u8; 16], buf: &mut [u8]) {
    // SAFETY: the target features above.
    unsafe { super::cbc_dec::<__m256i, NR, { super::VECS }>(k, iv, buf) }
}
#[target_feature(enable = "avx2,vaes,aes,sse4.2")]
fn ctr<const NR: usize>(k: &Keys, c: u128, buf: &mut [u8]) {
    let p = buf.as_mut_ptr();
    // SAFETY: the target features above; `p` is `buf`, read and written in place.
    unsafe { super::ctr_b2b::<__m256i, NR>(k, c, p, p, buf.len()) }
}
#[target_feature(enable = "avx2,vaes,aes,sse4.2")]
fn ctr_b2b<const NR: usize>(k: &Keys, c: u128, src: &[u8], dst: &mut [u8]) {
    debug_assert_eq!(src.len(), dst.len());
    let len = src.len().min(dst.len());
    // SAFETY: the target features above; `src` and `dst` are distinct borrows (disjoint) of at
    // least `len` bytes.
    unsafe { super::ctr_b2b::<__m256i, NR>(k, c, src.as_ptr(), dst.as_mut_ptr(), len) }
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
/// `dst = src ^ keystream` (whole blocks, same length).
pub(crate) fn ctr_xor_b2b(k: &Keys, c: u128, src: &[u8], dst: &mut [u8]) {
    // SAFETY: see above.
    unsafe { by_nr!(k.rounds, ctr_b2b(k, c, src, dst)) }
}

// GCM entry points. SAFETY (all): a `gcm::Key` exists only where `GhashKey::empty` found the
// `vaes256` backend available (AVX2, VAES, AES-NI, SSE4.2) and VPCLMULQDQ + PCLMULQDQ present.

#[target_feature(enable = "avx2,vaes,vpclmulqdq,aes,pclmulqdq,sse4.2")]
fn gcm_seal_nr<const NR: usize>(
    k: &Keys,
    h: &gcm::Key,
    ctr: &[u8; 16],
    public: bool,
    acc: &mut u128,
    buf: &mut [u8],
) {
    // SAFETY: the target features above.
    unsafe { gcm::seal::<__m256i, NR, false, true>(k, h, ctr, public, acc, buf) }
}
#[target_feature(enable = "avx2,vaes,vpclmulqdq,aes,pclmulqdq,sse4.2")]
fn gcm_open_nr<const NR: usize>(
    k: &Keys,
    h: &gcm::Key,
    ctr: &[u8; 16],
    public: bool,
    acc: &mut u128,
    buf: &mut [u8],
) {
    // SAFETY: the target features above.
    unsafe { gcm::open::<__m256i, NR, false, true>(k, h, ctr, public, acc, buf) }
}
/// # Safety
/// As [`gcm_b2b`]; `io` is `src`, `dst` and their length, as raw pointers.
#[target_feature(enable = "avx2,vaes,vpclmulqdq,aes,pclmulqdq,sse4.2")]
unsafe fn gcm_b2b_nr<const NR: usize, const SEAL: bool>(
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
            gcm::seal_io::<__m256i, NR, false, true>(k, h, ctr, public, acc, io)
        } else {
            gcm::open_io::<__m256i, NR, false, true>(k, h, ctr, public, acc, io)
        }
    }
}
#[target_feature(enable = "avx2,vaes,vpclmulqdq,aes,pclmulqdq,sse4.2")]
fn ghash_inner(h: &gcm::Key, acc: &mut u128, data: &[u8]) {
    // SAFETY: the target features above.
    unsafe { gcm::ghash::<__m256i, false>(h, acc, data) }
}

/// Fused CTR32 + GHASH of the ciphertext, whole blocks (see [`gcm`]); `public`: the counter's
/// inc32 word is public (a 12-byte nonce; see [`gcm::seal`]).
pub(crate) fn gcm_seal(
    k: &Keys,
    h: &gcm::Key,
    ctr: &[u8; 16],
    public: bool,
    acc: &mut u128,
    buf: &mut [u8],
) {
    // SAFETY: see above.
    unsafe { by_nr!(k.rounds, gcm_seal_nr(k, h, ctr, public, acc, buf)) }
}
/// GHASH of the ciphertext fused with its CTR32 decryption, whole blocks (see [`gcm`]);
/// `public` as for [`gcm_seal`].
pub(crate) fn gcm_open(
    k: &Keys,
    h: &gcm::Key,
    ctr: &[u8; 16],
    public: bool,
    acc: &mut u128,
    buf: &mut [u8],
) {
    // SAFETY: see above.
    unsafe { by_nr!(k.rounds, gcm_open_nr(k, h, ctr, public, acc, buf)) }
}
/// [`gcm_seal`] (`seal`) or [`gcm_open`] from `src` into `dst` (whole blocks, the same
/// length, separate buffers) in one pass.
#[allow(clippy::too_many_arguments)]
pub(crate) fn gcm_b2b(
    k: &Keys,
    h: &gcm::Key,
    ctr: &[u8; 16],
    public: bool,
    acc: &mut u128,
    src: &[u8],
    dst: &mut [u8],
    seal: bool,
) {
    debug_assert_eq!(src.len(), dst.len());
    let io = (src.as_ptr(), dst.as_mut_ptr(), src.len().min(dst.len()));
    // SAFETY: see above; `src` and `dst` are distinct borrows (disjoint) of `io.2` bytes or
    // more.
    unsafe { by_nr_seal!(k.rounds, seal, gcm_b2b_nr(k, h, ctr, public, acc, io)) }
}
/// GHASH only, whole blocks.
pub(crate) fn ghash(h: &gcm::Key, acc: &mut u128, data: &[u8]) {
    // SAFETY: see above.
    unsafe { ghash_inner(h, acc, data) }
}
