//! Constant-time GHASH of long inputs as interleaved streams multiplied by a fixed power of H
//! through byte-shuffle table lookups: 32 streams on AVX2 ([`X32`], ymm, `H^32`), 16 on SSSE3
//! ([`X16`], xmm, `H^16`). The long-input path of the `soft` and `vpaes` GHASH
//! ([`super::ghash_avx2`] with AVX2, [`super::ghash_ssse3`] without).
//!
//! With `L` streams: GHASH of `X_0 .. X_{Lm-1}` is `sum_i X_i H^(Lm - i)`. Stream `b` takes
//! `X_b, X_{L+b}, ...` and runs by Horner's rule with `H^L`: `S_b <- S_b H^L ^ X_{Lt+b}`. Then
//! GHASH = `sum_b S_b H^(L-b)`, the GHASH of the `L` stream states as `L` blocks (the finish,
//! done by the caller's ordinary code). All streams multiply by the same `H^L`, so one set of
//! tables serves them all, and a table lookup by PSHUFB serves `L` streams in one instruction
//! when the state is *byte-sliced*: register row `c` holds byte `c` of the `L` states (stream
//! `b` in byte `b`).
//!
//! Multiplication by `H^L` is linear over GF(2): the product is the XOR, over the 32 nibbles
//! `q` of the multiplicand, of a 16-entry table `T_q[nibble]` of 16-byte values. Byte `j` of
//! the product is then `XOR_q T_q[n_q][j]`: per (`j`, `q`) one PSHUFB with the table of bytes
//! `j` of `T_q` (16 bytes, [`Tables`]) and the register of nibbles `q` of all streams, and one
//! XOR: 512 of each (and 512 table loads) per batch of `L` blocks. On ymm that is 16 + 16 + 16
//! a block, against 64 VPMULUDQ and about 100 other vector instructions a block in the
//! integer-multiply code; on xmm twice that, against about 50 scalar 64-bit multiplies.
//!
//! Data enters sliced by a 16 x 16 byte transpose per 128-bit lane ([`transpose`]: four rounds
//! of unpacks, 64 instructions per batch); the same transpose turns the states back into
//! blocks at the end.
//!
//! Constant time: PSHUFB selects bytes within registers (no memory index depends on the key or
//! the data; the technique of vector-permute AES); table addresses and every branch depend
//! only on lengths. The tables are key material (8 KiB, in the heap-allocated GHASH key,
//! zeroized on drop); the sliced states are [`Streams`]', zeroized by it.

use core::arch::x86_64::*;

use zeroize::Zeroize;

use super::ghash_soft;

/// A register width for the streams: its vector type, how many streams it holds (one per
/// byte) and the operations the stream code needs, each one intrinsic of that width. The
/// methods are `unsafe`: the CPU must have the width's instruction set ([`Width::available`]),
/// and they are inlined into functions compiled for it ([`Width::absorb`],
/// [`Width::unslice`], [`Width::fill`]).
pub(crate) trait Width: Sized {
    type V: Copy;
    /// Streams, and blocks per batch; the tables are of `H^LANES`.
    const LANES: usize;
    /// `log2(LANES)`: the squarings from `H` to `H^LANES`.
    const LOG2: usize;
    /// Whether this CPU runs the width.
    fn available() -> bool;
    unsafe fn splat(b: i8) -> Self::V;
    /// A whole row (`LANES` bytes) at a `LANES`-aligned `p`.
    unsafe fn load(p: *const u8) -> Self::V;
    unsafe fn store(p: *mut u8, v: Self::V);
    /// A 16-byte table at a 16-aligned `p`, in every 128-bit lane.
    unsafe fn table(p: *const u8) -> Self::V;
    /// Input row `i` of a batch at `data` (`16 * LANES` readable bytes): block `i` in the
    /// first 128-bit lane (and block `16 + i` in the second), `x` XORed into block 0.
    unsafe fn rows_in(data: *const u8, i: usize, x: __m128i) -> Self::V;
    /// The inverse of [`Width::rows_in`] (no XOR) into `out`.
    unsafe fn rows_out(out: *mut u8, i: usize, v: Self::V);
    unsafe fn and(a: Self::V, b: Self::V) -> Self::V;
    unsafe fn xor(a: Self::V, b: Self::V) -> Self::V;
    /// Each 16-bit word shifted right by 4.
    unsafe fn srl4(a: Self::V) -> Self::V;
    unsafe fn shuffle(table: Self::V, idx: Self::V) -> Self::V;
    unsafe fn unpack8(a: Self::V, b: Self::V) -> (Self::V, Self::V);
    unsafe fn unpack16(a: Self::V, b: Self::V) -> (Self::V, Self::V);
    unsafe fn unpack32(a: Self::V, b: Self::V) -> (Self::V, Self::V);
    unsafe fn unpack64(a: Self::V, b: Self::V) -> (Self::V, Self::V);

    /// [`absorb`] compiled for this width.
    unsafe fn absorb(t: &Tables, first: bool, x: u128, data: &[u8], s: &mut Sliced, o: &mut Sliced);
    /// [`unslice`] compiled for this width.
    unsafe fn unslice(s: &Sliced, out: &mut [u8]);
    /// [`Tables::fill_with`] compiled for this width.
    unsafe fn fill(t: &mut Tables, h: &[u8; 16]);
}

/// 32 streams on ymm (AVX2).
pub(crate) struct X32;
/// 16 streams on xmm (SSSE3).
pub(crate) struct X16;

impl Width for X32 {
    type V = __m256i;
    const LANES: usize = 32;
    const LOG2: usize = 5;
    fn available() -> bool {
        crate::cpu::features().avx2
    }
    #[inline(always)]
    unsafe fn splat(b: i8) -> __m256i {
        // SAFETY: registers only; the caller runs on this width's instruction set.
        unsafe { _mm256_set1_epi8(b) }
    }
    #[inline(always)]
    unsafe fn load(p: *const u8) -> __m256i {
        // SAFETY: the caller passes 32 aligned readable bytes.
        unsafe { _mm256_load_si256(p.cast()) }
    }
    #[inline(always)]
    unsafe fn store(p: *mut u8, v: __m256i) {
        // SAFETY: the caller passes 32 aligned writable bytes.
        unsafe { _mm256_store_si256(p.cast(), v) }
    }
    #[inline(always)]
    unsafe fn table(p: *const u8) -> __m256i {
        // SAFETY: the caller passes 16 aligned readable bytes.
        unsafe { _mm256_broadcastsi128_si256(_mm_load_si128(p.cast())) }
    }
    #[inline(always)]
    unsafe fn rows_in(data: *const u8, i: usize, x: __m128i) -> __m256i {
        // SAFETY: blocks `i` and `16 + i` lie inside the caller's 512 bytes.
        unsafe {
            let lo = _mm_loadu_si128(data.add(16 * i).cast());
            let hi = _mm_loadu_si128(data.add(16 * (16 + i)).cast());
            let lo = if i == 0 { _mm_xor_si128(lo, x) } else { lo };
            _mm256_inserti128_si256::<1>(_mm256_castsi128_si256(lo), hi)
        }
    }
    #[inline(always)]
    unsafe fn rows_out(out: *mut u8, i: usize, v: __m256i) {
        // SAFETY: blocks `i` and `16 + i` lie inside the caller's 512 bytes.
        unsafe {
            _mm_storeu_si128(out.add(16 * i).cast(), _mm256_castsi256_si128(v));
            _mm_storeu_si128(
                out.add(16 * (16 + i)).cast(),
                _mm256_extracti128_si256::<1>(v),
            );
        }
    }
    #[inline(always)]
    unsafe fn and(a: __m256i, b: __m256i) -> __m256i {
        // SAFETY: registers only; the caller runs on this width's instruction set.
        unsafe { _mm256_and_si256(a, b) }
    }
    #[inline(always)]
    unsafe fn xor(a: __m256i, b: __m256i) -> __m256i {
        // SAFETY: registers only; the caller runs on this width's instruction set.
        unsafe { _mm256_xor_si256(a, b) }
    }
    #[inline(always)]
    unsafe fn srl4(a: __m256i) -> __m256i {
        // SAFETY: registers only; the caller runs on this width's instruction set.
        unsafe { _mm256_srli_epi16::<4>(a) }
    }
    #[inline(always)]
    unsafe fn shuffle(table: __m256i, idx: __m256i) -> __m256i {
        // SAFETY: registers only; the caller runs on this width's instruction set.
        unsafe { _mm256_shuffle_epi8(table, idx) }
    }
    #[inline(always)]
    unsafe fn unpack8(a: __m256i, b: __m256i) -> (__m256i, __m256i) {
        // SAFETY: registers only; the caller runs on this width's instruction set.
        unsafe { (_mm256_unpacklo_epi8(a, b), _mm256_unpackhi_epi8(a, b)) }
    }
    #[inline(always)]
    unsafe fn unpack16(a: __m256i, b: __m256i) -> (__m256i, __m256i) {
        // SAFETY: registers only; the caller runs on this width's instruction set.
        unsafe { (_mm256_unpacklo_epi16(a, b), _mm256_unpackhi_epi16(a, b)) }
    }
    #[inline(always)]
    unsafe fn unpack32(a: __m256i, b: __m256i) -> (__m256i, __m256i) {
        // SAFETY: registers only; the caller runs on this width's instruction set.
        unsafe { (_mm256_unpacklo_epi32(a, b), _mm256_unpackhi_epi32(a, b)) }
    }
    #[inline(always)]
    unsafe fn unpack64(a: __m256i, b: __m256i) -> (__m256i, __m256i) {
        // SAFETY: registers only; the caller runs on this width's instruction set.
        unsafe { (_mm256_unpacklo_epi64(a, b), _mm256_unpackhi_epi64(a, b)) }
    }

    #[target_feature(enable = "avx2")]
    unsafe fn absorb(
        t: &Tables,
        first: bool,
        x: u128,
        data: &[u8],
        s: &mut Sliced,
        o: &mut Sliced,
    ) {
        absorb::<X32>(t, first, x, data, s, o)
    }
    #[target_feature(enable = "avx2")]
    unsafe fn unslice(s: &Sliced, out: &mut [u8]) {
        // SAFETY: compiled for AVX2.
        unsafe { unslice::<X32>(s, out) }
    }
    #[target_feature(enable = "avx2")]
    unsafe fn fill(t: &mut Tables, h: &[u8; 16]) {
        t.fill_with::<X32>(h)
    }
}

impl Width for X16 {
    type V = __m128i;
    const LANES: usize = 16;
    const LOG2: usize = 4;
    fn available() -> bool {
        crate::cpu::features().ssse3
    }
    #[inline(always)]
    unsafe fn splat(b: i8) -> __m128i {
        // SAFETY: registers only; the caller runs on this width's instruction set.
        unsafe { _mm_set1_epi8(b) }
    }
    #[inline(always)]
    unsafe fn load(p: *const u8) -> __m128i {
        // SAFETY: the caller passes 16 aligned readable bytes.
        unsafe { _mm_load_si128(p.cast()) }
    }
    #[inline(always)]
    unsafe fn store(p: *mut u8, v: __m128i) {
        // SAFETY: the caller passes 16 aligned writable bytes.
        unsafe { _mm_store_si128(p.cast(), v) }
    }
    #[inline(always)]
    unsafe fn table(p: *const u8) -> __m128i {
        // SAFETY: the caller passes 16 aligned readable bytes.
        unsafe { _mm_load_si128(p.cast()) }
    }
    #[inline(always)]
    unsafe fn rows_in(data: *const u8, i: usize, x: __m128i) -> __m128i {
        // SAFETY: block `i` lies inside the caller's 256 bytes.
        unsafe {
            let v = _mm_loadu_si128(data.add(16 * i).cast());
            if i == 0 { _mm_xor_si128(v, x) } else { v }
        }
    }
    #[inline(always)]
    unsafe fn rows_out(out: *mut u8, i: usize, v: __m128i) {
        // SAFETY: block `i` lies inside the caller's 256 bytes.
        unsafe { _mm_storeu_si128(out.add(16 * i).cast(), v) }
    }
    #[inline(always)]
    unsafe fn and(a: __m128i, b: __m128i) -> __m128i {
        // SAFETY: registers only; the caller runs on this width's instruction set.
        unsafe { _mm_and_si128(a, b) }
    }
    #[inline(always)]
    unsafe fn xor(a: __m128i, b: __m128i) -> __m128i {
        // SAFETY: registers only; the caller runs on this width's instruction set.
        unsafe { _mm_xor_si128(a, b) }
    }
    #[inline(always)]
    unsafe fn srl4(a: __m128i) -> __m128i {
        // SAFETY: registers only; the caller runs on this width's instruction set.
        unsafe { _mm_srli_epi16::<4>(a) }
    }
    #[inline(always)]
    unsafe fn shuffle(table: __m128i, idx: __m128i) -> __m128i {
        // SAFETY: registers only; the caller runs on this width's instruction set.
        unsafe { _mm_shuffle_epi8(table, idx) }
    }
    #[inline(always)]
    unsafe fn unpack8(a: __m128i, b: __m128i) -> (__m128i, __m128i) {
        // SAFETY: registers only; the caller runs on this width's instruction set.
        unsafe { (_mm_unpacklo_epi8(a, b), _mm_unpackhi_epi8(a, b)) }
    }
    #[inline(always)]
    unsafe fn unpack16(a: __m128i, b: __m128i) -> (__m128i, __m128i) {
        // SAFETY: registers only; the caller runs on this width's instruction set.
        unsafe { (_mm_unpacklo_epi16(a, b), _mm_unpackhi_epi16(a, b)) }
    }
    #[inline(always)]
    unsafe fn unpack32(a: __m128i, b: __m128i) -> (__m128i, __m128i) {
        // SAFETY: registers only; the caller runs on this width's instruction set.
        unsafe { (_mm_unpacklo_epi32(a, b), _mm_unpackhi_epi32(a, b)) }
    }
    #[inline(always)]
    unsafe fn unpack64(a: __m128i, b: __m128i) -> (__m128i, __m128i) {
        // SAFETY: registers only; the caller runs on this width's instruction set.
        unsafe { (_mm_unpacklo_epi64(a, b), _mm_unpackhi_epi64(a, b)) }
    }

    #[target_feature(enable = "ssse3")]
    unsafe fn absorb(
        t: &Tables,
        first: bool,
        x: u128,
        data: &[u8],
        s: &mut Sliced,
        o: &mut Sliced,
    ) {
        absorb::<X16>(t, first, x, data, s, o)
    }
    #[target_feature(enable = "ssse3")]
    unsafe fn unslice(s: &Sliced, out: &mut [u8]) {
        // SAFETY: compiled for SSSE3.
        unsafe { unslice::<X16>(s, out) }
    }
    #[target_feature(enable = "ssse3")]
    unsafe fn fill(t: &mut Tables, h: &[u8; 16]) {
        t.fill_with::<X16>(h)
    }
}

/// The tables of the multiplication by `H^L`: `t[j][q][n]` is byte `j` (GCM byte order) of
/// `n * x^(4q)` times `H^L`, where `n` is a nibble in GCM bit order (its bit 3 the coefficient
/// of `x^(4q)`, bit 0 of `x^(4q+3)`); nibble `2c` is the high half of byte `c`, `2c + 1` the
/// low half. 8 KiB, zeroized on drop.
///
/// IMPLEMENTATION NOTE: on ymm each table is broadcast to both 128-bit lanes as it is loaded
/// (VBROADCASTI128). Stored twice instead (16 KiB, plain 32-byte loads) it measured no faster
/// on Zen 4 (GHASH of 16 KiB 3.4-3.8 GB/s either way).
#[repr(C, align(64))]
pub(crate) struct Tables {
    t: [[[u8; 16]; 32]; 16],
}

impl Drop for Tables {
    /// Volatile 32-byte stores where the CPU has AVX2, else 16-byte ones (a byte array's
    /// `zeroize` stores a byte at a time: 8192 stores here, a third of a key setup), kept by
    /// the fence as `zeroize` keeps its own.
    fn drop(&mut self) {
        if crate::cpu::features().avx2 {
            // SAFETY: AVX2 checked.
            unsafe { self.wipe_avx2() };
        } else {
            for q in self.t.iter_mut().flatten() {
                // SAFETY: each table is 16 writable bytes, 16-byte aligned (the struct is
                // 64-byte aligned and the tables 16 bytes each); SSE2 is baseline on x86_64.
                unsafe {
                    core::ptr::write_volatile(q.as_mut_ptr().cast::<__m128i>(), _mm_setzero_si128())
                };
            }
        }
        core::sync::atomic::compiler_fence(core::sync::atomic::Ordering::SeqCst);
    }
}

impl Tables {
    /// [`Tables`]' drop with 32-byte stores (`AesGcm::new` + drop on `vpaes`, Zen 4: 1.93 us
    /// with 16-byte stores, 1.83 with these).
    #[target_feature(enable = "avx2")]
    fn wipe_avx2(&mut self) {
        for j in self.t.iter_mut() {
            for q in j.chunks_exact_mut(2) {
                // SAFETY: two adjacent 16-byte tables: 32 writable bytes, 32-byte aligned (the
                // struct is 64-byte aligned, a row of 32 tables 512 bytes).
                unsafe {
                    core::ptr::write_volatile(
                        q.as_mut_ptr().cast::<__m256i>(),
                        _mm256_setzero_si256(),
                    )
                };
            }
        }
    }
}

/// GCM's multiplication by `x` of an element as a big-endian `u128` (bit 127 is the
/// coefficient of `x^0`), branch-free.
#[inline]
fn gcm_mul_x(v: u128) -> u128 {
    (v >> 1) ^ (0xe1u128 << 120 & 0u128.wrapping_sub(v & 1))
}

/// GCM multiplication of elements as big-endian `u128`s (the form of the GHASH state here),
/// through `ghash_soft`'s POLYVAL product: `a b = dot(a, mulX(b))` (the relation GHASH =
/// POLYVAL with `H x` rests on), branch-free.
#[inline]
fn gcm_mul(a: u128, b: u128) -> u128 {
    ghash_soft::dot(a, ghash_soft::mul_x(b))
}

impl Tables {
    /// All zeros, for [`Tables::fill`].
    pub(crate) const ZERO: Tables = Tables {
        t: [[[0; 16]; 32]; 16],
    };

    /// The tables of `H^W::LANES` for the GCM hash subkey `h`, in place.
    ///
    /// # Safety
    /// The CPU runs `W` ([`Width::available`]).
    pub(crate) unsafe fn fill<W: Width>(&mut self, h: &[u8; 16]) {
        // SAFETY: forwarded.
        unsafe { W::fill(self, h) }
    }

    /// [`Tables::fill`]'s body: `LANES / 16` nibble positions at a time, their 16 entries
    /// each as the blocks of one batch through [`slice`], whose rows are then those
    /// positions' tables for every output byte.
    #[inline(always)]
    fn fill_with<W: Width>(&mut self, h: &[u8; 16]) {
        let per = W::LANES / 16;
        let mut p = u128::from_be_bytes(*h);
        for _ in 0..W::LOG2 {
            p = gcm_mul(p, p);
        }
        // `b` runs over `p x^i`; entry `n` of a nibble is the XOR of the basis values of its
        // set bits (bit 3 the first).
        let mut b = p;
        let mut e = [0u128; 16];
        // One batch of blocks, each entry's bytes in GCM order (big-endian).
        let mut blocks = [0u128; 32];
        let mut sl = Sliced::default();
        for q0 in (0..32).step_by(per) {
            for half in 0..per {
                let mut basis = [0u128; 4];
                for bk in basis.iter_mut() {
                    *bk = b;
                    b = gcm_mul_x(b);
                }
                for n in 1..16usize {
                    e[n] = e[n & (n - 1)] ^ basis[3 - n.trailing_zeros() as usize];
                }
                for (n, en) in e.iter().enumerate() {
                    blocks[16 * half + n] = u128::from_ne_bytes(en.to_be_bytes());
                }
                basis.zeroize();
            }
            // SAFETY: `blocks` is 512 initialized bytes.
            let bytes =
                unsafe { core::slice::from_raw_parts(blocks.as_ptr().cast::<u8>(), 16 * W::LANES) };
            // SAFETY: `W` runs here (the caller's contract, this function is inlined into
            // `W::fill`).
            unsafe { slice::<W>(bytes, 0, &mut sl) };
            for (j, row) in sl.s.iter().enumerate() {
                for half in 0..per {
                    self.t[j][q0 + half].copy_from_slice(&row[16 * half..16 * half + 16]);
                }
            }
        }
        e.zeroize();
        blocks.zeroize();
        sl.zeroize();
        b.zeroize();
        p.zeroize();
    }
}

/// Up to 32 blocks byte-sliced: `s[c]` holds byte `c` of block `b` at byte `b` (on ymm, lane
/// `b / 16`); a width uses the first `LANES` bytes of each row.
#[repr(C, align(32))]
#[derive(Clone, Default)]
pub(crate) struct Sliced {
    s: [[u8; 32]; 16],
}

impl Zeroize for Sliced {
    fn zeroize(&mut self) {
        // 16-byte volatile stores (a byte array's `zeroize` stores a byte at a time).
        for r in self.s.iter_mut() {
            for h in r.chunks_exact_mut(16) {
                // SAFETY: 16 writable bytes, 16-byte aligned (rows are 32-byte aligned).
                unsafe { core::ptr::write_volatile(h.as_mut_ptr().cast::<u128>(), 0) };
            }
        }
        core::sync::atomic::compiler_fence(core::sync::atomic::Ordering::SeqCst);
    }
}

/// Register `R` after the four unpack rounds of [`transpose`] holds byte `BITREV4[R]` of each
/// row.
const BITREV4: [usize; 16] = [0, 8, 4, 12, 2, 10, 6, 14, 1, 9, 5, 13, 3, 11, 7, 15];

/// One unpack round: `o[k], o[8+k] = unpack(r[2k], r[2k+1])`.
#[inline(always)]
fn unpack_round<V: Copy>(r: [V; 16], f: impl Fn(V, V) -> (V, V)) -> [V; 16] {
    let mut o = r;
    for k in 0..8 {
        (o[k], o[8 + k]) = f(r[2 * k], r[2 * k + 1]);
    }
    o
}

/// In each 128-bit lane, the 16 x 16 byte matrix of the 16 registers transposed: byte `p` of
/// output `c` is byte `c` of input `p`. Each unpack round moves one bit of the register
/// index into the byte position (bytes, then 2-, 4- and 8-byte units), so after four the
/// byte position is the input register and the register is the input byte, bit-reversed.
#[inline(always)]
unsafe fn transpose<W: Width>(r: [W::V; 16]) -> [W::V; 16] {
    // SAFETY: the caller runs on `W`'s instruction set.
    unsafe {
        let r = unpack_round(r, |a, b| W::unpack8(a, b));
        let r = unpack_round(r, |a, b| W::unpack16(a, b));
        let r = unpack_round(r, |a, b| W::unpack32(a, b));
        let r = unpack_round(r, |a, b| W::unpack64(a, b));
        let mut o = r;
        for (c, oc) in o.iter_mut().enumerate() {
            *oc = r[BITREV4[c]];
        }
        o
    }
}

/// `s` = the `LANES` blocks of `data` byte-sliced, with `x` (a block as a big-endian integer)
/// XORed into the first.
#[inline(always)]
unsafe fn slice<W: Width>(data: &[u8], x: u128, s: &mut Sliced) {
    let data = &data[..16 * W::LANES];
    // SAFETY: the caller runs on `W`'s instruction set (SSE2, baseline, for the block `x`);
    // `rows_in` reads inside `data`; each row of `s` is 32 bytes, 32-byte aligned.
    unsafe {
        let xb = _mm_set_epi64x(
            (x as u64).swap_bytes() as i64,
            ((x >> 64) as u64).swap_bytes() as i64,
        );
        // Loops, not `array::from_fn`: its closure is compiled out of line, without this
        // function's target features, so every intrinsic in it would be a call.
        let mut r = [W::splat(0); 16];
        for (i, ri) in r.iter_mut().enumerate() {
            *ri = W::rows_in(data.as_ptr(), i, xb);
        }
        let r = transpose::<W>(r);
        for (c, v) in r.iter().enumerate() {
            W::store(s.s[c].as_mut_ptr(), *v);
        }
    }
}

/// The `LANES` blocks of `s` back into `out` (`16 * LANES` bytes): block `b` is byte `b` of
/// every row.
#[inline(always)]
unsafe fn unslice<W: Width>(s: &Sliced, out: &mut [u8]) {
    let out = &mut out[..16 * W::LANES];
    // SAFETY: as in `slice`; `rows_out` writes inside `out`.
    unsafe {
        let mut r = [W::splat(0); 16];
        for (c, rc) in r.iter_mut().enumerate() {
            *rc = W::load(s.s[c].as_ptr());
        }
        let r = transpose::<W>(r);
        for (p, v) in r.iter().enumerate() {
            W::rows_out(out.as_mut_ptr(), p, *v);
        }
    }
}

/// One batch of `LANES` blocks into the streams: the first batch (`first`) becomes the states
/// in `s`, with `x` folded into its first block; a later one goes to `o` as `s H^L ^ batch`.
#[inline(always)]
fn absorb<W: Width>(t: &Tables, first: bool, x: u128, data: &[u8], s: &mut Sliced, o: &mut Sliced) {
    // SAFETY: inlined only into `W::absorb`, compiled for `W`'s instruction set.
    unsafe {
        if first {
            slice::<W>(data, x, s);
        } else {
            slice::<W>(data, 0, o);
            mul_add::<W>(t, s, o);
        }
    }
}

/// `o = s H^L ^ o` on every stream: `o` holds the next batch sliced on entry and the new
/// states on return.
#[inline(always)]
unsafe fn mul_add<W: Width>(t: &Tables, s: &Sliced, o: &mut Sliced) {
    // SAFETY: the caller runs on `W`'s instruction set; rows of `o` and `s` are 32-byte
    // aligned, tables 16-byte aligned (in bounds: `j < 16`, `2c + 1 < 32`).
    unsafe {
        let m = W::splat(0x0f);
        // Half the output bytes at a time: 8 accumulators, the two nibble registers, the mask
        // and two tables stay within the 16 vector registers.
        for half in 0..2 {
            let mut acc = [m; 8];
            for (k, a) in acc.iter_mut().enumerate() {
                *a = W::load(o.s[8 * half + k].as_ptr());
            }
            for c in 0..16 {
                let v = W::load(s.s[c].as_ptr());
                let hi = W::and(W::srl4(v), m);
                let lo = W::and(v, m);
                for (k, a) in acc.iter_mut().enumerate() {
                    let row = &t.t[8 * half + k];
                    let th = W::table(row[2 * c].as_ptr());
                    let tl = W::table(row[2 * c + 1].as_ptr());
                    *a = W::xor(*a, W::xor(W::shuffle(th, hi), W::shuffle(tl, lo)));
                }
            }
            for (k, a) in acc.iter().enumerate() {
                W::store(o.s[8 * half + k].as_mut_ptr(), *a);
            }
        }
    }
}

/// `acc <- GHASH update over data` (whole blocks) with key `k`: the `W` streams from
/// `min_blocks` blocks on (where they pay for their finish), else `k`'s ordinary code.
///
/// IMPLEMENTATION NOTE (session 26): the stream path is a function of its own, so that the
/// ordinary path's frame does not carry the 2 KiB of stream state: inlined, a one-block
/// GHASH on AVX2 wrote 3168 bytes of stack (and left them to the stack wipe), 864 without.
#[inline]
pub(crate) fn ghash<W: Width, K: StreamKey>(k: &K, acc: &mut u128, data: &[u8], min_blocks: usize) {
    debug_assert!(data.len().is_multiple_of(16));
    if data.len() >= 16 * min_blocks {
        ghash_streamed::<W, K>(k, acc, data);
    } else {
        k.hash(acc, data);
    }
}

/// [`ghash`] through the streams.
#[inline(never)]
fn ghash_streamed<W: Width, K: StreamKey>(k: &K, acc: &mut u128, data: &[u8]) {
    let mut st = Streams::<W, K>::new(k, *acc);
    st.update(data);
    *acc = st.finish();
}

/// A GHASH computation fed in pieces, as `W::LANES` interleaved streams: whole batches go to
/// the streams; a shorter piece ends them (their states hashed as blocks into the running
/// value, by `K`'s ordinary code), and from then on every piece is hashed the ordinary way. So
/// every piece but the last should be whole batches. Zeroized on drop.
pub(crate) struct Streams<'k, W: Width, K: StreamKey> {
    key: &'k K,
    st: [Sliced; 2],
    /// Which of `st` holds the stream states.
    cur: usize,
    /// The running value: before the streams start, the state to fold into the first block;
    /// after they end, the GHASH so far.
    acc: u128,
    started: bool,
    ended: bool,
    _w: core::marker::PhantomData<W>,
}

/// A GHASH key with stream tables and an ordinary (batch) GHASH for the rest.
pub(crate) trait StreamKey {
    fn tables(&self) -> &Tables;
    /// `acc <- GHASH update over data` (whole blocks), without streams.
    fn hash(&self, acc: &mut u128, data: &[u8]);
}

impl<'k, W: Width, K: StreamKey> Streams<'k, W, K> {
    /// A computation that continues from the GHASH state `acc`. `W` must run on this CPU
    /// (the key was built with its tables: [`Tables::fill`]).
    pub(crate) fn new(key: &'k K, acc: u128) -> Self {
        debug_assert!(W::available());
        Streams {
            key,
            st: [Sliced::default(), Sliced::default()],
            cur: 0,
            acc,
            started: false,
            ended: false,
            _w: core::marker::PhantomData,
        }
    }

    /// Hashes `data` (whole blocks).
    pub(crate) fn update(&mut self, data: &[u8]) {
        debug_assert!(data.len().is_multiple_of(16));
        let batch = 16 * W::LANES;
        let whole = if self.ended {
            0
        } else {
            data.len() / batch * batch
        };
        for b in data[..whole].chunks_exact(batch) {
            let [s0, s1] = &mut self.st;
            let (s, o) = if self.cur == 0 { (s0, s1) } else { (s1, s0) };
            // SAFETY: `W` runs here (`new`'s contract).
            unsafe { W::absorb(self.key.tables(), !self.started, self.acc, b, s, o) };
            if self.started {
                self.cur ^= 1;
            }
            self.started = true;
        }
        if whole < data.len() {
            self.end();
            self.key.hash(&mut self.acc, &data[whole..]);
        }
    }

    /// The GHASH state after everything hashed.
    pub(crate) fn finish(mut self) -> u128 {
        self.end();
        self.acc
    }

    /// Ends the streams: the running value becomes the GHASH (from zero) of the stream states
    /// as blocks, stream `b` the `b`-th (so it is multiplied by `H^(L-b)`).
    fn end(&mut self) {
        if self.ended {
            return;
        }
        self.ended = true;
        if self.started {
            // The states as blocks (`u128`s: zeroed with 16-byte stores, not byte stores).
            let mut words = [0u128; 32];
            // SAFETY: `words` is 512 initialized bytes; `u8` has no alignment requirement.
            let blocks =
                unsafe { core::slice::from_raw_parts_mut(words.as_mut_ptr().cast::<u8>(), 512) };
            // SAFETY: `W` runs here (`new`'s contract).
            unsafe { W::unslice(&self.st[self.cur], blocks) };
            self.acc = 0;
            self.key.hash(&mut self.acc, &blocks[..16 * W::LANES]);
            words.zeroize();
            self.st[self.cur].zeroize();
        }
    }
}

impl<W: Width, K: StreamKey> Drop for Streams<'_, W, K> {
    fn drop(&mut self) {
        self.st[0].zeroize();
        self.st[1].zeroize();
        self.acc.zeroize();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// GCM multiplication bit by bit (SP 800-38D, Algorithm 1): the reference here.
    fn gf_mul(x: u128, y: u128) -> u128 {
        let (mut z, mut v) = (0u128, y);
        for i in 0..128 {
            if (x >> (127 - i)) & 1 == 1 {
                z ^= v;
            }
            v = gcm_mul_x(v);
        }
        z
    }

    /// `slice` and `unslice` through a width's compiled entry points: `absorb` of a first batch
    /// slices, `unslice` reverses it.
    fn slice_round_trip<W: Width>() {
        let n = 16 * W::LANES;
        let data: alloc::vec::Vec<u8> = (0..n).map(|i| (i * 7 + i / 16) as u8).collect();
        let x = 0x0102_0304_0506_0708_090a_0b0c_0d0e_0f10u128;
        let (mut s, mut o) = (Sliced::default(), Sliced::default());
        let mut back = [0u8; 512];
        let t = alloc::boxed::Box::new(Tables::ZERO);
        // SAFETY: the caller checked `W::available()`.
        unsafe {
            W::absorb(&t, true, x, &data, &mut s, &mut o);
            W::unslice(&s, &mut back);
        }
        for b in 0..W::LANES {
            for c in 0..16 {
                let want = data[16 * b + c] ^ if b == 0 { x.to_be_bytes()[c] } else { 0 };
                assert_eq!(s.s[c][b], want, "block {b} byte {c}");
                assert_eq!(back[16 * b + c], want, "block {b} byte {c} back");
            }
        }
    }

    #[test]
    fn slice_layout_and_round_trip() {
        if X32::available() {
            slice_round_trip::<X32>();
        }
        if X16::available() {
            slice_round_trip::<X16>();
        }
    }

    /// A second batch multiplies every stream by `H^L` as the bit-serial multiplication does,
    /// for keys and data that reach every nibble value.
    fn mul_add_matches<W: Width>() {
        let n = 16 * W::LANES;
        for h in [
            [0xffu8; 16],
            core::array::from_fn(|i| (i * 37 + 11) as u8),
            core::array::from_fn(|i| 1u8 << (i % 8)),
        ] {
            let mut t = alloc::boxed::Box::new(Tables::ZERO);
            // SAFETY: the caller checked `W::available()`.
            unsafe { t.fill::<W>(&h) };
            let mut hl = u128::from_be_bytes(h);
            for _ in 0..W::LOG2 {
                hl = gf_mul(hl, hl);
            }
            let a: alloc::vec::Vec<u8> = (0..n)
                .map(|i| (i * 73 + 5) as u8 ^ (i >> 4) as u8)
                .collect();
            let d: alloc::vec::Vec<u8> = (0..n).map(|i| (i * 151 + 3) as u8).collect();
            let (mut s, mut o) = (Sliced::default(), Sliced::default());
            let mut out = [0u8; 512];
            // SAFETY: as above.
            unsafe {
                W::absorb(&t, true, 0, &a, &mut s, &mut o);
                W::absorb(&t, false, 0, &d, &mut s, &mut o);
                W::unslice(&o, &mut out);
            }
            for b in 0..W::LANES {
                let blk =
                    |v: &[u8]| u128::from_be_bytes(v[16 * b..16 * b + 16].try_into().unwrap());
                assert_eq!(blk(&out), gf_mul(blk(&a), hl) ^ blk(&d), "stream {b}");
            }
        }
    }

    #[test]
    fn mul_add_matches_bit_serial() {
        if X32::available() {
            mul_add_matches::<X32>();
        }
        if X16::available() {
            mul_add_matches::<X16>();
        }
    }

    /// The bit-serial multiplication and `gcm_mul` against `ghash_soft`: GHASH of one block
    /// `X` from the zero state is `X H`.
    #[test]
    fn gf_mul_matches_ghash_soft() {
        for h in [
            [
                0x66u8, 0xe9, 0x4b, 0xd4, 0xef, 0x8a, 0x2c, 0x3b, 0x88, 0x4c, 0xfa, 0x59, 0xca,
                0x34, 0x2b, 0x2e,
            ],
            core::array::from_fn(|i| (i * 29 + 1) as u8),
        ] {
            let x: [u8; 16] = core::array::from_fn(|i| (i * 91 + 7) as u8);
            let mut acc = 0u128;
            ghash_soft::ghash(&ghash_soft::Key::new(&h), &mut acc, &x);
            let (x, h) = (u128::from_be_bytes(x), u128::from_be_bytes(h));
            assert_eq!(gf_mul(x, h), acc);
            assert_eq!(gcm_mul(x, h), acc);
        }
    }
}
