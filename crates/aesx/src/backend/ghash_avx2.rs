//! Constant-time GHASH with AVX2 integer multiplies, for the `soft` and `vpaes` backends on
//! x86-64 CPUs with AVX2 (and any AES backend on a CPU with AVX2 but without PCLMULQDQ).
//!
//! The technique of [`super::ghash_soft`] (carry-less products from integer products of
//! operands whose bits are 4 apart, BearSSL `ghash_ctmul`; /work/shared/specs/gcm.md section 6)
//! on 32-bit limbs, four at a time: `vpmuludq` multiplies the low 32 bits of each 64-bit lane.
//! A 32-bit limb split into 4 classes has 8 bits per class, so no position of a class product
//! collects more than 8 terms and the carries stay in the 3-bit holes (no fix-up, unlike the
//! 64-bit version). Karatsuba on the 64-bit halves makes a block's product 12 limb products
//! in three rows of four lanes (each lane its own data limb and key limb, [`Acc::add`]): 48
//! `vpmuludq` a block.
//!
//! IMPLEMENTATION NOTE (why): the scalar version is bound by the 64 x 64 -> 128 multiplier,
//! about one product per 2 cycles on Zen 3 (48 per block: ~100 cycles). `vpmuludq ymm` issues
//! 2 per cycle with 4 lanes each, and the masks and XORs spread over the other vector pipes.
//! The schoolbook form (16 limb products, 64 `vpmuludq`, key limbs broadcast) measured 8-14%
//! slower than Karatsuba from 256 B to 1 KiB of GHASH (Zen 4, `gcm_speed`, session 14).
//!
//! Aggregation: the limb products of every block of a batch are summed unreduced per row (the
//! sums are linear); once per batch they are recombined into the 256-bit product sum and
//! reduced (POLYVAL's Montgomery reduction, shared with `ghash_soft`).
//!
//! Constant time: integer multiplies, AND/XOR/OR, loads at fixed offsets; no table, no branch
//! and no memory index depends on the key or the data.
//!
//! Long inputs (from [`STREAM_MIN`] blocks, with an allocator) go instead to 32 interleaved
//! streams multiplied by `H^32` with VPSHUFB table lookups ([`super::ghash_pshufb`], about
//! 4.5x faster at 16 KiB on Zen 4); this code hashes the rest and the 32 stream states at
//! the end.

use core::arch::x86_64::*;

use zeroize::Zeroize;

#[cfg(feature = "alloc")]
use super::ghash_pshufb::{StreamKey, Streams, Tables, X32};
use super::ghash_soft::{dot, mul_x, reduce4};

/// Blocks hashed per reduction (key powers kept).
pub(crate) const BATCH: usize = 8;

/// Per power `p` (`H^(p+1)`), per Karatsuba row `r` (see [`Acc::add`]), per class `d`: the
/// row's four key limbs (`[y0, y0, y2, y2]`, `[y1, y1, y3, y3]`, `[y0^y2, y0^y2, y1^y3,
/// y1^y3]`) masked to class `d`, each zero-extended to a 64-bit lane (what `vpmuludq` reads);
/// with an allocator (the key is then boxed: 11 KiB), the `H^32` tables of the 32-stream path
/// for long inputs ([`ghash_pshufb`]). Zeroized on drop.
#[repr(C, align(64))]
pub(crate) struct Key {
    y: [[[[u64; 4]; 4]; 3]; BATCH],
    #[cfg(feature = "alloc")]
    t: Tables,
}

impl Drop for Key {
    fn drop(&mut self) {
        for p in self.y.iter_mut() {
            for r in p.iter_mut() {
                for d in r.iter_mut() {
                    d.zeroize();
                }
            }
        }
    }
}

const C32: [u64; 4] = [0x1111_1111, 0x2222_2222, 0x4444_4444, 0x8888_8888];
const C64: [u64; 4] = [
    0x1111_1111_1111_1111,
    0x2222_2222_2222_2222,
    0x4444_4444_4444_4444,
    0x8888_8888_8888_8888,
];

/// Whether this CPU runs the AVX2 GHASH.
#[inline]
pub(crate) fn available() -> bool {
    crate::cpu::features().avx2
}

impl Key {
    /// An all-zero key, for [`Key::fill`].
    pub(crate) const ZERO: Key = Key {
        y: [[[[0; 4]; 4]; 3]; BATCH],
        #[cfg(feature = "alloc")]
        t: Tables::ZERO,
    };

    /// Computes the prepared powers of `h` into this key, in place.
    pub(crate) fn fill(&mut self, h: &[u8; 16]) {
        let mut h1 = mul_x(u128::from_be_bytes(*h));
        let mut p = h1;
        for pw in self.y.iter_mut() {
            let l = |j: usize| (p >> (32 * j)) as u32 as u64;
            let rows = [
                [l(0), l(0), l(2), l(2)],
                [l(1), l(1), l(3), l(3)],
                [l(0) ^ l(2), l(0) ^ l(2), l(1) ^ l(3), l(1) ^ l(3)],
            ];
            for (row, lanes) in pw.iter_mut().zip(rows) {
                for (d, v) in row.iter_mut().enumerate() {
                    *v = lanes.map(|x| x & C32[d]);
                }
            }
            p = dot(p, h1);
        }
        p.zeroize();
        h1.zeroize();
        // SAFETY: a `Key` is filled only where `available()` held (AVX2).
        #[cfg(feature = "alloc")]
        unsafe {
            self.t.fill::<X32>(h)
        };
    }
}

/// The three Karatsuba-row accumulators of a batch.
struct Acc {
    r: [__m256i; 3],
}

impl Acc {
    #[inline]
    #[target_feature(enable = "avx2")]
    fn zero() -> Acc {
        Acc {
            r: [_mm256_setzero_si256(); 3],
        }
    }

    /// `self += x * y` where `x` is a POLYVAL element in an xmm (u128 little-endian, 32-bit
    /// limbs `x0..x3`) and `y` the prepared key power: Karatsuba on the 64-bit halves
    /// (`X0 = x0,x1`, `X1 = x2,x3`), three rows of four limb products, 48 `vpmuludq` where the
    /// schoolbook 16 limb products took 64:
    ///
    /// ```text
    /// row 0: [x0, x1, x2, x3] * [y0, y0, y2, y2]   X0 Y0 and X1 Y1, their y0 / y2 halves
    /// row 1: [x0, x1, x2, x3] * [y1, y1, y3, y3]   ... their y1 / y3 halves
    /// row 2: [m0, m1, m0, m1] * [n0, n0, n1, n1]   (X0 ^ X1)(Y0 ^ Y1), m = X0 ^ X1, n = Y0 ^ Y1
    /// ```
    #[inline]
    #[target_feature(enable = "avx2")]
    fn add(&mut self, x: __m128i, y: &[[[u64; 4]; 4]; 3]) {
        let xv = _mm256_cvtepu32_epi64(x);
        // [x0 ^ x2, x1 ^ x3] in both 64-bit halves.
        let m = _mm_xor_si128(x, _mm_srli_si128::<8>(x));
        let mv = _mm256_cvtepu32_epi64(_mm_unpacklo_epi64(m, m));
        let classes = |v: __m256i| -> [__m256i; 4] {
            [
                _mm256_and_si256(v, _mm256_set1_epi64x(C32[0] as i64)),
                _mm256_and_si256(v, _mm256_set1_epi64x(C32[1] as i64)),
                _mm256_and_si256(v, _mm256_set1_epi64x(C32[2] as i64)),
                _mm256_and_si256(v, _mm256_set1_epi64x(C32[3] as i64)),
            ]
        };
        let (xc, mc) = (classes(xv), classes(mv));
        // Unrolled over the rows so the three accumulators stay in registers.
        self.r[0] = _mm256_xor_si256(self.r[0], limb_product(&xc, &y[0]));
        self.r[1] = _mm256_xor_si256(self.r[1], limb_product(&xc, &y[1]));
        self.r[2] = _mm256_xor_si256(self.r[2], limb_product(&mc, &y[2]));
    }

    /// Combines the rows into the 256-bit product sum (Karatsuba's recombination) and
    /// reduces it (times x^-128).
    #[inline]
    #[target_feature(enable = "avx2")]
    fn reduce(&self) -> u128 {
        let mut l = [[0u64; 4]; 3];
        for (lr, r) in l.iter_mut().zip(&self.r) {
            // SAFETY: `lr` is 32 writable bytes; the store is unaligned.
            unsafe { _mm256_storeu_si256(lr.as_mut_ptr().cast(), *r) };
        }
        // A 64 x 64 product from its four limb products (lanes of two rows, or of one).
        let half = |p00: u64, p10: u64, p01: u64, p11: u64| -> u128 {
            p00 as u128 ^ ((p10 ^ p01) as u128) << 32 ^ (p11 as u128) << 64
        };
        let [a, b, c] = l;
        let mut lo = half(a[0], a[1], b[0], b[1]);
        let mut hi = half(a[2], a[3], b[2], b[3]);
        let mut mid = half(c[0], c[1], c[2], c[3]) ^ lo ^ hi;
        let out = reduce4(
            lo as u64,
            (lo >> 64) as u64 ^ mid as u64,
            (mid >> 64) as u64 ^ hi as u64,
            (hi >> 64) as u64,
        );
        l.zeroize();
        lo.zeroize();
        hi.zeroize();
        mid.zeroize();
        out
    }
}

/// Lane `i`: the 64-bit carry-less product of the data limb in lane `i` (its four classes
/// `xc`) and the key limb in lane `i` (its four classes `yr`, loaded from the key).
#[inline]
#[target_feature(enable = "avx2")]
fn limb_product(xc: &[__m256i; 4], yr: &[[u64; 4]; 4]) -> __m256i {
    let mut z = [_mm256_setzero_si256(); 4];
    for (d, yd) in yr.iter().enumerate() {
        // The row's class-`d` key vector straight from the key (an `asm!` load, not `pure`:
        // never hoisted into registers nor copied to the stack).
        let yv: __m256i;
        // SAFETY: `yd` points to 32 valid bytes inside the key; AVX2 (this function's target
        // feature); reads them, writes only the output register.
        unsafe {
            core::arch::asm!(
                "vmovdqu {y}, ymmword ptr [{p}]",
                y = out(ymm_reg) yv,
                p = in(reg) yd.as_ptr(),
                options(nostack, preserves_flags, readonly),
            )
        };
        for (c, &x) in xc.iter().enumerate() {
            let k = (c + d) & 3;
            z[k] = _mm256_xor_si256(z[k], _mm256_mul_epu32(x, yv));
        }
    }
    let mut r = _mm256_setzero_si256();
    for (zk, &m) in z.iter().zip(&C64) {
        r = _mm256_or_si256(r, _mm256_and_si256(*zk, _mm256_set1_epi64x(m as i64)));
    }
    r
}

/// A block as a POLYVAL element in an xmm: the 16 bytes reversed.
#[inline]
#[target_feature(enable = "avx2")]
fn block(b: &[u8]) -> __m128i {
    let rev = _mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    // SAFETY: `b` has 16 readable bytes (callers pass whole blocks); the load is unaligned.
    let v = unsafe { _mm_loadu_si128(b[..16].as_ptr().cast()) };
    _mm_shuffle_epi8(v, rev)
}

#[inline]
#[target_feature(enable = "avx2")]
fn u128_xmm(x: u128) -> __m128i {
    _mm_set_epi64x((x >> 64) as i64, x as i64)
}

/// Hashes `n = data.len() / 16` (1..=BATCH) blocks into `s` with one reduction.
#[inline]
#[target_feature(enable = "avx2")]
fn batch(k: &Key, s: u128, data: &[u8]) -> u128 {
    let n = data.len() / 16;
    let mut a = Acc::zero();
    for b in 0..n {
        let mut x = block(&data[16 * b..]);
        if b == 0 {
            x = _mm_xor_si128(x, u128_xmm(s));
        }
        a.add(x, &k.y[n - 1 - b]);
    }
    a.reduce()
}

#[target_feature(enable = "avx2")]
fn ghash_avx2(k: &Key, acc: &mut u128, data: &[u8]) {
    let mut s = *acc;
    let mut chunks = data.chunks_exact(16 * BATCH);
    for c in &mut chunks {
        s = batch(k, s, c);
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        s = batch(k, s, rest);
    }
    *acc = s;
}

/// Blocks from which [`ghash`] takes the 32-stream path (and the generic GCM kernel uses
/// [`streams`]): its finish hashes 32 blocks the 8-block way, so it pays from two batches on.
#[cfg(feature = "alloc")]
pub(crate) const STREAM_MIN: usize = 64;

/// `acc <- GHASH update over data` (whole blocks).
pub(crate) fn ghash(k: &Key, acc: &mut u128, data: &[u8]) {
    #[cfg(feature = "alloc")]
    super::ghash_pshufb::ghash::<X32, Key>(k, acc, data, STREAM_MIN);
    // SAFETY: a `Key` is built only where `available()` held (AVX2, which implies the SSSE3
    // shuffle used here).
    #[cfg(not(feature = "alloc"))]
    unsafe {
        ghash_avx2(k, acc, data)
    }
}

/// The 32 streams of a message on this key ([`super::ghash_pshufb`]).
///
/// IMPLEMENTATION NOTE: measured on Zen 4 (`cargo run --release -p aesx --example gcm_speed
/// -- 16384 16`, GHASH alone): the 8-block integer-multiply code hashes about 0.87 GB/s
/// (68 cycles a block), the streams 3.9 GB/s; see the README's GCM section.
#[cfg(feature = "alloc")]
pub(crate) fn streams(k: &Key, acc: u128) -> Streams<'_, X32, Key> {
    Streams::new(k, acc)
}

#[cfg(feature = "alloc")]
impl StreamKey for Key {
    fn tables(&self) -> &Tables {
        &self.t
    }
    fn hash(&self, acc: &mut u128, data: &[u8]) {
        // SAFETY: a `Key` is built only where `available()` held (AVX2).
        unsafe { ghash_avx2(self, acc, data) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::ghash_soft;

    /// Same state as the scalar GHASH for every block count across two batches, and for
    /// counts around the 32-stream path's batches (from 64 blocks), with keys and data that
    /// fill every class (all-ones limbs included).
    #[test]
    fn matches_scalar_ghash() {
        if !available() {
            return;
        }
        let data: alloc::vec::Vec<u8> = (0..16 * 300)
            .map(|i| {
                if i % 37 < 9 {
                    0xff
                } else {
                    (i * 151 + 3 + i / 256) as u8
                }
            })
            .collect();
        let counts = (0..=19).chain([31, 32, 33, 63, 64, 65, 95, 96, 97, 128, 129, 200, 300]);
        for h in [
            [0xffu8; 16],
            [0x5au8; 16],
            core::array::from_fn(|i| (i * 29 + 1) as u8),
        ] {
            let (k, ks) = (boxed_key(&h), ghash_soft::Key::new(&h));
            for n in counts.clone() {
                let (mut a, mut b) = (u128::MAX / 3, u128::MAX / 3);
                ghash(&k, &mut a, &data[..16 * n]);
                ghash_soft::ghash(&ks, &mut b, &data[..16 * n]);
                assert_eq!(a, b, "{n} blocks");
            }
        }
    }

    /// [`streams`] fed in pieces (whole batches, then a shorter last one; or an empty or short
    /// first piece, which ends the streams at once) gives the one-shot scalar GHASH.
    #[test]
    #[cfg(feature = "alloc")]
    fn streams_in_pieces_match_scalar_ghash() {
        if !available() {
            return;
        }
        let data: alloc::vec::Vec<u8> = (0..16 * 200).map(|i| (i * 97 + i / 512) as u8).collect();
        let h: [u8; 16] = core::array::from_fn(|i| (i * 53 + 7) as u8);
        let (k, ks) = (boxed_key(&h), ghash_soft::Key::new(&h));
        let pieces: [&[usize]; 6] = [
            &[32, 32, 32, 3],
            &[64, 64, 1],
            &[32, 0, 32],
            &[5, 32, 32],
            &[0, 32, 32, 32, 32, 32, 32],
            &[32, 32, 32, 32, 32, 32, 8],
        ];
        for p in pieces {
            let n: usize = p.iter().sum();
            let mut st = streams(&k, 0x1234);
            let mut at = 0;
            for &len in p {
                st.update(&data[16 * at..16 * (at + len)]);
                at += len;
            }
            let mut b = 0x1234;
            ghash_soft::ghash(&ks, &mut b, &data[..16 * n]);
            assert_eq!(st.finish(), b, "pieces {p:?}");
        }
    }

    fn boxed_key(h: &[u8; 16]) -> alloc::boxed::Box<Key> {
        let mut k = alloc::boxed::Box::new(Key::ZERO);
        k.fill(h);
        k
    }
}
