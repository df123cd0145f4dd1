//! GHASH with PCLMULQDQ on xmm registers: the key powers, the field arithmetic the fused
//! kernels share, and a GHASH-only kernel (AAD, lengths block, partial blocks).
//!
//! Sources (techniques; the code is written here): S. Gueron and M. Kounavis, "Intel
//! Carry-Less Multiplication Instruction and its Usage for Computing the GCM Mode" (Intel
//! white paper 323640, rev. 2.02); the byte-reflected representation with POLYVAL-style
//! (Montgomery) reduction and the H*x key trick as described for the Linux kernel's
//! `aes-gcm-aesni-x86_64.S` (E. Biggers, 2024) and RFC 8452 Appendix A; see
//! /work/shared/specs/gcm.md sections 1 and 2.
//!
//! ## Representation
//!
//! A GCM block is loaded and byte-reversed (`pshufb`), which gives `u128::from_be_bytes(block)`
//! in the register: a POLYVAL field element, bit i = coefficient of x^i. PCLMULQDQ then
//! multiplies in natural bit order, and the reduction computes `a b x^-128 mod P` with
//! `P = x^128 + x^127 + x^126 + x^121 + 1` in two folds by the constant
//! `x^63 + x^62 + x^57` (`0xc200000000000000`). The key powers carry the matching `x^128`:
//! `H1 = mulX(H)`, `H(i+1) = dot(Hi, H1)` (see `ghash_soft`, which uses the same algebra).
//!
//! ## Products
//!
//! Karatsuba: per block three PCLMULQDQ (lo*lo, hi*hi, (lo^hi)*(lo^hi)), the key side's
//! `lo^hi` precomputed. A batch of blocks is multiplied by descending powers and summed
//! unreduced; one fix-up and one reduction per batch. (Karatsuba trades a PCLMULQDQ for two
//! cheap vector ops; on AMD cores PCLMULQDQ is the scarce unit, issue 1 per 2 cycles.)
//!
//! Constant time: PCLMULQDQ and the vector logic run in data-independent time; loop bounds
//! depend only on lengths.

use core::arch::x86_64::*;

use super::ghash_soft::mul_x;

/// Powers of H kept per key (the batch of the xmm kernels).
pub(crate) const POWERS: usize = 8;

/// Whether this CPU runs the PCLMULQDQ kernels (with the SSE4.1/SSSE3 shuffles they use).
#[inline]
pub(crate) fn available() -> bool {
    let f = crate::cpu::features();
    f.pclmulqdq && f.sse42
}

/// GHASH key for PCLMULQDQ: `pow[i] = H^(POWERS - i)` (highest first, so batch block j uses
/// `pow[j]`), and `kara[i]` holds `lo ^ hi` of `pow[i]` in both halves. POLYVAL form: each
/// entry is the little-endian bytes of the field element. Zeroized on drop.
#[repr(C, align(16))]
pub(crate) struct Key {
    pub(crate) pow: [[u8; 16]; POWERS],
    pub(crate) kara: [[u8; 16]; POWERS],
}

impl Drop for Key {
    fn drop(&mut self) {
        for k in self.pow.iter_mut().chain(self.kara.iter_mut()) {
            // SAFETY: `k` is a valid, exclusively borrowed 16-byte array at a 16-byte aligned
            // offset of this `repr(C, align(16))` struct; the volatile store is in bounds.
            unsafe {
                core::ptr::write_volatile(
                    (k as *mut [u8; 16]).cast::<__m128i>(),
                    _mm_setzero_si128(),
                )
            };
        }
        core::sync::atomic::compiler_fence(core::sync::atomic::Ordering::SeqCst);
    }
}

impl Key {
    /// An all-zero key, for [`Key::fill`].
    pub(crate) const ZERO: Key = Key {
        pow: [[0; 16]; POWERS],
        kara: [[0; 16]; POWERS],
    };

    /// Computes the powers of `h` into this key, in place.
    pub(crate) fn fill(&mut self, h: &[u8; 16]) {
        // SAFETY: `Key`s are built only after `available()` said this CPU has PCLMULQDQ and
        // SSE4.2 (`GhashKey::empty`).
        unsafe { powers(h, self) };
    }
}

#[inline]
#[target_feature(enable = "pclmulqdq,sse4.2")]
pub(crate) fn ld(b: &[u8; 16]) -> __m128i {
    // SAFETY: `b` is 16 readable bytes; the load is unaligned.
    unsafe { _mm_loadu_si128(b.as_ptr().cast()) }
}

#[inline]
#[target_feature(enable = "pclmulqdq,sse4.2")]
pub(crate) fn st(b: &mut [u8; 16], v: __m128i) {
    // SAFETY: `b` is 16 writable bytes; the store is unaligned.
    unsafe { _mm_storeu_si128(b.as_mut_ptr().cast(), v) }
}

#[inline]
#[target_feature(enable = "pclmulqdq,sse4.2")]
pub(crate) fn ld_at(buf: &[u8], i: usize) -> __m128i {
    ld(buf[16 * i..16 * i + 16].try_into().unwrap())
}

#[inline]
#[target_feature(enable = "pclmulqdq,sse4.2")]
pub(crate) fn st_at(buf: &mut [u8], i: usize, v: __m128i) {
    st((&mut buf[16 * i..16 * i + 16]).try_into().unwrap(), v)
}

/// A block whose first `n <= 16` bytes are 0xff and the rest zero: ANDed with the last block
/// of a message that ends inside it, it zeroes the padding in a register, where writing zeros
/// into the stored block and reading it back would stall the read behind the byte stores. `n`
/// is a length (public); the table holds no secret.
#[inline]
#[target_feature(enable = "pclmulqdq,sse4.2")]
pub(crate) fn keep_mask(n: usize) -> __m128i {
    static ONES_THEN_ZEROS: [u8; 32] = {
        let mut t = [0u8; 32];
        let mut i = 0;
        while i < 16 {
            t[i] = 0xff;
            i += 1;
        }
        t
    };
    ld(ONES_THEN_ZEROS[16 - n..32 - n].try_into().unwrap())
}

/// The `pshufb` mask that reverses the 16 bytes of a block (GCM block <-> POLYVAL element,
/// and big-endian counter block <-> little-endian counter lanes).
#[inline]
#[target_feature(enable = "pclmulqdq,sse4.2")]
pub(crate) fn bswap_mask() -> __m128i {
    _mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)
}

#[inline]
#[target_feature(enable = "pclmulqdq,sse4.2")]
pub(crate) fn u128_to_m(x: u128) -> __m128i {
    _mm_set_epi64x((x >> 64) as i64, x as i64)
}

#[inline]
#[target_feature(enable = "pclmulqdq,sse4.2")]
pub(crate) fn m_to_u128(v: __m128i) -> u128 {
    let lo = _mm_cvtsi128_si64(v) as u64 as u128;
    let hi = _mm_extract_epi64::<1>(v) as u64 as u128;
    hi << 64 | lo
}

/// Unreduced Karatsuba partial products: LO, MI (not yet fixed up), HI.
#[derive(Clone, Copy)]
pub(crate) struct Prod {
    pub(crate) lo: __m128i,
    pub(crate) mi: __m128i,
    pub(crate) hi: __m128i,
}

impl Prod {
    #[inline]
    #[target_feature(enable = "pclmulqdq,sse4.2")]
    pub(crate) fn zero() -> Prod {
        Prod {
            lo: _mm_setzero_si128(),
            mi: _mm_setzero_si128(),
            hi: _mm_setzero_si128(),
        }
    }

    /// `self += x * p`, with `q` = `p.lo ^ p.hi` in its low half.
    #[inline]
    #[target_feature(enable = "pclmulqdq,sse4.2")]
    pub(crate) fn add(&mut self, x: __m128i, p: __m128i, q: __m128i) {
        self.lo = _mm_xor_si128(self.lo, _mm_clmulepi64_si128::<0x00>(x, p));
        self.hi = _mm_xor_si128(self.hi, _mm_clmulepi64_si128::<0x11>(x, p));
        let xm = _mm_xor_si128(x, _mm_shuffle_epi32::<0x4e>(x));
        self.mi = _mm_xor_si128(self.mi, _mm_clmulepi64_si128::<0x00>(xm, q));
    }

    /// Karatsuba fix-up and reduction: the sum times x^-128 mod P.
    #[inline]
    #[target_feature(enable = "pclmulqdq,sse4.2")]
    pub(crate) fn reduce(self) -> __m128i {
        let mi = _mm_xor_si128(self.mi, _mm_xor_si128(self.lo, self.hi));
        reduce3(self.lo, mi, self.hi)
    }
}

/// `(LO + MI x^64 + HI x^128) x^-128 mod P`: fold LO into MI, then MI into HI, each by one
/// multiply with `x^63 + x^62 + x^57` and a swap of halves.
#[inline]
#[target_feature(enable = "pclmulqdq,sse4.2")]
pub(crate) fn reduce3(lo: __m128i, mi: __m128i, hi: __m128i) -> __m128i {
    let k = _mm_set_epi64x(0, 0xc200_0000_0000_0000u64 as i64);
    let t = _mm_clmulepi64_si128::<0x00>(lo, k);
    let mi = _mm_xor_si128(mi, _mm_xor_si128(t, _mm_shuffle_epi32::<0x4e>(lo)));
    let t = _mm_clmulepi64_si128::<0x00>(mi, k);
    _mm_xor_si128(hi, _mm_xor_si128(t, _mm_shuffle_epi32::<0x4e>(mi)))
}

/// `a * b * x^-128 mod P` (one product, one reduction).
#[inline]
#[target_feature(enable = "pclmulqdq,sse4.2")]
pub(crate) fn dot(a: __m128i, b: __m128i) -> __m128i {
    let mut p = Prod::zero();
    p.add(a, b, _mm_xor_si128(b, _mm_shuffle_epi32::<0x4e>(b)));
    p.reduce()
}

#[target_feature(enable = "pclmulqdq,sse4.2")]
fn powers(h: &[u8; 16], k: &mut Key) {
    let h1 = u128_to_m(mul_x(u128::from_be_bytes(*h)));
    // H^2, then H^3 and H^4 in parallel, then H^5..H^8 in parallel: depth 3, not 7.
    let h2 = dot(h1, h1);
    let h3 = dot(h2, h1);
    let h4 = dot(h2, h2);
    let mut p = [
        h1,
        h2,
        h3,
        h4,
        dot(h4, h1),
        dot(h4, h2),
        dot(h4, h3),
        dot(h4, h4),
    ];
    for (i, &v) in p.iter().enumerate() {
        st(&mut k.pow[POWERS - 1 - i], v);
        let q = _mm_xor_si128(v, _mm_shuffle_epi32::<0x4e>(v));
        st(&mut k.kara[POWERS - 1 - i], q);
    }
    // If LLVM kept the powers on the stack, do not leave them there.
    for v in p.iter_mut() {
        // SAFETY: `v` is a valid, aligned, exclusively borrowed `__m128i`.
        unsafe { core::ptr::write_volatile(v, _mm_setzero_si128()) };
    }
}

/// `pow[i]` and `kara[i]`, read from the key at each use.
///
/// IMPLEMENTATION NOTE: volatile, so that LLVM neither hoists all 16 key vectors out of the
/// loops (there are not enough registers; it copied them to the stack, where they stayed
/// after the call) nor spills copies: they are read in place, as memory operands.
#[inline(always)]
pub(crate) fn key_at(k: &Key, i: usize) -> (__m128i, __m128i) {
    let p: *const [u8; 16] = &k.pow[i];
    let q: *const [u8; 16] = &k.kara[i];
    // SAFETY: both point to 16 initialised bytes inside `k`, at 16-byte aligned offsets of
    // this `repr(C, align(16))` struct.
    unsafe {
        (
            core::ptr::read_volatile(p.cast::<__m128i>()),
            core::ptr::read_volatile(q.cast::<__m128i>()),
        )
    }
}

/// The powers H^n..H^1 (and their Karatsuba halves) for a batch of `n <= POWERS` blocks:
/// block j of the batch is multiplied by `pow[POWERS - n + j]`.
#[inline]
#[target_feature(enable = "pclmulqdq,sse4.2")]
pub(crate) fn power(k: &Key, n: usize, j: usize) -> (__m128i, __m128i) {
    key_at(k, POWERS - n + j)
}

/// Hashes `n` (1..=POWERS) blocks of `data` into `acc` with one reduction. `data` holds
/// exactly `n` blocks.
#[inline]
#[target_feature(enable = "pclmulqdq,sse4.2")]
pub(crate) fn ghash_n(k: &Key, acc: __m128i, data: &[u8]) -> __m128i {
    let n = data.len() / 16;
    debug_assert!((1..=POWERS).contains(&n));
    let bs = bswap_mask();
    let mut p = Prod::zero();
    for j in 0..n {
        let mut x = _mm_shuffle_epi8(ld_at(data, j), bs);
        if j == 0 {
            x = _mm_xor_si128(x, acc);
        }
        let (h, q) = power(k, n, j);
        p.add(x, h, q);
    }
    p.reduce()
}

#[target_feature(enable = "pclmulqdq,sse4.2")]
fn ghash_inner(k: &Key, acc: &mut u128, data: &[u8]) {
    let mut s = u128_to_m(*acc);
    let mut chunks = data.chunks_exact(16 * POWERS);
    for c in &mut chunks {
        s = ghash_n(k, s, c);
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        s = ghash_n(k, s, rest);
    }
    *acc = m_to_u128(s);
}

/// `acc <- GHASH update over data` (whole blocks).
pub(crate) fn ghash(k: &Key, acc: &mut u128, data: &[u8]) {
    // SAFETY: a `Key` exists only where `available()` held (PCLMULQDQ, SSE4.2).
    unsafe { ghash_inner(k, acc, data) }
}
