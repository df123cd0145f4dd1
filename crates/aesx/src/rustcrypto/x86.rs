//! Inlined trait backends for `vaes512`/`vaes256` (ymm) and `aesni` (xmm): the mode's whole
//! loop runs inside one `#[target_feature]` function.
//!
//! The `cipher` traits hand the block cipher a closure (`f.call(&backend)`) that is the mode's
//! loop: the `ctr` crate's counter generation and keystream XOR, `cbc`'s chaining. Run through
//! the out-of-line ECB kernels ([`super::Kernels`]) that loop is compiled for baseline x86-64,
//! its counter blocks go to memory and are copied into the kernel's buffer. Here the closure
//! is called from inside a function compiled with the backend's features, and the per-block
//! and parallel-block methods are `#[inline(always)]`, so LLVM builds one loop: counters in
//! registers, the AES rounds, the XOR (the design of RustCrypto `aes` 0.9, whose x86 backends
//! work the same way). Same round-key layout as the kernels ([`crate::backend::aesni::Keys`]):
//! no second key schedule; the keys are broadcast to registers once per call.
//!
//! `vaes512` runs the ymm backend (session 9): every CPU with the `vaes512` backend has AVX2 and
//! VAES, VAES on ymm has the zmm block rate on the Intel AVX-512 guest this was measured on
//! (`aes-limit`), and there it took `Ctr128BE` at 16 KiB from 8.42 GB/s (the generic path: 32
//! blocks per call through the out-of-line kernels) to 12.35 (RustCrypto `aes` 7.0), 16 B from
//! 0.51 to 1.01 (README, "RustCrypto traits"). A zmm trait backend was not written.

#![allow(unsafe_code)]

use core::arch::x86_64::*;

use ::cipher::consts::{U8, U16};
use ::cipher::inout::InOut;
use ::cipher::{
    Block, BlockCipherDecBackend, BlockCipherDecClosure, BlockCipherEncBackend,
    BlockCipherEncClosure, BlockSizeUser, ParBlocks, ParBlocksSizeUser,
};

use crate::backend::{self, aesni};
use crate::{Aes, Backend};

/// Runs `f` on an inlined encryption backend if `aes` runs on `vaes512`, `vaes256` or `aesni`;
/// hands `f` back otherwise.
pub(super) fn encrypt<F: BlockCipherEncClosure<BlockSize = U16>>(aes: &Aes, f: F) -> Result<(), F> {
    let (b, backend::Keys::Hw(k)) = aes.kernels() else {
        return Err(f);
    };
    match b {
        // SAFETY: an `Aes` on `Vaes256` or `Vaes512` exists only after `Aes::with_backend`
        // checked that this CPU has AVX2, VAES, AES-NI and SSE4.2 (and AVX-512 for `Vaes512`;
        // `Backend::is_available`); on `Aesni`, AES-NI and SSE4.2.
        Backend::Vaes256 | Backend::Vaes512 => unsafe { v_enc(k.rounds, k, f) },
        // SAFETY: as above.
        Backend::Aesni => unsafe { x_enc(k.rounds, k, f) },
        _ => return Err(f),
    }
    Ok(())
}

/// Decryption twin of [`encrypt`].
pub(super) fn decrypt<F: BlockCipherDecClosure<BlockSize = U16>>(aes: &Aes, f: F) -> Result<(), F> {
    let (b, backend::Keys::Hw(k)) = aes.kernels() else {
        return Err(f);
    };
    match b {
        // SAFETY: see `encrypt`.
        Backend::Vaes256 | Backend::Vaes512 => unsafe { v_dec(k.rounds, k, f) },
        // SAFETY: see `encrypt`.
        Backend::Aesni => unsafe { x_dec(k.rounds, k, f) },
        _ => return Err(f),
    }
    Ok(())
}

// The entry points: one per backend, direction and round count, each compiled with the
// backend's features; `f.call` and everything it inlines (the mode's loop) is compiled inside.

macro_rules! entry {
    ($name:ident, $feat:literal, $closure:ident, $make:ident, $backend:ident) => {
        /// # Safety
        /// The CPU must have the features in the `target_feature` attribute.
        #[target_feature(enable = $feat)]
        unsafe fn $name<F: $closure<BlockSize = U16>>(nr: usize, k: &aesni::Keys, f: F) {
            match nr {
                10 => f.call(&$backend::<10>::$make(k)),
                12 => f.call(&$backend::<12>::$make(k)),
                _ => f.call(&$backend::<14>::$make(k)),
            }
        }
    };
}

entry!(
    v_enc,
    "avx2,vaes,aes,sse4.2",
    BlockCipherEncClosure,
    enc,
    Vaes
);
entry!(
    v_dec,
    "avx2,vaes,aes,sse4.2",
    BlockCipherDecClosure,
    dec,
    Vaes
);
entry!(x_enc, "aes,sse4.2", BlockCipherEncClosure, enc, Ni);
entry!(x_dec, "aes,sse4.2", BlockCipherDecClosure, dec, Ni);

// ---------------------------------------------------------------------------------------------
// VAES on ymm: 16 blocks (8 registers of two) per parallel call, the kernels' batch.

struct Vaes<const NR: usize> {
    k: [__m256i; 15],
}

impl<const NR: usize> Vaes<NR> {
    #[inline(always)]
    fn enc(rk: &aesni::Keys) -> Self {
        // SAFETY: only called from the `avx2,vaes` entry points (the CPU has the features).
        unsafe {
            let mut k = [_mm256_setzero_si256(); 15];
            for (i, kk) in k.iter_mut().enumerate().take(NR + 1) {
                *kk = _mm256_broadcastsi128_si256(aesni::load(&rk.enc[i]));
            }
            Vaes { k }
        }
    }

    #[inline(always)]
    fn dec(rk: &aesni::Keys) -> Self {
        // SAFETY: as `enc`.
        unsafe {
            let d = aesni::dec_keys::<NR>(&rk.enc);
            let mut k = [_mm256_setzero_si256(); 15];
            for (i, kk) in k.iter_mut().enumerate().take(NR + 1) {
                *kk = _mm256_broadcastsi128_si256(d[i]);
            }
            Vaes { k }
        }
    }

    /// The xmm half of round key `i`, for single blocks.
    #[inline(always)]
    fn k128(&self, i: usize) -> __m128i {
        // SAFETY: AVX is present (the entry points enable AVX2).
        unsafe { _mm256_castsi256_si128(self.k[i]) }
    }
}

impl<const NR: usize> BlockSizeUser for Vaes<NR> {
    type BlockSize = U16;
}

impl<const NR: usize> ParBlocksSizeUser for Vaes<NR> {
    type ParBlocksSize = U16;
}

/// Loads 8 ymm (16 blocks) from `src`, runs `round` over them, stores to `dst`. All loads come
/// before the first store, so `src == dst` (in place) is fine.
#[inline(always)]
unsafe fn ymm8(
    src: *const u8,
    dst: *mut u8,
    k: &[__m256i; 15],
    nr: usize,
    round: unsafe fn(__m256i, __m256i) -> __m256i,
    last: unsafe fn(__m256i, __m256i) -> __m256i,
) {
    // SAFETY: the caller passes 256 readable bytes at `src` and 256 writable bytes at `dst`,
    // and runs where AVX2 and VAES exist.
    unsafe {
        let mut x: [__m256i; 8] = core::array::from_fn(|i| {
            _mm256_xor_si256(_mm256_loadu_si256(src.add(32 * i).cast()), k[0])
        });
        for kr in &k[1..nr] {
            for v in x.iter_mut() {
                *v = round(*v, *kr);
            }
        }
        for (i, v) in x.into_iter().enumerate() {
            _mm256_storeu_si256(dst.add(32 * i).cast(), last(v, k[nr]));
        }
    }
}

/// One block through the xmm AES instructions with the low halves of the keys.
#[inline(always)]
unsafe fn xmm1(
    src: *const u8,
    dst: *mut u8,
    k: impl Fn(usize) -> __m128i,
    nr: usize,
    round: unsafe fn(__m128i, __m128i) -> __m128i,
    last: unsafe fn(__m128i, __m128i) -> __m128i,
) {
    // SAFETY: the caller passes 16 readable bytes at `src`, 16 writable at `dst`, and runs
    // where AES-NI exists.
    unsafe {
        let mut x = _mm_xor_si128(_mm_loadu_si128(src.cast()), k(0));
        for r in 1..nr {
            x = round(x, k(r));
        }
        _mm_storeu_si128(dst.cast(), last(x, k(nr)));
    }
}

// Thin `unsafe fn` pointers to the intrinsics (inlined: every call site is `inline(always)`
// inside a function with the features).
#[inline(always)]
unsafe fn venc(a: __m256i, k: __m256i) -> __m256i {
    // SAFETY: called only where VAES exists.
    unsafe { _mm256_aesenc_epi128(a, k) }
}
#[inline(always)]
unsafe fn venclast(a: __m256i, k: __m256i) -> __m256i {
    // SAFETY: as `venc`.
    unsafe { _mm256_aesenclast_epi128(a, k) }
}
#[inline(always)]
unsafe fn vdec(a: __m256i, k: __m256i) -> __m256i {
    // SAFETY: as `venc`.
    unsafe { _mm256_aesdec_epi128(a, k) }
}
#[inline(always)]
unsafe fn vdeclast(a: __m256i, k: __m256i) -> __m256i {
    // SAFETY: as `venc`.
    unsafe { _mm256_aesdeclast_epi128(a, k) }
}
#[inline(always)]
unsafe fn xenc(a: __m128i, k: __m128i) -> __m128i {
    // SAFETY: called only where AES-NI exists.
    unsafe { _mm_aesenc_si128(a, k) }
}
#[inline(always)]
unsafe fn xenclast(a: __m128i, k: __m128i) -> __m128i {
    // SAFETY: as `xenc`.
    unsafe { _mm_aesenclast_si128(a, k) }
}
#[inline(always)]
unsafe fn xdec(a: __m128i, k: __m128i) -> __m128i {
    // SAFETY: as `xenc`.
    unsafe { _mm_aesdec_si128(a, k) }
}
#[inline(always)]
unsafe fn xdeclast(a: __m128i, k: __m128i) -> __m128i {
    // SAFETY: as `xenc`.
    unsafe { _mm_aesdeclast_si128(a, k) }
}

impl<const NR: usize> BlockCipherEncBackend for Vaes<NR> {
    #[inline(always)]
    fn encrypt_block(&self, block: InOut<'_, '_, Block<Self>>) {
        let (i, o) = block.into_raw();
        // SAFETY: `InOut` gives 16 readable bytes at `i` and 16 writable at `o`; this backend
        // exists only inside the AVX2/VAES entry points.
        unsafe { xmm1(i.cast(), o.cast(), |r| self.k128(r), NR, xenc, xenclast) }
    }

    #[inline(always)]
    fn encrypt_par_blocks(&self, blocks: InOut<'_, '_, ParBlocks<Self>>) {
        let (i, o) = blocks.into_raw();
        // SAFETY: `InOut` gives 256 readable bytes at `i` and 256 writable at `o`; features as
        // above.
        unsafe { ymm8(i.cast(), o.cast(), &self.k, NR, venc, venclast) }
    }
}

impl<const NR: usize> BlockCipherDecBackend for Vaes<NR> {
    #[inline(always)]
    fn decrypt_block(&self, block: InOut<'_, '_, Block<Self>>) {
        let (i, o) = block.into_raw();
        // SAFETY: as `encrypt_block`.
        unsafe { xmm1(i.cast(), o.cast(), |r| self.k128(r), NR, xdec, xdeclast) }
    }

    #[inline(always)]
    fn decrypt_par_blocks(&self, blocks: InOut<'_, '_, ParBlocks<Self>>) {
        let (i, o) = blocks.into_raw();
        // SAFETY: as `encrypt_par_blocks`.
        unsafe { ymm8(i.cast(), o.cast(), &self.k, NR, vdec, vdeclast) }
    }
}

// ---------------------------------------------------------------------------------------------
// AES-NI on xmm: 8 blocks per parallel call (the kernels' LANES).

struct Ni<const NR: usize> {
    k: [__m128i; 15],
}

impl<const NR: usize> Ni<NR> {
    #[inline(always)]
    fn enc(rk: &aesni::Keys) -> Self {
        let mut k = [rk_zero(); 15];
        for (i, kk) in k.iter_mut().enumerate().take(NR + 1) {
            *kk = aesni::load(&rk.enc[i]);
        }
        Ni { k }
    }

    #[inline(always)]
    fn dec(rk: &aesni::Keys) -> Self {
        // SAFETY: only called from the AES-NI entry points (the CPU has AES-NI and SSE4.2).
        let k = unsafe { aesni::dec_keys::<NR>(&rk.enc) };
        Ni { k }
    }
}

#[inline(always)]
fn rk_zero() -> __m128i {
    // SAFETY: SSE2 is part of x86-64.
    unsafe { _mm_setzero_si128() }
}

impl<const NR: usize> BlockSizeUser for Ni<NR> {
    type BlockSize = U16;
}

impl<const NR: usize> ParBlocksSizeUser for Ni<NR> {
    type ParBlocksSize = U8;
}

/// 8 blocks in flight from `src` to `dst` (all loads before the first store).
#[inline(always)]
unsafe fn xmm8(
    src: *const u8,
    dst: *mut u8,
    k: &[__m128i; 15],
    nr: usize,
    round: unsafe fn(__m128i, __m128i) -> __m128i,
    last: unsafe fn(__m128i, __m128i) -> __m128i,
) {
    // SAFETY: the caller passes 128 readable bytes at `src` and 128 writable bytes at `dst`,
    // and runs where AES-NI exists.
    unsafe {
        let mut x: [__m128i; 8] =
            core::array::from_fn(|i| _mm_xor_si128(_mm_loadu_si128(src.add(16 * i).cast()), k[0]));
        for kr in &k[1..nr] {
            for v in x.iter_mut() {
                *v = round(*v, *kr);
            }
        }
        for (i, v) in x.into_iter().enumerate() {
            _mm_storeu_si128(dst.add(16 * i).cast(), last(v, k[nr]));
        }
    }
}

impl<const NR: usize> BlockCipherEncBackend for Ni<NR> {
    #[inline(always)]
    fn encrypt_block(&self, block: InOut<'_, '_, Block<Self>>) {
        let (i, o) = block.into_raw();
        // SAFETY: 16 readable bytes at `i`, 16 writable at `o`; inside the AES-NI entry points.
        unsafe { xmm1(i.cast(), o.cast(), |r| self.k[r], NR, xenc, xenclast) }
    }

    #[inline(always)]
    fn encrypt_par_blocks(&self, blocks: InOut<'_, '_, ParBlocks<Self>>) {
        let (i, o) = blocks.into_raw();
        // SAFETY: 128 readable bytes at `i`, 128 writable at `o`; as above.
        unsafe { xmm8(i.cast(), o.cast(), &self.k, NR, xenc, xenclast) }
    }
}

impl<const NR: usize> BlockCipherDecBackend for Ni<NR> {
    #[inline(always)]
    fn decrypt_block(&self, block: InOut<'_, '_, Block<Self>>) {
        let (i, o) = block.into_raw();
        // SAFETY: as `encrypt_block`.
        unsafe { xmm1(i.cast(), o.cast(), |r| self.k[r], NR, xdec, xdeclast) }
    }

    #[inline(always)]
    fn decrypt_par_blocks(&self, blocks: InOut<'_, '_, ParBlocks<Self>>) {
        let (i, o) = blocks.into_raw();
        // SAFETY: as `encrypt_par_blocks`.
        unsafe { xmm8(i.cast(), o.cast(), &self.k, NR, xdec, xdeclast) }
    }
}
